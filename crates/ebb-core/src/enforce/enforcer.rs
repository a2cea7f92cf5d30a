//! The enforcer: the reconcile loop's shell. Each pass reads every agent's GPUs and leases
//! (with timeouts, all hosts at once), sends again any lease request whose answer was
//! never certain (same idempotency key), plans with [`reconcile::plan`] (pure), writes the
//! new requests down before sending them, carries the plan out (the IO), and records what
//! [`settle`] (pure) makes of the answers: the lease history, the fences, what each pool
//! looks like, and each change's per-host results in the activity log. Time comes from the
//! store's clock, so a test can run a pass on virtual time. One process per data directory
//! runs it (the collector). It reaches the GPUs only through a [`GpuProvider`] (the agents,
//! unless a test or another provider is given).

use crate::catalog_store::ActiveCatalog;
use crate::election::LeaderHandle;
use crate::enforce::act::Sender;
use crate::pools::{NewActivity, Pool, PoolError, PoolStore};
use crate::provider::{AgentProvider, GpuProvider};
use crate::registry::{HostEntry, Registry};
use crate::rules_live::RulesRunner;
use crate::slurm::binder::NodeAnswer;
use ebb_reconcile::reconcile::{self, HostObs, Input, KnownLease, Pending, PoolTarget, Refusals};
use ebb_reconcile::settle::{self, CreateAnswer, Lookup, Tally};
use ebb_telemetry::client::ClientConfig;
use ebb_telemetry::fanout::fan_out;
use ebb_wire::agent::{AgentErrorKind, ConsoleTerm};
use ebb_wire::pools::{Actor, HostResult};
use ebb_wire::reasons::{ChangeReason, HostProblem, PoolNote};
use std::collections::{HashMap, HashSet};
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
    /// When spot is paused for a model in a region, and resumed.
    pub spot_breaker: ebb_reconcile::spot::BreakerPolicy,
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
            spot_breaker: ebb_reconcile::spot::BreakerPolicy::default(),
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
    /// Pools whose rules decided this pass (enabled or in shadow mode).
    pub rule_decisions: u32,
    /// Desired counts a rule changed this pass: (pool, from, to). The next pass runs at once.
    pub rule_changes: Vec<(String, u32, u32)>,
}

/// The running loop; [`Enforcer::stop`] ends it.
#[derive(Debug)]
pub struct Enforcer {
    wake: Arc<Notify>,
    reports: watch::Receiver<PassReport>,
    task: Option<JoinHandle<()>>,
}

impl Enforcer {
    /// The enforcer over the registry's agents, acting while `leader` says so.
    pub fn start(
        store: PoolStore,
        registry: Registry,
        data_dir: PathBuf,
        config: EnforcerConfig,
        leader: LeaderHandle,
    ) -> Self {
        let provider = Arc::new(AgentProvider::new(registry.clone(), config.client));
        Self::elected(store, registry, data_dir, config, provider, leader)
    }

    /// [`Enforcer::start`], with Slurm-bound pools worked through `slurm`.
    pub fn start_bound(
        store: PoolStore,
        registry: Registry,
        data_dir: PathBuf,
        config: EnforcerConfig,
        leader: LeaderHandle,
        slurm: crate::slurm::api::SlurmSetup,
        readings: Option<ebb_telemetry::prom::PromClient>,
    ) -> Self {
        let provider = Arc::new(AgentProvider::new(registry.clone(), config.client));
        Self::spawn(
            store, registry, data_dir, config, provider, leader, slurm, readings,
        )
    }

    /// The enforcer renting through `provider`: the registry's hosts are its targets.
    pub fn with_provider(
        store: PoolStore,
        registry: Registry,
        data_dir: PathBuf,
        config: EnforcerConfig,
        provider: Arc<dyn GpuProvider>,
    ) -> Self {
        Self::elected(
            store,
            registry,
            data_dir,
            config,
            provider,
            LeaderHandle::sole(),
        )
    }

    /// The enforcer of consoles sharing a database: it passes only while `leader` says this
    /// console leads, sends its term with every rent and release, and steps down when an
    /// agent refuses the term.
    pub fn elected(
        store: PoolStore,
        registry: Registry,
        data_dir: PathBuf,
        config: EnforcerConfig,
        provider: Arc<dyn GpuProvider>,
        leader: LeaderHandle,
    ) -> Self {
        Self::spawn(
            store,
            registry,
            data_dir,
            config,
            provider,
            leader,
            crate::slurm::api::SlurmSetup::default(),
            None,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn spawn(
        store: PoolStore,
        registry: Registry,
        data_dir: PathBuf,
        config: EnforcerConfig,
        provider: Arc<dyn GpuProvider>,
        leader: LeaderHandle,
        slurm: crate::slurm::api::SlurmSetup,
        readings: Option<ebb_telemetry::prom::PromClient>,
    ) -> Self {
        let wake = Arc::new(Notify::new());
        let (publish, reports) = watch::channel(PassReport::default());
        let mut state = Loop {
            store,
            registry,
            data_dir,
            config,
            provider,
            // Set before each pass from the election (none for a console alone).
            term: None,
            stale_term: false,
            announced: Announcement::default(),
            down_since: None,
            refusals: Refusals::default(),
            holder: None,
            passes: 0,
            rules: RulesRunner::default(),
            readings,
            slurm: crate::slurm::binder::SlurmBinder::new(slurm),
            reclaims_said: std::collections::HashSet::new(),
            spot: crate::enforce::spot::SpotBreakers::new(config.spot_breaker),
        };
        let wake_loop = wake.clone();
        let task = tokio::spawn(async move {
            loop {
                let Some(term) = leader.current().acting(tokio::time::Instant::now()) else {
                    // Another console enforces: wait for the election (or a wake-up).
                    tokio::select! {
                        () = tokio::time::sleep(state.config.interval) => {}
                        () = wake_loop.notified() => {}
                    }
                    continue;
                };
                state.term = term;
                state.announce().await;
                let again = if state.stale_term {
                    // A host heard of a newer leader: step down without acting.
                    false
                } else {
                    match state.pass().await {
                        Ok(report) => {
                            let again = !report.rule_changes.is_empty();
                            publish.send_replace(report);
                            again
                        }
                        Err(error) => {
                            tracing::warn!(%error, "reconcile pass failed");
                            false
                        }
                    }
                };
                if std::mem::take(&mut state.stale_term)
                    && let Some(term) = &state.term
                {
                    leader.step_down(term);
                    continue;
                }
                if again {
                    // A rule set a new count: carry it out now, not a tick later.
                    continue;
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

struct Loop {
    store: PoolStore,
    registry: Registry,
    data_dir: PathBuf,
    config: EnforcerConfig,
    provider: Arc<dyn GpuProvider>,
    /// The term this console was elected for, sent with every rent and release so an
    /// agent can refuse a leader that was replaced; `None`: not elected, nothing sent.
    term: Option<ConsoleTerm>,
    /// An agent refused `term` this pass (409 `stale_term`): a newer leader exists.
    stale_term: bool,
    /// `term` told to every host, beside the passes.
    announced: Announcement,
    /// Since when each silent host has been silent; read from the store once, then kept
    /// here and written through.
    down_since: Option<HashMap<String, i64>>,
    /// Hosts that refuse our lease requests for themselves, kept off new ones a while.
    refusals: Refusals,
    holder: Option<String>,
    passes: u64,
    /// Each pool's rules, evaluated after the pass.
    rules: RulesRunner,
    /// On Prometheus as the metrics back end: the rules read the pools' GPU readings there.
    readings: Option<ebb_telemetry::prom::PromClient>,
    /// Pools bound to a Slurm partition: their nodes, one lease each.
    slurm: crate::slurm::binder::SlurmBinder,
    /// Reclaimed leases already logged (each said once while it lasts; after a restart,
    /// once more).
    reclaims_said: std::collections::HashSet<String>,
    /// The spot circuit breakers per model × region.
    spot: crate::enforce::spot::SpotBreakers,
}

/// What the hosts answered to a term's announcement: every registered host's name, and
/// the answer of each one that was told.
type Told = (Vec<String>, Vec<(String, Result<(), HostProblem>)>);

/// A newly elected console tells every registered host its term (`GpuProvider::announce`,
/// `POST /v1/terms` for the agents) as it takes office, beside its passes: from then on a
/// host refuses the replaced leader's calls, even one already in flight and even where the
/// new leader never rents. Hosts that did not answer are told again until all have been.
#[derive(Debug, Default)]
struct Announcement {
    term: Option<ConsoleTerm>,
    told: HashSet<String>,
    /// Every registered host has been told `term`.
    done: bool,
    /// The announcement under way; it answers `None` when the registry could not be read.
    running: Option<JoinHandle<Option<Told>>>,
}

/// What a pass reads from the database before it looks at the agents.
struct Recorded {
    /// Each pool's unfinished changes, oldest first.
    open: HashMap<String, Vec<(i64, Vec<HostResult>)>>,
    pools: Vec<Pool>,
    intents: Vec<Pending>,
    fences: HashMap<String, u64>,
    leases: Vec<KnownLease>,
}

impl Recorded {
    fn is_empty(&self) -> bool {
        self.pools.is_empty()
            && self.intents.is_empty()
            && self.fences.is_empty()
            && self.leases.is_empty()
    }

    /// Whether the enforcer has business with this host: a pool may use it, or we hold or
    /// asked for something there.
    fn concerns(&self, spec: &HostEntry) -> bool {
        self.pools
            .iter()
            .any(|pool| pool.regions.contains(&spec.region))
            || self.leases.iter().any(|lease| lease.host == spec.name)
            || self.intents.iter().any(|intent| intent.host == spec.name)
            || self.fences.contains_key(&spec.name)
    }
}

impl Loop {
    /// One pass: read → observe → retry → plan (pure) → act (the requests) → settle (pure)
    /// → write. Every decision is in `ebb_reconcile`; this function only moves data between the
    /// database, the agents and those two.
    async fn pass(&mut self) -> Result<PassReport, PoolError> {
        self.passes += 1;
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
        // Changes first, then pools: a change seen here is already in the pools read next,
        // so a pass never calls a change done on the strength of an older desired count.
        let recorded = Recorded {
            open: self.store.open_changes().await?,
            pools: self.store.list().await?,
            intents: self.store.intents().await?,
            fences: self.store.fences().await?,
            leases: self.store.known_leases().await?,
        };
        if recorded.is_empty() {
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
        self.provider.prepare(&specs).await;
        let catalog = ActiveCatalog::prices(&self.data_dir);
        self.slurm.reload(&self.data_dir);

        // Observe, all at once, every host the enforcer has business with.
        let scoped: Vec<HostEntry> = specs
            .into_iter()
            .filter(|spec| recorded.concerns(spec))
            .collect();
        let mut hosts =
            crate::provider::observe(&self.provider, &scoped, self.config.concurrency).await;
        self.note_down_since(&mut hosts, now).await?;

        // Reclaims count for the spot breakers before this pass plans: one that opens its
        // breaker sends its own replacement on demand.
        self.spot
            .before_plan(&self.store, &recorded.pools, &hosts, &holder, now)
            .await?;
        let breakers = &self.spot;
        let mut targets: Vec<PoolTarget> = recorded
            .pools
            .iter()
            .map(|pool| {
                let paused = |region: &str| breakers.paused_until(&pool.model, region).is_some();
                let plain = target(pool, &catalog, &paused);
                PoolTarget {
                    external: self.slurm.binds(&pool.name),
                    // A bound pool holds whole nodes: settled at its count rounded up.
                    desired: self.slurm.settled_gpus(pool).unwrap_or(plain.desired),
                    ..plain
                }
            })
            .collect();

        // Requests whose answer never came: the same key again, where the host answers.
        let mut tally = Tally::default();
        let (retry, mut pending): (Vec<Pending>, Vec<Pending>) =
            recorded.intents.into_iter().partition(|intent| {
                hosts
                    .iter()
                    .any(|h| h.name == intent.host && h.seen.is_some())
            });
        let retried = self.sender(&holder).rent(retry).await;
        let mut node_answers = node_answers_of(&retried, &targets);
        let mut granted = granted_leases(&retried);
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

        self.slurm.set_prices(&targets, &hosts);
        // Bindings: the Slurm binder chooses its nodes on what this pass saw (and Slurm
        // says); its node requests and releases go to the planner with everything else.
        self.slurm
            .tick(&crate::slurm::binder::TickInput {
                store: &self.store,
                holder: &holder,
                hosts: &hosts,
                pools: &recorded.pools,
                pending: &pending,
                now_ms: now,
            })
            .await;
        let mut orders = self.slurm.take_orders();
        for target in targets.iter_mut().filter(|target| target.external) {
            target.nodes = orders.remove(&target.id).unwrap_or_default();
        }
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

        // Hosts away past the grace period: write their leases off, say so; hosts back:
        // their stale leases go, say so too; leases their hosts take back, once each.
        for (host, fence) in &plan.lose {
            self.store.set_fence(host, *fence).await?;
        }
        let grace_s = self.config.grace.as_secs();
        // Said once the answers are in, with what they rented and released.
        let said: Vec<(String, ChangeReason)> =
            settle::failovers(&plan.lose, &targets, &known, grace_s)
                .into_iter()
                .chain(settle::hosts_back(&plan.releases))
                .chain(settle::reclaims(&plan.pools, &mut self.reclaims_said))
                .collect();
        for host in &plan.clear_fence {
            self.store.clear_fence(host).await?;
        }

        // Act: new requests written down first, then sent with the releases.
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
            let asked = settle::asked(&plan.pools, &targets, &hosts);
            self.store.write_status(&asked, self.store.now_ms()).await?;
        }
        let sender = self.sender(&holder);
        let (sent, released) = tokio::join!(sender.rent(new), sender.release(&plan.releases));

        self.stale_term |= sent.iter().any(|(_, answer)| match answer {
            CreateAnswer::Refused(problem) => is_stale_term(problem),
            _ => false,
        }) || released
            .iter()
            .any(|(_, answer)| answer.as_ref().is_err_and(is_stale_term));

        // Settle: what the answers mean, then written in as few transactions as it takes.
        node_answers.extend(node_answers_of(&sent, &targets));
        granted.extend(granted_leases(&sent));
        let sent = settle::creates(sent, &mut hosts, &mut tally);
        sent.update(&mut self.refusals, now);
        self.store.resolve_intents(&sent.resolved).await?;
        let ended = settle::ended(&released);
        self.store.record_ended(&ended).await?;
        let granted_refs: Vec<(&str, &ebb_wire::agent::Lease)> = granted
            .iter()
            .map(|(host, lease)| (host.as_str(), lease))
            .collect();
        let per_hour = settle::moved_per_hour(&targets, &hosts, &granted_refs, &ended);
        settle::releases(released, &mut tally);
        // Every grant and release in the log with its hosts and cost: in the pool's open
        // change, in a failover or reclaim entry of this pass, or in an upkeep entry.
        let mut open = recorded.open.clone();
        for (pool_id, reason) in said {
            if let Some(pool) = recorded.pools.iter().find(|p| p.id == pool_id) {
                let entry = NewActivity {
                    delta_per_hour_fen: per_hour.get(&pool_id).copied(),
                    ..failover_entry(pool, reason)
                };
                let id = self.store.log(pool, &entry).await?;
                open.entry(pool_id).or_default().push((id, Vec::new()));
            }
        }
        let mut settled = settle::finish(plan.pools, &targets, &tally, &hosts, &holder, &open);
        for (pool_id, results) in &settled.unclaimed {
            let Some(pool) = recorded.pools.iter().find(|p| &p.id == pool_id) else {
                continue;
            };
            let entry = NewActivity {
                actor: Actor::Enforcer,
                from: pool.desired,
                to: pool.desired,
                reason: ChangeReason::Upkeep {
                    rented: results.iter().map(|r| r.granted).sum(),
                    released: results.iter().map(|r| r.released).sum(),
                },
                delta_per_hour_fen: per_hour.get(pool_id).copied(),
                delta_per_month_fen: None,
            };
            let id = self.store.log(pool, &entry).await?;
            self.store
                .update_change(id, results, ebb_wire::pools::Outcome::Done)
                .await?;
        }
        // Spot paused where a pool would take it: said on the pool.
        for status in &mut settled.statuses {
            let Some(pool) = recorded.pools.iter().find(|p| p.id == status.pool_id) else {
                continue;
            };
            if pool.mix().spot_pct == 0 {
                continue;
            }
            for region in &pool.regions {
                if let Some(until_ms) = self.spot.paused_until(&pool.model, region) {
                    status.notes.push(PoolNote::SpotPaused {
                        region: region.clone(),
                        until_ms,
                    });
                }
            }
        }
        for change in &settled.changes {
            self.store
                .update_change(change.id, &change.results, change.outcome)
                .await?;
        }
        self.store
            .write_status(&settled.statuses, self.store.now_ms())
            .await?;
        crate::pool_history::after_pass(&self.store, &recorded.pools, &settled.statuses).await;
        self.slurm
            .answered(&self.store, &recorded.pools, &hosts, &node_answers)
            .await?;
        // The rules see what this pass saw, and may set new counts for the next; on
        // Prometheus, with the readings it has of the pools' GPUs.
        let read;
        let ruled_hosts = match &self.readings {
            Some(prometheus) => {
                read = crate::metrics_backend::readings_for_rules(
                    prometheus,
                    &hosts,
                    &settled.statuses,
                )
                .await;
                &read
            }
            None => &hosts,
        };
        self.rules
            .set_node_gpus(self.slurm.node_gpus(&recorded.pools));
        let ruled = self
            .rules
            .tick(
                &self.store,
                &settled.statuses,
                ruled_hosts,
                &catalog,
                self.store.now_ms(),
            )
            .await;
        let ruled = ruled.unwrap_or_else(|error| {
            tracing::warn!(%error, "the rules could not decide");
            crate::rules_live::RulesTick::default()
        });
        Ok(PassReport {
            number: self.passes,
            granted: tally.granted(),
            released: tally.released(),
            failed: tally.failed(),
            converged: settled.converged && sent.pending.is_empty() && ruled.changed.is_empty(),
            rule_decisions: u32::try_from(ruled.decisions).unwrap_or(u32::MAX),
            rule_changes: ruled.changed,
        })
    }

    /// This console's holder id (read once).
    async fn holder(&mut self) -> Result<String, PoolError> {
        if let Some(holder) = &self.holder {
            return Ok(holder.clone());
        }
        let id = self.store.console_id().await?;
        self.holder = Some(id.clone());
        Ok(id)
    }

    /// Since when each silent host has been silent, kept in the store so a restarted
    /// enforcer does not wait a whole grace period again.
    async fn note_down_since(&mut self, hosts: &mut [HostObs], now: i64) -> Result<(), PoolError> {
        let down = match &mut self.down_since {
            Some(down) => down,
            None => self.down_since.insert(self.store.down_since().await?),
        };
        let changed = reconcile::mark_down(down, hosts, now);
        if !changed.is_empty() {
            self.store.set_down_since(&changed).await?;
        }
        Ok(())
    }

    /// Folds in the answers of the announcement that finished, and starts the next one
    /// while some host has not been told this console's term. A host that refuses the term
    /// (a newer leader told it first) makes this console step down, as a refused rent does.
    async fn announce(&mut self) {
        let Some(term) = self.term.clone() else {
            return;
        };
        let announced = &mut self.announced;
        if announced.term.as_ref() != Some(&term) {
            if let Some(running) = announced.running.take() {
                running.abort();
            }
            *announced = Announcement {
                term: Some(term.clone()),
                ..Announcement::default()
            };
        }
        if let Some(running) = announced.running.take_if(|running| running.is_finished())
            && let Ok(Some((hosts, answers))) = running.await
        {
            announced.told.retain(|host| hosts.contains(host));
            for (host, answer) in answers {
                match answer {
                    Ok(()) => {
                        announced.told.insert(host);
                    }
                    Err(problem) if is_stale_term(&problem) => self.stale_term = true,
                    // An agent older than announcements: its calls are fenced all the same.
                    Err(HostProblem::RefusedRequest {
                        status: 404 | 405, ..
                    }) => {
                        announced.told.insert(host);
                    }
                    Err(problem) => {
                        tracing::debug!(%host, %problem, "term not announced yet; again next pass");
                    }
                }
            }
            announced.done = hosts.iter().all(|host| announced.told.contains(host));
        }
        if announced.done || announced.running.is_some() {
            return;
        }
        let (registry, provider) = (self.registry.clone(), self.provider.clone());
        let (told, concurrency) = (announced.told.clone(), self.config.concurrency);
        announced.running = Some(tokio::spawn(async move {
            let specs = registry.list().await.ok()?;
            provider.prepare(&specs).await;
            let calls = specs
                .iter()
                .filter(|spec| !told.contains(&spec.name))
                .map(|spec| (spec.name.clone(), term.clone(), provider.clone()));
            let answers = fan_out(calls, concurrency, |(host, term, provider)| async move {
                let answer = provider.announce(&host, &term).await;
                (host, answer)
            })
            .await;
            Some((specs.into_iter().map(|spec| spec.name).collect(), answers))
        }));
    }

    /// The one sender of lease requests, as this console (its holder id and term).
    fn sender<'a>(&'a self, holder: &'a str) -> Sender<'a> {
        Sender {
            provider: &self.provider,
            holder,
            term: self.term.as_ref(),
            concurrency: self.config.concurrency,
        }
    }

    /// Asks each host, by id, for the leases of ours it no longer lists.
    async fn look_up(&self, vanished: Vec<(String, String)>) -> Vec<((String, String), Lookup)> {
        let calls = vanished
            .into_iter()
            .map(|asked| (asked, self.provider.clone()));
        fan_out(
            calls,
            self.config.concurrency,
            |((host, lease_id), provider)| async move {
                let answer = match provider.lease(&host, &lease_id).await {
                    Ok(Some(lease)) => Lookup::Found(Box::new(lease)),
                    Ok(None) => {
                        tracing::info!(%host, lease = %lease_id, "a lease of ours is no longer known to its agent (released longer ago than its retention); its end is recorded as now");
                        Lookup::Forgotten
                    }
                    Err(error) => Lookup::Failed(error),
                };
                ((host, lease_id), answer)
            },
        )
        .await
    }
}

/// The leases granted, with their hosts.
fn granted_leases(
    answers: &[(Pending, settle::CreateAnswer)],
) -> Vec<(String, ebb_wire::agent::Lease)> {
    answers
        .iter()
        .filter_map(|(intent, answer)| match answer {
            CreateAnswer::Granted(lease) => Some((intent.host.clone(), (**lease).clone())),
            _ => None,
        })
        .collect()
}

/// The answers to a bound pool's node requests, for the Slurm binder (unanswered ones are
/// sent again; the binder hears nothing of them).
fn node_answers_of(
    answers: &[(Pending, settle::CreateAnswer)],
    targets: &[PoolTarget],
) -> Vec<(Pending, NodeAnswer)> {
    answers
        .iter()
        .filter(|(intent, _)| {
            targets
                .iter()
                .any(|target| target.external && target.id == intent.pool_id)
        })
        .filter_map(|(intent, answer)| match answer {
            CreateAnswer::Granted(_) => Some((intent.clone(), NodeAnswer::Granted)),
            CreateAnswer::Refused(problem) => {
                Some((intent.clone(), NodeAnswer::Refused(problem.to_string())))
            }
            CreateAnswer::Unknown(_) => None,
        })
        .collect()
}

/// An agent's refusal of this console's term: another console was elected since.
fn is_stale_term(problem: &HostProblem) -> bool {
    matches!(
        problem,
        HostProblem::RefusedRequest {
            agent_kind: AgentErrorKind::StaleTerm,
            ..
        }
    )
}

/// The activity entry for a write-off or a host coming back: the count does not move.
fn failover_entry(pool: &Pool, reason: ChangeReason) -> NewActivity {
    NewActivity {
        actor: Actor::Failover,
        from: pool.desired,
        to: pool.desired,
        reason,
        delta_per_hour_fen: None,
        delta_per_month_fen: None,
    }
}

/// The planner's view of a pool; `paused` says whether spot of its model is paused in a
/// region (the breaker).
pub(crate) fn target(
    pool: &Pool,
    catalog: &ebb_cost::Catalog,
    paused: &dyn Fn(&str) -> bool,
) -> PoolTarget {
    let mut spot_prices = pool.spot_prices(catalog);
    spot_prices.retain(|region, _| !paused(region));
    let wanted = pool.split(pool.desired, !spot_prices.is_empty()).spot;
    PoolTarget {
        id: pool.id.clone(),
        model: pool.model.clone(),
        regions: pool.regions.clone(),
        desired: pool.desired,
        policy: pool.placement,
        at_unit_end: pool.release_at_unit_end && !pool.force_release,
        unit_ms: pool.unit_ms(),
        prices: pool.hourly_prices(catalog),
        release_first: pool.release_first.clone(),
        external: false,
        nodes: Default::default(),
        spot: ebb_reconcile::reconcile::SpotTarget {
            wanted,
            prices: spot_prices,
        },
    }
}
