//! `ebb rules suggest --json`: the suggested rule file, the rules as data, and what they did
//! on the trace they were chosen on, beside the perfect-foresight oracle. The Rules view
//! will show the same.

use crate::replay::ReplayResult;
use crate::rules::RuleSet;
use serde::{Deserialize, Serialize};
use specta::Type;

/// A suggestion and its replay figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct SuggestReport {
    /// The rule file (TOML with a comment on each lever), as `ebb rules suggest` prints it.
    pub file: String,
    /// The same rules as data.
    pub rules: RuleSet,
    /// The model and region the replays were priced with.
    pub model: String,
    /// See `model`.
    pub region: String,
    /// The shortfall limit asked for, % of demand.
    pub max_shortfall_pct: f64,
    /// Whether the rules are within it on the trace (when no rule set tried is, the one
    /// with the least shortfall is suggested).
    pub within_limit: bool,
    /// Rule sets replayed in the search.
    pub candidates: u32,
    /// The suggested rules replayed on the trace (`policy` is "rules").
    pub replay: ReplayResult,
    /// The perfect-foresight oracle on the same trace and billing.
    pub oracle: ReplayResult,
}
