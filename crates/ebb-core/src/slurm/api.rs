//! What the binder and the console ask of Slurm, as one trait: the real controller's
//! commands ([`SlurmCtl`]) or the demo's simulated partition ([`SimSlurm`], named as a
//! simulation). Everything after the answer (queue metrics, drain decisions, the Pool
//! view) is the same code either way.

use super::ctl::{PartitionView, SlurmCtl, SlurmError};
use ebb_slurm::binding::Binding;
use ebb_slurm::queue::QueueMetrics;
use ebb_slurm::sim::{SimError, SimPartition};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

/// A Slurm call's answer, later.
pub type SlurmFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, SlurmError>> + Send + 'a>>;

/// A Slurm controller, as the binder uses it. Every call has a timeout.
pub trait SlurmApi: Send + Sync + fmt::Debug {
    /// Partition `name` at `now_ms`: its jobs, nodes and queue metrics. `held` names the
    /// nodes Ebb holds a lease for: real Slurm learns it from their slurmd registering and
    /// ignores it; the simulation brings them up.
    fn partition<'a>(
        &'a self,
        name: &'a str,
        held: &'a [String],
        now_ms: i64,
    ) -> SlurmFuture<'a, PartitionView>;

    /// `scontrol update nodename=… state=… [reason=…]`.
    fn set_state<'a>(
        &'a self,
        nodes: &'a [String],
        state: &'a str,
        reason: Option<&'a str>,
    ) -> SlurmFuture<'a, ()>;

    /// `scontrol requeue JOB`.
    fn requeue<'a>(&'a self, job: &'a str) -> SlurmFuture<'a, ()>;

    /// `scancel JOB`.
    fn cancel<'a>(&'a self, job: &'a str) -> SlurmFuture<'a, ()>;

    /// Lets a requeued job start now (Slurm holds one back two minutes).
    fn start_now<'a>(&'a self, job: &'a str) -> SlurmFuture<'a, ()>;

    /// `scontrol release JOB`: a held job may start again.
    fn release_job<'a>(&'a self, job: &'a str) -> SlurmFuture<'a, ()>;

    /// Whether this is a simulation (the demo's), said wherever its partition shows.
    fn simulated(&self) -> bool {
        false
    }
}

impl SlurmApi for SlurmCtl {
    fn partition<'a>(
        &'a self,
        name: &'a str,
        _held: &'a [String],
        now_ms: i64,
    ) -> SlurmFuture<'a, PartitionView> {
        Box::pin(SlurmCtl::partition(self, name, now_ms))
    }

    fn set_state<'a>(
        &'a self,
        nodes: &'a [String],
        state: &'a str,
        reason: Option<&'a str>,
    ) -> SlurmFuture<'a, ()> {
        Box::pin(SlurmCtl::set_state(self, nodes, state, reason))
    }

    fn requeue<'a>(&'a self, job: &'a str) -> SlurmFuture<'a, ()> {
        Box::pin(SlurmCtl::requeue(self, job))
    }

    fn cancel<'a>(&'a self, job: &'a str) -> SlurmFuture<'a, ()> {
        Box::pin(SlurmCtl::cancel(self, job))
    }

    fn start_now<'a>(&'a self, job: &'a str) -> SlurmFuture<'a, ()> {
        Box::pin(SlurmCtl::start_now(self, job))
    }

    fn release_job<'a>(&'a self, job: &'a str) -> SlurmFuture<'a, ()> {
        Box::pin(SlurmCtl::release_job(self, job))
    }
}

/// Which Slurm a console works with, and where its binding comes from.
#[derive(Debug, Clone)]
pub struct SlurmSetup {
    pub api: Arc<dyn SlurmApi>,
    /// A binding given in code (the demo's); `None` reads `slurm.toml` in the data
    /// directory, afresh each pass.
    pub binding: Option<Binding>,
}

impl Default for SlurmSetup {
    /// The real controller (`SLURM_CONF` or Slurm's default), bound by `slurm.toml`.
    fn default() -> Self {
        Self {
            api: Arc::new(SlurmCtl::default()),
            binding: None,
        }
    }
}

/// The demo's Slurm: simulated partitions ([`ebb_slurm::sim`]), one per bound pool, moved
/// on the console's clock each time they are read.
#[derive(Debug, Default)]
pub struct SimSlurm {
    partitions: Mutex<Vec<SimPartition>>,
}

impl SimSlurm {
    pub fn new(partitions: Vec<SimPartition>) -> Self {
        Self {
            partitions: Mutex::new(partitions),
        }
    }

    /// Runs `act` on the first partition `find` picks; `missing` when it picks none.
    fn with<T>(
        &self,
        program: &str,
        find: impl Fn(&SimPartition) -> bool,
        act: impl FnOnce(&mut SimPartition) -> Result<T, SimError>,
        missing: SlurmError,
    ) -> Result<T, SlurmError> {
        let mut partitions = self.partitions.lock().map_err(|_| SlurmError::Failed {
            program: program.to_string(),
            message: "the simulation stopped".into(),
        })?;
        let partition = partitions.iter_mut().find(|p| find(p)).ok_or(missing)?;
        act(partition).map_err(|error| SlurmError::Failed {
            program: program.to_string(),
            message: error.to_string(),
        })
    }
}

impl SlurmApi for SimSlurm {
    fn partition<'a>(
        &'a self,
        name: &'a str,
        held: &'a [String],
        now_ms: i64,
    ) -> SlurmFuture<'a, PartitionView> {
        let answer = self.with(
            "squeue",
            |partition| partition.name() == name,
            |partition| {
                partition.advance(now_ms, held);
                let jobs = partition.jobs();
                let metrics = QueueMetrics::of(&jobs, name, now_ms);
                Ok(PartitionView {
                    jobs,
                    nodes: partition.nodes(),
                    running: partition.running(),
                    metrics,
                })
            },
            SlurmError::NoPartition { name: name.into() },
        );
        Box::pin(std::future::ready(answer))
    }

    fn set_state<'a>(
        &'a self,
        nodes: &'a [String],
        state: &'a str,
        reason: Option<&'a str>,
    ) -> SlurmFuture<'a, ()> {
        let first = nodes.first().cloned().unwrap_or_default();
        let answer = if nodes.is_empty() {
            Ok(())
        } else {
            self.with(
                "scontrol",
                |partition| partition.nodes().iter().any(|node| node.name == first),
                |partition| partition.set_state(nodes, state, reason),
                SlurmError::NoNode {
                    name: first.clone(),
                },
            )
        };
        Box::pin(std::future::ready(answer))
    }

    fn requeue<'a>(&'a self, job: &'a str) -> SlurmFuture<'a, ()> {
        Box::pin(std::future::ready(
            self.job("scontrol", job, |p| p.requeue(job)),
        ))
    }

    fn cancel<'a>(&'a self, job: &'a str) -> SlurmFuture<'a, ()> {
        Box::pin(std::future::ready(
            self.job("scancel", job, |p| p.cancel(job)),
        ))
    }

    fn simulated(&self) -> bool {
        true
    }

    fn start_now<'a>(&'a self, job: &'a str) -> SlurmFuture<'a, ()> {
        // The simulation holds no requeued job back.
        Box::pin(std::future::ready(self.job("scontrol", job, |_| Ok(()))))
    }

    fn release_job<'a>(&'a self, job: &'a str) -> SlurmFuture<'a, ()> {
        // The simulation holds no job.
        Box::pin(std::future::ready(self.job("scontrol", job, |_| Ok(()))))
    }
}

impl SimSlurm {
    fn job(
        &self,
        program: &str,
        job: &str,
        act: impl FnOnce(&mut SimPartition) -> Result<(), SimError>,
    ) -> Result<(), SlurmError> {
        self.with(
            program,
            |partition| partition.jobs().iter().any(|queued| queued.job_id == job),
            act,
            SlurmError::Failed {
                program: program.to_string(),
                message: format!("Invalid job id specified: {job}"),
            },
        )
    }
}
