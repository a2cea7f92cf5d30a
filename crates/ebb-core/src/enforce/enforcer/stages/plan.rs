//! Plan: [`reconcile::plan`] (pure) on what the pass saw; hosts away past the grace
//! period written off (their fence), fences no longer needed cleared, and what to say of
//! failovers, hosts back, reclaims and GPUs come up from warming kept for the settle stage (said with what their
//! answers rented and released).

use super::super::{Loop, Pass, Stage};
use crate::pools::PoolError;
use ebb_reconcile::reconcile::{self, Input};
use ebb_reconcile::settle;

impl Loop {
    pub(in crate::enforce::enforcer) async fn plan(
        &mut self,
        pass: &mut Pass,
    ) -> Result<(), PoolError> {
        pass.ran(Stage::Plan);
        let grace_ms = i64::try_from(self.config.grace.as_millis()).unwrap_or(i64::MAX);
        let mut plan = reconcile::plan(&Input {
            now_ms: pass.now,
            holder: &pass.holder,
            grace_ms,
            pools: &pass.targets,
            hosts: &pass.hosts,
            known: &pass.known,
            pending: &pass.pending,
        });
        // A Slurm node granted and not registered yet is warming, not ready.
        for status in &mut plan.pools {
            status.mark_starting(self.slurm.not_registered());
        }
        for (host, fence) in &plan.lose {
            self.store.set_fence(host, *fence).await?;
        }
        let grace_s = self.config.grace.as_secs();
        pass.said = settle::failovers(&plan.lose, &pass.targets, &pass.known, grace_s)
            .into_iter()
            .chain(settle::hosts_back(&plan.releases))
            .chain(settle::reclaims(&plan.pools, &mut self.reclaims_said))
            .chain(settle::ready(&plan.pools, pass.now, &mut self.warming))
            .collect();
        for host in &plan.clear_fence {
            self.store.clear_fence(host).await?;
        }
        pass.plan = plan;
        Ok(())
    }
}
