//! Roles, teams and the audit log on the command line, on a real PostgreSQL: `ebb admin
//! init|grant`, a viewer's `ebb pool scale` refused with exit 2 naming the role it needs,
//! a grant by a non-admin refused by the database, `ebb admin init` by a role without
//! CREATEROLE refused naming the privilege, `ebb team`, and `ebb audit verify` naming an
//! entry edited by hand (exit 1).

use ebb_agent::sim::GpuModel;
use ebb_testkit::{Cli, PostgresServer, TempDir, TestFleet};
use std::path::Path;

/// `HOST:PORT` of the server's URL.
fn host_port(url: &str) -> &str {
    url.split_once('@').expect("a URL with a user").1
}

/// A CLI on its own data directory whose console.toml names `url`.
fn cli_on(dir: &TempDir, name: &str, url: &str) -> Cli {
    let data = dir.subdir(name);
    std::fs::write(data.join("console.toml"), format!("database = \"{url}\"\n")).unwrap();
    Cli::with_program(Path::new(env!("CARGO_BIN_EXE_ebb")), &data)
}

fn refused(cli: &Cli, args: &[&str], code: i32, words: &str) -> String {
    let output = cli.run(args);
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    assert_eq!(
        output.status.code(),
        Some(code),
        "ebb {args:?}: {stdout}\n{stderr}"
    );
    assert!(
        stderr.contains(words) || stdout.contains(words),
        "ebb {args:?} should say `{words}`: {stdout}\n{stderr}"
    );
    format!("{stdout}{stderr}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn roles_teams_and_the_audit_log_on_the_command_line() {
    let server = PostgresServer::start("cli-roles").unwrap_or_else(|error| panic!("{error}"));
    let base = server.url().to_string();
    let fleet = TestFleet::builder()
        .hosts(1)
        .gpus_per_host(4)
        .model(GpuModel::A100)
        .start()
        .await;
    let dir = TempDir::new("cli-roles");

    // A database owner without CREATEROLE cannot set the roles up: the privilege is named.
    server.psql("postgres", "CREATE ROLE owner_only LOGIN CREATEDB");
    let owner = cli_on(
        &dir,
        "owner",
        &format!("postgres://owner_only@{}/ebb_owned", host_port(&base)),
    );
    owner.ok(&["hosts", "list"]);
    refused(
        &owner,
        &["admin", "init"],
        2,
        "needs the CREATEROLE privilege",
    );

    let database = "ebb_roles";
    let admin = cli_on(&dir, "admin", &format!("{base}/{database}"));
    let host = &fleet.hosts()[0];
    admin.ok(&[
        "hosts", "add", &host.name, &host.url, "--region", "cn-north",
    ]);
    admin.ok(&[
        "pool", "create", "train", "--model", "A100", "--region", "cn-north", "--min", "0",
        "--max", "4",
    ]);
    admin.ok(&["admin", "init"]);
    server.psql(database, "CREATE ROLE vera LOGIN");
    refused(
        &admin,
        &["admin", "grant", "root", "vera"],
        2,
        "not an Ebb role",
    );
    refused(
        &admin,
        &["admin", "grant", "viewer", "nobody"],
        2,
        "user: no database user `nobody`",
    );
    assert!(
        admin
            .ok(&["admin", "grant", "viewer", "vera"])
            .contains("vera is now viewer")
    );

    let vera = cli_on(
        &dir,
        "vera",
        &format!("postgres://vera@{}/{database}", host_port(&base)),
    );
    assert!(vera.ok(&["whoami"]).starts_with("vera (viewer)"));
    assert!(
        vera.ok(&["pool", "list"]).contains("train"),
        "a viewer reads"
    );
    refused(
        &vera,
        &["pool", "scale", "train", "1", "--yes"],
        2,
        "to scale pools needs the operator role; vera is viewer",
    );
    refused(&vera, &["team", "set", "ml"], 2, "needs the admin role");
    refused(
        &vera,
        &["admin", "grant", "admin", "vera"],
        2,
        "only an admin may grant roles",
    );

    // Teams: a quota below what the team asks for is refused naming both.
    admin.ok(&["team", "set", "ml", "--spend-per-month", "50000"]);
    admin.ok(&["team", "assign", "train", "ml"]);
    admin.ok(&["pool", "scale", "train", "2", "--yes"]);
    refused(
        &admin,
        &["team", "quota", "ml", "--model", "A100", "--gpus", "1"],
        2,
        "below the 2",
    );
    let teams = admin.ok(&["team", "quota", "ml", "--model", "A100", "--gpus", "3"]);
    assert!(
        teams.contains("quota 3 A100: its pools ask for 2"),
        "{teams}"
    );

    // The audit log: verified, exported, and an entry edited by hand named.
    assert!(admin.ok(&["audit", "verify"]).starts_with("verified:"));
    let exported = admin.ok(&["audit", "export"]);
    let lines: Vec<serde_json::Value> = exported
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert!(
        lines
            .iter()
            .any(|entry| entry["who"] == "vera" && entry["what"] == "refused")
    );
    server.psql(database, "UPDATE audit SET before = 'x' WHERE id = 2");
    refused(
        &vera,
        &["audit", "verify"],
        1,
        "entry 2 was changed after it was written",
    );
    fleet.stop().await;
}
