//! `ebb rules lint` through the real binary: exit 0 clean, 1 warnings, 2 invalid; every
//! finding names its line and field.

use ebb_testkit::TempDir;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn ebb(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ebb"))
        .args(args)
        .env_remove("EBB_DATA_DIR")
        .output()
        .unwrap()
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn lint(path: &Path, json: bool) -> (i32, String) {
    let path = path.to_str().unwrap();
    let output = if json {
        ebb(&["rules", "lint", path, "--json"])
    } else {
        ebb(&["rules", "lint", path])
    };
    (
        output.status.code().unwrap(),
        String::from_utf8(output.stdout).unwrap(),
    )
}

#[test]
fn a_clean_file_exits_0() {
    let dir = TempDir::new("cli-rules-clean");
    let path = write(
        &dir,
        "seed.toml",
        include_str!("../../../ebb-rules/examples/seed-80-30.toml"),
    );
    let (code, out) = lint(&path, false);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("valid, no warnings"), "{out}");
}

#[test]
fn warnings_exit_1_with_rule_field_and_line() {
    let dir = TempDir::new("cli-rules-warn");
    let path = write(
        &dir,
        "fast.toml",
        "[limits]\nmax_gpus = 10\n[[threshold]]\nname = \"hot\"\nmetric = \"gpu_util\"\nop = \">=\"\nvalue = 80\naction = \"+1\"\ncooldown_minutes = 2\n",
    );
    let (code, out) = lint(&path, false);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("fast.toml:9: warning: threshold[0].cooldown_minutes (hot): the cooldown (2 min) is shorter than the warmup (5 min)"),
        "{out}"
    );
    let (code, out) = lint(&path, true);
    assert_eq!(code, 1);
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["valid"], true);
    let warning = &json["warnings"][0];
    assert_eq!(warning["rule"], "hot");
    assert_eq!(warning["field"], "threshold[0].cooldown_minutes");
    assert_eq!(warning["line"], 9);
    assert_eq!(warning["problem"]["kind"], "cooldown_shorter_than_warmup");
}

#[test]
fn an_invalid_file_exits_2_naming_line_and_field() {
    let dir = TempDir::new("cli-rules-bad");
    let path = write(
        &dir,
        "bad.toml",
        "[limits]\nmax_gpus = 10\n[[threshold]]\nname = \"hot\"\nmetric = \"gpu_util\"\nop = \">=\"\nvalue = 80\naction = \"double\"\n",
    );
    let (code, out) = lint(&path, false);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("bad.toml:8: error: threshold[0].action: `double` is not an action"),
        "{out}"
    );
    let (code, out) = lint(&path, true);
    assert_eq!(code, 2);
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["valid"], false);
    assert_eq!(json["errors"][0]["line"], 8);
    assert_eq!(json["errors"][0]["field"], "threshold[0].action");
}

#[test]
fn a_missing_file_is_an_error_that_names_it() {
    let output = ebb(&["rules", "lint", "/nonexistent/rules.toml"]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cannot read the rule file /nonexistent/rules.toml"),
        "{stderr}"
    );
}

#[test]
fn a_file_that_is_not_utf8_is_invalid_and_exits_2() {
    let dir = TempDir::new("cli-rules-binary");
    let path = dir.join("latin1.toml");
    std::fs::write(&path, b"pool = \"caf\xe9\"\n").unwrap();
    let (code, out) = lint(&path, false);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("not UTF-8"), "{out}");
    let (code, out) = lint(&path, true);
    assert_eq!(code, 2, "{out}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["errors"][0]["field"], "file");
}
