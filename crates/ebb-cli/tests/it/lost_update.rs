//! Two `ebb` processes moving one pool at once, on one SQLite data directory and on one
//! PostgreSQL database: each move is a compare-and-set from the count its preview read, so
//! none is lost. A move that lost the race is refused naming `from` (exit 1) and changes
//! nothing; every move made is in the activity log, each from the count the one before
//! left, and the pool ends where the last one put it.

use ebb_agent::sim::GpuModel;
use ebb_testkit::{Cli, PostgresServer, TempDir, TestFleet};
use ebb_wire::pools::ActivityEntry;
use ebb_wire::reasons::ChangeReason;
use std::path::Path;
use std::time::Duration;

const MOVES: u32 = 12;

/// Two processes' worth of `ebb pool scale train N --yes`, `MOVES` each, at once; the
/// moves made and refused.
fn race(a: &Cli, b: &Cli) -> (u32, u32) {
    let run = |cli: Cli, seed: u32| {
        std::thread::spawn(move || {
            let (mut made, mut refused) = (0, 0);
            for round in 0..MOVES {
                let to = ((round * 5 + seed * 3) % 9).to_string();
                let output = cli.run(&["pool", "scale", "train", &to, "--yes"]);
                let stderr = String::from_utf8_lossy(&output.stderr);
                if output.status.success() {
                    made += 1;
                } else {
                    assert!(
                        stderr.contains("another change came first"),
                        "only a lost race may refuse a move: {stderr}"
                    );
                    assert_eq!(output.status.code(), Some(1), "{stderr}");
                    refused += 1;
                }
            }
            (made, refused)
        })
    };
    let first = run(a.clone(), 1);
    let second = run(b.clone(), 2);
    let (first, second) = (first.join().unwrap(), second.join().unwrap());
    let (made, refused) = (first.0 + second.0, first.1 + second.1);
    eprintln!("two processes: {made} moves made, {refused} refused as a lost race");
    (made, refused)
}

/// The pool's log, oldest first, as a chain of moves: every entry made from where the one
/// before left the count; returns where the last left it.
fn check_chain(cli: &Cli, made: u32) -> u32 {
    let text = cli.ok(&["--json", "activity", "--pool", "train", "--limit", "1000"]);
    let log: Vec<ActivityEntry> = serde_json::from_str(&text).unwrap();
    let moves: Vec<&ActivityEntry> = log
        .iter()
        .rev()
        .filter(|entry| {
            matches!(
                entry.reason,
                ChangeReason::Cli | ChangeReason::Created { .. }
            )
        })
        .collect();
    assert_eq!(
        moves.len() as u32,
        made + 2,
        "created, the first move and every move made are logged once: {moves:#?}"
    );
    for pair in moves.windows(2) {
        assert_eq!(
            pair[1].from, pair[0].to,
            "entry {} moved from {}, but the one before left {}: an update was lost",
            pair[1].id, pair[1].from, pair[0].to
        );
    }
    moves.last().unwrap().to
}

fn desired(cli: &Cli) -> u32 {
    let text = cli.ok(&["--json", "pool", "show", "train"]);
    let view: serde_json::Value = serde_json::from_str(&text).unwrap();
    view["desired"].as_u64().unwrap() as u32
}

async fn fleet() -> TestFleet {
    TestFleet::builder()
        .hosts(2)
        .gpus_per_host(4)
        .model(GpuModel::A100)
        .release_grace(Duration::from_millis(50))
        .start()
        .await
}

fn set_up(cli: &Cli, fleet: &TestFleet) {
    for host in fleet.hosts() {
        cli.ok(&[
            "hosts", "add", &host.name, &host.url, "--region", "cn-north",
        ]);
    }
    cli.ok(&[
        "pool", "create", "train", "--model", "A100", "--region", "cn-north", "--min", "0",
        "--max", "8",
    ]);
    cli.ok(&["pool", "scale", "train", "1", "--yes"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_on_one_sqlite_directory_lose_no_move() {
    let fleet = fleet().await;
    let dir = TempDir::new("cli-lost-update");
    let cli = Cli::with_program(Path::new(env!("CARGO_BIN_EXE_ebb")), dir.path());
    set_up(&cli, &fleet);
    let (made, refused) = race(&cli, &cli);
    assert_eq!(made + refused, 2 * MOVES);
    let last = check_chain(&cli, made);
    assert_eq!(
        desired(&cli),
        last,
        "the pool is where the last move put it"
    );
    fleet.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_consoles_on_one_postgresql_database_lose_no_move() {
    let server = PostgresServer::start("cli-lost-update").unwrap_or_else(|error| panic!("{error}"));
    let database = format!("{}/ebb_lost_update", server.url());
    let fleet = fleet().await;
    let dir = TempDir::new("cli-lost-update-pg");
    let program = Path::new(env!("CARGO_BIN_EXE_ebb"));
    let consoles: Vec<Cli> = ["a", "b"]
        .iter()
        .map(|name| {
            let data = dir.subdir(name);
            std::fs::write(
                data.join("console.toml"),
                format!("database = \"{database}\"\n"),
            )
            .unwrap();
            Cli::with_program(program, &data)
        })
        .collect();
    set_up(&consoles[0], &fleet);
    let (made, refused) = race(&consoles[0], &consoles[1]);
    assert_eq!(made + refused, 2 * MOVES);
    let last = check_chain(&consoles[1], made);
    assert_eq!(
        desired(&consoles[0]),
        last,
        "the pool is where the last move put it"
    );
    fleet.stop().await;
}
