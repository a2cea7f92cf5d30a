//! The spot circuit breaker, live: the shell around `ebb_reconcile::spot::Breakers` the
//! enforcer asks before each plan. A reclaim of one of our leases counts for its pool's
//! model in its host's region the first pass it is seen (before that pass plans, so a
//! reclaim that opens the breaker already sends its own replacement on demand); each
//! switch is a console-wide activity entry (`SpotPaused`, `SpotResumed`) and so a
//! notification. Level-triggered across restarts: the breakers are rebuilt from the
//! activity log's reclaims, and a switch the log does not show yet is logged then.

use crate::pools::{Pool, PoolError, PoolStore};
use ebb_reconcile::reconcile::HostObs;
use ebb_reconcile::spot::{BreakerPolicy, Breakers, Switch};
use ebb_wire::pools::Actor;
use ebb_wire::reasons::ChangeReason;
use std::collections::{BTreeMap, HashSet};

/// Every model × region's breaker, and the reclaims already counted.
#[derive(Debug)]
pub(crate) struct SpotBreakers {
    breakers: Breakers,
    /// Reclaims counted, by host and deadline (a lease's reclaim has one of each).
    counted: HashSet<(String, i64)>,
    /// Whether the log was read.
    seeded: bool,
}

impl SpotBreakers {
    pub(crate) fn new(policy: BreakerPolicy) -> SpotBreakers {
        SpotBreakers {
            breakers: Breakers::new(policy),
            counted: HashSet::new(),
            seeded: false,
        }
    }

    /// Before a pass plans: counts the reclaims first seen now, closes the breakers that
    /// cooled off, and logs every switch the log does not show yet.
    pub(crate) async fn before_plan(
        &mut self,
        store: &PoolStore,
        pools: &[Pool],
        hosts: &[HostObs],
        holder: &str,
        now_ms: i64,
    ) -> Result<(), PoolError> {
        let policy = self.breakers.policy();
        let mut switched: BTreeMap<(String, String), bool> = BTreeMap::new();
        if !self.seeded {
            // The reclaims of the last window and cool-off, oldest first.
            let from = now_ms - policy.window_ms - policy.cool_off_ms.max(policy.quiet_ms);
            let mut logged: BTreeMap<(String, String), bool> = BTreeMap::new();
            for entry in store.activity_since(from).await? {
                match &entry.reason {
                    ChangeReason::Reclaimed { host, until_ms, .. } => {
                        let (Some(pool), Some(region)) = (
                            pools.iter().find(|p| p.name == entry.pool),
                            region_of(hosts, host),
                        ) else {
                            continue;
                        };
                        if self.counted.insert((host.clone(), *until_ms)) {
                            self.breakers.record(&pool.model, region, entry.at_ms);
                        }
                    }
                    ChangeReason::SpotPaused { model, region, .. } => {
                        logged.insert((model.clone(), region.clone()), true);
                    }
                    ChangeReason::SpotResumed { model, region, .. } => {
                        logged.insert((model.clone(), region.clone()), false);
                    }
                    _ => {}
                }
            }
            // What the log says last, against what the reclaims make of it now.
            for (key, open) in logged {
                if self.breakers.open_until(&key.0, &key.1).is_some() != open {
                    switched.insert(key, !open);
                }
            }
            for ((model, region), _) in self.breakers.open() {
                switched
                    .entry((model.clone(), region.clone()))
                    .or_insert(true);
            }
            self.seeded = true;
        }
        for host in hosts {
            let Some(seen) = &host.seen else { continue };
            for lease in &seen.leases {
                let Some(deadline) = lease.reclaim_deadline_ms else {
                    continue;
                };
                let deadline = i64::try_from(deadline).unwrap_or(i64::MAX);
                if lease.holder_id != holder || !self.counted.insert((host.name.clone(), deadline))
                {
                    continue;
                }
                let Some(pool) = pools.iter().find(|p| p.id == lease.pool_id) else {
                    continue;
                };
                if let Some(Switch::Opened { .. }) =
                    self.breakers.record(&pool.model, &host.region, now_ms)
                {
                    switched.insert((pool.model.clone(), host.region.clone()), true);
                }
            }
        }
        for key in self.breakers.tick(now_ms) {
            switched.insert(key, false);
        }
        for ((model, region), open) in switched {
            let reason = if open {
                let Some(until_ms) = self.breakers.open_until(&model, &region) else {
                    continue;
                };
                ChangeReason::SpotPaused {
                    interruptions: self.breakers.recent(&model, &region, now_ms),
                    window_minutes: u32::try_from(policy.window_ms / 60_000).unwrap_or(0),
                    model,
                    region,
                    until_ms,
                }
            } else {
                ChangeReason::SpotResumed {
                    model,
                    region,
                    quiet_minutes: u32::try_from(policy.quiet_ms / 60_000).unwrap_or(0),
                }
            };
            store.log_console(Actor::Enforcer, &reason).await?;
        }
        Ok(())
    }

    /// When spot of `model` in `region` may be taken again, while it is paused.
    pub(crate) fn paused_until(&self, model: &str, region: &str) -> Option<i64> {
        self.breakers.open_until(model, region)
    }
}

fn region_of<'h>(hosts: &'h [HostObs], host: &str) -> Option<&'h str> {
    hosts
        .iter()
        .find(|h| h.name == host)
        .map(|h| h.region.as_str())
}
