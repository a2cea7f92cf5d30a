//! Crash suites (issue 11, item 3): the console (`ebb pool scale` enforcing itself, and
//! `ebb daemon`) killed with SIGKILL at seeded random points of its rents and releases, and
//! an agent killed mid-call. Real processes on loopback; every restart is followed by a
//! check of the agents' leases and `PRAGMA integrity_check` on every SQLite database.
//!
//! `EBB_CRASH_SEED=N` replays a run (each test prints the seed it used).

use crate::http;
use ebb_testkit::{AgentCommand, AgentProcess, Cli, Relay, TempDir, eventually};
use ebb_wire::agent::{Lease, LeaseList, LeaseState};
use sqlx::Connection;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// SplitMix64: a seeded generator, so a failing run can be replayed exactly.
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..bound`.
    pub(crate) fn below(&mut self, bound: u64) -> u64 {
        self.next_u64() % bound.max(1)
    }
}

/// `EBB_CRASH_SEED`, or one from the clock (printed by the caller either way).
pub(crate) fn seed() -> u64 {
    match std::env::var("EBB_CRASH_SEED") {
        Ok(text) => text
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("EBB_CRASH_SEED: `{text}` is not a number")),
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|elapsed| elapsed.as_nanos() as u64)
            .unwrap_or(1),
    }
}

/// A connection of the test's own to an SQLite file another process uses.
pub(crate) async fn open_sqlite(path: &Path) -> sqlx::SqliteConnection {
    let options = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(false)
        .busy_timeout(Duration::from_secs(10));
    sqlx::SqliteConnection::connect_with(&options)
        .await
        .unwrap_or_else(|error| panic!("cannot open {}: {error}", path.display()))
}

/// `PRAGMA integrity_check` on `path`: "ok", or what SQLite found.
pub(crate) async fn integrity_check(path: &Path) -> String {
    let mut connection = open_sqlite(path).await;
    let rows: Vec<String> = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_all(&mut connection)
        .await
        .unwrap_or_else(|error| panic!("integrity_check on {}: {error}", path.display()));
    let _ = connection.close().await;
    rows.join("; ")
}

/// The leases an agent keeps: `all` includes the released ones.
pub(crate) async fn agent_leases(url: &str, all: bool) -> Vec<Lease> {
    let query = if all { "?state=all" } else { "" };
    let response = http()
        .get(format!("{url}/v1/leases{query}"))
        .send()
        .await
        .unwrap_or_else(|error| panic!("GET {url}/v1/leases: {error}"));
    assert!(response.status().is_success(), "{}", response.status());
    response.json::<LeaseList>().await.unwrap().leases
}

/// GPUs that are in more than one lease not yet released, at one agent.
fn gpus_in_two_leases(leases: &[Lease]) -> Vec<String> {
    let mut holders: BTreeMap<&str, u32> = BTreeMap::new();
    for lease in leases
        .iter()
        .filter(|lease| lease.state != LeaseState::Released)
    {
        for gpu in &lease.gpu_uuids {
            *holders.entry(gpu.as_str()).or_default() += 1;
        }
    }
    holders
        .into_iter()
        .filter(|(_, count)| *count > 1)
        .map(|(gpu, _)| gpu.to_string())
        .collect()
}

/// A simulated agent named `name` with four A100s, sampling once a second.
fn agent(state_dir: &Path, name: &str) -> AgentProcess {
    AgentCommand::sim(state_dir, "4xA100")
        .host_name(name)
        .sample_interval_ms(1000)
        .start()
}

/// The reconcile interval every console process of the crash suite runs with.
const INTERVAL_MS: &str = "50";

pub(crate) fn console(data: &Path, args: &[&str]) -> std::process::Command {
    let mut command = Cli::new(data).command(args);
    command
        .env("EBB_RECONCILE_INTERVAL_MS", INTERVAL_MS)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command
}

/// `ebb daemon`, once it has said it collects.
fn start_daemon(data: &Path) -> Child {
    let mut child = console(data, &["daemon"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("ebb daemon starts");
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().expect("piped stdout"))
        .read_line(&mut line)
        .expect("the daemon's first line");
    assert!(
        line.starts_with("collecting from"),
        "ebb daemon said {line:?}"
    );
    child
}

/// SIGKILL (a process already gone is fine).
fn kill_nine(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// What the console on `data` has written down: the pool's desired count, the lease
/// records not yet ended (host, lease id), and the lease requests not yet settled.
#[derive(Debug)]
struct ConsoleRecords {
    desired: u64,
    held: BTreeSet<(String, String)>,
    intents: u64,
    /// The pool's latest change (activity entry) is done.
    change_done: bool,
}

async fn console_records(data: &Path) -> ConsoleRecords {
    let mut connection = open_sqlite(&data.join("console.db")).await;
    let desired: i64 = sqlx::query_scalar("SELECT desired FROM pools WHERE name = 'train'")
        .fetch_one(&mut connection)
        .await
        .expect("the pool's desired count");
    let held: Vec<(String, String)> =
        sqlx::query_as("SELECT host, lease_id FROM pool_leases WHERE ended_at_ms IS NULL")
            .fetch_all(&mut connection)
            .await
            .expect("pool_leases");
    let intents: i64 = sqlx::query_scalar("SELECT count(*) FROM lease_intents")
        .fetch_one(&mut connection)
        .await
        .expect("lease_intents");
    let outcome: Option<String> = sqlx::query_scalar(
        "SELECT outcome FROM activity WHERE pool_name = 'train' ORDER BY id DESC LIMIT 1",
    )
    .fetch_optional(&mut connection)
    .await
    .expect("the activity log");
    let _ = connection.close().await;
    ConsoleRecords {
        desired: desired as u64,
        held: held.into_iter().collect(),
        intents: intents as u64,
        change_done: outcome.as_deref() == Some("done"),
    }
}

/// What the agents hold for the pool.
#[derive(Debug)]
pub(crate) struct AgentView {
    /// GPUs in active leases.
    pub(crate) active: u64,
    /// (host, lease id) of the active leases.
    pub(crate) active_ids: BTreeSet<(String, String)>,
    /// Leases ever granted, released ones included.
    pub(crate) granted_ever: u64,
    /// GPUs in two leases not yet released, as "host gpu".
    pub(crate) doubled_gpus: Vec<String>,
}

/// What the agents `hosts` (name, url) hold, read from each agent.
pub(crate) async fn agent_view(hosts: &[(&str, &str)]) -> AgentView {
    let mut view = AgentView {
        active: 0,
        active_ids: BTreeSet::new(),
        granted_ever: 0,
        doubled_gpus: Vec::new(),
    };
    for (name, url) in hosts {
        let leases = agent_leases(url, true).await;
        view.granted_ever += leases.len() as u64;
        view.doubled_gpus.extend(
            gpus_in_two_leases(&leases)
                .into_iter()
                .map(|gpu| format!("{name} {gpu}")),
        );
        for lease in leases
            .iter()
            .filter(|lease| lease.state == LeaseState::Active)
        {
            view.active += lease.gpu_uuids.len() as u64;
            view.active_ids.insert((name.to_string(), lease.id.clone()));
        }
    }
    view
}

/// Where a kill landed, from what the console and the agents show right after it.
fn phase_of_kill(records: &ConsoleRecords, agents: &AgentView, from: u64, to: u64) -> usize {
    if records.desired != to {
        0 // before the new count was written
    } else if records.change_done {
        4 // the console had recorded the change done
    } else if records.intents > 0 {
        1 // grants asked for (written down), their answers not yet recorded
    } else if agents.active == from {
        2 // the count written, nothing rented or released yet
    } else {
        3 // rents or releases carried out at the agents, not all recorded
    }
}

const PHASES: [&str; 5] = [
    "before the new count was written",
    "with lease requests written down and unanswered",
    "after the count was written, before any rent or release",
    "with rents or releases done at the agents and not yet recorded",
    "after the change was recorded done",
];

#[derive(Debug, Default)]
struct Tally {
    points: u32,
    daemon_kills: u32,
    scale_kills: u32,
    phases: [u32; 5],
    leaked: u64,
    doubled: u64,
    integrity_ok: u32,
    integrity_checks: u32,
    longest_convergence: Duration,
    /// Leases the agents ever granted the pool.
    granted: u64,
}

/// The console's kinds of process, killed in alternating runs of ten points: `ebb pool
/// scale --wait` enforcing itself (restarted as another one), and `ebb daemon` told by
/// `ebb pool scale` (restarted as a daemon, which the next point kills again).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Victim {
    Scale,
    Daemon,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_killed_at_200_random_points_of_rent_and_release_leaks_and_doubles_nothing() {
    let seed = seed();
    println!("crash suite: seed {seed} (EBB_CRASH_SEED={seed} replays it)");
    let mut rng = Rng::new(seed);
    let dir = TempDir::new("crash-console");
    let names = ["gpu-0", "gpu-1"];
    let agent_dirs: Vec<PathBuf> = names.iter().map(|name| dir.subdir(name)).collect();
    let agents: Vec<AgentProcess> = names
        .iter()
        .zip(&agent_dirs)
        .map(|(name, state)| agent(state, name))
        .collect();
    let hosts: Vec<(&str, &str)> = names
        .iter()
        .zip(&agents)
        .map(|(name, agent)| (*name, agent.url.as_str()))
        .collect();
    // The console reaches each agent through a proxy that holds the answers to lease calls
    // (grants and releases) for 80 ms: a request the agent has carried out and the console
    // not yet heard of lasts long enough for kills to land there.
    let mut proxies = Vec::new();
    for agent in &agents {
        let proxy = Relay::start(Some(agent.addr)).await;
        proxy.hold_answers(&["POST", "DELETE"], Some(Duration::from_millis(80)));
        proxies.push(proxy);
    }
    let data = dir.join("console");
    let cli = Cli::new(&data);
    for (name, proxy) in names.iter().zip(&proxies) {
        cli.ok(&["hosts", "add", name, &proxy.url(), "--region", "cn-north"]);
    }
    let fleet_gpus = 8u64;
    cli.ok(&[
        "pool", "create", "train", "--model", "A100", "--region", "cn-north", "--min", "0",
        "--max", "8",
    ]);
    let mut databases: Vec<PathBuf> = vec![data.join("console.db"), data.join("metrics.db")];
    databases.extend(agent_dirs.iter().map(|state| state.join("leases.db")));

    let points: u32 = std::env::var("EBB_CRASH_POINTS")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(200);
    let started = Instant::now();
    let mut tally = Tally::default();
    let mut desired = 0u64;
    // Every grant the pool needed: a lease per GPU, and a GPU released is never taken back.
    let mut grants_needed = 0u64;
    // A converged daemon, restarted after the last kill, waiting to be the next victim.
    let mut daemon: Option<Child> = None;
    for point in 0..points {
        let victim = if (point / 10) % 2 == 0 {
            Victim::Scale
        } else {
            Victim::Daemon
        };
        let to = loop {
            let to = rng.below(fleet_gpus + 1);
            if to != desired {
                break to;
            }
        };
        let to_text = to.to_string();
        let mut process = match victim {
            Victim::Scale => {
                if let Some(mut idle) = daemon.take() {
                    kill_nine(&mut idle);
                }
                tally.scale_kills += 1;
                console(
                    &data,
                    &["pool", "scale", "train", &to_text, "--yes", "--wait"],
                )
                .spawn()
                .expect("ebb pool scale starts")
            }
            Victim::Daemon => {
                let running = daemon.take().unwrap_or_else(|| start_daemon(&data));
                // Another process sets the count; the daemon's enforcer carries it out.
                cli.ok(&["pool", "scale", "train", &to_text, "--yes"]);
                tally.daemon_kills += 1;
                running
            }
        };
        // The kill lands anywhere from before the new count is written (the scale
        // process still starting) to after the pool holds it: the random delay is the
        // thing under test, not a wait for a state.
        let delay_ms = match victim {
            Victim::Scale => 100 + rng.below(500),
            Victim::Daemon => rng.below(300),
        };
        tokio::time::sleep(Duration::from_millis(delay_ms)).await;
        kill_nine(&mut process);
        let records = console_records(&data).await;
        let at_kill = agent_view(&hosts).await;
        tally.phases[phase_of_kill(&records, &at_kill, desired, to)] += 1;

        // Restart: the console enforces again until the pool holds exactly `to`.
        let restarted = Instant::now();
        match victim {
            Victim::Scale => {
                let converge = console(
                    &data,
                    &[
                        "pool",
                        "scale",
                        "train",
                        &to_text,
                        "--yes",
                        "--wait",
                        "--timeout",
                        "60",
                    ],
                )
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .output()
                .expect("ebb pool scale runs");
                assert!(
                    converge.status.success(),
                    "point {point} (seed {seed}): the restarted console did not converge to {to}: {}\n{}",
                    String::from_utf8_lossy(&converge.stdout),
                    String::from_utf8_lossy(&converge.stderr)
                );
            }
            Victim::Daemon => {
                daemon = Some(start_daemon(&data));
                // Converged: the agents hold `to`, every active lease is on record, and
                // no request is left unsettled.
                eventually(
                    &format!(
                        "point {point} (seed {seed}): the restarted daemon to converge to {to}"
                    ),
                    Duration::from_secs(60),
                    || async {
                        let records = console_records(&data).await;
                        let agents = agent_view(&hosts).await;
                        (agents.active == to
                            && records.intents == 0
                            && agents.active_ids.is_subset(&records.held))
                        .then_some(())
                        .ok_or((agents, records))
                    },
                )
                .await;
            }
        }
        tally.longest_convergence = tally.longest_convergence.max(restarted.elapsed());
        if to > desired {
            grants_needed += to - desired;
        }
        desired = to;

        // What the agents hold against what the console knows.
        let records = console_records(&data).await;
        let agents_now = agent_view(&hosts).await;
        assert!(
            agents_now.doubled_gpus.is_empty(),
            "point {point} (seed {seed}): in two leases: {:?}",
            agents_now.doubled_gpus
        );
        let unknown: Vec<_> = agents_now.active_ids.difference(&records.held).collect();
        if !unknown.is_empty() {
            println!("point {point}: held at the agents, unknown to the console: {unknown:?}");
        }
        tally.leaked += unknown.len() as u64 + agents_now.active.saturating_sub(to);
        assert_eq!(
            (agents_now.active, unknown.len()),
            (to, 0),
            "point {point} (seed {seed}): GPUs the agents hold for a pool at {to}, and leases unknown to the console"
        );
        assert_eq!(
            records.intents, 0,
            "point {point} (seed {seed}): lease requests left unsettled after converging"
        );
        // A grant beyond those needed is a request made twice (under two keys).
        tally.doubled = tally
            .doubled
            .max(agents_now.granted_ever.saturating_sub(grants_needed));
        tally.granted = agents_now.granted_ever;
        for database in &databases {
            tally.integrity_checks += 1;
            let verdict = integrity_check(database).await;
            if verdict == "ok" {
                tally.integrity_ok += 1;
            } else {
                println!("point {point}: {}: {verdict}", database.display());
            }
        }
        tally.points += 1;
    }
    if let Some(mut idle) = daemon.take() {
        kill_nine(&mut idle);
    }
    println!(
        "crash suite: {} kill points (seed {seed}), leases leaked {}, doubled {}, integrity_check ok {}/{}",
        tally.points, tally.leaked, tally.doubled, tally.integrity_ok, tally.integrity_checks
    );
    let landed: Vec<String> = PHASES
        .iter()
        .zip(tally.phases)
        .map(|(phase, count)| format!("{count} {phase}"))
        .collect();
    println!(
        "crash suite: {} kills of `ebb daemon`, {} of `ebb pool scale --wait`; landed {}; {} leases granted for {} GPUs scaled out; longest restart-to-converged {:?}; {:?} in all",
        tally.daemon_kills,
        tally.scale_kills,
        landed.join(", "),
        tally.granted,
        grants_needed,
        tally.longest_convergence,
        started.elapsed()
    );
    assert_eq!((tally.leaked, tally.doubled), (0, 0), "seed {seed}");
    assert_eq!(tally.integrity_ok, tally.integrity_checks, "seed {seed}");
}

/// POST /v1/leases for one GPU under `key`: the lease, or why there was none.
async fn lease_one(url: &str, key: &str) -> Result<(u16, Lease), String> {
    let response = http()
        .post(format!("{url}/v1/leases"))
        .header("idempotency-key", key)
        .json(&serde_json::json!({"pool_id": "p", "holder_id": "crash", "count": 1}))
        .send()
        .await
        .map_err(|error| format!("no answer: {error}"))?;
    let status = response.status().as_u16();
    if !(200..300).contains(&status) {
        return Err(format!(
            "HTTP {status}: {}",
            response.text().await.unwrap_or_default()
        ));
    }
    let lease = response
        .json::<Lease>()
        .await
        .map_err(|error| format!("no body: {error}"))?;
    Ok((status, lease))
}

/// DELETE /v1/leases/{id}: the status, or why there was none.
async fn release(url: &str, id: &str) -> Result<u16, String> {
    http()
        .delete(format!("{url}/v1/leases/{id}"))
        .send()
        .await
        .map(|response| response.status().as_u16())
        .map_err(|error| format!("no answer: {error}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_killed_mid_call_grants_once_per_key_and_a_retry_returns_the_same_lease() {
    let seed = seed();
    println!("agent kill suite: seed {seed} (EBB_CRASH_SEED={seed} replays it)");
    let mut rng = Rng::new(seed);
    let dir = TempDir::new("crash-agent");
    let state = dir.subdir("agent");
    let mut agent = agent(&state, "gpu-0");
    // key -> the lease it was granted.
    let mut keys: BTreeMap<String, String> = BTreeMap::new();
    // How long a grant and a release take here, so the kills spread over a call.
    let mut call_us = Vec::new();
    for warm in 0..3 {
        let key = format!("warm-{seed}-{warm}");
        let called = Instant::now();
        let (_, lease) = lease_one(&agent.url, &key).await.expect("a grant");
        call_us.push(called.elapsed().as_micros() as u64);
        let called = Instant::now();
        release(&agent.url, &lease.id).await.expect("a release");
        call_us.push(called.elapsed().as_micros() as u64);
        keys.insert(key, lease.id);
    }
    call_us.sort_unstable();
    let window_us = 2 * call_us[call_us.len() / 2] + 2_000;
    let rounds = 40u32;
    // The first call's fate: answered; unanswered but granted (the retry replays it);
    // unanswered and not granted (the retry is the grant).
    let (mut answered, mut granted_unanswered, mut not_granted) = (0u32, 0u32, 0u32);
    let mut integrity_ok = 0u32;
    let mut release_kills = 0u32;
    for round in 0..rounds {
        let key = format!("crash-{seed}-{round}");
        let held: Vec<Lease> = agent_leases(&agent.url, false).await;
        // Every third round, or when most GPUs are held, the agent dies mid-release.
        let release_round = held.len() >= 3 || (round % 3 == 2 && !held.is_empty());
        let url = agent.url.clone();
        // When the SIGKILL lands in the call: random, the thing under test (not a wait).
        let delay = Duration::from_micros(rng.below(window_us));
        if release_round {
            let id = held[0].id.clone();
            let call = tokio::spawn({
                let id = id.clone();
                async move { release(&url, &id).await }
            });
            tokio::time::sleep(delay).await;
            drop(agent); // SIGKILL
            let first = call.await.unwrap();
            release_kills += 1;
            agent = self::agent(&state, "gpu-0");
            // The retry ends it, whatever the first call got done.
            let status = release(&agent.url, &id).await.expect("the retried release");
            assert!(
                (200..300).contains(&status),
                "round {round} (seed {seed}): retried release of {id}: HTTP {status} (first: {first:?})"
            );
        } else {
            let call_key = key.clone();
            let call = tokio::spawn(async move { lease_one(&url, &call_key).await });
            tokio::time::sleep(delay).await;
            drop(agent); // SIGKILL
            let first = call.await.unwrap();
            agent = self::agent(&state, "gpu-0");
            let (status, retried) = lease_one(&agent.url, &key)
                .await
                .unwrap_or_else(|why| panic!("round {round} (seed {seed}): the retry: {why}"));
            match (first, status) {
                (Ok((_, granted)), _) => {
                    answered += 1;
                    assert_eq!(status, 200, "round {round}: a retry of a grant replays it");
                    assert_eq!(
                        retried.id, granted.id,
                        "round {round} (seed {seed}): the retry returns the first answer's lease"
                    );
                }
                (Err(_), 200) => granted_unanswered += 1,
                (Err(_), _) => not_granted += 1,
            }
            keys.insert(key, retried.id.clone());
        }
        let all = agent_leases(&agent.url, true).await;
        assert!(
            gpus_in_two_leases(&all).is_empty(),
            "round {round} (seed {seed}): a GPU in two leases: {all:?}"
        );
        // One allocation per key: every lease the agent ever granted is one key's.
        let granted: BTreeSet<&str> = all.iter().map(|lease| lease.id.as_str()).collect();
        let by_keys: BTreeSet<&str> = keys.values().map(String::as_str).collect();
        assert_eq!(
            (granted.len(), &granted),
            (keys.len(), &by_keys),
            "round {round} (seed {seed}): the leases granted against one per key"
        );
        if integrity_check(&state.join("leases.db")).await == "ok" {
            integrity_ok += 1;
        }
    }
    let leases = agent_leases(&agent.url, true).await;
    println!(
        "agent kill suite: {rounds} kills mid-call (seed {seed}, 0-{window_us} µs into the call), {} mid-grant and {release_kills} mid-release; {} keys, {} leases granted (doubled {}), GPUs in two leases 0; first calls answered {answered} (retry returned the same lease {answered}/{answered}), granted but unanswered {granted_unanswered} (retry replayed the grant), not granted {not_granted}; integrity_check ok {integrity_ok}/{rounds}",
        rounds - release_kills,
        keys.len(),
        leases.len(),
        leases.len() - keys.len(),
    );
    assert_eq!(integrity_ok, rounds);
}
