//! Suggest's spot mix: with the rules chosen, the pool's spot share and on-demand floor,
//! chosen by replaying those rules with each mix of a small grid on the trace's spot market
//! (its `spot_price` column, else the catalog's spot price; its `interrupted` column, else a
//! seeded [`SpotModel`](crate::replay::spot::SpotModel)).
//!
//! The rule file has no spot section (the mix is the pool's setting, `ebb pool create …
//! --interruptible --on-demand-floor N --spot-pct P`), so the choice is a recommendation
//! beside the rules:
//! [`comment`] words it as TOML comments for the end of the file.
//!
//! The grid: the spot shares [`SPOT_PCTS`], and the floors [`floors`] (0 and a few near the
//! trace's low demand); 0% spot is tried once (a floor changes nothing there), and is the
//! rules all on demand. A mix is admissible within the suggestion's shortfall limit (less
//! [`SAFETY`]) or with no more shortfall than all on demand (so one always is); the
//! cheapest admissible is chosen, and among those within [`COST_TOLERANCE`] of it the one
//! with the least spot, then the highest floor (the saving left is within what the next
//! weeks' market will change; fewer GPUs to lose). Deterministic: a fixed order.

use super::{COST_TOLERANCE, SAFETY, SuggestOptions};
use crate::model::RuleSet;
use crate::replay::baselines::pricing;
use crate::replay::replay_spot;
use crate::replay::spot::SpotReplay;
use crate::replay::trace::{Trace, whole_gpus};
use crate::rules_policy::RulesPolicy;
use ebb_cost::{CostError, PriceEntry};
use ebb_wire::pools::SpotMix;
use ebb_wire::replay::ReplayResult;

/// The spot shares tried, % of the GPUs above the floor.
pub const SPOT_PCTS: [u32; 5] = [0, 25, 50, 75, 100];

/// The percentile of the GPUs the trace needs each minute that is its "low demand".
pub const LOW_PERCENTILE: usize = 10;

/// The on-demand floors tried for `trace`: 0, the fewest GPUs it needs in a minute, its low
/// demand ([`LOW_PERCENTILE`]th percentile of the whole GPUs needed each minute) and half
/// of it; ascending, each once.
pub fn floors(trace: &Trace) -> Vec<u32> {
    let mut needed: Vec<u32> = trace
        .demand()
        .iter()
        .map(|&busy| whole_gpus(busy))
        .collect();
    needed.sort_unstable();
    let min = needed.first().copied().unwrap_or(0);
    let low = needed
        .get(needed.len() * LOW_PERCENTILE / 100)
        .copied()
        .unwrap_or(0);
    let mut out = vec![0, min, low / 2, low];
    out.sort_unstable();
    out.dedup();
    out
}

/// The mix chosen and what it did.
#[derive(Debug, Clone, PartialEq)]
pub struct MixChoice {
    /// The floor and share chosen (the max price is the one searched with).
    pub mix: SpotMix,
    /// The rules with it replayed on the trace (`policy` is "rules+spot").
    pub replay: ReplayResult,
    /// The same rules all on demand (the 0% mix).
    pub on_demand: ReplayResult,
    /// Mixes replayed.
    pub candidates: u32,
    /// Whether it is within the suggestion's shortfall limit on the trace.
    pub within_limit: bool,
}

/// Chooses the mix for `rules` on `trace`: `spot` says the market (notice, breaker, model,
/// max price, base); its floor and share are the grid's.
pub fn choose_mix(
    trace: &Trace,
    entry: &PriceEntry,
    options: &SuggestOptions,
    rules: &RuleSet,
    spot: &SpotReplay,
) -> Result<MixChoice, CostError> {
    let limit_pct = options.max_shortfall_pct.max(0.0) * SAFETY;
    let price = pricing(entry, &options.replay);
    let floors = floors(trace);
    let mut tried: Vec<(SpotMix, ReplayResult)> = Vec::new();
    for pct in SPOT_PCTS {
        let floors_here = if pct == 0 { &floors[..1] } else { &floors[..] };
        for &floor in floors_here {
            let mix = SpotMix {
                on_demand_floor: floor,
                spot_pct: pct,
                max_price_fen: spot.mix.max_price_fen,
            };
            let mut policy = RulesPolicy::new("rules", rules.clone(), Some(price.clone()));
            let run = SpotReplay { mix, ..*spot };
            let mut result = replay_spot(trace, &mut policy, entry, &options.replay, &run)?.result;
            if pct > 0 {
                result.policy = "rules+spot".to_string();
            }
            tried.push((mix, result));
        }
    }
    let on_demand = tried[0].1.clone();
    let admissible = |result: &ReplayResult| {
        result.shortfall_pct <= limit_pct || result.shortfall_pct <= on_demand.shortfall_pct
    };
    let cheapest = tried
        .iter()
        .filter(|(_, result)| admissible(result))
        .map(|(_, result)| result.cost_fen)
        .min()
        .unwrap_or(on_demand.cost_fen);
    let bound = (cheapest as f64 * (1.0 + COST_TOLERANCE)).floor() as i64;
    let (mix, replay) = tried
        .iter()
        .filter(|(_, result)| admissible(result) && result.cost_fen <= bound)
        .min_by_key(|(mix, result)| {
            (
                mix.spot_pct,
                std::cmp::Reverse(mix.on_demand_floor),
                result.cost_fen,
            )
        })
        .cloned()
        .unwrap_or_else(|| tried[0].clone());
    Ok(MixChoice {
        mix,
        within_limit: replay.shortfall_pct <= options.max_shortfall_pct,
        replay,
        on_demand,
        candidates: tried.len() as u32,
    })
}

/// The choice as TOML comments for the end of the rule file: the pool's settings to use,
/// and what they did beside all on demand.
pub fn comment(choice: &MixChoice) -> String {
    let (mix, result, on_demand) = (&choice.mix, &choice.replay, &choice.on_demand);
    let mut out = String::from("\n# Spot (the pool's settings, not the rules'):\n");
    if mix.spot_pct == 0 {
        out.push_str(
            "#   keep every GPU on demand (`--spot-pct 0`): no spot mix tried was cheaper within\n",
        );
        out.push_str(&format!(
            "#   the shortfall limit on this trace ({} mixes replayed with these rules).\n",
            choice.candidates
        ));
        return out;
    }
    let saving = if on_demand.cost_fen > 0 {
        100.0 * (on_demand.cost_fen - result.cost_fen) as f64 / on_demand.cost_fen as f64
    } else {
        0.0
    };
    out.push_str(&format!(
        "#   ebb pool create … --interruptible --on-demand-floor {} --spot-pct {}\n",
        mix.on_demand_floor, mix.spot_pct
    ));
    out.push_str(&format!(
        "#   Replayed with these rules: {} ({saving:.1}% less than {} all on demand), of which spot\n",
        ebb_cost::Money::from_fen(result.cost_fen),
        ebb_cost::Money::from_fen(on_demand.cost_fen),
    ));
    out.push_str(&format!(
        "#   {} for {} GPU-hours; {} interruptions, shortfall {:.2}% ({:.2}% all on demand);\n",
        ebb_cost::Money::from_fen(result.spot_cost_fen),
        result.spot_gpu_hours,
        result.interruptions,
        result.shortfall_pct,
        on_demand.shortfall_pct,
    ));
    out.push_str(&format!(
        "#   the cheapest of {} mixes (spot 0-100%, floors near the trace's low demand).\n",
        choice.candidates
    ));
    out
}
