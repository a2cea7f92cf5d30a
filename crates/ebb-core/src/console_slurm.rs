//! The console's Slurm operations, shared by every front: `ebb slurm resume|suspend`
//! (Slurm's ResumeProgram and SuspendProgram) and `ebb slurm status`.
//!
//! A resume leases each node's GPUs at once, with its slurmd as the lease's workload (the
//! daemon's binder would on its next pass; doing it here answers Slurm in seconds, and
//! the agent refuses GPUs already leased, so the two never hold a node twice). A node Ebb
//! cannot serve is marked down with the reason at once. A suspend parks each node's lease
//! to the end of its paid unit (the daemon releases it then) or, for a pool that does not
//! keep GPUs to the unit's end, releases it now.

use crate::console::Console;
use crate::enforcer::EnforcerConfig;
use crate::pools::Pool;
use crate::provider::{AgentProvider, GpuProvider, Release};
use crate::slurm::binder::{self, HeldNode, RentOutcome, SlurmBinder, TickInput};
use crate::slurm::ctl::SlurmError;
use ebb_slurm::binding::{Binding, NodeSlot, PartitionBinding};
use ebb_wire::slurm::SlurmPoolView;
use std::sync::Arc;
use thiserror::Error;

/// Why a Slurm operation changed nothing.
#[derive(Debug, Error)]
pub enum SlurmOpError {
    #[error("no Slurm binding: write {file} in the data directory (README, \"Slurm\")", file = binder::BINDING_FILE)]
    NoBinding,
    #[error("{0}")]
    Binding(String),
    #[error("hostlist: {0}")]
    Hostlist(String),
    #[error("hostlist: {0} in no pool's partition (slurm.toml)")]
    NotBound(String),
    #[error("pool `{0}` (slurm.toml) does not exist")]
    NoPool(String),
    #[error(transparent)]
    Pools(#[from] crate::pools::PoolError),
    #[error(transparent)]
    Slurm(#[from] SlurmError),
}

/// What became of one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeOutcome {
    pub node: String,
    /// `Ok` with what was done, `Err` with why not.
    pub result: Result<String, String>,
}

impl Console {
    /// The demo's binding, or `slurm.toml`'s: `Ok(None)` when there is none.
    pub(crate) fn slurm_binding_if_any(&self) -> Result<Option<Binding>, SlurmOpError> {
        match &self.slurm.binding {
            Some(binding) => Ok(Some(binding.clone())),
            None => binder::load_binding(&self.data_dir).map_err(SlurmOpError::Binding),
        }
    }

    fn slurm_binding(&self) -> Result<Binding, SlurmOpError> {
        self.slurm_binding_if_any()?.ok_or(SlurmOpError::NoBinding)
    }

    /// The nodes of `hostlist`, each with its partition; refused whole when one is in no
    /// pool's partition.
    fn bound_nodes(
        binding: &Binding,
        hostlist: &str,
    ) -> Result<Vec<(PartitionBinding, NodeSlot)>, SlurmOpError> {
        let names = ebb_slurm::hostlist::expand(hostlist)
            .map_err(|error| SlurmOpError::Hostlist(error.to_string()))?;
        let mut nodes = Vec::with_capacity(names.len());
        let mut unbound = Vec::new();
        for name in names {
            match binding.node(&name) {
                Some((part, slot)) => nodes.push((part.clone(), slot.clone())),
                None => unbound.push(name),
            }
        }
        if !unbound.is_empty() {
            return Err(SlurmOpError::NotBound(format!(
                "{} {}",
                if unbound.len() == 1 { "node" } else { "nodes" },
                ebb_slurm::hostlist::compress(&unbound)
            )));
        }
        Ok(nodes)
    }

    async fn pool_of(&self, part: &PartitionBinding) -> Result<Pool, SlurmOpError> {
        match self.pools.get(&part.pool).await {
            Ok(pool) => Ok(pool),
            Err(crate::pools::PoolError::NotFound(_)) => {
                Err(SlurmOpError::NoPool(part.pool.clone()))
            }
            Err(error) => Err(error.into()),
        }
    }

    /// What the agents of these nodes' hosts show now, through a provider of our own.
    async fn slurm_hosts(
        &self,
        nodes: &[(PartitionBinding, NodeSlot)],
    ) -> Result<(Arc<dyn GpuProvider>, Vec<ebb_reconcile::reconcile::HostObs>), SlurmOpError> {
        let config = EnforcerConfig::default();
        let provider: Arc<dyn GpuProvider> =
            Arc::new(AgentProvider::new(self.registry().clone(), config.client));
        let specs = self
            .registry()
            .list()
            .await
            .map_err(|error| crate::pools::PoolError::Registry(error.to_string()))?;
        provider.prepare(&specs).await;
        let wanted: Vec<_> = specs
            .into_iter()
            .filter(|spec| nodes.iter().any(|(_, slot)| slot.host == spec.name))
            .collect();
        let hosts = crate::provider::observe(&provider, &wanted, config.concurrency).await;
        Ok((provider, hosts))
    }

    /// `ebb slurm resume HOSTLIST` (Slurm's ResumeProgram): lease each node's GPUs with
    /// its slurmd now. A node already leased (parked) is reused as it is.
    pub async fn slurm_resume(&self, hostlist: &str) -> Result<Vec<NodeOutcome>, SlurmOpError> {
        self.slurm_nodes(hostlist, true).await
    }

    /// `ebb slurm suspend HOSTLIST` (Slurm's SuspendProgram): park each node's lease to the
    /// end of its paid unit, or release it now when its pool does not keep GPUs that long.
    pub async fn slurm_suspend(&self, hostlist: &str) -> Result<Vec<NodeOutcome>, SlurmOpError> {
        self.slurm_nodes(hostlist, false).await
    }

    async fn slurm_nodes(
        &self,
        hostlist: &str,
        resume: bool,
    ) -> Result<Vec<NodeOutcome>, SlurmOpError> {
        let binding = self.slurm_binding()?;
        let nodes = Self::bound_nodes(&binding, hostlist)?;
        let mut pools = Vec::new();
        for (part, _) in &nodes {
            if !pools.iter().any(|pool: &Pool| pool.name == part.pool) {
                pools.push(self.pool_of(part).await?);
            }
        }
        let (provider, hosts) = self.slurm_hosts(&nodes).await?;
        let holder = self.pools.console_id().await?;
        let input = TickInput {
            store: &self.pools,
            provider: provider.as_ref(),
            holder: &holder,
            term: None,
            hosts: &hosts,
            pools: &pools,
            now_ms: self.pools.now_ms(),
        };
        let mut binder = SlurmBinder::over(binding, self.slurm.api.clone());
        let mut outcomes = Vec::with_capacity(nodes.len());
        for (part, slot) in &nodes {
            let Some(pool) = pools.iter().find(|pool| pool.name == part.pool) else {
                continue;
            };
            let held: Vec<HeldNode> = binder::held_nodes(part, pool, &input);
            let mine = held.iter().find(|node| node.slot.name == slot.name);
            let result = if resume {
                match mine {
                    // Parked: the same lease, its slurmd started afresh so Slurm takes
                    // the node as booted (no new rent, no warmup).
                    Some(node) => match provider.restart(&slot.host, &node.lease.id).await {
                        Ok(_) => {
                            binder::log_step(
                                &self.pools,
                                pool,
                                part,
                                std::slice::from_ref(&slot.name),
                                ebb_wire::reasons::SlurmStep::Resumed,
                            )
                            .await?;
                            Ok(format!("reused its parked lease {}", node.lease.id))
                        }
                        Err(problem) => Err(format!(
                            "its parked lease {} did not restart its slurmd: {problem}",
                            node.lease.id
                        )),
                    },
                    None => match binder.rent(part, pool, slot, &input).await? {
                        RentOutcome::Leased(lease) => {
                            Ok(format!("leased {lease} on {}", slot.host))
                        }
                        RentOutcome::Unanswered(problem) => Err(format!(
                            "{} did not answer ({problem}); the daemon asks again",
                            slot.host
                        )),
                        RentOutcome::CannotServe(problem) => {
                            Err(format!("{problem}: marked down in Slurm"))
                        }
                    },
                }
            } else {
                match mine {
                    None => Ok("held nothing".to_string()),
                    Some(node) => {
                        self.suspend_node(part, pool, node, &input, provider.as_ref())
                            .await
                    }
                }
            };
            outcomes.push(NodeOutcome {
                node: slot.name.clone(),
                result,
            });
        }
        Ok(outcomes)
    }

    async fn suspend_node(
        &self,
        part: &PartitionBinding,
        pool: &Pool,
        node: &HeldNode,
        input: &TickInput<'_>,
        provider: &dyn GpuProvider,
    ) -> Result<String, String> {
        let granted = i64::try_from(node.lease.created_at_ms).unwrap_or(i64::MAX);
        let until = ebb_reconcile::placement::paid_until(granted, pool.unit_ms(), input.now_ms);
        let step = if pool.release_at_unit_end && input.now_ms < until {
            ebb_wire::reasons::SlurmStep::Parked { until_ms: until }
        } else {
            let release = Release {
                target: node.slot.host.clone(),
                lease_id: node.lease.id.clone(),
                term: None,
            };
            provider
                .release(&release)
                .await
                .map_err(|problem| problem.to_string())?;
            ebb_wire::reasons::SlurmStep::Released
        };
        let words = match &step {
            ebb_wire::reasons::SlurmStep::Parked { .. } => {
                format!(
                    "parked: lease {} kept to the end of its paid unit",
                    node.lease.id
                )
            }
            _ => format!("released lease {}", node.lease.id),
        };
        binder::log_step(
            &self.pools,
            pool,
            part,
            std::slice::from_ref(&node.slot.name),
            step,
        )
        .await
        .map_err(|error| error.to_string())?;
        Ok(words)
    }

    /// `ebb slurm status`: each bound partition as Slurm and the agents show it, with its
    /// pool's name.
    pub async fn slurm_status(&self) -> Result<Vec<(String, SlurmPoolView)>, SlurmOpError> {
        let binding = self.slurm_binding()?;
        let mut out = Vec::new();
        for part in &binding.partitions {
            out.push((part.pool.clone(), self.partition_view(part).await?));
        }
        Ok(out)
    }

    /// The Pool view's Slurm card: the partition `pool` is bound to, or `None` when it is
    /// bound to none (or there is no binding).
    pub async fn pool_slurm(&self, pool: &str) -> Result<Option<SlurmPoolView>, SlurmOpError> {
        let Some(binding) = self.slurm_binding_if_any()? else {
            return Ok(None);
        };
        let Some(part) = binding.of_pool(pool) else {
            return Ok(None);
        };
        self.partition_view(part).await.map(Some)
    }

    async fn partition_view(&self, part: &PartitionBinding) -> Result<SlurmPoolView, SlurmOpError> {
        let pool = self.pool_of(part).await?;
        let nodes: Vec<_> = part
            .nodes
            .iter()
            .map(|slot| (part.clone(), slot.clone()))
            .collect();
        let (provider, hosts) = self.slurm_hosts(&nodes).await?;
        let holder = self.pools.console_id().await?;
        let now_ms = self.pools.now_ms();
        let input = TickInput {
            store: &self.pools,
            provider: provider.as_ref(),
            holder: &holder,
            term: None,
            hosts: &hosts,
            pools: std::slice::from_ref(&pool),
            now_ms,
        };
        let held = binder::held_nodes(part, &pool, &input);
        let names: Vec<String> = held.iter().map(|node| node.slot.name.clone()).collect();
        let view = self.slurm.api.partition(&part.name, &names, now_ms).await;
        let mut shown = binder::pool_view(part, &held, view, now_ms);
        shown.simulated = self.slurm.api.simulated();
        Ok(shown)
    }
}
