//! Crash paths: `ebb daemon` killed with SIGKILL at seeded random points while a Slurm
//! partition bound to its pool grows with the queue (Debian's slurmctld, slurmd and munged,
//! each node's slurmd the workload of its lease), and while a spot pool orders the
//! replacement of a GPU the host's owner takes back. Real agents on loopback, reached
//! through a relay that holds the answers to grants and releases for a while, so a kill can
//! land between an agent acting and the console hearing of it.
//!
//! After every restart, and at the end with the daemon stopped: every lease an agent holds
//! for the console is in `pool_leases` (nothing leaked), no GPU is in two leases not yet
//! released (nothing doubled), every request written to `lease_intents` before a kill is
//! answered once a daemon started after it has run a pass, and every lease an agent
//! granted was asked for under a key the console wrote to `lease_intents` first (read from
//! a log the test keeps beside that table, against the agent's idempotency records).
//!
//! `EBB_CRASH_SEED=N` replays a run's random choices (each test prints the seed it used).

use crate::MetricsDaemon;
use crate::crash::{
    AgentView, Rng, agent_leases, agent_view, console, integrity_check, open_sqlite, seed,
};
use crate::pools::a100_agent;
use crate::slurm;
use ebb_testkit::{AgentCommand, Cli, Relay, SlurmCluster, TempDir, eventually};
use ebb_wire::agent::{Lease, LeaseState};
use sqlx::Connection;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, Instant};

/// How long the relay holds the answer to each grant and release.
const ANSWER_HOLD: Duration = Duration::from_millis(150);

/// Wall-clock ms, the clock the console writes its rows on.
fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_millis() as i64)
        .unwrap_or(0)
}

/// `ebb daemon` on `data` (reconciling every `interval_ms`, metrics on a port it binds
/// itself), once it collects; `env` added to its environment. Dropping it is a SIGKILL.
fn start_daemon(data: &Path, interval_ms: &str, env: &[(&str, &str)]) -> MetricsDaemon {
    let mut command = console(data, &["daemon"]);
    command.env("EBB_RECONCILE_INTERVAL_MS", interval_ms);
    for (key, value) in env {
        command.env(key, value);
    }
    MetricsDaemon::start(command)
}

/// A log of every row ever written to `lease_intents` (key, host, when), kept by a trigger
/// the test adds to the console's database: the table itself forgets a request once it is
/// answered.
async fn keep_intent_log(console_db: &Path) {
    let mut connection = open_sqlite(console_db).await;
    for statement in [
        "CREATE TABLE crash_intent_log (key TEXT PRIMARY KEY, host TEXT NOT NULL, written_at_ms INTEGER NOT NULL)",
        "CREATE TRIGGER crash_intent_logged AFTER INSERT ON lease_intents BEGIN \
         INSERT OR IGNORE INTO crash_intent_log (key, host, written_at_ms) \
         VALUES (NEW.key, NEW.host, NEW.created_at_ms); END",
    ] {
        sqlx::query(statement)
            .execute(&mut connection)
            .await
            .unwrap_or_else(|error| panic!("{statement}: {error}"));
    }
    let _ = connection.close().await;
}

/// What the console has written down, all pools together.
#[derive(Debug, Default)]
struct Ledger {
    /// (host, lease id) of the `pool_leases` rows not ended.
    held: BTreeSet<(String, String)>,
    /// Keys of the requests in `lease_intents` (written, not yet answered).
    intents: BTreeSet<String>,
    /// When an enforcer pass last wrote a pool's status (0: never).
    checked_at_ms: i64,
}

async fn ledger(data: &Path) -> Ledger {
    let mut connection = open_sqlite(&data.join("console.db")).await;
    let held: Vec<(String, String)> =
        sqlx::query_as("SELECT host, lease_id FROM pool_leases WHERE ended_at_ms IS NULL")
            .fetch_all(&mut connection)
            .await
            .expect("pool_leases");
    let intents: Vec<String> = sqlx::query_scalar("SELECT key FROM lease_intents")
        .fetch_all(&mut connection)
        .await
        .expect("lease_intents");
    let checked_at_ms: Option<i64> =
        sqlx::query_scalar("SELECT max(checked_at_ms) FROM pool_status")
            .fetch_one(&mut connection)
            .await
            .expect("pool_status");
    let _ = connection.close().await;
    Ledger {
        held: held.into_iter().collect(),
        intents: intents.into_iter().collect(),
        checked_at_ms: checked_at_ms.unwrap_or(0),
    }
}

/// Where a kill landed, from what the console and the agents show right after it.
fn phase_of_kill(ledger: &Ledger, agents: &AgentView) -> usize {
    if !agents.active_ids.is_subset(&ledger.held) {
        1
    } else if !ledger.intents.is_empty() {
        0
    } else {
        2
    }
}

const PHASES: [&str; 3] = [
    "with a lease request written and unanswered",
    "with a lease granted at the agent and not yet recorded",
    "with no lease request in flight",
];

/// When the daemon is killed.
#[derive(Debug, Clone, Copy)]
enum Trigger {
    /// After this many ms: anywhere.
    After(u64),
    /// This many ms after a lease request is first seen in `lease_intents`.
    OnIntent(u64),
    /// This many ms after an agent first holds a lease of ours the console has not
    /// recorded (its answer held by the relay).
    OnGrant(u64),
}

impl Trigger {
    /// One of the three, at random: `after_ms` bounds the plain delay.
    fn any(rng: &mut Rng, after_ms: u64) -> Self {
        match rng.below(3) {
            0 => Trigger::After(rng.below(after_ms)),
            _ => Trigger::in_flight(rng),
        }
    }

    /// [`Trigger::OnIntent`] or [`Trigger::OnGrant`], at random.
    fn in_flight(rng: &mut Rng) -> Self {
        match rng.below(2) {
            0 => Trigger::OnIntent(rng.below(40)),
            _ => Trigger::OnGrant(rng.below(ANSWER_HOLD.as_millis() as u64)),
        }
    }

    /// Waits for the trigger's state (looking every 10 ms, for at most `within`), then its
    /// delay, the thing under test. Only a request or grant not in `before` (what the last
    /// kill left, which a restarted daemon has yet to settle) counts. False when the state
    /// did not come in time.
    async fn wait(
        self,
        data: &Path,
        hosts: &[(&str, &str)],
        before: &Unsettled,
        within: Duration,
    ) -> bool {
        let (intents, delay) = match self {
            Trigger::After(ms) => {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                return true;
            }
            Trigger::OnIntent(ms) => (true, ms),
            Trigger::OnGrant(ms) => (false, ms),
        };
        let deadline = Instant::now() + within;
        let came = loop {
            let ledger = ledger(data).await;
            let seen = if intents {
                !ledger.intents.is_subset(&before.intents)
            } else {
                agent_view(hosts)
                    .await
                    .active_ids
                    .iter()
                    .any(|lease| !ledger.held.contains(lease) && !before.grants.contains(lease))
            };
            if seen || Instant::now() > deadline {
                break seen;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        };
        tokio::time::sleep(Duration::from_millis(delay)).await;
        came
    }
}

/// What a kill left: the requests unanswered and the grants not recorded.
#[derive(Debug, Default)]
struct Unsettled {
    intents: BTreeSet<String>,
    grants: BTreeSet<(String, String)>,
}

/// The kills of one test and what each found.
#[derive(Debug, Default)]
struct Kills {
    seed: u64,
    count: u32,
    phases: [u32; 3],
    /// Triggers whose state did not come in time (killed anyway).
    missed: u32,
    /// Requests written before a kill that a later daemon has not run a pass on yet.
    unanswered: BTreeSet<String>,
    /// When the daemon now running was started.
    started_ms: i64,
    /// What the last kill left.
    left: Unsettled,
}

impl Kills {
    fn new(seed: u64) -> Self {
        Kills {
            seed,
            ..Kills::default()
        }
    }

    /// Waits for `trigger` (its state for at most `within`), then [`Kills::kill`].
    async fn at(
        &mut self,
        trigger: Trigger,
        within: Duration,
        daemon: &mut MetricsDaemon,
        data: &Path,
        hosts: &[(&str, &str)],
        restart: impl FnOnce() -> MetricsDaemon,
    ) {
        let came = trigger.wait(data, hosts, &self.left, within).await;
        if !came {
            self.missed += 1;
        }
        let how = format!(
            "{trigger:?}{}, {} ms into the daemon's life",
            if came {
                ""
            } else {
                " (its state did not come)"
            },
            now_ms() - self.started_ms
        );
        self.kill(daemon, data, hosts, &how, restart).await;
    }

    /// SIGKILLs `daemon`, checks what it left, and starts `restart()` in its place.
    async fn kill(
        &mut self,
        daemon: &mut MetricsDaemon,
        data: &Path,
        hosts: &[(&str, &str)],
        how: &str,
        restart: impl FnOnce() -> MetricsDaemon,
    ) {
        let seed = self.seed;
        let _ = daemon.child.kill(); // SIGKILL
        let _ = daemon.child.wait();
        self.count += 1;
        let ledger = ledger(data).await;
        let agents = agent_view(hosts).await;
        let phase = phase_of_kill(&ledger, &agents);
        self.phases[phase] += 1;
        println!(
            "kill {}: {how}, {}; {} requests unanswered, {} of the agents' {} leases recorded",
            self.count,
            PHASES[phase],
            ledger.intents.len(),
            agents.active_ids.intersection(&ledger.held).count(),
            agents.active_ids.len()
        );
        assert!(
            agents.doubled_gpus.is_empty(),
            "kill {} (seed {seed}): GPUs in two leases: {:?}",
            self.count,
            agents.doubled_gpus
        );
        // The daemon just killed ran a pass: every request written before it started was
        // sent again with its key and answered.
        if ledger.checked_at_ms > self.started_ms {
            let left: Vec<&String> = self.unanswered.intersection(&ledger.intents).collect();
            assert!(
                left.is_empty(),
                "kill {} (seed {seed}): requests written before the daemon's restart still unanswered after its pass: {left:?}",
                self.count
            );
            self.unanswered.clear();
        }
        self.left = Unsettled {
            intents: ledger.intents.clone(),
            grants: agents
                .active_ids
                .difference(&ledger.held)
                .cloned()
                .collect(),
        };
        self.unanswered.extend(ledger.intents);
        self.started_ms = now_ms();
        *daemon = restart();
    }

    fn report(&self, test: &str) {
        let landed: Vec<String> = PHASES
            .iter()
            .zip(self.phases)
            .map(|(phase, count)| format!("{count} {phase}"))
            .collect();
        println!(
            "{test}: {} kills of `ebb daemon` (seed {}), landed {}; {} triggers whose state did not come (killed anyway)",
            self.count,
            self.seed,
            landed.join(", "),
            self.missed
        );
    }
}

/// The ids of the leases the agent granted, each with the idempotency keys it was granted
/// under (the agent's own records, read from its database).
async fn granted_under(leases_db: &Path) -> BTreeMap<String, Vec<String>> {
    let mut connection = open_sqlite(leases_db).await;
    let rows: Vec<(String, String)> = sqlx::query_as("SELECT key, response FROM idempotency")
        .fetch_all(&mut connection)
        .await
        .expect("the agent's idempotency records");
    let _ = connection.close().await;
    let mut keys: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (key, response) in rows {
        let lease: Lease = serde_json::from_str(&response)
            .unwrap_or_else(|error| panic!("idempotency response of {key}: {error}"));
        keys.entry(lease.id).or_default().push(key);
    }
    keys
}

/// At the end, the daemon stopped: what the agent `url` (the console's host `host`, its
/// state in `agent_state`) holds against what the console on `data` has written down.
/// Returns the leases the agent ever granted.
async fn check_settled(
    data: &Path,
    host: &str,
    url: &str,
    agent_state: &Path,
    seed: u64,
) -> Vec<Lease> {
    let agents = agent_view(&[(host, url)]).await;
    let all = agent_leases(url, true).await;
    let ledger = ledger(data).await;
    let seen: Vec<String> = all
        .iter()
        .map(|lease| {
            format!(
                "{} {:?} GPUs {:?} granted {} released {:?} reclaim deadline {:?}",
                lease.id,
                lease.state,
                lease.gpu_indexes,
                lease.created_at_ms,
                lease.released_at_ms,
                lease.reclaim_deadline_ms
            )
        })
        .collect();
    let leaked: Vec<_> = agents.active_ids.difference(&ledger.held).collect();
    assert!(
        leaked.is_empty(),
        "seed {seed}: held at the agent, unknown to the console (leaked): {leaked:?}; the agent's leases {seen:#?}"
    );
    let stale: Vec<_> = ledger.held.difference(&agents.active_ids).collect();
    assert!(
        stale.is_empty(),
        "seed {seed}: recorded as held, not held at the agent: {stale:?}; the agent's leases {seen:#?}"
    );
    assert!(
        agents.doubled_gpus.is_empty(),
        "seed {seed}: GPUs in two leases (doubled): {:?}",
        agents.doubled_gpus
    );
    assert!(
        ledger.intents.is_empty(),
        "seed {seed}: requests left unanswered: {:?}",
        ledger.intents
    );
    // Every grant was asked for under a key written to lease_intents before it was sent,
    // and under that key only.
    let keys = granted_under(&agent_state.join("leases.db")).await;
    let mut connection = open_sqlite(&data.join("console.db")).await;
    let logged: Vec<(String, String, i64)> =
        sqlx::query_as("SELECT key, host, written_at_ms FROM crash_intent_log")
            .fetch_all(&mut connection)
            .await
            .expect("the intent log");
    let _ = connection.close().await;
    let logged: BTreeMap<String, (String, i64)> = logged
        .into_iter()
        .map(|(key, host, at)| (key, (host, at)))
        .collect();
    for lease in &all {
        let under = keys.get(&lease.id).cloned().unwrap_or_default();
        assert_eq!(
            under.len(),
            1,
            "seed {seed}: lease {} granted under keys {under:?}",
            lease.id
        );
        let written = logged.get(&under[0]);
        assert!(
            written.is_some_and(|(on, at)| on == host && *at <= lease.created_at_ms as i64),
            "seed {seed}: lease {} (granted at {}) was asked for under key {}, which lease_intents did not hold before: {written:?}",
            lease.id,
            lease.created_at_ms,
            under[0]
        );
    }
    for database in [data.join("console.db"), agent_state.join("leases.db")] {
        assert_eq!(
            integrity_check(&database).await,
            "ok",
            "seed {seed}: {}",
            database.display()
        );
    }
    all
}

// ---------------------------------------------------------------------------------------
// A Slurm partition growing with its queue.

/// The Slurm suite's queue rules, one node (2 GPUs) more at a time, so a scale-out is one
/// node request after another.
fn queue_rules() -> String {
    slurm::QUEUE_RULES.replace("max_gpus = 8\n", "max_gpus = 8\nstep = { out_gpus = 2 }\n")
}

/// The jobs of `jobs` that run now, each with its node.
fn running(slurm: &SlurmCluster, jobs: &[String]) -> Result<BTreeMap<String, String>, String> {
    let text = tokio::task::block_in_place(|| {
        slurm.squeue(&["--noheader", "-p", "gpu", "-t", "R", "-o", "%i|%N"])
    })?;
    Ok(text
        .lines()
        .filter_map(|line| line.trim().split_once('|'))
        .filter(|(job, _)| jobs.iter().any(|ours| ours == job))
        .map(|(job, node)| (job.to_string(), node.to_string()))
        .collect())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_daemon_killed_during_a_slurm_scale_out_leaks_and_doubles_no_node() {
    if !slurm::slurm_or_skip() {
        return;
    }
    let seed = seed();
    println!("slurm crash path: seed {seed} (EBB_CRASH_SEED={seed} replays it)");
    let mut rng = Rng::new(seed);
    let started = Instant::now();
    // Dropped in reverse: the daemon, the cluster (its jobs and slurmds), the agent.
    let dir = TempDir::new("crash-slurm");
    let agent_state = dir.subdir("agent");
    let agent = a100_agent(&agent_state, 8);
    let relay = Relay::start(Some(agent.addr)).await;
    relay.hold_answers(&["POST", "DELETE"], Some(ANSWER_HOLD));
    let data = dir.join("console");
    let cli = Cli::new(&data);
    cli.ok(&[
        "hosts",
        "add",
        "gpu-a",
        &relay.url(),
        "--region",
        "cn-north",
    ]);
    cli.ok(&[
        "pool", "create", "train", "--model", "A100", "--region", "cn-north", "--min", "0",
        "--max", "8",
    ]);
    let ports = SlurmCluster::free_ports(4);
    // `ebb slurm conf` first (slurmd's config path is not known yet), then the real one.
    std::fs::write(
        data.join("slurm.toml"),
        slurm::binding("ebb", &ports, "unset"),
    )
    .unwrap();
    let slurm = slurm::cluster(&cli, "crash", "");
    slurm::spool_dirs(&slurm);
    let conf = slurm.conf().to_str().unwrap().to_string();
    std::fs::write(
        data.join("slurm.toml"),
        slurm::binding("ebb", &ports, &conf),
    )
    .unwrap();
    let rules = dir.join("rules.toml");
    std::fs::write(&rules, queue_rules()).unwrap();
    cli.ok(&["rules", "set", "train", rules.to_str().unwrap(), "--yes"]);
    keep_intent_log(&data.join("console.db")).await;
    let hosts = [("gpu-a", agent.url.as_str())];
    let env = [("SLURM_CONF", conf.as_str())];
    let restart = || start_daemon(&data, "200", &env);

    // Four jobs of one node each, queued before the daemon starts, each running until the
    // test lets it end: the queue asks for all four nodes from the first pass on. The rules
    // size the pool to it once its metric (stored by the daemon each pass) has a whole
    // minute behind it; the daemon is killed three times at random in that minute.
    let go = slurm.dir().join("go");
    let script = format!("while [ ! -e {} ]; do sleep 0.2; done", go.display());
    let jobs: Vec<String> = (0..4)
        .map(|_| {
            slurm
                .sbatch(&[
                    "-p",
                    "gpu",
                    "--gres=gpu:2",
                    "-o",
                    "/dev/null",
                    "--wrap",
                    &script,
                ])
                .unwrap()
        })
        .collect();
    let mut kills = Kills::new(seed);
    kills.started_ms = now_ms();
    let mut daemon = restart();
    for _ in 0..3 {
        let trigger = Trigger::After(rng.below(12_000));
        kills
            .at(trigger, Duration::ZERO, &mut daemon, &data, &hosts, restart)
            .await;
    }
    // Then while each of the four nodes is asked for (its request written, or granted and
    // its answer not yet heard), and once more at random while the slurmds register.
    for node in 0..4 {
        let within = Duration::from_secs(if node == 0 { 90 } else { 30 });
        // A kill can land after the next node was asked for too: once all four are
        // granted, none is left to wait for.
        let trigger = if agent_view(&hosts).await.active < 8 {
            Trigger::in_flight(&mut rng)
        } else {
            Trigger::After(rng.below(1000))
        };
        kills
            .at(trigger, within, &mut daemon, &data, &hosts, restart)
            .await;
    }
    let trigger = Trigger::After(rng.below(3000));
    kills
        .at(trigger, Duration::ZERO, &mut daemon, &data, &hosts, restart)
        .await;

    // The last daemon runs on: the partition grows to the four nodes its queue asks for.
    let restarted = kills.started_ms;
    let nodes = eventually(
        &format!("(seed {seed}) the four jobs running on four nodes, the console settled"),
        Duration::from_secs(120),
        || async {
            let agents = agent_view(&hosts).await;
            let ledger = ledger(&data).await;
            let running = running(&slurm, &jobs).unwrap_or_default();
            let nodes: BTreeSet<String> = running.values().cloned().collect();
            (nodes.len() == 4
                && agents.active == 8
                && agents.active_ids == ledger.held
                && ledger.intents.is_empty()
                && ledger.checked_at_ms > restarted)
                .then_some(nodes)
                .ok_or(format!("running {running:?}; {agents:?}; {ledger:?}"))
        },
    )
    .await;
    drop(daemon);

    let all = check_settled(&data, "gpu-a", &agent.url, &agent_state, seed).await;
    // One grant per node: a node asked for again under another key would be a second.
    assert_eq!(
        all.len(),
        4,
        "seed {seed}: leases granted for four nodes: {all:#?}"
    );
    for lease in &all {
        assert_eq!(
            lease.gpu_indexes.len(),
            2,
            "seed {seed}: a node's lease: {lease:?}"
        );
        let command = lease.command.clone().unwrap_or_default();
        assert!(
            command.iter().any(|arg| nodes.contains(arg)),
            "seed {seed}: a held lease runs a node's slurmd: {command:?} ({nodes:?})"
        );
    }
    // The jobs end once let: they ran on the nodes the partition grew by.
    std::fs::write(&go, "").unwrap();
    eventually(
        &format!("(seed {seed}) every job completed"),
        Duration::from_secs(60),
        || async {
            let states: Vec<String> = tokio::task::block_in_place(|| {
                jobs.iter()
                    .map(|job| slurm.job_state(job).unwrap_or_default())
                    .collect()
            });
            states
                .iter()
                .all(|state| state == "COMPLETED")
                .then_some(())
                .ok_or(states)
        },
    )
    .await;
    kills.report("slurm crash path");
    println!(
        "slurm crash path: {} leases granted for 4 nodes; {:?} in all",
        all.len(),
        started.elapsed()
    );
}

// ---------------------------------------------------------------------------------------
// A spot reclaim's replacement.

/// The owner of the host takes lease `id` back: released by the agent `notice_s` from now.
async fn reclaim(url: &str, id: &str, notice_s: u64) -> Lease {
    let response = crate::http()
        .post(format!("{url}/v1/leases/{id}/reclaim"))
        .json(&ebb_wire::agent::ReclaimRequest { notice_s })
        .send()
        .await
        .unwrap_or_else(|error| panic!("POST {url}/v1/leases/{id}/reclaim: {error}"));
    assert!(response.status().is_success(), "{}", response.status());
    response.json().await.unwrap()
}

/// Waits until the pool holds its 2 on spot, every lease recorded and nothing asked for,
/// and `gone` (a reclaimed lease), when given, released with its GPU held by no lease.
async fn settled(data: &Path, hosts: &[(&str, &str)], what: String, gone: Option<Lease>) {
    let (host, url) = hosts[0];
    eventually(&what, Duration::from_secs(30), || async {
        // The agent first, in one read (a reclaimed lease goes at its deadline, whenever
        // that falls), then what the console has written down by then.
        let leases = agent_leases(url, true).await;
        let ledger = ledger(data).await;
        let active: Vec<&Lease> = leases
            .iter()
            .filter(|lease| lease.state == LeaseState::Active)
            .collect();
        let active_ids: BTreeSet<(String, String)> = active
            .iter()
            .map(|lease| (host.to_string(), lease.id.clone()))
            .collect();
        let back = gone.as_ref().is_none_or(|gone| {
            leases
                .iter()
                .any(|lease| lease.id == gone.id && lease.state == LeaseState::Released)
                && active.iter().all(|lease| lease.gpu_uuids != gone.gpu_uuids)
        });
        (back
            && active.len() == 2
            && active
                .iter()
                .all(|lease| lease.spot && lease.reclaim_deadline_ms.is_none())
            && active_ids == ledger.held
            && ledger.intents.is_empty())
        .then_some(())
        .ok_or(format!("{active:?}; {ledger:?}"))
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_daemon_killed_during_a_spot_reclaim_leaks_and_doubles_nothing() {
    let seed = seed();
    println!("spot crash path: seed {seed} (EBB_CRASH_SEED={seed} replays it)");
    let mut rng = Rng::new(seed);
    let started = Instant::now();
    let dir = TempDir::new("crash-spot");
    let agent_state = dir.subdir("agent");
    // Four A100s, all offered as spot.
    let agent = AgentCommand::sim(&agent_state, "4xA100")
        .host_name("spot-0")
        .args(["--spot"])
        .sample_interval_ms(1000)
        .start();
    let relay = Relay::start(Some(agent.addr)).await;
    relay.hold_answers(&["POST", "DELETE"], Some(ANSWER_HOLD));
    let data = dir.join("console");
    let cli = Cli::new(&data);
    cli.ok(&[
        "hosts",
        "add",
        "spot-0",
        &relay.url(),
        "--region",
        "cn-north",
    ]);
    // Every reclaim here is the test's own: the breaker that moves a pool on demand after
    // three reclaims in half an hour stays closed, so each replacement is a spot GPU again.
    std::fs::write(
        data.join("console.toml"),
        "[spot_breaker]\nmax_interruptions = 1000\nwindow_minutes = 1\ncool_off_minutes = 1\nquiet_minutes = 1\n",
    )
    .unwrap();
    cli.ok(&[
        "pool",
        "create",
        "train",
        "--model",
        "A100",
        "--region",
        "cn-north",
        "--min",
        "0",
        "--max",
        "4",
        "--interruptible",
        "--overlay",
        "spot",
    ]);
    keep_intent_log(&data.join("console.db")).await;
    let hosts = [("spot-0", agent.url.as_str())];
    let restart = || start_daemon(&data, "50", &[]);
    let mut kills = Kills::new(seed);
    kills.started_ms = now_ms();
    let mut daemon = restart();
    cli.ok(&["pool", "scale", "train", "2", "--yes"]);

    settled(&data, &hosts, format!("(seed {seed}) the pool at 2"), None).await;

    let rounds = 6u32;
    for round in 0..rounds {
        // The owner takes one of the pool's two GPUs back with a 3 s notice; the daemon
        // orders its replacement on the pass that sees it.
        let held: Vec<Lease> = agent_leases(&agent.url, false).await;
        let taken = held[rng.below(held.len() as u64) as usize].clone();
        let trigger = Trigger::any(&mut rng, 1500);
        reclaim(&agent.url, &taken.id, 3).await;
        kills
            .at(
                trigger,
                Duration::from_secs(10),
                &mut daemon,
                &data,
                &hosts,
                restart,
            )
            .await;
        // Every other round at random, again while the restarted daemon starts and sends
        // what it had asked for again.
        if rng.below(2) == 0 {
            let again = Trigger::After(rng.below(800));
            kills
                .at(again, Duration::ZERO, &mut daemon, &data, &hosts, restart)
                .await;
        }
        settled(
            &data,
            &hosts,
            format!(
                "(seed {seed}) round {round}: the replacement held and {} gone back to its owner",
                taken.id
            ),
            Some(taken),
        )
        .await;
    }
    drop(daemon);

    let all = check_settled(&data, "spot-0", &agent.url, &agent_state, seed).await;
    kills.report("spot crash path");
    println!(
        "spot crash path: {rounds} reclaims, {} leases granted; {:?} in all",
        all.len(),
        started.elapsed()
    );
    // One grant per GPU the pool needed: its 2, and a replacement per reclaim.
    assert_eq!(
        all.len() as u32,
        2 + rounds,
        "seed {seed}: leases granted (a grant beyond one per need is a request made twice): {all:#?}"
    );
}
