//! Rules evaluated live, measured: what one tick of the rules adds to the enforcer's pass.
//!
//! 50 pools × 20 rules each (10 thresholds on GPU utilization, busy GPUs and a custom
//! metric, 6 targets, 2 cron and 2 window schedules, a budget and a deadband), over 1,250
//! hosts × 8 GPUs = 10,000 GPUs all leased (200 a pool), a custom metric pushed for every
//! pool each second; each tick samples every pool from the pass's observations, reads
//! the rules and the pushed metrics from `console.db`, decides and records. The tick runs
//! once a second, so its time per tick is the share of a core it adds to the daemon.
//! Goal: < 0.02 core (20 ms a tick).
//!
//! `cargo bench -p ebb-core --bench rules` (`EBB_BENCH_ROUNDS` sets the ticks, default 60).
// Tests read as their story, start to end: no line budget for them.
#![allow(clippy::too_many_lines)]

use ebb_core::console::{Console, ConsoleOptions, TokenStore};
use ebb_core::rules_live::RulesRunner;
use ebb_reconcile::reconcile::{HostObs, PoolStatus, Seen};
use ebb_wire::agent::Gpu;
use ebb_wire::plan::{OverlayMode, Term};
use ebb_wire::pools::{PlacementPolicy, PoolInput, PoolLeaseState, PoolLeaseView};
use ebb_wire::rules::{MetricPush, RulesMode};
use std::fmt::Write as _;
use std::time::{Duration, Instant};

const POOLS: usize = 50;
const HOSTS: usize = 1_250;
const GPUS_PER_HOST: usize = 8;

fn rule_file(pool: &str) -> String {
    let mut text = format!(
        "pool = \"{pool}\"\n\n[limits]\nmin_gpus = 10\nmax_gpus = 400\nbudget_per_hour = 100000\n\n[scale_in]\ndeadband_gpus = 2\ndeadband_minutes = 10\n\n[[metric]]\nname = \"queue_len\"\nstale_after_minutes = 3\n"
    );
    for i in 0..10 {
        let (metric, op, value, action) = match i % 3 {
            0 => ("gpu_util", ">", 70 + i, "+10%"),
            1 => ("busy_gpus", "<", 50 + i, "-2"),
            _ => ("queue_len", ">", 100 + i, "+4"),
        };
        let _ = write!(
            text,
            "\n[[threshold]]\nname = \"t{i}\"\nmetric = \"{metric}\"\nop = \"{op}\"\nvalue = {value}\nfor_minutes = {}\naction = \"{action}\"\ncooldown_minutes = 10\n",
            1 + i % 5
        );
    }
    for i in 0..6 {
        let _ = write!(
            text,
            "\n[[target]]\nname = \"g{i}\"\nmetric = \"busy_gpus\"\ntarget = {}\nscale_out_sustain_minutes = 3\n",
            80 + i
        );
    }
    for i in 0..2 {
        let _ = write!(
            text,
            "\n[[schedule]]\nname = \"c{i}\"\ncron = \"0 {} * * *\"\nduration_minutes = 60\ntime_zone = \"Asia/Shanghai\"\nfloor = 20\n",
            8 + i
        );
        let _ = write!(
            text,
            "\n[[schedule]]\nname = \"w{i}\"\nstart = 2030-01-0{}T00:00:00\nend = 2030-01-0{}T00:00:00\ntime_zone = \"Asia/Shanghai\"\nfloor = 30\n",
            1 + i,
            2 + i
        );
    }
    text
}

fn main() {
    let rounds: usize = std::env::var("EBB_BENCH_ROUNDS")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(60);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        let dir = std::env::temp_dir().join(format!("ebb-bench-rules-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        // A viewer: no enforcer of its own; the bench drives the rules' tick itself.
        let console = Console::open(ConsoleOptions {
            token_store: TokenStore::Memory,
            viewer_only: true,
            ..ConsoleOptions::new(&dir)
        })
        .await
        .expect("console opens");
        let store = console.pool_store().clone();
        let mut statuses = Vec::new();
        let mut hosts: Vec<HostObs> = (0..HOSTS)
            .map(|h| HostObs {
                name: format!("h{h:04}"),
                region: "cn-north".into(),
                seen: Some(Seen::default()),
                down_since_ms: None,
                lost_fence: None,
                refusing: None,
                draining: false,
            })
            .collect();
        for p in 0..POOLS {
            let name = format!("pool{p:02}");
            let facts = [ebb_core::pools::HostFacts {
                name: "h0000".into(),
                region: "cn-north".into(),
                models: vec!["NVIDIA A100-SXM4-80GB".into()],
            }];
            let input = PoolInput {
                    name: name.clone(),
                    model: "A100".into(),
                    regions: vec!["cn-north".into()],
                    min: 0,
                    max: 400,
                    base_gpus: 0,
                    term: Term::Month,
                    overlay: OverlayMode::Hour,
                    placement: PlacementPolicy::Pack,
                    interruptible: false,
                    release_at_unit_end: false,
                    spot: Default::default(),
                };
            let valid = ebb_core::pools::validate(&input, &facts, &console.catalog()).expect("valid");
            store.create(valid).await.expect("pool");
            console
                .pool_store()
                .set_desired(&name, 200, &[], &ebb_core::pools::NewActivity {
                    actor: ebb_wire::pools::Actor::Operator,
                    from: 0,
                    to: 200,
                    reason: ebb_wire::reasons::ChangeReason::Cli,
                    delta_per_hour_fen: None,
                    delta_per_month_fen: None,
                }, None)
                .await
                .expect("desired");
            console
                .save_rules(&name, &rule_file(&name), Some(RulesMode::Enabled), true)
                .await
                .expect("rules");
            let pool = console.pool_store().get(&name).await.unwrap();
            let mut leases = Vec::new();
            for g in 0..200 {
                let index = p * 200 + g;
                let (h, slot) = (index / GPUS_PER_HOST, index % GPUS_PER_HOST);
                let uuid = format!("GPU-{h}-{slot}");
                if let Some(seen) = hosts[h].seen.as_mut() {
                    seen.gpus.push(Gpu {
                        index: slot as u32,
                        uuid: uuid.clone(),
                        model: "NVIDIA A100-SXM4-80GB".into(),
                        memory_total_mib: Some(81_920),
                        healthy: true,
                        memory_used_mib: Some(40_000),
                        gpu_util_pct: Some(60.0),
                        ..Gpu::default()
                    });
                }
                leases.push(PoolLeaseView {
                    lease_id: format!("l-{index}"),
                    host: hosts[h].name.clone(),
                    region: "cn-north".into(),
                    gpu_uuids: vec![uuid],
                    gpu_indexes: vec![slot as u32],
                    fencing_token: index as u64,
                    granted_at_ms: 0,
                    state: PoolLeaseState::Active,
                    util_pct: Some(60.0),
                    checkpoint_at_ms: None,
                    release_grace_s: None,
                    reclaim_deadline_ms: None,
                    spot: false,
                    starting: false,
                });
            }
            statuses.push(PoolStatus {
                pool_id: pool.id.clone(),
                actual: 200,
                leases,
                ..PoolStatus::default()
            });
        }
        let catalog = console.catalog();
        let mut runner = RulesRunner::default();
        let mut times = Vec::with_capacity(rounds);
        let mut decisions = 0;
        for round in 0..rounds {
            for p in 0..POOLS {
                store
                    .push_metric(&MetricPush {
                        name: "queue_len".into(),
                        value: 40.0 + (round % 7) as f64,
                        pool: Some(format!("pool{p:02}")),
                        at: None,
                    })
                    .await
                    .unwrap();
            }
            let started = Instant::now();
            let tick = runner
                .tick(&store, &statuses, &hosts, &catalog, ebb_core::clock::now_ms())
                .await
                .expect("a tick");
            times.push(started.elapsed());
            decisions += tick.decisions;
        }
        times.sort();
        let median = times[times.len() / 2];
        let p99 = times[((times.len() - 1) as f64 * 0.99).round() as usize];
        println!(
            "rules tick: {POOLS} pools × 20 rules over {} GPUs: median {:.2} ms, p99 {:.2} ms, max {:.2} ms a tick = {:.4} core at 1 tick/s (goal < 0.02); {decisions} decisions",
            HOSTS * GPUS_PER_HOST,
            ms(median),
            ms(p99),
            ms(*times.last().unwrap()),
            median.as_secs_f64()
        );
        hosts.clear();
        console.shutdown().await;
        let _ = std::fs::remove_dir_all(&dir);
    });
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}
