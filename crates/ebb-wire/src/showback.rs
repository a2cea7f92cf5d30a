//! Showback: a month's spend per team and per pool, each split into the overlay, the
//! subscribed base its GPUs used and the base left idle. The same shapes cross IPC and come
//! out of `ebb cost showback --json`. Money is integer fen; times are Unix ms.

use crate::reasons::PriceProblem;
use serde::{Deserialize, Serialize};
use specta::Type;

/// A month's spend split three ways; `overlay_fen + base_used_fen + idle_base_fen ==
/// total_fen`, to the fen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, Type)]
pub struct ShowbackLine {
    /// GPUs beyond the subscribed base at their price, spot GPUs included.
    pub overlay_fen: i64,
    /// The base's cost in proportion to the GPU-hours held on it.
    pub base_used_fen: i64,
    /// The rest of the base's cost: paid for, not held.
    pub idle_base_fen: i64,
    pub total_fen: i64,
    /// GPU-hours held (on the base, beyond it and on spot).
    pub gpu_hours: f64,
    /// The base's GPU-hours not held.
    pub idle_base_gpu_hours: f64,
}

/// One pool's part of the month.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct PoolShowback {
    pub pool: String,
    /// The team it belongs to; empty: none.
    pub team: String,
    pub model: String,
    pub base_gpus: u32,
    /// `None` when the pool could not be priced (`spend_problem` says why).
    pub spend: Option<ShowbackLine>,
    pub spend_problem: Option<PriceProblem>,
}

/// One team's part: the sums over its pools that could be priced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct TeamShowback {
    /// The team; empty for the pools with none.
    pub team: String,
    /// Its pools, by name (those in `Showback::pools` with this team).
    pub pools: Vec<String>,
    pub spend: ShowbackLine,
}

/// A calendar month's showback across every pool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct Showback {
    /// The calendar month (UTC), e.g. `2026-11`.
    pub month: String,
    pub month_start_ms: i64,
    /// Billed through: the month's end once it is over, else now.
    pub through_ms: i64,
    /// The month is over: its figures no longer move.
    pub complete: bool,
    /// By team name, the pools with no team last.
    pub teams: Vec<TeamShowback>,
    /// By team as `teams`, then by name.
    pub pools: Vec<PoolShowback>,
    /// The sums over every priced pool (for this month, the spend summary's month to date).
    pub total: ShowbackLine,
}
