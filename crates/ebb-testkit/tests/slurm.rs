//! The Slurm test cluster against the machine's real Slurm: a GPU job on one of two nodes,
//! then a controller killed and started again. Fails when Slurm is missing, unless
//! `EBB_SLURM_OPTIONAL=1` (then it says why it skipped).

use ebb_testkit::{SlurmCluster, SlurmSpec, eventually_blocking};
use std::path::Path;
use std::time::Duration;

fn slurm_or_skip() -> bool {
    match SlurmCluster::available() {
        Ok(()) => true,
        Err(missing) if std::env::var("EBB_SLURM_OPTIONAL").as_deref() == Ok("1") => {
            eprintln!("skipped (EBB_SLURM_OPTIONAL=1): {missing}");
            false
        }
        Err(missing) => panic!("{missing} (EBB_SLURM_OPTIONAL=1 skips the Slurm tests)"),
    }
}

/// Whether `pid` is gone (or a zombie: this machine's init may never reap it).
fn gone(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
        stat.rsplit_once(')')
            .and_then(|(_, rest)| rest.trim_start().chars().next())
            .is_some_and(|state| state == 'Z' || state == 'X')
    })
}

fn pid_in(path: &Path) -> u32 {
    std::fs::read_to_string(path)
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()))
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn a_gpu_job_runs_on_the_one_started_node_and_the_controller_comes_back() {
    if !slurm_or_skip() {
        return;
    }
    let ports = SlurmCluster::free_ports(2);
    let node = |name: &str, port: u16| {
        format!(
            "NodeName={name} NodeHostname=localhost Port={port} CPUs=1 RealMemory=100 Gres=gpu:2\n"
        )
    };
    let spec = SlurmSpec {
        nodes_and_partitions: node("n1", ports[0])
            + &node("n2", ports[1])
            + "PartitionName=gpu Nodes=n[1-2] Default=YES MaxTime=INFINITE State=UP\n\
               TaskProlog={dir}/bin/prolog.sh\n",
        gres_conf: "AutoDetect=off\n\
                    NodeName=n1 Name=gpu File={dir}/dev/nvidia[0-1]\n\
                    NodeName=n2 Name=gpu File={dir}/dev/nvidia[2-3]\n"
            .into(),
        files: vec![(
            "bin/prolog.sh".into(),
            "#!/bin/sh\necho export EBB_PROLOG_DIR={dir}\n".into(),
            true,
        )],
        gpu_devices: 4,
    };
    let mut cluster = SlurmCluster::start("harness", spec).unwrap();
    let dir = cluster.dir().to_path_buf();
    assert_eq!(
        cluster.env(),
        vec![(
            "SLURM_CONF".to_string(),
            dir.join("slurm.conf").display().to_string()
        )]
    );
    cluster.start_slurmd("n2").unwrap();

    let out = format!("{}/out-%j", dir.display());
    let job = cluster
        .sbatch(&[
            "-p",
            "gpu",
            "--gres=gpu:2",
            "-o",
            &out,
            "--wrap",
            "echo CVD=$CUDA_VISIBLE_DEVICES; echo PROLOG=$EBB_PROLOG_DIR",
        ])
        .unwrap();
    eventually_blocking("the job to complete", Duration::from_secs(20), || {
        cluster.job_state(&job).and_then(|state| {
            if state == "COMPLETED" {
                Ok(())
            } else {
                Err(state)
            }
        })
    });
    let output = std::fs::read_to_string(dir.join(format!("out-{job}"))).unwrap();
    let lines: Vec<&str> = output.lines().collect();
    // Slurm numbers a job's GPUs from 0 on each node: n2's nvidia2 and nvidia3 are 0,1.
    assert_eq!(lines[0], "CVD=0,1", "{output}");
    assert_eq!(lines[1], format!("PROLOG={}", dir.display()), "{output}");
    eventually_blocking("n2 idle", Duration::from_secs(10), || {
        cluster.node_state("n2").map(|state| state == "idle")
    });
    let n1 = cluster.node_state("n1").unwrap();
    assert!(n1.starts_with("unknown") || n1.starts_with("down"), "{n1}");

    let killed = pid_in(&dir.join("ctld.pid"));
    cluster.kill_ctld();
    assert!(gone(killed), "slurmctld {killed} still runs");
    cluster.start_ctld().unwrap();
    let nodes = cluster.sinfo(&["-h", "-N", "-o", "%N"]).unwrap();
    assert_eq!(nodes.split_whitespace().collect::<Vec<_>>(), ["n1", "n2"]);
    eventually_blocking("n2 idle after the restart", Duration::from_secs(15), || {
        cluster.node_state("n2").map(|state| state == "idle")
    });

    // Dropped: every daemon it started, by pid, and its directory.
    let pids = [
        pid_in(&dir.join("ctld.pid")),
        pid_in(&dir.join("slurmd-n2.pid")),
        pid_in(&dir.join("munge/munged.pid")),
    ];
    drop(cluster);
    for pid in pids {
        assert!(gone(pid), "pid {pid} still runs");
    }
    if std::env::var_os("EBB_KEEP_TEST_DIRS").is_none() {
        assert!(!dir.exists());
    }
}
