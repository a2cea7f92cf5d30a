//! A queue trace's rules: a pool bound to a Slurm partition, sized to the partition's queue
//! in the shape of the Rules form's template "Size to the Slurm queue"
//! (`ui/src/rules-template.ts`, the README's "Slurm" section), its levers chosen by the same
//! search as a busy-GPU suggestion's.
//!
//! A trace is a queue trace when it has a `slurm_demand_gpus` column (the GPUs the
//! partition's jobs ask for or hold, as the console stores them for a bound pool). Then the
//! suggestion is a target rule `size-to-queue` on it, one GPU per GPU asked for or held
//! (target 1, tolerance 0: a job asks for whole GPUs, so there is no band to keep), and,
//! when the trace also has `slurm_oldest_wait_minutes`, a threshold rule `queue-waited`: a
//! job that has waited N minutes adds a node's GPUs.
//!
//! # What the replay can know
//!
//! - The trace's `demand` is the GPUs the jobs needed each minute; the replay takes the jobs
//!   as given: a pool with more GPUs would not have run them sooner, nor one with fewer
//!   later. Shortfall is the GPU-minutes asked for and not ready.
//! - The queue columns are fed to the rules as recorded. `slurm_demand_gpus` does not depend
//!   on the pool's size (a job asks for what it asks for), so that is exact. The recorded
//!   wait does: it is how long jobs waited on the pool that ran then, not on the replayed
//!   one, so `queue-waited` fires in the replay when the recorded pool was short, whatever
//!   the replayed one held. Its N is chosen on that signal and the file says so. (The replay
//!   could derive a wait from its own shortfall, but then `ebb replay` of the printed file,
//!   which feeds columns as recorded, would not give the figures suggest printed.)
//! - The replay decides in whole nodes (`--gpus-per-node`), as the console decides for a
//!   bound pool: every count is whole nodes, and the oracle it is read against rents whole
//!   nodes too.

use crate::replay::trace::Trace;
use ebb_wire::rules::{
    Action, Comparison, CustomMetric, MetricRef, TargetRule, ThresholdRule, counted,
};

/// The queue metric the target rule sizes on: GPUs of pending jobs and allocated GPUs.
pub const DEMAND_METRIC: &str = "slurm_demand_gpus";
/// The queue metric the threshold rule watches: the oldest pending job's wait, minutes.
pub const WAIT_METRIC: &str = "slurm_oldest_wait_minutes";
/// The target rule's name, the template's.
pub const TARGET_RULE: &str = "size-to-queue";
/// The threshold rule's name, the template's.
pub const THRESHOLD_RULE: &str = "queue-waited";
/// The console stores the queue each second: a value older than this means Slurm stopped
/// answering, and the rules on it stand still.
pub const STALE_AFTER_MINUTES: u32 = 2;
/// `--gpus-per-node`'s range, as `slurm.toml`'s `gpus_per_node`.
pub const GPUS_PER_NODE: std::ops::RangeInclusive<u32> = 1..=64;

/// `demand` rounded up to whole nodes of `node_gpus` each minute: what a pool of whole
/// nodes needs (the oracle's need on a queue trace of nodes).
pub fn whole_node_demand(demand: &[f64], node_gpus: u32) -> Vec<f64> {
    let node = f64::from(node_gpus.max(1));
    demand
        .iter()
        .map(|&gpus| (crate::replay::trace::whole_gpus(gpus) as f64 / node).ceil() * node)
        .collect()
}

/// What a suggestion sizes the pool on, read from the trace's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sizing {
    /// Busy GPUs (`busy_gpus`, the trace's demand): a trace without `slurm_demand_gpus`.
    BusyGpus,
    /// The Slurm queue (`slurm_demand_gpus`); `wait`: the trace has `slurm_oldest_wait_minutes`
    /// too, and the `queue-waited` threshold is suggested.
    Queue {
        /// The trace has the wait column.
        wait: bool,
    },
}

impl Sizing {
    /// How `trace` is sized: on the queue when it has a `slurm_demand_gpus` column.
    pub fn of(trace: &Trace) -> Sizing {
        if trace.column(DEMAND_METRIC).is_some() {
            Sizing::Queue {
                wait: trace.column(WAIT_METRIC).is_some(),
            }
        } else {
            Sizing::BusyGpus
        }
    }

    /// Whether the rules size on the queue.
    pub fn is_queue(self) -> bool {
        matches!(self, Sizing::Queue { .. })
    }

    /// Whether the `queue-waited` threshold is in the rules.
    pub fn has_wait(self) -> bool {
        matches!(self, Sizing::Queue { wait: true })
    }
}

/// The operator's metrics as they were, then each queue metric the rules use that they do
/// not already name (theirs keeps its staleness).
pub(super) fn metrics(kept: &[CustomMetric], wait: bool) -> Vec<CustomMetric> {
    let mut out = kept.to_vec();
    let used: &[&str] = if wait {
        &[DEMAND_METRIC, WAIT_METRIC]
    } else {
        &[DEMAND_METRIC]
    };
    for name in used {
        if !out.iter().any(|metric| metric.name == *name) {
            out.push(CustomMetric {
                name: (*name).to_string(),
                stale_after_minutes: STALE_AFTER_MINUTES,
                prometheus: None,
            });
        }
    }
    out
}

/// `size-to-queue` with the search's windows.
pub(super) fn target(
    stabilization_minutes: u32,
    sustain_minutes: u32,
    overload_gpus: Option<u32>,
) -> TargetRule {
    TargetRule {
        name: TARGET_RULE.to_string(),
        metric: MetricRef::Custom {
            name: DEMAND_METRIC.to_string(),
        },
        target: 1.0,
        tolerance: 0.0,
        scale_in_stabilization_minutes: stabilization_minutes,
        scale_out_sustain_minutes: sustain_minutes,
        overload_gpus,
    }
}

/// The cooldown of `queue-waited`: N, as the template has it, but never shorter than the
/// warmup (a node ordered again before the last one is ready is what lint warns of).
pub(super) fn cooldown_minutes(wait_minutes: u32, warmup_minutes: u32) -> u32 {
    wait_minutes.max(warmup_minutes)
}

/// `queue-waited`: a job waited `wait_minutes`: a node's GPUs at once.
pub(super) fn threshold(
    wait_minutes: u32,
    gpus_per_node: u32,
    warmup_minutes: u32,
) -> ThresholdRule {
    ThresholdRule {
        name: THRESHOLD_RULE.to_string(),
        metric: MetricRef::Custom {
            name: WAIT_METRIC.to_string(),
        },
        comparison: Comparison::AtLeast,
        threshold: f64::from(wait_minutes),
        for_minutes: 1,
        action: Action::AddGpus {
            gpus: gpus_per_node,
        },
        cooldown_minutes: cooldown_minutes(wait_minutes, warmup_minutes),
    }
}

/// The pool's max, in whole nodes: `max_gpus` rounded up to a node, down when that is past
/// `ceiling`.
pub(super) fn whole_nodes(max_gpus: u32, gpus_per_node: u32, ceiling: u32) -> u32 {
    let per_node = gpus_per_node.max(1);
    let up = max_gpus.div_ceil(per_node).saturating_mul(per_node);
    if up <= ceiling {
        up
    } else {
        ceiling / per_node * per_node
    }
}

/// `text` as lines of at most `width` characters, broken between words.
fn wrapped(text: &str, width: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in text.split(' ') {
        match out.last_mut() {
            Some(line) if line.chars().count() + 1 + word.chars().count() <= width => {
                line.push(' ');
                line.push_str(word);
            }
            _ => out.push(word.to_string()),
        }
    }
    out
}

/// The file's top lines on a queue trace: what the replay took as given and what it could
/// not know.
pub(super) fn header(trace: &Trace, sizing: Sizing, gpus_per_node: u32) -> Vec<String> {
    let mut out = vec![
        String::new(),
        "A Slurm queue trace: `demand` is the GPUs the partition's jobs asked for or held each minute,"
            .to_string(),
        format!(
            "and the rules were fed its `{DEMAND_METRIC}` column as recorded. The jobs are taken as given:"
        ),
        "a pool with more GPUs would not have run them sooner, so shortfall is the GPU-minutes they asked"
            .to_string(),
        "for and did not have.".to_string(),
    ];
    out.extend(wrapped(&crate::replay::stuck::sentence(trace), 100));
    if sizing.has_wait() {
        out.extend([
            format!(
                "The `{WAIT_METRIC}` column is the wait on the pool that ran then, not on the replayed one:"
            ),
            format!(
                "`{THRESHOLD_RULE}` was replayed on that recorded wait, so how often it fires on these rules is"
            ),
            "a guess until a trace recorded under them shows it.".to_string(),
        ]);
    }
    if gpus_per_node > 1 {
        out.push(format!(
            "The replay decided in whole nodes of {gpus_per_node} GPUs, as the console does for a bound pool, and the"
        ));
        out.push("perfect-foresight oracle it is read against rents whole nodes too.".to_string());
    }
    out
}

/// Above the limits.
pub(super) fn limits(max_gpus: u32, gpus_per_node: u32) -> Vec<String> {
    let mut out = vec![
        "min 0: the queue is read from Slurm, not from the pool's GPUs, so an empty pool still sees a"
            .to_string(),
        "job arrive and grows for it.".to_string(),
        format!(
            "max {max_gpus}: {}, so a peak it did not show",
            super::max_reason(max_gpus)
        ),
        "is not clipped; lower it to the most you would pay for, or add budget_per_hour (yuan),"
            .to_string(),
        "which no rule can break.".to_string(),
    ];
    if gpus_per_node > 1 {
        out.push(format!(
            "It is whole nodes of {gpus_per_node} GPUs: the pool grows and shrinks by nodes."
        ));
    }
    out
}

/// Above a queue metric.
pub(super) fn metric(name: &str) -> Vec<String> {
    let what = if name == WAIT_METRIC {
        "the oldest pending job's wait, minutes"
    } else {
        "the GPUs the partition's jobs ask for or hold"
    };
    vec![
        format!("{name}: {what},"),
        format!(
            "stored by the console each second for a bound pool. Stale after {STALE_AFTER_MINUTES} minutes: Slurm"
        ),
        "not answering, the rules on it stand still and say so.".to_string(),
    ]
}

/// Above `queue-waited`.
pub(super) fn threshold_notes(rule: &ThresholdRule, gpus_per_node: u32) -> Vec<String> {
    vec![
        format!(
            "A job has waited {} minutes: add a node's {} at once, again every {} minutes while one",
            rule.threshold,
            counted(gpus_per_node, "GPU", "GPUs"),
            rule.cooldown_minutes
        ),
        "waits (the target below waits for its sustain window; this is the safety net). The wait was the"
            .to_string(),
        "search's to choose on the recorded wait (see the top).".to_string(),
    ]
}

/// Above `size-to-queue`, before the windows' lines.
pub(super) fn target_notes() -> Vec<String> {
    vec![
        "Size the pool to the Slurm queue: one GPU per GPU its jobs ask for or hold (target 1, tolerance 0:"
            .to_string(),
        "a job asks for whole GPUs, so there is no band to keep; paid units and the windows keep it from flapping)."
            .to_string(),
    ]
}
