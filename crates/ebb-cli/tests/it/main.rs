//! The `ebb` binary as an operator runs it.

mod cost;
mod help;
mod lost_update;
mod peers;
mod pool;
mod replay;
mod replay_spot;
mod roles;
mod rules;
mod shared;
mod suggest;

use std::process::Command;

#[test]
fn a_bad_url_is_refused_with_the_reason() {
    let output = Command::new(env!("CARGO_BIN_EXE_ebb"))
        .args(["gpus", "127.0.0.1:7070"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("must start with http://"), "{stderr}");
}

#[test]
fn an_unreachable_agent_is_named_in_the_error() {
    let output = Command::new(env!("CARGO_BIN_EXE_ebb"))
        .args(["health", "http://127.0.0.1:1"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("health check of http://127.0.0.1:1 failed"),
        "{stderr}"
    );
    assert!(stderr.contains("refused the connection"), "{stderr}");
}
