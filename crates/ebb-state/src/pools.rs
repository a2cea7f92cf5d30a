//! Pools in `console.db`: validation (naming the field), the store (pools, lease intents,
//! the lease history, failover fences, what the enforcer last saw, the activity log), and
//! the views built from them (a pool with its spend, the slider's preview).

use crate::clock::now_ms;
use crate::db::ConsoleDb;
use ebb_charts::calendar::utc_month;
use ebb_cost::{Catalog, LeaseSpan, OverlayMode, PoolPlan, Priced, Term};
use ebb_reconcile::placement;
use ebb_reconcile::reconcile::{KnownLease, Pending, PoolStatus};
use ebb_wire::agent::Lease;
use ebb_wire::pools::{
    ActivityEntry, Actor, BudgetState, GpuSplit, HostMove, HostResult, ModelOffer, Outcome,
    PlacementPolicy, PoolInput, PoolLeaseState, PoolLeaseView, PoolPhase, PoolSpend, PoolView,
    ScalePreview, SpendSummary, SpendView, SpotMix,
};
use ebb_wire::reasons::{ChangeReason, ConfirmationReason, PoolNote};
use serde::{Deserialize, Serialize};
use sqlx::{AssertSqlSafe, Row};
use std::collections::{BTreeMap, HashMap};

/// The most GPUs one pool may hold.
pub const MAX_POOL_GPUS: u32 = 10_000;
/// A pool whose enforcer has not looked for this long is not enforced.
pub const ENFORCER_STALE_MS: i64 = 10_000;

#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    #[error("{field}: {problem}")]
    Invalid {
        field: &'static str,
        problem: String,
        /// The problem in the operator's words, where a problem enum words it.
        words: Option<Box<ebb_wire::phrase::Phrase>>,
    },
    #[error("no pool named `{0}`")]
    NotFound(String),
    #[error("name: a pool named `{0}` already exists")]
    Exists(String),
    /// A compare-and-set lost: the pool's desired count is no longer the one the change
    /// was made from. Nothing was written; look again and decide on what is there now.
    #[error(
        "from: pool `{pool}` is at {actual} GPUs now, not the {expected} this change was made from (another change came first); look again"
    )]
    Moved {
        pool: String,
        expected: u32,
        actual: u32,
    },
    /// The operator's role does not allow it.
    #[error(transparent)]
    RoleRequired(#[from] crate::access::RoleRequired),
    #[error("cannot read or write the pools in console.db: {0}")]
    Db(#[from] sqlx::Error),
    #[error("cannot read the host registry: {0}")]
    Registry(Box<crate::registry::RegistryError>),
    /// Slurm did not answer or refused a node change (a Slurm-bound pool).
    #[error("Slurm: {0}")]
    Slurm(#[from] ebb_slurm::error::SlurmError),
}

/// A refusal of `field` in the operator's words; its English (logs, the CLI) is the same
/// phrase in the English catalog, so the sentence is written once.
pub fn refused(field: &'static str, words: ebb_wire::phrase::Phrase) -> PoolError {
    PoolError::Invalid {
        field,
        problem: ebb_wire::catalog::Words::of(ebb_wire::ipc::UiLanguage::English).render(&words),
        words: Some(Box::new(words)),
    }
}

/// A pool as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pool {
    pub id: String,
    pub name: String,
    pub model: String,
    pub regions: Vec<String>,
    pub min: u32,
    pub max: u32,
    pub desired: u32,
    pub base_gpus: u32,
    pub term: Term,
    pub overlay: OverlayMode,
    pub placement: PlacementPolicy,
    pub interruptible: bool,
    pub release_at_unit_end: bool,
    /// How the GPUs above the base split between on demand and spot.
    pub spot: SpotMix,
    /// The operator forced the current scale-in past the paid units.
    pub force_release: bool,
    /// Leases the operator chose to give back first on the current scale-in.
    pub release_first: Vec<String>,
    /// When it was made: its subscribed base is paid from then.
    pub created_at_ms: i64,
}

impl Pool {
    pub fn plan(&self) -> PoolPlan {
        PoolPlan {
            base_gpus: self.base_gpus,
            term: self.term,
            overlay: self.on_demand_overlay(),
        }
    }

    /// Refuses a GPU count outside `[min, max]`, naming `field`.
    pub fn check_count(&self, field: &'static str, count: u32) -> Result<(), PoolError> {
        if count < self.min || count > self.max {
            return Err(refused(
                field,
                ebb_wire::phrase::Phrase::new("pool.refuse.outsideRange")
                    .int("count", count)
                    .int("min", self.min)
                    .int("max", self.max),
            ));
        }
        Ok(())
    }

    /// The mix as the planner reads it: a spot overlay is every GPU above the base and the
    /// floor on spot (on demand at the hour's price when spot cannot be had).
    pub fn mix(&self) -> SpotMix {
        let mut mix = self.spot;
        if self.overlay == OverlayMode::Spot {
            mix.spot_pct = ebb_reconcile::spot::MAX_SPOT_PCT;
        }
        if !self.interruptible {
            mix.spot_pct = 0;
        }
        mix
    }

    /// How GPUs above the base are paid when on demand: the overlay, or the hour for a
    /// spot overlay.
    pub fn on_demand_overlay(&self) -> OverlayMode {
        if self.overlay == OverlayMode::Spot {
            OverlayMode::Hour
        } else {
            self.overlay
        }
    }

    /// `desired` split by the mix; `spot_allowed` false while spot cannot be had anywhere
    /// the pool may go.
    pub fn split(&self, desired: u32, spot_allowed: bool) -> GpuSplit {
        ebb_reconcile::spot::split(desired, self.base_gpus, &self.mix(), spot_allowed)
    }

    /// The spot price per GPU-hour by region where the pool may take spot: offered, and
    /// within its max price. Empty for a pool that takes no spot.
    pub fn spot_prices(&self, catalog: &Catalog) -> BTreeMap<String, i64> {
        let mix = self.mix();
        if mix.spot_pct == 0 {
            return BTreeMap::new();
        }
        self.regions
            .iter()
            .filter_map(|region| {
                let price = catalog.find(&self.model, region).ok()?.spot_hour?.fen();
                ebb_reconcile::spot::within_max(&mix, Some(price)).then(|| (region.clone(), price))
            })
            .collect()
    }

    /// The overlay's paid unit in ms.
    pub fn unit_ms(&self) -> i64 {
        i64::from(self.on_demand_overlay().unit_hours()) * 3_600_000
    }

    /// The on-demand price per GPU-hour by region, where the catalog has one (a day or
    /// week: spread over its hours; a spot overlay's on demand is the hour).
    pub fn hourly_prices(&self, catalog: &Catalog) -> BTreeMap<String, i64> {
        let overlay = self.on_demand_overlay();
        self.regions
            .iter()
            .filter_map(|region| {
                let entry = catalog.find(&self.model, region).ok()?;
                let price = overlay.price(entry).ok()?;
                Some((
                    region.clone(),
                    price.fen() / i64::from(overlay.unit_hours()),
                ))
            })
            .collect()
    }
}

/// When to ask before letting a change go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfirmPolicy {
    /// Changes of more GPUs than this ask first.
    pub above_gpus: u32,
    /// Changes moving the cost per hour by more than this (fen) ask first.
    pub above_per_hour_fen: i64,
}

impl Default for ConfirmPolicy {
    fn default() -> Self {
        Self {
            above_gpus: 16,
            above_per_hour_fen: 50_000,
        }
    }
}

pub mod form;
pub mod rules;
mod store;
pub mod teams;
mod validate;
mod view;

pub(crate) use crate::db::insert_console_activity;
pub use store::{NewActivity, PoolStore, Recorded, random_hex};
pub use validate::{HostFacts, PoolProblem, Valid, check, model_offers, validate};
pub use view::{
    RegionSpan, check_release_choice, csv_amount, csv_field, month_spend, pool_view, priced_pool,
    scale_preview, spend_csv, spend_summary, spot_paused,
};

#[cfg(test)]
mod tests;
