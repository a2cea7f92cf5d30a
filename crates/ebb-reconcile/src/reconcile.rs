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

use crate::placement::{self, Candidate, Held, Placement};
use ebb_wire::agent::{Gpu, Lease, LeaseState};
use ebb_wire::pools::{HostFree, PlacementPolicy, PoolHostView, PoolLeaseState, PoolLeaseView};
use ebb_wire::reasons::{HostProblem, PoolNote};
use std::collections::{BTreeMap, HashMap, HashSet};

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

/// Plans one pass.
pub fn plan(input: &Input<'_>) -> Plan {
    let mut out = Plan::default();
    let pool_index: HashMap<&str, usize> = input
        .pools
        .iter()
        .enumerate()
        .map(|(i, pool)| (pool.id.as_str(), i))
        .collect();
    let mut status: Vec<PoolStatus> = input
        .pools
        .iter()
        .map(|pool| PoolStatus {
            pool_id: pool.id.clone(),
            ..PoolStatus::default()
        })
        .collect();
    // Per pool: (host index, counts) and the releasable leases.
    let mut per_host: Vec<BTreeMap<usize, PoolHostView>> = vec![BTreeMap::new(); input.pools.len()];
    // Per pool: its active leases with their host and mean utilization.
    let mut held: Vec<Vec<(&Lease, usize, Option<f32>)>> = vec![Vec::new(); input.pools.len()];
    // Per pool: its active leases on draining hosts.
    let mut draining: Vec<Vec<(&Lease, usize, Option<f32>)>> = vec![Vec::new(); input.pools.len()];
    let host_index: HashMap<&str, usize> = input
        .hosts
        .iter()
        .enumerate()
        .map(|(h, host)| (host.name.as_str(), h))
        .collect();
    let mut taken_by_pending: HashMap<&str, HashSet<&str>> = HashMap::new();
    for pending in input.pending {
        taken_by_pending
            .entry(pending.host.as_str())
            .or_default()
            .extend(pending.gpu_uuids.iter().map(String::as_str));
        if let Some(&p) = pool_index.get(pending.pool_id.as_str())
            && let Some(&h) = host_index.get(pending.host.as_str())
        {
            let width = u32::try_from(pending.gpu_uuids.len()).unwrap_or(u32::MAX);
            status[p].pending += width;
            host_view(&mut per_host[p], h, input.hosts).pending += width;
        }
    }
    let mut known_by_host: HashMap<&str, Vec<&KnownLease>> = HashMap::new();
    for lease in input.known {
        known_by_host
            .entry(lease.host.as_str())
            .or_default()
            .push(lease);
    }

    // GPUs offered as spot, by host and uuid.
    let spot_gpus: HashSet<(&str, &str)> = input
        .hosts
        .iter()
        .filter_map(|host| host.seen.as_ref().map(|seen| (host, seen)))
        .flat_map(|(host, seen)| {
            seen.gpus
                .iter()
                .filter(|gpu| gpu.spot)
                .map(|gpu| (host.name.as_str(), gpu.uuid.as_str()))
        })
        .collect();
    let mut spot_pending = vec![0u32; input.pools.len()];
    for pending in input.pending {
        if let Some(&p) = pool_index.get(pending.pool_id.as_str())
            && pending
                .gpu_uuids
                .iter()
                .any(|uuid| spot_gpus.contains(&(pending.host.as_str(), uuid.as_str())))
        {
            spot_pending[p] += 1;
        }
    }
    // Free GPUs per host: healthy, not held by any lease, not asked for by a pending request.
    let mut free: Vec<Vec<&Gpu>> = Vec::with_capacity(input.hosts.len());
    for (h, host) in input.hosts.iter().enumerate() {
        let Some(seen) = &host.seen else {
            free.push(Vec::new());
            let known = known_by_host
                .get(host.name.as_str())
                .map_or(&[][..], Vec::as_slice);
            let away = host
                .down_since_ms
                .is_some_and(|since| input.now_ms - since >= input.grace_ms);
            let fence = known.iter().map(|lease| lease.fencing_token).max();
            let written_off = |token: u64| host.lost_fence.is_some_and(|f| token <= f);
            if away
                && let Some(fence) = fence
                && !written_off(fence)
            {
                out.lose.push((host.name.clone(), fence));
            }
            for lease in known {
                let Some(&p) = pool_index.get(lease.pool_id.as_str()) else {
                    continue;
                };
                let lost = away || written_off(lease.fencing_token);
                if lost {
                    status[p].lost += 1;
                } else {
                    status[p].actual += 1;
                    host_view(&mut per_host[p], h, input.hosts).leased += 1;
                }
                status[p].leases.push(PoolLeaseView {
                    lease_id: lease.lease_id.clone(),
                    host: host.name.clone(),
                    region: host.region.clone(),
                    gpu_uuids: lease.gpu_uuids.clone(),
                    gpu_indexes: lease.gpu_indexes.clone(),
                    fencing_token: lease.fencing_token,
                    granted_at_ms: lease.granted_at_ms,
                    state: if lost {
                        PoolLeaseState::Lost
                    } else {
                        PoolLeaseState::Unreachable
                    },
                    util_pct: None,
                    checkpoint_at_ms: None,
                    release_grace_s: None,
                    reclaim_deadline_ms: None,
                    spot: false,
                });
            }
            continue;
        };
        let held_uuids: HashSet<&str> = seen
            .leases
            .iter()
            .filter(|lease| lease.state != LeaseState::Released)
            .flat_map(|lease| lease.gpu_uuids.iter().map(String::as_str))
            .collect();
        let pending_here = taken_by_pending.get(host.name.as_str());
        free.push(
            seen.gpus
                .iter()
                .filter(|gpu| {
                    host.refusing.is_none()
                        && !host.draining
                        && gpu.healthy
                        && gpu.lease_id.is_none()
                        && !held_uuids.contains(gpu.uuid.as_str())
                        && !pending_here.is_some_and(|set| set.contains(gpu.uuid.as_str()))
                })
                .collect(),
        );
        let util: HashMap<&str, f32> = seen
            .gpus
            .iter()
            .filter_map(|gpu| gpu.gpu_util_pct.map(|u| (gpu.uuid.as_str(), u)))
            .collect();
        let mut stale_left = false;
        for lease in seen.leases.iter().filter(|l| l.holder_id == input.holder) {
            if lease.state == LeaseState::Released {
                continue;
            }
            let stale = host.lost_fence.is_some_and(|f| lease.fencing_token <= f);
            let pool = pool_index.get(lease.pool_id.as_str()).copied();
            if lease.state == LeaseState::Releasing {
                if let Some(p) = pool {
                    status[p].releasing += 1;
                    host_view(&mut per_host[p], h, input.hosts).releasing += 1;
                    status[p].leases.push(lease_view(
                        lease,
                        host,
                        &util,
                        PoolLeaseState::Releasing,
                    ));
                }
                stale_left |= stale;
                continue;
            }
            let why = match (pool, stale) {
                (None, _) => Some(Why::Orphan),
                (Some(_), true) => Some(Why::Stale),
                (Some(_), false) => None,
            };
            if let Some(why) = why {
                stale_left |= stale;
                out.releases.push(ReleaseOrder {
                    host: host.name.clone(),
                    lease_id: lease.id.clone(),
                    pool_id: lease.pool_id.clone(),
                    why,
                });
                if let Some(p) = pool {
                    status[p].releasing += 1;
                    host_view(&mut per_host[p], h, input.hosts).releasing += 1;
                    status[p].leases.push(lease_view(
                        lease,
                        host,
                        &util,
                        PoolLeaseState::Releasing,
                    ));
                }
                continue;
            }
            let Some(p) = pool else { continue };
            if lease.reclaim_deadline_ms.is_some() {
                // Its host's owner takes it back at the deadline: not counted, so its
                // replacement is ordered now (by the Slurm binder for a bound pool); the
                // host, not the pool, releases it.
                status[p].releasing += lease_width(lease, &input.pools[p]);
                host_view(&mut per_host[p], h, input.hosts).releasing += 1;
                status[p]
                    .leases
                    .push(lease_view(lease, host, &util, PoolLeaseState::Reclaimed));
                continue;
            }
            if host.draining && !input.pools[p].external {
                // Counted once the pool knows whether its replacements are in place.
                draining[p].push((lease, h, mean_util(lease, &util)));
                continue;
            }
            let width = lease_width(lease, &input.pools[p]);
            status[p].actual += width;
            if lease_is_spot(lease, &host.name, &spot_gpus) {
                status[p].spot += width;
            }
            host_view(&mut per_host[p], h, input.hosts).leased += width;
            status[p]
                .leases
                .push(lease_view(lease, host, &util, PoolLeaseState::Active));
            held[p].push((lease, h, mean_util(lease, &util)));
        }
        if host.lost_fence.is_some() && !stale_left {
            out.clear_fence.push(host.name.clone());
        }
    }

    // Hosts by region, and which GPU models match which pool model (few distinct names).
    let mut hosts_in_region: HashMap<&str, Vec<usize>> = HashMap::new();
    for (h, host) in input.hosts.iter().enumerate() {
        if host.seen.is_some() {
            hosts_in_region
                .entry(region_key(&host.region))
                .or_default()
                .push(h);
        }
    }
    // Distinct GPU model names (few), so matching is decided once per pool and model.
    let mut model_ids: HashMap<&str, usize> = HashMap::new();
    let free_models: Vec<Vec<usize>> = free
        .iter()
        .map(|gpus| {
            gpus.iter()
                .map(|gpu| {
                    let next = model_ids.len();
                    *model_ids.entry(gpu.model.as_str()).or_insert(next)
                })
                .collect()
        })
        .collect();
    let mut models: Vec<&str> = vec![""; model_ids.len()];
    for (&name, &id) in &model_ids {
        models[id] = name;
    }
    // Per pool, the creates planned (index range into `out.creates`) and per host counts.
    let mut created: Vec<BTreeMap<usize, u32>> = vec![BTreeMap::new(); input.pools.len()];

    for (p, pool) in input.pools.iter().enumerate() {
        let have = status[p].actual + status[p].pending;
        let matching: Vec<bool> = models
            .iter()
            .map(|model| placement::model_matches(&pool.model, model))
            .collect();
        let regions: Vec<usize> = pool
            .regions
            .iter()
            .flat_map(|region| {
                hosts_in_region
                    .get(region_key(region))
                    .map_or(&[][..], Vec::as_slice)
            })
            .copied()
            .collect();
        // Hosts with matching free GPUs, and how many: on demand, then spot where the
        // pool may take it.
        let mut hosts_here: Vec<usize> = Vec::with_capacity(regions.len());
        let mut candidates: Vec<Candidate<'_>> = Vec::with_capacity(regions.len());
        let mut spot_hosts: Vec<usize> = Vec::new();
        let mut spot_candidates: Vec<Candidate<'_>> = Vec::new();
        for &h in &regions {
            let host = &input.hosts[h];
            let count = |spot: bool| {
                let n = free_models[h]
                    .iter()
                    .zip(&free[h])
                    .filter(|(model, gpu)| {
                        matching[**model] && !gpu.uuid.is_empty() && gpu.spot == spot
                    })
                    .count();
                u32::try_from(n).unwrap_or(u32::MAX)
            };
            let held_here = per_host[p].get(&h).map_or(0, |v| v.leased + v.pending);
            let on_demand = count(false);
            if on_demand > 0 {
                hosts_here.push(h);
                candidates.push(Candidate {
                    host: &host.name,
                    region: &host.region,
                    free: on_demand,
                    held: held_here,
                    price_fen: region_price(pool, &host.region),
                });
            }
            let spot_price = pool.spot.prices.get(region_key(&host.region)).copied();
            if spot_price.is_none() && !pool.external {
                status[p].spot_not_taken += count(true);
            }
            if spot_price.is_some() {
                let spot = count(true);
                if spot > 0 {
                    spot_hosts.push(h);
                    spot_candidates.push(Candidate {
                        host: &host.name,
                        region: &host.region,
                        free: spot,
                        held: held_here,
                        price_fen: spot_price,
                    });
                }
            }
        }
        // An external pool's nodes are the binder's to rent and drain; what is free is
        // still shown.
        let spot_have = status[p].spot + spot_pending[p];
        // Back to spot: a pool holding its count with less spot than its share takes the
        // spot that can be had for its on-demand GPUs whose paid unit is about to end, and
        // gives back as many on demand once they are granted, at their unit's end (make
        // before break; on scale-in, on demand above its share goes first).
        let rebalance = !pool.external
            && status[p].actual == pool.desired
            && status[p].pending == spot_pending[p]
            && spot_have < pool.spot.wanted;
        let (on_spot, on_demand) = if pool.external {
            (Placement::default(), Placement::default())
        } else if pool.desired > have {
            let need = pool.desired - have;
            let spot_need = need.min(pool.spot.wanted.saturating_sub(spot_have));
            let on_spot = placement::place(spot_need, &spot_candidates, pool.policy);
            // Spot that no host offers goes on demand.
            let on_demand =
                placement::place(need - spot_need + on_spot.short, &candidates, pool.policy);
            status[p].short = on_demand.short;
            (on_spot, on_demand)
        } else if rebalance && spot_pending[p] == 0 {
            // Only on-demand GPUs whose paid unit is about to end go back to spot (no paid
            // minute thrown away); each is released at its unit's end once its spot
            // replacement is granted.
            let due = held[p]
                .iter()
                .filter(|(lease, h, _)| {
                    !lease_is_spot(lease, &input.hosts[*h].name, &spot_gpus)
                        && crate::spot::swap_due(
                            i64::try_from(lease.created_at_ms).unwrap_or(i64::MAX),
                            pool.unit_ms,
                            input.now_ms,
                            crate::spot::SWAP_LEAD_MS,
                            pool.at_unit_end,
                        )
                })
                .count();
            let count = (pool.spot.wanted - spot_have).min(u32::try_from(due).unwrap_or(u32::MAX));
            let mut on_spot = placement::place(count, &spot_candidates, pool.policy);
            on_spot.short = 0;
            (on_spot, Placement::default())
        } else {
            (Placement::default(), Placement::default())
        };
        for (spot, placed, hosts, cands) in [
            (true, &on_spot, &spot_hosts, &mut spot_candidates),
            (false, &on_demand, &hosts_here, &mut candidates),
        ] {
            for &(c, count) in &placed.takes {
                let h = hosts[c];
                let mut left = count;
                // Take the host's first matching free GPUs of the kind; mark them taken for
                // later pools.
                for (i, gpu) in free[h].iter_mut().enumerate() {
                    if left == 0 {
                        break;
                    }
                    if matching[free_models[h][i]] && !gpu.uuid.is_empty() && gpu.spot == spot {
                        out.creates.push(Create {
                            pool_id: pool.id.clone(),
                            host: input.hosts[h].name.clone(),
                            gpu_uuids: vec![gpu.uuid.clone()],
                            command: None,
                        });
                        *gpu = &TAKEN;
                        left -= 1;
                    }
                }
                cands[c].free -= count;
                *created[p].entry(h).or_default() += count;
            }
        }
        if pool.external {
            // The binder's nodes: exactly what it asked, where the GPUs are still free.
            external_orders(
                pool,
                input,
                &mut free,
                &held[p],
                &mut status[p],
                &mut per_host[p],
                &mut created[p],
                &mut out,
            );
        } else if rebalance {
            // Spot on its way to take on demand's place.
        } else if pool.desired < have {
            let excess = (have - pool.desired).min(status[p].actual);
            let target = &input.pools[p];
            // Keep the mix: spot above its share goes first, then on demand, then spot.
            let spot_held = status[p].spot;
            let on_demand_held = status[p].actual - spot_held;
            let mut from_spot = excess.min(spot_held.saturating_sub(pool.spot.wanted));
            let from_on_demand = (excess - from_spot).min(on_demand_held);
            from_spot = excess - from_on_demand;
            let mut now_released: Vec<usize> = Vec::new();
            for (spot, count) in [(true, from_spot), (false, from_on_demand)] {
                let kind: Vec<usize> = (0..held[p].len())
                    .filter(|&i| {
                        let (lease, h, _) = held[p][i];
                        lease_is_spot(lease, &input.hosts[h].name, &spot_gpus) == spot
                    })
                    .collect();
                let leases: Vec<Held> = kind
                    .iter()
                    .map(|&i| {
                        let (lease, h, util) = held[p][i];
                        held_lease(lease, &input.hosts[h], util, target, input.now_ms)
                    })
                    .collect();
                let release =
                    placement::choose_release(count, &leases, input.now_ms, pool.at_unit_end);
                status[p].held_to_unit_end += release.deferred;
                status[p].next_due_ms = match (status[p].next_due_ms, release.next_due_ms) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                now_released.extend(release.now.into_iter().map(|k| kind[k]));
            }
            for i in now_released {
                let (lease, h, _) = held[p][i];
                if lease_is_spot(lease, &input.hosts[h].name, &spot_gpus) {
                    status[p].spot -= 1;
                }
                out.releases.push(ReleaseOrder {
                    host: input.hosts[h].name.clone(),
                    lease_id: lease.id.clone(),
                    pool_id: pool.id.clone(),
                    why: Why::ScaleIn,
                });
                status[p].actual -= 1;
                status[p].releasing += 1;
                let view = host_view(&mut per_host[p], h, input.hosts);
                view.leased -= 1;
                view.releasing += 1;
                if let Some(shown) = status[p]
                    .leases
                    .iter_mut()
                    .find(|shown| shown.lease_id == lease.id)
                {
                    shown.state = PoolLeaseState::Releasing;
                }
            }
        }
        // Leases on draining hosts: kept while the pool waits for their replacements
        // elsewhere (make before break), released once it holds them, or at once when no
        // host has room for them.
        let kept = if status[p].short > 0 {
            0
        } else {
            pool.desired.saturating_sub(status[p].actual)
        };
        let kept = usize::try_from(kept)
            .unwrap_or(usize::MAX)
            .min(draining[p].len());
        // The newest go first.
        draining[p].sort_by_key(|(lease, _, _)| std::cmp::Reverse(lease.created_at_ms));
        let no_util: HashMap<&str, f32> = HashMap::new();
        let release_count = draining[p].len() - kept;
        for (i, &(lease, h, util)) in draining[p].iter().enumerate() {
            if i >= release_count {
                status[p].actual += 1;
                if lease_is_spot(lease, &input.hosts[h].name, &spot_gpus) {
                    status[p].spot += 1;
                }
                host_view(&mut per_host[p], h, input.hosts).leased += 1;
                let mut view = lease_view(lease, &input.hosts[h], &no_util, PoolLeaseState::Active);
                view.util_pct = util;
                status[p].leases.push(view);
                continue;
            }
            out.releases.push(ReleaseOrder {
                host: input.hosts[h].name.clone(),
                lease_id: lease.id.clone(),
                pool_id: pool.id.clone(),
                why: Why::Drain,
            });
            status[p].releasing += 1;
            host_view(&mut per_host[p], h, input.hosts).releasing += 1;
            let mut view = lease_view(lease, &input.hosts[h], &no_util, PoolLeaseState::Releasing);
            view.util_pct = util;
            status[p].leases.push(view);
        }
        let free_of = |candidates: &[Candidate<'_>]| -> Vec<HostFree> {
            candidates
                .iter()
                .filter(|candidate| candidate.free > 0)
                .map(|candidate| HostFree {
                    host: candidate.host.to_string(),
                    region: candidate.region.to_string(),
                    free: candidate.free,
                })
                .collect()
        };
        status[p].free = free_of(&candidates);
        status[p].free_spot = free_of(&spot_candidates);
    }
    for (p, views) in per_host.into_iter().enumerate() {
        let mut views = views;
        for (&h, &count) in &created[p] {
            host_view(&mut views, h, input.hosts).pending += count;
            status[p].pending += count;
        }
        status[p].hosts = views.into_values().collect();
        status[p].leases.sort_by(|a, b| {
            (a.host.as_str(), a.fencing_token).cmp(&(b.host.as_str(), b.fencing_token))
        });
    }
    out.pools = status;
    out
}

/// An external pool's node orders: each node rented where all its GPUs are free now (taken
/// from `free` so no later pool takes them), each lease asked back released.
#[allow(clippy::too_many_arguments)]
fn external_orders(
    pool: &PoolTarget,
    input: &Input<'_>,
    free: &mut [Vec<&Gpu>],
    held: &[(&Lease, usize, Option<f32>)],
    status: &mut PoolStatus,
    per_host: &mut BTreeMap<usize, PoolHostView>,
    created: &mut BTreeMap<usize, u32>,
    out: &mut Plan,
) {
    for request in &pool.nodes.rent {
        let Some(h) = input
            .hosts
            .iter()
            .position(|host| host.name == request.host)
        else {
            continue;
        };
        let at: Vec<usize> = request
            .gpu_uuids
            .iter()
            .filter_map(|uuid| free[h].iter().position(|gpu| &gpu.uuid == uuid))
            .collect();
        if request.gpu_uuids.is_empty() || at.len() != request.gpu_uuids.len() {
            // Taken since the binder looked, or asked already: it looks again next pass.
            continue;
        }
        for i in at {
            free[h][i] = &TAKEN;
        }
        out.creates.push(Create {
            pool_id: pool.id.clone(),
            host: request.host.clone(),
            gpu_uuids: request.gpu_uuids.clone(),
            command: request.command.clone(),
        });
        *created.entry(h).or_default() +=
            u32::try_from(request.gpu_uuids.len()).unwrap_or(u32::MAX);
    }
    for lease_id in &pool.nodes.release {
        let Some(&(lease, h, _)) = held.iter().find(|(lease, _, _)| &lease.id == lease_id) else {
            continue;
        };
        let width = lease_width(lease, pool);
        out.releases.push(ReleaseOrder {
            host: input.hosts[h].name.clone(),
            lease_id: lease.id.clone(),
            pool_id: pool.id.clone(),
            why: Why::ScaleIn,
        });
        status.actual = status.actual.saturating_sub(width);
        status.releasing += width;
        let view = host_view(per_host, h, input.hosts);
        view.leased = view.leased.saturating_sub(width);
        view.releasing += width;
        if let Some(shown) = status
            .leases
            .iter_mut()
            .find(|shown| shown.lease_id == lease.id)
        {
            shown.state = PoolLeaseState::Releasing;
        }
    }
}

/// A placeholder for a GPU taken earlier in the pass (an empty uuid never matches).
static TAKEN: Gpu = Gpu {
    index: 0,
    uuid: String::new(),
    model: String::new(),
    memory_total_mib: None,
    healthy: false,
    health_reason: None,
    lease_id: None,
    memory_used_mib: None,
    gpu_util_pct: None,
    memory_util_pct: None,
    temperature_c: None,
    power_draw_w: None,
    power_limit_w: None,
    sm_clock_mhz: None,
    memory_clock_mhz: None,
    processes: None,
    ecc_corrected: None,
    ecc_uncorrected: None,
    retired_pages: None,
    xid_errors: None,
    spot: false,
};

/// A lease as a release candidate: its mean utilization, its region's price, its paid unit.
fn held_lease(
    lease: &Lease,
    host: &HostObs,
    util_pct: Option<f32>,
    pool: &PoolTarget,
    now_ms: i64,
) -> Held {
    let granted = i64::try_from(lease.created_at_ms).unwrap_or(i64::MAX);
    Held {
        lease_id: lease.id.clone(),
        host: host.name.clone(),
        region: host.region.clone(),
        util_pct,
        price_fen: region_price(pool, &host.region),
        granted_at_ms: granted,
        paid_until_ms: placement::paid_until(granted, pool.unit_ms, now_ms),
        safe: lease.checkpoint_at_ms.is_some(),
        chosen: pool.release_first.contains(&lease.id),
    }
}

/// Whether a lease holds a GPU its host offers as spot.
fn lease_is_spot(lease: &Lease, host: &str, spot_gpus: &HashSet<(&str, &str)>) -> bool {
    lease
        .gpu_uuids
        .iter()
        .any(|uuid| spot_gpus.contains(&(host, uuid.as_str())))
}

/// How many of the pool's GPUs a lease counts for: its GPUs in an external pool (a Slurm
/// node's lease holds the node's GPUs), else one (the planner rents one GPU per lease).
fn lease_width(lease: &Lease, pool: &PoolTarget) -> u32 {
    if pool.external {
        u32::try_from(lease.gpu_uuids.len()).unwrap_or(u32::MAX)
    } else {
        1
    }
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

fn host_view<'v>(
    views: &'v mut BTreeMap<usize, PoolHostView>,
    h: usize,
    hosts: &[HostObs],
) -> &'v mut PoolHostView {
    views.entry(h).or_insert_with(|| PoolHostView {
        host: hosts[h].name.clone(),
        region: hosts[h].region.clone(),
        leased: 0,
        pending: 0,
        releasing: 0,
        failed: 0,
        last_error: None,
    })
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

/// Regions are compared as the registry stores them (trimmed, no spaces).
fn region_key(region: &str) -> &str {
    region.trim()
}

fn region_price(pool: &PoolTarget, region: &str) -> Option<i64> {
    pool.prices.get(region_key(region)).copied()
}

#[cfg(test)]
mod tests;
