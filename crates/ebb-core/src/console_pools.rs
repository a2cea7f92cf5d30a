//! The console's pool operations, shared by the desktop shell and the CLI: create, edit,
//! delete, show, preview a slider move, scale, and the activity log. Changes go to
//! `console.db`; the enforcer (in whichever process collects) carries them out.
//!
//! A slider move: each step asks [`Console::preview_scale`] (`pools::view::scale_preview`:
//! the cost before and after, the leases that would go, what releasing them would stop,
//! whether to ask first); letting go is [`Console::scale`] with the count the slider moved
//! from. A team's GPU or spend quota clamps a scale-out there (`ChangeReason::QuotaClamp`,
//! `SpendQuotaClamp`), a scale-out past the budget cap of the pool's rules is refused unless
//! asked for on purpose (`over_budget`, which needs the admin role), then
//! `PoolStore::set_desired` writes it with its activity entry and the enforcer is woken.

use crate::console::{Console, Role};
use crate::enforcer::PassReport;
use crate::metrics_source::embedded::read_snapshot;
use crate::pools::{self, HostFacts, NewActivity, Pool, PoolError, PoolStore};
use crate::provider::{AgentProvider, GpuProvider};
use ebb_cost::{Catalog, OverlayMode, Term};
use ebb_reconcile::reconcile::{self, HostObs};
use ebb_telemetry::client::ClientConfig;
use ebb_wire::ipc::Health;
use ebb_wire::pools::{
    ActivityEntry, Actor, PlacementPolicy, PoolInput, PoolOptions, PoolPhase, PoolView,
    RegionOffer, ScalePreview, SpendSummary,
};
use ebb_wire::reasons::ChangeReason;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// A move of a pool's desired count, as a front asks for it.
#[derive(Debug, Clone, PartialEq)]
pub struct ScaleChange {
    pub to: u32,
    /// The count the operator saw and moves from (compare-and-set); `None`: whatever it is
    /// when the change is made.
    pub from: Option<u32>,
    /// Leases to give back first (the operator's choice).
    pub release: Vec<String>,
    pub actor: Actor,
    pub reason: ChangeReason,
    /// Past the budget cap of the pool's rules on purpose.
    pub over_budget: bool,
}

impl ScaleChange {
    pub fn new(to: u32, actor: Actor, reason: ChangeReason) -> Self {
        Self {
            to,
            from: None,
            release: Vec::new(),
            actor,
            reason,
            over_budget: false,
        }
    }

    /// From `from`, the count the operator saw (`None`: whatever it is then).
    pub fn moving_from(self, from: Option<u32>) -> Self {
        Self { from, ..self }
    }

    /// Giving back these leases first.
    pub fn releasing(self, release: Vec<String>) -> Self {
        Self { release, ..self }
    }

    /// Past the budget cap of the pool's rules on purpose, when `over_budget`.
    pub fn over_budget(self, over_budget: bool) -> Self {
        Self {
            over_budget,
            ..self
        }
    }
}

impl Console {
    pub fn pool_store(&self) -> &PoolStore {
        &self.pools
    }

    /// Each reconcile pass's report, when this process enforces.
    pub fn enforcer_reports(&self) -> Option<watch::Receiver<PassReport>> {
        self.enforcer
            .lock()
            .ok()
            .and_then(|slot| slot.as_ref().map(crate::enforcer::Enforcer::reports))
    }

    pub(crate) fn wake_enforcer(&self) {
        if let Ok(slot) = self.enforcer.lock()
            && let Some(enforcer) = slot.as_ref()
        {
            enforcer.wake();
        }
    }

    /// The price catalog in use (the demo one when none was imported or it cannot be read).
    pub fn catalog(&self) -> Catalog {
        (*self.config.prices()).clone()
    }

    /// Hosts with the GPU models they reported; a host never polled is asked now. One the
    /// collector tried and could not read is not asked again here: a hung host would hold
    /// every pool form and preview up for the full timeout.
    async fn host_facts(&self) -> Result<Vec<HostFacts>, PoolError> {
        let hosts = read_snapshot(self.registry().db()).await?;
        let never_polled: Vec<String> = hosts
            .iter()
            .filter(|host| host.models.is_empty() && host.health == Health::Unknown)
            .map(|host| host.name.clone())
            .collect();
        let mut facts: Vec<HostFacts> = hosts
            .into_iter()
            .map(|host| HostFacts {
                name: host.name,
                region: host.region,
                models: host.models,
            })
            .collect();
        if !never_polled.is_empty() {
            let specs = self.registry_specs().await?;
            let unpolled: Vec<_> = specs
                .into_iter()
                .filter(|spec| never_polled.contains(&spec.name))
                .collect();
            for host in self.observe_now(&unpolled).await {
                if let (Some(seen), Some(fact)) =
                    (&host.seen, facts.iter_mut().find(|f| f.name == host.name))
                {
                    let mut models: Vec<String> =
                        seen.gpus.iter().map(|g| g.model.clone()).collect();
                    models.sort();
                    models.dedup();
                    fact.models = models;
                }
            }
        }
        Ok(facts)
    }

    async fn registry_specs(&self) -> Result<Vec<crate::registry::HostEntry>, PoolError> {
        self.registry()
            .list()
            .await
            .map_err(|error| PoolError::Registry(Box::new(error)))
    }

    /// Asks these hosts for their GPUs and leases now (short timeouts, all at once).
    async fn observe_now(&self, specs: &[crate::registry::HostEntry]) -> Vec<HostObs> {
        let provider: Arc<dyn GpuProvider> = Arc::new(AgentProvider::new(
            self.registry().clone(),
            ClientConfig {
                connect_timeout: Duration::from_millis(500),
                request_timeout: Duration::from_millis(1500),
            },
        ));
        provider.prepare(specs).await;
        crate::provider::observe(&provider, specs, 64).await
    }

    /// The pool as its agents show it right now, planned as the enforcer would.
    async fn live_status(
        &self,
        pool: &Pool,
        catalog: &Catalog,
    ) -> Result<reconcile::PoolStatus, PoolError> {
        let specs = self.registry_specs().await?;
        let mut hosts = self.observe_now(&specs).await;
        let fences = self.pools.fences().await?;
        for host in &mut hosts {
            host.lost_fence = fences.get(&host.name).copied();
        }
        let known = self.pools.known_leases().await?;
        let pending = self.pools.intents().await?;
        let holder = self.pools.console_id().await?;
        // Spot paused where the enforcer last said so.
        let paused = self
            .pools
            .read_status(&pool.id)
            .await?
            .map(|(status, _)| crate::pools::spot_paused(&status))
            .unwrap_or_default();
        let targets = [crate::enforcer::target(pool, catalog, &|region: &str| {
            paused.iter().any(|p| p == region)
        })];
        let plan = reconcile::plan(&reconcile::Input {
            now_ms: self.pools.now_ms(),
            holder: &holder,
            // A preview writes nothing off.
            grace_ms: i64::MAX,
            pools: &targets,
            hosts: &hosts,
            known: &known,
            pending: &pending,
        });
        Ok(plan.pools.into_iter().next().unwrap_or_default())
    }

    /// The pool form as typed, checked as saving it would be (the store's own checks
    /// against the hosts and the catalog): each field's problem in words, or the pool.
    pub async fn check_pool(
        &self,
        form: &ebb_wire::pools::PoolForm,
    ) -> Result<ebb_wire::pools::PoolCheck, PoolError> {
        let hosts = self.host_facts().await?;
        Ok(pools::form::check_form(form, &hosts, &self.catalog()))
    }

    pub async fn create_pool(&self, input: &PoolInput) -> Result<PoolView, PoolError> {
        self.require(ebb_wire::access::AccessAction::Pools).await?;
        let catalog = self.catalog();
        let valid = pools::validate(input, &self.host_facts().await?, &catalog)?;
        let pool = self.pools.create(valid).await?;
        self.wrote(None).await;
        self.pool_view(&pool, &catalog).await
    }

    pub async fn update_pool(&self, name: &str, input: &PoolInput) -> Result<PoolView, PoolError> {
        self.require(ebb_wire::access::AccessAction::Pools).await?;
        let catalog = self.catalog();
        let valid = pools::validate(input, &self.host_facts().await?, &catalog)?;
        let (_, after) = self.pools.update(name, valid).await?;
        self.wrote(None).await;
        self.pool_view(&after, &catalog).await
    }

    /// Deletes the pool; the enforcer releases every GPU it held.
    pub async fn delete_pool(&self, name: &str) -> Result<(), PoolError> {
        self.require(ebb_wire::access::AccessAction::Pools).await?;
        self.pools.delete(name).await?;
        self.wrote(None).await;
        Ok(())
    }

    pub async fn list_pools(&self) -> Result<Vec<PoolView>, PoolError> {
        let catalog = self.catalog();
        let mut views = Vec::new();
        for pool in self.pools.list().await? {
            views.push(self.pool_view(&pool, &catalog).await?);
        }
        Ok(views)
    }

    pub async fn show_pool(&self, name: &str) -> Result<PoolView, PoolError> {
        let pool = self.pools.get(name).await?;
        self.pool_view(&pool, &self.catalog()).await
    }

    async fn pool_view(&self, pool: &Pool, catalog: &Catalog) -> Result<PoolView, PoolError> {
        let now = self.pools.now_ms();
        let status = self.pools.read_status(&pool.id).await?;
        let (_, month_start, _) = ebb_charts::calendar::utc_month(now);
        let spans = self.pools.spans(&pool.id, month_start).await?;
        Ok(pools::pool_view(pool, status, &spans, catalog, now))
    }

    /// What moving the pool to `to` would do, before letting go.
    pub async fn preview_scale(&self, name: &str, to: u32) -> Result<ScalePreview, PoolError> {
        self.preview_scale_choosing(name, to, &[]).await
    }

    /// What moving the pool to `to` would do, giving back the leases in `release` first (the
    /// operator's choice; the placement chooses the rest). A lease the pool does not hold, or
    /// more than the change gives back, is refused naming the field `release`.
    pub async fn preview_scale_choosing(
        &self,
        name: &str,
        to: u32,
        release: &[String],
    ) -> Result<ScalePreview, PoolError> {
        let pool = self.pools.get(name).await?;
        pool.check_count("to", to)?;
        let catalog = self.catalog();
        // The enforcer's last look when it is recent, else the agents asked now.
        let status = match self.pools.read_status(&pool.id).await? {
            Some((status, at)) if self.pools.now_ms() - at <= PREVIEW_FRESH_MS => status,
            _ => self.live_status(&pool, &catalog).await?,
        };
        pools::check_release_choice(&status, to, release)?;
        let confirm = self.pools.confirm_policy().await?;
        Ok(pools::scale_preview(
            &pool,
            &status,
            to,
            release,
            &catalog,
            confirm,
            self.pools.now_ms(),
        ))
    }

    /// Sets the pool's desired count (logged with its cost delta) and wakes the enforcer.
    pub async fn scale_pool(
        &self,
        name: &str,
        to: u32,
        actor: Actor,
        reason: ChangeReason,
    ) -> Result<ActivityEntry, PoolError> {
        self.scale(name, ScaleChange::new(to, actor, reason)).await
    }

    /// Moves the pool's desired count as `change` says: from the count it names (else
    /// whatever it is now; [`PoolError::Moved`] when another change came first), giving back
    /// the leases in `release` first (checked as [`Self::preview_scale_choosing`] checks
    /// them; the enforcer releases exactly those, and the placement's choice for the rest).
    /// A scale-out past the budget cap of the pool's rules is refused (field `budget`)
    /// unless `over_budget`, when it goes ahead logged as such
    /// (`ChangeReason::BudgetOverride`).
    pub async fn scale(&self, name: &str, change: ScaleChange) -> Result<ActivityEntry, PoolError> {
        let ScaleChange {
            mut to,
            from,
            release,
            actor,
            mut reason,
            over_budget,
        } = change;
        self.require(ebb_wire::access::AccessAction::Scale).await?;
        if over_budget {
            self.require(ebb_wire::access::AccessAction::Budget).await?;
        }
        // The team's quotas clamp a scale-out (GPUs, then spend), never below now.
        let pool = self.pools.get(name).await?;
        let catalog = self.catalog();
        let status = self.pools.read_status(&pool.id).await?.map(|(s, _)| s);
        let pricing = crate::rules_live::pricing(&pool, status.as_ref(), &catalog);
        if to > pool.desired {
            let clamps = self
                .pools
                .team_clamps(&pool, pool.desired, to, &catalog, pricing.as_ref())
                .await?;
            if let Some(last) = clamps.last() {
                to = last.to;
                reason = last.reason();
            }
        }
        let preview = self.preview_scale_choosing(name, to, &release).await?;
        if let Some(expected) = from
            && expected != preview.from
        {
            return Err(PoolError::Moved {
                pool: preview.pool,
                expected,
                actual: preview.from,
            });
        }
        if to > preview.from
            && let Some((per_hour_fen, cap_fen)) = self.budget_breach(name, to).await?
        {
            if !over_budget {
                return Err(PoolError::Invalid {
                    field: "budget",
                    problem: format!(
                        "{to} GPUs cost {} per hour, past the budget cap of this pool's rules ({} per hour): go past it on purpose (the slider's \"Apply past the budget\", `ebb pool scale --over-budget`) or raise the cap",
                        ebb_cost::Money::from_fen(per_hour_fen),
                        ebb_cost::Money::from_fen(cap_fen)
                    ),
                    words: Some(Box::new(
                        ebb_wire::phrase::Phrase::new("pool.refuse.budget")
                            .arg("gpus", ebb_wire::phrase::Arg::Gpus(to))
                            .arg("cost", ebb_wire::phrase::Arg::Money(per_hour_fen))
                            .arg("cap", ebb_wire::phrase::Arg::Money(cap_fen)),
                    )),
                });
            }
            reason = ChangeReason::BudgetOverride {
                per_hour_fen,
                cap_fen,
            };
        }
        let priced = preview.cost_problem.is_none();
        let change = NewActivity {
            actor,
            from: preview.from,
            to,
            reason,
            delta_per_hour_fen: priced.then_some(preview.delta_per_hour_fen),
            delta_per_month_fen: priced.then_some(preview.delta_per_month_fen),
        };
        // Written only if the pool is still at `preview.from` (compare-and-set): a change
        // that came in since the preview stands, and this one is refused.
        let spend = crate::pools::teams::SpendCheck {
            catalog: &catalog,
            pricing: pricing.as_ref(),
        };
        let (_, entry) = self
            .pools
            .set_desired(name, to, &release, &change, Some(&spend))
            .await?;
        self.wrote(Some(&[name])).await;
        Ok(entry)
    }

    /// When `to` GPUs would cost more than the budget cap of the pool's rules (enabled or
    /// shadowed): that cost and the cap, per hour (a monthly cap as its hourly share, ÷ 730).
    pub async fn budget_breach(
        &self,
        name: &str,
        to: u32,
    ) -> Result<Option<(i64, i64)>, PoolError> {
        let Some(stored) = self.pools.rules(name).await? else {
            return Ok(None);
        };
        if stored.mode == ebb_wire::rules::RulesMode::Disabled {
            return Ok(None);
        }
        let Ok(rules) = ebb_rules::model::parse(&stored.source) else {
            return Ok(None);
        };
        let budget = rules.spec().limits.budget;
        if budget.per_hour_fen.is_none() && budget.per_month_fen.is_none() {
            return Ok(None);
        }
        let pool = self.pools.get(name).await?;
        let status = self
            .pools
            .read_status(&pool.id)
            .await?
            .map(|(status, _)| status);
        let Some(pricing) = crate::rules_live::pricing(&pool, status.as_ref(), &self.catalog())
        else {
            return Ok(None);
        };
        let Ok(rate) = pricing.run_rate(to) else {
            return Ok(None);
        };
        let per_hour = rate.total.per_hour.fen();
        let per_month = rate.total.per_month.fen();
        if let Some(cap) = budget.per_hour_fen
            && per_hour > cap
        {
            return Ok(Some((per_hour, cap)));
        }
        if let Some(cap) = budget.per_month_fen
            && per_month > cap
        {
            return Ok(Some((per_hour, cap / 730)));
        }
        Ok(None)
    }

    /// Releases now what the pool keeps until its paid units end.
    pub async fn force_release(&self, name: &str) -> Result<(), PoolError> {
        self.require(ebb_wire::access::AccessAction::Scale).await?;
        self.pools.force_release(name).await?;
        self.wrote(Some(&[name])).await;
        Ok(())
    }

    pub async fn activity(
        &self,
        pool: Option<&str>,
        limit: u32,
    ) -> Result<Vec<ActivityEntry>, PoolError> {
        if let Some(name) = pool {
            // A name that never was is a mistake worth saying; a deleted pool's log stays.
            if self.pools.get(name).await.is_err()
                && self.pools.activity(Some(name), 1).await?.is_empty()
            {
                return Err(PoolError::NotFound(name.trim().to_string()));
            }
        }
        self.pools.activity(pool, limit).await
    }

    /// Waits until the enforcer, looking after `since_ms`, finds the pool holding exactly
    /// its desired count (or `timeout` passes; the pool as it then stands is returned
    /// either way).
    pub async fn wait_converged(
        &self,
        name: &str,
        since_ms: i64,
        timeout: Duration,
    ) -> Result<PoolView, PoolError> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let view = self.show_pool(name).await?;
            let fresh = view.checked_at_ms.is_some_and(|at| at > since_ms);
            if (view.phase == PoolPhase::Converged && fresh)
                || tokio::time::Instant::now() >= deadline
            {
                return Ok(view);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Regions and models for the pool form, and the confirmation thresholds.
    pub async fn pool_options(&self) -> Result<PoolOptions, PoolError> {
        let mut regions: Vec<RegionOffer> = Vec::new();
        let facts = self.host_facts().await?;
        for host in facts.iter().cloned() {
            let offer = match regions.iter_mut().find(|r| r.region == host.region) {
                Some(offer) => offer,
                None => {
                    regions.push(RegionOffer {
                        region: host.region.clone(),
                        hosts: 0,
                        gpu_models: Vec::new(),
                    });
                    regions.last_mut().expect("just pushed")
                }
            };
            offer.hosts += 1;
            for model in host.models {
                if !offer.gpu_models.contains(&model) {
                    offer.gpu_models.push(model);
                }
            }
            offer.gpu_models.sort();
        }
        regions.sort_by(|a, b| a.region.cmp(&b.region));
        let mut catalog_models: Vec<String> = Vec::new();
        for entry in self.catalog().entries {
            if !catalog_models.contains(&entry.model) {
                catalog_models.push(entry.model);
            }
        }
        let confirm = self.pools.confirm_policy().await?;
        let models = pools::model_offers(&catalog_models, &facts);
        Ok(PoolOptions {
            models,
            regions,
            terms: Term::ALL.to_vec(),
            overlays: OverlayMode::ALL.to_vec(),
            placements: PlacementPolicy::ALL.to_vec(),
            catalog_models,
            confirm_above_gpus: confirm.above_gpus,
            confirm_above_per_hour_fen: confirm.above_per_hour_fen,
        })
    }

    /// Spend across every pool this month, against the monthly budget.
    pub async fn spend_summary(&self) -> Result<SpendSummary, PoolError> {
        let catalog = self.catalog();
        let mut pools = Vec::new();
        for pool in self.pools.list().await? {
            let view = self.pool_view(&pool, &catalog).await?;
            pools.push((pool, view));
        }
        let (month, _, _) = ebb_charts::calendar::utc_month(self.pools.now_ms());
        pools::spend_summary(month, &pools, self.pools.budget().await?)
    }

    /// Sets (`Some`) or clears the monthly budget; it is logged.
    pub async fn set_budget(&self, budget_fen: Option<i64>) -> Result<(), PoolError> {
        self.require(ebb_wire::access::AccessAction::Budget).await?;
        if budget_fen.is_some_and(|fen| fen <= 0) {
            return Err(PoolError::Invalid {
                field: "budget_fen",
                problem: "must be more than zero (clear it to have no budget)".into(),
                words: Some(Box::new(ebb_wire::phrase::Phrase::new(
                    "pool.refuse.budgetZero",
                ))),
            });
        }
        self.pools.set_budget(budget_fen).await?;
        self.wrote(Some(&[])).await;
        Ok(())
    }

    /// Sets when a slider move asks for confirmation first.
    pub async fn set_confirm_policy(&self, policy: pools::ConfirmPolicy) -> Result<(), PoolError> {
        self.require(ebb_wire::access::AccessAction::Budget).await?;
        if policy.above_per_hour_fen < 0 {
            return Err(PoolError::Invalid {
                field: "confirm_above_per_hour_fen",
                problem: "must not be negative".into(),
                words: Some(Box::new(ebb_wire::phrase::Phrase::new(
                    "pool.refuse.negative",
                ))),
            });
        }
        self.pools.set_confirm_policy(policy).await
    }

    /// Who this console acts as, and its role.
    pub fn identity(&self) -> &ebb_wire::access::Identity {
        self.pools.db().identity()
    }

    /// Refused, and the attempt logged, when the operator's role does not allow `action`
    /// (the database would refuse it too: this says so first, in words).
    pub async fn require(
        &self,
        action: ebb_wire::access::AccessAction,
    ) -> Result<(), crate::access::RoleRequired> {
        let identity = self.identity();
        if identity.allows(action) {
            return Ok(());
        }
        let refused = ChangeReason::Refused {
            action,
            needs: action.needs(),
        };
        if let Err(error) = self.pools.log_console(Actor::Operator, &refused).await {
            tracing::warn!(%error, "cannot log a refused attempt");
        }
        Err(crate::access::RoleRequired::new(identity, action))
    }

    /// Every team with its quotas, pools and what they ask for.
    pub async fn teams(&self) -> Result<Vec<ebb_wire::access::TeamView>, PoolError> {
        self.pools.teams().await
    }

    /// Makes a team or sets its spend quota per month (admin).
    pub async fn set_team(
        &self,
        name: &str,
        spend_per_month_fen: Option<i64>,
    ) -> Result<(), PoolError> {
        self.require(ebb_wire::access::AccessAction::Teams).await?;
        self.pools.set_team(name, spend_per_month_fen).await
    }

    /// Sets or clears a team's quota of a GPU model (admin).
    pub async fn set_quota(
        &self,
        team: &str,
        model: &str,
        gpus: Option<u32>,
    ) -> Result<(), PoolError> {
        self.require(ebb_wire::access::AccessAction::Teams).await?;
        self.pools.set_quota(team, model, gpus).await
    }

    /// Moves a pool into a team (admin); refused past the team's quota, naming it.
    pub async fn set_pool_team(&self, pool: &str, team: &str) -> Result<(), PoolError> {
        self.require(ebb_wire::access::AccessAction::Teams).await?;
        self.pools.set_pool_team(pool, team).await?;
        self.wrote(Some(&[pool])).await;
        Ok(())
    }

    /// Whether this process runs the enforcer.
    pub fn enforcing(&self) -> bool {
        self.role() == Role::Collector
    }
}

/// A preview uses the enforcer's last look when it is at most this old. A pass waits for
/// its slowest host (up to the enforcer's 3 s request timeout), so with a host hung the
/// passes come about 4 s apart; asking the agents instead would hold every slider move up
/// for the hung host's timeout.
const PREVIEW_FRESH_MS: i64 = 10_000;
