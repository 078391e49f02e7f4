//! quiche's client request flags (`--method`, `--body`, `-H`,
//! `--dump-json`) and the server's `--index`, end to end between our apps:
//! an upload arrives whole (its hash checked by the server's answer), the
//! headers a user adds reach the server, and bad input is a clear error.

mod common;

use common::raw::LyingServer;
use common::*;

fn serve(files: &[(&str, &[u8])], extra: &[&str]) -> (tempfile::TempDir, Server) {
    let root = tempfile::tempdir().unwrap();
    for (name, data) in files {
        let path = root.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, data).unwrap();
    }
    let mut args = vec!["--root", root.path().to_str().unwrap()];
    args.extend_from_slice(extra);
    let server = Server::start(&args, None);
    (root, server)
}

#[test]
fn an_upload_arrives_whole_and_the_server_says_what_it_received() {
    let (_root, server) = serve(&[("f", b"x")], &[]);
    let upload = random_bytes(3_000_000, 7);
    let dir = tempfile::tempdir().unwrap();
    let body = dir.path().join("upload.bin");
    std::fs::write(&body, &upload).unwrap();
    let out = client(
        &[
            "--no-verify",
            "--method",
            "POST",
            "--body",
            body.to_str().unwrap(),
            "--dump-json",
            &server.url("/upload"),
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    // --dump-json: stdout is one JSON document, the human lines on stderr.
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let entries = json["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["path"], "/upload");
    let headers = entries[0]["headers"].as_array().unwrap();
    assert!(headers.iter().any(|h| h[0] == ":status" && h[1] == "200"));
    assert!(headers
        .iter()
        .any(|h| h[0] == "content-type" && h[1] == "application/json"));
    let answer: serde_json::Value =
        serde_json::from_str(entries[0]["body"].as_str().unwrap()).unwrap();
    assert_eq!(answer["received_bytes"], upload.len() as u64);
    assert_eq!(answer["sha256"], sha256_hex(&upload));
    assert_eq!(entries[0]["body_truncated"], false);
    assert!(
        text(&out.stderr).contains("POST /upload"),
        "{}",
        text(&out.stderr)
    );

    // PUT with an empty body: headers with FIN, nothing received.
    let empty = dir.path().join("empty");
    std::fs::write(&empty, b"").unwrap();
    let out = client(
        &[
            "--no-verify",
            "--method",
            "PUT",
            "--body",
            empty.to_str().unwrap(),
            "--dump-json",
            &server.url("/e"),
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let answer: serde_json::Value =
        serde_json::from_str(json["entries"][0]["body"].as_str().unwrap()).unwrap();
    assert_eq!(answer["received_bytes"], 0);
    assert_eq!(answer["sha256"], sha256_hex(b""));
}

#[test]
fn a_method_the_server_does_not_serve_fails_with_its_status() {
    let (_root, server) = serve(&[("f", b"x")], &[]);
    let out = client(
        &["--no-verify", "--method", "DELETE", &server.url("/f")],
        None,
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stdout).contains("DELETE /f  FAILED: status 405"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn added_headers_and_the_method_reach_the_server() {
    let liar = LyingServer::start(&[(":status", "200"), ("content-length", "2")], b"ok");
    let url = format!("https://127.0.0.1:{}/p", liar.addr.port());
    let out = client(
        &[
            "--no-verify",
            "--method",
            "PATCH",
            "-H",
            "X-Trace: abc def",
            "--header",
            "accept:text/plain",
            &url,
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = liar.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 1, "{requests:?}");
    let fields = &requests[0];
    let has = |n: &str, v: &str| fields.iter().any(|(a, b)| a == n && b == v);
    assert!(has(":method", "PATCH"), "{fields:?}");
    assert!(has("x-trace", "abc def"), "{fields:?}");
    assert!(has("accept", "text/plain"), "{fields:?}");
}

#[test]
fn without_dump_json_no_body_is_kept_and_stdout_stays_the_summary() {
    let (_root, server) = serve(&[("f", b"hello")], &[]);
    let out = client(&["--no-verify", &server.url("/f")], None);
    assert!(out.status.success());
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("GET /f  5 bytes"), "{stdout}");
    assert!(serde_json::from_str::<serde_json::Value>(&stdout).is_err());
}

#[test]
fn dump_json_keeps_the_first_mebibyte_of_a_large_body() {
    let big = random_bytes(1_500_000, 3);
    let (_root, server) = serve(&[("big", &big)], &[]);
    let out = client(&["--no-verify", "--dump-json", &server.url("/big")], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["entries"][0]["body_truncated"], true);
    // The whole body still arrived: its hash is on the response line.
    assert!(text(&out.stderr).contains(&sha256_hex(&big)));
}

#[test]
fn index_names_the_file_a_directory_serves() {
    let files: [(&str, &[u8]); 3] = [
        ("index.html", b"default"),
        ("start.txt", b"chosen"),
        ("sub/start.txt", b"sub"),
    ];
    let (_root, server) = serve(&files, &["--index", "start.txt"]);
    for (path, body) in [("/", &b"chosen"[..]), ("/sub/", b"sub")] {
        let out = client(&["--no-verify", &server.url(path)], None);
        assert!(out.status.success(), "{path}: {}", text(&out.stdout));
        assert!(text(&out.stdout).contains(&sha256_hex(body)), "{path}");
    }
    let (_root, server) = serve(&files, &[]);
    let out = client(&["--no-verify", &server.url("/")], None);
    assert!(text(&out.stdout).contains(&sha256_hex(b"default")));
}

#[test]
fn bad_request_flags_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    let url = "https://127.0.0.1:9/f";
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["-H", "no colon", url], "is not 'Name: value'"),
        (vec!["-H", ": v", url], "has no name"),
        (vec!["-H", ":path: /x", url], "has no name"),
        (
            vec!["-H", "bad name: v", url],
            "must be a lowercase HTTP token",
        ),
        (vec!["--method", "GE T", url], "is not an HTTP method token"),
        (
            vec!["--body", missing.to_str().unwrap(), url],
            "cannot read --body file",
        ),
        (
            vec!["--http-version", "HTTP/0.9", "--method", "POST", url],
            "HTTP/0.9 sends only GET requests",
        ),
    ];
    for (args, expected) in cases {
        let out = client(&args, None);
        assert_clean_failure(&out, &[expected]);
    }
    let out = std::process::Command::new(SERVER)
        .args(["--root", dir.path().to_str().unwrap(), "--index", "../x"])
        .output()
        .unwrap();
    assert_clean_failure(&out, &["must be a file name"]);
}
