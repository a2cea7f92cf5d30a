//! Validation: a pool as the operator wrote it, checked against the hosts and the price
//! catalog; every refusal names the field.

use super::*;
use ebb_wire::phrase::{Arg, Phrase};

/// A host as validation sees it: where it is and the GPU models it reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostFacts {
    pub name: String,
    pub region: String,
    /// Empty when not polled yet.
    pub models: Vec<String>,
}

/// The models a pool can ask for: each catalog model with the hosts whose reported names it
/// matches (`A100` for `NVIDIA A100-SXM4-80GB`, by [`placement::model_matches`]; where
/// several match, the longest catalog name, the most specific), then reported names no
/// catalog model matches (unpriced, so a pool cannot use them yet). Models some host has
/// come first, then by name.
pub fn model_offers(catalog_models: &[String], hosts: &[HostFacts]) -> Vec<ModelOffer> {
    let mut offers: Vec<ModelOffer> = catalog_models
        .iter()
        .map(|model| ModelOffer {
            model: model.clone(),
            priced: true,
            reported: Vec::new(),
            hosts: 0,
            regions: Vec::new(),
        })
        .collect();
    for host in hosts {
        let mut counted: Vec<usize> = Vec::new();
        for reported in &host.models {
            let best = placement::catalog_match(reported, catalog_models);
            let i = match best {
                Some(i) => i,
                None => match offers
                    .iter()
                    .position(|o| !o.priced && o.model == *reported)
                {
                    Some(i) => i,
                    None => {
                        offers.push(ModelOffer {
                            model: reported.clone(),
                            priced: false,
                            reported: Vec::new(),
                            hosts: 0,
                            regions: Vec::new(),
                        });
                        offers.len() - 1
                    }
                },
            };
            let offer = &mut offers[i];
            if !offer.reported.contains(reported) {
                offer.reported.push(reported.clone());
                offer.reported.sort();
            }
            if !counted.contains(&i) {
                counted.push(i);
                offer.hosts += 1;
                if !offer.regions.contains(&host.region) {
                    offer.regions.push(host.region.clone());
                    offer.regions.sort();
                }
            }
        }
    }
    offers.sort_by(|a, b| {
        (a.hosts == 0, !a.priced, &a.model).cmp(&(b.hosts == 0, !b.priced, &b.model))
    });
    offers.dedup_by(|a, b| a.model == b.model && a.priced == b.priced);
    offers
}

/// A pool input that passed validation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Valid(pub(super) Pool);

/// What is wrong with a pool as written, and the field it is about: the one set of checks,
/// which refuses a save ([`validate`], in English: `Display`) and answers the pool form
/// before it saves ([`super::form::check_form`], in the operator's words: [`Self::phrase`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PoolProblem {
    #[error("must be 1 to 63 characters")]
    NameLength { empty: bool },
    #[error("`{name}` may only hold letters, digits, `-`, `_` and `.`")]
    NamePattern { name: String },
    #[error("is required, e.g. A100")]
    ModelRequired,
    #[error("unknown GPU model `{model}`: the price catalog has {}", known.join(", "))]
    UnknownModel { model: String, known: Vec<String> },
    #[error("no registered host reports a {model}: name the regions to rent in")]
    NoHostReports { model: String },
    #[error("no registered host is in `{region}` (hosts are in: {})", if known.is_empty() { "none yet".to_string() } else { known.join(", ") })]
    NoHostIn { region: String, known: Vec<String> },
    #[error("no host in `{region}` offers {model} (they have: {})", have.join(", "))]
    RegionLacksModel {
        region: String,
        model: String,
        have: Vec<String>,
    },
    #[error("name at least one region")]
    RegionsRequired,
    #[error("the price catalog has no price for {model} in {}: import one that does", regions.join(", "))]
    NoPrice { model: String, regions: Vec<String> },
    #[error("{max} is more than the {MAX_POOL_GPUS} GPUs a pool may hold")]
    MaxTooLarge { max: u32 },
    #[error("{min} is more than max ({max})")]
    MinAboveMax { min: u32, max: u32 },
    #[error("{base} subscribed is more than max ({max}): the pool could never use them")]
    BaseAboveMax { base: u32, max: u32 },
    /// The overlay (`field` "overlay") or a spot share (`spot_pct`) on a pool that is not
    /// interruptible.
    #[error("spot GPUs can be interrupted: mark the pool interruptible to use them")]
    SpotNeedsInterruptible { field: &'static str },
    /// The catalog has no price for the term's or the overlay's unit (`field`) there.
    #[error("{detail}")]
    NotOffered {
        field: &'static str,
        model: String,
        region: String,
        unit: String,
        detail: String,
    },
    #[error("{pct} is more than 100 (percent)")]
    SpotPctOver { pct: u32 },
    #[error("{floor} is more than max ({max}): the pool could never hold them")]
    FloorAboveMax { floor: u32, max: u32 },
    #[error("{fen} fen: a max price must be more than 0")]
    MaxPriceZero { fen: i64 },
    #[error("the catalog has no spot price for {model} in {}: nothing could go on spot", regions.join(", "))]
    NoSpotPrice { model: String, regions: Vec<String> },
    #[error("{} an hour is under every spot offer in {} (the cheapest is {}): nothing would go on spot", ebb_cost::Money::from_fen(*max_fen), regions.join(", "), ebb_cost::Money::from_fen(*cheapest_fen))]
    UnderSpotOffers {
        max_fen: i64,
        cheapest_fen: i64,
        regions: Vec<String>,
    },
    /// The form's: a count that is not a whole number.
    #[error("must be a whole number (0 or more)")]
    NotWhole { field: &'static str },
    /// The form's: a share that is not a whole percentage.
    #[error("must be a whole percentage from 0 to 100")]
    NotPercent,
    /// The form's: a max price that is not a yuan amount above 0.
    #[error("must be a price in yuan above 0, or nothing for any price")]
    NotPrice,
    /// The form's: a term, overlay or placement that is none of the choices.
    #[error("`{value}` is not one of the choices")]
    NotAChoice { field: &'static str, value: String },
}

impl PoolProblem {
    /// The field it is about, as the form, the CLI and `PoolInput` name it.
    pub fn field(&self) -> &'static str {
        use PoolProblem as P;
        match self {
            P::NameLength { .. } | P::NamePattern { .. } => "name",
            P::ModelRequired | P::UnknownModel { .. } | P::NoPrice { .. } => "model",
            P::NoHostReports { .. }
            | P::NoHostIn { .. }
            | P::RegionLacksModel { .. }
            | P::RegionsRequired => "regions",
            P::MaxTooLarge { .. } => "max",
            P::MinAboveMax { .. } => "min",
            P::BaseAboveMax { .. } => "base_gpus",
            P::SpotNeedsInterruptible { field }
            | P::NotOffered { field, .. }
            | P::NotWhole { field }
            | P::NotAChoice { field, .. } => field,
            P::SpotPctOver { .. } | P::NoSpotPrice { .. } | P::NotPercent => "spot_pct",
            P::FloorAboveMax { .. } => "on_demand_floor",
            P::MaxPriceZero { .. } | P::UnderSpotOffers { .. } | P::NotPrice => "max_price_fen",
        }
    }

    /// The problem in the operator's words (the catalog's `pool.check.*`).
    pub fn phrase(&self) -> Phrase {
        use PoolProblem as P;
        let list = |items: &[String]| Arg::Text(items.join(", "));
        match self {
            P::NameLength { empty: true } => Phrase::new("pool.check.nameRequired"),
            P::NameLength { empty: false } => Phrase::new("pool.check.nameLength").int("max", 63),
            P::NamePattern { .. } => Phrase::new("pool.check.namePattern"),
            P::ModelRequired => Phrase::new("pool.check.modelRequired"),
            P::UnknownModel { model, known } => Phrase::new("pool.check.unknownModel")
                .text("model", model)
                .arg("known", list(known)),
            P::NoHostReports { model } => {
                Phrase::new("pool.check.noHostReports").text("model", model)
            }
            P::NoHostIn { region, known } if known.is_empty() => {
                Phrase::new("pool.check.noHostYet").text("region", region)
            }
            P::NoHostIn { region, known } => Phrase::new("pool.check.noHostIn")
                .text("region", region)
                .arg("known", list(known)),
            P::RegionLacksModel {
                region,
                model,
                have,
            } => Phrase::new("pool.check.regionLacksModel")
                .text("region", region)
                .text("model", model)
                .arg("have", list(have)),
            P::RegionsRequired => Phrase::new("pool.check.regionsRequired"),
            P::NoPrice { model, regions } => Phrase::new("reason.price.no_price")
                .text("model", model)
                .arg("regions", list(regions)),
            P::MaxTooLarge { max } => Phrase::new("pool.check.maxTooLarge")
                .int("max", *max)
                .int("most", MAX_POOL_GPUS),
            P::MinAboveMax { min, max } => Phrase::new("pool.check.minAboveMax")
                .int("min", *min)
                .int("max", *max),
            P::BaseAboveMax { base, max } => Phrase::new("pool.check.baseAboveMax")
                .int("base", *base)
                .int("max", *max),
            P::SpotNeedsInterruptible { .. } => Phrase::new("pool.check.spotNeedsInterruptible"),
            P::NotOffered {
                model,
                region,
                unit,
                ..
            } => Phrase::new("reason.price.not_offered")
                .text("model", model)
                .text("region", region)
                .text("field", unit),
            P::SpotPctOver { .. } | P::NotPercent => Phrase::new("pool.check.spotPct"),
            P::FloorAboveMax { floor, max } => Phrase::new("pool.check.floorAboveMax")
                .int("floor", *floor)
                .int("max", *max),
            P::MaxPriceZero { .. } | P::NotPrice => Phrase::new("pool.check.maxPrice"),
            P::NoSpotPrice { model, regions } => Phrase::new("pool.check.noSpotPrice")
                .text("model", model)
                .arg("regions", list(regions)),
            P::UnderSpotOffers {
                max_fen,
                cheapest_fen,
                regions,
            } => Phrase::new("pool.check.underSpotOffers")
                .money("max", *max_fen)
                .money("cheapest", *cheapest_fen)
                .arg("regions", list(regions)),
            P::NotWhole { .. } => Phrase::new("pool.check.whole"),
            P::NotAChoice { .. } => Phrase::new("pool.check.choose"),
        }
    }
}

impl From<PoolProblem> for PoolError {
    /// Refused as the form words it: the English for logs and the CLI, the phrase for the UI.
    fn from(problem: PoolProblem) -> PoolError {
        PoolError::Invalid {
            field: problem.field(),
            problem: problem.to_string(),
            words: Some(Box::new(problem.phrase())),
        }
    }
}

/// Checks a pool as the operator wrote it against the hosts and the price catalog. Every
/// refusal names the field.
pub fn validate(
    input: &PoolInput,
    hosts: &[HostFacts],
    catalog: &Catalog,
) -> Result<Valid, PoolError> {
    check(input, hosts, catalog).map_err(PoolError::from)
}

/// [`validate`]'s checks, the first problem as it is.
pub fn check(
    input: &PoolInput,
    hosts: &[HostFacts],
    catalog: &Catalog,
) -> Result<Valid, PoolProblem> {
    let name = input.name.trim();
    if name.is_empty() || name.chars().count() > 63 {
        return Err(PoolProblem::NameLength {
            empty: name.is_empty(),
        });
    }
    if !name
        .chars()
        .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(PoolProblem::NamePattern {
            name: name.to_string(),
        });
    }
    let model = input.model.trim();
    if model.is_empty() {
        return Err(PoolProblem::ModelRequired);
    }
    if !catalog.entries.iter().any(|entry| {
        placement::model_matches(model, &entry.model)
            || placement::model_matches(&entry.model, model)
    }) {
        let mut known: Vec<String> = catalog.entries.iter().map(|e| e.model.clone()).collect();
        known.dedup();
        return Err(PoolProblem::UnknownModel {
            model: model.to_string(),
            known,
        });
    }
    let regions = check_regions(input, model, hosts)?;
    if !regions
        .iter()
        .any(|region| catalog.find(model, region).is_ok())
    {
        return Err(PoolProblem::NoPrice {
            model: model.to_string(),
            regions,
        });
    }
    if input.max > MAX_POOL_GPUS {
        return Err(PoolProblem::MaxTooLarge { max: input.max });
    }
    if input.min > input.max {
        return Err(PoolProblem::MinAboveMax {
            min: input.min,
            max: input.max,
        });
    }
    if input.base_gpus > input.max {
        return Err(PoolProblem::BaseAboveMax {
            base: input.base_gpus,
            max: input.max,
        });
    }
    let (term, overlay) = (input.term, input.overlay);
    if overlay == OverlayMode::Spot && !input.interruptible {
        return Err(PoolProblem::SpotNeedsInterruptible { field: "overlay" });
    }
    let spot = check_spot(input, model, &regions, catalog)?;
    for region in &regions {
        if let Ok(entry) = catalog.find(model, region) {
            let offered = |field: &'static str, unit: &str, error: ebb_cost::CostError| {
                PoolProblem::NotOffered {
                    field,
                    model: model.to_string(),
                    region: region.clone(),
                    unit: unit.to_string(),
                    detail: error.to_string(),
                }
            };
            overlay
                .price(entry)
                .map_err(|error| offered("overlay", overlay.field(), error))?;
            if input.base_gpus > 0 {
                term.price(entry)
                    .map_err(|error| offered("term", term.field(), error))?;
            }
        }
    }
    Ok(Valid(Pool {
        id: String::new(),
        name: name.to_string(),
        model: model.to_string(),
        regions,
        min: input.min,
        max: input.max,
        desired: input.min,
        base_gpus: input.base_gpus,
        term,
        overlay,
        placement: input.placement,
        interruptible: input.interruptible,
        release_at_unit_end: input.release_at_unit_end,
        spot,
        force_release: false,
        release_first: Vec::new(),
        created_at_ms: 0,
    }))
}

/// The regions a pool rents in: those named (trimmed, once each), each with a registered
/// host that offers the model (when its hosts have reported); none named: every region
/// where a host reported the model.
fn check_regions(
    input: &PoolInput,
    model: &str,
    hosts: &[HostFacts],
) -> Result<Vec<String>, PoolProblem> {
    let named: Vec<String> = if input.regions.iter().all(|r| r.trim().is_empty()) {
        let mut found: Vec<String> = hosts
            .iter()
            .filter(|h| h.models.iter().any(|m| placement::model_matches(model, m)))
            .map(|h| h.region.clone())
            .collect();
        found.sort();
        found.dedup();
        if found.is_empty() {
            return Err(PoolProblem::NoHostReports {
                model: model.to_string(),
            });
        }
        found
    } else {
        input.regions.clone()
    };
    let mut regions: Vec<String> = Vec::new();
    for region in &named {
        let region = region.trim();
        if region.is_empty() || regions.iter().any(|r| r == region) {
            continue;
        }
        let here: Vec<&HostFacts> = hosts.iter().filter(|h| h.region == region).collect();
        if here.is_empty() {
            let mut known: Vec<String> = hosts.iter().map(|h| h.region.clone()).collect();
            known.sort_unstable();
            known.dedup();
            return Err(PoolProblem::NoHostIn {
                region: region.to_string(),
                known,
            });
        }
        let polled: Vec<&&HostFacts> = here.iter().filter(|h| !h.models.is_empty()).collect();
        if !polled.is_empty()
            && !polled
                .iter()
                .any(|h| h.models.iter().any(|m| placement::model_matches(model, m)))
        {
            let mut have: Vec<String> = polled
                .iter()
                .flat_map(|h| h.models.iter().cloned())
                .collect();
            have.sort_unstable();
            have.dedup();
            return Err(PoolProblem::RegionLacksModel {
                region: region.to_string(),
                model: model.to_string(),
                have,
            });
        }
        regions.push(region.to_string());
    }
    if regions.is_empty() {
        return Err(PoolProblem::RegionsRequired);
    }
    Ok(regions)
}

/// The pool's spot mix, checked: a share of at most 100, only on an interruptible pool, a
/// floor within max, a max price above 0 that some spot offer in the pool's regions meets.
fn check_spot(
    input: &PoolInput,
    model: &str,
    regions: &[String],
    catalog: &Catalog,
) -> Result<SpotMix, PoolProblem> {
    let mix = input.spot;
    if mix.spot_pct > ebb_reconcile::spot::MAX_SPOT_PCT {
        return Err(PoolProblem::SpotPctOver { pct: mix.spot_pct });
    }
    if mix.spot_pct > 0 && !input.interruptible {
        return Err(PoolProblem::SpotNeedsInterruptible { field: "spot_pct" });
    }
    if mix.on_demand_floor > input.max {
        return Err(PoolProblem::FloorAboveMax {
            floor: mix.on_demand_floor,
            max: input.max,
        });
    }
    if let Some(max) = mix.max_price_fen
        && max <= 0
    {
        return Err(PoolProblem::MaxPriceZero { fen: max });
    }
    let takes_spot = mix.spot_pct > 0 || input.overlay == OverlayMode::Spot;
    if takes_spot {
        let offers: Vec<ebb_cost::Money> = regions
            .iter()
            .filter_map(|region| catalog.find(model, region).ok()?.spot_hour)
            .collect();
        let Some(cheapest) = offers.iter().min() else {
            return Err(PoolProblem::NoSpotPrice {
                model: model.to_string(),
                regions: regions.to_vec(),
            });
        };
        if let Some(max) = mix.max_price_fen
            && max < cheapest.fen()
        {
            return Err(PoolProblem::UnderSpotOffers {
                max_fen: max,
                cheapest_fen: cheapest.fen(),
                regions: regions.to_vec(),
            });
        }
    }
    Ok(mix)
}
