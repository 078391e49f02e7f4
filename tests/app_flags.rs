//! The apps' command line as a quiche user types it: algorithm names in any
//! case and quiche's aliases, `--cc-param help`, and a client summary that
//! names the sender, not the client's own controller.

mod common;

use std::process::Command;

use common::*;

fn run(bin: &str, args: &[&str]) -> std::process::Output {
    Command::new(bin)
        .args(args)
        .env_remove("QLOGDIR")
        .output()
        .unwrap()
}

#[test]
fn cc_param_help_lists_the_algorithms_parameters() {
    for bin in [SERVER, CLIENT] {
        let out = run(bin, &["--cc-algorithm", "Vegas", "--cc-param", "help"]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let stdout = text(&out.stdout);
        assert!(stdout.starts_with("Parameters of vegas"), "{stdout}");
        for key in ["alpha", "beta", "gamma", "profile"] {
            assert!(
                stdout
                    .lines()
                    .any(|l| l.trim_start().starts_with(key) && l.contains("default")),
                "{key}: {stdout}"
            );
        }
        let out = run(bin, &["--cc-algorithm", "BBR", "--cc-param", "help"]);
        assert!(text(&out.stdout).contains("bbr2 is quiche's own algorithm"));
        let out = run(bin, &["--cc-algorithm", "tahoe", "--cc-param", "help"]);
        assert_clean_failure(&out, &["unknown congestion control algorithm 'tahoe'"]);
    }
}

#[test]
fn the_summary_names_the_sender_not_the_clients_controller() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("f"), b"hello").unwrap();
    let root = root.path().to_str().unwrap();
    // quiche's names in any case: CUBIC, and bbr for bbr2.
    let server = Server::start(&["--root", root, "--cc-algorithm", "Vegas-Sat"], None);
    assert!(
        server.log.iter().any(|l| l.contains("cc vegas-sat")),
        "{:?}",
        server.log
    );
    let out = client(
        &["--no-verify", "--cc-algorithm", "CUBIC", &server.url("/f")],
        None,
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout} {}", text(&out.stderr));
    assert!(
        stdout.contains("sender: quiche-vegas cc=vegas-sat  "),
        "{stdout}"
    );
    assert!(!stdout.contains("cubic"), "{stdout}");
    let out = client(
        &[
            "--no-verify",
            "--cc-algorithm",
            "bbr",
            "--http-version",
            "HTTP/0.9",
            &server.url("/f"),
        ],
        None,
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout} {}", text(&out.stderr));
    // HTTP/0.9 has no headers: the client cannot know.
    assert!(stdout.contains("sender unknown"), "{stdout}");
}
