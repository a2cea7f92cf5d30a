//! Pools, measured.
//!
//! - Slider release → 100 GPUs leased: 13 A100 agents × 8 GPUs on loopback (real HTTP,
//!   each agent with its own SQLite lease store on disk, as on its own machine), the
//!   console's enforcer as the app runs it. Each round sets a pool from 0 to 100 (`scale_pool`, what letting the slider
//!   go calls) and times until the agents hold all 100 leases and the console recorded
//!   them; then back to 0. Goal: p99 ≤ 200 ms.
//! - One reconcile pass (the pure planner) over 1,250 hosts × 8 GPUs = 10,000 GPUs and 50
//!   pools, half the GPUs leased, every pool 20 GPUs short. Goal: ≤ 50 ms.
//!
//! `cargo bench -p ebb-core --bench pools` (`EBB_BENCH_ROUNDS` sets the rounds, default 30).

use ebb_agent::sim::GpuModel;
use ebb_agent::{Fleet, FleetConfig};
use ebb_core::console::{Console, ConsoleOptions, TokenStore};
use ebb_core::registry::HostEntry;
use ebb_reconcile::reconcile::{HostObs, Input, PoolTarget, Seen, plan};
use ebb_wire::agent::{Gpu, Lease, LeaseState};
use ebb_wire::plan::{OverlayMode, Term};
use ebb_wire::pools::{Actor, PlacementPolicy, PoolInput};
use ebb_wire::reasons::ChangeReason;
use std::time::{Duration, Instant};

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index]
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

async fn slider_release(rounds: usize) {
    let state = std::env::temp_dir().join(format!("ebb-bench-pools-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&state);
    // Thirteen agents, each with its own lease store on disk, as on thirteen machines.
    let mut fleets = Vec::new();
    for i in 0..13 {
        fleets.push(
            Fleet::start(&FleetConfig {
                hosts: 1,
                gpus_per_host: 8,
                model: Some(GpuModel::A100),
                state_dir: Some(state.join(format!("agent-{i}"))),
                release_grace: Duration::from_millis(0),
                seed: i,
                ..FleetConfig::default()
            })
            .await
            .expect("agent starts"),
        );
    }
    let console = Console::open(ConsoleOptions {
        token_store: TokenStore::Memory,
        ..ConsoleOptions::new(&state.join("console"))
    })
    .await
    .expect("console opens");
    for (i, fleet) in fleets.iter().enumerate() {
        let host = &fleet.hosts()[0];
        let spec = HostEntry {
            name: format!("gpu-{i:02}"),
            url: host.url.clone(),
            region: host.region.clone(),
            labels: Default::default(),
            fingerprint: None,
            has_token: false,
            draining: false,
        };
        console.upsert_host(&spec, None).await.expect("host added");
    }
    console
        .create_pool(&PoolInput {
            name: "bench".into(),
            model: "A100".into(),
            regions: vec!["cn-north".into()],
            min: 0,
            max: 104,
            base_gpus: 0,
            term: Term::Month,
            overlay: OverlayMode::Hour,
            placement: PlacementPolicy::Spread,
            interruptible: false,
            release_at_unit_end: false,
            spot: Default::default(),
        })
        .await
        .expect("pool made");
    let mut reports = console.enforcer_reports().expect("this process enforces");
    // Warm up: one pass so clients and connections exist.
    reports.changed().await.expect("a pass");
    let mut times = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let started = Instant::now();
        console
            .scale_pool("bench", 100, Actor::Operator, ChangeReason::Cli)
            .await
            .expect("scaled");
        loop {
            reports.changed().await.expect("a pass");
            let report = reports.borrow_and_update().clone();
            if report.converged && report.granted > 0 {
                break;
            }
        }
        times.push(started.elapsed());
        console
            .scale_pool("bench", 0, Actor::Operator, ChangeReason::Cli)
            .await
            .expect("scaled");
        // Until the agents freed every GPU again.
        loop {
            reports.changed().await.expect("a pass");
            let view = console.show_pool("bench").await.expect("view");
            if view.actual == 0 && view.releasing == 0 && view.pending == 0 {
                let free: u32 = console
                    .preview_scale("bench", 100)
                    .await
                    .expect("preview")
                    .free_now;
                if free >= 100 {
                    break;
                }
            }
        }
    }
    times.sort();
    println!(
        "slider release → 100 GPUs leased over 13 hosts: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms ({rounds} rounds; goal p99 ≤ 200 ms)",
        ms(percentile(&times, 0.5)),
        ms(percentile(&times, 0.99)),
        ms(*times.last().expect("rounds > 0")),
    );
    console.shutdown().await;
    for fleet in fleets {
        fleet.stop().await;
    }
    let _ = std::fs::remove_dir_all(&state);
}

fn reconcile_pass(rounds: usize) {
    let regions = ["cn-north", "cn-east", "cn-south"];
    let hosts: Vec<HostObs> = (0..1250u32)
        .map(|h| {
            let name = format!("gpu-host-{h:04}");
            let gpus: Vec<Gpu> = (0..8)
                .map(|i| Gpu {
                    index: i,
                    uuid: format!("GPU-{h}-{i}"),
                    model: "NVIDIA A100-SXM4-80GB".into(),
                    healthy: true,
                    gpu_util_pct: Some(((h * 7 + i * 13) % 100) as f32),
                    ..Gpu::default()
                })
                .collect();
            // Half the GPUs leased: to pool (h % 50), ours.
            let leases: Vec<Lease> = (0..4)
                .map(|i| Lease {
                    id: format!("lease-{h}-{i}"),
                    pool_id: format!("pool-{}", h % 50),
                    holder_id: "console".into(),
                    gpu_uuids: vec![format!("GPU-{h}-{i}")],
                    gpu_indexes: vec![i],
                    fencing_token: u64::from(i + 1),
                    state: LeaseState::Active,
                    created_at_ms: 0,
                    release_requested_at_ms: None,
                    released_at_ms: None,
                    command: None,
                    load_profile: None,
                    workload_pid: None,
                    workload_exit_code: None,
                    workload_signal: None,
                    workload_log: None,
                    checkpoint_at_ms: None,
                    release_grace_s: None,
                    reclaim_deadline_ms: None,
                    spot: false,
                    starting: false,
                })
                .collect();
            HostObs {
                name,
                region: regions[h as usize % 3].into(),
                seen: Some(Seen { gpus, leases }),
                down_since_ms: None,
                lost_fence: None,
                refusing: None,
                draining: false,
            }
        })
        .collect();
    // 25 hosts per pool × 4 leases = 100 held; each wants 120.
    let pools: Vec<PoolTarget> = (0..50)
        .map(|p| PoolTarget {
            id: format!("pool-{p}"),
            model: "A100".into(),
            regions: vec![regions[p % 3].into(), regions[(p + 1) % 3].into()],
            desired: 120,
            policy: if p % 2 == 0 {
                PlacementPolicy::Pack
            } else {
                PlacementPolicy::Spread
            },
            at_unit_end: false,
            unit_ms: 3_600_000,
            prices: regions
                .iter()
                .enumerate()
                .map(|(i, r)| (r.to_string(), 1000 + i as i64 * 100))
                .collect(),
            release_first: Vec::new(),
            external: false,
            nodes: Default::default(),
            spot: Default::default(),
        })
        .collect();
    let input = Input {
        now_ms: 3_600_000,
        holder: "console",
        grace_ms: 30_000,
        pools: &pools,
        hosts: &hosts,
        known: &[],
        pending: &[],
    };
    let mut times = Vec::with_capacity(rounds);
    let mut creates = 0;
    for _ in 0..rounds {
        let started = Instant::now();
        let planned = plan(&input);
        times.push(started.elapsed());
        creates = planned.creates.len();
    }
    times.sort();
    println!(
        "one reconcile pass over 10,000 GPUs and 50 pools ({creates} leases planned): p50 {:.2} ms, max {:.2} ms ({rounds} rounds; goal ≤ 50 ms)",
        ms(percentile(&times, 0.5)),
        ms(*times.last().expect("rounds > 0")),
    );
}

fn main() {
    let rounds: usize = std::env::var("EBB_BENCH_ROUNDS")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(30)
        .max(1);
    reconcile_pass(rounds);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(slider_release(rounds));
}
