//! What a pass's answers mean, pure: the third step of the enforcer's pass.
//!
//! A pass is plan ([`crate::reconcile::plan`]) → act (the enforcer sends the requests and
//! releases) → settle (here): which intents the answers end and which stay pending, the
//! per-host tally, which of our leases left an agent's list (to be looked up by id, since
//! an agent lists only the leases not yet released) and which ended in a release's answer,
//! which hosts' lease history moved, the activity reasons a write-off or a host coming
//! back gives, each pool's notes, its status after the pass, and how each open change
//! stands. The enforcer writes what this returns; nothing here does IO.

use crate::reconcile::{
    HostObs, KnownLease, Pending, PoolStatus, PoolTarget, Refusals, ReleaseOrder, Why,
};
use ebb_wire::agent::{Lease, LeaseState};
use ebb_wire::pools::{HostResult, Outcome, PoolLeaseState};
use ebb_wire::reasons::{ChangeReason, HostProblem, PoolNote};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// An agent's answer to one lease request.
#[derive(Debug, Clone, PartialEq)]
pub enum CreateAnswer {
    Granted(Box<Lease>),
    /// Certainly not granted (not free, invalid): the intent is done.
    Refused(HostProblem),
    /// No certain answer (timeout, connection): the intent stays and is sent again.
    Unknown(HostProblem),
}

/// An agent's answer to one release: the lease as it is now (`released` when nothing was
/// left to stop, `releasing` while its workload stops).
pub type ReleaseAnswer = Result<Box<Lease>, HostProblem>;

/// What an agent answered when asked by id for a lease of ours it no longer lists.
#[derive(Debug, Clone, PartialEq)]
pub enum Lookup {
    /// The lease as the agent keeps it.
    Found(Box<Lease>),
    /// The agent keeps no such lease: released longer ago than its retention (or its
    /// lease database was lost).
    Forgotten,
    /// No certain answer: asked again next pass.
    Failed(HostProblem),
}

/// What one pass did with one pool's requests to one host.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostTally {
    pub granted: u32,
    pub released: u32,
    pub failed: u32,
    /// The last failure's reason.
    pub last_error: Option<HostProblem>,
}

/// Per (pool id, host): what the pass did there.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally(BTreeMap<(String, String), HostTally>);

impl Tally {
    fn at(&mut self, pool_id: &str, host: &str) -> &mut HostTally {
        self.0
            .entry((pool_id.to_string(), host.to_string()))
            .or_default()
    }

    /// One pool's hosts, by name.
    pub fn of_pool<'a>(
        &'a self,
        pool_id: &'a str,
    ) -> impl Iterator<Item = (&'a str, &'a HostTally)> {
        self.0
            .iter()
            .filter(move |((pool, _), _)| pool == pool_id)
            .map(|((_, host), tally)| (host.as_str(), tally))
    }

    fn sum(&self, count: impl Fn(&HostTally) -> u32) -> u32 {
        self.0.values().map(count).sum()
    }

    pub fn granted(&self) -> u32 {
        self.sum(|t| t.granted)
    }

    pub fn released(&self) -> u32 {
        self.sum(|t| t.released)
    }

    pub fn failed(&self) -> u32 {
        self.sum(|t| t.failed)
    }
}

/// The intents a batch of answers settles.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CreatesSettled {
    /// Ended: by key, with the host and lease when granted (what the store resolves).
    pub resolved: Vec<(String, Option<(String, Lease)>)>,
    /// Not answered for certain: sent again next pass.
    pub pending: Vec<Pending>,
    /// Hosts that refused a request for themselves (see [`Refusals`]), in answer order.
    pub host_refusals: Vec<(String, HostProblem)>,
}

impl CreatesSettled {
    /// Brings the hosts' refusal backoffs up to date: a grant forgives, a refusal of the
    /// host itself starts or doubles its backoff.
    pub fn update(&self, refusals: &mut Refusals, now_ms: i64) {
        for (_, granted) in &self.resolved {
            if let Some((host, _)) = granted {
                refusals.granted(host);
            }
        }
        for (host, problem) in &self.host_refusals {
            refusals.refused(host, problem.clone(), now_ms);
        }
    }
}

/// Reads lease-request answers: a grant or a certain refusal ends its intent, an
/// uncertain one stays pending. A granted lease joins its host's observation, so the
/// status written after the pass shows it at once.
pub fn creates(
    answers: Vec<(Pending, CreateAnswer)>,
    hosts: &mut [HostObs],
    tally: &mut Tally,
) -> CreatesSettled {
    let mut settled = CreatesSettled::default();
    for (intent, answer) in answers {
        let entry = tally.at(&intent.pool_id, &intent.host);
        match answer {
            CreateAnswer::Granted(lease) => {
                entry.granted += 1;
                if let Some(host) = hosts.iter_mut().find(|h| h.name == intent.host)
                    && let Some(seen) = &mut host.seen
                    && !seen.leases.iter().any(|l| l.id == lease.id)
                {
                    seen.leases.push((*lease).clone());
                }
                settled
                    .resolved
                    .push((intent.key, Some((intent.host, *lease))));
            }
            CreateAnswer::Refused(error) => {
                entry.failed += 1;
                if Refusals::is_host_refusal(&error)
                    && !settled.host_refusals.iter().any(|(h, _)| h == &intent.host)
                {
                    settled
                        .host_refusals
                        .push((intent.host.clone(), error.clone()));
                }
                entry.last_error = Some(error);
                settled.resolved.push((intent.key, None));
            }
            CreateAnswer::Unknown(error) => {
                entry.failed += 1;
                entry.last_error = Some(error);
                settled.pending.push(intent);
            }
        }
    }
    settled
}

/// The leases the release answers say are over, by host: their end, as the agents
/// recorded it, goes into the lease history at once.
pub fn ended(answers: &[(ReleaseOrder, ReleaseAnswer)]) -> Vec<(&str, &Lease)> {
    answers
        .iter()
        .filter_map(|(order, answer)| {
            let lease = answer.as_ref().ok()?;
            (lease.state == LeaseState::Released && lease.released_at_ms.is_some())
                .then_some((order.host.as_str(), &**lease))
        })
        .collect()
}

/// Reads release answers into the tally.
pub fn releases(answers: Vec<(ReleaseOrder, ReleaseAnswer)>, tally: &mut Tally) {
    for (order, answer) in answers {
        let entry = tally.at(&order.pool_id, &order.host);
        match answer {
            Ok(_) => entry.released += 1,
            Err(error) => {
                entry.failed += 1;
                entry.last_error = Some(error);
            }
        }
    }
}

/// Our leases recorded as held, by host and id, that a host which answered no longer
/// lists: released since (an agent lists only the leases not yet released), or forgotten
/// by it. The enforcer asks the agent for each by id, so the history records when it
/// ended as the agent does; a pass asks only for what left the list since the last.
pub fn vanished(hosts: &[HostObs], recorded: &[KnownLease]) -> Vec<(String, String)> {
    let listed: HashMap<&str, HashSet<&str>> = hosts
        .iter()
        .filter_map(|host| {
            let seen = host.seen.as_ref()?;
            Some((
                host.name.as_str(),
                seen.leases.iter().map(|lease| lease.id.as_str()).collect(),
            ))
        })
        .collect();
    recorded
        .iter()
        .filter(|lease| {
            listed
                .get(lease.host.as_str())
                .is_some_and(|ids| !ids.contains(lease.lease_id.as_str()))
        })
        .map(|lease| (lease.host.clone(), lease.lease_id.clone()))
        .collect()
}

/// Reads the answers about vanished leases: a released one joins its host's observation,
/// so the history records the agent's end for it; a forgotten one is left out, so the
/// history ends it now. Returns the hosts whose history waits a pass: an answer did not
/// come, or said the lease is not released after all.
pub fn looked_up(
    answers: Vec<((String, String), Lookup)>,
    hosts: &mut [HostObs],
) -> BTreeSet<String> {
    let mut waiting = BTreeSet::new();
    for ((host_name, lease_id), answer) in answers {
        let Some(host) = hosts.iter_mut().find(|host| host.name == host_name) else {
            continue;
        };
        match answer {
            Lookup::Found(lease)
                if lease.id == lease_id
                    && lease.state == LeaseState::Released
                    && lease.released_at_ms.is_some() =>
            {
                if let Some(seen) = &mut host.seen
                    && !seen.leases.iter().any(|listed| listed.id == lease.id)
                {
                    seen.leases.push(*lease);
                }
            }
            Lookup::Forgotten => {}
            Lookup::Found(_) | Lookup::Failed(_) => {
                waiting.insert(host_name);
            }
        }
    }
    waiting
}

/// The hosts whose live leases of ours differ from the recorded ones, with every lease of
/// ours they report: the lease history is written only where it moved, and not for the
/// hosts `waiting` for an answer about a lease they no longer list.
pub fn moved_history<'a>(
    hosts: &'a [HostObs],
    recorded: &[KnownLease],
    holder: &str,
    waiting: &BTreeSet<String>,
) -> Vec<(&'a str, Vec<&'a Lease>)> {
    let mut moved = Vec::new();
    for host in hosts {
        let Some(seen) = &host.seen else { continue };
        if waiting.contains(&host.name) {
            continue;
        }
        let ours: Vec<&Lease> = seen
            .leases
            .iter()
            .filter(|lease| lease.holder_id == holder)
            .collect();
        let mut live: Vec<&str> = ours
            .iter()
            .filter(|lease| lease.released_at_ms.is_none())
            .map(|lease| lease.id.as_str())
            .collect();
        let mut open: Vec<&str> = recorded
            .iter()
            .filter(|lease| lease.host == host.name)
            .map(|lease| lease.lease_id.as_str())
            .collect();
        live.sort_unstable();
        open.sort_unstable();
        if live != open {
            moved.push((host.name.as_str(), ours));
        }
    }
    moved
}

/// The activity a write-off gives: per pool that held leases on a host away past the
/// grace period, how many GPUs it lost there.
/// The reclaims to say: each lease of a pool its host is taking back (`Reclaimed` in the
/// plan's pool status) not in `said`, as the pool's entry. `said` is left holding the
/// reclaimed leases seen now, so each is said once while it lasts.
pub fn reclaims(
    statuses: &[crate::reconcile::PoolStatus],
    said: &mut HashSet<String>,
) -> Vec<(String, ChangeReason)> {
    let mut seen = HashSet::new();
    let mut reasons = Vec::new();
    for status in statuses {
        for lease in &status.leases {
            let (PoolLeaseState::Reclaimed, Some(until_ms)) =
                (lease.state, lease.reclaim_deadline_ms)
            else {
                continue;
            };
            seen.insert(lease.lease_id.clone());
            if said.contains(&lease.lease_id) {
                continue;
            }
            reasons.push((
                status.pool_id.clone(),
                ChangeReason::Reclaimed {
                    host: lease.host.clone(),
                    gpus: u32::try_from(lease.gpu_uuids.len()).unwrap_or(u32::MAX),
                    until_ms,
                },
            ));
        }
    }
    *said = seen;
    reasons
}

/// The GPUs that came up since the last pass: each pool's leases seen warming (`starting`,
/// in `warming`) that are now active and not starting, as one entry for the pool naming
/// their hosts and how long the slowest took from its grant. `warming` is left holding the
/// leases starting now; one released while it warmed is dropped unsaid, and after a
/// restart a lease already warming when the console came up is never said.
pub fn ready(
    statuses: &[crate::reconcile::PoolStatus],
    now_ms: i64,
    warming: &mut HashSet<String>,
) -> Vec<(String, ChangeReason)> {
    let mut still = HashSet::new();
    let mut reasons = Vec::new();
    for status in statuses {
        let mut hosts = BTreeSet::new();
        let mut gpus = 0u32;
        let mut slowest_ms = 0i64;
        for lease in &status.leases {
            if lease.state != PoolLeaseState::Active {
                continue;
            }
            if lease.starting {
                still.insert(lease.lease_id.clone());
            } else if warming.contains(&lease.lease_id) {
                hosts.insert(lease.host.clone());
                gpus += u32::try_from(lease.gpu_uuids.len()).unwrap_or(u32::MAX);
                slowest_ms = slowest_ms.max(now_ms - lease.granted_at_ms);
            }
        }
        if gpus > 0 {
            reasons.push((
                status.pool_id.clone(),
                ChangeReason::Ready {
                    hosts: hosts.into_iter().collect(),
                    gpus,
                    warmed_s: u64::try_from(slowest_ms.max(0) / 1000).unwrap_or(0),
                },
            ));
        }
    }
    *warming = still;
    reasons
}

pub fn failovers(
    lose: &[(String, u64)],
    pools: &[PoolTarget],
    known: &[KnownLease],
    grace_s: u64,
) -> Vec<(String, ChangeReason)> {
    let mut reasons = Vec::new();
    for (host, _fence) in lose {
        for pool in pools {
            let gpus = known
                .iter()
                .filter(|l| &l.host == host && l.pool_id == pool.id)
                .count();
            if gpus > 0 {
                reasons.push((
                    pool.id.clone(),
                    ChangeReason::Failover {
                        host: host.clone(),
                        gpus: u32::try_from(gpus).unwrap_or(u32::MAX),
                        grace_s,
                    },
                ));
            }
        }
    }
    reasons
}

/// The activity a host coming back gives: per pool, the stale leases released there.
pub fn hosts_back(releases: &[ReleaseOrder]) -> Vec<(String, ChangeReason)> {
    let stale: BTreeMap<&str, Vec<&str>> =
        releases
            .iter()
            .filter(|r| r.why == Why::Stale)
            .fold(BTreeMap::new(), |mut acc, r| {
                acc.entry(r.pool_id.as_str())
                    .or_default()
                    .push(r.host.as_str());
                acc
            });
    stale
        .into_iter()
        .map(|(pool_id, on)| {
            (
                pool_id.to_string(),
                ChangeReason::HostBack {
                    host: on[0].to_string(),
                    leases: u32::try_from(on.len()).unwrap_or(u32::MAX),
                },
            )
        })
        .collect()
}

/// Why a pool is not where it should be (`hosts`: this pass's observation, for the hosts
/// kept off new requests because they refuse them).
pub fn notes(pool: &PoolTarget, status: &PoolStatus, hosts: &[HostObs]) -> Vec<PoolNote> {
    let mut notes = Vec::new();
    if status.short > 0 {
        notes.push(PoolNote::Short {
            gpus: status.short,
            model: pool.model.clone(),
            regions: pool.regions.clone(),
        });
    }
    for host in status.hosts.iter().filter(|h| h.failed > 0) {
        if let Some(problem) = &host.last_error {
            notes.push(PoolNote::HostFailing {
                host: host.host.clone(),
                problem: problem.clone(),
            });
        }
    }
    for host in hosts {
        let Some(problem) = &host.refusing else {
            continue;
        };
        let failing = |note: &PoolNote| matches!(note, PoolNote::HostFailing { host: h, .. } if h == &host.name);
        if pool.regions.contains(&host.region) && !notes.iter().any(failing) {
            notes.push(PoolNote::HostFailing {
                host: host.name.clone(),
                problem: problem.clone(),
            });
        }
    }
    if status.lost > 0 {
        notes.push(PoolNote::Lost { gpus: status.lost });
    }
    if status.held_to_unit_end > 0 {
        notes.push(PoolNote::HeldToUnitEnd {
            gpus: status.held_to_unit_end,
        });
    }
    notes
}

/// The planned statuses with their notes: what is shown while the requests are out.
pub fn asked(planned: &[PoolStatus], pools: &[PoolTarget], hosts: &[HostObs]) -> Vec<PoolStatus> {
    planned
        .iter()
        .zip(pools)
        .map(|(status, pool)| PoolStatus {
            notes: notes(pool, status, hosts),
            ..status.clone()
        })
        .collect()
}

/// An open change's results and outcome after the pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeUpdate {
    /// The activity entry.
    pub id: i64,
    pub results: Vec<HostResult>,
    pub outcome: Outcome,
}

/// Each pool after the pass, the changes to update, and whether everything converged.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settled {
    pub statuses: Vec<PoolStatus>,
    pub changes: Vec<ChangeUpdate>,
    /// Every pool holds exactly its desired count, nothing pending or held.
    pub converged: bool,
    /// Per pool (not bound to Slurm, whose binder says its own steps), this pass's
    /// per-host results that no open change took: GPUs rented and released to keep its
    /// count (a replacement, back to spot, a GPU kept to its unit's end going).
    pub unclaimed: Vec<(String, Vec<HostResult>)>,
}

/// Settles the pass: the planned statuses moved by what the answers did, the leases
/// granted this pass shown at once, notes, and each open change's merged results and
/// outcome (the latest change of a pool takes this pass's results; older ones are only
/// closed, when the pool converged). `open` maps a pool id to its open changes, oldest
/// first.
pub fn finish(
    planned: Vec<PoolStatus>,
    pools: &[PoolTarget],
    tally: &Tally,
    hosts: &[HostObs],
    holder: &str,
    open: &HashMap<String, Vec<(i64, Vec<HostResult>)>>,
) -> Settled {
    let mut settled = Settled {
        converged: true,
        ..Settled::default()
    };
    for (mut status, pool) in planned.into_iter().zip(pools) {
        let mut results: Vec<HostResult> = Vec::new();
        for (host, done) in tally.of_pool(&pool.id) {
            status.actual += done.granted;
            status.pending = status.pending.saturating_sub(done.granted + done.failed);
            if let Some(view) = status.hosts.iter_mut().find(|h| h.host == host) {
                view.leased += done.granted;
                view.pending = view.pending.saturating_sub(done.granted + done.failed);
                view.failed = done.failed;
                view.last_error.clone_from(&done.last_error);
            }
            results.push(HostResult {
                host: host.to_string(),
                granted: done.granted,
                released: done.released,
                failed: done.failed,
                error: done.last_error.clone(),
            });
        }
        // Leases granted this pass, shown at once.
        for host in hosts {
            let Some(seen) = &host.seen else { continue };
            for lease in &seen.leases {
                if lease.holder_id == holder
                    && lease.pool_id == pool.id
                    && lease.state == LeaseState::Active
                    && !status.leases.iter().any(|shown| shown.lease_id == lease.id)
                {
                    let view = crate::reconcile::lease_view(
                        lease,
                        host,
                        &HashMap::new(),
                        PoolLeaseState::Active,
                    );
                    if view.spot || lease.spot {
                        status.spot += 1;
                    }
                    status.leases.push(view);
                }
            }
        }
        status.notes = notes(pool, &status, hosts);
        let converged =
            status.actual == pool.desired && status.pending == 0 && status.held_to_unit_end == 0;
        settled.converged &= converged;
        let moved = results.iter().any(|r| r.granted + r.released > 0);
        if moved && !pool.external && open.get(&pool.id).is_none_or(Vec::is_empty) {
            settled.unclaimed.push((pool.id.clone(), results.clone()));
        }
        if let Some(changes) = open.get(&pool.id) {
            for (index, (id, before)) in changes.iter().enumerate() {
                let latest = index + 1 == changes.len();
                if !latest && !converged {
                    continue;
                }
                let merged = if latest {
                    merge(before, &results)
                } else {
                    before.clone()
                };
                let outcome = if converged {
                    Outcome::Done
                } else if merged.iter().any(|r| r.failed > 0) || status.short > 0 {
                    Outcome::Partial
                } else {
                    Outcome::InProgress
                };
                settled.changes.push(ChangeUpdate {
                    id: *id,
                    results: merged,
                    outcome,
                });
            }
        }
        settled.statuses.push(status);
    }
    settled
}

/// What this pass's grants and releases move each pool's cost by, per hour (fen): each
/// lease's GPUs at its region's price (spot's for a lease on spot), granted adding and
/// released taking away. Pools with no price for a region count nothing for it.
pub fn moved_per_hour(
    pools: &[PoolTarget],
    hosts: &[HostObs],
    granted: &[(&str, &Lease)],
    released: &[(&str, &Lease)],
) -> HashMap<String, i64> {
    let mut moved: HashMap<String, i64> = HashMap::new();
    let price = |host: &str, lease: &Lease| -> Option<(String, i64)> {
        let pool = pools.iter().find(|pool| pool.id == lease.pool_id)?;
        let host = hosts.iter().find(|h| h.name == host)?;
        let region = host.region.trim();
        let spot = lease.spot || crate::reconcile::offered_as_spot(lease, host);
        let per_gpu = if spot {
            pool.spot
                .prices
                .get(region)
                .or_else(|| pool.prices.get(region))
        } else {
            pool.prices.get(region)
        }?;
        let gpus = i64::try_from(lease.gpu_uuids.len().max(1)).unwrap_or(1);
        Some((pool.id.clone(), per_gpu * gpus))
    };
    for (sign, leases) in [(1, granted), (-1, released)] {
        for (host, lease) in leases {
            if let Some((pool, fen)) = price(host, lease) {
                *moved.entry(pool).or_default() += sign * fen;
            }
        }
    }
    moved
}

/// Adds this pass's per-host results to a change's.
pub fn merge(before: &[HostResult], now: &[HostResult]) -> Vec<HostResult> {
    let mut merged: Vec<HostResult> = before.to_vec();
    for result in now {
        match merged.iter_mut().find(|r| r.host == result.host) {
            Some(had) => {
                had.granted += result.granted;
                had.released += result.released;
                had.failed += result.failed;
                if result.error.is_some() {
                    had.error.clone_from(&result.error);
                }
            }
            None => merged.push(result.clone()),
        }
    }
    merged
}

#[cfg(test)]
mod tests;
