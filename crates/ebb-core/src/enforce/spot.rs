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
            for ((model, region), _) in self.breakers.open() {
                let key = (model.clone(), region.clone());
                if logged.get(&key) != Some(&true) {
                    switched.insert(key, true);
                }
            }
            for (key, open) in logged {
                if open && self.breakers.open_until(&key.0, &key.1).is_none() {
                    switched.insert(key, false);
                }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::{Clock, ManualClock};
    use crate::db::ConsoleDb;
    use crate::pools::NewActivity;
    use ebb_reconcile::reconcile::Seen;
    use ebb_wire::agent::{Lease, LeaseState};
    use std::sync::Arc;
    use std::time::Duration;

    const MINUTE: i64 = 60_000;
    const T0: i64 = 1_796_083_200_000;

    fn policy() -> BreakerPolicy {
        BreakerPolicy {
            max_interruptions: 1,
            window_ms: 10 * MINUTE,
            cool_off_ms: 5 * MINUTE,
            quiet_ms: 5 * MINUTE,
        }
    }

    fn reclaimed(id: &str, pool: &Pool, holder: &str, deadline: i64) -> Lease {
        Lease {
            id: id.into(),
            pool_id: pool.id.clone(),
            holder_id: holder.into(),
            gpu_uuids: vec![format!("GPU-{id}")],
            gpu_indexes: vec![0],
            fencing_token: 1,
            state: LeaseState::Active,
            created_at_ms: 0,
            release_requested_at_ms: None,
            released_at_ms: None,
            command: None,
            load_profile: None,
            workload_pid: None,
            workload_exit_code: None,
            workload_signal: None,
            workload_log: None,
            checkpoint_at_ms: None,
            release_grace_s: None,
            reclaim_deadline_ms: Some(u64::try_from(deadline).unwrap()),
            spot: true,
            starting: false,
        }
    }

    fn host(leases: Vec<Lease>) -> HostObs {
        HostObs {
            name: "h1".into(),
            region: "cn-east".into(),
            seen: Some(Seen {
                gpus: Vec::new(),
                leases,
            }),
            down_since_ms: None,
            lost_fence: None,
            refusing: None,
            draining: false,
        }
    }

    async fn switches(store: &PoolStore) -> Vec<ChangeReason> {
        store
            .activity_since(0)
            .await
            .unwrap()
            .into_iter()
            .map(|entry| entry.reason)
            .filter(|reason| {
                matches!(
                    reason,
                    ChangeReason::SpotPaused { .. } | ChangeReason::SpotResumed { .. }
                )
            })
            .collect()
    }

    #[tokio::test]
    async fn reclaims_past_k_pause_spot_once_across_a_restart_and_quiet_resumes_it() {
        let dir = ebb_testkit::TempDir::new("spot-breaker");
        let clock = Arc::new(ManualClock::new(T0));
        let db = ConsoleDb::open(&dir)
            .await
            .unwrap()
            .with_clock(clock.clone());
        let store = PoolStore::new(db);
        let input = ebb_wire::pools::PoolInput {
            name: "render".into(),
            model: "H800".into(),
            regions: vec!["cn-east".into()],
            min: 0,
            max: 4,
            base_gpus: 0,
            term: ebb_wire::plan::Term::Month,
            overlay: ebb_wire::plan::OverlayMode::Hour,
            placement: ebb_wire::pools::PlacementPolicy::Pack,
            interruptible: true,
            release_at_unit_end: false,
            spot: ebb_wire::pools::SpotMix {
                spot_pct: 100,
                ..Default::default()
            },
        };
        let facts = [crate::pools::HostFacts {
            name: "h1".into(),
            region: "cn-east".into(),
            models: vec!["NVIDIA H800".into()],
        }];
        let valid = crate::pools::validate(&input, &facts, &ebb_cost::Catalog::demo()).unwrap();
        let pool = store.create(valid).await.unwrap();
        let holder = store.console_id().await.unwrap();
        let pools = [pool.clone()];

        // The first reclaim: one within the window, not more than K = 1.
        let mut breakers = SpotBreakers::new(policy());
        let first = reclaimed("l1", &pool, &holder, T0 + 2 * MINUTE);
        let log_reclaim = |lease: &Lease| NewActivity {
            actor: Actor::Failover,
            from: 0,
            to: 0,
            reason: ChangeReason::Reclaimed {
                host: "h1".into(),
                gpus: 1,
                until_ms: i64::try_from(lease.reclaim_deadline_ms.unwrap()).unwrap(),
            },
            delta_per_hour_fen: None,
            delta_per_month_fen: None,
        };
        store.log(&pool, &log_reclaim(&first)).await.unwrap();
        let hosts = [host(vec![first.clone()])];
        breakers
            .before_plan(&store, &pools, &hosts, &holder, clock.now_ms())
            .await
            .unwrap();
        assert_eq!(breakers.paused_until("H800", "cn-east"), None);
        // Seen again next pass: not counted twice.
        breakers
            .before_plan(&store, &pools, &hosts, &holder, clock.now_ms())
            .await
            .unwrap();
        assert_eq!(breakers.paused_until("H800", "cn-east"), None);

        // A second, a minute later: more than K, paused; another lease's reclaim (ours
        // only) changes nothing.
        clock.advance(Duration::from_secs(60));
        let second = reclaimed("l2", &pool, &holder, T0 + 3 * MINUTE);
        let theirs = reclaimed("l3", &pool, "another-console", T0 + 4 * MINUTE);
        store.log(&pool, &log_reclaim(&second)).await.unwrap();
        let hosts = [host(vec![first.clone(), second.clone(), theirs])];
        breakers
            .before_plan(&store, &pools, &hosts, &holder, clock.now_ms())
            .await
            .unwrap();
        let until = T0 + MINUTE + 5 * MINUTE;
        assert_eq!(breakers.paused_until("H800", "cn-east"), Some(until));
        assert_eq!(
            switches(&store).await,
            vec![ChangeReason::SpotPaused {
                model: "H800".into(),
                region: "cn-east".into(),
                interruptions: 2,
                window_minutes: 10,
                until_ms: until,
            }]
        );

        // A restart: the breaker is read back from the log, paused still, said once.
        let mut restarted = SpotBreakers::new(policy());
        restarted
            .before_plan(&store, &pools, &hosts, &holder, clock.now_ms())
            .await
            .unwrap();
        assert!(restarted.paused_until("H800", "cn-east").is_some());
        assert_eq!(switches(&store).await.len(), 1);

        // Quiet past the cool-off: resumed, said once.
        clock.advance(Duration::from_secs(5 * 60));
        for _ in 0..2 {
            restarted
                .before_plan(&store, &pools, &[host(Vec::new())], &holder, clock.now_ms())
                .await
                .unwrap();
        }
        assert_eq!(restarted.paused_until("H800", "cn-east"), None);
        let said = switches(&store).await;
        assert_eq!(said.len(), 2);
        assert!(matches!(
            said[1],
            ChangeReason::SpotResumed {
                quiet_minutes: 5,
                ..
            }
        ));
    }
}
