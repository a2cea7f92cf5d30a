//! Breakers: reclaims count for the spot breakers before the pass plans (one that opens
//! its breaker sends its own replacement on demand), and each pool's target for the
//! planner, spot paused where its breaker is open.

use super::super::{Loop, Pass, Stage, target};
use crate::pools::PoolError;
use ebb_reconcile::reconcile::PoolTarget;

impl Loop {
    pub(in crate::enforce::enforcer) async fn breakers(
        &mut self,
        pass: &mut Pass,
    ) -> Result<(), PoolError> {
        pass.ran(Stage::Breakers);
        self.spot
            .before_plan(
                &self.store,
                &pass.recorded.pools,
                &pass.hosts,
                &pass.holder,
                pass.now,
            )
            .await?;
        let breakers = &self.spot;
        pass.targets = pass
            .recorded
            .pools
            .iter()
            .map(|pool| {
                let paused = |region: &str| breakers.paused_until(&pool.model, region).is_some();
                let plain = target(pool, &pass.catalog, &paused);
                PoolTarget {
                    external: pass.bound.contains(&pool.id),
                    // A bound pool holds whole nodes: settled at its count rounded up.
                    desired: self.slurm.settled_gpus(pool).unwrap_or(plain.desired),
                    ..plain
                }
            })
            .collect();
        Ok(())
    }
}
