//! The enforcer: the reconcile loop's shell. Each pass reads every agent's GPUs and leases
//! (with timeouts, all hosts at once), sends again any lease request whose answer was
//! never certain (same idempotency key), plans with [`reconcile::plan`], writes the new
//! requests down before sending them, carries the plan out, and records what happened:
//! the lease history, the fences, what each pool looks like, and each change's per-host
//! results in the activity log. One process per data directory runs it (the collector).

use crate::catalog_store::ActiveCatalog;
use crate::client::{AgentAccess, AgentClient, AgentError, ClientConfig};
use crate::clock::now_ms;
use crate::fanout::fan_out;
use crate::pools::{NewActivity, Pool, PoolError, PoolStore};
use crate::registry::{HostEntry, Registry};
use ebb_plan::reconcile::{self, HostObs, Input, Pending, PoolTarget, Seen, Why};
use ebb_wire::agent::{Lease, LeaseRequest};
use ebb_wire::pools::{Actor, HostResult, Outcome, PoolLeaseState};
use ebb_wire::reasons::{ChangeReason, PoolNote};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnforcerConfig {
    /// Time between passes when nothing wakes the loop.
    pub interval: Duration,
    /// How long a host may not answer before its leases are written off and replaced.
    pub grace: Duration,
    pub client: ClientConfig,
    /// Requests in flight at once, over all hosts.
    pub concurrency: usize,
}

impl Default for EnforcerConfig {
    fn default() -> Self {
        Self {
            interval: Duration::from_secs(1),
            grace: Duration::from_secs(30),
            client: ClientConfig {
                connect_timeout: Duration::from_millis(500),
                request_timeout: Duration::from_secs(3),
            },
            concurrency: 64,
        }
    }
}

/// What one pass did, for tests and benchmarks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PassReport {
    pub number: u64,
    pub granted: u32,
    pub released: u32,
    pub failed: u32,
    /// Every pool holds exactly what it should, nothing pending.
    pub converged: bool,
}

/// The running loop; [`Enforcer::stop`] ends it.
#[derive(Debug)]
pub struct Enforcer {
    wake: Arc<Notify>,
    reports: watch::Receiver<PassReport>,
    task: Option<JoinHandle<()>>,
}

impl Enforcer {
    pub fn start(
        store: PoolStore,
        registry: Registry,
        data_dir: PathBuf,
        config: EnforcerConfig,
    ) -> Self {
        let wake = Arc::new(Notify::new());
        let (publish, reports) = watch::channel(PassReport::default());
        let mut state = Loop {
            store,
            registry,
            data_dir,
            config,
            clients: Clients::new(config.client),
            down_since: HashMap::new(),
            holder: None,
            passes: 0,
        };
        let wake_loop = wake.clone();
        let task = tokio::spawn(async move {
            loop {
                match state.pass().await {
                    Ok(report) => {
                        publish.send_replace(report);
                    }
                    Err(error) => tracing::warn!(%error, "reconcile pass failed"),
                }
                tokio::select! {
                    () = tokio::time::sleep(state.config.interval) => {}
                    () = wake_loop.notified() => {}
                }
            }
        });
        Self {
            wake,
            reports,
            task: Some(task),
        }
    }

    /// Runs a pass now (after the one in progress, if any).
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    /// Each pass's report as it finishes.
    pub fn reports(&self) -> watch::Receiver<PassReport> {
        self.reports.clone()
    }

    pub async fn stop(mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
            let _ = task.await;
        }
    }
}

impl Drop for Enforcer {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

/// A client per registered host, remade when its spec changes.
#[derive(Debug)]
pub(crate) struct Clients {
    map: HashMap<String, (HostEntry, AgentClient)>,
    config: ClientConfig,
}

impl Clients {
    pub(crate) fn new(config: ClientConfig) -> Self {
        Self {
            map: HashMap::new(),
            config,
        }
    }

    fn get(&self, host: &str) -> Option<&AgentClient> {
        self.map.get(host).map(|(_, client)| client)
    }

    pub(crate) async fn refresh(&mut self, registry: &Registry, specs: &[HostEntry]) {
        self.map
            .retain(|name, _| specs.iter().any(|s| &s.name == name));
        for spec in specs {
            if self.map.get(&spec.name).is_some_and(|(had, _)| had == spec) {
                continue;
            }
            let token = registry.token(spec).await.unwrap_or(None);
            let access = AgentAccess {
                url: spec.url.clone(),
                token,
                fingerprint: spec.fingerprint.clone(),
            };
            match AgentClient::with_access(&access, self.config) {
                Ok(client) => {
                    self.map.insert(spec.name.clone(), (spec.clone(), client));
                }
                Err(error) => tracing::warn!(host = %spec.name, %error, "cannot make a client"),
            }
        }
    }

    /// Every host's GPUs and leases at once; a host that fails either call is unseen.
    pub(crate) async fn observe(&self, specs: &[HostEntry], concurrency: usize) -> Vec<HostObs> {
        let calls = specs.iter().enumerate().filter_map(|(index, spec)| {
            let (_, client) = self.map.get(&spec.name)?;
            Some((index, client.clone()))
        });
        let answers = fan_out(calls, concurrency, |(index, client)| async move {
            let (gpus, leases) = tokio::join!(client.gpus(), client.leases());
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
                        leases: leases.leases,
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
            })
            .collect()
    }
}

struct Loop {
    store: PoolStore,
    registry: Registry,
    data_dir: PathBuf,
    config: EnforcerConfig,
    clients: Clients,
    down_since: HashMap<String, i64>,
    holder: Option<String>,
    passes: u64,
}

/// The outcome of one lease request or release.
enum Sent {
    Granted(Box<Lease>),
    /// Certainly not granted (not free, invalid): the intent is done.
    Refused(AgentError),
    /// No certain answer (timeout, connection): the intent stays and is sent again.
    Unknown(AgentError),
    Released,
    ReleaseFailed(AgentError),
}

/// Per pool and host: granted, released, failed, last error.
/// What one pass did with one pool's requests to one host.
#[derive(Debug, Default)]
struct HostTally {
    granted: u32,
    released: u32,
    failed: u32,
    /// The last failure's reason.
    last_error: Option<AgentError>,
}

/// Per (pool id, host): what the pass did there.
type Tally = BTreeMap<(String, String), HostTally>;

impl Loop {
    async fn pass(&mut self) -> Result<PassReport, PoolError> {
        self.passes += 1;
        let now = now_ms();
        let holder = match &self.holder {
            Some(holder) => holder.clone(),
            None => {
                let id = self.store.console_id().await?;
                self.holder = Some(id.clone());
                id
            }
        };
        // Changes first, then pools: a change seen here is already in the pools read next,
        // so a pass never calls a change done on the strength of an older desired count.
        let open = self.store.open_changes().await?;
        let pools = self.store.list().await?;
        let intents = self.store.intents().await?;
        let fences = self.store.fences().await?;
        let recorded = self.store.known_leases().await?;
        if pools.is_empty() && intents.is_empty() && fences.is_empty() && recorded.is_empty() {
            // Nothing held, asked for or wanted: no agent needs asking.
            return Ok(PassReport {
                number: self.passes,
                converged: true,
                ..PassReport::default()
            });
        }
        let specs = self
            .registry
            .list()
            .await
            .map_err(|error| PoolError::Registry(error.to_string()))?;
        self.clients.refresh(&self.registry, &specs).await;
        let catalog = ActiveCatalog::prices(&self.data_dir);

        // Observe, all at once, every host a pool may use or where we hold or asked for
        // something; the rest of the fleet is none of the enforcer's business.
        let scoped: Vec<HostEntry> = specs
            .iter()
            .filter(|spec| {
                pools.iter().any(|pool| pool.regions.contains(&spec.region))
                    || recorded.iter().any(|lease| lease.host == spec.name)
                    || intents.iter().any(|intent| intent.host == spec.name)
                    || fences.contains_key(&spec.name)
            })
            .cloned()
            .collect();
        let mut hosts = self.clients.observe(&scoped, self.config.concurrency).await;
        for host in &mut hosts {
            if host.seen.is_some() {
                self.down_since.remove(&host.name);
            } else {
                let since = *self.down_since.entry(host.name.clone()).or_insert(now);
                host.down_since_ms = Some(since);
            }
        }

        // Requests whose answer never came: the same key again.
        let mut tally: Tally = BTreeMap::new();
        let reachable: HashMap<&str, usize> = hosts
            .iter()
            .enumerate()
            .filter(|(_, h)| h.seen.is_some())
            .map(|(i, h)| (h.name.as_str(), i))
            .collect();
        let (retry, waiting): (Vec<Pending>, Vec<Pending>) = intents
            .into_iter()
            .partition(|intent| reachable.contains_key(intent.host.as_str()));
        let retried = self.send_creates(&holder, retry).await;
        let mut pending = waiting;
        self.settle_creates(retried, &mut hosts, &mut pending, &mut tally)
            .await?;

        // The lease history follows what the agents report (written only where it moved).
        let mut changed: Vec<(&str, Vec<&Lease>)> = Vec::new();
        for host in &hosts {
            if let Some(seen) = &host.seen {
                let ours: Vec<&Lease> = seen
                    .leases
                    .iter()
                    .filter(|lease| lease.holder_id == holder)
                    .collect();
                let mut live: Vec<&str> = ours
                    .iter()
                    .filter(|lease| lease.released_at_ms.is_none())
                    .map(|lease| lease.id.as_str())
                    .collect();
                let mut open: Vec<&str> = recorded
                    .iter()
                    .filter(|lease| lease.host == host.name)
                    .map(|lease| lease.lease_id.as_str())
                    .collect();
                live.sort_unstable();
                open.sort_unstable();
                if live != open {
                    changed.push((host.name.as_str(), ours));
                }
            }
        }
        self.store.sync_hosts(&changed, now).await?;
        for host in &mut hosts {
            host.lost_fence = fences.get(&host.name).copied();
        }
        let known = self.store.known_leases().await?;
        let targets: Vec<PoolTarget> = pools.iter().map(|pool| target(pool, &catalog)).collect();
        let grace_ms = i64::try_from(self.config.grace.as_millis()).unwrap_or(i64::MAX);
        let plan = reconcile::plan(&Input {
            now_ms: now,
            holder: &holder,
            grace_ms,
            pools: &targets,
            hosts: &hosts,
            known: &known,
            pending: &pending,
        });

        // Hosts away past the grace period: write their leases off, say so.
        for (host, fence) in &plan.lose {
            self.store.set_fence(host, *fence).await?;
            for pool in &pools {
                let count = known
                    .iter()
                    .filter(|l| &l.host == host && l.pool_id == pool.id)
                    .count();
                if count > 0 {
                    let change = NewActivity {
                        actor: Actor::Failover,
                        from: pool.desired,
                        to: pool.desired,
                        reason: ChangeReason::Failover {
                            host: host.clone(),
                            gpus: count as u32,
                            grace_s: self.config.grace.as_secs(),
                        },
                        delta_per_hour_fen: None,
                        delta_per_month_fen: None,
                    };
                    self.store.log(pool, &change).await?;
                }
            }
        }
        for host in &plan.clear_fence {
            self.store.clear_fence(host).await?;
        }
        let stale: BTreeMap<&str, Vec<&str>> = plan
            .releases
            .iter()
            .filter(|r| r.why == Why::Stale)
            .fold(BTreeMap::new(), |mut acc, r| {
                acc.entry(r.pool_id.as_str())
                    .or_default()
                    .push(r.host.as_str());
                acc
            });
        for (pool_id, on) in stale {
            if let Some(pool) = pools.iter().find(|p| p.id == pool_id) {
                let change = NewActivity {
                    actor: Actor::Failover,
                    from: pool.desired,
                    to: pool.desired,
                    reason: ChangeReason::HostBack {
                        host: on[0].to_string(),
                        leases: on.len() as u32,
                    },
                    delta_per_hour_fen: None,
                    delta_per_month_fen: None,
                };
                self.store.log(pool, &change).await?;
            }
        }

        // New requests: written down first, then sent.
        let new: Vec<Pending> = plan
            .creates
            .iter()
            .map(|create| Pending {
                key: crate::pools::random_hex(16),
                pool_id: create.pool_id.clone(),
                host: create.host.clone(),
                gpu_uuid: create.gpu_uuid.clone(),
            })
            .collect();
        self.store.add_intents(&new).await?;
        if !plan.creates.is_empty() || !plan.releases.is_empty() {
            // Shown while the requests are out: what each host is being asked for.
            let asked: Vec<reconcile::PoolStatus> = plan
                .pools
                .iter()
                .zip(&pools)
                .map(|(status, pool)| reconcile::PoolStatus {
                    notes: notes(pool, status),
                    ..status.clone()
                })
                .collect();
            self.store.write_status(&asked, now_ms()).await?;
        }
        let (sent, released) = tokio::join!(
            self.send_creates(&holder, new),
            self.send_releases(&plan.releases)
        );
        let mut still_pending = Vec::new();
        self.settle_creates(sent, &mut hosts, &mut still_pending, &mut tally)
            .await?;
        for (order, outcome) in released {
            let entry = tally
                .entry((order.pool_id.clone(), order.host.clone()))
                .or_default();
            match outcome {
                Sent::Released => entry.released += 1,
                Sent::ReleaseFailed(error) => {
                    entry.failed += 1;
                    entry.last_error = Some(error);
                }
                _ => {}
            }
        }

        // What each pool looks like now, and how its change stands.
        let mut statuses = Vec::with_capacity(plan.pools.len());
        let mut all_converged = true;
        for (mut stored, pool) in plan.pools.into_iter().zip(&pools) {
            let mut results: Vec<HostResult> = Vec::new();
            for (
                (pool_id, host),
                HostTally {
                    granted,
                    released,
                    failed,
                    last_error: error,
                },
            ) in &tally
            {
                if pool_id != &pool.id {
                    continue;
                }
                stored.actual += granted;
                stored.pending = stored.pending.saturating_sub(granted + failed);
                if let Some(view) = stored.hosts.iter_mut().find(|h| &h.host == host) {
                    view.leased += granted;
                    view.pending = view.pending.saturating_sub(granted + failed);
                    view.failed = *failed;
                    view.last_error.clone_from(error);
                }
                results.push(HostResult {
                    host: host.clone(),
                    granted: *granted,
                    released: *released,
                    failed: *failed,
                    error: error.clone(),
                });
            }
            // Leases granted this pass, shown at once.
            for host in &hosts {
                let Some(seen) = &host.seen else { continue };
                for lease in &seen.leases {
                    if lease.holder_id == holder
                        && lease.pool_id == pool.id
                        && lease.state == ebb_wire::agent::LeaseState::Active
                        && !stored.leases.iter().any(|shown| shown.lease_id == lease.id)
                    {
                        stored.leases.push(reconcile::lease_view(
                            lease,
                            host,
                            &HashMap::new(),
                            PoolLeaseState::Active,
                        ));
                    }
                }
            }
            stored.notes = notes(pool, &stored);
            let converged = stored.actual == pool.desired
                && stored.pending == 0
                && stored.held_to_unit_end == 0;
            all_converged &= converged;
            if let Some(changes) = open.get(&pool.id) {
                for (index, (id, before)) in changes.iter().enumerate() {
                    let latest = index + 1 == changes.len();
                    let merged = if latest {
                        merge(before, &results)
                    } else {
                        before.clone()
                    };
                    let outcome = if converged {
                        Outcome::Done
                    } else if merged.iter().any(|r| r.failed > 0) || stored.short > 0 {
                        Outcome::Partial
                    } else {
                        Outcome::InProgress
                    };
                    if latest || converged {
                        self.store.update_change(*id, &merged, outcome).await?;
                    }
                }
            }
            statuses.push(stored);
        }
        self.store.write_status(&statuses, now_ms()).await?;
        Ok(PassReport {
            number: self.passes,
            granted: tally.values().map(|t| t.granted).sum(),
            released: tally.values().map(|t| t.released).sum(),
            failed: tally.values().map(|t| t.failed).sum(),
            converged: all_converged && still_pending.is_empty(),
        })
    }

    async fn send_creates(&self, holder: &str, intents: Vec<Pending>) -> Vec<(Pending, Sent)> {
        let calls = intents.into_iter().filter_map(|intent| {
            let client = self.clients.get(&intent.host)?.clone();
            let request = LeaseRequest {
                pool_id: intent.pool_id.clone(),
                holder_id: holder.to_string(),
                count: None,
                gpu_uuids: Some(vec![intent.gpu_uuid.clone()]),
                command: None,
                load_profile: None,
            };
            Some((intent, client, request))
        });
        fan_out(
            calls,
            self.config.concurrency,
            |(intent, client, request)| async move {
                let outcome = match client.create_lease(&intent.key, &request).await {
                    Ok((_, lease)) => Sent::Granted(Box::new(lease)),
                    Err(error @ AgentError::RefusedRequest { status, .. })
                        if (400..500).contains(&status) =>
                    {
                        Sent::Refused(error)
                    }
                    Err(error) => Sent::Unknown(error),
                };
                (intent, outcome)
            },
        )
        .await
    }

    async fn send_releases(
        &self,
        orders: &[reconcile::ReleaseOrder],
    ) -> Vec<(reconcile::ReleaseOrder, Sent)> {
        let calls = orders.iter().filter_map(|order| {
            let client = self.clients.get(&order.host)?.clone();
            Some((order.clone(), client))
        });
        fan_out(
            calls,
            self.config.concurrency,
            |(order, client)| async move {
                let outcome = match client.release_lease(&order.lease_id).await {
                    Ok(_) => Sent::Released,
                    Err(error) => Sent::ReleaseFailed(error),
                };
                (order, outcome)
            },
        )
        .await
    }

    /// Records answers: a grant or a certain refusal ends its intent (one transaction for
    /// all); an uncertain one stays pending.
    async fn settle_creates(
        &self,
        sent: Vec<(Pending, Sent)>,
        hosts: &mut [HostObs],
        pending: &mut Vec<Pending>,
        tally: &mut Tally,
    ) -> Result<(), PoolError> {
        let mut settled: Vec<(String, Option<(String, Lease)>)> = Vec::new();
        for (intent, outcome) in sent {
            let entry = tally
                .entry((intent.pool_id.clone(), intent.host.clone()))
                .or_default();
            match outcome {
                Sent::Granted(lease) => {
                    entry.granted += 1;
                    if let Some(host) = hosts.iter_mut().find(|h| h.name == intent.host)
                        && let Some(seen) = &mut host.seen
                        && !seen.leases.iter().any(|l| l.id == lease.id)
                    {
                        seen.leases.push((*lease).clone());
                    }
                    settled.push((intent.key, Some((intent.host, *lease))));
                }
                Sent::Refused(error) => {
                    entry.failed += 1;
                    entry.last_error = Some(error);
                    settled.push((intent.key, None));
                }
                Sent::Unknown(error) => {
                    entry.failed += 1;
                    entry.last_error = Some(error);
                    pending.push(intent);
                }
                Sent::Released | Sent::ReleaseFailed(_) => {}
            }
        }
        self.store.resolve_intents(&settled).await
    }
}

/// The planner's view of a pool.
pub(crate) fn target(pool: &Pool, catalog: &ebb_cost::Catalog) -> PoolTarget {
    PoolTarget {
        id: pool.id.clone(),
        model: pool.model.clone(),
        regions: pool.regions.clone(),
        desired: pool.desired,
        policy: pool.placement,
        at_unit_end: pool.release_at_unit_end && !pool.force_release,
        unit_ms: pool.unit_ms(),
        prices: pool.hourly_prices(catalog),
    }
}

/// Adds this pass's per-host results to a change's.
fn merge(before: &[HostResult], now: &[HostResult]) -> Vec<HostResult> {
    let mut merged: Vec<HostResult> = before.to_vec();
    for result in now {
        match merged.iter_mut().find(|r| r.host == result.host) {
            Some(had) => {
                had.granted += result.granted;
                had.released += result.released;
                had.failed += result.failed;
                if result.error.is_some() {
                    had.error.clone_from(&result.error);
                }
            }
            None => merged.push(result.clone()),
        }
    }
    merged
}

/// Why a pool is not where it should be.
fn notes(pool: &Pool, status: &reconcile::PoolStatus) -> Vec<PoolNote> {
    let mut notes = Vec::new();
    if status.short > 0 {
        notes.push(PoolNote::Short {
            gpus: status.short,
            model: pool.model.clone(),
            regions: pool.regions.clone(),
        });
    }
    for host in status.hosts.iter().filter(|h| h.failed > 0) {
        if let Some(problem) = &host.last_error {
            notes.push(PoolNote::HostFailing {
                host: host.host.clone(),
                problem: problem.clone(),
            });
        }
    }
    if status.lost > 0 {
        notes.push(PoolNote::Lost { gpus: status.lost });
    }
    if status.held_to_unit_end > 0 {
        notes.push(PoolNote::HeldToUnitEnd {
            gpus: status.held_to_unit_end,
        });
    }
    notes
}
