//! The scale-in decision for a pool bound to a Slurm partition: given the nodes that may
//! go and how many GPUs to give back, which nodes drain, which go back now, which are kept
//! to the end of their paid unit, and whose jobs are requeued.
//!
//! A job is never ended by scale-in on its own: a busy node is drained and goes back when
//! its jobs end. Only a drain past the pool's cost cap, or `force`, requeues jobs, and a
//! job submitted `--no-requeue` only under `force`. Idle nodes go before busy ones, and a
//! disruption budget caps how many GPUs go back per window.
//!
//! Level-triggered: the shell calls [`plan`] each tick with what Slurm says now and carries
//! the plan out; the plan lists every node that should be draining, so a draining node it
//! no longer lists may return to service.

use serde::{Deserialize, Serialize};

/// A job running on a candidate node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunningJob {
    pub id: String,
    /// When its time limit ends it; `None` when Slurm gives no limit.
    pub ends_at_ms: Option<i64>,
    /// `false` for a job submitted `--no-requeue` (or in a partition that forbids it).
    pub requeueable: bool,
}

/// What runs on a candidate node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeLoad {
    Idle,
    /// A busy node with an empty `jobs` counts as idle.
    Busy {
        jobs: Vec<RunningJob>,
    },
}

/// A node of the pool that scale-in may take.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Candidate {
    pub name: String,
    pub gpus: u32,
    pub load: NodeLoad,
    /// When the node's current paid unit ends.
    pub paid_until_ms: i64,
    /// When scale-in started draining it; `None` when it is not draining.
    pub draining_since_ms: Option<i64>,
}

impl Candidate {
    fn jobs(&self) -> &[RunningJob] {
        match &self.load {
            NodeLoad::Idle => &[],
            NodeLoad::Busy { jobs } => jobs,
        }
    }

    pub fn is_idle(&self) -> bool {
        self.jobs().is_empty()
    }

    /// When its last job ends; `None` when some job's end is unknown (or it is idle).
    fn last_job_end_ms(&self) -> Option<i64> {
        self.jobs()
            .iter()
            .map(|job| job.ends_at_ms)
            .try_fold(i64::MIN, |last, end| Some(last.max(end?)))
    }

    fn has_unrequeueable_job(&self) -> bool {
        self.jobs().iter().any(|job| !job.requeueable)
    }

    /// Whether it has been draining for at least `cap_ms`.
    fn drain_past_cap(&self, cap_ms: Option<i64>, now_ms: i64) -> bool {
        match (self.draining_since_ms, cap_ms) {
            (Some(since_ms), Some(cap_ms)) => now_ms.saturating_sub(since_ms) >= cap_ms,
            _ => false,
        }
    }
}

/// How much scale-in may disrupt a pool: GPUs given back per window, and quiet windows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DisruptionBudget {
    /// At most this many GPUs go back per window; `None` for no count limit.
    pub max_gpus_per_window: Option<u32>,
    /// At most this percentage of `pool_gpus` (rounded down) per window; `None` for none.
    pub max_pct_per_window: Option<u32>,
    /// The window `released_in_window` counts over (the shell's clock; not read here).
    pub window_ms: i64,
    /// GPUs already given back in the current window.
    pub released_in_window: u32,
    /// The pool's GPUs, which the percentage is of.
    pub pool_gpus: u32,
    /// Inside a window where no busy GPU may go: busy nodes are neither drained nor
    /// requeued; idle ones may still go.
    pub quiet: bool,
}

impl DisruptionBudget {
    /// No limit and never quiet.
    pub fn unlimited() -> Self {
        Self {
            max_gpus_per_window: None,
            max_pct_per_window: None,
            window_ms: 0,
            released_in_window: 0,
            pool_gpus: 0,
            quiet: false,
        }
    }

    /// GPUs that may still go back in this window; `None` when unlimited. A percentage is
    /// rounded down ("at most"), so 10% of 8 GPUs lets none go: small pools set a count.
    pub fn allowance_gpus(&self) -> Option<u32> {
        let by_pct = self.max_pct_per_window.map(|pct| {
            (u64::from(self.pool_gpus) * u64::from(pct) / 100).min(u64::from(u32::MAX)) as u32
        });
        let limit = match (self.max_gpus_per_window, by_pct) {
            (Some(count), Some(pct)) => Some(count.min(pct)),
            (count, pct) => count.or(pct),
        };
        limit.map(|limit| limit.saturating_sub(self.released_in_window))
    }
}

/// One scale-in decision's inputs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DrainRequest {
    pub candidates: Vec<Candidate>,
    /// GPUs the pool should give back. A node goes whole, so no node is chosen that would
    /// give back more than is left to give.
    pub gpus_to_release: u32,
    pub budget: DisruptionBudget,
    /// How long a drain may keep a paid GPU before its jobs are requeued; `None` for ever.
    pub drain_cost_cap_ms: Option<i64>,
    /// Keep an idle chosen node, in service, until its paid unit ends, rather than give it
    /// back now: the time is paid either way, and the queue may want it again.
    pub park_until_paid_end: bool,
    /// `--force`: requeue the chosen busy nodes' jobs now, ending those that cannot be
    /// requeued.
    pub force: bool,
    pub now_ms: i64,
}

/// A chosen busy node whose jobs are to be requeued so it can go back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Requeue {
    pub node: String,
    /// Jobs to requeue (`scontrol requeue`).
    pub job_ids: Vec<String>,
    /// Jobs that cannot be requeued and must be ended for the node to go: only ever
    /// non-empty under `force`.
    pub cancel_job_ids: Vec<String>,
}

/// An idle chosen node kept to the end of its paid unit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Parked {
    pub node: String,
    pub release_at_ms: i64,
}

/// What scale-in does this tick.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DrainPlan {
    /// Busy nodes that should be draining (new or continuing; idempotent), including the
    /// ones being requeued so their jobs do not land on them again.
    pub drain: Vec<String>,
    /// Idle nodes to give back now.
    pub release: Vec<String>,
    /// Idle nodes kept in service to the end of their paid unit; they count toward the GPUs
    /// given back, and against the budget only when they go.
    pub park: Vec<Parked>,
    /// Busy nodes whose drain passed the cost cap, or all chosen busy nodes under `force`.
    pub requeue: Vec<Requeue>,
    /// Nodes chosen to go that the budget (its count, or a quiet window) kept from going
    /// this tick; they count toward the GPUs given back. An idle one stays in service, a
    /// busy one due a requeue keeps draining, a busy one in a quiet window is not drained.
    pub held: Vec<String>,
    /// The GPUs of `held`.
    pub held_by_budget: u32,
}

/// Decides scale-in. Candidates are taken in order until `gpus_to_release` is met, each
/// only if its GPUs fit in what is left: idle nodes first (the paid unit that ends soonest
/// first), then busy ones by when their last job ends (soonest first, unknown ends last;
/// under `force`, a node with a `--no-requeue` job after every other). Of the chosen, an
/// idle node goes back (or is parked); a busy one drains, and is requeued only past the
/// cost cap (when all its jobs can be requeued) or under `force`. Nodes going back now
/// (released or requeued) fit in the budget in order; once one is held, no later node is
/// requeued, so no job is disrupted while an idle node waits. Ties break by name.
pub fn plan(request: &DrainRequest) -> DrainPlan {
    let DrainRequest {
        candidates,
        gpus_to_release,
        budget,
        drain_cost_cap_ms,
        park_until_paid_end,
        force,
        now_ms,
    } = request;
    let mut order: Vec<&Candidate> = candidates.iter().filter(|c| c.gpus > 0).collect();
    order.sort_by(|a, b| {
        order_key(a, *force)
            .cmp(&order_key(b, *force))
            .then_with(|| a.name.cmp(&b.name))
    });
    let mut left = *gpus_to_release;
    let mut chosen = Vec::new();
    for candidate in order {
        if left == 0 {
            break;
        }
        if candidate.gpus <= left {
            left -= candidate.gpus;
            chosen.push(candidate);
        }
    }

    let mut plan = DrainPlan::default();
    let mut allowance = budget.allowance_gpus();
    let mut requeue_blocked = false;
    let mut take = |gpus: u32| match allowance.as_mut() {
        None => true,
        Some(left) if *left >= gpus => {
            *left -= gpus;
            true
        }
        Some(_) => false,
    };
    for node in chosen {
        if node.is_idle() {
            if *park_until_paid_end && node.paid_until_ms > *now_ms {
                plan.park.push(Parked {
                    node: node.name.clone(),
                    release_at_ms: node.paid_until_ms,
                });
            } else if take(node.gpus) {
                plan.release.push(node.name.clone());
            } else {
                plan.hold(node);
                requeue_blocked = true;
            }
            continue;
        }
        if budget.quiet {
            plan.hold(node);
            continue;
        }
        let requeue_due = *force
            || (node.drain_past_cap(*drain_cost_cap_ms, *now_ms) && !node.has_unrequeueable_job());
        if requeue_due && (requeue_blocked || !take(node.gpus)) {
            // Held from going now, it keeps draining toward its jobs' natural end.
            plan.hold(node);
            plan.drain.push(node.name.clone());
            requeue_blocked = true;
            continue;
        }
        plan.drain.push(node.name.clone());
        if !requeue_due {
            continue;
        }
        let (job_ids, cancel_job_ids) = node
            .jobs()
            .iter()
            .partition::<Vec<&RunningJob>, _>(|job| job.requeueable);
        plan.requeue.push(Requeue {
            node: node.name.clone(),
            job_ids: job_ids.into_iter().map(|job| job.id.clone()).collect(),
            cancel_job_ids: cancel_job_ids
                .into_iter()
                .map(|job| job.id.clone())
                .collect(),
        });
    }
    plan
}

impl DrainPlan {
    fn hold(&mut self, node: &Candidate) {
        self.held.push(node.name.clone());
        self.held_by_budget += node.gpus;
    }
}

/// The order candidates are taken in (before the name).
fn order_key(candidate: &Candidate, force: bool) -> (bool, bool, i64) {
    if candidate.is_idle() {
        return (false, false, candidate.paid_until_ms);
    }
    (
        true,
        force && candidate.has_unrequeueable_job(),
        candidate.last_job_end_ms().unwrap_or(i64::MAX),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_000_000;
    const HOUR: i64 = 3_600_000;

    fn idle(name: &str, gpus: u32, paid_until_ms: i64) -> Candidate {
        Candidate {
            name: name.into(),
            gpus,
            load: NodeLoad::Idle,
            paid_until_ms,
            draining_since_ms: None,
        }
    }

    fn busy(name: &str, gpus: u32, jobs: &[(&str, Option<i64>, bool)]) -> Candidate {
        Candidate {
            name: name.into(),
            gpus,
            load: NodeLoad::Busy {
                jobs: jobs
                    .iter()
                    .map(|&(id, ends_at_ms, requeueable)| RunningJob {
                        id: id.into(),
                        ends_at_ms,
                        requeueable,
                    })
                    .collect(),
            },
            paid_until_ms: NOW + HOUR,
            draining_since_ms: None,
        }
    }

    fn request(candidates: Vec<Candidate>, gpus_to_release: u32) -> DrainRequest {
        DrainRequest {
            candidates,
            gpus_to_release,
            budget: DisruptionBudget::unlimited(),
            drain_cost_cap_ms: None,
            park_until_paid_end: false,
            force: false,
            now_ms: NOW,
        }
    }

    #[test]
    fn idle_nodes_go_first_soonest_paid_end_first() {
        let plan = plan(&request(
            vec![
                busy("b1", 4, &[("1", Some(NOW + 60_000), true)]),
                idle("i-late", 4, NOW + HOUR),
                idle("i-soon", 4, NOW + 60_000),
            ],
            8,
        ));
        assert_eq!(plan.release, ["i-soon", "i-late"]);
        assert!(plan.drain.is_empty());
    }

    #[test]
    fn busy_nodes_drain_soonest_end_first_unknown_last() {
        let plan = plan(&request(
            vec![
                busy("unknown", 4, &[("1", None, true)]),
                busy(
                    "late",
                    4,
                    &[("2", Some(NOW + 2 * HOUR), true), ("3", Some(NOW), true)],
                ),
                busy("soon", 4, &[("4", Some(NOW + HOUR), true)]),
            ],
            8,
        ));
        assert_eq!(plan.drain, ["soon", "late"]);
        assert!(plan.requeue.is_empty() && plan.release.is_empty());
    }

    #[test]
    fn a_node_bigger_than_what_is_left_is_skipped() {
        let plan = plan(&request(
            vec![idle("big", 8, NOW), busy("small", 2, &[("1", None, true)])],
            4,
        ));
        assert!(plan.release.is_empty());
        assert_eq!(plan.drain, ["small"]);
    }

    #[test]
    fn idle_nodes_park_until_their_paid_unit_ends() {
        let mut asked = request(vec![idle("paid", 4, NOW + HOUR), idle("done", 4, NOW)], 8);
        asked.park_until_paid_end = true;
        let plan = plan(&asked);
        assert_eq!(plan.release, ["done"]);
        assert_eq!(
            plan.park,
            [Parked {
                node: "paid".into(),
                release_at_ms: NOW + HOUR
            }]
        );
    }

    #[test]
    fn past_the_cap_only_fully_requeueable_nodes_are_requeued() {
        let mut draining = busy("a", 4, &[("1", None, true), ("2", None, true)]);
        draining.draining_since_ms = Some(NOW - 2 * HOUR);
        let mut pinned = busy("b", 4, &[("3", None, true), ("4", None, false)]);
        pinned.draining_since_ms = Some(NOW - 2 * HOUR);
        let mut fresh = busy("c", 4, &[("5", None, true)]);
        fresh.draining_since_ms = Some(NOW - 60_000);
        let mut asked = request(vec![pinned, fresh, draining], 12);
        asked.drain_cost_cap_ms = Some(HOUR);
        let plan = plan(&asked);
        assert_eq!(plan.drain, ["a", "b", "c"]);
        assert_eq!(
            plan.requeue,
            [Requeue {
                node: "a".into(),
                job_ids: vec!["1".into(), "2".into()],
                cancel_job_ids: vec![],
            }]
        );
    }

    #[test]
    fn force_requeues_at_once_no_requeue_nodes_last() {
        let mut asked = request(
            vec![
                busy("pinned", 4, &[("1", Some(NOW), false)]),
                busy("free", 4, &[("2", Some(NOW + HOUR), true)]),
            ],
            4,
        );
        asked.force = true;
        let plan = plan(&asked);
        assert_eq!(plan.requeue.len(), 1);
        assert_eq!(plan.requeue[0].node, "free");
        asked.gpus_to_release = 8;
        let plan = super::plan(&asked);
        assert_eq!(plan.requeue[1].cancel_job_ids, ["1"]);
    }

    #[test]
    fn the_budget_holds_what_does_not_fit_and_then_every_requeue() {
        let mut asked = request(
            vec![
                idle("i4", 4, NOW),
                idle("i2", 2, NOW + 1),
                busy("b1", 1, &[("1", None, true)]),
            ],
            7,
        );
        asked.force = true;
        asked.budget.max_gpus_per_window = Some(5);
        asked.budget.released_in_window = 2;
        let plan = plan(&asked);
        assert_eq!(plan.release, ["i2"]);
        assert_eq!(plan.drain, ["b1"]);
        assert!(plan.requeue.is_empty());
        assert_eq!(plan.held_by_budget, 5);
    }

    #[test]
    fn a_quiet_window_lets_idle_nodes_go_and_keeps_busy_ones() {
        let mut asked = request(
            vec![idle("i", 2, NOW), busy("b", 2, &[("1", None, true)])],
            4,
        );
        asked.force = true;
        asked.budget.quiet = true;
        let plan = plan(&asked);
        assert_eq!(plan.release, ["i"]);
        assert!(plan.drain.is_empty() && plan.requeue.is_empty());
        assert_eq!(plan.held_by_budget, 2);
    }

    #[test]
    fn the_percentage_rounds_down_and_the_stricter_limit_wins() {
        let budget = DisruptionBudget {
            max_pct_per_window: Some(10),
            pool_gpus: 8,
            ..DisruptionBudget::unlimited()
        };
        assert_eq!(budget.allowance_gpus(), Some(0));
        let budget = DisruptionBudget {
            max_gpus_per_window: Some(3),
            max_pct_per_window: Some(50),
            pool_gpus: 8,
            released_in_window: 1,
            ..DisruptionBudget::unlimited()
        };
        assert_eq!(budget.allowance_gpus(), Some(2));
        assert_eq!(DisruptionBudget::unlimited().allowance_gpus(), None);
    }
}
