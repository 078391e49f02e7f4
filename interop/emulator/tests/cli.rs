//! The command line: bad input is a clear error, never a panic.

use std::path::PathBuf;
use std::process::Command;

fn emu() -> Command {
    Command::new(env!("CARGO_BIN_EXE_vegas-emu"))
}

fn scenarios() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios")
}

fn fails_with(args: &[&str], needles: &[&str]) {
    let out = emu().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} succeeded");
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    for n in needles {
        assert!(stderr.contains(n), "{args:?}: '{n}' not in: {stderr}");
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn describe_gives_both_directions() {
    let fau = scenarios().join("fau-sat.toml");
    let out = emu().arg("describe").arg(&fau).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["forward"][0]["rate_bps"], 20_000_000);
    assert_eq!(v["return"][0]["rate_bps"], 2_000_000);
    assert_eq!(v["forward"][0]["queue_packets"], 25);
    assert_eq!(v["forward"][0]["delay_ms"], 300.0);
    assert_eq!(v["transfer_bytes"], 10_485_760);
    assert_eq!(v["forward"][0]["rate_trace"], false);
    assert_eq!(v["forward"][0]["delay_trace"], false);
    // A trace-driven link says so: netem+tbf (scripts/interop) cannot
    // follow it.
    let starlink = scenarios().join("starlink-like.toml");
    let out = emu().arg("describe").arg(&starlink).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for direction in ["forward", "return"] {
        assert_eq!(v[direction][0]["rate_trace"], true, "{direction}");
        assert_eq!(v[direction][0]["delay_trace"], true, "{direction}");
    }
}

#[test]
fn bad_input_is_a_clear_error() {
    let fau = scenarios().join("fau-sat.toml");
    let fau = fau.to_str().unwrap();
    fails_with(
        &[
            "udp",
            "/nonexistent.toml",
            "--listen",
            "127.0.0.1:0",
            "--server",
            "127.0.0.1:1",
        ],
        &["/nonexistent.toml", "cannot read"],
    );
    fails_with(
        &[
            "udp",
            fau,
            "--listen",
            "not-an-address",
            "--server",
            "127.0.0.1:1",
        ],
        &["--listen"],
    );
    fails_with(&["udp", fau, "--bogus"], &["--bogus"]);
    fails_with(
        &["describe", fau, "--forward-path", "nowhere"],
        &["unknown link 'nowhere'", "forward, return"],
    );
    fails_with(
        &["describe", fau, "--set", "links.forward.rate_mbps=-1"],
        &["links.forward.rate_mbps"],
    );
    fails_with(
        &[
            "udp",
            fau,
            "--listen",
            "127.0.0.1:0",
            "--server",
            "127.0.0.1:1",
            "--duration-s=-3",
        ],
        &["--duration-s"],
    );
    fails_with(
        &[
            "bridge",
            fau,
            "--client-iface",
            "nosuchif0",
            "--server-iface",
            "nosuchif1",
        ],
        &["nosuchif0"],
    );
    let dir = tempfile_dir();
    let broken = dir.join("broken.toml");
    std::fs::write(
        &broken,
        "duration_s = 10\n[links.a]\nrate_mbps = \"fast\"\n",
    )
    .unwrap();
    fails_with(
        &["describe", broken.to_str().unwrap()],
        &["broken.toml", "links.a.rate_mbps"],
    );
    let no_flow = dir.join("noflow.toml");
    std::fs::write(
        &no_flow,
        "duration_s = 10\n[links.a]\nrate_mbps = 1\ndelay_ms = 1\nqueue_packets = 5\n",
    )
    .unwrap();
    fails_with(
        &["describe", no_flow.to_str().unwrap()],
        &["no flow", "--forward-path"],
    );
    // With the paths given, a scenario without flows is fine.
    let out = emu()
        .args([
            "describe",
            no_flow.to_str().unwrap(),
            "--forward-path",
            "a",
            "--return-path",
            "a",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
}

fn tempfile_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vegas-emu-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn udp_mode_runs_for_its_duration_and_writes_statistics() {
    let dir = tempfile_dir();
    let stats = dir.join("stats.json");
    let fau = scenarios().join("fau-sat.toml");
    let out = emu()
        .arg("udp")
        .arg(&fau)
        .args([
            "--listen",
            "127.0.0.1:0",
            "--server",
            "127.0.0.1:9",
            "--duration-s",
            "0.3",
        ])
        .arg("--stats")
        .arg(&stats)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("vegas-emu: ready: udp mode"), "{stderr}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    assert_eq!(v["mode"], "udp");
    assert_eq!(v["links"][0]["name"], "forward");
}
