//! Settle: what the answers mean ([`settle`], pure), written in as few transactions as it
//! takes: intents resolved, lease ends recorded, every grant and release in the activity
//! log with its hosts and cost (in the pool's open change, in a failover or reclaim entry
//! of this pass, or in an upkeep entry), each pool's status, its history, and the answers
//! to the binder's node requests told to it.

use super::super::{Loop, Pass, Stage, failover_entry, granted_leases, node_answers_of};
use crate::pools::{NewActivity, PoolError};
use ebb_reconcile::settle;
use ebb_wire::pools::{Actor, Outcome};
use ebb_wire::reasons::{ChangeReason, PoolNote, SpotRefusal};

impl Loop {
    pub(in crate::enforce::enforcer) async fn settle(
        &mut self,
        pass: &mut Pass,
    ) -> Result<(), PoolError> {
        pass.ran(Stage::Settle);
        let sent = std::mem::take(&mut pass.sent);
        pass.node_answers
            .extend(node_answers_of(&sent, &pass.bound));
        pass.granted.extend(granted_leases(&sent));
        let sent = settle::creates(sent, &mut pass.hosts, &mut pass.tally);
        sent.update(&mut self.refusals, pass.now);
        self.store.resolve_intents(&sent.resolved).await?;
        pass.unanswered = sent.pending.len();
        let released = std::mem::take(&mut pass.released);
        let ended = settle::ended(&released);
        self.store.record_ended(&ended).await?;
        let granted: Vec<(&str, &ebb_wire::agent::Lease)> = pass
            .granted
            .iter()
            .map(|(host, lease)| (host.as_str(), lease))
            .collect();
        let per_hour = settle::moved_per_hour(&pass.targets, &pass.hosts, &granted, &ended);
        settle::releases(released, &mut pass.tally);

        let pools = &pass.recorded.pools;
        let mut open = pass.recorded.open.clone();
        for (pool_id, reason) in std::mem::take(&mut pass.said) {
            let Some(pool) = pools.iter().find(|p| p.id == pool_id) else {
                continue;
            };
            if let ChangeReason::Ready { .. } = reason {
                // Said as it is: the enforcer's, no change of count or cost, and no
                // request of this pass to carry.
                let entry = NewActivity {
                    actor: Actor::Enforcer,
                    from: pool.desired,
                    to: pool.desired,
                    reason,
                    delta_per_hour_fen: None,
                    delta_per_month_fen: None,
                };
                self.store.log(pool, &entry).await?;
                continue;
            }
            let entry = NewActivity {
                delta_per_hour_fen: per_hour.get(&pool_id).copied(),
                ..failover_entry(pool, reason)
            };
            let id = self.store.log(pool, &entry).await?;
            open.entry(pool_id).or_default().push((id, Vec::new()));
        }
        let planned = std::mem::take(&mut pass.plan.pools);
        let mut settled = settle::finish(
            planned,
            &pass.targets,
            &pass.tally,
            &pass.hosts,
            &pass.holder,
            &open,
        );
        for (pool_id, results) in &settled.unclaimed {
            let Some(pool) = pools.iter().find(|p| &p.id == pool_id) else {
                continue;
            };
            let entry = NewActivity {
                actor: Actor::Enforcer,
                from: pool.desired,
                to: pool.desired,
                reason: ChangeReason::Upkeep {
                    rented: results.iter().map(|r| r.granted).sum(),
                    released: results.iter().map(|r| r.released).sum(),
                },
                delta_per_hour_fen: per_hour.get(pool_id).copied(),
                delta_per_month_fen: None,
            };
            let id = self.store.log(pool, &entry).await?;
            self.store.update_change(id, results, Outcome::Done).await?;
        }
        // Spot paused where a pool would take it: said on the pool; a short pool says why
        // it leaves free spot GPUs (one capacity truth with Fleet's "free").
        for status in &mut settled.statuses {
            let Some(pool) = pools.iter().find(|p| p.id == status.pool_id) else {
                continue;
            };
            if status.short > 0 && status.spot_not_taken > 0 {
                let paused = pool
                    .regions
                    .iter()
                    .any(|region| self.spot.paused_until(&pool.model, region).is_some());
                let why = if !pool.interruptible || pool.mix().spot_pct == 0 {
                    SpotRefusal::NotInterruptible
                } else if paused {
                    SpotRefusal::Paused
                } else {
                    SpotRefusal::OverMaxPrice
                };
                status.notes.push(PoolNote::SpotNotTaken {
                    gpus: status.spot_not_taken,
                    why,
                });
            }
            if pool.mix().spot_pct == 0 {
                continue;
            }
            for region in &pool.regions {
                if let Some(until_ms) = self.spot.paused_until(&pool.model, region) {
                    status.notes.push(PoolNote::SpotPaused {
                        region: region.clone(),
                        until_ms,
                    });
                }
            }
        }
        for change in &settled.changes {
            self.store
                .update_change(change.id, &change.results, change.outcome)
                .await?;
        }
        self.store
            .write_status(&settled.statuses, self.store.now_ms())
            .await?;
        crate::pool_history::after_pass(&self.store, pools, &settled.statuses).await;
        self.slurm
            .answered(&self.store, pools, &pass.hosts, &pass.node_answers)
            .await?;
        pass.settled = settled;
        Ok(())
    }
}
