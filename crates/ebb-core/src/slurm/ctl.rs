//! Slurm's commands, run with a timeout: what a partition holds (`squeue`, `sinfo`) and
//! the node changes the binder makes (`scontrol update`, `scontrol requeue`).
//!
//! Every command gets the process's `SLURM_CONF` (or the one given), runs at most
//! `timeout`, and is killed when it runs over; its failure is a [`SlurmError`] naming the
//! command and what went wrong, never a panic. The text is read by `ebb_slurm::queue`.

use ebb_slurm::drain::RunningJob;
use ebb_slurm::queue::{self, NodeInfo, QueueMetrics, QueuedJob};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;
use tokio::process::Command;

pub use ebb_slurm::error::SlurmError;

/// How to reach Slurm's commands.
#[derive(Debug, Clone)]
pub struct SlurmCtl {
    /// `SLURM_CONF` for every command; `None` keeps the process's own.
    pub conf: Option<PathBuf>,
    /// The longest a command may run.
    pub timeout: Duration,
    /// The controller's offset from UTC in minutes (squeue prints local times).
    pub utc_offset_minutes: i32,
}

impl Default for SlurmCtl {
    fn default() -> Self {
        Self {
            conf: None,
            timeout: Duration::from_secs(5),
            utc_offset_minutes: 0,
        }
    }
}

/// A partition at one look: its jobs, its nodes, the jobs on each node, its queue metrics.
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionView {
    pub jobs: Vec<QueuedJob>,
    pub nodes: Vec<NodeInfo>,
    /// Running (or completing, configuring) jobs by node name.
    pub running: BTreeMap<String, Vec<RunningJob>>,
    pub metrics: QueueMetrics,
}

impl PartitionView {
    pub fn node(&self, name: &str) -> Option<&NodeInfo> {
        self.nodes.iter().find(|node| node.name == name)
    }
}

impl SlurmCtl {
    /// Runs `program args`, its standard output on success.
    pub async fn run(&self, program: &str, args: &[&str]) -> Result<String, SlurmError> {
        let mut command = Command::new(program);
        command
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(conf) = &self.conf {
            command.env("SLURM_CONF", conf);
        }
        let child = command.spawn().map_err(|error| match error.kind() {
            std::io::ErrorKind::NotFound => SlurmError::Missing {
                program: program.to_string(),
            },
            _ => SlurmError::Failed {
                program: program.to_string(),
                message: error.to_string(),
            },
        })?;
        let output = tokio::time::timeout(self.timeout, child.wait_with_output())
            .await
            .map_err(|_| SlurmError::Timeout {
                program: program.to_string(),
                after_s: self.timeout.as_secs().max(1),
            })?
            .map_err(|error| SlurmError::Failed {
                program: program.to_string(),
                message: error.to_string(),
            })?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let message = stderr
                .lines()
                .map(str::trim)
                .rfind(|line| !line.is_empty())
                .unwrap_or("no message")
                .to_string();
            return Err(SlurmError::Failed {
                program: program.to_string(),
                message: format!("{} ({message})", output.status),
            });
        }
        String::from_utf8(output.stdout).map_err(|_| SlurmError::Malformed {
            program: program.to_string(),
            message: "not UTF-8".into(),
        })
    }

    /// The partition's jobs, nodes and queue metrics at `now_ms`. A partition Slurm does
    /// not know is [`SlurmError::NoPartition`].
    pub async fn partition(&self, name: &str, now_ms: i64) -> Result<PartitionView, SlurmError> {
        // `--all` shows the powered-down cloud nodes too (hidden otherwise); it cannot be
        // given with `-p`, so the partition's lines are picked here.
        let nodes_text = self
            .run(
                "sinfo",
                &["--noheader", "--all", "-N", "--format=%N|%P|%T|%G|%E"],
            )
            .await?;
        let mut nodes = queue::parse_sinfo(&nodes_text).map_err(|error| SlurmError::Malformed {
            program: "sinfo".into(),
            message: error.to_string(),
        })?;
        nodes.retain(|node| node.partition == name);
        if nodes.is_empty() {
            // sinfo answers nothing, not an error, for a partition it does not have.
            let known = self
                .run("scontrol", &["show", "partition", name, "--oneliner"])
                .await;
            if known.is_err() {
                return Err(SlurmError::NoPartition { name: name.into() });
            }
        }
        let jobs_text = self
            .run(
                "squeue",
                &[
                    "--noheader",
                    "--array",
                    "-p",
                    name,
                    "--format=%i|%P|%T|%r|%b|%V|%D|%S",
                ],
            )
            .await?;
        let jobs = queue::parse_squeue(&jobs_text, self.utc_offset_minutes).map_err(|error| {
            SlurmError::Malformed {
                program: "squeue".into(),
                message: error.to_string(),
            }
        })?;
        let running_text = self
            .run(
                "squeue",
                &[
                    "--noheader",
                    "-p",
                    name,
                    "-t",
                    "RUNNING,COMPLETING,CONFIGURING",
                    "-O",
                    "JobID:|,NodeList:|,EndTime:|,Requeue:|",
                ],
            )
            .await?;
        let running = parse_running(&running_text, self.utc_offset_minutes)?;
        let metrics = QueueMetrics::of(&jobs, name, now_ms);
        Ok(PartitionView {
            jobs,
            nodes,
            running,
            metrics,
        })
    }

    /// `scontrol update nodename=… state=… [reason=…]`.
    pub async fn set_state(
        &self,
        nodes: &[String],
        state: &str,
        reason: Option<&str>,
    ) -> Result<(), SlurmError> {
        if nodes.is_empty() {
            return Ok(());
        }
        let names = format!("nodename={}", ebb_slurm::hostlist::compress(nodes));
        let state = format!("state={state}");
        let reason = reason.map(|reason| format!("reason={reason}"));
        let mut args = vec!["update", names.as_str(), state.as_str()];
        if let Some(reason) = &reason {
            args.push(reason);
        }
        self.run("scontrol", &args).await.map(|_| ())
    }

    /// `scontrol requeue JOB`: the job goes back to the queue and runs again.
    pub async fn requeue(&self, job_id: &str) -> Result<(), SlurmError> {
        self.run("scontrol", &["requeue", job_id]).await.map(|_| ())
    }

    /// `scancel JOB`: the job ends (only under `force`, for a job that cannot be requeued).
    pub async fn cancel(&self, job_id: &str) -> Result<(), SlurmError> {
        self.run("scancel", &[job_id]).await.map(|_| ())
    }

    /// `scontrol update jobid=JOB starttime=now`: Slurm holds a requeued job back for two
    /// minutes (`BeginTime`, set once it is pending again); a job Ebb requeued to give its
    /// node back did not fail, so it may start again at once wherever there is room.
    pub async fn start_now(&self, job_id: &str) -> Result<(), SlurmError> {
        let job = format!("jobid={job_id}");
        self.run("scontrol", &["update", &job, "starttime=now"])
            .await
            .map(|_| ())
    }
}

impl SlurmCtl {
    /// `scontrol release JOB`: a job Slurm held (after its launch failed) may start again.
    pub async fn release_job(&self, job_id: &str) -> Result<(), SlurmError> {
        self.run("scontrol", &["release", job_id]).await.map(|_| ())
    }
}

/// `squeue -O JobID:|,NodeList:|,EndTime:|,Requeue:|` into each node's running jobs.
fn parse_running(
    text: &str,
    utc_offset_minutes: i32,
) -> Result<BTreeMap<String, Vec<RunningJob>>, SlurmError> {
    let malformed = |line: usize, problem: &str| SlurmError::Malformed {
        program: "squeue".into(),
        message: format!("line {line}: {problem}"),
    };
    let mut running: BTreeMap<String, Vec<RunningJob>> = BTreeMap::new();
    for (index, line) in text.lines().enumerate() {
        let line_no = index + 1;
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split('|').map(str::trim).collect();
        if fields.len() < 4 {
            return Err(malformed(
                line_no,
                "expected job id, nodes, end time, requeue",
            ));
        }
        let id = fields[0];
        if id.is_empty() {
            return Err(malformed(line_no, "no job id"));
        }
        let ends_at_ms = match fields[2] {
            "" | "NONE" | "Unknown" | "N/A" => None,
            text => Some(
                queue::parse_time(text, utc_offset_minutes)
                    .ok_or_else(|| malformed(line_no, "end time is not a date"))?,
            ),
        };
        let requeueable = match fields[3] {
            "1" => true,
            "0" => false,
            _ => return Err(malformed(line_no, "requeue is not 0 or 1")),
        };
        let nodes = ebb_slurm::hostlist::expand(fields[1])
            .map_err(|error| malformed(line_no, &error.to_string()))?;
        for node in nodes {
            running.entry(node).or_default().push(RunningJob {
                id: id.to_string(),
                ends_at_ms,
                requeueable,
            });
        }
    }
    Ok(running)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_jobs_by_node() {
        let text = "3|n2|2026-12-05T12:44:17|0|\n4|n[1-2]|NONE|1|\n";
        let running = parse_running(text, 0).unwrap();
        assert_eq!(running["n1"].len(), 1);
        assert_eq!(running["n2"].len(), 2);
        assert!(!running["n2"][0].requeueable);
        assert!(running["n2"][0].ends_at_ms.is_some());
        assert_eq!(running["n2"][1].ends_at_ms, None);
    }

    #[test]
    fn a_bad_line_names_itself() {
        let error = parse_running("3|n2|soon|0|\n", 0).unwrap_err();
        assert!(error.to_string().contains("line 1"), "{error}");
    }

    #[tokio::test]
    async fn a_missing_program_says_so() {
        let ctl = SlurmCtl::default();
        let error = ctl.run("ebb-no-such-slurm-command", &[]).await.unwrap_err();
        assert!(matches!(error, SlurmError::Missing { .. }), "{error}");
    }

    #[tokio::test]
    async fn a_slow_program_is_cut_off() {
        let ctl = SlurmCtl {
            timeout: Duration::from_millis(200),
            ..SlurmCtl::default()
        };
        let error = ctl.run("sleep", &["5"]).await.unwrap_err();
        assert!(matches!(error, SlurmError::Timeout { .. }), "{error}");
    }
}
