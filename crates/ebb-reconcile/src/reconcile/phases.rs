//! The phases of one pass, in the order [`super::plan`] runs them. Each decides one thing
//! from the observation and what the phases before it decided, so a new rule becomes a new
//! phase (or a change to one) rather than more lines in one long function:
//!
//! 1. [`index`]: lookups over the input, and what unanswered requests already ask for;
//! 2. [`observe_hosts`]: what each host shows: its free GPUs, and each lease of ours
//!    counted, released, written off or left to drain;
//! 3. per pool, [`candidates`] (where it may take GPUs), [`grow`] (how many, on spot or on
//!    demand), [`take`] (which GPUs), [`external_orders`] (a bound pool's node orders),
//!    [`shrink`] and [`give_back`] (scale-in), [`drain`] and [`settle_drain`] (hosts being
//!    removed);
//! 4. [`finish`]: each pool's per-host view and its lease list.

use super::{
    Create, HostObs, Input, KnownLease, Plan, PoolStatus, PoolTarget, ReleaseOrder, Seen, Why,
    lease_view, mean_util,
};
use crate::placement::{self, Candidate, Held, Placement};
use ebb_wire::agent::{Gpu, Lease, LeaseState};
use ebb_wire::pools::{HostFree, PoolHostView, PoolLeaseState, PoolLeaseView};
use std::cmp::Reverse;
use std::collections::{BTreeMap, HashMap, HashSet};

/// Lookups over the input, built once per pass.
#[derive(Debug)]
pub(super) struct Index<'a> {
    /// Pool by id (the last, should two share one).
    pools: HashMap<&'a str, usize>,
    /// GPUs that unanswered requests ask for, by host: no pool is offered them again.
    asked: HashMap<&'a str, HashSet<&'a str>>,
    /// Our recorded leases by host, for the hosts that do not answer.
    known: HashMap<&'a str, Vec<&'a KnownLease>>,
    /// GPUs offered as spot, by host name and uuid.
    spot_gpus: HashSet<(&'a str, &'a str)>,
}

/// A lease of ours that a pool holds on a host that answered.
#[derive(Debug, Clone, Copy)]
pub(super) struct Holding<'a> {
    pub lease: &'a Lease,
    /// Its host, by index into the input's hosts.
    pub host: usize,
    /// The mean utilization of its GPUs, when read.
    pub util: Option<f32>,
    /// It holds a GPU offered as spot.
    pub spot: bool,
}

/// One pool's side of the pass: its status as the phases fill it in, and what it holds.
#[derive(Debug, Default)]
pub(super) struct PoolBook<'a> {
    pub status: PoolStatus,
    /// Counts by host index, turned into `status.hosts` at the end.
    hosts: BTreeMap<usize, PoolHostView>,
    /// Its counted leases, the ones a scale-in chooses from.
    held: Vec<Holding<'a>>,
    /// Its leases on hosts being removed, not counted until [`drain`] decides.
    draining: Vec<Holding<'a>>,
    /// Of `status.pending`, the requests for GPUs offered as spot.
    spot_pending: u32,
    /// GPUs asked for this pass, by host index.
    created: BTreeMap<usize, u32>,
}

impl PoolBook<'_> {
    fn new(pool_id: &str) -> Self {
        Self {
            status: PoolStatus {
                pool_id: pool_id.to_string(),
                ..PoolStatus::default()
            },
            ..Self::default()
        }
    }

    fn host(&mut self, h: usize, hosts: &[HostObs]) -> &mut PoolHostView {
        self.hosts.entry(h).or_insert_with(|| PoolHostView {
            host: hosts[h].name.clone(),
            region: hosts[h].region.clone(),
            leased: 0,
            pending: 0,
            releasing: 0,
            failed: 0,
            last_error: None,
        })
    }

    /// A lease already shown as held, shown releasing.
    fn show_releasing(&mut self, lease_id: &str) {
        if let Some(shown) = self
            .status
            .leases
            .iter_mut()
            .find(|shown| shown.lease_id == lease_id)
        {
            shown.state = PoolLeaseState::Releasing;
        }
    }
}

/// Decides what the pass already has underway: each pool's unanswered requests count as
/// pending (per pool and per host, in GPUs) so nothing is asked for twice, and those for
/// spot GPUs count toward the pool's spot share. Also builds the lookups the later phases
/// share.
pub(super) fn index<'a>(input: &Input<'a>) -> (Index<'a>, Vec<PoolBook<'a>>) {
    let pools: HashMap<&str, usize> = input
        .pools
        .iter()
        .enumerate()
        .map(|(i, pool)| (pool.id.as_str(), i))
        .collect();
    let hosts: HashMap<&str, usize> = input
        .hosts
        .iter()
        .enumerate()
        .map(|(h, host)| (host.name.as_str(), h))
        .collect();
    let mut books: Vec<PoolBook<'a>> = input
        .pools
        .iter()
        .map(|pool| PoolBook::new(&pool.id))
        .collect();
    let mut asked: HashMap<&str, HashSet<&str>> = HashMap::new();
    for pending in input.pending {
        asked
            .entry(pending.host.as_str())
            .or_default()
            .extend(pending.gpu_uuids.iter().map(String::as_str));
        if let Some(&p) = pools.get(pending.pool_id.as_str())
            && let Some(&h) = hosts.get(pending.host.as_str())
        {
            let width = u32::try_from(pending.gpu_uuids.len()).unwrap_or(u32::MAX);
            books[p].status.pending += width;
            books[p].host(h, input.hosts).pending += width;
        }
    }
    let mut known: HashMap<&str, Vec<&KnownLease>> = HashMap::new();
    for lease in input.known {
        known.entry(lease.host.as_str()).or_default().push(lease);
    }
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
    for pending in input.pending {
        if let Some(&p) = pools.get(pending.pool_id.as_str())
            && pending
                .gpu_uuids
                .iter()
                .any(|uuid| spot_gpus.contains(&(pending.host.as_str(), uuid.as_str())))
        {
            // A request counts once, however many of its GPUs are spot.
            books[p].spot_pending += 1;
        }
    }
    (
        Index {
            pools,
            asked,
            known,
            spot_gpus,
        },
        books,
    )
}

/// Decides, host by host, what each shows the pools: which of its GPUs are free to take,
/// and what each lease of ours there is to its pool (see [`standing`]). A silent host's
/// recorded leases still count through the grace period; past it they are lost and the
/// host written off at its highest fencing token (`lose`); a host back with no stale lease
/// left no longer needs its fence (`clear_fence`). Returns the free GPUs by host.
pub(super) fn observe_hosts<'a>(
    input: &Input<'a>,
    index: &Index<'a>,
    books: &mut [PoolBook<'a>],
    out: &mut Plan,
) -> Vec<Vec<&'a Gpu>> {
    let mut free = Vec::with_capacity(input.hosts.len());
    for (h, host) in input.hosts.iter().enumerate() {
        match &host.seen {
            None => {
                free.push(Vec::new());
                observe_silent(input, index, h, books, out);
            }
            Some(seen) => {
                free.push(free_gpus(host, seen, index.asked.get(host.name.as_str())));
                observe_leases(input, index, h, seen, books, out);
            }
        }
    }
    free
}

/// The GPUs a host can lend now: healthy, held by no lease, asked for by no unanswered
/// request; none on a host that refuses our requests or is being removed.
fn free_gpus<'a>(host: &HostObs, seen: &'a Seen, asked: Option<&HashSet<&str>>) -> Vec<&'a Gpu> {
    let held: HashSet<&str> = seen
        .leases
        .iter()
        .filter(|lease| lease.state != LeaseState::Released)
        .flat_map(|lease| lease.gpu_uuids.iter().map(String::as_str))
        .collect();
    seen.gpus
        .iter()
        .filter(|gpu| {
            host.refusing.is_none()
                && !host.draining
                && gpu.healthy
                && gpu.lease_id.is_none()
                && !held.contains(gpu.uuid.as_str())
                && !asked.is_some_and(|set| set.contains(gpu.uuid.as_str()))
        })
        .collect()
}

/// Whether a lease at `token` on `host` was written off while the host was away.
fn written_off(host: &HostObs, token: u64) -> bool {
    host.lost_fence.is_some_and(|fence| token <= fence)
}

/// A silent host: its recorded leases count (shown unreachable) through the grace period,
/// and are lost after it, or once written off.
fn observe_silent(
    input: &Input<'_>,
    index: &Index<'_>,
    h: usize,
    books: &mut [PoolBook<'_>],
    out: &mut Plan,
) {
    let host = &input.hosts[h];
    let known = index
        .known
        .get(host.name.as_str())
        .map_or(&[][..], Vec::as_slice);
    let away = host
        .down_since_ms
        .is_some_and(|since| input.now_ms - since >= input.grace_ms);
    let fence = known.iter().map(|lease| lease.fencing_token).max();
    if away
        && let Some(fence) = fence
        && !written_off(host, fence)
    {
        out.lose.push((host.name.clone(), fence));
    }
    for lease in known {
        let Some(&p) = index.pools.get(lease.pool_id.as_str()) else {
            continue;
        };
        let book = &mut books[p];
        let lost = away || written_off(host, lease.fencing_token);
        if lost {
            book.status.lost += 1;
        } else {
            book.status.actual += 1;
            book.host(h, input.hosts).leased += 1;
        }
        book.status.leases.push(PoolLeaseView {
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
            starting: false,
        });
    }
}

/// What a lease of ours on a host that answered is to its pool this pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Standing {
    /// On its way out already: shown releasing.
    Releasing,
    /// To give back now: its pool is gone, or it was written off while its host was away.
    Release(Why),
    /// Its host's owner takes it back at a deadline: not counted, so its replacement is
    /// ordered now; the host, not the pool, releases it.
    Reclaimed,
    /// On a host being removed: counted once [`drain`] knows whether its replacement is in
    /// place.
    Draining,
    /// Counted toward the pool.
    Held,
}

/// Classifies a lease seen on `host` for its pool (`None`: no such pool). `None` for a
/// lease that is not ours or already released: nothing to plan for it. An external pool's
/// leases on a host being removed stay held: its binder drains them.
pub(super) fn standing(
    lease: &Lease,
    holder: &str,
    host: &HostObs,
    pool: Option<&PoolTarget>,
) -> Option<Standing> {
    if lease.holder_id != holder || lease.state == LeaseState::Released {
        return None;
    }
    if lease.state == LeaseState::Releasing {
        return Some(Standing::Releasing);
    }
    let Some(pool) = pool else {
        return Some(Standing::Release(Why::Orphan));
    };
    Some(if written_off(host, lease.fencing_token) {
        Standing::Release(Why::Stale)
    } else if lease.reclaim_deadline_ms.is_some() {
        Standing::Reclaimed
    } else if host.draining && !pool.external {
        Standing::Draining
    } else {
        Standing::Held
    })
}

/// A host that answered: each lease of ours there counted as its [`standing`] says, and
/// its fence cleared once no lease at or below it is left.
fn observe_leases<'a>(
    input: &Input<'a>,
    index: &Index<'a>,
    h: usize,
    seen: &'a Seen,
    books: &mut [PoolBook<'a>],
    out: &mut Plan,
) {
    let host = &input.hosts[h];
    let util: HashMap<&str, f32> = seen
        .gpus
        .iter()
        .filter_map(|gpu| gpu.gpu_util_pct.map(|u| (gpu.uuid.as_str(), u)))
        .collect();
    let mut stale_left = false;
    for lease in &seen.leases {
        let p = index.pools.get(lease.pool_id.as_str()).copied();
        let Some(standing) = standing(lease, input.holder, host, p.map(|p| &input.pools[p])) else {
            continue;
        };
        if matches!(standing, Standing::Releasing | Standing::Release(_)) {
            // Still there, so the fence is still needed to recognise it.
            stale_left |= written_off(host, lease.fencing_token);
        }
        if let Standing::Release(why) = standing {
            out.releases.push(ReleaseOrder {
                host: host.name.clone(),
                lease_id: lease.id.clone(),
                pool_id: lease.pool_id.clone(),
                why,
            });
        }
        let Some(p) = p else { continue };
        let book = &mut books[p];
        let width = lease_width(lease, &input.pools[p]);
        match standing {
            Standing::Releasing | Standing::Release(_) => {
                book.status.releasing += 1;
                book.host(h, input.hosts).releasing += 1;
                let view = lease_view(lease, host, &util, PoolLeaseState::Releasing);
                book.status.leases.push(view);
            }
            Standing::Reclaimed => {
                book.status.releasing += width;
                book.host(h, input.hosts).releasing += 1;
                let view = lease_view(lease, host, &util, PoolLeaseState::Reclaimed);
                book.status.leases.push(view);
            }
            Standing::Draining => book.draining.push(Holding {
                lease,
                host: h,
                util: mean_util(lease, &util),
                spot: lease_is_spot(lease, &host.name, &index.spot_gpus),
            }),
            Standing::Held => {
                let spot = lease_is_spot(lease, &host.name, &index.spot_gpus);
                book.status.actual += width;
                if spot {
                    book.status.spot += width;
                }
                book.host(h, input.hosts).leased += width;
                let view = lease_view(lease, host, &util, PoolLeaseState::Active);
                book.status.leases.push(view);
                book.held.push(Holding {
                    lease,
                    host: h,
                    util: mean_util(lease, &util),
                    spot,
                });
            }
        }
    }
    if host.lost_fence.is_some() && !stale_left {
        out.clear_fence.push(host.name.clone());
    }
}

/// The free GPUs as the pools take them, with what does not change while they do.
#[derive(Debug)]
pub(super) struct Free<'a> {
    /// Free GPUs by host index; a GPU taken is replaced by [`TAKEN`].
    gpus: Vec<Vec<&'a Gpu>>,
    /// The model of each of `gpus`, as an index into `names`: few distinct names, so
    /// whether a model fits a pool is decided once per pool and name.
    models: Vec<Vec<usize>>,
    names: Vec<&'a str>,
    /// Hosts that answered, by region.
    by_region: HashMap<&'a str, Vec<usize>>,
}

impl<'a> Free<'a> {
    pub(super) fn new(input: &Input<'a>, gpus: Vec<Vec<&'a Gpu>>) -> Self {
        let mut by_region: HashMap<&str, Vec<usize>> = HashMap::new();
        for (h, host) in input.hosts.iter().enumerate() {
            if host.seen.is_some() {
                by_region
                    .entry(region_key(&host.region))
                    .or_default()
                    .push(h);
            }
        }
        let mut ids: HashMap<&str, usize> = HashMap::new();
        let models: Vec<Vec<usize>> = gpus
            .iter()
            .map(|gpus| {
                gpus.iter()
                    .map(|gpu| {
                        let next = ids.len();
                        *ids.entry(gpu.model.as_str()).or_insert(next)
                    })
                    .collect()
            })
            .collect();
        let mut names: Vec<&str> = vec![""; ids.len()];
        for (&name, &id) in &ids {
            names[id] = name;
        }
        Self {
            gpus,
            models,
            names,
            by_region,
        }
    }

    /// Whether the `i`th free GPU on host `h` is still free, of a model the pool takes
    /// (`matching`, by model id), and of the kind asked (spot or on demand).
    fn fits(&self, h: usize, i: usize, matching: &[bool], spot: bool) -> bool {
        let gpu = self.gpus[h][i];
        matching[self.models[h][i]] && !gpu.uuid.is_empty() && gpu.spot == spot
    }

    fn count(&self, h: usize, matching: &[bool], spot: bool) -> u32 {
        let n = (0..self.gpus[h].len())
            .filter(|&i| self.fits(h, i, matching, spot))
            .count();
        u32::try_from(n).unwrap_or(u32::MAX)
    }
}

/// Hosts a pool may take free GPUs of one kind from.
#[derive(Debug, Default)]
pub(super) struct Offer<'a> {
    /// Each candidate's host, by index into the input's hosts.
    pub hosts: Vec<usize>,
    pub candidates: Vec<Candidate<'a>>,
}

impl Offer<'_> {
    /// What is left free by host, for the pool's status.
    pub(super) fn free(&self) -> Vec<HostFree> {
        self.candidates
            .iter()
            .filter(|candidate| candidate.free > 0)
            .map(|candidate| HostFree {
                host: candidate.host.to_string(),
                region: candidate.region.to_string(),
                free: candidate.free,
            })
            .collect()
    }
}

/// Where one pool may take GPUs this pass.
#[derive(Debug, Default)]
pub(super) struct Offers<'a> {
    pub on_demand: Offer<'a>,
    pub spot: Offer<'a>,
    /// Whether each model id of [`Free`] is the pool's model.
    matching: Vec<bool>,
    /// Free GPUs of its model in its regions offered as spot that it may not take.
    pub spot_not_taken: u32,
}

/// Decides where a pool may take GPUs: the hosts in its regions with free GPUs of its
/// model, on demand at the region's price, and spot at the spot price where the pool has
/// one (none when it is not interruptible, spot is paused, or over its max price). Spot it
/// may not take is counted, so the pool can say why it is short beside free GPUs.
pub(super) fn candidates<'a>(
    input: &Input<'a>,
    pool: &PoolTarget,
    book: &PoolBook<'_>,
    free: &Free<'_>,
) -> Offers<'a> {
    let matching: Vec<bool> = free
        .names
        .iter()
        .map(|model| placement::model_matches(&pool.model, model))
        .collect();
    let mut offers = Offers::default();
    let regions = pool
        .regions
        .iter()
        .flat_map(|region| {
            free.by_region
                .get(region_key(region))
                .map_or(&[][..], Vec::as_slice)
        })
        .copied();
    for h in regions {
        let host: &'a HostObs = &input.hosts[h];
        let held_here = book.hosts.get(&h).map_or(0, |v| v.leased + v.pending);
        let on_demand = free.count(h, &matching, false);
        if on_demand > 0 {
            offers.on_demand.hosts.push(h);
            offers.on_demand.candidates.push(Candidate {
                host: &host.name,
                region: &host.region,
                free: on_demand,
                held: held_here,
                price_fen: region_price(pool, &host.region),
            });
        }
        let spot_price = pool.spot.prices.get(region_key(&host.region)).copied();
        if spot_price.is_none() && !pool.external {
            offers.spot_not_taken += free.count(h, &matching, true);
        }
        if spot_price.is_some() {
            let spot = free.count(h, &matching, true);
            if spot > 0 {
                offers.spot.hosts.push(h);
                offers.spot.candidates.push(Candidate {
                    host: &host.name,
                    region: &host.region,
                    free: spot,
                    held: held_here,
                    price_fen: spot_price,
                });
            }
        }
    }
    offers.matching = matching;
    offers
}

/// What a pool rents this pass.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Growth {
    pub on_spot: Placement,
    pub on_demand: Placement,
    /// Wanted but no host has free.
    pub short: u32,
    /// The pool is moving on-demand GPUs back to spot: no scale-in meanwhile.
    pub rebalance: bool,
}

/// Decides how many GPUs a pool rents and where. Below its count it asks for what is
/// missing: on spot up to its spot share, the rest on demand, and spot that no host offers
/// on demand too. At its count with less spot than its share, it goes back to spot: it
/// rents spot for its on-demand GPUs whose paid unit is about to end (no paid minute thrown
/// away), and gives them back once the spot is granted (make before break; the
/// `rebalance` flag keeps the scale-in off until then). An external pool rents only what
/// its binder asks ([`external_orders`]).
pub(super) fn grow(
    pool: &PoolTarget,
    book: &PoolBook<'_>,
    offers: &Offers<'_>,
    now_ms: i64,
) -> Growth {
    let status = &book.status;
    let have = status.actual + status.pending;
    let spot_have = status.spot + book.spot_pending;
    let rebalance = !pool.external
        && status.actual == pool.desired
        && status.pending == book.spot_pending
        && spot_have < pool.spot.wanted;
    let mut growth = Growth {
        rebalance,
        ..Growth::default()
    };
    if pool.external {
        return growth;
    }
    if pool.desired > have {
        let need = pool.desired - have;
        let spot_need = need.min(pool.spot.wanted.saturating_sub(spot_have));
        let on_spot = placement::place(spot_need, &offers.spot.candidates, pool.policy);
        // Spot that no host offers goes on demand.
        let on_demand = placement::place(
            need - spot_need + on_spot.short,
            &offers.on_demand.candidates,
            pool.policy,
        );
        growth.short = on_demand.short;
        growth.on_spot = on_spot;
        growth.on_demand = on_demand;
    } else if rebalance && book.spot_pending == 0 {
        let due = book
            .held
            .iter()
            .filter(|held| {
                !held.spot
                    && crate::spot::swap_due(
                        i64::try_from(held.lease.created_at_ms).unwrap_or(i64::MAX),
                        pool.unit_ms,
                        now_ms,
                        crate::spot::SWAP_LEAD_MS,
                        pool.at_unit_end,
                    )
            })
            .count();
        let count = (pool.spot.wanted - spot_have).min(u32::try_from(due).unwrap_or(u32::MAX));
        growth.on_spot = placement::place(count, &offers.spot.candidates, pool.policy);
        // Spot that cannot be had now is tried again next pass; the pool is not short.
        growth.on_spot.short = 0;
    }
    growth
}

/// Decides which GPUs a pool's placements become: on each chosen host its first free GPUs
/// of the kind, one request each, marked taken so no later pool asks for them.
pub(super) fn take(
    input: &Input<'_>,
    pool: &PoolTarget,
    growth: &Growth,
    offers: &mut Offers<'_>,
    free: &mut Free<'_>,
    book: &mut PoolBook<'_>,
    creates: &mut Vec<Create>,
) {
    for (spot, placed) in [(true, &growth.on_spot), (false, &growth.on_demand)] {
        let offer = if spot {
            &mut offers.spot
        } else {
            &mut offers.on_demand
        };
        for &(c, count) in &placed.takes {
            let h = offer.hosts[c];
            let mut left = count;
            for i in 0..free.gpus[h].len() {
                if left == 0 {
                    break;
                }
                if free.fits(h, i, &offers.matching, spot) {
                    creates.push(Create {
                        pool_id: pool.id.clone(),
                        host: input.hosts[h].name.clone(),
                        gpu_uuids: vec![free.gpus[h][i].uuid.clone()],
                        command: None,
                    });
                    free.gpus[h][i] = &TAKEN;
                    left -= 1;
                }
            }
            offer.candidates[c].free -= count;
            *book.created.entry(h).or_default() += count;
        }
    }
}

/// Decides an external pool's node orders: each node rented where all its GPUs are free
/// now (taken from `free` so no later pool takes them), each lease asked back released.
/// The binder chooses the nodes; the planner only writes them as it writes its own.
pub(super) fn external_orders(
    input: &Input<'_>,
    pool: &PoolTarget,
    free: &mut Free<'_>,
    book: &mut PoolBook<'_>,
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
            .filter_map(|uuid| free.gpus[h].iter().position(|gpu| &gpu.uuid == uuid))
            .collect();
        if request.gpu_uuids.is_empty() || at.len() != request.gpu_uuids.len() {
            // Taken since the binder looked, or asked already: it looks again next pass.
            continue;
        }
        for i in at {
            free.gpus[h][i] = &TAKEN;
        }
        out.creates.push(Create {
            pool_id: pool.id.clone(),
            host: request.host.clone(),
            gpu_uuids: request.gpu_uuids.clone(),
            command: request.command.clone(),
        });
        *book.created.entry(h).or_default() +=
            u32::try_from(request.gpu_uuids.len()).unwrap_or(u32::MAX);
    }
    for lease_id in &pool.nodes.release {
        let Some(&Holding { lease, host: h, .. }) =
            book.held.iter().find(|held| &held.lease.id == lease_id)
        else {
            continue;
        };
        let width = lease_width(lease, pool);
        out.releases.push(ReleaseOrder {
            host: input.hosts[h].name.clone(),
            lease_id: lease.id.clone(),
            pool_id: pool.id.clone(),
            why: Why::ScaleIn,
        });
        book.status.actual = book.status.actual.saturating_sub(width);
        book.status.releasing += width;
        let view = book.host(h, input.hosts);
        view.leased = view.leased.saturating_sub(width);
        view.releasing += width;
        book.show_releasing(&lease.id);
    }
}

/// A pool's scale-in: which held leases go now, and how many wait for their unit's end.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Shrink {
    /// Indexes into the pool's held leases, in the order they are given back.
    pub now: Vec<usize>,
    /// Chosen, but kept until their paid unit ends.
    pub deferred: u32,
    /// When the first of those is due.
    pub next_due_ms: Option<i64>,
}

/// Decides a pool's scale-in when it holds and asks for more than desired: only held
/// leases go (a request in flight cannot be taken back), and the mix is kept: spot above
/// its share goes first, then on demand, then the rest of spot. Within each kind
/// [`placement::choose_release`] picks (the operator's choice, saved state, paid unit's
/// end, idle, dear, new), and with `at_unit_end` a lease with paid time left waits.
pub(super) fn shrink(input: &Input<'_>, pool: &PoolTarget, book: &PoolBook<'_>) -> Shrink {
    let status = &book.status;
    let have = status.actual + status.pending;
    let mut shrink = Shrink::default();
    if pool.desired >= have {
        return shrink;
    }
    let excess = (have - pool.desired).min(status.actual);
    let spot_held = status.spot;
    let on_demand_held = status.actual - spot_held;
    let mut from_spot = excess.min(spot_held.saturating_sub(pool.spot.wanted));
    let from_on_demand = (excess - from_spot).min(on_demand_held);
    from_spot = excess - from_on_demand;
    for (spot, count) in [(true, from_spot), (false, from_on_demand)] {
        let kind: Vec<usize> = (0..book.held.len())
            .filter(|&i| book.held[i].spot == spot)
            .collect();
        let leases: Vec<Held> = kind
            .iter()
            .map(|&i| {
                let held = &book.held[i];
                held_lease(
                    held.lease,
                    &input.hosts[held.host],
                    held.util,
                    pool,
                    input.now_ms,
                )
            })
            .collect();
        let release = placement::choose_release(count, &leases, input.now_ms, pool.at_unit_end);
        shrink.deferred += release.deferred;
        shrink.next_due_ms = earliest(shrink.next_due_ms, release.next_due_ms);
        shrink.now.extend(release.now.into_iter().map(|k| kind[k]));
    }
    shrink
}

fn earliest(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Carries a scale-in out: release orders, and the pool's counts moved from held to
/// releasing.
pub(super) fn give_back(
    input: &Input<'_>,
    pool: &PoolTarget,
    shrink: &Shrink,
    book: &mut PoolBook<'_>,
    releases: &mut Vec<ReleaseOrder>,
) {
    book.status.held_to_unit_end += shrink.deferred;
    book.status.next_due_ms = earliest(book.status.next_due_ms, shrink.next_due_ms);
    for &i in &shrink.now {
        let Holding {
            lease,
            host: h,
            spot,
            ..
        } = book.held[i];
        if spot {
            book.status.spot -= 1;
        }
        releases.push(ReleaseOrder {
            host: input.hosts[h].name.clone(),
            lease_id: lease.id.clone(),
            pool_id: pool.id.clone(),
            why: Why::ScaleIn,
        });
        book.status.actual -= 1;
        book.status.releasing += 1;
        let view = book.host(h, input.hosts);
        view.leased -= 1;
        view.releasing += 1;
        book.show_releasing(&lease.id);
    }
}

/// A pool's leases on hosts being removed, split.
#[derive(Debug, Default)]
pub(super) struct Drain<'a> {
    /// Given back now, newest first.
    pub release: Vec<Holding<'a>>,
    /// Kept serving until their replacements are held.
    pub keep: Vec<Holding<'a>>,
}

/// Decides which of a pool's leases on hosts being removed go now (make before break):
/// as many are kept as the pool is below its count once this pass's requests are placed,
/// so each goes once its replacement is held; all go at once when the pool is short (no
/// host has room for their replacements, so waiting would not help). The newest go first.
pub(super) fn drain<'a>(pool: &PoolTarget, book: &PoolBook<'a>) -> Drain<'a> {
    let (status, draining) = (&book.status, &book.draining);
    let kept = if status.short > 0 {
        0
    } else {
        pool.desired.saturating_sub(status.actual)
    };
    let kept = usize::try_from(kept)
        .unwrap_or(usize::MAX)
        .min(draining.len());
    let mut release = draining.to_vec();
    release.sort_by_key(|held| Reverse(held.lease.created_at_ms));
    let keep = release.split_off(release.len() - kept);
    Drain { release, keep }
}

/// Carries a drain out: release orders for those that go, and those kept counted as held.
pub(super) fn settle_drain(
    input: &Input<'_>,
    pool: &PoolTarget,
    drain: &Drain<'_>,
    book: &mut PoolBook<'_>,
    releases: &mut Vec<ReleaseOrder>,
) {
    // Their utilization was read with the host's; the view takes it as read.
    let no_util: HashMap<&str, f32> = HashMap::new();
    for held in &drain.release {
        let host = &input.hosts[held.host];
        releases.push(ReleaseOrder {
            host: host.name.clone(),
            lease_id: held.lease.id.clone(),
            pool_id: pool.id.clone(),
            why: Why::Drain,
        });
        book.status.releasing += 1;
        book.host(held.host, input.hosts).releasing += 1;
        let mut view = lease_view(held.lease, host, &no_util, PoolLeaseState::Releasing);
        view.util_pct = held.util;
        book.status.leases.push(view);
    }
    for held in &drain.keep {
        book.status.actual += 1;
        if held.spot {
            book.status.spot += 1;
        }
        book.host(held.host, input.hosts).leased += 1;
        let host = &input.hosts[held.host];
        let mut view = lease_view(held.lease, host, &no_util, PoolLeaseState::Active);
        view.util_pct = held.util;
        book.status.leases.push(view);
    }
}

/// Decides how each pool is shown: this pass's requests counted as pending, per host and
/// in all, and its leases ordered by host and fencing token.
pub(super) fn finish(input: &Input<'_>, books: Vec<PoolBook<'_>>) -> Vec<PoolStatus> {
    books
        .into_iter()
        .map(|mut book| {
            for (h, count) in std::mem::take(&mut book.created) {
                book.host(h, input.hosts).pending += count;
                book.status.pending += count;
            }
            let mut status = book.status;
            status.starting = super::starting_gpus(&status.leases);
            status.hosts = book.hosts.into_values().collect();
            status.leases.sort_by(|a, b| {
                (a.host.as_str(), a.fencing_token).cmp(&(b.host.as_str(), b.fencing_token))
            });
            status
        })
        .collect()
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

/// Regions are compared as the registry stores them (trimmed, no spaces).
fn region_key(region: &str) -> &str {
    region.trim()
}

fn region_price(pool: &PoolTarget, region: &str) -> Option<i64> {
    pool.prices.get(region_key(region)).copied()
}

#[cfg(test)]
#[allow(clippy::too_many_lines)] // tests read as their story: no line budget
mod tests;
