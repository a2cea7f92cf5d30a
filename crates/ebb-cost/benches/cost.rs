//! How fast the cost engine answers: the slider's preview (goal ≤ 1 ms) and the plan
//! comparison with its recommendation over a year of hourly demand (goal ≤ 10 ms).
//!
//! `cargo bench -p ebb-cost --bench cost` (release build, std `Instant`, no harness).

use ebb_cost::{
    Catalog, DemandSeries, OverlayMode, PlanOptions, PoolPlan, Term, compare_plans, optimal_base,
    preview,
};
use std::hint::black_box;
use std::time::{Duration, Instant};

fn main() {
    let catalog = Catalog::demo();

    // The slider: every call looks the entry up and previews a change, as the UI would.
    let plans = [
        PoolPlan {
            base_gpus: 10,
            term: Term::Month,
            overlay: OverlayMode::Hour,
        },
        PoolPlan {
            base_gpus: 8,
            term: Term::Year,
            overlay: OverlayMode::Day,
        },
        PoolPlan {
            base_gpus: 0,
            term: Term::Month,
            overlay: OverlayMode::Spot,
        },
    ];
    let calls = 200_000;
    let mut latencies = Vec::with_capacity(calls);
    for i in 0..calls {
        let plan = &plans[i % plans.len()];
        let to = (i % 100) as u32;
        let started = Instant::now();
        let entry = catalog
            .find(black_box("Ascend 910B"), black_box("cn-south"))
            .unwrap();
        black_box(preview(entry, plan, black_box(12), black_box(to)).unwrap());
        latencies.push(started.elapsed());
    }
    report(
        "preview (catalog lookup + before/after/delta)",
        &mut latencies,
    );

    // A year of tidal hourly demand: a base of 10, a daily evening peak of 30-50, weekend
    // lulls, a Double 11 week at 80.
    let tidal: Vec<u32> = (0..8_760u32)
        .map(|hour| {
            let (day, hour_of_day) = (hour / 24, hour % 24);
            if (310..318).contains(&day) {
                80
            } else if day % 7 >= 5 {
                10 + (hour_of_day >= 20) as u32 * 5
            } else if (19..23).contains(&hour_of_day) {
                30 + (day * 7 + hour_of_day) % 21
            } else if (9..18).contains(&hour_of_day) {
                18 + (day + hour_of_day) % 5
            } else {
                10
            }
        })
        .collect();
    // A stress case: 8,760 hours of pseudo-random demand between 0 and 1,000 GPUs, about as
    // many distinct levels as the engine can meet.
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let noisy: Vec<u32> = (0..8_760)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % 1_001) as u32
        })
        .collect();

    let entry = catalog.find("A100", "cn-north").unwrap();
    let options = PlanOptions {
        term: Term::Month,
        interruptible: true,
    };
    for (name, gpus) in [("tidal, peak 80", tidal), ("random 0-1000", noisy)] {
        let demand = DemandSeries::from_hourly(0, gpus).unwrap();
        let mut times = Vec::new();
        for _ in 0..200 {
            let started = Instant::now();
            black_box(optimal_base(entry, black_box(&demand), Term::Month).unwrap());
            times.push(started.elapsed());
        }
        report(&format!("base optimum, 8,760 hours, {name}"), &mut times);
        let runs = if name.starts_with("tidal") { 100 } else { 10 };
        let mut times = Vec::new();
        for _ in 0..runs {
            let started = Instant::now();
            black_box(compare_plans(entry, black_box(&demand), &options).unwrap());
            times.push(started.elapsed());
        }
        report(
            &format!("plan comparison + recommendation, 8,760 hours, {name}"),
            &mut times,
        );
    }
}

fn report(what: &str, times: &mut [Duration]) {
    times.sort_unstable();
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    println!(
        "{what}: median {:?}, p99 {:?}, max {:?} over {} runs",
        at(0.5),
        at(0.99),
        times[times.len() - 1],
        times.len()
    );
}
