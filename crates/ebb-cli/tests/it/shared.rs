//! Two `ebb daemon`s on one PostgreSQL database (Debian's server, made in a temp dir) and a
//! simulated fleet: one is elected to enforce; stopped (SIGSTOP), the other takes over and
//! the pool keeps its count; resumed, the old leader stays a viewer; stopped properly, the
//! next one takes over at once. Throughout, no GPU is in two leases and the pool never holds
//! more than it was asked for.

use ebb_agent::sim::GpuModel;
use ebb_telemetry::client::{AgentClient, ClientConfig};
use ebb_testkit::{Cli, PostgresServer, TempDir, TestFleet, eventually, eventually_blocking};
use ebb_wire::agent::LeaseState;
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// A running `ebb daemon` and the lines it printed, as they come.
struct Daemon {
    name: &'static str,
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
    stderr: Arc<Mutex<Vec<String>>>,
}

impl Daemon {
    fn start(name: &'static str, cli: &Cli, env: &[(&str, &str)]) -> Self {
        let mut command = cli.command(&["daemon", "--metrics-listen", "off"]);
        command
            .env("EBB_RECONCILE_INTERVAL_MS", "200")
            .env("RUST_LOG", "warn")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command.spawn().expect("ebb daemon starts");
        let (send, lines) = mpsc::channel();
        let stdout = child.stdout.take().expect("piped stdout");
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let errors = stderr.clone();
        let pipe = child.stderr.take().expect("piped stderr");
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                errors.lock().unwrap().push(line);
            }
        });
        Self {
            name,
            child,
            lines,
            seen: Vec::new(),
            stderr,
        }
    }

    /// Waits for `enforcing ... term N` and returns N and when it came.
    fn wait_elected(&mut self, within: Duration) -> (u64, Instant) {
        let at = self.wait_line("enforcing the pools: elected, term ", within);
        let line = self.seen.last().expect("the line waited for");
        let term = line
            .rsplit(' ')
            .next()
            .and_then(|word| word.parse().ok())
            .unwrap_or_else(|| panic!("no term in {line:?}"));
        (term, at)
    }

    /// Waits for a line containing `text`; when it came.
    fn wait_line(&mut self, text: &str, within: Duration) -> Instant {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let found = line.contains(text);
                    self.seen.push(line);
                    if found {
                        return Instant::now();
                    }
                }
                Err(_) => panic!(
                    "daemon {} did not say {text:?} within {within:?}; it said {:?}; stderr {:?}",
                    self.name,
                    self.seen,
                    self.stderr.lock().unwrap()
                ),
            }
        }
    }

    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill {signal} {}", self.name);
    }

    /// SIGTERM, and the exit it leads to.
    fn stop(mut self) {
        self.signal("-TERM");
        eventually_blocking(
            &format!("daemon {} to stop on SIGTERM", self.name),
            Duration::from_secs(20),
            || self.child.try_wait().unwrap().ok_or("still running"),
        );
    }

    fn refusals(&self) -> usize {
        self.stderr
            .lock()
            .unwrap()
            .iter()
            .filter(|line| line.contains("refused this console's term"))
            .count()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What the agents were seen holding, polled all along: the most GPUs the pool held at
/// once, GPUs seen in two active leases, and the polls.
#[derive(Debug, Default)]
struct Watch {
    most_held: AtomicU64,
    doubled: Mutex<Vec<String>>,
    polls: AtomicU64,
}

async fn poll_agents(urls: &[String], watch: &Watch) -> u64 {
    let mut held = 0;
    for url in urls {
        let client = AgentClient::new(url, ClientConfig::default()).unwrap();
        let Ok(list) = client.leases().await else {
            continue;
        };
        let mut gpus = BTreeSet::new();
        for lease in list.leases.iter().filter(|l| l.state == LeaseState::Active) {
            held += lease.gpu_uuids.len() as u64;
            for gpu in &lease.gpu_uuids {
                if !gpus.insert(gpu.clone()) {
                    watch.doubled.lock().unwrap().push(format!("{url} {gpu}"));
                }
            }
        }
    }
    watch.most_held.fetch_max(held, Ordering::Relaxed);
    watch.polls.fetch_add(1, Ordering::Relaxed);
    held
}

async fn wait_held(urls: &[String], watch: &Watch, gpus: u64, within: Duration) -> Duration {
    let started = Instant::now();
    eventually(
        &format!("the agents to hold {gpus} GPUs"),
        within,
        || async {
            let held = poll_agents(urls, watch).await;
            (held == gpus).then_some(()).ok_or(held)
        },
    )
    .await;
    started.elapsed()
}

/// `ebb [GLOBAL...] pool scale train TO --yes`.
fn scale(cli: &Cli, global: &[&str], to: u32) {
    let to = to.to_string();
    let args: Vec<&str> = global
        .iter()
        .copied()
        .chain(["pool", "scale", "train", &to, "--yes"])
        .collect();
    cli.ok(&args);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_daemons_on_one_database_elect_one_enforcer_and_the_other_takes_over() {
    let server = PostgresServer::start("cli-shared").unwrap_or_else(|error| panic!("{error}"));
    let database = format!("{}/ebb_shared", server.url());
    let fleet = TestFleet::builder()
        .hosts(2)
        .gpus_per_host(4)
        .model(GpuModel::A100)
        .release_grace(Duration::from_millis(50))
        .start()
        .await;
    let urls: Vec<String> = fleet.hosts().iter().map(|host| host.url.clone()).collect();
    let dir = TempDir::new("cli-shared");
    let program = Path::new(env!("CARGO_BIN_EXE_ebb"));
    // Console A names the database in its data directory's console.toml; console B with
    // --database's variable.
    let a_dir = dir.subdir("a");
    std::fs::write(
        a_dir.join("console.toml"),
        format!("database = \"{database}\"\n"),
    )
    .unwrap();
    let a = Cli::with_program(program, &a_dir);
    let b_flags = ["--database", database.as_str()];
    let b = Cli::with_program(program, &dir.subdir("b"));
    for host in fleet.hosts() {
        a.ok(&[
            "hosts", "add", &host.name, &host.url, "--region", "cn-north",
        ]);
    }
    a.ok(&[
        "pool", "create", "train", "--model", "A100", "--region", "cn-north", "--min", "0",
        "--max", "8",
    ]);
    scale(&a, &[], 4);

    let watch = Arc::new(Watch::default());
    let stop_watching = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watcher = {
        let (urls, watch, stop) = (urls.clone(), watch.clone(), stop_watching.clone());
        tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                poll_agents(&urls, &watch).await;
                // The watch's sampling pace, not a wait for a state.
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
    };

    let mut leader = Daemon::start("A", &a, &[]);
    // (Each `ebb` command before it took part too, alone: the term is past 1.)
    let (first_term, _) = leader.wait_elected(Duration::from_secs(30));
    let mut other = Daemon::start("B", &b, &[("EBB_DATABASE", database.as_str())]);
    other.wait_line("viewing: another console enforces", Duration::from_secs(30));
    wait_held(&urls, &watch, 4, Duration::from_secs(30)).await;
    assert!(
        b.ok(&["--database", &database, "hosts", "list"])
            .contains(&fleet.hosts()[0].name),
        "B sees the hosts A registered: one registry"
    );

    // The leader stops without a word; the count moves while nobody enforces.
    leader.signal("-STOP");
    let stopped = Instant::now();
    scale(&b, &b_flags, 6);
    let (term, took_over) = other.wait_elected(Duration::from_secs(30));
    assert_eq!(term, first_term + 1);
    let takeover = took_over - stopped;
    let reached = wait_held(&urls, &watch, 6, Duration::from_secs(30)).await;
    assert!(
        watch.most_held.load(Ordering::Relaxed) <= 6,
        "the pool held more than it was asked for"
    );

    // The old leader wakes: it finds itself replaced and only views.
    leader.signal("-CONT");
    let resumed = Instant::now();
    let stepped_down =
        leader.wait_line("viewing: another console enforces", Duration::from_secs(30));
    scale(&a, &[], 2);
    wait_held(&urls, &watch, 2, Duration::from_secs(30)).await;

    // The enforcer stops properly: it gives the lease back, the old leader takes over at once.
    other.stop();
    let handed = Instant::now();
    let (term, _) = leader.wait_elected(Duration::from_secs(30));
    assert_eq!(term, first_term + 2);
    let handover = handed.elapsed();
    scale(&a, &[], 3);
    wait_held(&urls, &watch, 3, Duration::from_secs(30)).await;
    let refused = leader.refusals();
    leader.stop();

    stop_watching.store(true, Ordering::Relaxed);
    watcher.await.unwrap();
    let doubled = watch.doubled.lock().unwrap().clone();
    assert!(doubled.is_empty(), "GPUs in two leases: {doubled:?}");
    let most = watch.most_held.load(Ordering::Relaxed);
    assert!(
        most <= 6,
        "the pool held {most} GPUs, more than the 6 it was asked for"
    );
    assert!(
        takeover < Duration::from_secs(15),
        "the other daemon took over in {takeover:?}"
    );
    println!(
        "shared state: takeover {takeover:?} after SIGSTOP of the leader (then 6 GPUs held {reached:?} later); the resumed old leader stood down in {:?} with {refused} request(s) refused on its term; a stopped leader handed over in {handover:?}; {} agent polls saw 0 GPUs in two leases and at most {most} held (6 asked)",
        stepped_down - resumed,
        watch.polls.load(Ordering::Relaxed),
    );
    fleet.stop().await;
    drop(server);
}

#[test]
fn a_host_added_elsewhere_gets_its_token_on_this_machine() {
    let dir = TempDir::new("cli-hosts-token");
    let cli = Cli::with_program(Path::new(env!("CARGO_BIN_EXE_ebb")), &dir.subdir("console"));
    cli.ok(&[
        "hosts",
        "add",
        "gpu-07",
        "http://127.0.0.1:9",
        "--region",
        "cn-north",
    ]);
    let token_file = dir.join("token.txt");
    std::fs::write(&token_file, "secret-token-7\n").unwrap();
    let said = cli.ok(&[
        "hosts",
        "token",
        "gpu-07",
        "--token-file",
        token_file.to_str().unwrap(),
    ]);
    assert!(said.contains("gpu-07: its token is in"), "{said}");
    let tokens = std::fs::read_to_string(dir.join("console/tokens.json")).unwrap();
    assert!(tokens.contains("secret-token-7"), "the file store holds it");

    // An empty file or an unknown host is refused, naming what is wrong.
    std::fs::write(&token_file, "\n").unwrap();
    let output = cli.run(&[
        "hosts",
        "token",
        "gpu-07",
        "--token-file",
        token_file.to_str().unwrap(),
    ]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("is empty"));
    std::fs::write(&token_file, "secret-token-7\n").unwrap();
    let output = cli.run(&[
        "hosts",
        "token",
        "gpu-99",
        "--token-file",
        dir.join("token.txt").to_str().unwrap(),
    ]);
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("gpu-99"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
