//! How fast the rules engine answers. Each section is its own function called from `main`.
//!
//! `cargo bench -p ebb-rules --bench rules` (release build, std `Instant`, no harness).

use std::hint::black_box;
use std::time::{Duration, Instant};

fn main() {
    replay_section();
}

/// Replay of a 30-day (43,200-minute) trace, goal ≤ 50 ms: the minute loop, the policy and
/// the billing of the held series, for each family with the oracle and static-peak.
fn replay_section() {
    use ebb_cost::Catalog;
    use ebb_rules::replay::baselines::baseline;
    use ebb_rules::replay::families::{Family, generate};
    use ebb_rules::replay::trace::Trace;
    use ebb_rules::replay::{ReplayOptions, replay};

    let catalog = Catalog::demo();
    let entry = catalog.find("A100", "cn-north").unwrap();
    let mut worst = Duration::ZERO;
    for family in Family::ALL {
        let trace = Trace::from_demand(generate(family, &family.default_params(), 1)).unwrap();
        assert_eq!(trace.minutes(), 43_200);
        let options = ReplayOptions {
            overlay: family.overlay(),
            ..ReplayOptions::default()
        };
        for name in ["oracle", "static-peak", "seed-80-30", "hpa"] {
            let runs = 20;
            let mut times = Vec::with_capacity(runs);
            for _ in 0..runs {
                let started = Instant::now();
                let mut policy = baseline(name, &trace, &options, entry).unwrap();
                black_box(replay(black_box(&trace), policy.as_mut(), entry, &options).unwrap());
                times.push(started.elapsed());
            }
            times.sort();
            let median = times[runs / 2];
            worst = worst.max(times[runs - 1]);
            println!(
                "replay 43,200 min {:<18} {:<11} median {:>7.2} ms  max {:>7.2} ms",
                family.name(),
                name,
                median.as_secs_f64() * 1e3,
                times[runs - 1].as_secs_f64() * 1e3
            );
        }
    }
    baseline_table();
    println!(
        "replay: worst {:.2} ms (goal ≤ 50 ms)",
        worst.as_secs_f64() * 1e3
    );
}

/// Each baseline against the oracle per family (seed 1): cost ratio, shortfall, actions.
fn baseline_table() {
    use ebb_cost::Catalog;
    use ebb_rules::replay::baselines::{BASELINES, baseline};
    use ebb_rules::replay::families::{Family, generate};
    use ebb_rules::replay::trace::Trace;
    use ebb_rules::replay::{ReplayOptions, replay};

    let catalog = Catalog::demo();
    let entry = catalog.find("A100", "cn-north").unwrap();
    println!(
        "\n{:<18} {:<11} {:>8} {:>9} {:>8}",
        "FAMILY", "POLICY", "×ORACLE", "SHORT %", "ACT/DAY"
    );
    let mut log_ratio = [0.0f64; BASELINES.len()];
    for family in Family::ALL {
        let trace = Trace::from_demand(generate(family, &family.default_params(), 1)).unwrap();
        let options = ReplayOptions {
            overlay: family.overlay(),
            ..ReplayOptions::default()
        };
        let results: Vec<_> = BASELINES
            .iter()
            .map(|name| {
                let mut policy = baseline(name, &trace, &options, entry).unwrap();
                replay(&trace, policy.as_mut(), entry, &options)
                    .unwrap()
                    .result
            })
            .collect();
        let oracle = results.last().unwrap().cost_fen as f64;
        for (i, result) in results.iter().enumerate() {
            let ratio = result.cost_fen as f64 / oracle;
            log_ratio[i] += ratio.ln();
            println!(
                "{:<18} {:<11} {:>8.3} {:>8.2}% {:>8.1}",
                family.name(),
                result.policy,
                ratio,
                result.shortfall_pct,
                result.actions_per_day
            );
        }
    }
    for (name, sum) in BASELINES.iter().zip(log_ratio) {
        println!(
            "geomean ×oracle {:<11} {:.3}",
            name,
            (sum / Family::ALL.len() as f64).exp()
        );
    }
}
