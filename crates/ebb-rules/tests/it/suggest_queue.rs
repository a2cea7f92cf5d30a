//! `suggest` on a Slurm queue trace: the queue template's shape (`size-to-queue` on
//! `slurm_demand_gpus`, `queue-waited` on `slurm_oldest_wait_minutes` when the trace has
//! it), a file that parses, lints clean, and replays to the figures reported within the
//! limit.

use ebb_cost::Catalog;
use ebb_rules::lint::{LintContext, lint};
use ebb_rules::model;
use ebb_rules::replay::baselines::pricing;
use ebb_rules::replay::replay;
use ebb_rules::replay::trace::Trace;
use ebb_rules::rules_policy::RulesPolicy;
use ebb_rules::suggest::queue::Sizing;
use ebb_rules::suggest::{QueueOptions, SuggestOptions, suggest, suggest_with};
use ebb_wire::rules::{Action, Comparison, CustomMetric, MetricRef};
use ebb_wire::suggest::SuggestNote;

const HEADER: &str = "minute,demand,slurm_pending_gpus,slurm_allocated_gpus,slurm_demand_gpus,slurm_pending_jobs,slurm_oldest_wait_minutes";

/// Five and a half hours of a partition's queue: a burst of jobs of 2 GPUs asks for 8 GPUs
/// at minute 20 and holds them two hours, one job runs an hour more, then nothing; a second
/// burst of 6 GPUs at minute 240 for half an hour. The pool that ran then served each burst
/// 10 minutes after it came, so the oldest job's wait rose to 9 while its GPUs were pending.
/// `wait` false leaves the wait column out.
fn queue_csv(wait: bool) -> String {
    let mut csv = String::new();
    if wait {
        csv.push_str(HEADER);
    } else {
        csv.push_str(HEADER.trim_end_matches(",slurm_oldest_wait_minutes"));
    }
    csv.push('\n');
    for minute in 0..330u32 {
        let (demand, arrived) = match minute {
            20..140 => (8, 20),
            140..200 => (2, 20),
            240..270 => (6, 240),
            _ => (0, 0),
        };
        let waited = minute - arrived;
        let pending = if demand > 0 && waited < 10 { demand } else { 0 };
        let oldest_wait = if pending > 0 { waited } else { 0 };
        let mut row = format!(
            "{minute},{demand},{pending},{},{demand},{}",
            demand - pending,
            pending / 2
        );
        if wait {
            row.push_str(&format!(",{oldest_wait}"));
        }
        csv.push_str(&row);
        csv.push('\n');
    }
    csv
}

fn options() -> SuggestOptions {
    SuggestOptions {
        // A burst from an empty pool is short by its GPUs for the warmup: 5% of this
        // trace's demand is the limit a reactive rule can keep.
        max_shortfall_pct: 5.0,
        ..SuggestOptions::default()
    }
}

#[test]
fn a_queue_trace_gets_the_queue_templates_rules_chosen_by_replay() {
    let catalog = Catalog::demo();
    let entry = catalog.find("A100", "cn-north").unwrap();
    let trace = Trace::from_csv(&queue_csv(true)).unwrap();
    assert_eq!(Sizing::of(&trace), Sizing::Queue { wait: true });
    let options = options();
    let queue = QueueOptions { gpus_per_node: 2 };
    let suggestion = suggest_with(&trace, entry, &options, &queue).unwrap();
    let file = &suggestion.file;
    println!("{file}");
    println!("{:?}\n{:?}", suggestion.levers, suggestion.replay);
    assert_eq!(suggestion.sizing, Sizing::Queue { wait: true });

    // The file is what was replayed, and it lints clean against its own limits and price.
    let parsed = model::parse(file).unwrap_or_else(|e| panic!("{e}\n{file}"));
    assert_eq!(parsed.spec(), suggestion.rules.spec());
    let price = pricing(entry, &options.replay);
    let warnings = lint(
        &parsed,
        &LintContext {
            warmup_minutes: options.replay.warmup_minutes,
            pricing: Some(&price),
            peak_busy_gpus: Some(f64::from(trace.peak_gpus())),
        },
    );
    assert!(warnings.is_empty(), "{warnings:?}\n{file}");
    let mut policy = RulesPolicy::new("rules", parsed, Some(price));
    let again = replay(&trace, &mut policy, entry, &options.replay)
        .unwrap()
        .result;
    assert_eq!(again, suggestion.replay);
    assert!(suggestion.within_limit, "{:?}", suggestion.replay);
    assert!(suggestion.replay.shortfall_pct <= options.max_shortfall_pct);
    // A reactive rule cannot have the first burst's 8 GPUs before it comes (40 GPU-minutes
    // short over the warmup), and need not be short longer than the warmup of each burst
    // (8 + 6 GPUs, 70), of the 1,260 GPU-minutes asked for.
    let short = suggestion.replay.shortfall_gpu_minutes;
    assert!((40.0..=70.0).contains(&short), "{short}");
    assert_eq!(suggestion.replay.peak_held_gpus, 8, "a node too many");
    assert!(suggestion.candidates > 10, "a search, not one point");

    // The queue template's shape and names.
    let spec = suggestion.rules.spec();
    let names: Vec<(&str, u32)> = spec
        .metrics
        .iter()
        .map(|m| (m.name.as_str(), m.stale_after_minutes))
        .collect();
    assert_eq!(
        names,
        [("slurm_demand_gpus", 2), ("slurm_oldest_wait_minutes", 2)]
    );
    assert_eq!(spec.targets.len(), 1);
    let target = &spec.targets[0];
    assert_eq!(target.name, "size-to-queue");
    assert_eq!(
        target.metric,
        MetricRef::Custom {
            name: "slurm_demand_gpus".to_string()
        }
    );
    assert_eq!((target.target, target.tolerance), (1.0, 0.0));
    assert_eq!(
        target.scale_in_stabilization_minutes,
        suggestion.levers.stabilization_minutes
    );
    assert_eq!(
        target.scale_out_sustain_minutes,
        suggestion.levers.sustain_minutes
    );
    assert_eq!(spec.thresholds.len(), 1);
    let waited = &spec.thresholds[0];
    assert_eq!(waited.name, "queue-waited");
    assert_eq!(waited.metric.name(), "slurm_oldest_wait_minutes");
    assert_eq!(waited.comparison, Comparison::AtLeast);
    assert_eq!(waited.threshold, f64::from(suggestion.levers.wait_minutes));
    assert_eq!(waited.for_minutes, 1);
    assert_eq!(waited.action, Action::AddGpus { gpus: 2 });
    assert!(waited.cooldown_minutes >= options.replay.warmup_minutes);
    // A node's GPUs added at a wait of 5 to 9 minutes (the recorded pool's) would be paid
    // for an hour while the target already has the burst ready: the search waits longer.
    assert!(
        suggestion.levers.wait_minutes >= 10,
        "{:?}",
        suggestion.levers
    );
    // An empty pool still sees jobs arrive; the max is whole nodes.
    assert_eq!(spec.limits.min_gpus, 0);
    assert_eq!(spec.limits.max_gpus % 2, 0);
    assert!(spec.limits.max_gpus >= 10 * trace.peak_gpus());
    assert!(!spec.scale_in.force);

    // The file says what the replay could not know.
    for words in [
        "A Slurm queue trace",
        "not on the replayed one",
        "Size the pool to the Slurm queue",
        "whole nodes of 2 GPUs",
        "min 0: the queue is read from Slurm",
    ] {
        assert!(file.contains(words), "{words}\n{file}");
    }
    assert!(!file.contains("busy_gpus"), "{file}");
    // The replay decided in whole nodes: the file does not say it held GPUs one by one.
    assert!(!file.contains("one by one"), "{file}");
    assert!(file.contains("rents whole nodes too"), "{file}");
    // The max is peak + 100 here (ten times 8 is less), and the file says the rule it is.
    assert_eq!(spec.limits.max_gpus, 108);
    assert!(
        file.contains("max 108: the larger of ten times the trace's peak and 100 GPUs above it"),
        "{file}"
    );
    // No rule set kept within half the limit on this trace (a reactive rule is short each
    // burst's GPUs for the warmup): the file says it chose by shortfall, not that it chose
    // the least cost kept within half the limit.
    assert!(suggestion.replay.shortfall_pct > 0.5 * options.max_shortfall_pct);
    assert!(!file.contains("the one with the least cost"), "{file}");
    assert!(
        file.contains("none kept within 50% of the limit on this trace"),
        "{file}"
    );
    assert!(
        file.contains("the one with the least shortfall (3.17%)"),
        "{file}"
    );
    // No note claims a headroom target for the queue.
    assert!(
        !suggestion
            .notes
            .iter()
            .any(|n| matches!(n, SuggestNote::Target { .. }))
    );
}

#[test]
fn without_a_wait_column_the_queue_rules_have_no_threshold() {
    let catalog = Catalog::demo();
    let entry = catalog.find("A100", "cn-north").unwrap();
    let trace = Trace::from_csv(&queue_csv(false)).unwrap();
    assert_eq!(Sizing::of(&trace), Sizing::Queue { wait: false });
    let suggestion = suggest(&trace, entry, &options()).unwrap();
    let spec = suggestion.rules.spec();
    assert!(spec.thresholds.is_empty());
    assert_eq!(spec.metrics.len(), 1);
    assert_eq!(spec.targets[0].metric.name(), "slurm_demand_gpus");
    assert!(
        !suggestion.file.contains("slurm_oldest_wait_minutes"),
        "{}",
        suggestion.file
    );
    model::parse(&suggestion.file).unwrap();
}

#[test]
fn an_operators_queue_metric_keeps_its_staleness_and_is_not_repeated() {
    let catalog = Catalog::demo();
    let entry = catalog.find("A100", "cn-north").unwrap();
    let trace = Trace::from_csv(&queue_csv(true)).unwrap();
    let theirs = CustomMetric {
        name: "slurm_demand_gpus".to_string(),
        stale_after_minutes: 4,
        prometheus: None,
    };
    let options = SuggestOptions {
        metrics: vec![theirs.clone()],
        ..options()
    };
    let suggestion = suggest(&trace, entry, &options).unwrap();
    let metrics = &suggestion.rules.spec().metrics;
    assert_eq!(metrics[0], theirs);
    assert_eq!(metrics.len(), 2, "{metrics:?}");
    assert_eq!(metrics[1].name, "slurm_oldest_wait_minutes");
}

/// The same queue recorded on a partition of 16 GPUs with its idle GPUs beside it, and a
/// held job of 4 GPUs pending from minute 60 to 300 while the partition had GPUs idle: with
/// the idle column it is stuck, taken out of the demand and the queue columns, and the
/// suggestion says so; without it, it is demand and the rules pay to grow for it.
fn stuck_csv(idle: bool) -> String {
    let mut csv = String::from("minute,demand,slurm_pending_gpus,slurm_demand_gpus");
    if idle {
        csv.push_str(",slurm_idle_gpus");
    }
    csv.push('\n');
    for minute in 0..330u32 {
        let running = match minute {
            20..140 => 8,
            140..200 => 2,
            240..270 => 6,
            _ => 0,
        };
        let held = if (60..300).contains(&minute) { 4 } else { 0 };
        let mut row = format!("{minute},{},{held},{}", running + held, running + held);
        if idle {
            row.push_str(&format!(",{}", 16 - running));
        }
        csv.push_str(&row);
        csv.push('\n');
    }
    csv
}

#[test]
fn a_job_pending_beside_idle_gpus_is_stuck_not_demand() {
    let with = Trace::from_csv(&stuck_csv(true)).unwrap();
    let stuck = with.stuck_gpus().unwrap();
    assert_eq!(stuck.iter().sum::<f64>(), 4.0 * 240.0);
    assert_eq!(with.demand()[100], 8.0);
    let queue =
        |trace: &Trace, name: &str, minute: usize| trace.column(name).unwrap().values[minute];
    assert_eq!(queue(&with, "slurm_demand_gpus", 100), Some(8.0));
    assert_eq!(queue(&with, "slurm_pending_gpus", 100), Some(0.0));
    // The partition's own columns are as recorded.
    assert_eq!(queue(&with, "slurm_idle_gpus", 100), Some(8.0));
    // A part of the trace keeps what was taken out of it.
    let tail = with.tail(100).unwrap();
    assert_eq!(tail.stuck_gpus().unwrap().len(), 230);
    assert_eq!(tail.stuck_gpus().unwrap()[0], 4.0);
    let without = Trace::from_csv(&stuck_csv(false)).unwrap();
    assert!(without.stuck_gpus().is_none());
    assert_eq!(without.demand()[100], 12.0);

    let catalog = Catalog::demo();
    let entry = catalog.find("A100", "cn-north").unwrap();
    let stuck_out = suggest(&with, entry, &options()).unwrap();
    let counted = suggest(&without, entry, &options()).unwrap();
    assert!(
        stuck_out.replay.cost_fen < counted.replay.cost_fen,
        "{:?} {:?}",
        stuck_out.replay,
        counted.replay
    );
    let file = stuck_out.file.replace("\n# ", " ");
    assert!(
        file.contains("960 GPU-minutes (") && file.contains("They are taken out of `demand`"),
        "{}",
        stuck_out.file
    );
    assert!(
        stuck_out.notes.iter().any(|note| matches!(
            note,
            SuggestNote::StuckJobs { gpu_minutes, .. } if *gpu_minutes == 960.0
        )),
        "{:?}",
        stuck_out.notes
    );
    assert!(
        !counted
            .notes
            .iter()
            .any(|note| matches!(note, SuggestNote::StuckJobs { .. }))
    );
    // Within 5% on neither (each burst's warmup is short of more than half of it): the
    // note on what they did says they fell shortest, not that they kept the margin.
    for suggestion in [&stuck_out, &counted] {
        assert!(
            suggestion.notes.iter().any(|note| matches!(
                note,
                SuggestNote::Replayed { within_margin, .. } if *within_margin == (suggestion.replay.shortfall_pct <= 2.5)
            )),
            "{:?}",
            suggestion.notes
        );
    }
    let file = counted.file.replace("\n# ", " ");
    assert!(
        file.contains("Without a `slurm_idle_gpus` column, a job pending for another reason"),
        "{}",
        counted.file
    );
    // A negative idle count is refused, naming its column.
    let wrong = stuck_csv(true).replace("\n5,0,0,0,16\n", "\n5,0,0,0,-1\n");
    let error = Trace::from_csv(&wrong).unwrap_err();
    assert_eq!(error.column_name.as_deref(), Some("slurm_idle_gpus"));
}
