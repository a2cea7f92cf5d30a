//! The demo's content: the embedded fleet's hosts registered as real ones are, its pool
//! (A100s over the two regions that have them), the pool's seed-like rules (on the console's
//! own clock, paid-unit-aware), and the users they follow; and a queue-driven pool,
//! `training`, bound to a simulated Slurm partition fed by a repeating job schedule
//! ([`simulated_slurm`]), so a new user sees a scale-out on queued jobs and a drained
//! scale-in. The desktop shell starts the simulated fleet and hands its hosts here;
//! a spot pool, `render`, whose hosts' owner takes a GPU back now and then with a notice
//! ([`reclaim_spot`], a simulation of the spot market through the agents' real reclaim), so
//! a replacement is seen; everything the demo shows goes through the same registry, pools,
//! rules and Slurm binder as an operator's own.

use crate::console::{Console, ConsoleError};
use crate::registry::HostEntry;

impl Console {
    /// Registers the demo fleet's hosts (name, URL, region), labelled `demo=true`, and makes
    /// the demo pool on the first start; with `rules`, the pool's rules too.
    pub async fn seed_demo(
        &self,
        hosts: Vec<(String, String, String)>,
        rules: bool,
    ) -> Result<(), ConsoleError> {
        // What the setup logs is the demo's, not the operator's (their later changes are).
        let before = self.pool_store().last_activity_id().await;
        for (name, url, region) in hosts {
            let spec = HostEntry {
                name,
                url,
                region,
                labels: [("demo".to_string(), "true".to_string())].into(),
                fingerprint: None,
                has_token: false,
                draining: false,
            };
            self.upsert_host(&spec, None).await?;
        }
        seed_pool(self).await;
        if rules {
            seed_rules(self).await;
        }
        let queue_bound = self
            .slurm
            .binding
            .as_ref()
            .is_some_and(|binding| binding.of_pool(QUEUE_POOL).is_some());
        if queue_bound {
            seed_queue_pool(self).await;
        }
        if rules {
            seed_spot_pool(self).await;
        }
        match before {
            Ok(before) => {
                if let Err(error) = self.pool_store().attribute_to_demo(before).await {
                    tracing::warn!(%error, "cannot mark the demo's setup as the demo's");
                }
            }
            Err(error) => tracing::warn!(%error, "cannot read the activity log"),
        }
        Ok(())
    }
}

/// The demo's pool, made on the first start: A100s over the two regions that have them.
async fn seed_pool(console: &Console) {
    if console
        .list_pools()
        .await
        .is_ok_and(|pools| !pools.is_empty())
    {
        return;
    }
    let input = ebb_wire::pools::PoolInput {
        name: "inference".into(),
        model: "A100".into(),
        regions: vec!["cn-east".into(), "cn-south".into()],
        min: 0,
        max: 8,
        base_gpus: 2,
        term: ebb_wire::plan::Term::Month,
        overlay: ebb_wire::plan::OverlayMode::Hour,
        placement: ebb_wire::pools::PlacementPolicy::Pack,
        interruptible: false,
        spot: ebb_wire::pools::SpotMix::default(),
        // Its rules keep each GPU to the end of its paid hour (`release_window_minutes`);
        // the operator's own slider moves in the demo take effect at once.
        release_at_unit_end: false,
    };
    if let Err(error) = console.create_pool(&input).await {
        tracing::warn!(%error, "cannot create the demo pool");
    }
}

/// The demo pool's rules: the seed's e-commerce case ("users > 100k → 20 GPUs, < 50k →
/// 5"), sized to the demo pool and paid-unit-aware as the product recommends; written on
/// the first start only. They run on the console's own clock, as billing does.
pub const RULES: &str = r#"# The demo pool follows its users, as the seed's e-commerce case does: a festival peak
# sets it to 6 GPUs, back to normal sets it to 2.
# GPUs above the base are paid by the started hour, so a GPU no longer needed is kept
# until the last 10 minutes of the hour it has paid for: a peak that comes back within
# the hour uses it again at no extra cost, instead of paying a fresh hour.
pool = "inference"

# The pool's base, 2 GPUs by the month, is paid whether held or not: it is held from the
# start, not left idle until the first peak.
[limits]
min_gpus = 2
max_gpus = 8

[scale_in]
force = false
release_window_minutes = 10

[[metric]]
name = "users"
stale_after_minutes = 3

[[threshold]]
name = "festival-peak"
metric = "users"
op = ">"
value = 100000
for_minutes = 1
action = "set 6"

[[threshold]]
name = "back-to-normal"
metric = "users"
op = "<"
value = 50000
for_minutes = 2
action = "set 2"
"#;

/// The demo pool's rules, saved when it has none (the demo's own data directory).
async fn seed_rules(console: &Console) {
    save_rules_once(console, "inference", RULES).await;
}

/// `rules` saved as `pool`'s when it has none yet (a demo's later start keeps the
/// operator's edits).
async fn save_rules_once(console: &Console, pool: &str, rules: &str) {
    if console.pool_rules(pool).await.ok().flatten().is_some() {
        return;
    }
    if let Err(error) = console.save_rules(pool, rules, None, true).await {
        tracing::warn!(%error, pool, "cannot save the demo's rules");
    }
}

/// Whether a pool named `name` exists (a demo's later start makes it no second time).
async fn has_pool(console: &Console, name: &str) -> bool {
    console
        .list_pools()
        .await
        .is_ok_and(|pools| pools.iter().any(|pool| pool.name == name))
}

/// The demo's queue-driven pool, bound to [`QUEUE_PARTITION`].
pub const QUEUE_POOL: &str = "training";

/// The simulated Slurm partition the queue-driven pool is bound to.
pub const QUEUE_PARTITION: &str = "train";

/// The demo fleet's host whose GPUs are the partition's nodes (its V100s, which no other
/// tenant holds).
pub const QUEUE_HOST: &str = "cn-south-001";

/// The binding of the queue-driven pool: nodes `v100-1` (GPUs 0, 1) and `v100-2` (GPUs 2,
/// 3) on [`QUEUE_HOST`]. A node's lease runs no slurmd: the simulation brings it up.
const QUEUE_BINDING: &str = r#"[[partition]]
name = "train"
pool = "training"
mode = "ebb"
gpus_per_node = 2
drain_max_minutes = 30
min_nodes = 0
max_nodes = 2
[[partition.hosts]]
host = "cn-south-001"
nodes = "v100-[1-2]"
port = 6818
"#;

/// How often the simulated job schedule repeats, in seconds.
pub const QUEUE_CYCLE_S: u64 = 600;

/// The simulated jobs of each cycle. Four one-GPU jobs at 5 s, a short and a long one on
/// each node: once the short ones end, the queue needs one node, both are busy, so one is
/// drained and given back when its long job ends. At 5 minutes two two-GPU jobs: the one
/// that ends first leaves its node idle, and an idle node goes at once.
pub const QUEUE: &[ebb_slurm::sim::Arrival] = &[
    arrival(5, 1, 20),
    arrival(5, 1, 180),
    arrival(5, 1, 30),
    arrival(5, 1, 200),
    arrival(300, 2, 45),
    arrival(300, 2, 120),
];

const fn arrival(at_s: u64, gpus: u32, run_s: u64) -> ebb_slurm::sim::Arrival {
    ebb_slurm::sim::Arrival { at_s, gpus, run_s }
}

/// The demo's Slurm: the queue-driven pool's binding and its simulated partition (named
/// as a simulation: the real path is `slurm.toml` and slurmctld). An error only if the
/// demo's own binding did not read (its test says it does).
pub fn simulated_slurm() -> Result<crate::slurm::api::SlurmSetup, String> {
    let mut binding = ebb_slurm::binding::Binding::parse(QUEUE_BINDING)
        .map_err(|error| format!("the demo's Slurm binding: {error}"))?;
    let mut nodes = Vec::new();
    for part in &mut binding.partitions {
        part.slurmd = Vec::new();
        nodes.extend(
            part.nodes
                .iter()
                .map(|slot| (slot.name.clone(), part.gpus_per_node)),
        );
    }
    let partition =
        ebb_slurm::sim::SimPartition::new(QUEUE_PARTITION, &nodes, QUEUE, QUEUE_CYCLE_S);
    Ok(crate::slurm::api::SlurmSetup {
        api: std::sync::Arc::new(crate::slurm::api::SimSlurm::new(vec![partition])),
        binding: Some(binding),
    })
}

/// The queue-driven pool's rules: the Rules form's "Size to the Slurm queue" template,
/// sized for watching (a job that waits a minute adds a node; the pool follows the queue
/// down at once, a busy node drained first, an idle one parked to its paid hour's end).
pub const QUEUE_RULES: &str = r#"# The demo's training pool is bound to a Slurm partition (simulated: the demo's job
# queue). It holds one GPU per GPU its jobs ask for or hold; a job waiting a minute adds a
# node at once. Scale-in never kills a job: a busy node is drained in Slurm, and a node
# with no job left is kept to the end of the hour it has paid for, so a queue that comes
# back within the hour runs there again instead of paying a fresh hour.
pool = "training"

[limits]
min_gpus = 0
max_gpus = 4

[scale_in]
force = false

[[metric]]
name = "slurm_demand_gpus"
stale_after_minutes = 2

[[metric]]
name = "slurm_oldest_wait_minutes"
stale_after_minutes = 2

[[target]]
name = "size-to-queue"
metric = "slurm_demand_gpus"
target = 1
tolerance = 0
scale_in_stabilization_minutes = 0

[[threshold]]
name = "queue-waited"
metric = "slurm_oldest_wait_minutes"
op = ">="
value = 1
for_minutes = 1
action = "+2"
cooldown_minutes = 5
"#;

/// The queue-driven pool and its rules, made on the first start: V100s in cn-south.
async fn seed_queue_pool(console: &Console) {
    if !has_pool(console, QUEUE_POOL).await {
        let input = ebb_wire::pools::PoolInput {
            name: QUEUE_POOL.into(),
            model: "V100".into(),
            regions: vec!["cn-south".into()],
            min: 0,
            max: 4,
            base_gpus: 0,
            term: ebb_wire::plan::Term::Month,
            overlay: ebb_wire::plan::OverlayMode::Hour,
            placement: ebb_wire::pools::PlacementPolicy::Pack,
            interruptible: false,
            spot: ebb_wire::pools::SpotMix::default(),
            release_at_unit_end: true,
        };
        if let Err(error) = console.create_pool(&input).await {
            tracing::warn!(%error, "cannot create the demo's training pool");
            return;
        }
    }
    save_rules_once(console, QUEUE_POOL, QUEUE_RULES).await;
}

/// The demo's spot breaker, sized for watching: more than 2 reclaims within 10 minutes
/// pause spot for at least 5 minutes, until 5 minutes pass without one (the default is
/// 3 in 30 minutes, an hour, half an hour), so a new user sees spot paused, the pool on
/// demand, and its return to spot within about twenty minutes.
pub const SPOT_BREAKER: ebb_reconcile::spot::BreakerPolicy = ebb_reconcile::spot::BreakerPolicy {
    max_interruptions: 2,
    window_ms: 10 * 60_000,
    cool_off_ms: 5 * 60_000,
    quiet_ms: 5 * 60_000,
};

/// The demo's spot pool: H800s at the spot price, whose hosts' owner takes one back now
/// and then ([`reclaim_spot`]).
pub const SPOT_POOL: &str = "render";

/// The notice the demo's spot reclaims give.
pub const SPOT_NOTICE_S: u64 = 60;

/// When the demo's spot reclaims come: the first this long after the start, in seconds …
pub const SPOT_FIRST_S: u64 = 90;

/// … then one every this long, give or take a third (seeded, the same each run).
pub const SPOT_EVERY_S: u64 = 240;

// A reclaim's notice runs out before the next reclaim can come.
const _: () = assert!(SPOT_NOTICE_S < SPOT_FIRST_S && SPOT_NOTICE_S < SPOT_EVERY_S * 2 / 3);

/// The spot pool, made on the first start: 3 H800s over the two regions that have them
/// free, spread: an on-demand floor of 1, every GPU above it on spot (where hosts offer
/// spot; on demand when none is free, and back to spot once one is).
async fn seed_spot_pool(console: &Console) {
    if has_pool(console, SPOT_POOL).await {
        return;
    }
    let input = ebb_wire::pools::PoolInput {
        name: SPOT_POOL.into(),
        model: "H800".into(),
        regions: vec!["cn-north".into(), "cn-east".into()],
        min: 0,
        max: 4,
        base_gpus: 0,
        term: ebb_wire::plan::Term::Month,
        overlay: ebb_wire::plan::OverlayMode::Hour,
        placement: ebb_wire::pools::PlacementPolicy::Spread,
        interruptible: true,
        spot: ebb_wire::pools::SpotMix {
            on_demand_floor: 1,
            spot_pct: 100,
            max_price_fen: None,
        },
        release_at_unit_end: true,
    };
    if let Err(error) = console.create_pool(&input).await {
        tracing::warn!(%error, "cannot create the demo's spot pool");
        return;
    }
    let scaled = console
        .scale_pool(
            SPOT_POOL,
            3,
            ebb_wire::pools::Actor::Operator,
            ebb_wire::reasons::ChangeReason::Cli,
        )
        .await;
    if let Err(error) = scaled {
        tracing::warn!(%error, "cannot scale the demo's spot pool");
    }
}

/// The seconds before the demo's `n`-th spot reclaim (from 0): [`SPOT_FIRST_S`], then
/// [`SPOT_EVERY_S`] give or take a third, the same each run.
pub fn spot_wait_s(n: u64) -> u64 {
    if n == 0 {
        return SPOT_FIRST_S;
    }
    let third = SPOT_EVERY_S / 3;
    let jitter = (n.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 33) % (2 * third + 1);
    SPOT_EVERY_S - third + jitter
}

/// How long the demo's spot owner uses a GPU it took back (as a real market's owner does:
/// it reclaims to use it), after which the GPU is offered as spot again.
pub const SPOT_OWNER_KEEPS_S: u64 = 20 * 60;

/// The holder id the demo's spot owner takes its GPUs back under.
pub const SPOT_OWNER: &str = "spot-owner";

/// The demo's spot market, simulated as the hosts' owner: now and then it takes back one
/// of the spot pool's GPUs with [`SPOT_NOTICE_S`] of notice, through the host's own
/// `POST /v1/leases/{id}/reclaim` (the demo's agents ask no token), so the console's real
/// handling shows: the replacement ordered at once, the reclaimed GPU gone at the deadline.
/// The owner then uses the GPU for [`SPOT_OWNER_KEEPS_S`] (a lease of its own on the same
/// agent), so the pool's replacement stays on demand for a while, and goes back to spot
/// at the end of its paid hour. Runs until the task is dropped.
pub async fn reclaim_spot(store: crate::pools::PoolStore, registry: crate::registry::Registry) {
    let config = crate::enforcer::EnforcerConfig::default().client;
    // The owner's uses of GPUs it took back: owned here, so they end with this task.
    let mut owners = tokio::task::JoinSet::new();
    for n in 0.. {
        while owners.try_join_next().is_some() {}
        tokio::time::sleep(std::time::Duration::from_secs(spot_wait_s(n))).await;
        let Ok(pool) = store.get(SPOT_POOL).await else {
            continue;
        };
        let Ok(Some((status, _))) = store.read_status(&pool.id).await else {
            continue;
        };
        let Some(lease) = status
            .leases
            .iter()
            .filter(|lease| lease.state == ebb_wire::pools::PoolLeaseState::Active && lease.spot)
            .min_by_key(|lease| lease.granted_at_ms)
        else {
            continue;
        };
        let url = match registry.get(&lease.host).await {
            Ok(host) => host.url,
            Err(error) => {
                tracing::warn!(host = %lease.host, %error, "the demo's spot market cannot find the host");
                continue;
            }
        };
        let client = match ebb_telemetry::client::AgentClient::new(&url, config) {
            Ok(client) => client,
            Err(error) => {
                tracing::warn!(host = %lease.host, %error, "the demo's spot market cannot reach the host");
                continue;
            }
        };
        let reclaimed = client
            .reclaim_lease(
                &lease.lease_id,
                std::time::Duration::from_secs(SPOT_NOTICE_S),
            )
            .await;
        match reclaimed {
            Ok(_) => {
                owners.spawn(owner_uses(client, lease.gpu_uuids.clone(), n));
            }
            Err(error) => {
                tracing::warn!(lease = %lease.lease_id, %error, "the demo's spot reclaim failed")
            }
        }
    }
}

/// The demo's spot owner, once a reclaimed GPU is back: a lease of its own on it for
/// [`SPOT_OWNER_KEEPS_S`], then released (offered as spot again).
async fn owner_uses(client: ebb_telemetry::client::AgentClient, gpu_uuids: Vec<String>, n: u64) {
    // The reclaimed lease ends at its deadline: the owner asks from just before it, and
    // often, so it takes its GPU back before the pool's next pass would.
    tokio::time::sleep(std::time::Duration::from_secs(
        SPOT_NOTICE_S.saturating_sub(1),
    ))
    .await;
    let request = ebb_wire::agent::LeaseRequest {
        gpu_uuids: Some(gpu_uuids),
        count: None,
        ..ebb_wire::agent::LeaseRequest::count(SPOT_OWNER, SPOT_OWNER, 0)
    };
    let key = format!("demo-spot-owner-{n}");
    let mut held = None;
    for _ in 0..300 {
        match client.create_lease(&key, &request).await {
            Ok((_, lease)) => {
                held = Some(lease.id);
                break;
            }
            // Not free yet (its workload still stopping): again shortly.
            Err(_) => tokio::time::sleep(std::time::Duration::from_millis(100)).await,
        }
    }
    let Some(lease_id) = held else {
        tracing::debug!("the demo's spot owner found its GPU taken; it uses another");
        return;
    };
    tokio::time::sleep(std::time::Duration::from_secs(SPOT_OWNER_KEEPS_S)).await;
    if let Err(error) = client.release_lease(&lease_id, None).await {
        tracing::warn!(lease = %lease_id, %error, "the demo's spot owner cannot give its GPU back");
    }
}

/// How often the demo's festival peak comes back, in seconds.
pub const PEAK_EVERY_S: u64 = 600;

/// When in each [`PEAK_EVERY_S`] the peak is on, in seconds.
pub const PEAK_S: std::ops::Range<u64> = 10..250;

/// The demo's users, each second: 30k, then a festival peak of 150k from 10 s to 250 s of
/// every 10 minutes, with a little noise.
pub fn users(elapsed_s: u64) -> f64 {
    let t = elapsed_s % PEAK_EVERY_S;
    let base = if PEAK_S.contains(&t) {
        150_000.0
    } else {
        30_000.0
    };
    base + ((elapsed_s * 7_919) % 2_000) as f64
}

/// Pushes the demo's users each second as the custom metric `users` of the demo pool,
/// until the task is dropped.
pub async fn push_users(store: crate::pools::PoolStore) {
    let started = std::time::Instant::now();
    let mut ticks = tokio::time::interval(std::time::Duration::from_secs(1));
    loop {
        ticks.tick().await;
        let push = ebb_wire::rules::MetricPush {
            name: "users".into(),
            value: users(started.elapsed().as_secs()),
            pool: Some("inference".into()),
            at: None,
        };
        if let Err(error) = store.push_metric(&push).await {
            tracing::warn!(%error, "cannot push the demo's users");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_queue_binding_and_rules_read_and_the_schedule_fits_the_partition() {
        ebb_rules::model::parse(QUEUE_RULES).unwrap();
        let setup = simulated_slurm().unwrap();
        let binding = setup.binding.expect("the demo names its binding");
        let part = binding
            .of_pool(QUEUE_POOL)
            .expect("the training pool is bound");
        assert_eq!(part.name, QUEUE_PARTITION);
        assert!(
            part.slurmd.is_empty(),
            "no process: the simulation brings nodes up"
        );
        assert!(part.nodes.iter().all(|slot| slot.host == QUEUE_HOST));
        let gpus = part.gpus_per_node * u32::try_from(part.nodes.len()).unwrap();
        assert_eq!(gpus, 4, "the rules' max is the partition's GPUs");
        assert!(QUEUE.iter().all(|job| job.gpus <= part.gpus_per_node));
        assert!(QUEUE.iter().all(|job| job.at_s < QUEUE_CYCLE_S));
    }

    #[test]
    fn spot_reclaims_come_first_soon_then_every_few_minutes_the_same_each_run() {
        assert_eq!(spot_wait_s(0), SPOT_FIRST_S);
        let waits: Vec<u64> = (1..50).map(spot_wait_s).collect();
        let third = SPOT_EVERY_S / 3;
        assert!(
            waits
                .iter()
                .all(|w| (SPOT_EVERY_S - third..=SPOT_EVERY_S + third).contains(w))
        );
        assert!(
            waits.windows(2).any(|pair| pair[0] != pair[1]),
            "not all the same"
        );
        assert_eq!(waits, (1..50).map(spot_wait_s).collect::<Vec<_>>());
    }

    #[test]
    fn the_demo_rules_parse_and_their_users_cross_both_thresholds() {
        ebb_rules::model::parse(RULES).unwrap();
        let peak = PEAK_S.map(users).fold(f64::MAX, f64::min);
        let normal = (0..PEAK_S.start)
            .chain(PEAK_S.end..PEAK_EVERY_S)
            .map(users)
            .fold(0.0, f64::max);
        assert!(peak > 100_000.0, "the festival peak is above 100k: {peak}");
        assert!(normal < 50_000.0, "normal is below 50k: {normal}");
    }
}
