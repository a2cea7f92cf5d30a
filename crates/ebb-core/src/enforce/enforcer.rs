//! The enforcer: the reconcile loop's shell. Each pass reads every agent's GPUs and leases
//! (with timeouts, all hosts at once), sends again any lease request whose answer was
//! never certain (same idempotency key), plans with [`reconcile::plan`] (pure), writes the
//! new requests down before sending them, carries the plan out (the IO), and records what
//! [`settle`] (pure) makes of the answers: the lease history, the fences, what each pool
//! looks like, and each change's per-host results in the activity log. Time comes from the
//! store's clock, so a test can run a pass on virtual time. One process per data directory
//! runs it (the collector). It reaches the GPUs only through a [`GpuProvider`] (the agents,
//! unless a test or another provider is given).

use crate::changes::Changes;
use crate::config::ConsoleConfig;
use crate::election::LeaderHandle;
use crate::enforce::sender::Sender;
use crate::metrics_source::MetricsSource;
use crate::pools::{NewActivity, Pool, PoolError, PoolStore, Recorded};
use crate::provider::{AgentProvider, GpuProvider};
use crate::registry::Registry;
use crate::rules_live::{RulesRunner, RulesTick};
use crate::slurm::binder::NodeAnswer;
use ebb_reconcile::reconcile::{self, HostObs, KnownLease, Pending, PoolTarget, Refusals};
use ebb_reconcile::settle::{self, CreateAnswer, Lookup, Tally};
use ebb_telemetry::client::ClientConfig;
use ebb_telemetry::fanout::fan_out;
use ebb_wire::agent::{AgentErrorKind, ConsoleTerm};
use ebb_wire::pools::Actor;
use ebb_wire::reasons::{ChangeReason, HostProblem};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Notify, watch};
use tokio::task::JoinHandle;

mod stages;

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
    /// The stages this pass ran, in order ([`STAGES`], or only `Observe` when there was
    /// nothing to do).
    pub stages: Vec<Stage>,
    /// Pools this pass changed, by name: their status apart from the readings (leases,
    /// counts, notes), a count a rule set, a decision recorded. Told to the console's
    /// [`Changes`] with the activity log's newest id.
    pub pools_changed: Vec<String>,
}

/// The running loop; [`Enforcer::stop`] ends it.
#[derive(Debug)]
pub struct Enforcer {
    wake: Arc<Notify>,
    reports: watch::Receiver<PassReport>,
    changes: Changes,
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

    /// [`Enforcer::start`], with Slurm-bound pools worked through `slurm`, the console's
    /// followed files (the Slurm binding, the prices) and its metrics source (the rules'
    /// readings).
    pub fn start_bound(
        store: PoolStore,
        registry: Registry,
        files: Arc<ConsoleConfig>,
        config: EnforcerConfig,
        leader: LeaderHandle,
        slurm: crate::slurm::api::SlurmSetup,
        readings: Arc<dyn MetricsSource>,
    ) -> Self {
        let provider = Arc::new(AgentProvider::new(registry.clone(), config.client));
        Self::spawn(
            store,
            registry,
            files,
            config,
            provider,
            leader,
            slurm,
            Some(readings),
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
        // Only the Slurm binding and the prices are read from the data directory here.
        let files = Arc::new(ConsoleConfig::with(&data_dir, Default::default()));
        Self::spawn(
            store,
            registry,
            files,
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
        files: Arc<ConsoleConfig>,
        config: EnforcerConfig,
        provider: Arc<dyn GpuProvider>,
        leader: LeaderHandle,
        slurm: crate::slurm::api::SlurmSetup,
        readings: Option<Arc<dyn MetricsSource>>,
    ) -> Self {
        let wake = Arc::new(Notify::new());
        let (publish, reports) = watch::channel(PassReport::default());
        let changes = Changes::default();
        let mut state = Loop {
            changes: changes.clone(),
            last_status: HashMap::new(),
            store,
            registry,
            files,
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
            warming: std::collections::HashSet::new(),
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
                            state.tell(&report).await;
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
            changes,
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

    /// Where the passes say which pools they changed (the console publishes its own writes
    /// there too).
    pub fn changes(&self) -> Changes {
        self.changes.clone()
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
    /// The Slurm binding and the prices, each read again when its file changes.
    files: Arc<ConsoleConfig>,
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
    /// Where the rules read the pools' GPU readings (Prometheus's, when it is the metrics
    /// back end); `None`: the pass's own observations.
    readings: Option<Arc<dyn MetricsSource>>,
    /// Pools bound to a Slurm partition: their nodes, one lease each.
    slurm: crate::slurm::binder::SlurmBinder,
    /// Reclaimed leases already logged (each said once while it lasts; after a restart,
    /// once more).
    reclaims_said: std::collections::HashSet<String>,
    /// Leases seen warming at the last pass (said ready when they come up).
    warming: std::collections::HashSet<String>,
    /// The spot circuit breakers per model × region.
    spot: crate::enforce::spot::SpotBreakers,
    /// Told which pools each pass changed.
    changes: Changes,
    /// Each pool's last status, its readings left out, by pool id: what a pass changed.
    last_status: HashMap<String, reconcile::PoolStatus>,
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

/// The stages of a pass, in the order they run: observe (read the database, ask the
/// agents, send again what was unanswered, follow the lease history) → breakers (reclaims
/// count for spot's breakers; each pool's target) → bindings (the Slurm binder's node
/// requests and releases, planner input) → plan (pure) → act (write requests down, send
/// them and the releases) → settle (what the answers mean, written: leases, activity,
/// status) → rules (new counts for the next pass, at once).
pub const STAGES: [Stage; 7] = [
    Stage::Observe,
    Stage::Breakers,
    Stage::Bindings,
    Stage::Plan,
    Stage::Act,
    Stage::Settle,
    Stage::Rules,
];

/// A stage of a pass (see [`STAGES`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Observe,
    Breakers,
    Bindings,
    Plan,
    Act,
    Settle,
    Rules,
}

/// One pass's context, filled stage by stage.
struct Pass {
    now: i64,
    holder: String,
    recorded: Recorded,
    catalog: ebb_cost::Catalog,
    hosts: Vec<HostObs>,
    /// Requests still unanswered (not sent again this pass, or sent and no answer).
    pending: Vec<Pending>,
    known: Vec<KnownLease>,
    targets: Vec<PoolTarget>,
    tally: Tally,
    /// Answers to the Slurm binder's node requests, for it.
    node_answers: Vec<(Pending, NodeAnswer)>,
    /// The ids of the pools bound to a Slurm partition (their nodes are the binder's).
    bound: Vec<String>,
    /// Leases granted this pass, with their hosts (their cost in the log).
    granted: Vec<(String, ebb_wire::agent::Lease)>,
    plan: reconcile::Plan,
    /// Failovers, hosts back and reclaims to log once the answers are in.
    said: Vec<(String, ChangeReason)>,
    sent: Vec<(Pending, CreateAnswer)>,
    released: Vec<(reconcile::ReleaseOrder, settle::ReleaseAnswer)>,
    /// Requests sent this pass whose answer is not certain.
    unanswered: usize,
    settled: settle::Settled,
    stages: Vec<Stage>,
}

impl Pass {
    fn ran(&mut self, stage: Stage) {
        self.stages.push(stage);
    }
}

impl Loop {
    /// One pass: its stages in [`STAGES`] order over one [`Pass`], each in its own file
    /// (`enforcer/*.rs`). Every decision is in `ebb_reconcile` (and the binder's choice of
    /// nodes); the stages only move data between the database, Slurm, the agents and those.
    async fn pass(&mut self) -> Result<PassReport, PoolError> {
        self.passes += 1;
        let Some(mut pass) = self.observe().await? else {
            // Nothing held, asked for or wanted: no agent needs asking.
            return Ok(PassReport {
                number: self.passes,
                converged: true,
                stages: vec![Stage::Observe],
                ..PassReport::default()
            });
        };
        self.breakers(&mut pass).await?;
        self.bindings(&mut pass).await?;
        self.plan(&mut pass).await?;
        self.act(&mut pass).await?;
        self.settle(&mut pass).await?;
        let ruled = self.rules(&mut pass).await;
        let pools_changed = self.changed_pools(&pass, &ruled);
        Ok(PassReport {
            number: self.passes,
            granted: pass.tally.granted(),
            released: pass.tally.released(),
            failed: pass.tally.failed(),
            converged: pass.settled.converged && pass.unanswered == 0 && ruled.changed.is_empty(),
            rule_decisions: u32::try_from(ruled.decisions).unwrap_or(u32::MAX),
            rule_changes: ruled.changed,
            stages: pass.stages,
            pools_changed,
        })
    }

    /// The pools this pass changed (see [`PassReport::pools_changed`]); the statuses are
    /// kept for the next pass to compare with.
    fn changed_pools(&mut self, pass: &Pass, ruled: &RulesTick) -> Vec<String> {
        let mut changed: Vec<String> = ruled
            .changed
            .iter()
            .map(|(pool, _, _)| pool.clone())
            .chain(ruled.recorded.iter().cloned())
            .collect();
        for status in &pass.settled.statuses {
            let mut seen = status.clone();
            for lease in &mut seen.leases {
                lease.util_pct = None;
            }
            if self.last_status.get(&status.pool_id) != Some(&seen)
                && let Some(pool) = pass.recorded.pools.iter().find(|p| p.id == status.pool_id)
            {
                changed.push(pool.name.clone());
            }
            self.last_status.insert(status.pool_id.clone(), seen);
        }
        self.last_status
            .retain(|id, _| pass.recorded.pools.iter().any(|pool| &pool.id == id));
        changed.sort();
        changed.dedup();
        changed
    }

    /// Tells the console's fronts what a pass changed: its pools, then the activity log's
    /// newest id (said only when it grew). A pass that changed no pool asks nothing: an
    /// entry it wrote all the same (a Slurm step, a spot pause) is heard from the log
    /// itself, by whoever reads it for new entries ([`Changes::appended`]).
    async fn tell(&self, report: &PassReport) {
        if !report.pools_changed.is_empty() {
            self.changes.pools(&report.pools_changed);
            match self.store.last_activity_id().await {
                Ok(newest) => self.changes.activity(newest),
                Err(error) => tracing::debug!(%error, "cannot read the activity log's newest id"),
            }
        }
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
    bound: &[String],
) -> Vec<(Pending, NodeAnswer)> {
    answers
        .iter()
        .filter(|(intent, _)| bound.contains(&intent.pool_id))
        .filter_map(|(intent, answer)| match answer {
            CreateAnswer::Granted(_) => Some((intent.clone(), NodeAnswer::Granted)),
            CreateAnswer::Refused(problem) => Some((intent.clone(), NodeAnswer::refused(problem))),
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
