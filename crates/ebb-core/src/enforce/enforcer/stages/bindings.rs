//! Bindings: the Slurm binder chooses its nodes on what this pass saw (and Slurm says);
//! its node requests and releases go to the planner with everything else (it rents and
//! releases nothing itself).

use super::super::{Loop, Pass, Stage};
use crate::pools::PoolError;

impl Loop {
    pub(in crate::enforce::enforcer) async fn bindings(
        &mut self,
        pass: &mut Pass,
    ) -> Result<(), PoolError> {
        pass.ran(Stage::Bindings);
        self.slurm.set_prices(&pass.targets, &pass.hosts);
        self.slurm
            .tick(&crate::slurm::binder::TickInput {
                store: &self.store,
                holder: &pass.holder,
                hosts: &pass.hosts,
                pools: &pass.recorded.pools,
                pending: &pass.pending,
                now_ms: pass.now,
            })
            .await;
        let mut orders = self.slurm.take_orders();
        for target in pass.targets.iter_mut().filter(|target| target.external) {
            target.nodes = orders.remove(&target.id).unwrap_or_default();
        }
        Ok(())
    }
}
