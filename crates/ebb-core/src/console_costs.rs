//! The console's cost answers for every front: the active price catalog, importing one, and
//! the billing plans compared over a demand (the Costs view's comparison, and `ebb cost plan
//! --json`'s).

use crate::catalog_store::{ActiveCatalog, CatalogStoreError, import_text};
use crate::console::Console;
use ebb_charts::cost_view::PlanChart;
use ebb_cost::{DemandSeries, PlanOptions, PriceEntry};
use ebb_wire::ipc::{CatalogImport, CatalogView, ChartTheme, PlanComparisonView, PlanRequest};
use ebb_wire::phrase::Phrase;

/// Why plans could not be compared.
#[derive(Debug, thiserror::Error)]
pub enum CostError {
    #[error(transparent)]
    Catalog(#[from] CatalogStoreError),
    /// A field of the request (`line`: the demand CSV's line, when it is one): its English
    /// (logs, the CLI) and its words (the UI).
    #[error("{field}: {problem}")]
    Invalid {
        field: &'static str,
        problem: String,
        line: Option<usize>,
        words: Box<Phrase>,
    },
    /// The demand was read but the plans could not be compared (or drawn): the English
    /// and the words.
    #[error("{problem}")]
    Compare { problem: String, words: Box<Phrase> },
    /// The operator's role does not allow it.
    #[error(transparent)]
    RoleRequired(#[from] crate::access::RoleRequired),
}

/// Why a price or a comparison could not be had, in the operator's words (ebb-cost words it
/// in English only).
pub fn cost_words(error: &ebb_cost::CostError) -> Phrase {
    use ebb_cost::CostError as E;
    match error {
        E::NoPrice { model, region, .. } => Phrase::new("reason.price.no_price")
            .text("model", model)
            .text("regions", region),
        E::NotOffered {
            model,
            region,
            field,
        } => Phrase::new("reason.price.not_offered")
            .text("model", model)
            .text("region", region)
            .text("field", *field),
        E::EmptyDemand => Phrase::new("costs.refuse.emptyDemand"),
        E::DemandTooLong { hours } => Phrase::new("costs.refuse.demandTooLong")
            .int("hours", i64::try_from(*hours).unwrap_or(i64::MAX))
            .int(
                "most",
                i64::try_from(ebb_cost::MAX_HOURS).unwrap_or(i64::MAX),
            ),
        E::DemandTooLarge { gpus } => Phrase::new("costs.refuse.demandTooLarge")
            .gpus("gpus", *gpus)
            .gpus("most", ebb_cost::MAX_GPUS),
        E::Overflow => Phrase::new("reason.price.too_large"),
    }
}

/// Every billing plan priced over the ask's demand with `catalog`: the table, the
/// recommendation and, when `chart` says how, a bar chart. The Costs view and `ebb cost
/// plan` both show this.
pub fn compare_plans(
    catalog: &ActiveCatalog,
    request: &PlanRequest,
    chart: Option<PlanChart<'_>>,
) -> Result<PlanComparisonView, CostError> {
    let options = PlanOptions {
        term: request.term.unwrap_or_default(),
        interruptible: request.interruptible,
    };
    let invalid = |field: &'static str, problem: String, line: Option<usize>, words: Phrase| {
        CostError::Invalid {
            field,
            problem,
            line,
            words: Box::new(words),
        }
    };
    let entry = (catalog.catalog)
        .find(&request.model, &request.region)
        .map_err(|error| invalid("model", error.to_string(), None, cost_words(&error)))?;
    let demand = DemandSeries::from_csv(&request.demand_csv).map_err(|error| {
        let words = crate::rules_replay::csv_problem(&error);
        invalid("demand", error.to_string(), Some(error.line), words)
    })?;
    plan_view(catalog, entry, &demand, &options, chart)
}

/// Every billing plan priced over `demand` at `entry`'s prices, as every front shows it (a
/// front that read the demand itself, as `ebb cost plan` does, names its file).
pub fn plan_view(
    catalog: &ActiveCatalog,
    entry: &PriceEntry,
    demand: &DemandSeries,
    options: &PlanOptions,
    chart: Option<PlanChart<'_>>,
) -> Result<PlanComparisonView, CostError> {
    let comparison =
        ebb_cost::compare_plans(entry, demand, options).map_err(|error| CostError::Compare {
            problem: error.to_string(),
            words: Box::new(cost_words(&error)),
        })?;
    ebb_charts::cost_view::comparison_view(entry, &catalog.catalog.currency, &comparison, chart)
        .map_err(|error| CostError::Compare {
            problem: error.to_string(),
            words: Box::new(crate::console_charts::draw_words(&error)),
        })
}

impl Console {
    /// The active price catalog (the demo one until one is imported).
    pub fn catalog_view(&self) -> Result<CatalogView, CostError> {
        let active = ActiveCatalog::load(&self.data_dir, None)?;
        Ok(crate::cost_view::catalog_view(&active))
    }

    /// Validates a catalog (TOML text) and, only if valid, makes it the active one; either
    /// way the catalog in use after, with the problems that refused it.
    pub async fn import_catalog(&self, text: &str) -> Result<CatalogImport, CostError> {
        // Refused as every other change is: named, and logged.
        self.require(ebb_wire::access::AccessAction::Catalog)
            .await?;
        let refused = match import_text(&self.data_dir, text, "the dropped catalog") {
            Ok(_) => None,
            Err(CatalogStoreError::Invalid { invalid, .. }) => Some(invalid),
            Err(other) => return Err(other.into()),
        };
        if refused.is_none() {
            // New prices: every pool's spend and the slider's costs.
            self.wrote(None).await;
        }
        let catalog = self.catalog_view()?;
        let problems = |list: &[_]| list.iter().map(ebb_charts::cost_view::problem).collect();
        Ok(match refused {
            None => CatalogImport {
                accepted: true,
                warnings: catalog.warnings.clone(),
                catalog,
                problems: Vec::new(),
            },
            Some(invalid) => CatalogImport {
                accepted: false,
                catalog,
                problems: problems(&invalid.problems),
                warnings: problems(&invalid.warnings),
            },
        })
    }

    /// [`compare_plans`] with the active catalog.
    pub fn cost_plan(
        &self,
        request: &PlanRequest,
        theme: ChartTheme,
        width_px: u32,
        plan_label: ebb_charts::cost_view::PlanLabel<'_>,
    ) -> Result<PlanComparisonView, CostError> {
        let catalog = ActiveCatalog::load(&self.data_dir, None)?;
        let chart = PlanChart {
            theme,
            width_px,
            plan_label,
        };
        compare_plans(&catalog, request, Some(chart))
    }
}
