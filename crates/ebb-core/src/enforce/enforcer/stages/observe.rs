//! Observe: what the database records, what every host the enforcer has business with
//! shows now (all at once), requests whose answer never came sent again with their key,
//! and the lease history moved to what the agents report.

use super::super::{Loop, Pass, Stage, granted_leases, node_answers_of};
use crate::pools::PoolError;
use crate::registry::HostEntry;
use ebb_reconcile::reconcile::Pending;
use ebb_reconcile::settle::{self, Tally};

impl Loop {
    /// The pass's context, or `None` when nothing is held, asked for or wanted.
    pub(in crate::enforce::enforcer) async fn observe(
        &mut self,
    ) -> Result<Option<Pass>, PoolError> {
        let now = self.store.now_ms();
        let holder = self.holder().await?;
        // Hosts being removed go once no pool holds or asked for anything there.
        for host in self.registry.draining().await.unwrap_or_default() {
            match self.registry.remove_drained(&host).await {
                Ok(true) => tracing::info!(%host, "drained host removed"),
                Ok(false) => {}
                Err(error) => tracing::warn!(%host, %error, "cannot remove a drained host"),
            }
        }
        // Changes and pools as of one moment: a change is seen with the desired count it
        // set, so a pass never calls a change done on an older count, nor takes a grant
        // for it as upkeep.
        let recorded = self.store.recorded().await?;
        if recorded.is_empty() {
            return Ok(None);
        }
        let specs = self
            .registry
            .list()
            .await
            .map_err(|error| PoolError::Registry(Box::new(error)))?;
        self.provider.prepare(&specs).await;
        let catalog = (*self.files.prices()).clone();
        self.slurm.reload(&self.files);

        // Observe, all at once, every host the enforcer has business with.
        let scoped: Vec<HostEntry> = specs
            .into_iter()
            .filter(|spec| recorded.concerns(spec))
            .collect();
        let mut hosts =
            crate::provider::observe(&self.provider, &scoped, self.config.concurrency).await;
        self.note_down_since(&mut hosts, now).await?;

        // Requests whose answer never came: the same key again, where the host answers.
        let mut tally = Tally::default();
        let (retry, mut pending): (Vec<Pending>, Vec<Pending>) =
            recorded.intents.iter().cloned().partition(|intent| {
                hosts
                    .iter()
                    .any(|h| h.name == intent.host && h.seen.is_some())
            });
        let retried = self.sender(&holder).rent(retry).await;
        let granted = granted_leases(&retried);
        // Bound pools are known once the binding is read (one list for the whole pass):
        // their answers are kept whole.
        let bound: Vec<String> = recorded
            .pools
            .iter()
            .filter(|pool| self.slurm.binds(&pool.name))
            .map(|pool| pool.id.clone())
            .collect();
        let node_answers = node_answers_of(&retried, &bound);
        let retried = settle::creates(retried, &mut hosts, &mut tally);
        retried.update(&mut self.refusals, now);
        self.store.resolve_intents(&retried.resolved).await?;
        pending.extend(retried.pending);

        // The lease history follows what the agents report (written only where it moved).
        // An agent lists only the leases not yet released, so a lease of ours gone from its
        // list is asked for by id, and its end recorded as the agent recorded it.
        let vanished = self
            .look_up(settle::vanished(&hosts, &recorded.leases))
            .await;
        let waiting = settle::looked_up(vanished, &mut hosts);
        self.store
            .sync_hosts(
                &settle::moved_history(&hosts, &recorded.leases, &holder, &waiting),
                now,
            )
            .await?;
        for host in &mut hosts {
            host.lost_fence = recorded.fences.get(&host.name).copied();
        }
        self.refusals.mark(&mut hosts, now);
        let known = self.store.known_leases().await?;
        Ok(Some(Pass {
            now,
            holder,
            recorded,
            catalog,
            hosts,
            pending,
            known,
            targets: Vec::new(),
            tally,
            node_answers,
            bound,
            granted,
            plan: Default::default(),
            said: Vec::new(),
            sent: Vec::new(),
            released: Vec::new(),
            unanswered: 0,
            settled: Default::default(),
            stages: vec![Stage::Observe],
        }))
    }
}
