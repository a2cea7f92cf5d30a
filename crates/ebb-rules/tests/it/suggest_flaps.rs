//! Suggest's third pass: flaps counted from a held series, the learning trace's folds and
//! the regret they choose by, a step whose start drifts, a queue trace replayed in whole
//! nodes, and the families no search was tuned to.

use ebb_cost::Catalog;
use ebb_rules::replay::baselines::pricing;
use ebb_rules::replay::families::{Family, FamilyParams, generate};
use ebb_rules::replay::replay;
use ebb_rules::replay::trace::Trace;
use ebb_rules::rules_policy::RulesPolicy;
use ebb_rules::suggest::flaps::{count_in, flap_minutes, flapped_gpus};
use ebb_rules::suggest::folds::{bounds, mean_ratios};
use ebb_rules::suggest::queue::{DEMAND_METRIC, whole_node_demand};
use ebb_rules::suggest::seasonal::recurring_steps;
use ebb_rules::suggest::{QueueOptions, SuggestOptions, suggest_with};
use ebb_wire::suggest::SuggestNote;

fn held(runs: &[(u32, usize)]) -> Vec<u32> {
    runs.iter()
        .flat_map(|&(gpus, minutes)| std::iter::repeat_n(gpus, minutes))
        .collect()
}

#[test]
fn a_flap_is_an_action_undone_inside_the_unit_it_paid_for() {
    // A GPU rented at minute 5 and released at 55, inside its first hour: the scale-out at
    // 5 is undone.
    let series = held(&[(2, 5), (3, 50), (2, 100)]);
    assert_eq!(flap_minutes(&series, 2, 60), vec![5]);
    // Held 70 minutes (into its second hour), then rented again at 140, after the 130 it
    // had paid to: no flap either way.
    let series = held(&[(2, 10), (3, 70), (2, 60), (3, 30)]);
    assert_eq!(flap_minutes(&series, 2, 60), Vec::<u32>::new());
    // The third GPU, held from before the trace, released at 100 (paid to 120) and rented
    // again at 110: the release is undone; released again at 130, 20 minutes into its new
    // hour: the rent at 110 is undone too.
    let series = held(&[(3, 100), (2, 10), (3, 20), (2, 30)]);
    assert_eq!(flap_minutes(&series, 3, 60), vec![100, 110]);
    // Billed by the day, the same moves are flaps a day long.
    let series = held(&[(2, 10), (3, 70), (2, 60), (3, 30)]);
    assert_eq!(flap_minutes(&series, 2, 1_440), vec![10, 80]);
    // Three GPUs in one undone scale-out: one flap of three GPUs.
    let series = held(&[(1, 10), (4, 20), (1, 40)]);
    let flapped = flapped_gpus(&series, 1, 60);
    assert_eq!(count_in(&flapped, 0, 70), (1, 3));
    assert_eq!(count_in(&flapped, 11, 70), (0, 0));
}

#[test]
fn folds_cover_the_learning_days_and_regret_is_read_fold_by_fold() {
    let day = 1_440;
    // 15 days: five folds of three days, in order, covering every minute.
    let folds = bounds(15 * day + 30);
    assert_eq!(folds.len(), 5);
    assert_eq!(folds[0], (0, 3 * day));
    assert_eq!(folds[4], (12 * day, 15 * day + 30));
    assert!(folds.windows(2).all(|pair| pair[0].1 == pair[1].0));
    // Under two folds' worth of days: the whole trace, one fold.
    assert_eq!(bounds(5 * day), vec![(0, 5 * day)]);
    // 30 days: at most five folds, of six days.
    assert_eq!(bounds(30 * day).len(), 5);
    // One candidate cheapest on the first fold and dear on the second, another the other
    // way round, a third near the cheapest on both: the third has the least mean regret,
    // though its total is not the least.
    let ratios = mean_ratios(&[vec![100, 200], vec![200, 100], vec![110, 110]]);
    assert_eq!(ratios.len(), 3);
    assert!((ratios[0] - 1.5).abs() < 1e-9 && (ratios[1] - 1.5).abs() < 1e-9);
    assert!((ratios[2] - 1.1).abs() < 1e-9);
}

#[test]
fn a_weekday_batch_whose_start_drifts_is_one_weekday_step() {
    let params = FamilyParams {
        days: 15,
        ..Family::WeekdayBatchDrift.default_params()
    };
    let demand = generate(Family::WeekdayBatchDrift, &params, 5);
    // The start does drift: the first minute above half the batch differs day to day.
    let starts: Vec<usize> = demand
        .chunks(1_440)
        .filter_map(|day| day.iter().position(|&gpus| gpus > 25.0))
        .collect();
    assert!(starts.iter().all(|m| (510..=570).contains(m)), "{starts:?}");
    assert!(starts.iter().max() > starts.iter().min(), "{starts:?}");
    let steps = recurring_steps(&demand, 0, 5);
    assert_eq!(steps.len(), 1, "{steps:?}");
    let step = &steps[0];
    assert_eq!(step.weekdays, Some(vec![1, 2, 3, 4, 5]), "{step:?}");
    // From a warmup before the earliest start to after the latest.
    let earliest = *starts.iter().min().unwrap() as u32;
    let latest = *starts.iter().max().unwrap() as u32;
    assert!(step.start_minute_of_day + 5 <= earliest, "{step:?}");
    assert!(
        step.start_minute_of_day + step.duration_minutes > latest,
        "{step:?}"
    );
}

/// `days` of the `queue-bursts` stand-in for `seed`, as a queue trace: its demand is also
/// its `slurm_demand_gpus`.
fn queue_bursts(days: u32, seed: u64) -> Trace {
    let params = FamilyParams {
        days,
        ..Family::QueueBursts.default_params()
    };
    let demand = generate(Family::QueueBursts, &params, seed);
    let asked = demand.iter().map(|&gpus| Some(gpus)).collect();
    Trace::from_demand(demand)
        .unwrap()
        .with_column(DEMAND_METRIC, asked)
        .unwrap()
}

#[test]
fn a_queue_trace_of_nodes_is_replayed_in_whole_nodes() {
    let catalog = Catalog::demo();
    let entry = catalog.find("A100", "cn-north").unwrap();
    let trace = queue_bursts(4, 11);
    let demand = trace.demand().to_vec();
    assert!(demand.iter().all(|gpus| gpus.fract() == 0.0));
    assert!(demand.iter().any(|&gpus| gpus >= 8.0));
    let options = SuggestOptions {
        max_shortfall_pct: 5.0,
        ..SuggestOptions::default()
    };
    let suggestion =
        suggest_with(&trace, entry, &options, &QueueOptions { gpus_per_node: 8 }).unwrap();
    let mut policy = RulesPolicy::new(
        "rules",
        suggestion.rules.clone(),
        Some(pricing(entry, &options.replay)),
    )
    .with_node_gpus(8);
    let replayed = replay(&trace, &mut policy, entry, &options.replay).unwrap();
    assert_eq!(replayed.result, suggestion.replay);
    // Every count the rules moved to is whole nodes, but for the GPUs held before minute 0
    // (a part of a node, rented before the trace, kept to their own hour's end and given
    // back then, apart from the node's GPUs the rules rented to complete it).
    let moved: Vec<u32> = (0..trace.minutes())
        .filter(|&t| replayed.series.decision(t) != 0)
        .map(|t| replayed.series.held[t])
        .collect();
    assert!(!moved.is_empty());
    let part = replayed.series.initial_gpus % 8;
    assert!(
        moved
            .iter()
            .all(|gpus| [0, part, (8 - part) % 8].contains(&(gpus % 8))),
        "{moved:?}"
    );

    // The oracle it is read against needs whole nodes too.
    let nodes = whole_node_demand(&demand, 8);
    assert!(nodes.iter().all(|gpus| gpus % 8.0 == 0.0));
    assert!(
        nodes
            .iter()
            .zip(&demand)
            .all(|(n, d)| n >= d && n - d < 8.0)
    );
    assert!(
        suggestion.file.contains("flaps a day"),
        "{}",
        suggestion.file
    );
}

#[test]
fn the_families_no_search_was_tuned_to_are_apart_and_have_their_shapes() {
    for family in Family::UNSEEN {
        assert!(!Family::ALL.contains(&family), "{}", family.name());
        assert_eq!(Family::parse(family.name()), Some(family));
        let params = family.default_params();
        let first = generate(family, &params, 7);
        assert_eq!(first, generate(family, &params, 7), "{}", family.name());
        assert_ne!(first, generate(family, &params, 8), "{}", family.name());
        assert_eq!(first.len(), 30 * 1_440, "{}", family.name());
        assert!(first.iter().all(|gpus| gpus.is_finite() && *gpus >= 0.0));
    }
    assert_eq!(Family::QueueBursts.queue_node_gpus(), Some(8));
    assert_eq!(Family::TrainingCluster.queue_node_gpus(), None);
    // A training cluster of about 700 GPUs that drifts: its daily means move, within its
    // range.
    let cluster = generate(
        Family::TrainingCluster,
        &Family::TrainingCluster.default_params(),
        3,
    );
    let means: Vec<f64> = cluster
        .chunks(1_440)
        .map(|day| day.iter().sum::<f64>() / day.len() as f64)
        .collect();
    assert!(
        means.iter().all(|m| (560.0..860.0).contains(m)),
        "{means:?}"
    );
    let spread = means.iter().copied().fold(f64::MIN, f64::max)
        - means.iter().copied().fold(f64::MAX, f64::min);
    assert!(spread > 20.0, "{means:?}");
    // The queue is idle (a GPU or none) for long stretches.
    let queue = generate(
        Family::QueueBursts,
        &Family::QueueBursts.default_params(),
        3,
    );
    let idle = queue.iter().filter(|&&gpus| gpus <= 1.0).count();
    assert!(idle > queue.len() / 2, "{idle}");
}

/// A small queue idle for hours between sudden 8-GPU jobs: within a 1% limit only a node
/// kept warm ahead of jobs no rule sees coming meets it. The file says what that costs, and
/// the limit it names lets the search choose rules about as cheap as the cheapest it tried.
#[test]
fn what_the_limit_costs_is_said_and_the_limit_it_names_allows_it() {
    let catalog = Catalog::demo();
    let entry = catalog.find("A100", "cn-north").unwrap();
    let trace = queue_bursts(6, 3);
    let nodes = QueueOptions { gpus_per_node: 8 };
    let strict = suggest_with(&trace, entry, &SuggestOptions::default(), &nodes).unwrap();
    let price = strict.limit_price.clone().expect("the limit's price");
    assert!(
        strict.replay.cost_fen as f64 >= 1.2 * price.result.cost_fen as f64,
        "{:?} {price:?}",
        strict.replay
    );
    assert!(price.result.shortfall_pct > 0.5, "{price:?}");
    assert!(
        price.allow_pct >= 2.0 * price.result.shortfall_pct,
        "{price:?}"
    );
    let said = format!("--max-shortfall-pct {}", price.allow_pct);
    assert!(
        strict.file.contains("What the 1% limit costs"),
        "{}",
        strict.file
    );
    assert!(strict.file.contains(&said), "{}", strict.file);
    assert!(
        strict.file.contains("jobs waiting for their nodes"),
        "{}",
        strict.file
    );
    assert!(
        strict.notes.iter().any(|note| matches!(
            note,
            SuggestNote::LimitPrice { allow_pct, queue: true, .. } if *allow_pct == price.allow_pct
        )),
        "{:?}",
        strict.notes
    );

    let relaxed = suggest_with(
        &trace,
        entry,
        &SuggestOptions {
            max_shortfall_pct: price.allow_pct,
            ..SuggestOptions::default()
        },
        &nodes,
    )
    .unwrap();
    assert!(relaxed.within_limit);
    assert!(
        relaxed.replay.cost_fen as f64 <= 1.05 * price.result.cost_fen as f64,
        "{:?} {price:?}",
        relaxed.replay
    );
}
