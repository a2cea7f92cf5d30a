//! The Costs view's catalog: the active price catalog as its IPC DTO. The comparison and
//! its chart are `ebb_charts::cost_view`.

use crate::catalog_store::{ActiveCatalog, CatalogSource};
use ebb_charts::cost_view::problem;
use ebb_cost::Money;
use ebb_wire::ipc::{CatalogOrigin, CatalogRow, CatalogView};

pub fn catalog_view(active: &ActiveCatalog) -> CatalogView {
    let fen = |money: Option<Money>| money.map(Money::fen);
    CatalogView {
        source: match active.source {
            CatalogSource::Demo => CatalogOrigin::Demo,
            CatalogSource::DataDir { .. } | CatalogSource::File { .. } => CatalogOrigin::Imported,
        },
        name: active.catalog.name.clone(),
        currency: active.catalog.currency.clone(),
        rows: active
            .catalog
            .entries
            .iter()
            .map(|entry| CatalogRow {
                model: entry.model.clone(),
                region: entry.region.clone(),
                hour_fen: entry.hour.fen(),
                day_fen: fen(entry.day),
                week_fen: fen(entry.week),
                month_fen: entry.month.fen(),
                year_fen: fen(entry.year),
                spot_hour_fen: fen(entry.spot_hour),
                reserved_hour_fen: fen(entry.reserved_hour),
            })
            .collect(),
        warnings: active.warnings.iter().map(problem).collect(),
    }
}
