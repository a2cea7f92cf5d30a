//! The reconcile planner, pure: from what the agents report now (not what the database
//! believes), what to rent, release and write off so every pool moves toward `desired`.
//!
//! Level-triggered: the plan depends only on the observation, so a pass can run again at
//! any moment (after a crash, twice in a row) and asks for no more than is missing.
//! Lease requests sent but not answered (intents, retried with their idempotency key)
//! count as pending, so nothing is asked for twice. A host unreachable for longer than the
//! grace period has its leases written off (fenced at its highest fencing token) and
//! replaced; when it comes back, every lease of ours at or below that fence is stale and
//! released, so the pool never stays above `desired`.

use ebb_wire::agent::{Gpu, Lease};
use ebb_wire::pools::{HostFree, PlacementPolicy, PoolHostView, PoolLeaseState, PoolLeaseView};
use ebb_wire::reasons::{HostProblem, PoolNote};
use std::collections::{BTreeMap, HashMap};

mod phases;

/// A pool as the planner needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolTarget {
    pub id: String,
    pub model: String,
    pub regions: Vec<String>,
    pub desired: u32,
    pub policy: PlacementPolicy,
    pub at_unit_end: bool,
    /// The overlay's paid unit, for release at unit end.
    pub unit_ms: i64,
    /// Price per GPU-hour by region, in fen.
    pub prices: BTreeMap<String, i64>,
    /// Leases the operator chose to give back first on the next scale-in.
    pub release_first: Vec<String>,
    /// Its nodes are chosen elsewhere (a pool bound to a Slurm partition: one lease per
    /// Slurm node, chosen and drained by the Slurm binder). The planner counts and shows
    /// its leases, GPUs not leases; it rents and releases for the pool only what `nodes`
    /// asks (and stale leases), never on its own count, scale-in or a host's removal.
    pub external: bool,
    /// An external pool's node requests this pass (the binder's).
    pub nodes: NodeOrders,
    /// Where spot GPUs may go, and how many of `desired` should.
    pub spot: SpotTarget,
}

/// What the Slurm binder asks the planner for an external pool: exact node leases to rent
/// and node leases to give back. The planner writes them as it writes its own (the one path
/// to a lease: written to `lease_intents`, sent, settled).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeOrders {
    pub rent: Vec<NodeRequest>,
    /// Lease ids to release (a node scaled in, parked to its unit's end, or replaced).
    pub release: Vec<String>,
}

/// One node's lease: exactly these GPUs on `host`, with the node's workload (its slurmd).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeRequest {
    pub host: String,
    pub gpu_uuids: Vec<String>,
    pub command: Option<Vec<String>>,
}

/// A pool's spot side for one pass.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SpotTarget {
    /// How many of the desired GPUs go on spot (the mix's split; 0 when the pool is not
    /// interruptible). Spot the pass cannot place goes on demand.
    pub wanted: u32,
    /// The spot price per GPU-hour by region, in fen, where spot may be taken: priced
    /// within the pool's max, and its breaker closed. A pool that is not interruptible has
    /// none, and never takes a GPU offered as spot.
    pub prices: BTreeMap<String, i64>,
}

/// What one host showed this pass.
#[derive(Debug, Clone, PartialEq)]
pub struct HostObs {
    pub name: String,
    pub region: String,
    /// Its GPUs and every lease it holds; `None` when it did not answer.
    pub seen: Option<Seen>,
    /// Since when it has not answered.
    pub down_since_ms: Option<i64>,
    /// Leases of ours at or below this fencing token were written off.
    pub lost_fence: Option<u64>,
    /// The host refuses our lease requests for itself (no token, or one without the lease
    /// scope): no new request goes there while this lasts (see [`Refusals`]).
    pub refusing: Option<HostProblem>,
    /// The operator is removing the host: nothing new goes there, and each pool's leases
    /// there are released once the pool holds their replacements elsewhere (at once when
    /// no host has room for them).
    pub draining: bool,
}

/// Hosts that refused our lease requests for themselves, each kept off new requests for a
/// backoff that doubles while the refusals go on (10 s, 20 s, ... at most 5 min), so a
/// token without the lease scope costs one request per backoff, not one per pass, and the
/// pool takes its GPUs elsewhere meanwhile.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Refusals(HashMap<String, Refusal>);

#[derive(Debug, Clone, PartialEq)]
struct Refusal {
    problem: HostProblem,
    until_ms: i64,
    backoff_ms: i64,
}

impl Refusals {
    pub const FIRST_BACKOFF_MS: i64 = 10_000;
    pub const MAX_BACKOFF_MS: i64 = 300_000;

    /// Whether a refusal is about the host rather than a GPU or the request.
    pub fn is_host_refusal(problem: &HostProblem) -> bool {
        matches!(
            problem,
            HostProblem::Unauthorized { .. } | HostProblem::Forbidden { .. }
        )
    }

    /// The host refused again (or for the first time) at `now_ms`.
    pub fn refused(&mut self, host: &str, problem: HostProblem, now_ms: i64) {
        let backoff_ms = self.0.get(host).map_or(Self::FIRST_BACKOFF_MS, |had| {
            (had.backoff_ms * 2).min(Self::MAX_BACKOFF_MS)
        });
        self.0.insert(
            host.to_string(),
            Refusal {
                problem,
                until_ms: now_ms + backoff_ms,
                backoff_ms,
            },
        );
    }

    /// The host granted a lease: forgiven.
    pub fn granted(&mut self, host: &str) {
        self.0.remove(host);
    }

    /// Marks each host still in its backoff at `now_ms`.
    pub fn mark(&self, hosts: &mut [HostObs], now_ms: i64) {
        for host in hosts {
            host.refusing = self
                .0
                .get(&host.name)
                .filter(|refusal| now_ms < refusal.until_ms)
                .map(|refusal| refusal.problem.clone());
        }
    }
}

/// Notes on each host since when it has been silent (`down`: host → since, kept across
/// passes and restarts): a host that answers is forgiven, a newly silent one is silent
/// from `now`, and a host no longer looked at is forgotten. Returns what changed, for the
/// record (`None`: forgotten).
pub fn mark_down(
    down: &mut HashMap<String, i64>,
    hosts: &mut [HostObs],
    now_ms: i64,
) -> Vec<(String, Option<i64>)> {
    let mut changed = Vec::new();
    let mut gone: Vec<String> = down
        .keys()
        .filter(|name| !hosts.iter().any(|h| &h.name == *name))
        .cloned()
        .collect();
    for host in hosts.iter_mut() {
        if host.seen.is_some() {
            if down.contains_key(&host.name) {
                gone.push(host.name.clone());
            }
        } else {
            let since = *down.entry(host.name.clone()).or_insert_with(|| {
                changed.push((host.name.clone(), Some(now_ms)));
                now_ms
            });
            host.down_since_ms = Some(since);
        }
    }
    gone.sort();
    for name in gone {
        down.remove(&name);
        changed.push((name, None));
    }
    changed
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Seen {
    pub gpus: Vec<Gpu>,
    pub leases: Vec<Lease>,
}

/// A lease of ours as last recorded, for hosts that do not answer.
#[derive(Debug, Clone, PartialEq)]
pub struct KnownLease {
    pub host: String,
    pub lease_id: String,
    pub pool_id: String,
    pub fencing_token: u64,
    pub gpu_uuids: Vec<String>,
    pub gpu_indexes: Vec<u32>,
    pub granted_at_ms: i64,
}

/// A lease request sent and not yet answered for certain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    pub key: String,
    pub pool_id: String,
    pub host: String,
    /// One GPU for a count pool; a node's GPUs for a bound one.
    pub gpu_uuids: Vec<String>,
    /// The lease's workload (a Slurm node's slurmd), if any.
    pub command: Option<Vec<String>>,
}

/// Everything one pass looks at.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    pub now_ms: i64,
    /// This console's holder id: only its leases are ours.
    pub holder: &'a str,
    pub grace_ms: i64,
    pub pools: &'a [PoolTarget],
    pub hosts: &'a [HostObs],
    pub known: &'a [KnownLease],
    pub pending: &'a [Pending],
}

/// Why a lease is given back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// The pool holds more than desired.
    ScaleIn,
    /// Written off while its host was away, and replaced since.
    Stale,
    /// Its pool no longer exists.
    Orphan,
    /// Its host is being removed; the pool holds a replacement elsewhere.
    Drain,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Create {
    pub pool_id: String,
    pub host: String,
    /// One GPU for a count pool; a node's GPUs for a bound one.
    pub gpu_uuids: Vec<String>,
    pub command: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReleaseOrder {
    pub host: String,
    pub lease_id: String,
    pub pool_id: String,
    pub why: Why,
}

/// One pool after the pass's plan; also what the enforcer keeps in `pool_status` for every
/// process on the data directory.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct PoolStatus {
    pub pool_id: String,
    pub actual: u32,
    pub pending: u32,
    pub releasing: u32,
    pub lost: u32,
    /// Chosen for release but kept until their paid unit ends.
    pub held_to_unit_end: u32,
    pub next_due_ms: Option<i64>,
    /// Wanted but no host has free.
    pub short: u32,
    /// Free matching GPUs by host once this plan is carried out (on demand).
    pub free: Vec<HostFree>,
    /// Free GPUs offered as spot the pool may take (priced within its max, spot not
    /// paused), by host, once this plan is carried out.
    #[serde(default)]
    pub free_spot: Vec<HostFree>,
    pub hosts: Vec<PoolHostView>,
    pub leases: Vec<PoolLeaseView>,
    /// Why the pool is not converging (the enforcer's, after the pass).
    #[serde(default)]
    pub notes: Vec<PoolNote>,
    /// Of `actual`, the GPUs on spot.
    #[serde(default)]
    pub spot: u32,
    /// Of `actual`, the GPUs granted whose workload is not up yet (warming, not ready).
    #[serde(default)]
    pub starting: u32,
    /// Free GPUs of the pool's model in its regions offered as spot that it may not take
    /// (no spot price for it there: not interruptible, paused, or over its max price).
    #[serde(default)]
    pub spot_not_taken: u32,
}

/// What to do this pass.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Plan {
    pub creates: Vec<Create>,
    pub releases: Vec<ReleaseOrder>,
    /// Hosts away past the grace period: write their leases off at this fence.
    pub lose: Vec<(String, u64)>,
    /// Hosts back with no stale lease left: their fence is no longer needed.
    pub clear_fence: Vec<String>,
    pub pools: Vec<PoolStatus>,
}

/// Plans one pass, as a sequence of phases (see `reconcile/phases.rs`): what the hosts show, then
/// pool by pool where it may take GPUs, what it rents, what it gives back, and how its
/// leases on hosts being removed move; pools are planned in order, so a GPU one takes is
/// not offered to the next.
pub fn plan(input: &Input<'_>) -> Plan {
    let mut out = Plan::default();
    let (index, mut books) = phases::index(input);
    let free = phases::observe_hosts(input, &index, &mut books, &mut out);
    let mut free = phases::Free::new(input, free);
    for (pool, book) in input.pools.iter().zip(&mut books) {
        let mut offers = phases::candidates(input, pool, book, &free);
        book.status.spot_not_taken = offers.spot_not_taken;
        let growth = phases::grow(pool, book, &offers, input.now_ms);
        book.status.short = growth.short;
        phases::take(
            input,
            pool,
            &growth,
            &mut offers,
            &mut free,
            book,
            &mut out.creates,
        );
        if pool.external {
            phases::external_orders(input, pool, &mut free, book, &mut out);
        } else if !growth.rebalance {
            // While spot is on its way to take on demand's place, nothing is scaled in.
            let shrink = phases::shrink(input, pool, book);
            phases::give_back(input, pool, &shrink, book, &mut out.releases);
        }
        let drain = phases::drain(pool, book);
        phases::settle_drain(input, pool, &drain, book, &mut out.releases);
        book.status.free = offers.on_demand.free();
        book.status.free_spot = offers.spot.free();
    }
    out.pools = phases::finish(input, books);
    out
}

impl PoolStatus {
    /// Of the GPUs held, those whose workload is not up yet (warming, paid for).
    pub fn warming_held(&self) -> u32 {
        self.starting.min(self.actual)
    }

    /// The GPUs held and ready for work: held less those warming.
    pub fn ready(&self) -> u32 {
        self.actual - self.warming_held()
    }

    /// Marks the leases `ids` starting (their workload not up, as another layer knows it:
    /// a Slurm node not registered yet) and counts the pool's starting GPUs again. Pure.
    pub fn mark_starting(&mut self, ids: &std::collections::HashSet<String>) {
        if ids.is_empty() {
            return;
        }
        for lease in &mut self.leases {
            if ids.contains(&lease.lease_id) {
                lease.starting = true;
            }
        }
        self.starting = starting_gpus(&self.leases);
    }
}

/// The GPUs of active leases whose workload is not up yet.
pub(crate) fn starting_gpus(leases: &[PoolLeaseView]) -> u32 {
    leases
        .iter()
        .filter(|lease| lease.state == PoolLeaseState::Active && lease.starting)
        .map(|lease| u32::try_from(lease.gpu_uuids.len()).unwrap_or(u32::MAX))
        .sum()
}

/// The mean utilization of a lease's GPUs; `None` when none was read.
fn mean_util(lease: &Lease, util: &HashMap<&str, f32>) -> Option<f32> {
    let utils: Vec<f32> = lease
        .gpu_uuids
        .iter()
        .filter_map(|uuid| util.get(uuid.as_str()).copied())
        .collect();
    (!utils.is_empty()).then(|| utils.iter().sum::<f32>() / utils.len() as f32)
}

pub fn lease_view(
    lease: &Lease,
    host: &HostObs,
    util: &HashMap<&str, f32>,
    state: PoolLeaseState,
) -> PoolLeaseView {
    PoolLeaseView {
        lease_id: lease.id.clone(),
        host: host.name.clone(),
        region: host.region.clone(),
        gpu_uuids: lease.gpu_uuids.clone(),
        gpu_indexes: lease.gpu_indexes.clone(),
        fencing_token: lease.fencing_token,
        granted_at_ms: i64::try_from(lease.created_at_ms).unwrap_or(i64::MAX),
        state,
        util_pct: mean_util(lease, util),
        checkpoint_at_ms: lease
            .checkpoint_at_ms
            .map(|at| i64::try_from(at).unwrap_or(i64::MAX)),
        release_grace_s: lease.release_grace_s,
        reclaim_deadline_ms: lease
            .reclaim_deadline_ms
            .map(|at| i64::try_from(at).unwrap_or(i64::MAX)),
        spot: offered_as_spot(lease, host),
        starting: lease.starting,
    }
}

/// Whether a lease holds a GPU its host offers as spot (as the host shows it now).
pub fn offered_as_spot(lease: &Lease, host: &HostObs) -> bool {
    host.seen.as_ref().is_some_and(|seen| {
        seen.gpus
            .iter()
            .any(|gpu| gpu.spot && lease.gpu_uuids.contains(&gpu.uuid))
    })
}

#[cfg(test)]
mod tests;
