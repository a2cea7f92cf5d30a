//! Pools, the slider's preview, and the activity log: the same shapes cross the Tauri IPC
//! boundary and come out of `ebb --json`. Money is integer fen; times are Unix ms.

use crate::plan::{OverlayMode, Term};
use crate::reasons::{
    ChangeReason, ConfirmationReason, HostProblem, PoolNote, PriceProblem, ReleaseWarning,
};
use serde::{Deserialize, Serialize};
use specta::Type;

/// How new leases are spread over hosts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum PlacementPolicy {
    /// Fill the hosts the pool already uses (then the fullest) first.
    #[default]
    Pack,
    /// Even out the pool's GPUs over the hosts.
    Spread,
}

impl PlacementPolicy {
    /// Every policy, in the order a form offers them.
    pub const ALL: [PlacementPolicy; 2] = [PlacementPolicy::Pack, PlacementPolicy::Spread];
}

/// A pool as the operator writes it (create or edit).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct PoolInput {
    pub name: String,
    /// GPU model as the price catalog names it, e.g. `A100`.
    pub model: String,
    /// One or more regions, e.g. `cn-north`.
    pub regions: Vec<String>,
    pub min: u32,
    pub max: u32,
    /// GPUs on subscription (paid whether held or not).
    pub base_gpus: u32,
    /// The base's term.
    pub term: Term,
    /// How GPUs above the base are paid.
    pub overlay: OverlayMode,
    pub placement: PlacementPolicy,
    /// The pool accepts interruptible (spot) GPUs.
    pub interruptible: bool,
    /// On scale-in, keep a GPU until its paid unit (hour, day, week) runs out.
    pub release_at_unit_end: bool,
    /// How the GPUs above the base split between on demand and spot.
    #[serde(default)]
    pub spot: SpotMix,
}

/// A pool as the pool form holds it, every field as typed (counts as text, the max spot
/// price in yuan, the choices by their wire names): what `check_pool` and `preview_mix`
/// read. `stored_spot` is the mix the pool had (the default for a new one): while the pool
/// is not interruptible its mix fields are off, and what was stored is kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct PoolForm {
    pub name: String,
    pub model: String,
    pub regions: Vec<String>,
    pub min: String,
    pub max: String,
    pub base_gpus: String,
    pub term: String,
    pub overlay: String,
    pub placement: String,
    pub interruptible: bool,
    pub release_at_unit_end: bool,
    pub on_demand_floor: String,
    pub spot_pct: String,
    /// Yuan per GPU-hour (`8`, `12.50`, `¥1,000`); empty: any price.
    pub max_price: String,
    pub stored_spot: Option<SpotMix>,
}

/// The console's answer on a pool as typed: each field's problem in words, or the pool to
/// send when there is none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct PoolCheck {
    pub problems: Vec<crate::phrase::FieldProblem>,
    pub input: Option<PoolInput>,
}

/// The form's example of a mix being typed: how the pool's max would split.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct MixExample {
    pub max: u32,
    pub split: GpuSplit,
}

/// A pool's mix above its subscribed base (EC2's `OnDemandBaseCapacity` and
/// `OnDemandPercentageAboveBaseCapacity`): the first `on_demand_floor` GPUs above the base
/// are on demand, and `spot_pct` percent of the rest on spot (rounded down, so on demand
/// is never short of its share). Spot GPUs are those hosts offer as spot: cheaper, and
/// taken back by their owner with a notice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, Type)]
#[serde(default)]
pub struct SpotMix {
    /// GPUs above the base always on demand, whatever the share.
    pub on_demand_floor: u32,
    /// Of the GPUs above the base and the floor, the percentage on spot (0 to 100).
    pub spot_pct: u32,
    /// The most a spot GPU-hour may cost, in fen; `None`: any spot price.
    pub max_price_fen: Option<i64>,
}

/// A GPU count split by how it is paid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, Type)]
pub struct GpuSplit {
    /// On subscription.
    pub base: u32,
    /// On demand above the base.
    pub on_demand: u32,
    /// On spot.
    pub spot: u32,
}

/// Where a pool stands against what the operator chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum PoolPhase {
    /// Holding exactly `desired`.
    Converged,
    /// Renting toward `desired`.
    ScalingOut,
    /// Releasing toward `desired`.
    ScalingIn,
    /// Not converging: not enough free GPUs, hosts failing; `message` says why.
    Blocked,
    /// No process enforces this data directory (start the app or `ebb daemon`).
    NotEnforced,
}

/// One host's part in a pool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct PoolHostView {
    pub host: String,
    pub region: String,
    /// The pool's active leases there.
    pub leased: u32,
    /// Lease requests sent and not answered yet.
    pub pending: u32,
    /// Leases being released.
    pub releasing: u32,
    /// Failed requests in the last pass.
    pub failed: u32,
    /// The last failure.
    pub last_error: Option<HostProblem>,
}

/// Where one of a pool's leases stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum PoolLeaseState {
    /// Held and counted.
    Active,
    /// Being released.
    Releasing,
    /// On a host that does not answer now, still within the grace period.
    Unreachable,
    /// On a host offline past the grace period: written off, being replaced.
    Lost,
    /// Taken back by its host's owner (a spot reclaim): it goes at its deadline whatever
    /// the console does, and its replacement is ordered at once.
    Reclaimed,
}

/// One GPU the pool holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct PoolLeaseView {
    pub lease_id: String,
    pub host: String,
    pub region: String,
    pub gpu_uuids: Vec<String>,
    pub gpu_indexes: Vec<u32>,
    pub fencing_token: u64,
    pub granted_at_ms: i64,
    pub state: PoolLeaseState,
    /// GPU utilization at the last look.
    pub util_pct: Option<f32>,
    /// When its workload last said it had saved its state (safe to release), Unix ms.
    pub checkpoint_at_ms: Option<i64>,
    /// The SIGTERM grace its agent gives the workload on release, in seconds.
    pub release_grace_s: Option<u32>,
    /// When its host takes it back (a reclaim's deadline), Unix ms.
    pub reclaim_deadline_ms: Option<i64>,
    /// Its GPUs are offered as spot: priced at spot, and its host may take it back.
    #[serde(default)]
    pub spot: bool,
    /// Granted and paid for, its workload not up yet (warming): not counted ready.
    #[serde(default)]
    pub starting: bool,
}

/// What a pool has cost this month, and where the month is heading.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct SpendView {
    /// The calendar month (UTC), e.g. `2026-12`.
    pub month: String,
    pub month_to_date_fen: i64,
    /// Month to date plus the current run rate until the month ends.
    pub projected_month_fen: i64,
    /// The pool's cost per hour at its current count.
    pub run_rate_per_hour_fen: i64,
    /// GPU-hours held this month.
    pub gpu_hours: f64,
    /// When this month's subscribed base is counted from: the month's start, or the pool's
    /// creation when that came later (the base is paid pro rata from then).
    pub base_from_ms: i64,
    /// Of month to date, what spot GPUs cost.
    #[serde(default)]
    pub spot_fen: i64,
    /// What spot saved this month, net: what the pool's leases, spot's included, would
    /// have cost all on demand (a spot GPU and its replacement one GPU held throughout),
    /// less what it paid for on demand and spot (each reclaim's replacement and each
    /// return to spot counted). Negative when spot cost more than on demand would have (a
    /// loss); 0 for a pool that held no spot this month.
    #[serde(default)]
    pub spot_saved_fen: i64,
}

/// Spend across every pool this month, against the operator's monthly budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct SpendSummary {
    /// The calendar month (UTC), e.g. `2026-12`.
    pub month: String,
    /// The sums over the pools that could be priced.
    pub month_to_date_fen: i64,
    pub projected_month_fen: i64,
    pub run_rate_per_hour_fen: i64,
    pub gpu_hours: f64,
    /// The monthly budget, when one is set.
    pub budget_fen: Option<i64>,
    pub budget_state: BudgetState,
    /// One row per pool, by name.
    pub pools: Vec<PoolSpend>,
}

/// Where the month stands against the budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum BudgetState {
    /// No budget is set.
    NoBudget,
    /// The projection stays within the budget.
    Within,
    /// Spent so far is within, but the projection passes it.
    ProjectedOver,
    /// Spent so far already passes it.
    Over,
}

/// One pool's line of the spend summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct PoolSpend {
    pub pool: String,
    pub model: String,
    /// GPUs held now.
    pub actual_gpus: u32,
    pub base_gpus: u32,
    pub term: Term,
    pub overlay: OverlayMode,
    pub created_at_ms: i64,
    pub spend: Option<SpendView>,
    /// Why the pool could not be priced (no catalog price for its model and regions).
    pub spend_problem: Option<PriceProblem>,
}

/// A pool with its live state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct PoolView {
    pub id: String,
    pub name: String,
    pub model: String,
    pub regions: Vec<String>,
    pub min: u32,
    pub max: u32,
    /// What the operator (or failover, or a rule) chose.
    pub desired: u32,
    pub base_gpus: u32,
    pub term: Term,
    pub overlay: OverlayMode,
    pub placement: PlacementPolicy,
    pub interruptible: bool,
    pub release_at_unit_end: bool,
    /// How the GPUs above the base split between on demand and spot.
    pub spot: SpotMix,
    /// The desired count as the mix splits it (spot the pool may take; none while spot is
    /// paused in all its regions or the pool is not interruptible).
    pub split: GpuSplit,
    /// Of the active leases, those on spot GPUs.
    pub spot_held: u32,
    /// Active leases the agents report.
    pub actual: u32,
    /// Of `actual`, the GPUs granted whose workload is not up yet: warming, paid for, not
    /// ready.
    #[serde(default)]
    pub starting: u32,
    pub pending: u32,
    pub releasing: u32,
    /// Leases on hosts offline past the grace period, being replaced.
    pub lost: u32,
    /// Kept until their paid unit ends (release at unit end).
    pub held_to_unit_end: u32,
    pub phase: PoolPhase,
    /// Why the pool is not converged (empty when it is).
    pub notes: Vec<PoolNote>,
    /// When the enforcer last looked, Unix ms; `None` when none has.
    pub checked_at_ms: Option<i64>,
    pub hosts: Vec<PoolHostView>,
    pub leases: Vec<PoolLeaseView>,
    /// `None` when the catalog has no price for the model in the pool's regions.
    pub spend: Option<SpendView>,
    pub spend_problem: Option<PriceProblem>,
}

/// GPUs to rent on, or release from, one host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct HostMove {
    pub host: String,
    pub region: String,
    pub count: u32,
}

/// Free GPUs of the pool's model in one of its regions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct HostFree {
    pub host: String,
    pub region: String,
    pub free: u32,
}

/// One lease a scale-in would give back: where its GPUs are, how busy, and what is paid.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct ReleasedLease {
    pub lease_id: String,
    pub host: String,
    pub region: String,
    pub gpu_indexes: Vec<u32>,
    /// Utilization at the last look; `None` when unknown.
    pub util_pct: Option<f32>,
    /// Its GPUs run work (at or above the idle line): the workload is stopped.
    pub busy: bool,
    /// When the unit it has paid for ends, Unix ms.
    pub paid_until_ms: i64,
    /// Kept until `paid_until_ms` (the pool releases at unit end) rather than released now.
    pub kept_to_unit_end: bool,
    /// Its workload has saved its state (a checkpoint since its last start): releasing it
    /// loses nothing. Placement releases these first, after the operator's own choice.
    pub safe: bool,
    /// The operator chose this one (not the placement).
    pub chosen: bool,
}

/// What moving the slider from the pool's count to `to` would do, before letting go.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct ScalePreview {
    pub pool: String,
    /// The pool's desired count now.
    pub from: u32,
    pub to: u32,
    pub per_hour_before_fen: i64,
    pub per_hour_after_fen: i64,
    pub per_month_before_fen: i64,
    pub per_month_after_fen: i64,
    pub delta_per_hour_fen: i64,
    pub delta_per_month_fen: i64,
    /// Free matching GPUs now, over the pool's regions.
    pub free_now: u32,
    pub free_by_host: Vec<HostFree>,
    /// Where new GPUs would be rented.
    pub rent: Vec<HostMove>,
    /// Where GPUs would be released from.
    pub release: Vec<HostMove>,
    /// Of the GPUs to release, those kept until their paid unit ends.
    pub held_to_unit_end: u32,
    /// GPUs asked for that no host has free now.
    pub short: u32,
    /// The change is above the confirmation threshold: ask first.
    pub needs_confirmation: bool,
    pub confirmation_reason: Option<ConfirmationReason>,
    /// Why the prices could not be had, when they could not.
    pub cost_problem: Option<PriceProblem>,
    /// The leases the placement would give back, in its order (those kept to unit end too).
    pub released: Vec<ReleasedLease>,
    /// What releasing them now would stop, when it stops anything.
    pub release_warning: Option<ReleaseWarning>,
    /// The new count as the pool's mix splits it.
    pub split: GpuSplit,
    /// What its spot GPUs save an hour against the same GPUs on demand, in fen; `None`
    /// when spot has no price there.
    pub spot_saving_per_hour_fen: Option<i64>,
}

/// Who made a change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum Actor {
    Operator,
    Failover,
    Rule,
    Enforcer,
    /// The demo's own setup (its hosts, pool and rules), made on its first start.
    Demo,
    /// Slurm's power saving (`ebb slurm resume|suspend`) or the partition's queue.
    Slurm,
}

/// How a change ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    InProgress,
    Done,
    /// Not all of it in place yet: a host failed, or no GPU is free for the rest; the
    /// enforcer keeps trying.
    Partial,
    /// Superseded by a later change before it finished.
    Superseded,
}

/// One host's part in a change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct HostResult {
    pub host: String,
    pub granted: u32,
    pub released: u32,
    pub failed: u32,
    pub error: Option<HostProblem>,
}

/// One line of the activity log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct ActivityEntry {
    pub id: i64,
    pub at_ms: i64,
    pub pool: String,
    pub actor: Actor,
    pub from: u32,
    pub to: u32,
    /// Why, with its words where Rust words it.
    #[serde(serialize_with = "crate::words::worded_change_reason")]
    #[specta(type = crate::words::WordedChangeReason)]
    pub reason: ChangeReason,
    pub delta_per_hour_fen: Option<i64>,
    pub delta_per_month_fen: Option<i64>,
    pub results: Vec<HostResult>,
    pub outcome: Outcome,
    pub finished_at_ms: Option<i64>,
    /// The operator who made it (the database role on a shared PostgreSQL, else the OS
    /// user; empty on entries from before it was recorded).
    #[serde(default)]
    pub who: String,
    /// Their Ebb role then (`viewer`, `operator`, `admin`, `enforcer`; empty as `who`).
    #[serde(default)]
    pub role: String,
}

/// A region's hosts and the GPU models they reported, for the pool form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct RegionOffer {
    pub region: String,
    pub hosts: u32,
    /// Distinct GPU model names the hosts reported (empty before the first poll).
    pub gpu_models: Vec<String>,
}

/// One GPU model the pool form offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct ModelOffer {
    /// The catalog's name (`A100`), which a pool names; a reported name no catalog entry
    /// matches stands as reported.
    pub model: String,
    /// Whether the price catalog prices it (a pool needs a price).
    pub priced: bool,
    /// What the hosts reported that it matches, e.g. `NVIDIA A100-SXM4-80GB`.
    pub reported: Vec<String>,
    /// Hosts reporting it, and their regions (sorted).
    pub hosts: u32,
    pub regions: Vec<String>,
}

/// What the pool form offers, and when a slider move asks first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct PoolOptions {
    pub regions: Vec<RegionOffer>,
    /// The base terms, in the order the form offers them.
    pub terms: Vec<Term>,
    /// The overlay modes, in the order the form offers them.
    pub overlays: Vec<OverlayMode>,
    /// The placement policies, in the order the form offers them.
    pub placements: Vec<PlacementPolicy>,
    /// Models the price catalog prices.
    pub catalog_models: Vec<String>,
    /// The models a pool can ask for, under the catalog's names, with what the hosts
    /// reported that each matches: the form's model choices, those some host has first.
    pub models: Vec<ModelOffer>,
    /// Changes of more GPUs than this ask for confirmation.
    pub confirm_above_gpus: u32,
    /// Changes moving the cost per hour by more than this ask for confirmation.
    pub confirm_above_per_hour_fen: i64,
}

/// The pool chart's legend, in the viewer's language.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct PoolChartLabels {
    pub desired: String,
    pub ready: String,
    pub warming: String,
    pub utilization: String,
    /// A Slurm-bound pool's queue line: the GPUs its jobs ask for or hold.
    pub queue: String,
    /// The marks of spot reclaims (each with its replacement ordered at once).
    #[serde(default)]
    pub reclaimed: String,
    /// The lines where spot was paused (on demand instead) and resumed.
    #[serde(default)]
    pub spot_paused: String,
}

/// A pool's own chart and the scale-out in progress.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct PoolChart {
    /// Desired, ready, warming and utilization over the range, as SVG.
    pub svg: String,
    /// The GPUs asked for and not granted yet; `None` when nothing is warming.
    pub scale_out: Option<ScaleOut>,
    pub desired: u32,
    pub ready: u32,
    /// The rule decisions of the range (changes, held ones and shadow ones), where the SVG
    /// marks them on the utilization panel, oldest first.
    pub marks: Vec<DecisionMark>,
}

/// One rule decision marked on a pool chart, where the SVG draws it, so the UI can lay a
/// focusable button with the reason over the image.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct DecisionMark {
    /// The activity entry's id.
    pub id: i64,
    pub at_ms: i64,
    /// The mark's centre in the image, 0–100 % of its width from the left and of its
    /// height from the top.
    pub x_pct: f64,
    pub y_pct: f64,
    /// The desired count before and after (equal when a clamp held it).
    pub from: u32,
    pub to: u32,
    /// Shadow mode: decided and logged, nothing changed (drawn hollow).
    pub shadow: bool,
    /// A clamp kept the count where it was.
    pub held: bool,
    /// The entry's reason (a `rule_decision`), with its words where Rust words it.
    #[serde(serialize_with = "crate::words::worded_change_reason")]
    #[specta(type = crate::words::WordedChangeReason)]
    pub reason: ChangeReason,
}

/// Whether desktop notifications reach the desktop, as the app last found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum NotificationDelivery {
    /// Nothing has failed (none may have been shown yet).
    Working,
    /// They cannot be shown here: no notification server, or the last one failed. The
    /// detail is the system's own words (English).
    Unavailable { detail: String },
}

/// Which desktop notifications the app shows; each kind on or off.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct NotificationPrefs {
    /// A rule scaled a pool.
    pub scaled: bool,
    /// The budget held a scale-out or a change.
    pub budget: bool,
    /// A metric a rule watches went stale.
    pub stale: bool,
    /// Spot: a host takes GPUs back, or spot is paused or resumed in a region. Preferences
    /// saved before it read as on.
    #[serde(default = "on")]
    pub spot: bool,
}

fn on() -> bool {
    true
}

impl Default for NotificationPrefs {
    fn default() -> NotificationPrefs {
        NotificationPrefs {
            scaled: true,
            budget: true,
            stale: true,
            spot: true,
        }
    }
}

/// A scale-out in progress: what is warming where, and when it should be ready.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct ScaleOut {
    /// GPUs asked for and not granted yet, and GPUs granted whose workload is not up yet.
    pub warming: u32,
    /// Of `warming`, the GPUs granted whose workload is coming up (held and paid for).
    #[serde(default)]
    pub starting: u32,
    /// When the last warming GPU should be ready, from each host's measured delivery
    /// time; `None` while some host has no measurement yet.
    pub eta_ms: Option<i64>,
    pub hosts: Vec<WarmingHost>,
}

/// One host's part of a scale-out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct WarmingHost {
    pub host: String,
    pub warming: u32,
    /// When the oldest of its requests was written down.
    pub asked_at_ms: i64,
    /// The host's mean time from a lease request to its GPU granted; `None` before the
    /// first measured grant.
    pub delivery_ms: Option<f64>,
    /// Grants measured.
    pub samples: u32,
    /// `asked_at_ms + delivery_ms`.
    pub eta_ms: Option<i64>,
}
