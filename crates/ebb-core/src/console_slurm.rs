//! The console's Slurm operations, shared by every front: `ebb slurm resume|suspend`
//! (Slurm's ResumeProgram and SuspendProgram) and `ebb slurm status`.
//!
//! A resume leases each node's GPUs at once, with its slurmd as the lease's workload (the
//! daemon's binder would on its next pass; doing it here answers Slurm in seconds). The
//! request takes the one path every lease takes: written to `lease_intents` (or the one
//! already there for the node, with its key), sent through [`crate::enforce::sender`], and
//! settled; one left unanswered is sent again by the daemon with the same key, so the two
//! never hold a node twice. A node Ebb cannot serve is marked down with the reason at
//! once. A suspend parks each node's lease to the end of its paid unit (the daemon
//! releases it then) or, for a pool that does not keep GPUs to the unit's end, releases
//! it now through the same sender.

use crate::console::Console;
use crate::enforce::sender::Sender;
use crate::enforcer::EnforcerConfig;
use crate::pools::Pool;
use crate::provider::{AgentProvider, GpuProvider};
use crate::slurm::binder::{self, HeldNode, NodeAnswer, RentOutcome, SlurmBinder, TickInput};
use crate::slurm::ctl::SlurmError;
use ebb_reconcile::reconcile::{Pending, ReleaseOrder, Why};
use ebb_reconcile::settle::{self, CreateAnswer};
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
            None => (*self.config.slurm_binding())
                .clone()
                .map_err(SlurmOpError::Binding),
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
            .map_err(|error| crate::pools::PoolError::Registry(Box::new(error)))?;
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
        let pending = self.pools.intents().await?;
        let input = TickInput {
            store: &self.pools,
            holder: &holder,
            hosts: &hosts,
            pools: &pools,
            pending: &pending,
            now_ms: self.pools.now_ms(),
        };
        let sender = Sender {
            provider: &provider,
            holder: &holder,
            term: None,
            concurrency: EnforcerConfig::default().concurrency,
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
                        RentOutcome::Asked => self.rent_node(&mut binder, &sender, &input).await?,
                        RentOutcome::CannotServe(problem) => {
                            Err(format!("{problem}: marked down in Slurm"))
                        }
                    },
                }
            } else {
                match mine {
                    None => Ok("held nothing".to_string()),
                    Some(node) => self.suspend_node(part, pool, node, &input, &sender).await,
                }
            };
            outcomes.push(NodeOutcome {
                node: slot.name.clone(),
                result,
            });
        }
        Ok(outcomes)
    }

    /// The node request the binder just made: written to `lease_intents` (the node's
    /// unanswered one, if the daemon asked already: same key), sent, and settled.
    async fn rent_node(
        &self,
        binder: &mut SlurmBinder,
        sender: &Sender<'_>,
        input: &TickInput<'_>,
    ) -> Result<Result<String, String>, SlurmOpError> {
        let mut intents = Vec::new();
        for (pool_id, orders) in binder.take_orders() {
            for request in orders.rent {
                let asked = input.pending.iter().find(|intent| {
                    intent.pool_id == pool_id
                        && intent.host == request.host
                        && intent.gpu_uuids == request.gpu_uuids
                });
                intents.push(match asked {
                    Some(intent) => intent.clone(),
                    None => Pending {
                        key: crate::pools::random_hex(16),
                        pool_id: pool_id.clone(),
                        host: request.host,
                        gpu_uuids: request.gpu_uuids,
                        command: request.command,
                    },
                });
            }
        }
        self.pools.add_intents(&intents).await?;
        let answers = sender.rent(intents).await;
        let mut settled = Vec::new();
        let mut told = Vec::new();
        let mut result = Err("nothing asked".to_string());
        for (intent, answer) in answers {
            result = match &answer {
                CreateAnswer::Granted(lease) => {
                    settled.push((
                        intent.key.clone(),
                        Some((intent.host.clone(), (**lease).clone())),
                    ));
                    told.push((intent.clone(), NodeAnswer::Granted));
                    Ok(format!("leased {} on {}", lease.id, intent.host))
                }
                CreateAnswer::Refused(problem) => {
                    settled.push((intent.key.clone(), None));
                    let answer = NodeAnswer::refused(problem);
                    let said = match answer {
                        NodeAnswer::Taken => format!(
                            "{problem}: its GPUs were leased meanwhile (the daemon's request for it, or another tenant's); see `ebb slurm status`"
                        ),
                        _ => format!("{problem}: marked down in Slurm"),
                    };
                    told.push((intent.clone(), answer));
                    Err(said)
                }
                CreateAnswer::Unknown(problem) => Err(format!(
                    "{} did not answer ({problem}); the daemon asks again",
                    intent.host
                )),
            };
        }
        self.pools.resolve_intents(&settled).await?;
        binder
            .answered(&self.pools, input.pools, input.hosts, &told)
            .await?;
        Ok(result)
    }

    async fn suspend_node(
        &self,
        part: &PartitionBinding,
        pool: &Pool,
        node: &HeldNode,
        input: &TickInput<'_>,
        sender: &Sender<'_>,
    ) -> Result<String, String> {
        let granted = i64::try_from(node.lease.created_at_ms).unwrap_or(i64::MAX);
        let until = ebb_reconcile::placement::paid_until(granted, pool.unit_ms(), input.now_ms);
        let step = if pool.release_at_unit_end && input.now_ms < until {
            ebb_wire::reasons::SlurmStep::Parked { until_ms: until }
        } else {
            let order = ReleaseOrder {
                host: node.slot.host.clone(),
                lease_id: node.lease.id.clone(),
                pool_id: pool.id.clone(),
                why: Why::ScaleIn,
            };
            let answers = sender.release(std::slice::from_ref(&order)).await;
            self.pools
                .record_ended(&settle::ended(&answers))
                .await
                .map_err(|error| error.to_string())?;
            if let Some((_, Err(problem))) = answers.first() {
                return Err(problem.to_string());
            }
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
        let (_, hosts) = self.slurm_hosts(&nodes).await?;
        let holder = self.pools.console_id().await?;
        let now_ms = self.pools.now_ms();
        let input = TickInput {
            store: &self.pools,
            holder: &holder,
            hosts: &hosts,
            pools: std::slice::from_ref(&pool),
            pending: &[],
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
