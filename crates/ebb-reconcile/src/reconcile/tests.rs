//! The planner against a simulated fleet on virtual time: each pass observes the world,
//! plans, and the world applies the plan the way agents would (a GPU is granted once).

use super::*;
use ebb_wire::agent::LeaseState;
use std::collections::HashSet;

const US: &str = "console-1";
const GRACE: i64 = 30_000;

/// Hosts with GPUs and leases, applying plans like agents do.
struct World {
    hosts: Vec<SimHost>,
    next_token: u64,
    now_ms: i64,
    /// Our lease records, as the enforcer's database would keep them.
    known: Vec<KnownLease>,
    fences: HashMap<String, u64>,
    down_since: HashMap<String, i64>,
    /// Hosts the operator is removing.
    draining: HashSet<String>,
}

struct SimHost {
    name: String,
    region: String,
    up: bool,
    gpus: Vec<Gpu>,
    leases: Vec<Lease>,
}

fn gpu(host: &str, index: u32, model: &str) -> Gpu {
    Gpu {
        index,
        uuid: format!("GPU-{host}-{index}"),
        model: model.into(),
        healthy: true,
        gpu_util_pct: Some(50.0),
        ..Gpu::default()
    }
}

impl World {
    fn new(spec: &[(&str, &str, u32, &str)]) -> Self {
        Self {
            hosts: spec
                .iter()
                .map(|&(name, region, gpus, model)| SimHost {
                    name: name.into(),
                    region: region.into(),
                    up: true,
                    gpus: (0..gpus).map(|i| gpu(name, i, model)).collect(),
                    leases: Vec::new(),
                })
                .collect(),
            next_token: 0,
            now_ms: 1_000_000,
            known: Vec::new(),
            fences: HashMap::new(),
            down_since: HashMap::new(),
            draining: HashSet::new(),
        }
    }

    fn observe(&self) -> Vec<HostObs> {
        self.hosts
            .iter()
            .map(|host| HostObs {
                name: host.name.clone(),
                region: host.region.clone(),
                seen: host.up.then(|| Seen {
                    gpus: host.gpus.clone(),
                    leases: host.leases.clone(),
                }),
                down_since_ms: self.down_since.get(&host.name).copied(),
                lost_fence: self.fences.get(&host.name).copied(),
                refusing: None,
                draining: self.draining.contains(&host.name),
            })
            .collect()
    }

    /// One pass: observe, plan, apply; returns the plan.
    fn pass(&mut self, pools: &[PoolTarget]) -> Plan {
        for host in &self.hosts {
            if host.up {
                self.down_since.remove(&host.name);
            } else {
                self.down_since
                    .entry(host.name.clone())
                    .or_insert(self.now_ms);
            }
        }
        let hosts = self.observe();
        let plan = plan(&Input {
            now_ms: self.now_ms,
            holder: US,
            grace_ms: GRACE,
            pools,
            hosts: &hosts,
            known: &self.known,
            pending: &[],
        });
        for (host, fence) in &plan.lose {
            self.fences.insert(host.clone(), *fence);
        }
        for host in &plan.clear_fence {
            self.fences.remove(host);
        }
        for create in &plan.creates {
            let host = self
                .hosts
                .iter_mut()
                .find(|h| h.name == create.host)
                .unwrap();
            assert!(host.up, "asked a host that is down");
            let taken = host.leases.iter().any(|l| {
                l.state != LeaseState::Released
                    && create
                        .gpu_uuids
                        .iter()
                        .any(|uuid| l.gpu_uuids.contains(uuid))
            });
            assert!(!taken, "{:?} asked for twice", create.gpu_uuids);
            self.next_token += 1;
            let indexes: Vec<u32> = create
                .gpu_uuids
                .iter()
                .map(|uuid| host.gpus.iter().position(|g| &g.uuid == uuid).unwrap() as u32)
                .collect();
            let lease = Lease {
                id: format!("lease-{}", self.next_token),
                pool_id: create.pool_id.clone(),
                holder_id: US.into(),
                gpu_uuids: create.gpu_uuids.clone(),
                gpu_indexes: indexes,
                fencing_token: self.next_token,
                state: LeaseState::Active,
                created_at_ms: self.now_ms as u64,
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
            };
            self.known.push(KnownLease {
                host: host.name.clone(),
                lease_id: lease.id.clone(),
                pool_id: lease.pool_id.clone(),
                fencing_token: lease.fencing_token,
                gpu_uuids: lease.gpu_uuids.clone(),
                gpu_indexes: lease.gpu_indexes.clone(),
                granted_at_ms: self.now_ms,
            });
            host.leases.push(lease);
        }
        for release in &plan.releases {
            let host = self
                .hosts
                .iter_mut()
                .find(|h| h.name == release.host)
                .unwrap();
            let lease = host
                .leases
                .iter_mut()
                .find(|l| l.id == release.lease_id)
                .unwrap();
            lease.state = LeaseState::Released;
            self.known.retain(|k| k.lease_id != release.lease_id);
        }
        plan
    }

    fn active(&self, pool: &str) -> Vec<(String, String)> {
        self.hosts
            .iter()
            .flat_map(|host| {
                host.leases
                    .iter()
                    .filter(|l| l.state == LeaseState::Active && l.pool_id == pool)
                    .map(|l| (host.name.clone(), l.gpu_uuids[0].clone()))
            })
            .collect()
    }

    fn set_up(&mut self, host: &str, up: bool) {
        self.hosts.iter_mut().find(|h| h.name == host).unwrap().up = up;
    }
}

fn pool(id: &str, model: &str, regions: &[&str], desired: u32) -> PoolTarget {
    PoolTarget {
        id: id.into(),
        model: model.into(),
        regions: regions.iter().map(|r| r.to_string()).collect(),
        desired,
        policy: PlacementPolicy::Pack,
        at_unit_end: false,
        unit_ms: 3_600_000,
        prices: [
            ("cn-north".to_string(), 1250),
            ("cn-east".to_string(), 1100),
        ]
        .into_iter()
        .collect(),
        release_first: Vec::new(),
        external: false,
        nodes: Default::default(),
        spot: SpotTarget::default(),
    }
}

/// Spot GPUs on host `s` (cn-east, 4 A100s), on demand elsewhere.
fn spot_fleet() -> World {
    let mut world = World::new(&[
        ("a", "cn-east", 4, "NVIDIA A100-SXM4-80GB"),
        ("s", "cn-east", 4, "NVIDIA A100-SXM4-80GB"),
    ]);
    for gpu in &mut world.hosts[1].gpus {
        gpu.spot = true;
    }
    world
}

fn spot_pool(desired: u32, wanted: u32, spot_price: Option<i64>) -> PoolTarget {
    let mut target = pool("p", "A100", &["cn-east"], desired);
    target.spot = SpotTarget {
        wanted,
        prices: spot_price
            .map(|price| ("cn-east".to_string(), price))
            .into_iter()
            .collect(),
    };
    target
}

#[test]
fn spot_goes_on_spot_gpus_up_to_its_share_and_the_rest_on_demand() {
    let mut world = spot_fleet();
    let plan = world.pass(&[spot_pool(6, 3, Some(400))]);
    assert_eq!(plan.creates.len(), 6);
    let on_spot = |world: &World| {
        world
            .active("p")
            .iter()
            .filter(|(host, _)| host == "s")
            .count()
    };
    assert_eq!(on_spot(&world), 3);
    assert_eq!(world.pass(&[spot_pool(6, 3, Some(400))]).pools[0].spot, 3);
    // Scale-in to 4 with 1 wanted on spot: spot above its share goes first.
    world.pass(&[spot_pool(4, 1, Some(400))]);
    assert_eq!(world.active("p").len(), 4);
    assert_eq!(on_spot(&world), 1);
}

#[test]
fn spot_that_cannot_be_had_goes_on_demand_and_a_pool_without_spot_never_takes_it() {
    // No spot price there (max price, breaker open): all on demand, and short past it.
    let mut world = spot_fleet();
    let plan = world.pass(&[spot_pool(6, 3, None)]);
    assert_eq!(plan.creates.len(), 4);
    assert_eq!(plan.pools[0].short, 2);
    // Short beside 4 free GPUs offered as spot it may not take: counted, so it says why.
    assert_eq!(plan.pools[0].spot_not_taken, 4);
    assert!(world.active("p").iter().all(|(host, _)| host == "a"));
    // An ordinary pool never takes a GPU offered as spot.
    let mut world = spot_fleet();
    world.pass(&[pool("q", "A100", &["cn-east"], 8)]);
    assert_eq!(world.active("q").len(), 4);
    assert!(world.active("q").iter().all(|(host, _)| host == "a"));
}

#[test]
fn a_reclaimed_spot_gpu_is_replaced_in_the_pass_that_sees_it_on_spot_or_on_demand_when_paused() {
    for paused in [false, true] {
        let mut world = spot_fleet();
        world.pass(&[spot_pool(2, 2, Some(400))]);
        assert_eq!(
            world.active("p").iter().filter(|(h, _)| h == "s").count(),
            2
        );
        // The owner takes one back: the very next pass orders its replacement.
        world.hosts[1].leases[0].reclaim_deadline_ms = Some(2_000_000);
        let price = (!paused).then_some(400);
        let plan = world.pass(&[spot_pool(2, if paused { 0 } else { 2 }, price)]);
        assert_eq!(plan.creates.len(), 1, "paused: {paused}");
        let host = if paused { "a" } else { "s" };
        assert_eq!(plan.creates[0].host, host, "paused: {paused}");
        assert_eq!(plan.pools[0].releasing, 1);
        assert!(
            plan.releases.is_empty(),
            "the host releases it, not the pool"
        );
    }
}

#[test]
fn back_to_spot_once_it_can_be_had_the_spot_granted_before_on_demand_goes() {
    let mut world = spot_fleet();
    // Spot paused: all 3 on demand.
    world.pass(&[spot_pool(3, 0, None)]);
    assert!(world.active("p").iter().all(|(h, _)| h == "a"));
    // Resumed, 2 wanted on spot: they are rented first, nothing released yet.
    let pools = [spot_pool(3, 2, Some(400))];
    let plan = world.pass(&pools);
    assert_eq!(plan.creates.len(), 2);
    assert!(plan.creates.iter().all(|c| c.host == "s"));
    assert!(plan.releases.is_empty(), "make before break");
    // Granted: as many on demand go.
    let plan = world.pass(&pools);
    assert!(plan.creates.is_empty());
    assert_eq!(plan.releases.len(), 2);
    assert!(plan.releases.iter().all(|r| r.host == "a"));
    let again = world.pass(&pools);
    assert!(again.creates.is_empty() && again.releases.is_empty());
    assert_eq!(again.pools[0].spot, 2);
    assert_eq!(world.active("p").len(), 3);
}

#[test]
fn back_to_spot_at_the_end_of_the_on_demand_gpus_paid_hour_not_before() {
    const HOUR: i64 = 3_600_000;
    let mut world = spot_fleet();
    let start = world.now_ms;
    let paid = |mut target: PoolTarget| {
        target.at_unit_end = true;
        target
    };
    // Spot paused: all 3 on demand, each paying its first hour.
    world.pass(&[paid(spot_pool(3, 0, None))]);
    let pools = [paid(spot_pool(3, 2, Some(400)))];
    // Spot again 20 minutes in: 40 paid minutes left on each, so nothing moves.
    for minute in [20, 40, 54] {
        world.now_ms = start + minute * 60_000;
        let plan = world.pass(&pools);
        assert!(
            plan.creates.is_empty() && plan.releases.is_empty(),
            "minute {minute}: {plan:?}"
        );
    }
    // The last 5 minutes of the hour: the spot GPUs are rented ...
    world.now_ms = start + HOUR - crate::spot::SWAP_LEAD_MS;
    let plan = world.pass(&pools);
    assert_eq!(plan.creates.len(), 2);
    assert!(plan.creates.iter().all(|c| c.host == "s"));
    assert!(plan.releases.is_empty());
    // ... and the on-demand ones they replace kept to the end of their paid hour.
    let plan = world.pass(&pools);
    assert!(plan.releases.is_empty(), "paid minutes left: {plan:?}");
    assert_eq!(plan.pools[0].held_to_unit_end, 2);
    world.now_ms = start + HOUR - crate::placement::UNIT_END_MARGIN_MS;
    let plan = world.pass(&pools);
    assert_eq!(plan.releases.len(), 2);
    assert!(plan.releases.iter().all(|r| r.host == "a"));
    let again = world.pass(&pools);
    assert!(again.creates.is_empty() && again.releases.is_empty());
    assert_eq!((again.pools[0].actual, again.pools[0].spot), (3, 2));
}

fn fleet() -> World {
    World::new(&[
        ("a", "cn-north", 8, "NVIDIA A100-SXM4-80GB"),
        ("b", "cn-north", 8, "NVIDIA A100-SXM4-80GB"),
        ("c", "cn-east", 8, "NVIDIA A100-SXM4-80GB"),
        ("d", "cn-east", 8, "NVIDIA H800"),
    ])
}

#[test]
fn scales_0_to_20_to_5_to_0_in_one_pass_each_and_then_holds_still() {
    let mut world = fleet();
    for desired in [0, 20, 5, 0] {
        let pools = [pool("p", "A100", &["cn-north", "cn-east"], desired)];
        world.pass(&pools);
        assert_eq!(world.active("p").len(), desired as usize, "after {desired}");
        // Level-triggered: the next pass does nothing.
        let again = world.pass(&pools);
        assert!(again.creates.is_empty() && again.releases.is_empty());
        let status = &again.pools[0];
        assert_eq!(status.actual, desired);
        assert_eq!(status.pending, 0);
    }
}

#[test]
fn a_lease_whose_workload_is_not_up_counts_held_and_starting_and_is_not_asked_for_again() {
    let mut world = fleet();
    let pools = [pool("p", "A100", &["cn-north"], 3)];
    world.pass(&pools);
    // The agent answers one lease as starting (its workload not up yet).
    let lease = world
        .hosts
        .iter_mut()
        .flat_map(|host| host.leases.iter_mut())
        .find(|lease| lease.pool_id == "p")
        .unwrap();
    lease.starting = true;
    let again = world.pass(&pools);
    assert!(
        again.creates.is_empty(),
        "a starting GPU is held: none more is rented"
    );
    let status = &again.pools[0];
    assert_eq!((status.actual, status.starting), (3, 1));
    assert_eq!(
        status.leases.iter().filter(|lease| lease.starting).count(),
        1
    );
    // Said ready once, on the pass that sees it up, not while it warms.
    let mut warming = HashSet::new();
    assert!(crate::settle::ready(&again.pools, 0, &mut warming).is_empty());
    assert!(crate::settle::ready(&world.pass(&pools).pools, 0, &mut warming).is_empty());
    let granted_at_ms = world
        .hosts
        .iter_mut()
        .flat_map(|host| host.leases.iter_mut())
        .find(|lease| lease.starting)
        .map(|lease| {
            lease.starting = false;
            i64::try_from(lease.created_at_ms).unwrap()
        })
        .unwrap();
    let up = world.pass(&pools);
    let said = crate::settle::ready(&up.pools, granted_at_ms + 5_400, &mut warming);
    assert_eq!(said.len(), 1, "{said:?}");
    let ebb_wire::reasons::ChangeReason::Ready {
        hosts,
        gpus,
        warmed_s,
    } = &said[0].1
    else {
        panic!("{said:?}")
    };
    assert_eq!((said[0].0.as_str(), gpus, warmed_s), ("p", &1, &5));
    assert_eq!(hosts.len(), 1);
    assert!(crate::settle::ready(&world.pass(&pools).pools, 0, &mut warming).is_empty());
}

#[test]
fn takes_the_cheapest_region_and_only_the_pools_model() {
    let mut world = fleet();
    let pools = [pool("p", "A100", &["cn-north", "cn-east"], 12)];
    world.pass(&pools);
    let active = world.active("p");
    // cn-east (c) first, all 8 of its A100s; the H800 host d is never touched.
    assert_eq!(active.iter().filter(|(h, _)| h == "c").count(), 8);
    assert!(active.iter().all(|(h, _)| h != "d"));
    let uuids: HashSet<&String> = active.iter().map(|(_, u)| u).collect();
    assert_eq!(uuids.len(), 12, "no GPU twice");
}

#[test]
fn asks_for_no_more_than_is_free_and_says_how_many_are_short() {
    let mut world = fleet();
    let pools = [pool("p", "A100", &["cn-north", "cn-east"], 30)];
    let plan = world.pass(&pools);
    assert_eq!(plan.creates.len(), 24);
    assert_eq!(plan.pools[0].short, 6);
    assert!(plan.pools[0].free.is_empty());
}

#[test]
fn two_pools_never_take_the_same_gpu() {
    let mut world = fleet();
    let pools = [
        pool("p", "A100", &["cn-east"], 6),
        pool("q", "A100", &["cn-east"], 6),
    ];
    let plan = world.pass(&pools);
    assert_eq!(world.active("p").len(), 6);
    assert_eq!(world.active("q").len(), 2);
    assert_eq!(plan.pools[1].short, 4);
}

#[test]
fn pending_requests_count_so_a_crash_and_rerun_asks_for_nothing_twice() {
    let world = fleet();
    let pools = [pool("p", "A100", &["cn-east"], 4)];
    let hosts = world.observe();
    let first = plan(&Input {
        now_ms: world.now_ms,
        holder: US,
        grace_ms: GRACE,
        pools: &pools,
        hosts: &hosts,
        known: &[],
        pending: &[],
    });
    assert_eq!(first.creates.len(), 4);
    // The process died after writing its intents and before any answer: the rerun sees
    // them pending and asks for nothing more, nor for the same GPUs.
    let pending: Vec<Pending> = first
        .creates
        .iter()
        .enumerate()
        .map(|(i, c)| Pending {
            key: format!("k{i}"),
            pool_id: c.pool_id.clone(),
            host: c.host.clone(),
            gpu_uuids: c.gpu_uuids.clone(),
            command: None,
        })
        .collect();
    let rerun = plan(&Input {
        now_ms: world.now_ms,
        holder: US,
        grace_ms: GRACE,
        pools: &pools,
        hosts: &hosts,
        known: &[],
        pending: &pending,
    });
    assert!(rerun.creates.is_empty());
    assert_eq!(rerun.pools[0].pending, 4);
    assert_eq!(rerun.pools[0].free[0].free, 4);
}

#[test]
fn failover_replaces_after_the_grace_period_and_releases_the_stale_on_return() {
    let mut world = fleet();
    let pools = [pool("p", "A100", &["cn-north", "cn-east"], 10)];
    world.pass(&pools);
    let on_c = world.active("p").iter().filter(|(h, _)| h == "c").count();
    assert_eq!(on_c, 8);
    world.set_up("c", false);
    // Within the grace period its leases still count: nothing is replaced.
    for _ in 0..30 {
        world.now_ms += 1_000;
        let plan = world.pass(&pools);
        assert!(plan.creates.is_empty(), "replaced before the grace period");
        assert_eq!(plan.pools[0].actual, 10);
    }
    // Past it (one tick later), written off and replaced elsewhere.
    world.now_ms += 1_000;
    let plan = world.pass(&pools);
    assert_eq!(plan.lose.len(), 1);
    assert_eq!(plan.creates.len(), 8);
    assert!(plan.creates.iter().all(|c| c.host != "c"));
    assert_eq!(world.active("p").len(), 18, "8 stale on c, 10 live");
    let plan = world.pass(&pools);
    assert_eq!(plan.pools[0].actual, 10);
    assert_eq!(plan.pools[0].lost, 8);
    assert!(plan.creates.is_empty());
    // Back: the 8 stale leases (at or below the fence) go, the replacements stay.
    world.set_up("c", true);
    world.now_ms += 1_000;
    let plan = world.pass(&pools);
    assert_eq!(plan.releases.len(), 8);
    assert!(
        plan.releases
            .iter()
            .all(|r| r.host == "c" && r.why == Why::Stale)
    );
    assert_eq!(world.active("p").len(), 10);
    let plan = world.pass(&pools);
    assert_eq!(plan.clear_fence, vec!["c".to_string()]);
    assert!(plan.releases.is_empty() && plan.creates.is_empty());
    // New leases on c after the fence are ordinary ones.
    let more = [pool("p", "A100", &["cn-north", "cn-east"], 16)];
    world.pass(&more);
    world.pass(&more);
    assert_eq!(world.active("p").len(), 16);
}

#[test]
fn a_deleted_pools_leases_are_released() {
    let mut world = fleet();
    world.pass(&[pool("p", "A100", &["cn-east"], 3)]);
    let plan = world.pass(&[]);
    assert_eq!(plan.releases.len(), 3);
    assert!(plan.releases.iter().all(|r| r.why == Why::Orphan));
    assert!(world.active("p").is_empty());
}

#[test]
fn someone_elses_leases_are_left_alone() {
    let mut world = fleet();
    world.hosts[2].leases.push(Lease {
        id: "theirs".into(),
        pool_id: "p".into(),
        holder_id: "another-console".into(),
        gpu_uuids: vec!["GPU-c-0".into()],
        gpu_indexes: vec![0],
        fencing_token: 99,
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
    });
    let plan = world.pass(&[pool("p", "A100", &["cn-east"], 8)]);
    assert_eq!(plan.creates.len(), 7, "GPU-c-0 is taken");
    assert!(plan.creates.iter().all(|c| c.gpu_uuids[0] != "GPU-c-0"));
    let plan = world.pass(&[pool("p", "A100", &["cn-east"], 0)]);
    assert!(plan.releases.iter().all(|r| r.lease_id != "theirs"));
}

#[test]
fn a_scale_in_gives_back_the_operators_choice_then_what_saved_its_state() {
    let mut world = fleet();
    let mut target = pool("p", "A100", &["cn-east"], 4);
    world.pass(std::slice::from_ref(&target));
    let ids: Vec<String> = world.hosts[2].leases.iter().map(|l| l.id.clone()).collect();
    assert_eq!(ids.len(), 4);
    // The third saved its state; the operator picks the fourth.
    world.hosts[2].leases[2].checkpoint_at_ms = Some(1);
    target.release_first = vec![ids[3].clone()];
    target.desired = 2;
    let plan = world.pass(std::slice::from_ref(&target));
    let released: Vec<&str> = plan.releases.iter().map(|r| r.lease_id.as_str()).collect();
    assert_eq!(released, [ids[3].as_str(), ids[2].as_str()]);
    let status = &plan.pools[0];
    let saved = status.leases.iter().find(|l| l.lease_id == ids[2]).unwrap();
    assert_eq!(saved.checkpoint_at_ms, Some(1));
}

#[test]
fn release_at_unit_end_keeps_paid_hours() {
    let mut world = fleet();
    let mut target = pool("p", "A100", &["cn-east"], 4);
    target.at_unit_end = true;
    world.pass(std::slice::from_ref(&target));
    target.desired = 1;
    world.now_ms += 10 * 60_000;
    let plan = world.pass(std::slice::from_ref(&target));
    assert!(plan.releases.is_empty());
    assert_eq!(plan.pools[0].held_to_unit_end, 3);
    // A minute before the hour is up they go.
    world.now_ms += 49 * 60_000;
    let plan = world.pass(std::slice::from_ref(&target));
    assert_eq!(plan.releases.len(), 3);
    assert_eq!(world.active("p").len(), 1);
}

#[test]
fn ten_thousand_gpus_and_fifty_pools_converge_in_a_pass() {
    let regions = ["cn-north", "cn-east", "cn-south"];
    let spec: Vec<(String, &str, u32, &str)> = (0..1250)
        .map(|i| {
            (
                format!("h{i:04}"),
                regions[i % 3],
                8,
                "NVIDIA A100-SXM4-80GB",
            )
        })
        .collect();
    let spec: Vec<(&str, &str, u32, &str)> = spec
        .iter()
        .map(|(n, r, g, m)| (n.as_str(), *r, *g, *m))
        .collect();
    let mut world = World::new(&spec);
    let pools: Vec<PoolTarget> = (0..50)
        .map(|i| pool(&format!("p{i}"), "A100", &[regions[i % 3]], 150))
        .collect();
    world.pass(&pools);
    let plan = world.pass(&pools);
    assert!(plan.creates.is_empty());
    for status in &plan.pools {
        assert_eq!(status.actual, 150);
    }
}

#[test]
fn down_since_starts_at_the_first_silence_is_kept_and_forgiven_on_return() {
    let obs = |name: &str, up: bool| HostObs {
        name: name.into(),
        region: "cn-east".into(),
        seen: up.then(Seen::default),
        down_since_ms: None,
        lost_fence: None,
        refusing: None,
        draining: false,
    };
    let mut down = HashMap::from([("old".to_string(), 5)]);
    let mut hosts = vec![obs("a", true), obs("b", false)];
    let changed = mark_down(&mut down, &mut hosts, 100);
    assert_eq!(
        changed,
        vec![("b".to_string(), Some(100)), ("old".to_string(), None)]
    );
    assert_eq!(hosts[1].down_since_ms, Some(100));
    // Still silent later: the first silence counts, nothing to record.
    let mut hosts = vec![obs("a", true), obs("b", false)];
    assert!(mark_down(&mut down, &mut hosts, 200).is_empty());
    assert_eq!(hosts[1].down_since_ms, Some(100));
    // Back: forgiven.
    let mut hosts = vec![obs("a", true), obs("b", true)];
    assert_eq!(
        mark_down(&mut down, &mut hosts, 300),
        vec![("b".to_string(), None)]
    );
    assert!(down.is_empty());
}

#[test]
fn a_host_that_refuses_our_requests_is_left_alone_for_a_doubling_backoff() {
    let world = fleet();
    let forbidden = HostProblem::Forbidden {
        url: "http://c:7070".into(),
    };
    let mut refusals = Refusals::default();
    refusals.refused("c", forbidden.clone(), 0);
    let mut hosts = world.observe();
    refusals.mark(&mut hosts, 9_999);
    let c = hosts.iter().find(|h| h.name == "c").unwrap();
    assert_eq!(c.refusing, Some(forbidden.clone()));
    // The cheapest region's only A100 host refuses: the pool goes to cn-north meanwhile.
    let pools = [pool("p", "A100", &["cn-north", "cn-east"], 4)];
    let out = plan(&Input {
        now_ms: 9_999,
        holder: US,
        grace_ms: GRACE,
        pools: &pools,
        hosts: &hosts,
        known: &[],
        pending: &[],
    });
    assert_eq!(out.creates.len(), 4);
    assert!(
        out.creates.iter().all(|c| c.host != "c"),
        "{:?}",
        out.creates
    );
    // The backoff over, it is asked again; refused again, it waits twice as long.
    refusals.mark(&mut hosts, 10_000);
    assert!(hosts.iter().all(|h| h.refusing.is_none()));
    refusals.refused("c", forbidden.clone(), 10_000);
    refusals.mark(&mut hosts, 29_999);
    assert!(hosts.iter().any(|h| h.refusing.is_some()));
    refusals.mark(&mut hosts, 30_000);
    assert!(hosts.iter().all(|h| h.refusing.is_none()));
    // Never more than the cap; a grant forgives.
    for _ in 0..20 {
        refusals.refused("c", forbidden.clone(), 0);
    }
    refusals.mark(&mut hosts, Refusals::MAX_BACKOFF_MS);
    assert!(hosts.iter().all(|h| h.refusing.is_none()));
    refusals.refused("c", forbidden, 0);
    refusals.granted("c");
    refusals.mark(&mut hosts, 1);
    assert!(hosts.iter().all(|h| h.refusing.is_none()));
}

#[test]
fn a_draining_host_keeps_its_leases_until_the_replacements_are_granted_elsewhere() {
    let mut world = World::new(&[
        ("a", "cn-east", 4, "NVIDIA A100-SXM4-80GB"),
        ("b", "cn-east", 4, "NVIDIA A100-SXM4-80GB"),
    ]);
    let pools = [pool("p", "A100", &["cn-east"], 3)];
    world.pass(&pools);
    let first = world.active("p");
    let holder = first[0].0.clone();
    assert!(first.iter().all(|(h, _)| *h == holder), "packed: {first:?}");
    let other = if holder == "a" { "b" } else { "a" };
    world.draining.insert(holder.clone());

    // Make before break: replacements first, nothing released while they are asked for.
    let plan = world.pass(&pools);
    assert_eq!(plan.creates.len(), 3);
    assert!(plan.creates.iter().all(|c| c.host == other), "{plan:?}");
    assert!(plan.releases.is_empty(), "{plan:?}");
    assert_eq!(plan.pools[0].actual, 3, "the draining leases still serve");

    // Once they are granted, the draining host's leases go.
    let plan = world.pass(&pools);
    assert!(plan.creates.is_empty(), "{plan:?}");
    assert_eq!(plan.releases.len(), 3);
    assert!(
        plan.releases
            .iter()
            .all(|r| r.host == holder && r.why == Why::Drain),
        "{plan:?}"
    );
    let active = world.active("p");
    assert_eq!(active.len(), 3);
    assert!(active.iter().all(|(h, _)| h == other), "{active:?}");
    // And it stays put: nothing new goes to the draining host.
    let plan = world.pass(&pools);
    assert!(
        plan.creates.is_empty() && plan.releases.is_empty(),
        "{plan:?}"
    );
}

#[test]
fn a_draining_host_with_no_room_elsewhere_is_released_at_once() {
    let mut world = World::new(&[("a", "cn-east", 4, "NVIDIA A100-SXM4-80GB")]);
    let pools = [pool("p", "A100", &["cn-east"], 4)];
    world.pass(&pools);
    // A host with room for one comes.
    let more = World::new(&[("b", "cn-east", 1, "NVIDIA A100-SXM4-80GB")]);
    world.hosts.extend(more.hosts);
    world.draining.insert("a".into());
    let plan = world.pass(&pools);
    // One replacement fits on b; the pool is short of 3 and the host still goes.
    assert_eq!(plan.creates.len(), 1);
    assert_eq!(plan.pools[0].short, 3);
    assert_eq!(plan.releases.len(), 4);
    assert!(plan.releases.iter().all(|r| r.why == Why::Drain));
}

#[test]
fn a_reclaimed_lease_is_replaced_at_once_left_to_its_host_and_said_once() {
    let mut world = fleet();
    let pools = [pool("p", "A100", &["cn-north"], 4)];
    world.pass(&pools);
    assert_eq!(world.active("p").len(), 4);
    // The owner of the first lease's host takes it back with a deadline.
    let taken = world
        .hosts
        .iter_mut()
        .flat_map(|host| host.leases.iter_mut())
        .find(|lease| lease.state == LeaseState::Active)
        .unwrap();
    taken.reclaim_deadline_ms = Some(1_000_000);
    let taken = taken.id.clone();
    let plan = world.pass(&pools);
    assert_eq!(
        plan.creates.len(),
        1,
        "the replacement, on the pass that sees it"
    );
    assert!(
        plan.releases
            .iter()
            .all(|release| release.lease_id != taken),
        "the host releases it, not the pool"
    );
    let status = &plan.pools[0];
    assert_eq!((status.actual, status.releasing), (3, 1));
    let shown = status.leases.iter().find(|l| l.lease_id == taken).unwrap();
    assert_eq!(
        (shown.state, shown.reclaim_deadline_ms),
        (PoolLeaseState::Reclaimed, Some(1_000_000))
    );
    // Said once while it lasts.
    let mut said = HashSet::new();
    let first = crate::settle::reclaims(&plan.pools, &mut said);
    assert_eq!(first.len(), 1);
    assert!(matches!(
        &first[0].1,
        ebb_wire::reasons::ChangeReason::Reclaimed {
            gpus: 1,
            until_ms: 1_000_000,
            ..
        }
    ));
    let again = world.pass(&pools);
    assert!(again.creates.is_empty(), "one replacement, not two");
    assert!(crate::settle::reclaims(&again.pools, &mut said).is_empty());
}

#[test]
fn a_bound_pools_node_orders_are_planned_as_exact_leases_once() {
    let mut world = World::new(&[("n", "cn-east", 4, "NVIDIA A100-SXM4-80GB")]);
    let node = |gpus: &[u32]| NodeRequest {
        host: "n".into(),
        gpu_uuids: gpus.iter().map(|i| format!("GPU-n-{i}")).collect(),
        command: Some(vec!["slurmd".into(), "-N".into(), "node-1".into()]),
    };
    let mut bound = pool("b", "A100", &["cn-east"], 4);
    bound.external = true;
    // The desired count alone rents nothing for a bound pool.
    let first = world.pass(std::slice::from_ref(&bound));
    assert!(first.creates.is_empty() && first.releases.is_empty());
    // A node asked: one lease of exactly its GPUs, with its workload.
    bound.nodes.rent = vec![node(&[0, 1])];
    let hosts = world.observe();
    let input = Input {
        now_ms: world.now_ms,
        holder: US,
        grace_ms: GRACE,
        pools: std::slice::from_ref(&bound),
        hosts: &hosts,
        known: &world.known,
        pending: &[],
    };
    let asked = plan(&input);
    assert_eq!(asked.creates.len(), 1);
    assert_eq!(asked.creates[0].gpu_uuids, vec!["GPU-n-0", "GPU-n-1"]);
    assert_eq!(asked.creates[0].command, node(&[0]).command);
    assert_eq!(asked.pools[0].pending, 2, "counted in GPUs");
    // The same node already asked (its intent unanswered), or one GPU of it taken: not
    // asked again.
    let in_flight = [Pending {
        key: "k".into(),
        pool_id: "b".into(),
        host: "n".into(),
        gpu_uuids: node(&[0, 1]).gpu_uuids,
        command: None,
    }];
    let again = plan(&Input {
        pending: &in_flight,
        ..input
    });
    assert!(again.creates.is_empty());
    assert_eq!(again.pools[0].pending, 2);
    let mut overlapping = bound.clone();
    overlapping.nodes.rent = vec![node(&[1, 2])];
    let clash = plan(&Input {
        pools: std::slice::from_ref(&overlapping),
        pending: &in_flight,
        ..input
    });
    assert!(clash.creates.is_empty());
    // Granted, then given back when the binder asks.
    world.pass(std::slice::from_ref(&bound));
    bound.nodes.rent.clear();
    let held = world.active("b");
    assert_eq!(held.len(), 1);
    let lease_id = world.hosts[0].leases[0].id.clone();
    bound.nodes.release = vec![lease_id.clone()];
    let given_back = world.pass(std::slice::from_ref(&bound));
    assert_eq!(given_back.releases.len(), 1);
    assert_eq!(given_back.releases[0].lease_id, lease_id);
    assert_eq!(given_back.pools[0].releasing, 2);
}
