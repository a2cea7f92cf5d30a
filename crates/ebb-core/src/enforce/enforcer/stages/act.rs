//! Act: the plan's new requests written to `lease_intents` first, then sent with its
//! releases through the one sender; a host refusing this console's term is noted (it
//! steps down after the pass).

use super::super::{Loop, Pass, Stage, is_stale_term};
use crate::pools::PoolError;
use ebb_reconcile::reconcile::Pending;
use ebb_reconcile::settle::{self, CreateAnswer};

impl Loop {
    pub(in crate::enforce::enforcer) async fn act(
        &mut self,
        pass: &mut Pass,
    ) -> Result<(), PoolError> {
        pass.ran(Stage::Act);
        let plan = &pass.plan;
        let new: Vec<Pending> = plan
            .creates
            .iter()
            .map(|create| Pending {
                key: crate::pools::random_hex(16),
                pool_id: create.pool_id.clone(),
                host: create.host.clone(),
                gpu_uuids: create.gpu_uuids.clone(),
                command: create.command.clone(),
            })
            .collect();
        self.store.add_intents(&new).await?;
        if !plan.creates.is_empty() || !plan.releases.is_empty() {
            // Shown while the requests are out: what each host is being asked for.
            let asked = settle::asked(&plan.pools, &pass.targets, &pass.hosts);
            self.store.write_status(&asked, self.store.now_ms()).await?;
        }
        let sender = self.sender(&pass.holder);
        let (sent, released) = tokio::join!(sender.rent(new), sender.release(&plan.releases));
        self.stale_term |= sent.iter().any(|(_, answer)| match answer {
            CreateAnswer::Refused(problem) => is_stale_term(problem),
            _ => false,
        }) || released
            .iter()
            .any(|(_, answer)| answer.as_ref().is_err_and(is_stale_term));
        pass.sent = sent;
        pass.released = released;
        Ok(())
    }
}
