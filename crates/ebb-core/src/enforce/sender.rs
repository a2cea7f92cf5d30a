//! The one place a lease request leaves the console: every rent and release, whoever
//! planned it (the planner for the rules, the slider, schedules, spot, failover; the Slurm
//! binder's nodes through the planner; `ebb slurm resume`/`suspend`), is sent here, a
//! rent only once it is written to `lease_intents` (its idempotency key), so a crash
//! between the two sends it again with the same key and the agent grants it once.

use crate::provider::{GpuChoice, GpuProvider, Release, Rent};
use ebb_reconcile::reconcile::{Pending, Refusals, ReleaseOrder};
use ebb_reconcile::settle::{CreateAnswer, ReleaseAnswer};
use ebb_telemetry::fanout::fan_out;
use ebb_wire::agent::ConsoleTerm;
use ebb_wire::reasons::HostProblem;
use std::sync::Arc;

/// Who sends: this console's holder id and term, through `provider`, at most `concurrency`
/// requests at once.
#[derive(Clone)]
pub struct Sender<'a> {
    pub provider: &'a Arc<dyn GpuProvider>,
    pub holder: &'a str,
    pub term: Option<&'a ConsoleTerm>,
    pub concurrency: usize,
}

impl std::fmt::Debug for Sender<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sender")
            .field("holder", &self.holder)
            .field("term", &self.term)
            .finish_non_exhaustive()
    }
}

impl Sender<'_> {
    /// Sends each written request (its key, exactly its GPUs, its workload) and classifies
    /// the answer: granted, certainly refused, or unknown (sent again with the same key).
    pub async fn rent(&self, intents: Vec<Pending>) -> Vec<(Pending, CreateAnswer)> {
        let calls = intents.into_iter().map(|intent| {
            let rent = Rent {
                target: intent.host.clone(),
                gpus: GpuChoice::Exact(intent.gpu_uuids.clone()),
                key: intent.key.clone(),
                pool_id: intent.pool_id.clone(),
                holder_id: self.holder.to_string(),
                term: self.term.cloned(),
                command: intent.command.clone(),
            };
            (intent, rent, self.provider.clone())
        });
        fan_out(
            calls,
            self.concurrency,
            |(intent, rent, provider)| async move {
                let answer = match provider.rent(&rent).await {
                    Ok(rented) => CreateAnswer::Granted(Box::new(rented.lease)),
                    Err(error) if certainly_refused(&error) => CreateAnswer::Refused(error),
                    Err(error) => CreateAnswer::Unknown(error),
                };
                (intent, answer)
            },
        )
        .await
    }

    /// Sends each release (idempotent: a lease released twice answers as released).
    pub async fn release(&self, orders: &[ReleaseOrder]) -> Vec<(ReleaseOrder, ReleaseAnswer)> {
        let calls = orders.iter().map(|order| {
            let release = Release {
                target: order.host.clone(),
                lease_id: order.lease_id.clone(),
                term: self.term.cloned(),
            };
            (order.clone(), release, self.provider.clone())
        });
        fan_out(
            calls,
            self.concurrency,
            |(order, release, provider)| async move {
                let answer = provider.release(&release).await.map(Box::new);
                (order, answer)
            },
        )
        .await
    }
}

/// Certainly not granted: refused for the GPU or the request (4xx), or for the host itself
/// (no token, or one without the lease scope).
pub fn certainly_refused(problem: &HostProblem) -> bool {
    match problem {
        HostProblem::RefusedRequest { status, .. } => (400..500).contains(status),
        other => Refusals::is_host_refusal(other),
    }
}
