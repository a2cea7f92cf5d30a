//! `ebb slurm ...`: pools bound to Slurm partitions (`slurm.toml` in the data directory).
//! `resume` and `suspend` are what slurm.conf's ResumeProgram and SuspendProgram run;
//! `status` shows each bound partition; `conf` prints the Slurm configuration lines the
//! binding implies.

use crate::pools::open;
use clap::Subcommand;
use ebb_core::console::{Console, TokenStore};
use ebb_core::console_slurm::NodeOutcome;
use ebb_wire::slurm::SlurmPoolView;
use std::fmt::Write as _;
use std::path::Path;

#[derive(Debug, Clone, Subcommand)]
pub enum SlurmCommand {
    /// Slurm's ResumeProgram: lease each node's GPUs and start its slurmd on them now. A
    /// node Ebb cannot serve is marked down in Slurm with the reason.
    Resume {
        /// Slurm's hostlist, e.g. gpu[1-4,7].
        hostlist: String,
    },
    /// Slurm's SuspendProgram: park each node's lease to the end of its paid unit (reused
    /// at once by a resume before then), or release it now.
    Suspend {
        /// Slurm's hostlist, e.g. gpu[1-4,7].
        hostlist: String,
    },
    /// Each bound partition: its queue metrics, its nodes and the leases behind them.
    Status,
    /// The slurm.conf, gres.conf and TaskProlog lines for the data directory's slurm.toml.
    Conf {
        /// Where the GPU device files are on the GPU hosts.
        #[arg(long, default_value = "/dev", value_name = "DIR")]
        dev_dir: String,
    },
}

pub async fn run(
    command: SlurmCommand,
    data_dir: &Path,
    store: TokenStore,
    json: bool,
) -> anyhow::Result<()> {
    if let SlurmCommand::Conf { dev_dir } = &command {
        return conf(data_dir, dev_dir, json);
    }
    let console = open(data_dir, store, false).await?;
    let result = run_with(&console, command, json).await;
    console.shutdown().await;
    result
}

async fn run_with(console: &Console, command: SlurmCommand, json: bool) -> anyhow::Result<()> {
    match command {
        SlurmCommand::Resume { hostlist } => nodes(console.slurm_resume(&hostlist).await?, json),
        SlurmCommand::Suspend { hostlist } => nodes(console.slurm_suspend(&hostlist).await?, json),
        SlurmCommand::Status => {
            let status = console.slurm_status().await?;
            if json {
                let value: Vec<_> = status
                    .iter()
                    .map(|(pool, view)| serde_json::json!({"pool": pool, "slurm": view}))
                    .collect();
                println!("{}", serde_json::to_string_pretty(&value)?);
            } else {
                print!("{}", status_words(&status));
            }
            Ok(())
        }
        SlurmCommand::Conf { .. } => unreachable!("answered before the console opens"),
    }
}

/// Each node's outcome; fails (exit 1) when a node could not be served.
fn nodes(outcomes: Vec<NodeOutcome>, json: bool) -> anyhow::Result<()> {
    if json {
        let value: Vec<_> = outcomes
            .iter()
            .map(|outcome| match &outcome.result {
                Ok(done) => serde_json::json!({"node": outcome.node, "done": done}),
                Err(error) => serde_json::json!({"node": outcome.node, "error": error}),
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        for outcome in &outcomes {
            match &outcome.result {
                Ok(done) => println!("{}: {done}", outcome.node),
                Err(error) => println!("{}: not served: {error}", outcome.node),
            }
        }
    }
    let failed: Vec<&str> = outcomes
        .iter()
        .filter(|outcome| outcome.result.is_err())
        .map(|outcome| outcome.node.as_str())
        .collect();
    if failed.is_empty() {
        Ok(())
    } else {
        anyhow::bail!("{} not served", ebb_slurm::hostlist::compress(&failed))
    }
}

fn conf(data_dir: &Path, dev_dir: &str, json: bool) -> anyhow::Result<()> {
    let binding = ebb_core::slurm::binder::load_binding(data_dir)
        .map_err(anyhow::Error::msg)?
        .ok_or_else(|| anyhow::anyhow!("no slurm.toml in {}", data_dir.display()))?;
    let files = ebb_slurm::conf::render(
        &binding,
        &ebb_slurm::conf::ConfOptions {
            dev_dir: dev_dir.to_string(),
        },
    );
    if json {
        let value = serde_json::json!({
            "slurm_conf": files.slurm_conf,
            "gres_conf": files.gres_conf,
            "task_prolog": files.task_prolog,
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        println!("# --- slurm.conf (add these lines) ---");
        print!("{}", files.slurm_conf);
        println!("# --- gres.conf ---");
        print!("{}", files.gres_conf);
        println!("# --- the TaskProlog script ---");
        print!("{}", files.task_prolog);
    }
    Ok(())
}

fn status_words(status: &[(String, SlurmPoolView)]) -> String {
    let mut out = String::new();
    for (pool, view) in status {
        let _ = writeln!(
            out,
            "partition {} → pool {pool} ({}-led, {} GPUs a node)",
            view.partition,
            match view.mode {
                ebb_wire::slurm::SlurmMode::Ebb => "Ebb",
                ebb_wire::slurm::SlurmMode::Slurm => "Slurm",
            },
            view.gpus_per_node
        );
        match (&view.queue, &view.unreachable) {
            (Some(queue), _) => {
                let _ = writeln!(
                    out,
                    "  queue: {} GPUs pending ({} jobs), {} allocated, oldest wait {}",
                    queue.pending_gpus,
                    queue.pending_jobs,
                    queue.allocated_gpus,
                    queue
                        .oldest_wait_s
                        .map_or("-".to_string(), |s| format!("{s} s"))
                );
            }
            (None, problem) => {
                let _ = writeln!(
                    out,
                    "  Slurm does not answer: {}",
                    problem.as_deref().unwrap_or("no reason given")
                );
            }
        }
        for node in &view.nodes {
            let _ = writeln!(
                out,
                "  {:<12} {:<10} {:<14} GPUs {:?} on {}{}{}",
                node.name,
                node.state_text,
                node.lease_id.as_deref().unwrap_or("no lease"),
                node.gpu_indexes,
                node.host,
                if node.jobs.is_empty() {
                    String::new()
                } else {
                    format!(", jobs {}", node.jobs.join(" "))
                },
                node.reason
                    .as_deref()
                    .map_or(String::new(), |reason| format!(" ({reason})"))
            );
        }
    }
    out
}
