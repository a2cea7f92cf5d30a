//! The seam between the enforcer and whatever rents GPUs: [`GpuProvider`]. The planner
//! (`ebb_reconcile`) decides which GPUs of which target to ask for and which leases to give
//! back; a provider carries that out against something real. Today's agents over HTTP are
//! the first provider ([`AgentProvider`]); ARCHITECTURE.md's "Beyond one desktop" has a
//! Kubernetes one on paper. The rules, the pools and the UI never see a provider: they
//! change desired counts, and the enforcer's passes reach the provider.
//!
//! Capacity is a snapshot the enforcer asks for each pass, not a stream: planning is
//! level-triggered, so each pass wants the whole current picture of a target, and a
//! provider fed by a push source (an agent's `/v1/stream`, a Kubernetes watch) answers
//! [`GpuProvider::capacity`] and [`GpuProvider::list`] from what it last heard. The live
//! readings (utilization, memory, temperature) stay the collector's (`collect`), which
//! polls the agents for them: they are metrics, not leasing.

pub mod agents;

pub use agents::AgentProvider;

use crate::registry::HostEntry;
use ebb_reconcile::reconcile::{HostObs, Seen};
use ebb_telemetry::fanout::fan_out;
use ebb_wire::agent::{ConsoleTerm, GpuList, Lease, LeaseRequest};
use ebb_wire::reasons::HostProblem;
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// Why a provider call failed, in the words the planner and the UI already have for a
/// host's problems: a Kubernetes provider maps the API server's answers onto the same
/// kinds (a 4xx with its reason is `RefusedRequest`, a timeout is `Timeout`).
pub type ProviderError = HostProblem;

/// What every provider call returns: boxed, so the enforcer can hold `Arc<dyn GpuProvider>`.
pub type ProviderFuture<'a, T> =
    Pin<Box<dyn Future<Output = Result<T, ProviderError>> + Send + 'a>>;

/// Which GPUs of a target a rent asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GpuChoice {
    /// Any free ones, lowest index first.
    Count(u32),
    /// Exactly these, by UUID (what the planner asks for: it has chosen them).
    Exact(Vec<String>),
}

/// One rent: GPUs of one target for a pool, under an idempotency key.
///
/// The model and the region are the target's: the planner matched them when it chose the
/// target and its GPUs (`ebb_reconcile::placement`), so the request needs neither.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rent {
    /// A registered target (a host's name for the agents).
    pub target: String,
    pub gpus: GpuChoice,
    /// The same key always answers with the same lease, however often it is sent.
    pub key: String,
    pub pool_id: String,
    /// This console's id: only leases it holds are its to count or release.
    pub holder_id: String,
    /// The elected console's term (`election`); `None` for a console alone on its
    /// database, which sends none.
    pub term: Option<ConsoleTerm>,
    /// A workload the agent runs on the GPUs (a Slurm node's slurmd); `None` for none.
    pub command: Option<Vec<String>>,
}

impl Rent {
    /// The agent API's body for this rent.
    pub fn lease_request(&self) -> LeaseRequest {
        let (count, gpu_uuids) = match &self.gpus {
            GpuChoice::Count(count) => (Some(*count), None),
            GpuChoice::Exact(uuids) => (None, Some(uuids.clone())),
        };
        LeaseRequest {
            pool_id: self.pool_id.clone(),
            holder_id: self.holder_id.clone(),
            count,
            gpu_uuids,
            command: self.command.clone(),
            load_profile: None,
            console_group: None,
            term: None,
        }
        .with_term(self.term.as_ref())
    }
}

/// What a rent answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rented {
    pub lease: Lease,
    /// `false` when the key replayed an earlier grant.
    pub new: bool,
}

/// One release: graceful (the workload is signalled and given its grace).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Release {
    pub target: String,
    pub lease_id: String,
    /// As in [`Rent::term`].
    pub term: Option<ConsoleTerm>,
}

/// Rents and releases GPUs, and says what a target has. Every call carries its own
/// timeout; a call to a target the provider was not given answers an error.
pub trait GpuProvider: Send + Sync + fmt::Debug {
    /// The targets to work with from now on (the registry's hosts, each pass): a changed
    /// one is reconnected, one no longer given is forgotten.
    fn prepare<'a>(
        &'a self,
        targets: &'a [HostEntry],
    ) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

    /// A target's GPUs as it reports them now (each with its model, health and holder).
    fn capacity<'a>(&'a self, target: &'a str) -> ProviderFuture<'a, GpuList>;

    /// The leases on a target, ours and others', as it lists them.
    fn list<'a>(&'a self, target: &'a str) -> ProviderFuture<'a, Vec<Lease>>;

    /// One lease of a target by id, released ones too while the target keeps them; `None`
    /// when it keeps no such lease. The enforcer asks for each lease of ours that left
    /// [`GpuProvider::list`] (an agent lists only the leases not yet released), to record
    /// when it ended. A provider that keeps no released leases answers `None` (this
    /// default): the lease then ended when it was seen gone.
    fn lease<'a>(
        &'a self,
        target: &'a str,
        lease_id: &'a str,
    ) -> ProviderFuture<'a, Option<Lease>> {
        let _ = (target, lease_id);
        Box::pin(async { Ok(None) })
    }

    /// Announces a newly elected console's term to a target before the enforcer acts, so
    /// the target refuses the replaced leader's calls still in flight even if this one never
    /// calls it. A provider whose targets fence writes some other way needs nothing (this
    /// default).
    fn announce<'a>(&'a self, target: &'a str, term: &'a ConsoleTerm) -> ProviderFuture<'a, ()> {
        let _ = (target, term);
        Box::pin(async { Ok(()) })
    }

    /// Asks for GPUs. A 4xx-like refusal (`RefusedRequest`, `Unauthorized`, `Forbidden`)
    /// means certainly not granted; any other error may have been granted, and the same key
    /// is sent again.
    fn rent<'a>(&'a self, rent: &'a Rent) -> ProviderFuture<'a, Rented>;

    /// Gives a lease back; idempotent. Answers the lease as it is now.
    fn release<'a>(&'a self, release: &'a Release) -> ProviderFuture<'a, Lease>;

    /// Stops a lease's workload and starts it again on the same GPUs (a parked Slurm
    /// node's slurmd, so Slurm takes the node as booted). A provider that cannot says so.
    fn restart<'a>(&'a self, target: &'a str, lease_id: &'a str) -> ProviderFuture<'a, Lease> {
        let _ = lease_id;
        Box::pin(async move {
            Err(HostProblem::RefusedRequest {
                url: target.to_string(),
                status: 501,
                agent_kind: ebb_wire::agent::AgentErrorKind::Unknown,
                message: "this provider cannot restart a workload".into(),
            })
        })
    }
}

/// Every target's GPUs and leases at once (at most `concurrency` calls together), as the
/// planner reads them; a target that fails either call is unseen.
pub async fn observe(
    provider: &Arc<dyn GpuProvider>,
    specs: &[HostEntry],
    concurrency: usize,
) -> Vec<HostObs> {
    let calls = specs
        .iter()
        .enumerate()
        .map(|(index, spec)| (index, spec.name.clone(), provider.clone()));
    let answers = fan_out(calls, concurrency, |(index, target, provider)| async move {
        let (gpus, leases) = tokio::join!(provider.capacity(&target), provider.list(&target));
        (index, gpus.and_then(|g| leases.map(|l| (g, l))))
    })
    .await;
    let mut seen: HashMap<usize, Seen> = answers
        .into_iter()
        .filter_map(|(index, answer)| {
            let (gpus, leases) = answer.ok()?;
            Some((
                index,
                Seen {
                    gpus: gpus.gpus,
                    leases,
                },
            ))
        })
        .collect();
    specs
        .iter()
        .enumerate()
        .map(|(index, spec)| HostObs {
            name: spec.name.clone(),
            region: spec.region.clone(),
            seen: seen.remove(&index),
            down_since_ms: None,
            lost_fence: None,
            refusing: None,
            draining: spec.draining,
        })
        .collect()
}
