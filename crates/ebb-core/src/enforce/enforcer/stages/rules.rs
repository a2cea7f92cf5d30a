//! Rules: the pools' rules see what this pass saw (on Prometheus, with the readings it
//! has of the pools' GPUs) and may set new counts; a pass with a new count runs again at
//! once. A pool bound to a partition Ebb sizes moves in whole nodes.

use super::super::{Loop, Pass, Stage};
use crate::rules_live::RulesTick;

impl Loop {
    pub(in crate::enforce::enforcer) async fn rules(&mut self, pass: &mut Pass) -> RulesTick {
        pass.ran(Stage::Rules);
        let read = match &self.readings {
            Some(source) => {
                source
                    .readings_for_rules(&pass.hosts, &pass.settled.statuses)
                    .await
            }
            None => None,
        };
        let ruled_hosts = read.as_deref().unwrap_or(&pass.hosts);
        self.rules
            .set_node_gpus(self.slurm.node_gpus(&pass.recorded.pools));
        let ruled = self
            .rules
            .tick(
                &self.store,
                &pass.settled.statuses,
                ruled_hosts,
                &pass.catalog,
                self.store.now_ms(),
            )
            .await;
        ruled.unwrap_or_else(|error| {
            tracing::warn!(%error, "the rules could not decide");
            RulesTick::default()
        })
    }
}
