//! No agent token, nor its hash, ever lands where it should not: after a host is added with
//! a token (file store), the daemon has collected and a pool leased through it, the token
//! is only in the 0600 token file: not in `console.db`, `metrics.db` (or their WAL files),
//! the catalog, the daemon's log at debug level, or any command's output.

use crate::http;
use ebb_testkit::{AgentCommand, Cli, TempDir, eventually, workspace_bin};
use ebb_wire::agent::{LeaseList, LeaseState};
use sha2::{Digest, Sha256};
use std::process::{Command, Stdio};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_token_is_only_in_the_token_file() {
    let dir = TempDir::new("it-secrets");
    let config = dir.join("agent.toml");
    let made = Command::new(workspace_bin("ebb-agent"))
        .args(["token", "new", "--scope", "lease", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    assert!(made.status.success());
    let token = String::from_utf8(made.stdout).unwrap().trim().to_string();
    let hash: String = Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let agent = AgentCommand::sim(&dir.subdir("agent"), "2xA100")
        .args(["--config", config.to_str().unwrap()])
        .start();

    let data = dir.join("console");
    let cli = Cli::new(&data);
    let token_file = dir.join("token.txt");
    std::fs::write(&token_file, &token).unwrap();
    let mut said = String::new();
    said += &cli.ok(&[
        "hosts",
        "add",
        "gpu-0",
        &agent.url,
        "--region",
        "cn-north",
        "--token-file",
        token_file.to_str().unwrap(),
    ]);
    std::fs::remove_file(&token_file).unwrap();
    said += &cli.ok(&[
        "pool", "create", "p", "--model", "A100", "--region", "cn-north", "--min", "0", "--max",
        "2",
    ]);
    let log = std::fs::File::create(dir.join("daemon.log")).unwrap();
    let mut daemon = Command::new(workspace_bin("ebb"))
        .args([
            "daemon",
            "--data-dir",
            data.to_str().unwrap(),
            "--token-store",
            "file",
        ])
        .args(["--metrics-listen", "off"])
        .env("RUST_LOG", "debug")
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    said += &cli.ok(&["pool", "scale", "p", "2", "--yes"]);
    eventually(
        "two GPUs leased with the token",
        Duration::from_secs(30),
        || async {
            let list: LeaseList = http()
                .get(format!("{}/v1/leases", agent.url))
                .bearer_auth(&token)
                .send()
                .await
                .map_err(|e| e.to_string())?
                .json()
                .await
                .map_err(|e| e.to_string())?;
            let held = list
                .leases
                .iter()
                .filter(|lease| lease.state == LeaseState::Active)
                .count();
            (held == 2).then_some(()).ok_or(format!("{held} held"))
        },
    )
    .await;
    said += &cli.ok(&["hosts", "list", "--json"]);
    said += &cli.ok(&["pool", "show", "p", "--json"]);
    said += &cli.ok(&["activity", "--json"]);
    let _ = daemon.kill();
    let _ = daemon.wait();

    let mut looked = 0;
    for entry in std::fs::read_dir(&data).unwrap() {
        let path = entry.unwrap().path();
        if !path.is_file() {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if name == "tokens.json" {
            assert!(text.contains(&token), "the file store keeps it");
            continue;
        }
        looked += 1;
        assert!(!text.contains(&token), "the token is in {name}");
        assert!(!text.contains(&hash), "the token's hash is in {name}");
    }
    assert!(looked >= 3, "console.db, metrics.db and more were read");
    let log = std::fs::read_to_string(dir.join("daemon.log")).unwrap();
    assert!(
        log.contains("DEBUG") || log.contains("debug"),
        "a debug log was written"
    );
    assert!(
        !log.contains(&token) && !log.contains(&hash),
        "the daemon's log"
    );
    assert!(
        !said.contains(&token) && !said.contains(&hash),
        "the commands' output"
    );
}
