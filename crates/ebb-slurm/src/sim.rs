//! A simulated Slurm partition, for the demo (and named as a simulation wherever it
//! shows): jobs submitted on a fixed schedule that repeats, a first-fit scheduler over the
//! nodes Ebb holds, and the node states `scontrol update` sets (drain, resume, down).
//!
//! It answers in the shapes the real partition's `squeue` and `sinfo` text is read into
//! ([`QueuedJob`], [`NodeInfo`], the running jobs by node), so everything after the read
//! (the queue metrics, the binder's decisions, the Pool view) is the real path. A node
//! comes up when Ebb holds it (as a real node's slurmd registers) and a node Ebb stops
//! holding goes down, its jobs back in the queue (as Slurm requeues a failed node's).
//! Pure: the caller says what time it is and which nodes it holds.

use crate::drain::RunningJob;
use crate::queue::{JobState, NodeBase, NodeFlag, NodeInfo, NodeState, QueuedJob};
use std::collections::BTreeMap;

/// One job of the schedule: when in each cycle it is submitted, the GPUs it asks for (on
/// one node) and how long it runs once started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrival {
    pub at_s: u64,
    pub gpus: u32,
    pub run_s: u64,
}

/// The most jobs the simulation keeps waiting: past it, an arrival is dropped (a demo left
/// without GPUs for a day does not pile up a day of jobs).
pub const MAX_QUEUED: usize = 64;

/// What an operator (or Ebb) set on a node with `scontrol update`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Admin {
    InService,
    Drain(String),
    Down(String),
}

#[derive(Debug, Clone)]
struct SimNode {
    name: String,
    gpus: u32,
    admin: Admin,
    held: bool,
}

#[derive(Debug, Clone)]
struct SimJob {
    id: u64,
    gpus: u32,
    run_s: u64,
    submitted_ms: i64,
    /// The node and when it started there; `None` while pending.
    running: Option<(String, i64)>,
}

/// Why a simulated `scontrol` refused, in Slurm's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    #[error("Invalid node name specified: {0}")]
    NoNode(String),
    #[error("Invalid job id specified: {0}")]
    NoJob(String),
    #[error("Invalid node state specified: {0}")]
    NoState(String),
}

/// The simulated partition.
#[derive(Debug, Clone)]
pub struct SimPartition {
    name: String,
    nodes: Vec<SimNode>,
    jobs: Vec<SimJob>,
    schedule: Vec<Arrival>,
    cycle_ms: i64,
    started_ms: Option<i64>,
    /// Arrivals handled so far (submitted or dropped), over every cycle.
    arrivals: u64,
    next_id: u64,
}

impl SimPartition {
    /// Partition `name` of `nodes` (name, GPUs), fed by `schedule` every `cycle_s` seconds
    /// from the first [`SimPartition::advance`]. Arrivals at or past the cycle's end are
    /// never submitted.
    pub fn new(name: &str, nodes: &[(String, u32)], schedule: &[Arrival], cycle_s: u64) -> Self {
        let cycle_s = cycle_s.max(1);
        let mut schedule: Vec<Arrival> = schedule
            .iter()
            .copied()
            .filter(|arrival| arrival.at_s < cycle_s)
            .collect();
        schedule.sort_by_key(|arrival| arrival.at_s);
        Self {
            name: name.to_string(),
            nodes: nodes
                .iter()
                .map(|(name, gpus)| SimNode {
                    name: name.clone(),
                    gpus: *gpus,
                    admin: Admin::InService,
                    held: false,
                })
                .collect(),
            jobs: Vec::new(),
            schedule,
            cycle_ms: i64::try_from(cycle_s.saturating_mul(1000)).unwrap_or(i64::MAX),
            started_ms: None,
            arrivals: 0,
            next_id: 1,
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Moves the partition to `now_ms` with Ebb holding the nodes named in `held`: nodes
    /// come up or go down, jobs past their run time end, the schedule's arrivals until now
    /// are submitted, and pending jobs start where they fit (first fit, in submit order).
    pub fn advance(&mut self, now_ms: i64, held: &[String]) {
        let started = *self.started_ms.get_or_insert(now_ms);
        for index in 0..self.nodes.len() {
            let now_held = held.contains(&self.nodes[index].name);
            let node = &mut self.nodes[index];
            if now_held && !node.held && matches!(node.admin, Admin::Down(_)) {
                // A node whose slurmd registers comes back (ReturnToService=2).
                node.admin = Admin::InService;
            }
            let lost = node.held && !now_held;
            node.held = now_held;
            if lost {
                let name = node.name.clone();
                self.requeue_on(&name);
            }
        }
        self.jobs.retain(|job| match &job.running {
            Some((_, started_ms)) => ends_at(*started_ms, job.run_s) > now_ms,
            None => true,
        });
        self.submit_until(started, now_ms);
        self.schedule_pending(now_ms);
    }

    fn submit_until(&mut self, started_ms: i64, now_ms: i64) {
        if self.schedule.is_empty() {
            return;
        }
        let per_cycle = self.schedule.len() as u64;
        loop {
            let cycle = i64::try_from(self.arrivals / per_cycle).unwrap_or(i64::MAX);
            let arrival = self.schedule[(self.arrivals % per_cycle) as usize];
            let at_ms = started_ms
                .saturating_add(cycle.saturating_mul(self.cycle_ms))
                .saturating_add(i64::try_from(arrival.at_s * 1000).unwrap_or(i64::MAX));
            if at_ms > now_ms {
                return;
            }
            self.arrivals += 1;
            // Arrivals of a cycle long gone (the clock jumped, the demo slept) are skipped.
            let pending = self.jobs.iter().filter(|j| j.running.is_none()).count();
            if now_ms - at_ms >= self.cycle_ms || pending >= MAX_QUEUED {
                continue;
            }
            self.jobs.push(SimJob {
                id: self.next_id,
                gpus: arrival.gpus,
                run_s: arrival.run_s,
                submitted_ms: at_ms,
                running: None,
            });
            self.next_id += 1;
        }
    }

    fn used_on(&self, node: &str) -> u32 {
        self.jobs
            .iter()
            .filter(|job| job.running.as_ref().is_some_and(|(on, _)| on == node))
            .map(|job| job.gpus)
            .sum()
    }

    fn schedule_pending(&mut self, now_ms: i64) {
        for index in 0..self.jobs.len() {
            if self.jobs[index].running.is_some() {
                continue;
            }
            let gpus = self.jobs[index].gpus;
            let fits = self
                .nodes
                .iter()
                .filter(|node| node.held && node.admin == Admin::InService)
                .find(|node| node.gpus.saturating_sub(self.used_on(&node.name)) >= gpus)
                .map(|node| node.name.clone());
            if let Some(node) = fits {
                self.jobs[index].running = Some((node, now_ms));
            }
        }
    }

    /// The node's running jobs back in the queue, first in line.
    fn requeue_on(&mut self, node: &str) {
        for job in &mut self.jobs {
            if job.running.as_ref().is_some_and(|(on, _)| on == node) {
                job.running = None;
            }
        }
    }

    /// `scontrol update nodename=… state=drain|resume|down [reason=…]`. A node set down
    /// has its jobs requeued, as Slurm does. Nothing changes when a name is not a node.
    pub fn set_state(
        &mut self,
        nodes: &[String],
        state: &str,
        reason: Option<&str>,
    ) -> Result<(), SimError> {
        if let Some(unknown) = nodes
            .iter()
            .find(|name| !self.nodes.iter().any(|node| &&node.name == name))
        {
            return Err(SimError::NoNode(unknown.clone()));
        }
        let reason = reason.unwrap_or_default().to_string();
        let admin = match state.to_ascii_lowercase().as_str() {
            "drain" => Admin::Drain(reason),
            "resume" | "idle" => Admin::InService,
            "down" => Admin::Down(reason),
            other => return Err(SimError::NoState(other.to_string())),
        };
        for name in nodes {
            if let Some(node) = self.nodes.iter_mut().find(|node| &node.name == name) {
                node.admin = admin.clone();
            }
            if matches!(admin, Admin::Down(_)) {
                self.requeue_on(name);
            }
        }
        Ok(())
    }

    /// `scontrol requeue JOB`: a running job goes back to the queue.
    pub fn requeue(&mut self, job: &str) -> Result<(), SimError> {
        let job = self.job_mut(job)?;
        job.running = None;
        Ok(())
    }

    /// `scancel JOB`: the job is gone.
    pub fn cancel(&mut self, job: &str) -> Result<(), SimError> {
        self.job_mut(job)?;
        self.jobs.retain(|queued| queued.id.to_string() != job);
        Ok(())
    }

    fn job_mut(&mut self, job: &str) -> Result<&mut SimJob, SimError> {
        self.jobs
            .iter_mut()
            .find(|queued| queued.id.to_string() == job)
            .ok_or_else(|| SimError::NoJob(job.to_string()))
    }

    /// The jobs as `squeue` shows them: running ones, then pending ones in line (the first
    /// waiting for `Resources`, the rest behind it by `Priority`).
    pub fn jobs(&self) -> Vec<QueuedJob> {
        let mut first_pending = true;
        self.jobs
            .iter()
            .map(|job| {
                let (state, reason) = match job.running {
                    Some(_) => (JobState::Running, "None"),
                    None if std::mem::take(&mut first_pending) => (JobState::Pending, "Resources"),
                    None => (JobState::Pending, "Priority"),
                };
                QueuedJob {
                    job_id: job.id.to_string(),
                    partitions: vec![self.name.clone()],
                    state,
                    reason: reason.to_string(),
                    gpus_per_node: job.gpus,
                    submitted_at_ms: job.submitted_ms,
                    nodes: 1,
                    starts_at_ms: job.running.as_ref().map(|(_, at)| *at),
                }
            })
            .collect()
    }

    /// The nodes as `sinfo -N` shows them.
    pub fn nodes(&self) -> Vec<NodeInfo> {
        self.nodes
            .iter()
            .map(|node| {
                let used = self.used_on(&node.name);
                let (base, flags, reason) = match (&node.admin, node.held) {
                    (Admin::Down(reason), _) => (NodeBase::Down, vec![], Some(reason.clone())),
                    // Configured, its slurmd not running: Slurm cannot reach it.
                    (_, false) => (
                        NodeBase::Down,
                        vec![NodeFlag::NotResponding],
                        Some("Not responding".to_string()),
                    ),
                    (Admin::Drain(reason), true) if used > 0 => {
                        (NodeBase::Draining, vec![], Some(reason.clone()))
                    }
                    (Admin::Drain(reason), true) => {
                        (NodeBase::Drained, vec![], Some(reason.clone()))
                    }
                    (Admin::InService, true) if used == 0 => (NodeBase::Idle, vec![], None),
                    (Admin::InService, true) if used >= node.gpus => {
                        (NodeBase::Allocated, vec![], None)
                    }
                    (Admin::InService, true) => (NodeBase::Mixed, vec![], None),
                };
                NodeInfo {
                    name: node.name.clone(),
                    partition: self.name.clone(),
                    default_partition: false,
                    state: NodeState { base, flags },
                    gpus: node.gpus,
                    reason: reason.filter(|reason| !reason.is_empty()),
                }
            })
            .collect()
    }

    /// The running jobs by node, each with when it ends.
    pub fn running(&self) -> BTreeMap<String, Vec<RunningJob>> {
        let mut running: BTreeMap<String, Vec<RunningJob>> = BTreeMap::new();
        for job in &self.jobs {
            if let Some((node, started_ms)) = &job.running {
                running.entry(node.clone()).or_default().push(RunningJob {
                    id: job.id.to_string(),
                    ends_at_ms: Some(ends_at(*started_ms, job.run_s)),
                    requeueable: true,
                });
            }
        }
        running
    }
}

fn ends_at(started_ms: i64, run_s: u64) -> i64 {
    started_ms.saturating_add(i64::try_from(run_s.saturating_mul(1000)).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::QueueMetrics;

    const T0: i64 = 1_800_000_000_000;

    fn two_nodes() -> SimPartition {
        SimPartition::new(
            "train",
            &[("n1".to_string(), 2), ("n2".to_string(), 2)],
            &[
                Arrival {
                    at_s: 5,
                    gpus: 1,
                    run_s: 20,
                },
                Arrival {
                    at_s: 5,
                    gpus: 1,
                    run_s: 100,
                },
                Arrival {
                    at_s: 5,
                    gpus: 1,
                    run_s: 30,
                },
                Arrival {
                    at_s: 5,
                    gpus: 1,
                    run_s: 110,
                },
            ],
            600,
        )
    }

    fn held(names: &[&str]) -> Vec<String> {
        names.iter().map(|name| name.to_string()).collect()
    }

    fn at(s: i64) -> i64 {
        T0 + s * 1000
    }

    #[test]
    fn jobs_wait_until_nodes_are_held_then_run_first_fit_and_end() {
        let mut sim = two_nodes();
        sim.advance(at(0), &[]);
        assert!(sim.jobs().is_empty());
        sim.advance(at(6), &[]);
        let metrics = QueueMetrics::of(&sim.jobs(), "train", at(6));
        assert_eq!((metrics.pending_gpus, metrics.pending_jobs), (4, 4));
        let reasons: Vec<String> = sim.jobs().into_iter().map(|job| job.reason).collect();
        assert_eq!(reasons, ["Resources", "Priority", "Priority", "Priority"]);
        assert!(
            sim.nodes()
                .iter()
                .all(|node| node.state.base == NodeBase::Down)
        );
        sim.advance(at(10), &held(&["n1", "n2"]));
        let running = sim.running();
        let on = |node: &str| {
            running[node]
                .iter()
                .map(|j| j.id.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!((on("n1"), on("n2")), (held(&["1", "2"]), held(&["3", "4"])));
        assert!(
            sim.nodes()
                .iter()
                .all(|node| node.state.base == NodeBase::Allocated)
        );
        // The short ones end: each node keeps one job.
        sim.advance(at(41), &held(&["n1", "n2"]));
        let metrics = QueueMetrics::of(&sim.jobs(), "train", at(41));
        assert_eq!((metrics.allocated_gpus, metrics.pending_gpus), (2, 0));
        assert!(
            sim.nodes()
                .iter()
                .all(|node| node.state.base == NodeBase::Mixed)
        );
        sim.advance(at(121), &held(&["n1", "n2"]));
        assert!(sim.jobs().is_empty());
    }

    #[test]
    fn a_drained_node_takes_no_new_job_and_is_drained_once_empty() {
        let mut sim = two_nodes();
        sim.advance(at(0), &held(&["n1"]));
        sim.set_state(&held(&["n1"]), "drain", Some("ebb: scale-in"))
            .unwrap();
        sim.advance(at(6), &held(&["n1"]));
        assert!(sim.running().is_empty(), "no job starts on a draining node");
        assert_eq!(sim.nodes()[0].state.base, NodeBase::Drained);
        assert_eq!(sim.nodes()[0].reason.as_deref(), Some("ebb: scale-in"));
        sim.set_state(&held(&["n1"]), "resume", None).unwrap();
        sim.advance(at(7), &held(&["n1"]));
        assert_eq!(sim.running()["n1"].len(), 2);
        sim.set_state(&held(&["n1"]), "drain", Some("ebb: scale-in"))
            .unwrap();
        assert_eq!(sim.nodes()[0].state.base, NodeBase::Draining);
    }

    #[test]
    fn a_node_let_go_or_set_down_puts_its_jobs_back_in_line() {
        let mut sim = two_nodes();
        sim.advance(at(0), &[]);
        sim.advance(at(6), &held(&["n1", "n2"]));
        sim.set_state(&held(&["n1"]), "down", Some("ebb: released"))
            .unwrap();
        assert_eq!(sim.running().get("n1"), None);
        sim.advance(at(7), &held(&["n2"]));
        assert_eq!(sim.nodes()[0].reason.as_deref(), Some("ebb: released"));
        let pending = sim
            .jobs()
            .iter()
            .filter(|j| j.state == JobState::Pending)
            .count();
        assert_eq!(pending, 2);
        // Held again: back in service (its slurmd registered), the jobs run there.
        sim.advance(at(8), &held(&["n1", "n2"]));
        assert_eq!(sim.running()["n1"].len(), 2);
        sim.advance(at(9), &held(&["n1"]));
        assert_eq!(sim.running().get("n2"), None);
        assert_eq!(sim.nodes()[1].state.flags, vec![NodeFlag::NotResponding]);
    }

    #[test]
    fn requeue_cancel_and_bad_names_say_what_is_wrong() {
        let mut sim = two_nodes();
        sim.advance(at(0), &[]);
        sim.advance(at(6), &held(&["n1"]));
        sim.requeue("1").unwrap();
        assert_eq!(sim.jobs()[0].state, JobState::Pending);
        sim.cancel("2").unwrap();
        assert!(!sim.jobs().iter().any(|job| job.job_id == "2"));
        assert_eq!(sim.requeue("99"), Err(SimError::NoJob("99".into())));
        let before = sim.nodes();
        let bad = sim.set_state(&held(&["n1", "n9"]), "drain", Some("x"));
        assert_eq!(bad, Err(SimError::NoNode("n9".into())));
        assert_eq!(sim.nodes(), before, "nothing half-changed");
        assert!(matches!(
            sim.set_state(&held(&["n1"]), "off", None),
            Err(SimError::NoState(_))
        ));
    }

    #[test]
    fn the_schedule_repeats_and_a_long_sleep_piles_nothing_up() {
        let mut sim = two_nodes();
        sim.advance(at(0), &[]);
        sim.advance(at(6), &[]);
        sim.advance(at(606), &[]);
        // Cycle 0's four are still waiting; cycle 1's four join them.
        assert_eq!(sim.jobs().len(), 8);
        sim.advance(at(606 + 86_400), &[]);
        assert!(sim.jobs().len() <= 12, "{}", sim.jobs().len());
    }
}
