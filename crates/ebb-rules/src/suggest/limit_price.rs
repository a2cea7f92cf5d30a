//! What the shortfall limit costs: when the rules chosen cost well over the oracle and over
//! the cheapest rule set the search replayed (over the limit), that one, its shortfall and
//! the limit that allows it, for the file's header, a note and the summaries.

use super::{SAFETY, Scored, Sizing, Tried};
use ebb_cost::Money;
use ebb_wire::replay::ReplayResult;

/// The chosen rules cost at least this share more than the oracle and than the cheapest
/// rule set replayed (over the limit) before the file says what the limit costs.
pub const LIMIT_PRICE_SHARE: f64 = 0.2;

/// What the shortfall limit cost: the cheapest rule set the search replayed, over the
/// limit, when the rules chosen cost [`LIMIT_PRICE_SHARE`] more or above than it and than
/// the perfect-foresight oracle. The limit is then met only by holding GPUs ready ahead of
/// demand no rule sees coming (on a queue: a node kept warm for jobs that arrive after long
/// idle stretches), which the oracle never pays for; the operator chooses whether that is
/// worth it.
#[derive(Debug, Clone, PartialEq)]
pub struct LimitPrice {
    /// What it did on the trace.
    pub result: ReplayResult,
    /// The least `--max-shortfall-pct` that lets it be chosen (its shortfall over
    /// [`SAFETY`], each fold's within it), rounded up to a tenth.
    pub allow_pct: f64,
}

impl LimitPrice {
    /// What its shortfall is, in words, on a trace sized so.
    pub fn shortfall_is(sizing: Sizing) -> &'static str {
        if sizing.is_queue() {
            "jobs waiting for their nodes to warm up"
        } else {
            "demand waiting for the GPUs ordered for it to warm up"
        }
    }
}

/// The cheapest rule set tried (by priced cost; with schedules only if `pre_scale_allowed`),
/// over the limit, when the one chosen, `chosen`, has less shortfall and costs
/// [`LIMIT_PRICE_SHARE`] more or above than it and than `oracle`.
pub(super) fn find(
    tried: &Tried,
    chosen: &Scored,
    pre_scale_allowed: bool,
    oracle: &ReplayResult,
) -> Option<LimitPrice> {
    let (_, cheapest) = tried
        .iter()
        .filter(|(levers, _)| pre_scale_allowed || !levers.pre_scale)
        .min_by_key(|(levers, score)| (score.priced, **levers))?;
    let above = |fen: i64| chosen.result.cost_fen as f64 >= fen as f64 * (1.0 + LIMIT_PRICE_SHARE);
    let dearer = above(cheapest.result.cost_fen) && above(oracle.cost_fen);
    let shorter = chosen.result.shortfall_pct < cheapest.result.shortfall_pct;
    if cheapest.key.0 == 0 || !dearer || !shorter {
        return None;
    }
    let needed = cheapest
        .folds
        .iter()
        .map(|fold| fold.shortfall_pct)
        .fold(cheapest.result.shortfall_pct / SAFETY, f64::max);
    let allow_pct = (needed * 10.0 - 1e-9).ceil() / 10.0;
    // A limit over 100% is no limit an operator can ask for.
    (allow_pct <= 100.0).then(|| LimitPrice {
        result: cheapest.result.clone(),
        allow_pct,
    })
}

/// What the limit cost, as the file's header says it.
pub(super) fn lines(
    price: &LimitPrice,
    oracle: &ReplayResult,
    max_shortfall_pct: f64,
    sizing: Sizing,
) -> Vec<String> {
    let cheapest = &price.result;
    let ratio = cheapest.cost_fen as f64 / oracle.cost_fen.max(1) as f64;
    let short = LimitPrice::shortfall_is(sizing);
    vec![
        format!(
            "What the {max_shortfall_pct}% limit costs: the cheapest rule set replayed cost {} ({ratio:.3}x the oracle), with shortfall",
            Money::from_fen(cheapest.cost_fen)
        ),
        format!(
            "{:.2}% ({short}). Less shortfall takes GPUs held ready ahead of demand no rule sees coming,",
            cheapest.shortfall_pct
        ),
        format!(
            "which the oracle never pays for. If that wait is acceptable, `--max-shortfall-pct {}` allows rules like it",
            price.allow_pct
        ),
        "(the search keeps half the limit as margin for load it has not seen).".to_string(),
    ]
}
