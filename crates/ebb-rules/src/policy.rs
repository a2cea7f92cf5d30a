//! The seam between replay and whatever decides: each minute of a replay, a [`Policy`]
//! sees what a live console would see at that minute and answers the count it wants held.
//! The rules ([`crate::decide`] through an adapter), the baselines and the oracle are
//! policies; replay knows none of them.

/// What the pool looks like at one minute of a replay (or of the live console).
#[derive(Debug, Clone, Copy)]
pub struct MinuteView<'a> {
    /// Minutes since the trace's start.
    pub minute: u32,
    /// The same instant on the wall clock (the trace's start + `minute`), for schedules.
    pub now_ms: i64,
    /// GPUs ready (warm) now.
    pub ready: u32,
    /// GPUs held (paid): ready + warming.
    pub held: u32,
    /// GPUs ordered and still warming.
    pub warming: u32,
    /// The busy work this minute, in GPUs (the trace's `demand`, what the pool's GPUs
    /// report as the sum of utilization ÷ 100; may exceed `ready` when the pool is short).
    pub busy_gpus: f64,
    /// Pool utilization `min(100, 100 · busy / ready)` (100 when ready is 0 and busy > 0).
    pub util_pct: f64,
    /// Pool memory utilization when the trace has a `mem_pct` column.
    pub mem_pct: Option<f64>,
    /// The trace's other columns this minute: (name, value), in the header's order.
    pub custom: &'a [(&'a str, f64)],
    /// The minute each held GPU's current run began, oldest first (for paid-unit holds:
    /// each GPU's unit runs from its own rental).
    pub held_since: &'a [u32],
}

/// Decides the count to hold, minute by minute. Stateful: a policy keeps what it needs of
/// the past (windows, cooldowns) itself.
pub trait Policy {
    /// How results name it: "rules", "static-peak", "seed-80-30", "hpa", "oracle".
    fn name(&self) -> &str;
    /// The count wanted from this minute on (replay clamps nothing: a policy's own limits
    /// are its business).
    fn desired(&mut self, view: &MinuteView<'_>) -> u32;
    /// Whether the pool keeps a GPU given back to the end of its paid unit (the console's
    /// release at unit end, the default), or releases it at once, newest first (rules whose
    /// scale-in is `force`: the operator asked for it).
    fn releases_at_unit_end(&self) -> bool {
        true
    }
}
