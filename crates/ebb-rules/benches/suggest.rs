//! `suggest`, judged out of sample, and how fast it is.
//!
//! `cargo bench -p ebb-rules --bench suggest` (release build, std `Instant`, no harness).
//! `EBB_SUGGEST_SEEDS=N` sets the seeds per family (default 4); `EBB_SUGGEST_VERBOSE=1`
//! prints each trace's levers; `EBB_SUGGEST_FAMILIES=steady,steps-10m` runs only those
//! families (every section); `EBB_SUGGEST_SPEED=0` skips the speed section,
//! `EBB_SUGGEST_LARGE=0` the large stand-ins.
//!
//! Quality: for every family and seed, a 30-day trace; rules are suggested from its first
//! 15 days and replayed on the last 15 (the wall clock continuing, so schedules land where
//! they would), against the oracle on the same half with the same billing. Per family: the
//! cost ÷ the oracle's (geomean over the seeds), the worst, the worst shortfall, the most
//! actions and flaps a day (a flap: an action undone inside the paid unit it bought), and
//! the oracle's flaps a day (the most over the seeds) for scale; then
//! the geomean over every trace. Two tables: the families the search was developed on
//! (`Family::ALL`) and those it was never tuned to (`Family::UNSEEN`, reported apart; a
//! queue family is a `slurm_demand_gpus` trace sized in whole nodes, its oracle too). A
//! third table, **large stand-ins**: shapes of `Family::ALL` first drawn at tens of GPUs,
//! drawn again at a peak of 800 ([`FamilyParams::at_peak`]: the same trace scaled), so the
//! levers in proportion to a pool of hundreds are measured on several shapes, not only the
//! `large-pool` drift (the search was not developed at that scale). The goal: geomean ≤ 1.00
//! and no family over 1.05, shortfall ≤ 1% and ≤ 1 flap a day on every trace. Where a
//! suggestion's file says what the limit costs (`LimitPrice`), the family's line is followed
//! by the rules suggested at the limit it named, replayed on the same unseen days.
//! `EBB_SUGGEST_MAX_SHORTFALL_PCT` sets the limit (default 1).
//!
//! Speed: `suggest` on a 30-day trace of each family (goal ≤ 10 s), and on an 800-GPU
//! pool's (the `large-pool` family at 400–800 busy GPUs, goal ≤ 10 s), and `replay` of the
//! suggested rules on that pool's 30 days (goal ≤ 200 ms).

use ebb_cost::{Catalog, PriceEntry};
use ebb_rules::policy::Policy;
use ebb_rules::replay::baselines::{baseline, pricing};
use ebb_rules::replay::billing::unit_minutes;
use ebb_rules::replay::families::{Family, FamilyParams, generate};
use ebb_rules::replay::oracle::Oracle;
use ebb_rules::replay::trace::Trace;
use ebb_rules::replay::{ReplayOptions, replay};
use ebb_rules::rules_policy::RulesPolicy;
use ebb_rules::suggest::queue::{DEMAND_METRIC, whole_node_demand};
use ebb_rules::suggest::{QueueOptions, SuggestOptions, suggest, suggest_with};
use std::time::{Duration, Instant};

const HALF: usize = 15 * 1_440;

/// The large stand-ins' shapes, each drawn at [`LARGE_PEAK_GPUS`].
const LARGE: [Family; 6] = [
    Family::DailyFestival,
    Family::FlashCrowd,
    Family::WeekdayBatch,
    Family::GrowingStreaming,
    Family::Steps10m,
    Family::Ar1Steady90,
];
/// Their peak.
const LARGE_PEAK_GPUS: f64 = 800.0;

fn main() {
    let all = families(&Family::ALL);
    let unseen = families(&Family::UNSEEN);
    if !all.is_empty() {
        quality_section("families the search was developed on", &all);
    }
    if !unseen.is_empty() {
        quality_section("families never tuned to (reported apart)", &unseen);
    }
    let large = families(&LARGE);
    if !large.is_empty() && std::env::var("EBB_SUGGEST_LARGE").as_deref() != Ok("0") {
        quality_section_at(
            "large stand-ins: our shapes drawn at a peak of 800 GPUs (not tuned at that scale)",
            &large,
            Some(LARGE_PEAK_GPUS),
        );
    }
    if std::env::var("EBB_SUGGEST_SPEED").as_deref() != Ok("0") {
        speed_section(&all);
    }
}

/// The families of `set` run: every one, or those `EBB_SUGGEST_FAMILIES` names.
fn families(set: &[Family]) -> Vec<Family> {
    match std::env::var("EBB_SUGGEST_FAMILIES") {
        Ok(names) => names
            .split(',')
            .map(|name| Family::parse(name.trim()).expect("a family name"))
            .filter(|family| set.contains(family))
            .collect(),
        Err(_) => set.to_vec(),
    }
}

fn seeds() -> u64 {
    std::env::var("EBB_SUGGEST_SEEDS")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(4)
}

/// The shortfall limit suggest is held to: 1% unless `EBB_SUGGEST_MAX_SHORTFALL_PCT` says
/// another (what the limit costs a family: its ratio at 1% against its ratio at, say, 3%).
fn max_shortfall_pct() -> f64 {
    std::env::var("EBB_SUGGEST_MAX_SHORTFALL_PCT")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(1.0)
}

/// `family`'s parameters, drawn at `peak` GPUs when given.
fn params_of(family: Family, peak: Option<f64>) -> FamilyParams {
    let params = family.default_params();
    peak.map_or(params, |gpus| params.at_peak(gpus))
}

/// `family`'s 30-day trace for `seed` (at `peak` GPUs when given): a queue trace (the queue
/// column, whole GPUs) when the family is one.
fn trace_of(family: Family, seed: u64, peak: Option<f64>) -> Trace {
    let demand = generate(family, &params_of(family, peak), seed);
    let asked: Vec<Option<f64>> = demand.iter().map(|&gpus| Some(gpus)).collect();
    let trace = Trace::from_demand(demand).unwrap();
    match family.queue_node_gpus() {
        Some(_) => trace.with_column(DEMAND_METRIC, asked).unwrap(),
        None => trace,
    }
}

/// What one trace did out of sample.
struct Outcome {
    ratio: f64,
    shortfall_pct: f64,
    actions_per_day: f64,
    flaps_per_day: f64,
    oracle_flaps_per_day: f64,
    /// At the limit the file named as what the limit costs, when it named one: the ratio,
    /// the shortfall and that limit, out of sample.
    relaxed: Option<(f64, f64, f64)>,
    line: String,
}

fn out_of_sample(family: Family, seed: u64, peak: Option<f64>, entry: &PriceEntry) -> Outcome {
    let full = trace_of(family, seed, peak);
    let node = family.queue_node_gpus().unwrap_or(1);
    let train = full.head(HALF).unwrap();
    let test = full.tail(HALF).unwrap();
    let train_options = ReplayOptions {
        overlay: family.overlay(),
        ..ReplayOptions::default()
    };
    let suggest_at = |limit: f64| {
        suggest_with(
            &train,
            entry,
            &SuggestOptions {
                replay: train_options,
                max_shortfall_pct: limit,
                ..SuggestOptions::default()
            },
            &QueueOptions {
                gpus_per_node: node,
            },
        )
        .unwrap()
    };
    let suggestion = suggest_at(max_shortfall_pct());
    let test_options = ReplayOptions {
        start_ms: HALF as i64 * 60_000,
        ..train_options
    };
    let replay_test = |rules: &ebb_rules::model::RuleSet| {
        let mut policy =
            RulesPolicy::new("rules", rules.clone(), Some(pricing(entry, &test_options)))
                .with_node_gpus(node);
        replay(&test, &mut policy, entry, &test_options).unwrap()
    };
    let replayed = replay_test(&suggestion.rules);
    let unit = unit_minutes(test_options.overlay);
    let flaps = flap_count(&replayed.flapped);
    let window = suggestion.rules.spec().scale_in.release_window_minutes;
    let (released, early, left) = released_early(&replayed.runs, HALF as u32, unit, window);
    let result = replayed.result;
    let mut oracle: Box<dyn Policy> = if node > 1 {
        Box::new(Oracle::new(
            &whole_node_demand(test.demand(), node),
            test_options.warmup_minutes,
            unit,
        ))
    } else {
        baseline("oracle", &test, &test_options, entry).unwrap()
    };
    let oracle = replay(&test, oracle.as_mut(), entry, &test_options).unwrap();
    let oracle_flaps = flap_count(&oracle.flapped);
    let oracle = oracle.result;
    let ratio = result.cost_fen as f64 / oracle.cost_fen as f64;
    // What the limit cost: the rules suggested at the limit the file names, out of sample.
    let relaxed = suggestion.limit_price.as_ref().map(|price| {
        let relaxed = suggest_at(price.allow_pct);
        let out = replay_test(&relaxed.rules).result;
        let ratio = out.cost_fen as f64 / oracle.cost_fen as f64;
        let line = format!(
            " limit price: train cheapest ×{:.3} short {:.2}%, at {}%: ×{ratio:.3} short {:.2}%",
            price.result.cost_fen as f64 / suggestion.oracle.cost_fen as f64,
            price.result.shortfall_pct,
            price.allow_pct,
            out.shortfall_pct
        );
        ((ratio, out.shortfall_pct, price.allow_pct), line)
    });
    let flaps_per_day = flaps as f64 / (HALF as f64 / 1_440.0);
    let oracle_flaps_per_day = oracle_flaps as f64 / (HALF as f64 / 1_440.0);
    let line = format!(
        "  seed {seed}: ×{ratio:.3} short {:.2}% act/day {:.1} flaps/day {flaps_per_day:.2} released early {early}/{released} ({left:.0} min left on average) (train ×{:.3} short {:.2}% flaps/day {:.2}, {} tried, {} folds, {} steps) {:?}",
        result.shortfall_pct,
        result.actions_per_day,
        suggestion.replay.cost_fen as f64 / suggestion.oracle.cost_fen as f64,
        suggestion.replay.shortfall_pct,
        suggestion.flaps_per_day,
        suggestion.candidates,
        suggestion.folds,
        suggestion.recurring.len(),
        suggestion.levers
    ) + relaxed.as_ref().map_or("", |(_, line)| line.as_str());
    Outcome {
        ratio,
        shortfall_pct: result.shortfall_pct,
        actions_per_day: result.actions_per_day,
        flaps_per_day,
        oracle_flaps_per_day,
        relaxed: relaxed.map(|(figures, _)| figures),
        line,
    }
}

/// Flaps: the actions (distinct minutes) with a GPU undone inside its paid unit.
fn flap_count(flapped: &[(u32, u32)]) -> usize {
    let mut minutes: Vec<u32> = flapped.iter().map(|&(minute, _)| minute).collect();
    minutes.dedup();
    minutes.len()
}

/// Of the GPUs a replay released (each GPU's run ended before the trace's `minutes`), how
/// many went with more than `window` minutes of their paid unit left, and how many minutes
/// on average. The replay gives back as the console's placement does (the GPUs whose unit
/// ends, the others kept to their own unit's end), so none should.
fn released_early(
    runs: &[ebb_rules::replay::billing::PaidRun],
    minutes: u32,
    unit: u32,
    window: u32,
) -> (u64, u64, f64) {
    let (mut released, mut early, mut left_sum) = (0u64, 0u64, 0u64);
    for run in runs.iter().filter(|run| run.end_minute < minutes) {
        released += 1;
        let into = (run.end_minute - run.start_minute) % unit.max(1);
        let left = if into == 0 { 0 } else { unit - into };
        if left > window {
            early += 1;
            left_sum += u64::from(left);
        }
    }
    (released, early, left_sum as f64 / early.max(1) as f64)
}

fn quality_section(title: &str, families: &[Family]) {
    quality_section_at(title, families, None);
}

/// [`quality_section`], each family drawn at `peak` GPUs when given.
fn quality_section_at(title: &str, families: &[Family], peak: Option<f64>) {
    let catalog = Catalog::demo();
    let entry = catalog.find("A100", "cn-north").unwrap();
    let verbose = std::env::var_os("EBB_SUGGEST_VERBOSE").is_some();
    let seeds = seeds();
    println!(
        "suggest out of sample, {title}: rules from days 1-15, replayed on days 16-30, {seeds} seeds a family"
    );
    println!(
        "{:<18} {:>8} {:>8} {:>10} {:>9} {:>10} {:>11}",
        "FAMILY", "×ORACLE", "WORST ×", "MAX SHORT", "ACT/DAY", "FLAPS/DAY", "ORACLE FL."
    );
    let mut log_sum = 0.0;
    let mut traces = 0u32;
    let mut worst_family: (f64, &str) = (0.0, "");
    let mut worst_shortfall: (f64, &str) = (0.0, "");
    let mut worst_flaps: (f64, &str) = (0.0, "");
    for &family in families {
        let mut family_log = 0.0;
        let (mut worst_ratio, mut max_short, mut max_actions, mut max_flaps) =
            (0.0f64, 0.0f64, 0.0f64, 0.0f64);
        let mut oracle_flaps = 0.0f64;
        let mut relaxed: Vec<(f64, f64, f64)> = Vec::new();
        for seed in 1..=seeds {
            let outcome = out_of_sample(family, 1_000 + seed * 7_919, peak, entry);
            family_log += outcome.ratio.ln();
            log_sum += outcome.ratio.ln();
            traces += 1;
            worst_ratio = worst_ratio.max(outcome.ratio);
            max_short = max_short.max(outcome.shortfall_pct);
            max_actions = max_actions.max(outcome.actions_per_day);
            max_flaps = max_flaps.max(outcome.flaps_per_day);
            oracle_flaps = oracle_flaps.max(outcome.oracle_flaps_per_day);
            relaxed.extend(outcome.relaxed);
            if verbose {
                println!("{}", outcome.line);
            }
        }
        let geomean = (family_log / seeds as f64).exp();
        if geomean > worst_family.0 {
            worst_family = (geomean, family.name());
        }
        if max_short > worst_shortfall.0 {
            worst_shortfall = (max_short, family.name());
        }
        if max_flaps > worst_flaps.0 {
            worst_flaps = (max_flaps, family.name());
        }
        println!(
            "{:<18} {:>8.3} {:>8.3} {:>9.2}% {:>9.1} {:>10.2} {:>11.2}",
            family.name(),
            geomean,
            worst_ratio,
            max_short,
            max_actions,
            max_flaps,
            oracle_flaps
        );
        if !relaxed.is_empty() {
            let most = |of: fn(&(f64, f64, f64)) -> f64| relaxed.iter().map(of).fold(0.0, f64::max);
            let least = relaxed.iter().map(|r| r.2).fold(f64::MAX, f64::min);
            let log_mean = relaxed.iter().map(|r| r.0.ln()).sum::<f64>() / relaxed.len() as f64;
            println!(
                "  {} of {seeds}: the file said what the limit costs; at the limit it named ({least:.1}–{:.1}%): geomean ×{:.3}, worst ×{:.3}, shortfall ≤ {:.2}%",
                relaxed.len(),
                most(|r| r.2),
                log_mean.exp(),
                most(|r| r.0),
                most(|r| r.1),
            );
        }
    }
    println!(
        "geomean ×oracle over {traces} traces: {:.3} (goal ≤ 1.00); worst family {:.3} ({}; goal ≤ 1.05); worst shortfall {:.2}% ({}; goal ≤ 1%); most flaps {:.2}/day ({}; goal ≤ 1)",
        (log_sum / f64::from(traces)).exp(),
        worst_family.0,
        worst_family.1,
        worst_shortfall.0,
        worst_shortfall.1,
        worst_flaps.0,
        worst_flaps.1
    );
}

/// `suggest` on a 30-day trace, goal ≤ 10 s; on an 800-GPU pool's, and `replay` of it,
/// goal ≤ 200 ms.
fn speed_section(families: &[Family]) {
    let catalog = Catalog::demo();
    let entry = catalog.find("A100", "cn-north").unwrap();
    let mut worst = Duration::ZERO;
    for &family in families {
        let trace = Trace::from_demand(generate(family, &family.default_params(), 1)).unwrap();
        let options = SuggestOptions {
            replay: ReplayOptions {
                overlay: family.overlay(),
                ..ReplayOptions::default()
            },
            ..SuggestOptions::default()
        };
        let started = Instant::now();
        let suggestion = suggest(&trace, entry, &options).unwrap();
        let elapsed = started.elapsed();
        worst = worst.max(elapsed);
        println!(
            "suggest 43,200 min {:<18} {:>7.2} s  ({} rule sets replayed)",
            family.name(),
            elapsed.as_secs_f64(),
            suggestion.candidates
        );
    }
    println!("suggest: worst {:.2} s (goal ≤ 10 s)", worst.as_secs_f64());

    // An 800-GPU pool: the large-pool family scaled so its 30 days peak at 800 busy GPUs.
    let demand = generate(Family::LargePool, &Family::LargePool.default_params(), 1);
    let top = demand.iter().copied().fold(0.0, f64::max);
    let demand: Vec<f64> = demand.iter().map(|gpus| gpus * 800.0 / top).collect();
    let trace = Trace::from_demand(demand).unwrap();
    let options = SuggestOptions::default();
    let started = Instant::now();
    let suggestion = suggest(&trace, entry, &options).unwrap();
    let suggested = started.elapsed();
    let mut best = Duration::MAX;
    for _ in 0..5 {
        let mut policy = RulesPolicy::new(
            "rules",
            suggestion.rules.clone(),
            Some(pricing(entry, &options.replay)),
        );
        let started = Instant::now();
        let replayed = replay(&trace, &mut policy, entry, &options.replay).unwrap();
        best = best.min(started.elapsed());
        std::hint::black_box(replayed);
    }
    println!(
        "suggest 43,200 min 800-GPU pool (peak {}) {:>7.2} s  ({} rule sets replayed; goal ≤ 10 s)",
        trace.peak_gpus(),
        suggested.as_secs_f64(),
        suggestion.candidates
    );
    println!(
        "replay  43,200 min 800-GPU pool, suggested rules {:>7.1} ms  (best of 5; goal ≤ 200 ms)",
        best.as_secs_f64() * 1e3
    );
}
