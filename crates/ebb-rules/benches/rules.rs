//! How fast the rules engine answers. Each section is its own function called from `main`.
//!
//! `cargo bench -p ebb-rules --bench rules` (release build, std `Instant`, no harness).

use std::hint::black_box;
use std::time::{Duration, Instant};

fn main() {
    // `cargo bench -p ebb-rules --bench rules -- decide` runs only the sections named.
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let wanted = |name: &str| only.is_empty() || only.iter().any(|o| name.contains(o.as_str()));
    if wanted("decide") {
        decide_section();
    }
    if wanted("replay") {
        replay_section();
    }
    if wanted("spot") {
        spot_section();
    }
}

/// Replay with spot: a 30-day trace with interruptions, goal ≤ 50 ms; then per family, the
/// seed's rule all on demand beside it with half the GPUs on spot and the breaker, spot
/// priced by the seeded market (30–40% of the hour price) at 1%, 5% and 10% interruptions
/// per spot GPU-hour (notice 2 min, warmup 5).
fn spot_section() {
    use ebb_cost::Catalog;
    use ebb_rules::replay::baselines::baseline;
    use ebb_rules::replay::families::{Family, generate};
    use ebb_rules::replay::spot::{SpotModel, SpotReplay};
    use ebb_rules::replay::trace::Trace;
    use ebb_rules::replay::{ReplayOptions, replay, replay_spot};
    use ebb_wire::pools::SpotMix;

    let catalog = Catalog::demo();
    let entry = catalog.find("A100", "cn-north").unwrap();
    let spot_for = |rate: f64| SpotReplay {
        mix: SpotMix {
            on_demand_floor: 0,
            spot_pct: 50,
            max_price_fen: None,
        },
        model: Some(SpotModel {
            rate_per_gpu_hour: rate,
            seed: 1,
        }),
        ..SpotReplay::default()
    };
    let market = |demand: Vec<f64>, rate: f64| {
        let model = SpotModel {
            rate_per_gpu_hour: rate,
            seed: 1,
        };
        let prices = model.spot_prices_fen(demand.len(), entry.hour);
        Trace::from_demand(demand)
            .unwrap()
            .with_spot(Some(prices), None)
            .unwrap()
    };

    let mut worst = Duration::ZERO;
    for family in Family::ALL {
        let trace = market(generate(family, &family.default_params(), 1), 0.10);
        let options = ReplayOptions {
            overlay: family.overlay(),
            ..ReplayOptions::default()
        };
        let runs = 20;
        let mut times = Vec::with_capacity(runs);
        let mut taken = 0;
        for _ in 0..runs {
            let started = Instant::now();
            let mut policy = baseline("seed-80-30", &trace, &options, entry).unwrap();
            let run = replay_spot(
                black_box(&trace),
                policy.as_mut(),
                entry,
                &options,
                &spot_for(0.10),
            )
            .unwrap();
            taken = run.result.interruptions;
            black_box(run);
            times.push(started.elapsed());
        }
        times.sort();
        worst = worst.max(times[runs - 1]);
        println!(
            "spot replay 43,200 min {:<18} seed-80-30 10%: {:>4} interruptions  median {:>7.2} ms  max {:>7.2} ms",
            family.name(),
            taken,
            times[runs / 2].as_secs_f64() * 1e3,
            times[runs - 1].as_secs_f64() * 1e3
        );
    }
    println!(
        "spot replay: worst {:.2} ms (goal ≤ 50 ms)",
        worst.as_secs_f64() * 1e3
    );

    println!(
        "\n{:<18} {:>5} {:<14} {:>14} {:>9} {:>8} {:>6} {:>8}",
        "FAMILY", "RATE", "POOL", "COST", "×ON DEM.", "SHORT %", "INTR.", "SPOT %"
    );
    for family in Family::ALL {
        let options = ReplayOptions {
            overlay: family.overlay(),
            ..ReplayOptions::default()
        };
        let demand = generate(family, &family.default_params(), 1);
        let plain = Trace::from_demand(demand.clone()).unwrap();
        let mut policy = baseline("seed-80-30", &plain, &options, entry).unwrap();
        let on_demand = replay(&plain, policy.as_mut(), entry, &options)
            .unwrap()
            .result;
        let row = |rate: &str, pool: &str, result: &ebb_wire::replay::ReplayResult| {
            let paid =
                result.gpu_hours.overlay + result.gpu_hours.subscribed + result.spot_gpu_hours;
            println!(
                "{:<18} {:>5} {:<14} {:>14} {:>9.3} {:>7.2}% {:>6} {:>7.1}%",
                family.name(),
                rate,
                pool,
                ebb_cost::Money::from_fen(result.cost_fen).to_string(),
                result.cost_fen as f64 / on_demand.cost_fen as f64,
                result.shortfall_pct,
                result.interruptions,
                100.0 * result.spot_gpu_hours as f64 / paid.max(1) as f64,
            );
        };
        row("-", "on demand", &on_demand);
        for rate in [0.01, 0.05, 0.10] {
            let trace = market(demand.clone(), rate);
            let mut policy = baseline("seed-80-30", &trace, &options, entry).unwrap();
            let mix = replay_spot(&trace, policy.as_mut(), entry, &options, &spot_for(rate))
                .unwrap()
                .result;
            row(&format!("{:.0}%", rate * 100.0), "50% spot+brk", &mix);
            // Spot above the base the on-demand bill subscribes (what `ebb cost plan`
            // recommends): spot in place of a subscribed GPU held all month saves little.
            let above = SpotReplay {
                base: on_demand.base_gpus,
                ..spot_for(rate)
            };
            let mut policy = baseline("seed-80-30", &trace, &options, entry).unwrap();
            let mix = replay_spot(&trace, policy.as_mut(), entry, &options, &above)
                .unwrap()
                .result;
            row(&format!("{:.0}%", rate * 100.0), "above base", &mix);
        }
    }
}

/// One decision for 50 pools of 20 rules each (10 thresholds, 6 targets, 4 schedules, two
/// of them cron), with 30 minutes of windows, a price and a budget: goal ≤ 1 ms.
fn decide_section() {
    use ebb_cost::{Catalog, OverlayMode, PoolPlan, Term};
    use ebb_rules::decide::{MetricWindows, PoolState, Pricing, decide};
    use ebb_rules::model::parse;
    use std::fmt::Write as _;

    const NOW: i64 = 1_699_999_980_000;
    let pricing = Pricing::single(
        Catalog::demo().find("A100", "cn-north").unwrap().clone(),
        PoolPlan {
            base_gpus: 4,
            term: Term::Month,
            overlay: OverlayMode::Hour,
        },
    );
    let pools: Vec<_> = (0..50u32)
        .map(|pool| {
            let mut text = String::from(
                "[limits]\nmin_gpus = 2\nmax_gpus = 200\nstep = { out_gpus = 4, out_pct = 100 }\nbudget_per_hour = 2000\n[scale_in]\ndeadband_gpus = 2\ndeadband_minutes = 10\n[[metric]]\nname = \"users\"\nstale_after_minutes = 5\n",
            );
            for i in 0..10u32 {
                let (metric, op, value, action) = match i % 4 {
                    0 => ("gpu_util", ">=", 80 + i, "+20%"),
                    1 => ("gpu_util", "<=", 20 + i, "-30%"),
                    2 => ("mem_util", ">", 85, "+2"),
                    _ => ("users", ">", 100_000, "set 40"),
                };
                let _ = write!(
                    text,
                    "[[threshold]]\nname = \"t{i}\"\nmetric = \"{metric}\"\nop = \"{op}\"\nvalue = {value}\nfor_minutes = {}\naction = \"{action}\"\ncooldown_minutes = 5\n",
                    1 + (i + pool) % 10
                );
            }
            for i in 0..6u32 {
                let metric = ["busy_gpus", "gpu_util", "users"][i as usize % 3];
                let target = [90, 60, 5000][i as usize % 3];
                let _ = write!(
                    text,
                    "[[target]]\nname = \"g{i}\"\nmetric = \"{metric}\"\ntarget = {target}\nscale_out_sustain_minutes = 3\noverload_gpus = 2\n"
                );
            }
            for i in 0..4u32 {
                if i < 2 {
                    let _ = write!(
                        text,
                        "[[schedule]]\nname = \"c{i}\"\ncron = \"0 {} * * *\"\nduration_minutes = 120\ntime_zone = \"Asia/Shanghai\"\nfloor = 10\n",
                        6 + i
                    );
                } else {
                    let _ = write!(
                        text,
                        "[[schedule]]\nname = \"w{i}\"\nstart = 2023-11-1{i}T00:00:00\nend = 2023-11-1{}T00:00:00\ntime_zone = \"Asia/Shanghai\"\nceiling = 150\n",
                        i + 1
                    );
                }
            }
            let rules = parse(&text).unwrap();
            let mut windows = MetricWindows::default();
            for minute in 0..30i64 {
                let at = NOW - (29 - minute) * 60_000;
                let busy = 10.0 + f64::from(pool % 7) + (minute as f64 / 3.0).sin() * 4.0;
                windows.busy_gpus.push(at, busy);
                windows.ready_gpus.push(at, 16.0);
                windows.gpu_util.push(at, (100.0 * busy / 16.0).min(100.0));
                windows.mem_util.push(at, 50.0);
                windows.custom_mut("users").push(at, 60_000.0 + minute as f64 * 100.0);
            }
            let since: Vec<i64> = (0..16).map(|i| NOW - (90 - i * 5) * 60_000).collect();
            (rules, windows, since)
        })
        .collect();
    let rules_per_pool = {
        let spec = pools[0].0.spec();
        spec.thresholds.len() + spec.targets.len() + spec.schedules.len()
    };
    let runs = 2_000;
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        for (rules, windows, since) in &pools {
            let state = PoolState {
                desired_gpus: 16,
                ready_gpus: 16,
                held_gpus: 16,
                warming_gpus: 0,
                held_since_ms: since,
                last_scale_out_ms: Some(NOW - 12 * 60_000),
                last_scale_in_ms: None,
                pricing: Some(&pricing),
                node_gpus: 1,
            };
            black_box(decide(black_box(rules), &state, black_box(windows), NOW));
        }
        times.push(started.elapsed());
    }
    times.sort();
    println!(
        "decide: 50 pools × {rules_per_pool} rules: median {:.3} ms, p99 {:.3} ms, max {:.3} ms (goal ≤ 1 ms)",
        times[runs / 2].as_secs_f64() * 1e3,
        times[runs * 99 / 100].as_secs_f64() * 1e3,
        times[runs - 1].as_secs_f64() * 1e3
    );
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
