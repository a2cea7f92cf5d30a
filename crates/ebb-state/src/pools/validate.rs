//! Validation: a pool as the operator wrote it, checked against the hosts and the price
//! catalog; every refusal names the field.

use super::*;

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

/// Checks a pool as the operator wrote it against the hosts and the price catalog. Every
/// refusal names the field.
#[allow(
    clippy::too_many_lines,
    reason = "one check per pool field, each naming its field"
)]
pub fn validate(
    input: &PoolInput,
    hosts: &[HostFacts],
    catalog: &Catalog,
) -> Result<Valid, PoolError> {
    let name = input.name.trim();
    if name.is_empty() || name.chars().count() > 63 {
        return Err(invalid("name", "must be 1 to 63 characters"));
    }
    if !name
        .chars()
        .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(invalid(
            "name",
            format!("`{name}` may only hold letters, digits, `-`, `_` and `.`"),
        ));
    }
    let model = input.model.trim();
    if model.is_empty() {
        return Err(invalid("model", "is required, e.g. A100"));
    }
    if !catalog.entries.iter().any(|entry| {
        placement::model_matches(model, &entry.model)
            || placement::model_matches(&entry.model, model)
    }) {
        let mut known: Vec<&str> = catalog.entries.iter().map(|e| e.model.as_str()).collect();
        known.dedup();
        return Err(invalid(
            "model",
            format!(
                "unknown GPU model `{model}`: the price catalog has {}",
                known.join(", ")
            ),
        ));
    }
    // No region named: every region where a host reported the model.
    let named: Vec<String> = if input.regions.iter().all(|r| r.trim().is_empty()) {
        let mut found: Vec<String> = hosts
            .iter()
            .filter(|h| h.models.iter().any(|m| placement::model_matches(model, m)))
            .map(|h| h.region.clone())
            .collect();
        found.sort();
        found.dedup();
        if found.is_empty() {
            return Err(invalid(
                "regions",
                format!("no registered host reports a {model}: name the regions to rent in"),
            ));
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
            let mut known: Vec<&str> = hosts.iter().map(|h| h.region.as_str()).collect();
            known.sort_unstable();
            known.dedup();
            return Err(invalid(
                "regions",
                format!(
                    "no registered host is in `{region}` (hosts are in: {})",
                    if known.is_empty() {
                        "none yet".into()
                    } else {
                        known.join(", ")
                    }
                ),
            ));
        }
        let polled: Vec<&&HostFacts> = here.iter().filter(|h| !h.models.is_empty()).collect();
        if !polled.is_empty()
            && !polled
                .iter()
                .any(|h| h.models.iter().any(|m| placement::model_matches(model, m)))
        {
            let mut have: Vec<&str> = polled
                .iter()
                .flat_map(|h| h.models.iter().map(String::as_str))
                .collect();
            have.sort_unstable();
            have.dedup();
            return Err(invalid(
                "regions",
                format!(
                    "no host in `{region}` offers {model} (they have: {})",
                    have.join(", ")
                ),
            ));
        }
        regions.push(region.to_string());
    }
    if regions.is_empty() {
        return Err(invalid("regions", "name at least one region"));
    }
    if !regions
        .iter()
        .any(|region| catalog.find(model, region).is_ok())
    {
        return Err(invalid(
            "model",
            format!(
                "the price catalog has no price for {model} in {}: import one that does",
                regions.join(", ")
            ),
        ));
    }
    if input.max > MAX_POOL_GPUS {
        return Err(invalid(
            "max",
            format!(
                "{} is more than the {MAX_POOL_GPUS} GPUs a pool may hold",
                input.max
            ),
        ));
    }
    if input.min > input.max {
        return Err(invalid(
            "min",
            format!("{} is more than max ({})", input.min, input.max),
        ));
    }
    if input.base_gpus > input.max {
        return Err(invalid(
            "base_gpus",
            format!(
                "{} subscribed is more than max ({}): the pool could never use them",
                input.base_gpus, input.max
            ),
        ));
    }
    let (term, overlay) = (input.term, input.overlay);
    if overlay == OverlayMode::Spot && !input.interruptible {
        return Err(invalid(
            "overlay",
            "spot GPUs can be interrupted: mark the pool interruptible to use them",
        ));
    }
    let spot = check_spot(input, model, &regions, catalog)?;
    for region in &regions {
        if let Ok(entry) = catalog.find(model, region) {
            overlay
                .price(entry)
                .map_err(|error| invalid("overlay", error.to_string()))?;
            if input.base_gpus > 0 {
                term.price(entry)
                    .map_err(|error| invalid("term", error.to_string()))?;
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

/// The pool's spot mix, checked: a share of at most 100, only on an interruptible pool, a
/// floor within max, a max price above 0 that some spot offer in the pool's regions meets.
fn check_spot(
    input: &PoolInput,
    model: &str,
    regions: &[String],
    catalog: &Catalog,
) -> Result<SpotMix, PoolError> {
    let mix = input.spot;
    if mix.spot_pct > ebb_reconcile::spot::MAX_SPOT_PCT {
        return Err(invalid(
            "spot_pct",
            format!("{} is more than 100 (percent)", mix.spot_pct),
        ));
    }
    if mix.spot_pct > 0 && !input.interruptible {
        return Err(invalid(
            "spot_pct",
            "spot GPUs can be interrupted: mark the pool interruptible to use them",
        ));
    }
    if mix.on_demand_floor > input.max {
        return Err(invalid(
            "on_demand_floor",
            format!(
                "{} is more than max ({}): the pool could never hold them",
                mix.on_demand_floor, input.max
            ),
        ));
    }
    if let Some(max) = mix.max_price_fen
        && max <= 0
    {
        return Err(invalid(
            "max_price_fen",
            format!("{max} fen: a max price must be more than 0"),
        ));
    }
    let takes_spot = mix.spot_pct > 0 || input.overlay == OverlayMode::Spot;
    if takes_spot {
        let offers: Vec<ebb_cost::Money> = regions
            .iter()
            .filter_map(|region| catalog.find(model, region).ok()?.spot_hour)
            .collect();
        let Some(cheapest) = offers.iter().min() else {
            return Err(invalid(
                "spot_pct",
                format!(
                    "the catalog has no spot price for {model} in {}: nothing could go on spot",
                    regions.join(", ")
                ),
            ));
        };
        if let Some(max) = mix.max_price_fen
            && max < cheapest.fen()
        {
            return Err(invalid(
                "max_price_fen",
                format!(
                    "{} an hour is under every spot offer in {} (the cheapest is {cheapest}): nothing would go on spot",
                    ebb_cost::Money::from_fen(max),
                    regions.join(", ")
                ),
            ));
        }
    }
    Ok(mix)
}
