//! Pools bound to a Slurm partition, with real processes on loopback: Debian's slurmctld,
//! munged and slurmd (each node's slurmd started by the agent as its lease's workload), a
//! simulated `ebb-agent`, and `ebb daemon` with the pool's rules on the queue.

use crate::MetricsDaemon;
use crate::pools::{a100_agent, leases};
use ebb_testkit::{AgentProcess, Cli, SlurmCluster, SlurmSpec, TempDir, eventually_blocking};
use ebb_wire::agent::{Lease, LeaseState};
use std::collections::BTreeMap;
use std::time::Duration;

/// The rules an operator writes for a queue-driven pool: as many GPUs as the queue's
/// jobs ask for or hold, at once both ways.
pub(crate) const QUEUE_RULES: &str = r#"
pool = "train"

[limits]
min_gpus = 0
max_gpus = 8

[scale_in]
force = true

[[metric]]
name = "slurm_demand_gpus"
stale_after_minutes = 2

[[target]]
name = "size-to-queue"
metric = "slurm_demand_gpus"
target = 1
tolerance = 0
scale_in_stabilization_minutes = 0
"#;

/// The partition `gpu`'s jobs as squeue has them: (job, state, node, reason).
fn queue(slurm: &SlurmCluster) -> Result<Vec<(String, String, String, String)>, String> {
    let text = slurm.squeue(&["--noheader", "-p", "gpu", "-o", "%i|%T|%N|%r"])?;
    Ok(text
        .lines()
        .filter_map(|line| {
            let mut fields = line.trim().split('|');
            Some((
                fields.next()?.to_string(),
                fields.next()?.to_string(),
                fields.next().unwrap_or_default().to_string(),
                fields.next().unwrap_or_default().to_string(),
            ))
        })
        .collect())
}

/// Skips (with the reason) only where the operator said Slurm may be missing.
pub(crate) fn slurm_or_skip() -> bool {
    match SlurmCluster::available() {
        Ok(()) => true,
        Err(missing) if std::env::var_os("EBB_SLURM_OPTIONAL").is_some() => {
            eprintln!("skipped: {missing}");
            false
        }
        Err(missing) => panic!("{missing} (cargo xtask test installs it)"),
    }
}

/// slurm.toml: partition `gpu` bound to pool `train`, four nodes of 2 GPUs on host
/// `gpu-a`, each on its own slurmd port; `slurmd` as the lease's workload reads `conf`.
pub(crate) fn binding(mode: &str, ports: &[u16], conf: &str) -> String {
    let mut text = format!(
        "[[partition]]\nname = \"gpu\"\npool = \"train\"\nmode = \"{mode}\"\ngpus_per_node = 2\n\
         slurmd = [\"/usr/sbin/slurmd\", \"-D\", \"-b\", \"-f\", \"{conf}\", \"-N\", \"{{node}}\"]\n"
    );
    for (k, port) in ports.iter().enumerate() {
        text.push_str(&format!(
            "\n[[partition.hosts]]\nhost = \"gpu-a\"\nnodes = \"gpu{}\"\nfirst_gpu = {}\nslurmd_host = \"localhost\"\nport = {port}\n",
            k + 1,
            k * 2
        ));
    }
    text
}

/// The pool's activity once it says every one of `needles`: an entry is written after
/// the lease or Slurm change it tells of, so it is waited for, not read at once.
fn activity_saying(cli: &Cli, needles: &[&str]) -> String {
    eventually_blocking("the activity said", Duration::from_secs(30), || {
        let activity = cli.ok(&["activity", "--pool", "train", "--limit", "200"]);
        if needles.iter().all(|needle| activity.contains(needle)) {
            Ok(activity)
        } else {
            Err(format!("{needles:?} in {activity}"))
        }
    })
}

/// The node prolog of every cluster here: it fails one launch when the test has made
/// `{dir}/fail-next-launch` (and removes it), as a node's prolog fails on a real cluster:
/// Slurm then drains the node (`Prolog error`) and holds the job.
const PROLOG: &str =
    "#!/bin/sh\nif rm {dir}/fail-next-launch 2>/dev/null; then exit 1; fi\nexit 0\n";

/// The cluster for a binding, from `ebb slurm conf` (its device files in the cluster's
/// directory, its task prolog installed there), with [`PROLOG`] as the node prolog.
pub(crate) fn cluster(cli: &Cli, tag: &str, extra: &str) -> SlurmCluster {
    let conf: serde_json::Value =
        serde_json::from_str(&cli.ok(&["slurm", "conf", "--dev-dir", "{dir}/dev", "--json"]))
            .unwrap();
    let text = |key: &str| conf[key].as_str().unwrap().to_string();
    let nodes = format!(
        "{extra}{}TaskProlog={{dir}}/ebb-task-prolog.sh\nProlog={{dir}}/prolog.sh\n",
        text("slurm_conf")
            .lines()
            .filter(|line| !line.starts_with("GresTypes"))
            .map(|line| format!("{line}\n"))
            .collect::<String>()
    );
    SlurmCluster::start(
        tag,
        SlurmSpec {
            nodes_and_partitions: nodes,
            gres_conf: text("gres_conf"),
            files: vec![
                ("ebb-task-prolog.sh".into(), text("task_prolog"), true),
                ("prolog.sh".into(), PROLOG.into(), true),
            ],
            gpu_devices: 8,
        },
    )
    .unwrap()
}

/// Each node's spool directory (`SlurmdSpoolDir={dir}/spool/%n`), which a real host's
/// package makes once and the agent's slurmd does not.
pub(crate) fn spool_dirs(slurm: &SlurmCluster) {
    for k in 1..=4 {
        std::fs::create_dir_all(slurm.dir().join(format!("spool/gpu{k}"))).unwrap();
    }
}

/// `ebb daemon` with `SLURM_CONF`: the suite's `MetricsDaemon`, which returns once the
/// daemon collects and enforces (so no other `ebb` command enforces in its place).
fn daemon(cli: &Cli, conf: &str) -> MetricsDaemon {
    let mut command = cli.command(&["daemon"]);
    command.env("SLURM_CONF", conf);
    MetricsDaemon::start(command)
}

/// The agent's leases now, from a blocking wait's probe.
fn leases_now(url: &str) -> Vec<Lease> {
    tokio::task::block_in_place(|| tokio::runtime::Handle::current().block_on(leases(url)))
}

/// An Ebb-led set-up: an 8-GPU agent `gpu-a`, the pool `train` (0 to 8 A100s) bound to
/// partition `gpu` (`binding(&ports, conf)` gives the slurm.toml), the cluster, and
/// `ebb daemon` enforcing. Dropped daemon first, then the cluster, the agent, the files.
struct EbbLed {
    _daemon: MetricsDaemon,
    slurm: SlurmCluster,
    agent: AgentProcess,
    cli: Cli,
    conf: String,
    dir: TempDir,
}

impl EbbLed {
    /// `rules`, when given, are set on the pool before the daemon starts.
    fn start(tag: &str, binding: impl Fn(&[u16], &str) -> String, rules: Option<&str>) -> Self {
        let dir = TempDir::new(&format!("slurm-{tag}"));
        let agent = a100_agent(&dir.subdir("agent"), 8);
        let data = dir.join("console");
        let cli = Cli::new(&data);
        cli.ok(&["hosts", "add", "gpu-a", &agent.url, "--region", "cn-north"]);
        cli.ok(&[
            "pool", "create", "train", "--model", "A100", "--region", "cn-north", "--min", "0",
            "--max", "8",
        ]);
        let ports = SlurmCluster::free_ports(4);
        // `ebb slurm conf` first (slurmd's config path is not known yet), then the real one.
        std::fs::write(data.join("slurm.toml"), binding(&ports, "unset")).unwrap();
        let slurm = cluster(&cli, tag, "");
        let conf = slurm.conf().to_str().unwrap().to_string();
        spool_dirs(&slurm);
        std::fs::write(data.join("slurm.toml"), binding(&ports, &conf)).unwrap();
        if let Some(rules) = rules {
            let file = dir.join("rules.toml");
            std::fs::write(&file, rules).unwrap();
            cli.ok(&["rules", "set", "train", file.to_str().unwrap(), "--yes"]);
        }
        let daemon = daemon(&cli, &conf);
        Self {
            _daemon: daemon,
            slurm,
            agent,
            cli,
            conf,
            dir,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queued_jobs_grow_the_partition_and_it_drains_back_without_killing_a_job() {
    if !slurm_or_skip() {
        return;
    }
    // Owned parts: slurmctld is killed and started again below.
    let EbbLed {
        _daemon,
        mut slurm,
        agent,
        cli,
        conf,
        dir: _dir,
    } = EbbLed::start(
        "ebb-led",
        |ports, conf| binding("ebb", ports, conf),
        Some(QUEUE_RULES),
    );

    // 20 jobs of 2 GPUs each, on an empty partition: long enough that the controller is
    // killed while some run and that the queue's last four run together.
    let out = slurm.dir().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let started = std::time::Instant::now();
    let jobs: Vec<String> = (0..20)
        .map(|_| {
            slurm
                .sbatch(&[
                    "-p",
                    "gpu",
                    "--gres=gpu:2",
                    "-o",
                    &format!("{}/%j.out", out.display()),
                    "--wrap",
                    "echo CVD=$CUDA_VISIBLE_DEVICES node=$SLURMD_NODENAME; sleep 6",
                ])
                .unwrap()
        })
        .collect();
    // The pool grows to the queue: all four nodes, each one lease of its 2 GPUs.
    let mut most = 0;
    let active = || {
        leases_now(&agent.url)
            .into_iter()
            .filter(|lease| lease.state == LeaseState::Active)
            .map(|lease| lease.id)
            .collect::<Vec<_>>()
    };
    let submitted = std::time::SystemTime::now();
    // How soon the first node is leased after the queue asks (said, for the closing
    // figures; the wait for a whole minute of queue readings is gone).
    eventually_blocking("a first node leased", Duration::from_secs(150), || {
        (!active().is_empty()).then_some(()).ok_or("no lease yet")
    });
    eprintln!(
        "first node leased {:.1} s after the first job was submitted",
        started.elapsed().as_secs_f64()
    );
    let grown = eventually_blocking(
        "the pool grown and a job running",
        Duration::from_secs(150),
        || {
            let held = active();
            let running = queue(&slurm)
                .unwrap_or_default()
                .iter()
                .any(|(_, state, _, _)| state == "RUNNING");
            (held.len() >= 2 && running)
                .then_some(held.clone())
                .ok_or(format!("{} leases, a job running: {running}", held.len()))
        },
    );

    // slurmctld killed while jobs run: the pool stands still (nothing leased or released
    // on what it cannot see) and says Slurm does not answer; back, it goes on.
    // Killed only once it has saved the queue: jobs it took after its last save would be
    // lost to the kill (Slurm's own behaviour after a crash), and the pool grows within a
    // second of the submissions now.
    eventually_blocking(
        "slurmctld's saved state holding the queue",
        Duration::from_secs(60),
        || slurm.jobs_saved_since(submitted),
    );
    slurm.kill_ctld();
    let status = cli
        .command(&["slurm", "status"])
        .env("SLURM_CONF", &conf)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&status.stdout).to_string();
    assert!(said.contains("Slurm does not answer"), "{said}");
    let mut still = active();
    still.sort();
    let mut before = grown.clone();
    before.sort();
    assert!(
        before.iter().all(|id| still.contains(id)),
        "no node given back while Slurm is away: {before:?} → {still:?}"
    );
    slurm.start_ctld().unwrap();
    // The next launch fails on its node, as a launch after a restart failed there on a job
    // the node still ran (`Duplicate jobid`): Slurm drains the node and holds the job.
    std::fs::write(slurm.dir().join("fail-next-launch"), "").unwrap();

    // What a restarted slurmctld did in a run where its state on disk lagged its
    // allocations: it started jobs again on nodes still running them, drained those nodes
    // itself ("Duplicate jobid") and requeued the jobs (held back to a begin time). Done
    // here on purpose to the queue's last jobs, so nothing else waits (the requeued jobs
    // are the whole demand), and to every node in service, so whichever nodes Ebb keeps
    // are drained ones it must bring back.
    let last = eventually_blocking(
        "the queue's last jobs running, none pending",
        Duration::from_secs(240),
        || {
            let queue = queue(&slurm)?;
            let running: Vec<(String, String)> = queue
                .iter()
                .filter(|(_, state, node, _)| state == "RUNNING" && !node.is_empty())
                .map(|(job, _, node, _)| (job.clone(), node.clone()))
                .collect();
            let pending = queue.iter().any(|(_, state, _, _)| state != "RUNNING");
            if !pending && !running.is_empty() {
                Ok(running)
            } else {
                Err(format!("{queue:?}"))
            }
        },
    );
    let in_service: Vec<String> = slurm
        .sinfo(&["--noheader", "-N", "-p", "gpu", "-o", "%N|%T"])
        .unwrap()
        .lines()
        .filter_map(|line| line.trim().split_once('|'))
        .filter(|(_, state)| ["idle", "mixed", "allocated", "completing"].contains(state))
        .map(|(node, _)| node.to_string())
        .collect();
    assert!(
        last.iter().all(|(_, node)| in_service.contains(node)),
        "{last:?} on {in_service:?}"
    );
    slurm
        .scontrol(&[
            "update",
            &format!("nodename={}", in_service.join(",")),
            "state=drain",
            "reason=Duplicate jobid",
        ])
        .unwrap();
    for (job, _) in &last {
        slurm.scontrol(&["requeue", job]).unwrap();
    }
    let states = eventually_blocking("every job done", Duration::from_secs(240), || {
        let states: Vec<String> = jobs
            .iter()
            .map(|job| slurm.job_state(job).unwrap_or_default())
            .collect();
        let done = states.iter().all(|state| {
            !matches!(
                state.as_str(),
                "PENDING" | "RUNNING" | "CONFIGURING" | "COMPLETING" | ""
            )
        });
        if done {
            Ok(states)
        } else {
            Err(format!("{states:?}"))
        }
    });
    let took = started.elapsed();
    assert!(
        states.iter().all(|state| state == "COMPLETED"),
        "no job failed or was killed: {states:?}"
    );
    // Every job saw exactly the GPUs its node's lease holds on the host.
    let expected: BTreeMap<&str, &str> = [
        ("gpu1", "0,1"),
        ("gpu2", "2,3"),
        ("gpu3", "4,5"),
        ("gpu4", "6,7"),
    ]
    .into();
    let mut nodes_used = std::collections::BTreeSet::new();
    for job in &jobs {
        let said = std::fs::read_to_string(out.join(format!("{job}.out"))).unwrap();
        let said = said.trim();
        let (cvd, node) = said
            .strip_prefix("CVD=")
            .and_then(|rest| rest.split_once(" node="))
            .unwrap_or_else(|| panic!("job {job} said {said:?}"));
        assert_eq!(
            Some(&cvd),
            expected.get(node),
            "job {job} on {node}: {said}"
        );
        nodes_used.insert(node.to_string());
    }
    assert!(
        nodes_used.len() >= 2,
        "the partition grew past one node: {nodes_used:?}"
    );

    // The queue empty, the nodes go back to the pool's min (0): every lease released.
    eventually_blocking("every node released", Duration::from_secs(120), || {
        let all = leases_now(&agent.url);
        let active: Vec<_> = all
            .iter()
            .filter(|lease| lease.state != LeaseState::Released)
            .map(|lease| (lease.id.clone(), lease.gpu_indexes.clone()))
            .collect();
        if active.is_empty() {
            Ok(())
        } else {
            Err(format!("{active:?}"))
        }
    });
    // Never a GPU in two leases, every lease a whole node with its slurmd.
    let all = leases(&agent.url).await;
    for lease in &all {
        assert_eq!(lease.gpu_indexes.len(), 2, "{lease:?}");
        let command = lease.command.clone().unwrap_or_default();
        assert!(
            command.iter().any(|arg| arg.starts_with("gpu")),
            "{command:?}"
        );
        most = most.max(all.len());
    }
    // The job Slurm held after its failed launch was let run again, its node resumed (and
    // any job the restart itself made fail to launch: Slurm holds those too); the nodes
    // kept for the requeued jobs were brought back, each saying why.
    assert!(
        !slurm.dir().join("fail-next-launch").exists(),
        "a launch failed"
    );
    activity_saying(
        &cli,
        &[
            "resumed",
            "released",
            "Slurm held after a failed launch let run again",
            "(Prolog error)",
            "taken out of service by Slurm (Duplicate jobid) and still wanted: resumed",
        ],
    );
    eprintln!(
        "20 jobs x 2 GPUs done in {:.1} s on {} nodes ({} leases in all)",
        took.as_secs_f64(),
        nodes_used.len(),
        most
    );
}

/// Slurm's power saving drives the pool: `ebb slurm resume|suspend` as its
/// ResumeProgram and SuspendProgram. A suspended node's lease is parked (its paid hour
/// runs on) and a job within the hour reuses it with no new lease; a node Ebb cannot
/// serve is marked down with the reason at once; a hostlist naming nodes of no pool
/// changes nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slurm_resumes_and_suspends_through_ebb_and_a_parked_node_is_reused() {
    if !slurm_or_skip() {
        return;
    }
    let dir = TempDir::new("slurm-led");
    let agent = a100_agent(&dir.subdir("agent"), 8);
    let data = dir.join("console");
    let cli = Cli::new(&data);
    cli.ok(&["hosts", "add", "gpu-a", &agent.url, "--region", "cn-north"]);
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
        "8",
        "--release-at-unit-end",
    ]);
    let ports = SlurmCluster::free_ports(4);
    std::fs::write(data.join("slurm.toml"), binding("slurm", &ports, "unset")).unwrap();
    // slurmctld runs the programs with SLURM_CONF set and little else.
    let ebb = ebb_testkit::workspace_bin("ebb");
    let program = |verb: &str| {
        format!(
            "#!/bin/sh\necho \"$(date +%T.%N) {verb} $1\" >> {{dir}}/log/power.log\nexec {} --data-dir {} --token-store file slurm {verb} \"$1\" >> {{dir}}/log/power.log 2>&1\n",
            ebb.display(),
            data.display()
        )
    };
    let power = "ResumeProgram={dir}/resume.sh\nSuspendProgram={dir}/suspend.sh\n\
                 SuspendTime=10\nSuspendTimeout=10\nResumeTimeout=90\n";
    let conf: serde_json::Value =
        serde_json::from_str(&cli.ok(&["slurm", "conf", "--dev-dir", "{dir}/dev", "--json"]))
            .unwrap();
    let text = |key: &str| conf[key].as_str().unwrap().to_string();
    assert!(
        text("slurm_conf").contains("State=CLOUD"),
        "{}",
        text("slurm_conf")
    );
    let nodes: String = text("slurm_conf")
        .lines()
        .filter(|line| !line.starts_with("GresTypes"))
        .map(|line| format!("{line}\n"))
        .collect();
    let slurm = SlurmCluster::start(
        "slurm-led",
        SlurmSpec {
            nodes_and_partitions: format!("{power}{nodes}TaskProlog={{dir}}/ebb-task-prolog.sh\n"),
            gres_conf: text("gres_conf"),
            files: vec![
                ("ebb-task-prolog.sh".into(), text("task_prolog"), true),
                ("resume.sh".into(), program("resume"), true),
                ("suspend.sh".into(), program("suspend"), true),
            ],
            gpu_devices: 8,
        },
    )
    .unwrap();
    let conf_path = slurm.conf().to_str().unwrap().to_string();
    spool_dirs(&slurm);
    std::fs::write(
        data.join("slurm.toml"),
        binding("slurm", &ports, &conf_path),
    )
    .unwrap();
    let _daemon = daemon(&cli, &conf_path);
    let slurm_cli = |args: &[&str]| {
        cli.command(args)
            .env("SLURM_CONF", &conf_path)
            .output()
            .unwrap()
    };

    // A hostlist naming nodes of no pool: refused whole (exit 2), nothing leased.
    let refused = slurm_cli(&["slurm", "resume", "cpu[1-2],gpu1"]);
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    let said = String::from_utf8_lossy(&refused.stderr).to_string();
    assert!(
        said.contains("nodes cpu[1-2] in no pool's partition"),
        "{said}"
    );
    assert!(leases(&agent.url).await.is_empty());

    let out = slurm.dir().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let submit = || {
        slurm
            .sbatch(&[
                "-p",
                "gpu",
                "--gres=gpu:2",
                "-o",
                &format!("{}/%j.out", out.display()),
                "--wrap",
                "echo CVD=$CUDA_VISIBLE_DEVICES node=$SLURMD_NODENAME",
            ])
            .unwrap()
    };
    let finished = |job: &str, within: u64| {
        let state = eventually_blocking(
            &format!("job {job} done"),
            Duration::from_secs(within),
            || {
                let state = slurm.job_state(job).unwrap_or_default();
                if matches!(
                    state.as_str(),
                    "COMPLETED" | "FAILED" | "CANCELLED" | "NODE_FAIL" | "TIMEOUT"
                ) {
                    Ok(state)
                } else {
                    Err(state)
                }
            },
        );
        assert_eq!(state, "COMPLETED", "job {job}");
        std::fs::read_to_string(out.join(format!("{job}.out"))).unwrap()
    };

    // Slurm resumes gpu1 for the first job: Ebb leases its GPUs 0 and 1.
    let started = std::time::Instant::now();
    let first = submit();
    let said = finished(&first, 150);
    assert_eq!(said.trim(), "CVD=0,1 node=gpu1", "{said}");
    let resumed_in = started.elapsed();
    let first_leases = leases(&agent.url).await;
    assert_eq!(first_leases.len(), 1, "{first_leases:?}");

    // Idle past SuspendTime: Slurm suspends it, Ebb parks the lease (its hour is paid).
    eventually_blocking("gpu1 parked", Duration::from_secs(90), || {
        let activity = cli.ok(&["activity", "--pool", "train"]);
        activity
            .contains("gpu1 parked")
            .then_some(())
            .ok_or(activity)
    });
    // Powered down once SuspendTimeout has passed (until then Slurm would resume another).
    eventually_blocking("gpu1 powered down", Duration::from_secs(60), || {
        let state = slurm.node_state("gpu1").unwrap_or_default();
        (state == "idle~").then_some(()).ok_or(state)
    });
    let parked = leases(&agent.url).await;
    assert_eq!(parked.len(), 1);
    assert_eq!(
        parked[0].state,
        LeaseState::Active,
        "kept while parked: {parked:?}"
    );

    // A job within the hour: the parked GPUs again, no new lease.
    let again = std::time::Instant::now();
    let second = submit();
    let said = finished(&second, 150);
    assert_eq!(said.trim(), "CVD=0,1 node=gpu1", "{said}");
    let reused_in = again.elapsed();
    let after = leases(&agent.url).await;
    assert_eq!(after.len(), 1, "no new lease: {after:?}");
    assert_eq!(after[0].id, first_leases[0].id);

    // Another tenant holds gpu2's GPUs: Ebb cannot serve gpu2, and says so at once.
    let other = crate::http()
        .post(format!("{}/v1/leases", agent.url))
        .header("Idempotency-Key", "another-tenant-1")
        .json(&ebb_wire::agent::LeaseRequest::count(
            "theirs",
            "another-console",
            2,
        ))
        .send()
        .await
        .unwrap();
    assert!(other.status().is_success(), "{other:?}");
    let unserved = slurm_cli(&["slurm", "resume", "gpu2"]);
    assert_eq!(unserved.status.code(), Some(1), "{unserved:?}");
    let said = String::from_utf8_lossy(&unserved.stdout).to_string();
    assert!(said.contains("gpu2: not served"), "{said}");
    let reason = slurm
        .sinfo(&["-h", "-N", "-a", "-n", "gpu2", "-o", "%T|%E"])
        .unwrap();
    assert!(
        reason.contains("down") && reason.contains("ebb:"),
        "{reason}"
    );
    let activity = cli.ok(&["activity", "--pool", "train"]);
    assert!(activity.contains("cannot resume gpu2"), "{activity}");
    eprintln!(
        "Slurm-led: first job done {:.1} s after submit (resume, lease, slurmd), the parked node's job {:.1} s",
        resumed_in.as_secs_f64(),
        reused_in.as_secs_f64()
    );
}

/// Scale-in never kills a job: with a job running on one node and the other idle, a scale
/// to 0 gives the idle node back at once, drains the busy one (no new job lands there),
/// and gives it back only when its job has ended.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scale_in_gives_idle_nodes_back_first_and_drains_a_busy_one_until_its_job_ends() {
    if !slurm_or_skip() {
        return;
    }
    let setup = EbbLed::start("drain", |ports, conf| binding("ebb", ports, conf), None);
    let (agent, cli, slurm) = (&setup.agent, &setup.cli, &setup.slurm);

    // Two nodes by the slider.
    cli.ok(&["pool", "scale", "train", "4", "--yes"]);
    for node in ["gpu1", "gpu2"] {
        eventually_blocking(&format!("{node} idle"), Duration::from_secs(60), || {
            let state = slurm.node_state(node).unwrap_or_default();
            (state == "idle").then_some(()).ok_or(state)
        });
    }
    // A long job on one of them.
    let out = slurm.dir().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let job = slurm
        .sbatch(&[
            "-p",
            "gpu",
            "--gres=gpu:2",
            "-o",
            &format!("{}/%j.out", out.display()),
            "--wrap",
            "sleep 15; echo done",
        ])
        .unwrap();
    let busy = eventually_blocking("the long job running", Duration::from_secs(60), || {
        let node = slurm
            .squeue(&["-h", "-j", &job, "-t", "R", "-o", "%N"])
            .unwrap_or_default();
        let node = node.trim().to_string();
        (!node.is_empty()).then_some(node).ok_or("not running yet")
    });
    let idle = if busy == "gpu1" { "gpu2" } else { "gpu1" };

    // Scale to 0: the idle node goes now, the busy one drains.
    cli.ok(&["pool", "scale", "train", "0", "--yes"]);
    eventually_blocking("the idle node given back", Duration::from_secs(30), || {
        let state = slurm.node_state(idle).unwrap_or_default();
        state.starts_with("down").then_some(()).ok_or(state)
    });
    let state = slurm.node_state(&busy).unwrap();
    assert!(
        state.starts_with("drain") || state == "mixed" || state == "allocated",
        "{state}"
    );
    let draining = eventually_blocking("the busy node draining", Duration::from_secs(30), || {
        let state = slurm.node_state(&busy).unwrap_or_default();
        state
            .starts_with("drain")
            .then_some(state.clone())
            .ok_or(state)
    });
    assert_eq!(
        slurm.job_state(&job).unwrap(),
        "RUNNING",
        "drained, not killed ({draining})"
    );
    let held: Vec<_> = leases(&agent.url)
        .await
        .into_iter()
        .filter(|lease| lease.state == LeaseState::Active)
        .collect();
    assert_eq!(held.len(), 1, "the busy node's lease kept: {held:?}");

    // The job ends on its own; then its node goes back.
    eventually_blocking("the long job done", Duration::from_secs(60), || {
        let state = slurm.job_state(&job).unwrap_or_default();
        (state == "COMPLETED").then_some(()).ok_or(state)
    });
    eventually_blocking("the busy node given back", Duration::from_secs(30), || {
        let all = leases_now(&agent.url);
        all.iter()
            .all(|lease| lease.state == LeaseState::Released)
            .then_some(())
            .ok_or(format!("{all:?}"))
    });
    let said = std::fs::read_to_string(out.join(format!("{job}.out"))).unwrap();
    assert_eq!(said.trim(), "done");
    activity_saying(
        cli,
        &[
            &format!("{busy} draining for scale-in"),
            &format!("{idle} released"),
            &format!("{busy} released"),
        ],
    );
}

/// A disruption budget of 2 GPUs per 10 minutes holds while the pool is asked to go from
/// 8 GPUs to 0: one node goes back, the other three stay until the window has passed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disruption_budget_holds_while_the_pool_is_asked_for_minus_8() {
    if !slurm_or_skip() {
        return;
    }
    let with_budget = |ports: &[u16], conf: &str| {
        let text = binding("ebb", ports, conf);
        // The budget table belongs to the partition, before its hosts.
        let at = text.find("\n[[partition.hosts]]").unwrap();
        let budget = "\n[partition.budget]\ngpus = 2\nwindow_minutes = 10\n";
        format!("{}{budget}{}", &text[..at], &text[at..])
    };
    let setup = EbbLed::start("budget", with_budget, None);
    let (agent, cli, slurm) = (&setup.agent, &setup.cli, &setup.slurm);

    // How long from the count set to each node usable by Slurm (its GPUs leased, its
    // slurmd up and registered): the Ebb-led path once the pool has decided.
    let asked = std::time::Instant::now();
    cli.ok(&["pool", "scale", "train", "8", "--yes"]);
    let mut usable = Vec::new();
    let mut up = std::collections::BTreeSet::new();
    eventually_blocking("every node idle", Duration::from_secs(60), || {
        for k in 1..=4 {
            let node = format!("gpu{k}");
            if !up.contains(&node) && slurm.node_state(&node).unwrap_or_default() == "idle" {
                usable.push(asked.elapsed().as_secs_f64());
                up.insert(node);
            }
        }
        (up.len() == 4).then_some(()).ok_or(format!("{up:?}"))
    });
    usable.sort_by(f64::total_cmp);
    eprintln!(
        "count set → node usable by Slurm, 4 nodes: p50 {:.2} s, max {:.2} s",
        usable[1], usable[3]
    );
    cli.ok(&["pool", "scale", "train", "0", "--yes"]);
    let active = || {
        leases_now(&agent.url)
            .into_iter()
            .filter(|lease| lease.state != LeaseState::Released)
            .count()
    };
    eventually_blocking("one node given back", Duration::from_secs(30), || {
        let left = active();
        (left == 3).then_some(()).ok_or(left)
    });
    // Many passes later, still three: the budget holds.
    let activity_before = cli.ok(&["activity", "--pool", "train"]);
    for _ in 0..5 {
        let report = cli.ok(&["pool", "show", "train"]);
        assert!(active() == 3, "{report}");
        std::thread::sleep(Duration::from_secs(1));
    }
    assert_eq!(
        activity_before.matches(" released (").count(),
        1,
        "{activity_before}"
    );
}

/// The drain's cost cap: a job still running on a draining node when the cap (1 minute
/// here) is reached is requeued, never killed for good; it runs again once the pool
/// grows, and a job that keeps a checkpoint goes on from it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drain_past_its_cost_cap_requeues_the_job_and_it_runs_again() {
    if !slurm_or_skip() {
        return;
    }
    let capped = |ports: &[u16], conf: &str| {
        binding("ebb", ports, conf).replace(
            "gpus_per_node = 2\n",
            "gpus_per_node = 2\ndrain_max_minutes = 1\n",
        )
    };
    let setup = EbbLed::start("cap", capped, None);
    let (agent, cli, slurm) = (&setup.agent, &setup.cli, &setup.slurm);

    cli.ok(&["pool", "scale", "train", "2", "--yes"]);
    eventually_blocking("gpu1 idle", Duration::from_secs(60), || {
        let state = slurm.node_state("gpu1").unwrap_or_default();
        (state == "idle").then_some(()).ok_or(state)
    });
    // A job that keeps a checkpoint: each run goes on from the last step it saved.
    let work = slurm.dir().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let script = format!(
        "f={}/step; n=$(cat $f 2>/dev/null || echo 0); echo run from $n >> {}/runs; \
         while [ $n -lt 90 ]; do n=$((n+1)); echo $n > $f; sleep 1; done; echo done >> {}/runs",
        work.display(),
        work.display(),
        work.display()
    );
    let job = slurm
        .sbatch(&[
            "-p",
            "gpu",
            "--gres=gpu:2",
            "-o",
            "/dev/null",
            "--wrap",
            &script,
        ])
        .unwrap();
    eventually_blocking("the job running", Duration::from_secs(60), || {
        let state = slurm.job_state(&job).unwrap_or_default();
        (state == "RUNNING").then_some(()).ok_or(state)
    });
    // Scale to 0: the busy node drains; a minute later its job is requeued and it goes.
    cli.ok(&["pool", "scale", "train", "0", "--yes"]);
    eventually_blocking("the node given back", Duration::from_secs(120), || {
        let all = leases_now(&agent.url);
        all.iter()
            .all(|lease| lease.state == LeaseState::Released)
            .then_some(())
            .ok_or(format!("{all:?}"))
    });
    let state = slurm.job_state(&job).unwrap();
    assert_eq!(state, "PENDING", "requeued, not ended");
    let activity = cli.ok(&["activity", "--pool", "train"]);
    assert!(activity.contains("gpu1 requeued 1 job"), "{activity}");
    // The pool grows again: the job runs again and finishes from its checkpoint.
    cli.ok(&["pool", "scale", "train", "2", "--yes"]);
    eventually_blocking("the job done", Duration::from_secs(120), || {
        let state = slurm.job_state(&job).unwrap_or_default();
        (state == "COMPLETED").then_some(()).ok_or(state)
    });
    let runs = std::fs::read_to_string(work.join("runs")).unwrap();
    let lines: Vec<&str> = runs.lines().collect();
    assert_eq!(lines.first(), Some(&"run from 0"), "{runs}");
    assert!(lines.len() >= 3, "ran again: {runs}");
    assert_ne!(
        lines[1], "run from 0",
        "went on from its checkpoint: {runs}"
    );
    assert_eq!(lines.last(), Some(&"done"), "{runs}");
}
