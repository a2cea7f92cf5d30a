//! `suggest`, judged out of sample, and how fast it is.
//!
//! `cargo bench -p ebb-rules --bench suggest` (release build, std `Instant`, no harness).
//! `EBB_SUGGEST_SEEDS=N` sets the seeds per family (default 4); `EBB_SUGGEST_VERBOSE=1`
//! prints each trace's levers; `EBB_SUGGEST_FAMILIES=steady,steps-10m` runs only those
//! families (both sections); `EBB_SUGGEST_SPEED=0` skips the speed section.
//!
//! Quality: for every family and seed, a 30-day trace; rules are suggested from its first
//! 15 days and replayed on the last 15 (the wall clock continuing, so schedules land where
//! they would), against the oracle on the same half with the same billing. Per family: the
//! cost ÷ the oracle's (geomean over the seeds), the worst shortfall, the most actions a
//! day; then the geomean over every trace. The goal: geomean ≤ 1.01, shortfall ≤ 1% on
//! every trace, ≤ 3 actions a day on steady load (`steady` and the AR(1) families).
//!
//! Speed: `suggest` on a 30-day trace of each family (goal ≤ 10 s), and on an 800-GPU
//! pool's (the `large-pool` family at 400–800 busy GPUs, goal ≤ 10 s), and `replay` of the
//! suggested rules on that pool's 30 days (goal ≤ 200 ms).

use ebb_cost::Catalog;
use ebb_rules::replay::baselines::{baseline, pricing};
use ebb_rules::replay::families::{Family, generate};
use ebb_rules::replay::trace::Trace;
use ebb_rules::replay::{ReplayOptions, replay};
use ebb_rules::rules_policy::RulesPolicy;
use ebb_rules::suggest::{SuggestOptions, suggest};
use std::time::{Duration, Instant};

const HALF: usize = 15 * 1_440;

fn main() {
    quality_section();
    if std::env::var("EBB_SUGGEST_SPEED").as_deref() != Ok("0") {
        speed_section();
    }
}

/// The families run: every one, or those `EBB_SUGGEST_FAMILIES` names.
fn families() -> Vec<Family> {
    match std::env::var("EBB_SUGGEST_FAMILIES") {
        Ok(names) => names
            .split(',')
            .map(|name| Family::parse(name.trim()).expect("a family name"))
            .collect(),
        Err(_) => Family::ALL.to_vec(),
    }
}

fn seeds() -> u64 {
    std::env::var("EBB_SUGGEST_SEEDS")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(4)
}

fn quality_section() {
    let catalog = Catalog::demo();
    let entry = catalog.find("A100", "cn-north").unwrap();
    let verbose = std::env::var_os("EBB_SUGGEST_VERBOSE").is_some();
    let seeds = seeds();
    println!(
        "suggest out of sample: rules from days 1-15, replayed on days 16-30, {seeds} seeds a family"
    );
    println!(
        "{:<18} {:>8} {:>8} {:>10} {:>9} {:>8}",
        "FAMILY", "×ORACLE", "WORST ×", "MAX SHORT", "ACT/DAY", "TRAIN S%"
    );
    let mut log_sum = 0.0;
    let mut traces = 0u32;
    let mut worst_shortfall: (f64, &str) = (0.0, "");
    let mut steady_actions = 0.0f64;
    // The first eight families (before issue 30's) and the rest, each set's geomean.
    let mut set_logs = [(0.0f64, 0u32); 2];
    for family in families() {
        let mut family_log = 0.0;
        let mut worst_ratio = 0.0f64;
        let mut max_short = 0.0f64;
        let mut max_actions = 0.0f64;
        let mut max_train_short = 0.0f64;
        for seed in 1..=seeds {
            let seed = 1_000 + seed * 7_919;
            let full =
                Trace::from_demand(generate(family, &family.default_params(), seed)).unwrap();
            let train = full.head(HALF).unwrap();
            let test = full.tail(HALF).unwrap();
            let train_options = ReplayOptions {
                overlay: family.overlay(),
                ..ReplayOptions::default()
            };
            let suggestion = suggest(
                &train,
                entry,
                &SuggestOptions {
                    replay: train_options,
                    ..SuggestOptions::default()
                },
            )
            .unwrap();
            let test_options = ReplayOptions {
                start_ms: HALF as i64 * 60_000,
                ..train_options
            };
            let mut policy = RulesPolicy::new(
                "rules",
                suggestion.rules.clone(),
                Some(pricing(entry, &test_options)),
            );
            let result = replay(&test, &mut policy, entry, &test_options)
                .unwrap()
                .result;
            let mut oracle = baseline("oracle", &test, &test_options, entry).unwrap();
            let oracle = replay(&test, oracle.as_mut(), entry, &test_options)
                .unwrap()
                .result;
            let ratio = result.cost_fen as f64 / oracle.cost_fen as f64;
            family_log += ratio.ln();
            log_sum += ratio.ln();
            let set = usize::from(Family::ALL.iter().position(|f| *f == family) >= Some(8));
            set_logs[set].0 += ratio.ln();
            set_logs[set].1 += 1;
            traces += 1;
            worst_ratio = worst_ratio.max(ratio);
            max_short = max_short.max(result.shortfall_pct);
            max_actions = max_actions.max(result.actions_per_day);
            max_train_short = max_train_short.max(suggestion.replay.shortfall_pct);
            if result.shortfall_pct > worst_shortfall.0 {
                worst_shortfall = (result.shortfall_pct, family.name());
            }
            if family.is_steady() {
                steady_actions = steady_actions.max(result.actions_per_day);
            }
            if verbose {
                println!(
                    "  seed {seed}: ×{ratio:.3} short {:.2}% act/day {:.1} (train ×{:.3} short {:.2}%, {} tried, {} steps) {:?}",
                    result.shortfall_pct,
                    result.actions_per_day,
                    suggestion.replay.cost_fen as f64 / suggestion.oracle.cost_fen as f64,
                    suggestion.replay.shortfall_pct,
                    suggestion.candidates,
                    suggestion.recurring.len(),
                    suggestion.levers
                );
            }
        }
        println!(
            "{:<18} {:>8.3} {:>8.3} {:>9.2}% {:>9.1} {:>7.2}%",
            family.name(),
            (family_log / seeds as f64).exp(),
            worst_ratio,
            max_short,
            max_actions,
            max_train_short
        );
    }
    println!(
        "geomean ×oracle over {traces} traces: {:.3} (goal ≤ 1.01); worst shortfall {:.2}% ({}; goal ≤ 1%); steady {:.1} actions/day (goal ≤ 3)",
        (log_sum / f64::from(traces)).exp(),
        worst_shortfall.0,
        worst_shortfall.1,
        steady_actions
    );
    for (name, (logs, count)) in ["first 8 families", "issue-30 families"]
        .iter()
        .zip(set_logs)
    {
        if count > 0 {
            println!(
                "geomean ×oracle, {name}: {:.3} over {count} traces",
                (logs / f64::from(count)).exp()
            );
        }
    }
}

/// `suggest` on a 30-day trace, goal ≤ 10 s; on an 800-GPU pool's, and `replay` of it,
/// goal ≤ 200 ms.
fn speed_section() {
    let catalog = Catalog::demo();
    let entry = catalog.find("A100", "cn-north").unwrap();
    let mut worst = Duration::ZERO;
    for family in families() {
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
