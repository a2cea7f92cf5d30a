//! `ebb` as its peers are: shell completions and man pages generated from the argument
//! tree, and documented exit codes (0 done, 1 failed, 2 usage or invalid input).

use ebb_testkit::TempDir;
use std::process::{Command, Output};

fn ebb(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ebb"))
        .args(args)
        .env_remove("EBB_DATA_DIR")
        .output()
        .unwrap()
}

#[test]
fn completions_come_for_each_shell() {
    for (shell, mark) in [
        ("bash", "_ebb()"),
        ("zsh", "#compdef ebb"),
        ("fish", "complete -c ebb"),
    ] {
        let output = ebb(&["completions", shell]);
        assert!(output.status.success(), "{shell}");
        let script = String::from_utf8(output.stdout).unwrap();
        assert!(
            script.contains(mark),
            "{shell}: {}",
            &script[..script.len().min(200)]
        );
        assert!(script.contains("over-budget"), "{shell} knows the flags");
    }
    assert_eq!(ebb(&["completions", "tcsh"]).status.code(), Some(2));
}

#[test]
fn man_pages_are_written_one_per_subcommand() {
    let dir = TempDir::new("cli-man");
    let out = dir.join("man1");
    let output = ebb(&["man", out.to_str().unwrap()]);
    assert!(output.status.success());
    let page = std::fs::read_to_string(out.join("ebb-pool-scale.1")).unwrap();
    assert!(page.starts_with(".ie") || page.contains(".TH"), "{page}");
    assert!(page.contains("over\\-budget"), "{page}");
    assert!(out.join("ebb.1").exists());
    assert!(out.join("ebb-rules-set.1").exists());
    assert!(!out.join("ebb-help.1").exists(), "no page for clap's help");
}

#[test]
fn exit_codes_say_usage_and_invalid_input_apart_from_failure() {
    let dir = TempDir::new("cli-exit");
    let data = dir.to_str().unwrap();
    let help = String::from_utf8(ebb(&["--help"]).stdout).unwrap();
    assert!(help.contains("Exit codes: 0 done; 1 failed"), "{help}");
    // Usage.
    assert_eq!(ebb(&["nonsense"]).status.code(), Some(2));
    // Invalid input: a name that is not there, a URL that is not one.
    assert_eq!(
        ebb(&[
            "--data-dir",
            data,
            "--token-store",
            "file",
            "pool",
            "show",
            "nope"
        ])
        .status
        .code(),
        Some(2)
    );
    assert_eq!(
        ebb(&[
            "--data-dir",
            data,
            "--token-store",
            "file",
            "hosts",
            "add",
            "x",
            "notaurl",
            "--region",
            "r"
        ])
        .status
        .code(),
        Some(2)
    );
    // A failure: an agent that does not answer.
    assert_eq!(
        ebb(&["health", "http://127.0.0.1:1"]).status.code(),
        Some(1)
    );
}
