//! The Slurm binder: keeps each pool bound to a partition (`slurm.toml`) at the nodes it
//! should have, one lease per Slurm node (the node's GPUs, its `slurmd` as the lease's
//! workload), level-triggered from what the agents and Slurm say each pass.
//!
//! - **Ebb-led** (`mode = "ebb"`): the pool's desired count (its rules on the queue
//!   metrics, or the slider) in whole nodes. Growing un-drains nodes draining for an
//!   earlier scale-in first, then leases free nodes. Shrinking is `ebb_slurm::drain::plan`:
//!   idle nodes go first, busy ones drain and go when their jobs end, jobs are requeued
//!   only past the drain cost cap or under `force`, all within the disruption budget.
//! - **Slurm-led** (`mode = "slurm"`): the nodes Slurm powers up are leased (also at once
//!   by `ebb slurm resume`), the ones it powers down are parked to the end of their paid
//!   unit, then released. A resume Ebb cannot serve marks the node down with the reason.
//!
//! The binder decides which nodes; it rents and releases nothing itself. Each node it
//! wants leased is handed to the planner as an exact request (the node's GPUs, its
//! slurmd), each node to give back as a release ([`SlurmBinder::take_orders`]): the
//! planner plans them with its own, the enforcer writes them to `lease_intents` and sends
//! them through the one sender ([`crate::enforce::sender`]), and tells the binder the answers
//! ([`SlurmBinder::answered`]). A node whose request is unanswered is in `lease_intents`,
//! sent again with the same key, never asked twice.
//!
//! Every pass the partition's queue metrics are stored as the pool's metrics
//! (`slurm_pending_gpus`, `slurm_allocated_gpus`, `slurm_demand_gpus`,
//! `slurm_pending_jobs`, `slurm_oldest_wait_minutes`), so rules scale on them; when Slurm
//! does not answer, none is stored, the metrics go stale and the rules stand still.

use super::api::{SlurmApi, SlurmSetup};
use super::ctl::{PartitionView, SlurmError};
use crate::pools::{NewActivity, Pool, PoolStore};
use ebb_reconcile::reconcile::{HostObs, NodeOrders, NodeRequest, Pending};
use ebb_slurm::binding::{Binding, Mode, NodeSlot, PartitionBinding};
use ebb_slurm::drain::{self, Candidate, DrainRequest, NodeLoad};
use ebb_slurm::queue::{NodeBase, NodeFlag, NodeInfo};
use ebb_wire::agent::{Lease, LeaseState};
use ebb_wire::pools::Actor;
use ebb_wire::reasons::{ChangeReason, NodeProblem, SlurmStep};
use ebb_wire::rules::MetricPush;
use std::collections::{BTreeMap, HashMap, HashSet};

/// The reason Ebb gives the nodes it drains or marks down, so it knows its own.
pub const REASON_PREFIX: &str = "ebb:";

/// The reason Ebb gives a node it releases (marked down until its slurmd stops).
const RELEASED_REASON: &str = "ebb: released";

/// The queue metric a bound pool is sized on: GPUs its partition's jobs ask for or hold.
pub const DEMAND_METRIC: &str = "slurm_demand_gpus";

pub use crate::config::{BINDING_FILE, load_binding};

/// One bound node as the agents show it now.
#[derive(Debug, Clone)]
pub struct HeldNode {
    pub slot: NodeSlot,
    pub lease: Lease,
}

/// What one pass sees.
#[derive(Debug)]
pub struct TickInput<'a> {
    pub store: &'a PoolStore,
    pub holder: &'a str,
    pub hosts: &'a [HostObs],
    pub pools: &'a [Pool],
    /// Lease requests written and not yet answered: a node asked for is not asked again.
    pub pending: &'a [Pending],
    pub now_ms: i64,
}

/// A node request's answer, as the binder needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeAnswer {
    Granted,
    /// Not granted: a GPU of the node was held by then (by another request for the same
    /// node, `ebb slurm resume` beside the daemon, or another tenant). Nothing is marked:
    /// the next pass sees the node held, or why it cannot be served.
    Taken,
    /// Certainly not granted, and why.
    Refused(NodeProblem),
}

impl NodeAnswer {
    /// The binder's reading of a refusal: GPUs held by then, or another reason.
    pub fn refused(problem: &ebb_wire::reasons::HostProblem) -> Self {
        use ebb_wire::agent::AgentErrorKind;
        match problem {
            ebb_wire::reasons::HostProblem::RefusedRequest {
                agent_kind: AgentErrorKind::GpuNotFree | AgentErrorKind::NotEnoughFree,
                ..
            } => NodeAnswer::Taken,
            other => NodeAnswer::Refused(NodeProblem::Refused {
                problem: other.clone(),
            }),
        }
    }
}

/// The binder's memory between passes (all of it rebuilt from Slurm and the agents after a
/// restart, but for how long a node has been draining, which then counts from the restart).
#[derive(Debug)]
pub struct SlurmBinder {
    binding: Option<Binding>,
    /// The binding was given in code (the demo's): `reload` keeps it.
    fixed: bool,
    ctl: std::sync::Arc<dyn SlurmApi>,
    /// What this pass asks the planner for, by pool id.
    orders: BTreeMap<String, NodeOrders>,
    /// Each pool's price per GPU-hour by host (its region's), for the cost of a node
    /// leased or released in the log.
    prices: HashMap<String, HashMap<String, i64>>,
    draining_since: HashMap<String, i64>,
    /// GPUs released per pool, with when, for the disruption budget's window.
    released: HashMap<String, Vec<(i64, u32)>>,
    /// What was last said per node, so the log says each step once.
    said: HashMap<String, String>,
    /// Whether the last look at each partition failed (said once until it answers).
    unreachable: HashMap<String, bool>,
    /// When each partition was last read, with its pool's desired count then.
    last_read: HashMap<String, (i64, u32)>,
    /// Jobs Ebb requeued (with when), to let start again at once once Slurm has them
    /// pending.
    requeued: HashMap<String, i64>,
    /// Held nodes Slurm set unavailable on its own: since when, and when Ebb resumed them.
    troubled: HashMap<String, Troubled>,
    /// Nodes given up as not coming back, with when: not leased again for a while.
    replaced: HashMap<String, i64>,
    /// Jobs Slurm held after a failed launch, with how often Ebb released them.
    unheld: HashMap<String, u32>,
    /// Leases of nodes granted lately that Slurm does not have in service yet (slurmd not
    /// registered, the node powering up): warming, not ready.
    not_registered: HashSet<String>,
}

/// A held node Slurm drained or set down for a reason not Ebb's, now or lately.
#[derive(Debug, Clone, Default)]
struct Troubled {
    /// Out of service since; `None` while in service.
    since_ms: Option<i64>,
    /// When Ebb told Slurm to resume it, within the last [`REPLACE_AFTER_MS`].
    resumed_at_ms: Vec<i64>,
}

/// A held node Slurm keeps out of service this long (not answering, or set unavailable
/// again after [`MAX_RESUMES`] resumes) is replaced: its lease released and another node
/// leased, where one is free.
pub const REPLACE_AFTER_MS: i64 = 3 * 60_000;

/// The resumes a node gets within [`REPLACE_AFTER_MS`] before it is taken as not coming
/// back.
pub const MAX_RESUMES: usize = 3;

/// How long a replaced node is not leased again.
pub const REPLACED_FOR_MS: i64 = 30 * 60_000;

/// How often Ebb releases a job Slurm held after its launch failed: a job that fails to
/// launch again stays held, for a person to look at.
pub const MAX_HELD_RELEASES: u32 = 2;

/// How often a settled partition is read: `sinfo` and two `squeue` cost about 30 ms of CPU
/// at 1,000 queued jobs, so reading every pass would cost 0.03 of a core. A partition is
/// read at once when its pool's desired count moved or a node of it is in transition
/// (draining, a lease request unanswered).
pub const SETTLED_READ_MS: i64 = 5_000;

impl SlurmBinder {
    pub fn new(setup: SlurmSetup) -> Self {
        Self {
            fixed: setup.binding.is_some(),
            binding: setup.binding,
            ctl: setup.api,
            orders: BTreeMap::new(),
            prices: HashMap::new(),
            draining_since: HashMap::new(),
            released: HashMap::new(),
            said: HashMap::new(),
            unreachable: HashMap::new(),
            last_read: HashMap::new(),
            requeued: HashMap::new(),
            troubled: HashMap::new(),
            replaced: HashMap::new(),
            unheld: HashMap::new(),
            not_registered: HashSet::new(),
        }
    }

    /// The binder over `api` with `binding` (read from the data directory by the caller).
    pub fn over(binding: Binding, api: std::sync::Arc<dyn SlurmApi>) -> Self {
        let mut binder = Self::new(SlurmSetup { api, binding: None });
        binder.binding = Some(binding);
        binder
    }

    /// The binding in the data directory; a broken file keeps the last good one (and is
    /// logged), so a typo never hands a bound pool's nodes to the count planner.
    pub fn reload(&mut self, files: &crate::config::ConsoleConfig) {
        if self.fixed {
            return;
        }
        match &*files.slurm_binding() {
            Ok(binding) => self.binding.clone_from(binding),
            Err(error) => {
                tracing::warn!(%error, "the Slurm binding does not read; keeping the last one")
            }
        }
    }

    /// Whether `pool` (by name) is bound to a partition: its leases are the binder's.
    pub fn binds(&self, pool: &str) -> bool {
        self.binding
            .as_ref()
            .is_some_and(|binding| binding.of_pool(pool).is_some())
    }

    /// The GPUs an Ebb-led bound pool holds once settled: its desired count in whole nodes,
    /// within the partition's node limits. `None` for a pool bound to no partition, or to
    /// a Slurm-led one (Slurm decides its count).
    pub fn settled_gpus(&self, pool: &Pool) -> Option<u32> {
        let part = self.binding.as_ref()?.of_pool(&pool.name)?;
        (part.mode == Mode::Ebb).then(|| want_nodes(part, pool.desired) * part.gpus_per_node.max(1))
    }

    /// Each pool's price per GPU-hour on each host (its region's, on demand), from the
    /// planner's view of the pools and the hosts seen this pass.
    pub fn set_prices(
        &mut self,
        pools: &[ebb_reconcile::reconcile::PoolTarget],
        hosts: &[HostObs],
    ) {
        self.prices = pools
            .iter()
            .filter(|pool| pool.external)
            .map(|pool| {
                let by_host = hosts
                    .iter()
                    .filter_map(|host| {
                        let fen = pool.prices.get(host.region.trim())?;
                        Some((host.name.clone(), *fen))
                    })
                    .collect();
                (pool.id.clone(), by_host)
            })
            .collect();
    }

    /// The node requests and releases decided since last taken, by pool id: the planner's
    /// input for the bound pools.
    /// The leases of nodes granted lately that Slurm has not in service yet: the planner
    /// counts their GPUs warming, not ready.
    pub fn not_registered(&self) -> &HashSet<String> {
        &self.not_registered
    }

    pub fn take_orders(&mut self) -> BTreeMap<String, NodeOrders> {
        std::mem::take(&mut self.orders)
    }

    /// The answers to node requests (found by pool, host and GPUs): a granted node is said
    /// leased; one certainly refused cannot be served now (marked down in Slurm when
    /// Slurm leads, and said). Unanswered ones stay in `lease_intents`, sent again.
    pub async fn answered(
        &mut self,
        store: &PoolStore,
        pools: &[Pool],
        hosts: &[HostObs],
        answers: &[(Pending, NodeAnswer)],
    ) -> Result<(), crate::pools::PoolError> {
        let Some(binding) = self.binding.clone() else {
            return Ok(());
        };
        for (intent, answer) in answers {
            let Some(pool) = pools.iter().find(|pool| pool.id == intent.pool_id) else {
                continue;
            };
            let Some(part) = binding.of_pool(&pool.name) else {
                continue;
            };
            let Some(slot) = slot_of(part, &intent.host, &intent.gpu_uuids, hosts) else {
                continue;
            };
            match answer {
                NodeAnswer::Granted => {
                    self.said.remove(&slot.name);
                    let node = std::slice::from_ref(&slot.name);
                    self.log(store, pool, part, node, SlurmStep::Resumed)
                        .await?;
                }
                NodeAnswer::Taken => {}
                NodeAnswer::Refused(problem) => {
                    self.cannot_serve(part, pool, &slot, problem, store).await?;
                }
            }
        }
        Ok(())
    }

    /// The pools Ebb sizes in whole nodes (Ebb-led partitions): pool id → GPUs a node.
    pub fn node_gpus(&self, pools: &[Pool]) -> HashMap<String, u32> {
        pools
            .iter()
            .filter_map(|pool| {
                let part = self.binding.as_ref()?.of_pool(&pool.name)?;
                (part.mode == Mode::Ebb).then(|| (pool.id.clone(), part.gpus_per_node.max(1)))
            })
            .collect()
    }

    /// One pass over every bound partition. Errors are logged, never fatal: a partition
    /// Slurm does not answer for stands still.
    pub async fn tick(&mut self, input: &TickInput<'_>) {
        let Some(binding) = self.binding.clone() else {
            return;
        };
        for part in &binding.partitions {
            let Some(pool) = input.pools.iter().find(|pool| pool.name == part.pool) else {
                continue;
            };
            if let Err(error) = self.partition(part, pool, input).await {
                tracing::warn!(partition = %part.name, %error, "the Slurm partition could not be kept");
            }
        }
    }

    async fn partition(
        &mut self,
        part: &PartitionBinding,
        pool: &Pool,
        input: &TickInput<'_>,
    ) -> Result<(), crate::pools::PoolError> {
        let asked = asked_nodes(part, pool, input);
        let busy = !self.requeued.is_empty()
            || !asked.is_empty()
            || part.nodes.iter().any(|slot| {
                self.draining_since.contains_key(&slot.name)
                    || self.troubled.contains_key(&slot.name)
            });
        let due = match self.last_read.get(&part.name) {
            Some((at, desired)) => {
                busy || *desired != pool.desired || input.now_ms - at >= SETTLED_READ_MS
            }
            None => true,
        };
        if !due {
            return Ok(());
        }
        self.last_read
            .insert(part.name.clone(), (input.now_ms, pool.desired));
        let held = held_nodes(part, pool, input);
        let held_names: Vec<String> = held.iter().map(|node| node.slot.name.clone()).collect();
        let view = match self
            .ctl
            .partition(&part.name, &held_names, input.now_ms)
            .await
        {
            Ok(view) => {
                self.unreachable.insert(part.name.clone(), false);
                view
            }
            Err(error) => {
                if !self
                    .unreachable
                    .insert(part.name.clone(), true)
                    .unwrap_or(false)
                {
                    tracing::warn!(partition = %part.name, %error, "Slurm does not answer: the pool stands still");
                }
                return Ok(());
            }
        };
        self.not_registered
            .retain(|id| !held.iter().any(|node| &node.lease.id == id));
        self.not_registered.extend(
            held.iter()
                .filter(|node| coming_up(node, view.node(&node.slot.name), input.now_ms))
                .map(|node| node.lease.id.clone()),
        );
        input
            .store
            .push_metrics(&metrics(pool, &view))
            .await
            .map_err(|(_, error)| error)?;
        self.start_requeued(&view, input.now_ms).await;
        self.release_held(part, pool, &view, input).await?;
        match part.mode {
            Mode::Ebb => {
                // A node its host is taking back is not counted: its replacement is leased
                // now; it is drained and its jobs requeued, so they run there.
                let (going, kept): (Vec<HeldNode>, Vec<HeldNode>) = held
                    .into_iter()
                    .partition(|node| node.lease.reclaim_deadline_ms.is_some());
                self.reclaimed(part, pool, &view, &going, input).await?;
                let kept = self
                    .replace_lost(part, pool, &view, kept, &asked, input)
                    .await?;
                self.ebb_led(part, pool, &view, &kept, &asked, input).await
            }
            Mode::Slurm => {
                self.slurm_led(part, pool, &view, &held, &asked, input)
                    .await
            }
        }
    }

    async fn ebb_led(
        &mut self,
        part: &PartitionBinding,
        pool: &Pool,
        view: &PartitionView,
        held: &[HeldNode],
        asked: &[String],
        input: &TickInput<'_>,
    ) -> Result<(), crate::pools::PoolError> {
        let per_node = part.gpus_per_node.max(1);
        let want_nodes = want_nodes(part, pool.desired);
        let held_count = u32::try_from(held.len()).unwrap_or(u32::MAX);
        let draining: Vec<&HeldNode> = held
            .iter()
            .filter(|node| view.node(&node.slot.name).is_some_and(drained_by_ebb))
            .collect();
        if want_nodes >= held_count {
            // Nothing to give back: every node Ebb drained is wanted again, and every node
            // Slurm took out of service on its own goes back in.
            let back: Vec<String> = draining.iter().map(|n| n.slot.name.clone()).collect();
            self.undrain(input.store, pool, part, &back).await?;
            let all: Vec<&HeldNode> = held.iter().collect();
            self.resume_troubled(part, pool, view, &all, input).await?;
            // Nodes asked for and not yet answered count as coming.
            let coming = u32::try_from(asked.len()).unwrap_or(u32::MAX);
            let missing = (want_nodes - held_count).saturating_sub(coming);
            let free = self.free_slots(part, held, asked, view, input);
            for slot in free.into_iter().take(missing as usize) {
                self.rent(part, pool, &slot, input).await?;
            }
            return Ok(());
        }
        // Scale-in: which nodes go, decided in ebb-slurm.
        let window_ms = part
            .budget
            .as_ref()
            .map_or(0, |budget| i64::from(budget.window_minutes) * 60_000);
        let released = self.released.entry(pool.id.clone()).or_default();
        released.retain(|(at, _)| input.now_ms - at < window_ms);
        let released_in_window: u32 = released.iter().map(|(_, gpus)| gpus).sum();
        let candidates: Vec<Candidate> = held
            .iter()
            .map(|node| Candidate {
                name: node.slot.name.clone(),
                gpus: per_node,
                load: match view.running.get(&node.slot.name) {
                    Some(jobs) if !jobs.is_empty() => NodeLoad::Busy { jobs: jobs.clone() },
                    _ => NodeLoad::Idle,
                },
                paid_until_ms: paid_until(&node.lease, pool, input.now_ms),
                draining_since_ms: view
                    .node(&node.slot.name)
                    .filter(|info| drained_by_ebb(info))
                    .map(|_| {
                        *self
                            .draining_since
                            .entry(node.slot.name.clone())
                            .or_insert(input.now_ms)
                    }),
            })
            .collect();
        let plan = drain::plan(&DrainRequest {
            candidates,
            gpus_to_release: (held_count - want_nodes) * per_node,
            budget: part.budget(
                released_in_window,
                held_count * per_node,
                quiet_now(input.store, pool, input.now_ms).await,
            ),
            drain_cost_cap_ms: part.drain_cap_ms(),
            park_until_paid_end: pool.release_at_unit_end && !pool.force_release,
            force: pool.force_release,
            now_ms: input.now_ms,
        });
        // Drain what should drain (idempotent); un-drain what no longer should.
        let to_drain: Vec<String> = plan
            .drain
            .iter()
            .filter(|name| !draining.iter().any(|node| &&node.slot.name == name))
            .cloned()
            .collect();
        if !to_drain.is_empty() {
            let reason = format!("{REASON_PREFIX} scale-in");
            self.ctl
                .set_state(&to_drain, "drain", Some(&reason))
                .await?;
            for name in &to_drain {
                self.draining_since.insert(name.clone(), input.now_ms);
            }
            self.log(input.store, pool, part, &to_drain, SlurmStep::Drained)
                .await?;
        }
        let undrain: Vec<String> = draining
            .iter()
            .map(|node| node.slot.name.clone())
            .filter(|name| !plan.drain.contains(name) && !plan.release.contains(name))
            .collect();
        self.undrain(input.store, pool, part, &undrain).await?;
        let staying: Vec<&HeldNode> = held
            .iter()
            .filter(|node| {
                !plan.drain.contains(&node.slot.name) && !plan.release.contains(&node.slot.name)
            })
            .collect();
        self.resume_troubled(part, pool, view, &staying, input)
            .await?;
        for requeue in &plan.requeue {
            for job in &requeue.job_ids {
                self.ctl.requeue(job).await?;
                self.requeued.insert(job.clone(), input.now_ms);
            }
            // Under `force` only: a job that cannot be requeued (`--no-requeue`) ends.
            for job in &requeue.cancel_job_ids {
                self.ctl.cancel(job).await?;
            }
            let node = std::slice::from_ref(&requeue.node);
            if !requeue.job_ids.is_empty() {
                let jobs = requeue.job_ids.clone();
                self.log(input.store, pool, part, node, SlurmStep::Requeued { jobs })
                    .await?;
            }
            if !requeue.cancel_job_ids.is_empty() {
                let jobs = requeue.cancel_job_ids.clone();
                self.log(input.store, pool, part, node, SlurmStep::Cancelled { jobs })
                    .await?;
            }
        }
        for parked in &plan.park {
            self.log(
                input.store,
                pool,
                part,
                std::slice::from_ref(&parked.node),
                SlurmStep::Parked {
                    until_ms: parked.release_at_ms,
                },
            )
            .await?;
        }
        let going: Vec<&HeldNode> = held
            .iter()
            .filter(|node| plan.release.contains(&node.slot.name))
            .collect();
        self.release(part, pool, &going, true, input).await
    }

    async fn slurm_led(
        &mut self,
        part: &PartitionBinding,
        pool: &Pool,
        view: &PartitionView,
        held: &[HeldNode],
        asked: &[String],
        input: &TickInput<'_>,
    ) -> Result<(), crate::pools::PoolError> {
        // Powered down (or going): parked until the paid unit ends, then released.
        let mut due = Vec::new();
        for node in held {
            let Some(info) = view.node(&node.slot.name) else {
                continue;
            };
            if !powered_down(info) {
                continue;
            }
            let until_ms = paid_until(&node.lease, pool, input.now_ms);
            if input.now_ms >= until_ms || !pool.release_at_unit_end {
                due.push(node);
            } else {
                self.log(
                    input.store,
                    pool,
                    part,
                    std::slice::from_ref(&node.slot.name),
                    SlurmStep::Parked { until_ms },
                )
                .await?;
            }
        }
        self.release(part, pool, &due, false, input).await?;
        // Powering up and not held: lease it now.
        for slot in &part.nodes {
            let Some(info) = view.node(&slot.name) else {
                continue;
            };
            let up = info.state.has(NodeFlag::PoweringUp);
            if up
                && !held.iter().any(|node| node.slot.name == slot.name)
                && !asked.contains(&slot.name)
                && let Err(error) = self.rent(part, pool, slot, input).await
            {
                tracing::warn!(node = %slot.name, %error, "cannot resume");
            }
        }
        Ok(())
    }

    /// Nodes whose hosts take them back (a reclaim's notice): drained in Slurm so no job
    /// starts there, and their jobs requeued at once so they run on the replacement (a job
    /// that cannot be requeued runs on until the deadline).
    async fn reclaimed(
        &mut self,
        part: &PartitionBinding,
        pool: &Pool,
        view: &PartitionView,
        going: &[HeldNode],
        input: &TickInput<'_>,
    ) -> Result<(), crate::pools::PoolError> {
        let reason = format!("{REASON_PREFIX} reclaimed by its host");
        let to_drain: Vec<String> = going
            .iter()
            .filter(|node| {
                view.node(&node.slot.name)
                    .is_some_and(|info| info.reason.as_deref() != Some(reason.as_str()))
            })
            .map(|node| node.slot.name.clone())
            .collect();
        if !to_drain.is_empty() {
            self.ctl
                .set_state(&to_drain, "drain", Some(&reason))
                .await?;
        }
        for node in going {
            let jobs: Vec<String> = view
                .running
                .get(&node.slot.name)
                .into_iter()
                .flatten()
                .filter(|job| job.requeueable)
                .map(|job| job.id.clone())
                .filter(|id| !self.requeued.contains_key(id))
                .collect();
            for job in &jobs {
                self.ctl.requeue(job).await?;
                self.requeued.insert(job.clone(), input.now_ms);
            }
            if !jobs.is_empty() {
                self.log(
                    input.store,
                    pool,
                    part,
                    std::slice::from_ref(&node.slot.name),
                    SlurmStep::Requeued { jobs },
                )
                .await?;
            }
        }
        Ok(())
    }

    /// Held nodes Slurm keeps out of service that will not come back (not answering for
    /// [`REPLACE_AFTER_MS`], or set unavailable again after [`MAX_RESUMES`] resumes):
    /// released, each said with Slurm's reason, where a free node can take its place (the
    /// grow step leases it this pass). The nodes still held are returned.
    async fn replace_lost(
        &mut self,
        part: &PartitionBinding,
        pool: &Pool,
        view: &PartitionView,
        held: Vec<HeldNode>,
        asked: &[String],
        input: &TickInput<'_>,
    ) -> Result<Vec<HeldNode>, crate::pools::PoolError> {
        let held_names: Vec<&str> = held.iter().map(|node| node.slot.name.as_str()).collect();
        self.troubled
            .retain(|name, _| held_names.contains(&name.as_str()));
        self.replaced
            .retain(|_, at| input.now_ms - *at < REPLACED_FOR_MS);
        let mut spare = self.free_slots(part, &held, asked, view, input).len();
        let mut kept = Vec::with_capacity(held.len());
        let mut lost = Vec::new();
        for node in held {
            let name = node.slot.name.clone();
            let trouble = view.node(&name).and_then(slurms_trouble);
            let troubled = self.troubled.entry(name.clone()).or_default();
            troubled
                .resumed_at_ms
                .retain(|at| input.now_ms - at < REPLACE_AFTER_MS);
            let Some(reason) = trouble else {
                troubled.since_ms = None;
                if troubled.resumed_at_ms.is_empty() {
                    self.troubled.remove(&name);
                }
                kept.push(node);
                continue;
            };
            let since_ms = *troubled.since_ms.get_or_insert(input.now_ms);
            let gone = troubled.resumed_at_ms.len() >= MAX_RESUMES
                || input.now_ms - since_ms >= REPLACE_AFTER_MS;
            if gone && spare > 0 {
                spare -= 1;
                lost.push((node, reason));
            } else {
                kept.push(node);
            }
        }
        for (node, reason) in lost {
            let name = node.slot.name.clone();
            self.release(part, pool, &[&node], false, input).await?;
            self.troubled.remove(&name);
            self.replaced.insert(name.clone(), input.now_ms);
            self.log(
                input.store,
                pool,
                part,
                std::slice::from_ref(&name),
                SlurmStep::Replaced {
                    slurm_reason: reason,
                },
            )
            .await?;
        }
        Ok(kept)
    }

    /// Of `nodes` (held nodes Ebb keeps), those Slurm drained or set down on its own and
    /// that answer, their slurmd running: resumed (`scontrol update state=resume`), each
    /// said with Slurm's reason. A node Ebb drains itself is left as it is.
    async fn resume_troubled(
        &mut self,
        part: &PartitionBinding,
        pool: &Pool,
        view: &PartitionView,
        nodes: &[&HeldNode],
        input: &TickInput<'_>,
    ) -> Result<(), crate::pools::PoolError> {
        for node in nodes {
            let name = &node.slot.name;
            let Some(info) = view.node(name) else {
                continue;
            };
            let Some(reason) = slurms_trouble(info) else {
                continue;
            };
            // A node that does not answer, or whose slurmd the agent has not started yet,
            // is not resumed: Slurm would send it jobs it cannot launch. It registers first
            // (or is replaced once it has not for long enough).
            let slurmd_runs = part.slurmd.is_empty() || node.lease.workload_pid.is_some();
            if info.state.has(NodeFlag::NotResponding) || !slurmd_runs {
                continue;
            }
            self.ctl
                .set_state(std::slice::from_ref(name), "resume", None)
                .await?;
            let troubled = self.troubled.entry(name.clone()).or_default();
            troubled.since_ms.get_or_insert(input.now_ms);
            troubled.resumed_at_ms.push(input.now_ms);
            // Every resume said (at most MAX_RESUMES a node before it is replaced).
            let step = SlurmStep::Returned {
                slurm_reason: reason,
            };
            self.said.insert(name.clone(), format!("{step:?}"));
            log_step(input.store, pool, part, std::slice::from_ref(name), step).await?;
        }
        Ok(())
    }

    /// Nodes not held whose GPUs are all free and healthy on a host that answers, in the
    /// binding's order; not one given up lately as not coming back, nor one Slurm keeps
    /// drained for a reason not Ebb's (an admin's, or Slurm's own).
    fn free_slots(
        &self,
        part: &PartitionBinding,
        held: &[HeldNode],
        asked: &[String],
        view: &PartitionView,
        input: &TickInput<'_>,
    ) -> Vec<NodeSlot> {
        part.nodes
            .iter()
            .filter(|slot| !held.iter().any(|node| node.slot.name == slot.name))
            .filter(|slot| !asked.contains(&slot.name))
            .filter(|slot| !self.replaced.contains_key(&slot.name))
            .filter(|slot| {
                view.node(&slot.name).is_none_or(|info| {
                    !(matches!(info.state.base, NodeBase::Drained | NodeBase::Draining)
                        && slurms_trouble(info).is_some())
                })
            })
            .filter(|slot| slot_uuids(slot, input.hosts).is_ok())
            .cloned()
            .collect()
    }

    /// Nodes Ebb drained, wanted again: back in service, said once.
    async fn undrain(
        &mut self,
        store: &PoolStore,
        pool: &Pool,
        part: &PartitionBinding,
        names: &[String],
    ) -> Result<(), crate::pools::PoolError> {
        if names.is_empty() {
            return Ok(());
        }
        self.ctl.set_state(names, "resume", None).await?;
        for name in names {
            self.draining_since.remove(name);
        }
        self.log(store, pool, part, names, SlurmStep::Undrained)
            .await
    }

    /// Jobs Slurm held because their launch failed on a node (after a controller restart,
    /// `Duplicate jobid` on a node still running them; the node drains, and Ebb resumes or
    /// replaces it): released to run again, each at most [`MAX_HELD_RELEASES`] times, said
    /// in the pool's activity. Jobs a user or an admin held are left alone.
    async fn release_held(
        &mut self,
        part: &PartitionBinding,
        pool: &Pool,
        view: &PartitionView,
        input: &TickInput<'_>,
    ) -> Result<(), crate::pools::PoolError> {
        self.unheld
            .retain(|id, _| view.jobs.iter().any(|job| &job.job_id == id));
        let mut released = Vec::new();
        for job in &view.jobs {
            if job.state != ebb_slurm::queue::JobState::Pending
                || !ebb_slurm::queue::held_after_failed_launch(&job.reason)
            {
                continue;
            }
            let count = self.unheld.entry(job.job_id.clone()).or_insert(0);
            if *count >= MAX_HELD_RELEASES {
                continue;
            }
            match self.ctl.release_job(&job.job_id).await {
                Ok(()) => {
                    *count += 1;
                    released.push(job.job_id.clone());
                }
                Err(error) => {
                    tracing::warn!(job = %job.job_id, %error, "a job Slurm held stays held")
                }
            }
        }
        if released.is_empty() {
            return Ok(());
        }
        log_step(
            input.store,
            pool,
            part,
            &[],
            SlurmStep::Unheld { jobs: released },
        )
        .await
    }

    /// The jobs Ebb requeued that Slurm now holds back (`BeginTime`): let them start now.
    /// Forgotten once let go, started or gone, or after five minutes.
    async fn start_requeued(&mut self, view: &PartitionView, now_ms: i64) {
        let mut done = Vec::new();
        for (id, at) in &self.requeued {
            let job = view.jobs.iter().find(|job| &job.job_id == id);
            match job {
                None => done.push(id.clone()),
                Some(job)
                    if job.state == ebb_slurm::queue::JobState::Pending
                        && job.reason.starts_with("BeginTime") =>
                {
                    if let Err(error) = self.ctl.start_now(id).await {
                        tracing::warn!(job = %id, %error, "a requeued job stays held back");
                    }
                    done.push(id.clone());
                }
                Some(job)
                    if job.state.holds_gpus()
                        && job.state != ebb_slurm::queue::JobState::Completing =>
                {
                    done.push(id.clone());
                }
                Some(_) if now_ms - at > 300_000 => done.push(id.clone()),
                Some(_) => {}
            }
        }
        for id in done {
            self.requeued.remove(&id);
        }
    }

    /// Asks the planner for a lease of a node's GPUs with its slurmd as the workload (sent
    /// this pass, once written to `lease_intents`). A node that cannot be served now (its
    /// GPUs taken, its host silent) is marked down in Slurm with the reason (Slurm-led)
    /// and logged.
    pub async fn rent(
        &mut self,
        part: &PartitionBinding,
        pool: &Pool,
        slot: &NodeSlot,
        input: &TickInput<'_>,
    ) -> Result<RentOutcome, crate::pools::PoolError> {
        let uuids = match slot_uuids(slot, input.hosts) {
            Ok(uuids) => uuids,
            Err(problem) => {
                self.cannot_serve(part, pool, slot, &problem, input.store)
                    .await?;
                return Ok(RentOutcome::CannotServe(problem));
            }
        };
        self.orders
            .entry(pool.id.clone())
            .or_default()
            .rent
            .push(NodeRequest {
                host: slot.host.clone(),
                gpu_uuids: uuids,
                command: Some(part.slurmd_argv(&slot.name)).filter(|argv| !argv.is_empty()),
            });
        Ok(RentOutcome::Asked)
    }

    async fn cannot_serve(
        &mut self,
        part: &PartitionBinding,
        pool: &Pool,
        slot: &NodeSlot,
        problem: &NodeProblem,
        store: &PoolStore,
    ) -> Result<(), crate::pools::PoolError> {
        if part.mode == Mode::Slurm {
            let reason = format!("{REASON_PREFIX} {problem}");
            if let Err(error) = self
                .ctl
                .set_state(std::slice::from_ref(&slot.name), "down", Some(&reason))
                .await
            {
                tracing::warn!(node = %slot.name, %error, "cannot mark the node down");
            }
        }
        self.log(
            store,
            pool,
            part,
            std::slice::from_ref(&slot.name),
            SlurmStep::CannotServe {
                problem: problem.clone(),
            },
        )
        .await
    }

    async fn release(
        &mut self,
        part: &PartitionBinding,
        pool: &Pool,
        going: &[&HeldNode],
        mark_down: bool,
        input: &TickInput<'_>,
    ) -> Result<(), crate::pools::PoolError> {
        if going.is_empty() {
            return Ok(());
        }
        let names: Vec<String> = going.iter().map(|node| node.slot.name.clone()).collect();
        if mark_down {
            // Nothing lands there between now and its slurmd stopping.
            self.ctl
                .set_state(&names, "down", Some(RELEASED_REASON))
                .await?;
        }
        let orders = self.orders.entry(pool.id.clone()).or_default();
        for node in going {
            // Released by the planner this pass; asked again next pass if it did not go.
            if !orders.release.contains(&node.lease.id) {
                orders.release.push(node.lease.id.clone());
            }
            self.draining_since.remove(&node.slot.name);
            self.released
                .entry(pool.id.clone())
                .or_default()
                .push((input.now_ms, part.gpus_per_node));
        }
        self.log(input.store, pool, part, &names, SlurmStep::Released)
            .await
    }

    /// Writes a step to the pool's activity once per node and step.
    async fn log(
        &mut self,
        store: &PoolStore,
        pool: &Pool,
        part: &PartitionBinding,
        nodes: &[String],
        step: SlurmStep,
    ) -> Result<(), crate::pools::PoolError> {
        let said = format!("{step:?}");
        let fresh: Vec<String> = nodes
            .iter()
            .filter(|node| self.said.get(*node) != Some(&said))
            .cloned()
            .collect();
        if fresh.is_empty() {
            return Ok(());
        }
        for node in &fresh {
            self.said.insert(node.clone(), said.clone());
        }
        // A node leased or released moves the pool's cost by its GPUs at its host's price.
        let sign = match step {
            SlurmStep::Resumed => Some(1),
            SlurmStep::Released => Some(-1),
            _ => None,
        };
        let delta = sign.and_then(|sign| {
            let prices = self.prices.get(&pool.id)?;
            fresh
                .iter()
                .map(|name| {
                    let slot = part.nodes.iter().find(|slot| &slot.name == name)?;
                    let gpus = i64::try_from(slot.gpu_indexes.len()).ok()?;
                    Some(sign * gpus * prices.get(&slot.host)?)
                })
                .sum::<Option<i64>>()
        });
        log_step_priced(store, pool, part, &fresh, step, delta).await
    }
}

/// What a node's rent came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RentOutcome {
    /// Asked of the planner: written to `lease_intents` and sent this pass.
    Asked,
    /// Not servable now, and said so (in Slurm and the log).
    CannotServe(NodeProblem),
}

/// A step of a Slurm-bound pool's nodes in its activity log.
pub async fn log_step(
    store: &PoolStore,
    pool: &Pool,
    part: &PartitionBinding,
    nodes: &[String],
    step: SlurmStep,
) -> Result<(), crate::pools::PoolError> {
    log_step_priced(store, pool, part, nodes, step, None).await
}

/// [`log_step`], with what the step moves the pool's cost by per hour (a node leased or
/// released).
pub async fn log_step_priced(
    store: &PoolStore,
    pool: &Pool,
    part: &PartitionBinding,
    nodes: &[String],
    step: SlurmStep,
    delta_per_hour_fen: Option<i64>,
) -> Result<(), crate::pools::PoolError> {
    let gpus = part.gpus_per_node * u32::try_from(nodes.len()).unwrap_or(u32::MAX);
    let actor = match part.mode {
        Mode::Ebb => Actor::Enforcer,
        Mode::Slurm => Actor::Slurm,
    };
    store
        .log(
            pool,
            &NewActivity {
                actor,
                from: pool.desired,
                to: pool.desired,
                reason: ChangeReason::Slurm {
                    partition: part.name.clone(),
                    nodes: ebb_slurm::hostlist::compress(nodes),
                    gpus,
                    step,
                },
                delta_per_hour_fen,
                delta_per_month_fen: None,
            },
        )
        .await
        .map(|_| ())
}

/// The partition's queue metrics as the pool's metrics, stored each pass.
fn metrics(pool: &Pool, view: &PartitionView) -> Vec<MetricPush> {
    let m = view.metrics;
    let wait_min = m.oldest_pending_wait_s.map_or(0.0, |s| s as f64 / 60.0);
    [
        ("slurm_pending_gpus", m.pending_gpus as f64),
        ("slurm_allocated_gpus", m.allocated_gpus as f64),
        (DEMAND_METRIC, (m.pending_gpus + m.allocated_gpus) as f64),
        ("slurm_pending_jobs", f64::from(m.pending_jobs)),
        ("slurm_oldest_wait_minutes", wait_min),
    ]
    .into_iter()
    .map(|(name, value)| MetricPush {
        name: name.to_string(),
        value,
        pool: Some(pool.name.clone()),
        at: None,
    })
    .collect()
}

/// The pool's leases that are the partition's nodes (exactly a node's GPUs), by node.
pub fn held_nodes(part: &PartitionBinding, pool: &Pool, input: &TickInput<'_>) -> Vec<HeldNode> {
    let mut held: BTreeMap<String, HeldNode> = BTreeMap::new();
    for host in input.hosts {
        let Some(seen) = &host.seen else { continue };
        for lease in &seen.leases {
            if lease.holder_id != input.holder
                || lease.pool_id != pool.id
                || lease.state != LeaseState::Active
            {
                continue;
            }
            if let Some(slot) = part.node_at(&host.name, &lease.gpu_indexes) {
                held.insert(
                    slot.name.clone(),
                    HeldNode {
                        slot: slot.clone(),
                        lease: lease.clone(),
                    },
                );
            }
        }
    }
    held.into_values().collect()
}

/// The nodes of `pool` with a lease request written and not yet answered.
fn asked_nodes(part: &PartitionBinding, pool: &Pool, input: &TickInput<'_>) -> Vec<String> {
    input
        .pending
        .iter()
        .filter(|intent| intent.pool_id == pool.id)
        .filter_map(|intent| slot_of(part, &intent.host, &intent.gpu_uuids, input.hosts))
        .map(|slot| slot.name)
        .collect()
}

/// The node whose GPUs on `host` are exactly `uuids` (by the host's GPU indexes).
fn slot_of(
    part: &PartitionBinding,
    host: &str,
    uuids: &[String],
    hosts: &[HostObs],
) -> Option<NodeSlot> {
    let seen = hosts.iter().find(|h| h.name == host)?.seen.as_ref()?;
    let indexes: Vec<u32> = uuids
        .iter()
        .map(|uuid| {
            seen.gpus
                .iter()
                .find(|gpu| &gpu.uuid == uuid)
                .map(|gpu| gpu.index)
        })
        .collect::<Option<_>>()?;
    part.node_at(host, &indexes).cloned()
}

/// The UUIDs of a node's GPUs when all are free and healthy now; else why not.
fn slot_uuids(slot: &NodeSlot, hosts: &[HostObs]) -> Result<Vec<String>, NodeProblem> {
    let host = slot.host.clone();
    let Some(observed) = hosts.iter().find(|observed| observed.name == slot.host) else {
        return Err(NodeProblem::HostNotRegistered { host });
    };
    let Some(seen) = &observed.seen else {
        return Err(NodeProblem::HostSilent { host });
    };
    let mut uuids = Vec::with_capacity(slot.gpu_indexes.len());
    for &index in &slot.gpu_indexes {
        let Some(gpu) = seen.gpus.iter().find(|gpu| gpu.index == index) else {
            return Err(NodeProblem::NoSuchGpu { host, index });
        };
        if gpu.lease_id.is_some() {
            return Err(NodeProblem::GpuLeased { host, index });
        }
        if !gpu.healthy {
            return Err(NodeProblem::GpuUnhealthy { host, index });
        }
        uuids.push(gpu.uuid.clone());
    }
    Ok(uuids)
}

fn paid_until(lease: &Lease, pool: &Pool, now_ms: i64) -> i64 {
    let granted = i64::try_from(lease.created_at_ms).unwrap_or(i64::MAX);
    ebb_reconcile::placement::paid_until(granted, pool.unit_ms(), now_ms)
}

/// Whether a quiet window of the pool's enabled rules (`[[scale_in.quiet]]`) is on: then
/// no busy node is drained, idle ones still go. Rules that do not read hold none.
async fn quiet_now(store: &PoolStore, pool: &Pool, now_ms: i64) -> bool {
    match store.rules(&pool.name).await {
        Ok(Some(stored)) if stored.mode == ebb_wire::rules::RulesMode::Enabled => {
            ebb_rules::model::parse(&stored.source)
                .is_ok_and(|rules| rules.quiet_windows().is_on(now_ms))
        }
        Ok(_) => false,
        Err(error) => {
            tracing::warn!(pool = %pool.name, %error, "cannot read the pool's rules for its quiet windows");
            false
        }
    }
}

/// The nodes `desired` GPUs take: whole nodes, within the partition's limits.
fn want_nodes(part: &PartitionBinding, desired: u32) -> u32 {
    desired
        .div_ceil(part.gpus_per_node.max(1))
        .clamp(part.min_nodes, part.max_nodes)
}

/// Drained (or draining) by Ebb's scale-in, by its reason.
/// Whether a node granted lately is not in Slurm's service yet: not listed, or not idle or
/// allocated, or not responding or powering up (slurmd has not registered). Within
/// [`REPLACE_AFTER_MS`] of its grant only: a node out of service longer is troubled, not
/// warming. Pure.
fn coming_up(node: &HeldNode, info: Option<&NodeInfo>, now_ms: i64) -> bool {
    let granted_ms = i64::try_from(node.lease.created_at_ms).unwrap_or(i64::MAX);
    let in_service = info.is_some_and(|info| {
        matches!(
            info.state.base,
            NodeBase::Idle
                | NodeBase::Allocated
                | NodeBase::Mixed
                | NodeBase::Completing
                | NodeBase::Drained
                | NodeBase::Draining
        ) && ![
            NodeFlag::NotResponding,
            NodeFlag::PoweredDown,
            NodeFlag::PoweringUp,
            NodeFlag::Rebooting,
        ]
        .iter()
        .any(|flag| info.state.has(*flag))
    });
    !in_service && now_ms.saturating_sub(granted_ms) < REPLACE_AFTER_MS
}

fn drained_by_ebb(info: &NodeInfo) -> bool {
    matches!(info.state.base, NodeBase::Drained | NodeBase::Draining)
        && info
            .reason
            .as_deref()
            .is_some_and(|reason| reason.starts_with(REASON_PREFIX))
}

/// Slurm's reason when a node is drained, draining or down for a reason that is not Ebb's
/// own intent: Slurm's own (`Duplicate jobid`, `Not responding`, `Kill task failed`, …),
/// an admin's, or none given. Ebb's `released` on a drained node counts too: a node held
/// again is wanted, so that mark is stale. `None` for a node in service, powered down or powering up by power
/// saving, or drained by Ebb (scale-in, a reclaim).
fn slurms_trouble(info: &NodeInfo) -> Option<String> {
    if !matches!(
        info.state.base,
        NodeBase::Drained | NodeBase::Draining | NodeBase::Down
    ) || powered_down(info)
        || info.state.has(NodeFlag::PoweringUp)
    {
        return None;
    }
    let reason = info.reason.clone().unwrap_or_default();
    if reason == RELEASED_REASON {
        // Down only: its slurmd registering brings it back (ReturnToService). Drained as
        // well (Slurm drained it before Ebb let it go): that stays until resumed.
        return (info.state.base != NodeBase::Down).then_some(reason);
    }
    (!reason.starts_with(REASON_PREFIX)).then_some(reason)
}

/// Powered down by Slurm's power saving, or on its way there.
fn powered_down(info: &NodeInfo) -> bool {
    info.state.has(NodeFlag::PoweredDown)
        || info.state.has(NodeFlag::PoweringDown)
        || info.state.has(NodeFlag::PowerDownPending)
}

/// A bound partition as the Pool view shows it: Slurm's look (or why there is none) and
/// the leases behind its nodes.
pub fn pool_view(
    part: &PartitionBinding,
    held: &[HeldNode],
    view: Result<PartitionView, SlurmError>,
    now_ms: i64,
) -> ebb_wire::slurm::SlurmPoolView {
    use ebb_slurm::queue::JobState;
    use ebb_wire::slurm::{
        SlurmJobState, SlurmJobView, SlurmMode, SlurmNodeState, SlurmNodeView, SlurmPoolView,
        SlurmQueue,
    };
    let small = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
    let (look, unreachable) = match view {
        Ok(view) => (Some(view), None),
        Err(error) => (None, Some(error.to_string())),
    };
    let nodes = part
        .nodes
        .iter()
        .map(|slot| {
            let lease = held.iter().find(|node| node.slot.name == slot.name);
            let info = look.as_ref().and_then(|view| view.node(&slot.name));
            let state = match info {
                None => SlurmNodeState::Other,
                Some(info) if powered_down(info) && lease.is_some() => SlurmNodeState::Parked,
                Some(info) if powered_down(info) => SlurmNodeState::PoweredDown,
                Some(info) if info.state.has(NodeFlag::PoweringUp) => SlurmNodeState::PoweringUp,
                Some(info) if info.state.has(NodeFlag::NotResponding) => SlurmNodeState::Down,
                Some(info) => match info.state.base {
                    NodeBase::Idle => SlurmNodeState::Idle,
                    NodeBase::Allocated | NodeBase::Mixed | NodeBase::Completing => {
                        SlurmNodeState::Allocated
                    }
                    NodeBase::Draining => SlurmNodeState::Draining,
                    NodeBase::Drained => SlurmNodeState::Drained,
                    NodeBase::Down => SlurmNodeState::Down,
                    _ => SlurmNodeState::Other,
                },
            };
            SlurmNodeView {
                name: slot.name.clone(),
                host: slot.host.clone(),
                gpu_indexes: slot.gpu_indexes.clone(),
                state,
                state_text: info.map_or_else(|| "unknown".to_string(), state_text),
                reason: info.and_then(|info| info.reason.clone()),
                lease_id: lease.map(|node| node.lease.id.clone()),
                jobs: look
                    .as_ref()
                    .and_then(|view| view.running.get(&slot.name))
                    .map(|jobs| jobs.iter().map(|job| job.id.clone()).collect())
                    .unwrap_or_default(),
            }
        })
        .collect();
    let mut jobs: Vec<SlurmJobView> = look
        .as_ref()
        .map(|view| {
            view.jobs
                .iter()
                .map(|job| SlurmJobView {
                    id: job.job_id.clone(),
                    state: match job.state {
                        JobState::Pending => SlurmJobState::Pending,
                        JobState::Running => SlurmJobState::Running,
                        JobState::Completing => SlurmJobState::Completing,
                        JobState::Configuring => SlurmJobState::Configuring,
                        _ => SlurmJobState::Other,
                    },
                    reason: job.reason.clone(),
                    gpus: small(job.gpus()),
                    waits_for_gpus: job.waits_for_gpus(now_ms),
                    waited_s: small(
                        u64::try_from((now_ms - job.submitted_at_ms).max(0) / 1000).unwrap_or(0),
                    ),
                })
                .collect()
        })
        .unwrap_or_default();
    let jobs_total = u32::try_from(jobs.len()).unwrap_or(u32::MAX);
    jobs.sort_by_key(|job| std::cmp::Reverse(job.waited_s));
    jobs.truncate(50);
    SlurmPoolView {
        partition: part.name.clone(),
        // The console says so when its Slurm is the demo's simulation.
        simulated: false,
        mode: match part.mode {
            Mode::Ebb => SlurmMode::Ebb,
            Mode::Slurm => SlurmMode::Slurm,
        },
        gpus_per_node: part.gpus_per_node,
        queue: look.as_ref().map(|view| SlurmQueue {
            pending_gpus: small(view.metrics.pending_gpus),
            allocated_gpus: small(view.metrics.allocated_gpus),
            pending_jobs: view.metrics.pending_jobs,
            oldest_wait_s: view.metrics.oldest_pending_wait_s.map(small),
        }),
        unreachable,
        nodes,
        jobs,
        jobs_total,
    }
}

/// Slurm's word for a node's state with its flag symbols (`idle~`, `down*`).
fn state_text(info: &NodeInfo) -> String {
    let base = match &info.state.base {
        NodeBase::Other(word) => word.clone(),
        other => format!("{other:?}").to_lowercase(),
    };
    let flags: String = info
        .state
        .flags
        .iter()
        .map(|flag| match flag {
            NodeFlag::NotResponding => '*',
            NodeFlag::PoweredDown => '~',
            NodeFlag::PoweringUp => '#',
            NodeFlag::PoweringDown => '%',
            NodeFlag::PowerDownPending => '!',
            NodeFlag::Maintenance => '$',
            NodeFlag::RebootPending => '@',
            NodeFlag::Rebooting => '^',
            NodeFlag::PlannedBackfill => '-',
            NodeFlag::Completing => '+',
        })
        .collect();
    format!("{base}{flags}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use ebb_slurm::queue::{NodeState, QueueMetrics};

    fn part() -> PartitionBinding {
        Binding::parse(
            "[[partition]]\nname = \"gpu\"\npool = \"train\"\nmode = \"slurm\"\ngpus_per_node = 2\n\
             [[partition.hosts]]\nhost = \"gpu-a\"\nnodes = \"gpu[1-2]\"\nport = 7001\n",
        )
        .unwrap()
        .partitions
        .remove(0)
    }

    fn node(name: &str, base: NodeBase, flags: Vec<NodeFlag>, reason: Option<&str>) -> NodeInfo {
        NodeInfo {
            name: name.into(),
            partition: "gpu".into(),
            default_partition: false,
            state: NodeState { base, flags },
            gpus: 2,
            reason: reason.map(str::to_string),
        }
    }

    fn lease(id: &str) -> Lease {
        serde_json::from_value(serde_json::json!({
            "id": id, "pool_id": "p", "holder_id": "h", "gpu_uuids": ["a", "b"],
            "gpu_indexes": [0, 1], "fencing_token": 1, "state": "active", "created_at_ms": 0,
            "release_requested_at_ms": null, "released_at_ms": null, "command": null,
            "load_profile": null, "workload_pid": null, "workload_exit_code": null,
            "workload_signal": null, "workload_log": null
        }))
        .unwrap()
    }

    #[test]
    fn a_powered_down_node_with_a_lease_is_parked_and_one_without_is_off() {
        let part = part();
        let view = PartitionView {
            jobs: Vec::new(),
            nodes: vec![
                node("gpu1", NodeBase::Idle, vec![NodeFlag::PoweredDown], None),
                node("gpu2", NodeBase::Idle, vec![NodeFlag::PoweredDown], None),
            ],
            running: BTreeMap::new(),
            metrics: QueueMetrics::default(),
        };
        let held = vec![HeldNode {
            slot: part.nodes[0].clone(),
            lease: lease("l-1"),
        }];
        let shown = pool_view(&part, &held, Ok(view), 0);
        use ebb_wire::slurm::SlurmNodeState;
        assert_eq!(shown.nodes[0].state, SlurmNodeState::Parked);
        assert_eq!(shown.nodes[0].lease_id.as_deref(), Some("l-1"));
        assert_eq!(shown.nodes[0].state_text, "idle~");
        assert_eq!(shown.nodes[1].state, SlurmNodeState::PoweredDown);
    }

    #[test]
    fn a_node_granted_lately_is_warming_until_slurm_has_it_in_service() {
        let part = part();
        let held = HeldNode {
            slot: part.nodes[0].clone(),
            lease: lease("l-1"),
        };
        let soon = 60_000;
        // Not listed yet, down, not responding or powering up: slurmd has not registered.
        assert!(coming_up(&held, None, soon));
        for (base, flags) in [
            (NodeBase::Down, vec![]),
            (NodeBase::Unknown, vec![]),
            (NodeBase::Idle, vec![NodeFlag::NotResponding]),
            (NodeBase::Idle, vec![NodeFlag::PoweringUp]),
        ] {
            let info = node("gpu1", base.clone(), flags.clone(), None);
            assert!(coming_up(&held, Some(&info), soon), "{base:?} {flags:?}");
        }
        // In service: ready, whether idle, running jobs or drained by Ebb.
        for base in [
            NodeBase::Idle,
            NodeBase::Allocated,
            NodeBase::Mixed,
            NodeBase::Draining,
        ] {
            let info = node("gpu1", base.clone(), vec![], None);
            assert!(!coming_up(&held, Some(&info), soon), "{base:?}");
        }
        // Out of service long after its grant: troubled, not warming.
        let down = node("gpu1", NodeBase::Down, vec![], None);
        assert!(!coming_up(&held, Some(&down), REPLACE_AFTER_MS));
    }

    #[test]
    fn slurm_away_is_said_and_no_queue_is_made_up() {
        let shown = pool_view(
            &part(),
            &[],
            Err(SlurmError::Timeout {
                program: "sinfo".into(),
                after_s: 5,
            }),
            0,
        );
        assert!(shown.queue.is_none());
        assert!(shown.unreachable.unwrap().contains("did not answer"));
    }

    #[test]
    fn a_node_whose_gpus_were_taken_meanwhile_is_not_marked_down() {
        use ebb_wire::agent::AgentErrorKind;
        use ebb_wire::reasons::HostProblem;
        let refused = |agent_kind| HostProblem::RefusedRequest {
            url: "http://gpu-a:7070".into(),
            status: 409,
            agent_kind,
            message: "held".into(),
        };
        // Another request for the same node (`ebb slurm resume` beside the daemon) won.
        assert_eq!(
            NodeAnswer::refused(&refused(AgentErrorKind::GpuNotFree)),
            NodeAnswer::Taken
        );
        assert_eq!(
            NodeAnswer::refused(&refused(AgentErrorKind::NotEnoughFree)),
            NodeAnswer::Taken
        );
        assert!(matches!(
            NodeAnswer::refused(&refused(AgentErrorKind::InvalidRequest)),
            NodeAnswer::Refused(_)
        ));
    }

    #[test]
    fn only_ebbs_own_drain_counts_as_its_scale_in() {
        assert!(drained_by_ebb(&node(
            "gpu1",
            NodeBase::Draining,
            vec![],
            Some("ebb: scale-in")
        )));
        assert!(!drained_by_ebb(&node(
            "gpu1",
            NodeBase::Drained,
            vec![],
            Some("maintenance by the admin")
        )));
    }
}
