//! A rule file replayed for a pool before it is enabled, and a rule file suggested for it,
//! through the console: the pool's recorded history (refused, naming `trace`, while it is
//! too short) or a trace the operator gave, priced as the enforcer prices the pool.

use ebb_agent::GpuModel;
use ebb_charts::chart::ReplayChartLabels;
use ebb_charts::history::PoolSample;
use ebb_core::clock::ManualClock;
use ebb_core::pool_history::PoolHistory;
use ebb_core::rules_replay::{
    REPLAY_BASELINES, ReplayChart, ReplayError, parse_source, replay_price, replay_report,
    trace_from_csv,
};
use ebb_testkit::{TestConsole, TestFleet};
use ebb_wire::ipc::ChartTheme;
use ebb_wire::replay::ReplaySource;
use std::sync::Arc;

const NOW_MS: i64 = 1_800_000_000_000;

const RULES: &str = r#"
[limits]
min_gpus = 1
max_gpus = 4

[[threshold]]
name = "out"
metric = "busy_gpus"
op = ">="
value = 2
for_minutes = 2
action = "+1"
cooldown_minutes = 5
"#;

const CHART: ReplayChart<'static> = ReplayChart {
    theme: ChartTheme::Light,
    width_px: 800,
    height_px: 280,
    labels: ReplayChartLabels {
        demand: "demand",
        ready: "ready",
        held: "held",
        scale_out: "scale-out",
        scale_in: "scale-in",
        day: "day {n}",
    },
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_runs_on_the_pools_history_or_a_trace_and_a_short_history_is_refused() {
    let fleet = TestFleet::builder()
        .hosts(1)
        .gpus_per_host(4)
        .model(GpuModel::A100)
        .start()
        .await;
    let console = TestConsole::builder("rules-replay")
        .fleet(&fleet)
        .clock(Arc::new(ManualClock::new(NOW_MS)))
        .open()
        .await;
    console
        .create_pool(&crate::pool_input(
            "burst",
            "A100",
            vec![fleet.hosts()[0].region.clone()],
            4,
        ))
        .await
        .unwrap();

    // A new pool has (almost) no history: refused, naming the trace.
    match console.replay_rules("burst", RULES, None, CHART).await {
        Err(ReplayError::Invalid { field, .. }) => assert_eq!(field, "trace"),
        other => panic!("{other:?}"),
    }
    match console.suggest_rules("burst", None, None, None).await {
        Err(ReplayError::Invalid { field, .. }) => assert_eq!(field, "trace"),
        other => panic!("{other:?}"),
    }
    // A limit that is not a percentage is refused, naming it, before anything is read.
    for wrong in [0.0, -1.0, 100.5, f64::NAN] {
        match console
            .suggest_rules("burst", None, None, Some(wrong))
            .await
        {
            Err(ReplayError::Invalid { field, message, .. }) => {
                assert_eq!(field, "max_shortfall_pct");
                assert!(message.contains("percentage above 0"), "{message}");
            }
            other => panic!("{wrong}: {other:?}"),
        }
    }

    // An hour recorded before now: 2 GPUs, busy 50% then 100%.
    let pool = console.pool_store().get("burst").await.unwrap();
    let history = PoolHistory::new(console.pool_store().db().clone());
    for minute in 0..60 {
        let look = PoolSample {
            at_ms: NOW_MS - (60 - minute) * 60_000,
            desired: 2,
            ready: 2,
            warming: 0,
            util_pct: Some(if minute < 30 { 50.0 } else { 100.0 }),
        };
        history.record(&[(pool.id.clone(), look)]).await.unwrap();
    }
    let replayed = console
        .replay_rules("burst", RULES, None, CHART)
        .await
        .unwrap();
    assert_eq!(
        replayed.source,
        ReplaySource::History {
            from_ms: NOW_MS - 60 * 60_000
        }
    );
    assert!(replayed.minutes >= 60, "{}", replayed.minutes);
    assert_eq!(replayed.peak_demand_gpus, 2);
    let names: Vec<&str> = replayed
        .report
        .baselines
        .iter()
        .map(|result| result.policy.as_str())
        .collect();
    assert_eq!(names, REPLAY_BASELINES);
    assert!(replayed.chart_svg.starts_with("<svg") && replayed.chart_svg.contains("held"));
    assert!(
        replayed.report.rules.actions > 0,
        "busy 2 for 2 minutes: +1"
    );

    // A trace the operator gave: the engine's numbers, priced as the pool.
    let csv = "minute,demand\n".to_string()
        + &(0..120)
            .map(|t| format!("{t},{}", if (40..80).contains(&t) { 3.5 } else { 0.8 }))
            .collect::<Vec<_>>()
            .join("\n");
    let replayed = console
        .replay_rules("burst", RULES, Some(&csv), CHART)
        .await
        .unwrap();
    assert_eq!(replayed.source, ReplaySource::Trace);
    assert_eq!(replayed.minutes, 120);
    let (entry, options) = replay_price(&pool, &console.catalog(), 0).unwrap();
    let (report, _) = replay_report(
        &trace_from_csv(&csv).unwrap(),
        parse_source(RULES).unwrap(),
        &entry,
        &options,
    )
    .unwrap();
    assert_eq!(replayed.report, report);
    assert_eq!(
        (replayed.model.as_str(), replayed.region.as_str()),
        (entry.model.as_str(), entry.region.as_str())
    );

    // A broken trace names its line; a broken rule file its field.
    match console
        .replay_rules("burst", RULES, Some("minute,demand\n0,1\n1,-4\n"), CHART)
        .await
    {
        Err(ReplayError::Invalid { field, line, .. }) => {
            assert_eq!((field.as_str(), line), ("trace", Some(3)));
        }
        other => panic!("{other:?}"),
    }
    match console
        .replay_rules("burst", &RULES.replace("+1", "lots"), Some(&csv), CHART)
        .await
    {
        Err(ReplayError::Invalid { field, .. }) => assert_eq!(field, "threshold[0].action"),
        other => panic!("{other:?}"),
    }

    // A suggestion from the same trace: a valid file within the pool's range.
    let file = console
        .suggest_rules("burst", Some(&csv), Some(RULES), None)
        .await
        .unwrap()
        .file;
    let rules = ebb_rules::model::parse(&file).unwrap();
    assert!(rules.spec().limits.max_gpus <= 4, "{file}");
    assert_eq!(rules.spec().pool.as_deref(), Some("burst"));
    let lint = console.lint_rules("burst", &file).await.unwrap();
    assert!(lint.valid, "{lint:?}");

    console.shutdown().await;
    fleet.stop().await;
}
