//! Each phase on its own, as tables: a case names what it shows, its input, and what the
//! phase decides. The planner as a whole is tested against a simulated fleet in
//! `reconcile/tests.rs`.

use super::*;
use crate::reconcile::{NodeOrders, Pending, SpotTarget};
use ebb_wire::pools::PlacementPolicy;
use ebb_wire::reasons::HostProblem;

const US: &str = "console-1";
const MINUTE: i64 = 60_000;
const HOUR: i64 = 60 * MINUTE;
const NOW: i64 = 100 * HOUR;
const A100: &str = "NVIDIA A100-SXM4-80GB";

fn gpu(uuid: &str, spot: bool) -> Gpu {
    Gpu {
        uuid: uuid.into(),
        model: A100.into(),
        healthy: true,
        spot,
        ..Gpu::default()
    }
}

/// An active lease of ours in pool `p` on GPU `GPU-<id>`.
fn lease(id: &str, token: u64) -> Lease {
    Lease {
        id: id.into(),
        pool_id: "p".into(),
        holder_id: US.into(),
        gpu_uuids: vec![format!("GPU-{id}")],
        gpu_indexes: vec![0],
        fencing_token: token,
        state: LeaseState::Active,
        created_at_ms: (NOW - HOUR) as u64,
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
    }
}

/// A lease granted `minutes` ago.
fn aged(id: &str, minutes: i64) -> Lease {
    Lease {
        created_at_ms: (NOW - minutes * MINUTE) as u64,
        ..lease(id, 1)
    }
}

fn host(name: &str, gpus: Vec<Gpu>, leases: Vec<Lease>) -> HostObs {
    HostObs {
        name: name.into(),
        region: "cn-east".into(),
        seen: Some(Seen { gpus, leases }),
        down_since_ms: None,
        lost_fence: None,
        refusing: None,
        draining: false,
    }
}

/// A host that holds `leases`, each on its own GPU.
fn holding(name: &str, leases: Vec<Lease>) -> HostObs {
    let gpus = leases
        .iter()
        .map(|lease| gpu(&lease.gpu_uuids[0], false))
        .collect();
    host(name, gpus, leases)
}

fn silent(name: &str, down_for_ms: i64) -> HostObs {
    HostObs {
        seen: None,
        down_since_ms: Some(NOW - down_for_ms),
        ..host(name, Vec::new(), Vec::new())
    }
}

fn known(id: &str, host: &str, token: u64) -> KnownLease {
    KnownLease {
        host: host.into(),
        lease_id: id.into(),
        pool_id: "p".into(),
        fencing_token: token,
        gpu_uuids: vec![format!("GPU-{id}")],
        gpu_indexes: vec![0],
        granted_at_ms: NOW - HOUR,
    }
}

fn pool(desired: u32) -> PoolTarget {
    PoolTarget {
        id: "p".into(),
        model: "A100".into(),
        regions: vec!["cn-east".into()],
        desired,
        policy: PlacementPolicy::Pack,
        at_unit_end: false,
        unit_ms: HOUR,
        prices: [("cn-east".to_string(), 1000)].into_iter().collect(),
        release_first: Vec::new(),
        external: false,
        nodes: NodeOrders::default(),
        spot: SpotTarget::default(),
    }
}

fn input<'a>(
    pools: &'a [PoolTarget],
    hosts: &'a [HostObs],
    known: &'a [KnownLease],
    pending: &'a [Pending],
) -> Input<'a> {
    Input {
        now_ms: NOW,
        holder: US,
        grace_ms: 30_000,
        pools,
        hosts,
        known,
        pending,
    }
}

fn ids(held: &[Holding<'_>]) -> Vec<String> {
    held.iter().map(|held| held.lease.id.clone()).collect()
}

/// A name, a lease, its host, its pool, and what the lease is to the pool.
type StandingCase<'a> = (
    &'a str,
    &'a Lease,
    HostObs,
    Option<&'a PoolTarget>,
    Option<Standing>,
);

#[test]
fn standing_says_what_each_lease_of_ours_is_to_its_pool() {
    let fenced = |token: Option<u64>, draining: bool| HostObs {
        lost_fence: token,
        draining,
        ..host("a", Vec::new(), Vec::new())
    };
    let theirs = Lease {
        holder_id: "another-console".into(),
        ..lease("l", 3)
    };
    let released = Lease {
        state: LeaseState::Released,
        ..lease("l", 3)
    };
    let releasing = Lease {
        state: LeaseState::Releasing,
        ..lease("l", 3)
    };
    let reclaimed = Lease {
        reclaim_deadline_ms: Some(1),
        ..lease("l", 3)
    };
    let plain = lease("l", 3);
    let ours = pool(1);
    let external = PoolTarget {
        external: true,
        ..pool(1)
    };
    #[rustfmt::skip]
    let cases: Vec<StandingCase<'_>> = vec![
        ("someone else's", &theirs, fenced(None, false), Some(&ours), None),
        ("released already", &released, fenced(None, false), Some(&ours), None),
        ("releasing, even stale", &releasing, fenced(Some(5), false), Some(&ours), Some(Standing::Releasing)),
        ("releasing, even orphaned", &releasing, fenced(None, false), None, Some(Standing::Releasing)),
        ("its pool is gone", &plain, fenced(None, false), None, Some(Standing::Release(Why::Orphan))),
        ("its pool is gone, and stale", &plain, fenced(Some(5), false), None, Some(Standing::Release(Why::Orphan))),
        ("at the fence: stale", &plain, fenced(Some(3), false), Some(&ours), Some(Standing::Release(Why::Stale))),
        ("above the fence: held", &plain, fenced(Some(2), false), Some(&ours), Some(Standing::Held)),
        ("stale beats reclaimed", &reclaimed, fenced(Some(3), false), Some(&ours), Some(Standing::Release(Why::Stale))),
        ("reclaimed", &reclaimed, fenced(None, false), Some(&ours), Some(Standing::Reclaimed)),
        ("reclaimed beats draining", &reclaimed, fenced(None, true), Some(&ours), Some(Standing::Reclaimed)),
        ("on a draining host", &plain, fenced(None, true), Some(&ours), Some(Standing::Draining)),
        ("an external pool's, on a draining host", &plain, fenced(None, true), Some(&external), Some(Standing::Held)),
        ("ordinary", &plain, fenced(None, false), Some(&ours), Some(Standing::Held)),
    ];
    for (name, lease, host, pool, want) in cases {
        assert_eq!(standing(lease, US, &host, pool), want, "{name}");
    }
}

/// What [`observe_hosts`] decided, for pool `p`.
#[derive(Debug, PartialEq, Default)]
struct Observed {
    releases: Vec<(String, Why)>,
    lose: Vec<(String, u64)>,
    clear_fence: Vec<String>,
    /// (actual, releasing, lost, spot).
    counts: (u32, u32, u32, u32),
    states: Vec<(String, PoolLeaseState)>,
    held: Vec<String>,
    draining: Vec<String>,
    /// Free GPU uuids by host.
    free: Vec<Vec<String>>,
}

fn observe(hosts: &[HostObs], known: &[KnownLease], pending: &[Pending]) -> Observed {
    let pools = [pool(4)];
    let input = input(&pools, hosts, known, pending);
    let (index, mut books) = index(&input);
    let mut out = Plan::default();
    let free = observe_hosts(&input, &index, &mut books, &mut out);
    let book = &books[0];
    let status = &book.status;
    Observed {
        releases: out
            .releases
            .iter()
            .map(|r| (r.lease_id.clone(), r.why))
            .collect(),
        lose: out.lose,
        clear_fence: out.clear_fence,
        counts: (status.actual, status.releasing, status.lost, status.spot),
        states: status
            .leases
            .iter()
            .map(|view| (view.lease_id.clone(), view.state))
            .collect(),
        held: ids(&book.held),
        draining: ids(&book.draining),
        free: free
            .iter()
            .map(|gpus| gpus.iter().map(|gpu| gpu.uuid.clone()).collect())
            .collect(),
    }
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// A name, the hosts, our recorded leases, the requests in flight, and what is decided.
type ObserveCase = (
    &'static str,
    Vec<HostObs>,
    Vec<KnownLease>,
    Vec<Pending>,
    Observed,
);

#[test]
fn observe_hosts_counts_releases_and_writes_off_each_hosts_leases() {
    let fenced = |fence: u64, leases: Vec<Lease>| HostObs {
        lost_fence: Some(fence),
        ..holding("a", leases)
    };
    let releasing = |id: &str, token: u64| Lease {
        state: LeaseState::Releasing,
        ..lease(id, token)
    };
    let orphan = Lease {
        pool_id: "gone".into(),
        ..lease("l1", 1)
    };
    let reclaimed = Lease {
        reclaim_deadline_ms: Some(1),
        ..lease("l1", 1)
    };
    let theirs = Lease {
        holder_id: "another-console".into(),
        ..lease("l1", 1)
    };
    let released = Lease {
        state: LeaseState::Released,
        ..lease("l2", 2)
    };
    let on_spot = host("a", vec![gpu("GPU-l1", true)], vec![lease("l1", 1)]);
    let draining = HostObs {
        draining: true,
        ..host(
            "a",
            vec![gpu("GPU-l1", false), gpu("GPU-f", false)],
            vec![lease("l1", 1)],
        )
    };
    let written_off = HostObs {
        lost_fence: Some(9),
        ..silent("a", 60_000)
    };
    let refusing = HostObs {
        refusing: Some(HostProblem::Forbidden { url: "a".into() }),
        ..host("a", vec![gpu("GPU-f", false)], Vec::new())
    };
    let mut sick = gpu("GPU-sick", false);
    sick.healthy = false;
    let asked = Pending {
        key: "k".into(),
        pool_id: "p".into(),
        host: "a".into(),
        gpu_uuids: vec!["GPU-asked".into()],
        command: None,
    };
    let active = |id: &str| (id.to_string(), PoolLeaseState::Active);
    let shown = |id: &str, state| (id.to_string(), state);
    let cases: Vec<ObserveCase> = vec![
        (
            "an ordinary lease is held and counted; the rest is free",
            vec![host(
                "a",
                vec![gpu("GPU-l1", false), gpu("GPU-f", false)],
                vec![lease("l1", 1)],
            )],
            vec![],
            vec![],
            Observed {
                counts: (1, 0, 0, 0),
                states: vec![active("l1")],
                held: strings(&["l1"]),
                free: vec![strings(&["GPU-f"])],
                ..Observed::default()
            },
        ),
        (
            "a lease on a GPU offered as spot counts toward the spot share",
            vec![on_spot],
            vec![],
            vec![],
            Observed {
                counts: (1, 0, 0, 1),
                states: vec![active("l1")],
                held: strings(&["l1"]),
                free: vec![vec![]],
                ..Observed::default()
            },
        ),
        (
            "a deleted pool's lease is released as an orphan, counted nowhere",
            vec![holding("a", vec![orphan])],
            vec![],
            vec![],
            Observed {
                releases: vec![("l1".into(), Why::Orphan)],
                free: vec![vec![]],
                ..Observed::default()
            },
        ),
        (
            "at or below the fence is stale and released; the fence stays for it",
            vec![fenced(5, vec![lease("l1", 5), lease("l2", 6)])],
            vec![],
            vec![],
            Observed {
                releases: vec![("l1".into(), Why::Stale)],
                counts: (1, 1, 0, 0),
                states: vec![shown("l1", PoolLeaseState::Releasing), active("l2")],
                held: strings(&["l2"]),
                free: vec![vec![]],
                ..Observed::default()
            },
        ),
        (
            "a stale lease still releasing keeps the fence and is not asked again",
            vec![fenced(5, vec![releasing("l1", 3)])],
            vec![],
            vec![],
            Observed {
                counts: (0, 1, 0, 0),
                states: vec![shown("l1", PoolLeaseState::Releasing)],
                free: vec![vec![]],
                ..Observed::default()
            },
        ),
        (
            "no stale lease left: the fence is cleared",
            vec![fenced(5, vec![lease("l2", 6), releasing("l3", 7)])],
            vec![],
            vec![],
            Observed {
                clear_fence: strings(&["a"]),
                counts: (1, 1, 0, 0),
                states: vec![active("l2"), shown("l3", PoolLeaseState::Releasing)],
                held: strings(&["l2"]),
                free: vec![vec![]],
                ..Observed::default()
            },
        ),
        (
            "a reclaimed lease is releasing, not held: its replacement is due now",
            vec![holding("a", vec![reclaimed])],
            vec![],
            vec![],
            Observed {
                counts: (0, 1, 0, 0),
                states: vec![shown("l1", PoolLeaseState::Reclaimed)],
                free: vec![vec![]],
                ..Observed::default()
            },
        ),
        (
            "a lease on a draining host waits for the drain; nothing there is free",
            vec![draining],
            vec![],
            vec![],
            Observed {
                draining: strings(&["l1"]),
                free: vec![vec![]],
                ..Observed::default()
            },
        ),
        (
            "someone else's lease is left alone and its GPU taken; a released one's is free",
            vec![holding("a", vec![theirs, released])],
            vec![],
            vec![],
            Observed {
                free: vec![strings(&["GPU-l2"])],
                ..Observed::default()
            },
        ),
        (
            "unhealthy and asked-for GPUs are not free",
            vec![host(
                "a",
                vec![gpu("GPU-f", false), sick, gpu("GPU-asked", false)],
                vec![],
            )],
            vec![],
            vec![asked],
            Observed {
                free: vec![strings(&["GPU-f"])],
                ..Observed::default()
            },
        ),
        (
            "a host refusing our requests offers nothing",
            vec![refusing],
            vec![],
            vec![],
            Observed {
                free: vec![vec![]],
                ..Observed::default()
            },
        ),
        (
            "a silent host's leases count through the grace period",
            vec![silent("a", 10_000)],
            vec![known("k1", "a", 4)],
            vec![],
            Observed {
                counts: (1, 0, 0, 0),
                states: vec![shown("k1", PoolLeaseState::Unreachable)],
                free: vec![vec![]],
                ..Observed::default()
            },
        ),
        (
            "past the grace period they are lost, the host fenced at its highest token",
            vec![silent("a", 60_000)],
            vec![known("k1", "a", 9), known("k2", "a", 4)],
            vec![],
            Observed {
                lose: vec![("a".into(), 9)],
                counts: (0, 0, 2, 0),
                states: vec![
                    shown("k1", PoolLeaseState::Lost),
                    shown("k2", PoolLeaseState::Lost),
                ],
                free: vec![vec![]],
                ..Observed::default()
            },
        ),
        (
            "written off at that fence already: lost, not fenced again",
            vec![written_off],
            vec![known("k1", "a", 9)],
            vec![],
            Observed {
                counts: (0, 0, 1, 0),
                states: vec![shown("k1", PoolLeaseState::Lost)],
                free: vec![vec![]],
                ..Observed::default()
            },
        ),
    ];
    for (name, hosts, known, pending, want) in cases {
        assert_eq!(observe(&hosts, &known, &pending), want, "{name}");
    }
}

#[test]
fn candidates_are_the_pools_model_in_its_regions_on_demand_and_spot_where_priced() {
    let mut h800 = gpu("GPU-h800", false);
    h800.model = "NVIDIA H800".into();
    let hosts = [
        host(
            "a",
            vec![
                gpu("GPU-a0", false),
                gpu("GPU-a1", false),
                gpu("GPU-s0", true),
                h800,
            ],
            vec![],
        ),
        HostObs {
            region: " cn-north".into(),
            ..host("b", vec![gpu("GPU-b0", false)], vec![])
        },
        silent("c", 0),
    ];
    let spot_priced = |mut target: PoolTarget| {
        target.spot.prices = [("cn-east".to_string(), 300)].into_iter().collect();
        target
    };
    let with = |f: fn(&mut PoolTarget)| {
        let mut target = pool(4);
        f(&mut target);
        target
    };
    type Listed = Vec<(&'static str, u32)>;
    let cases: Vec<(&str, PoolTarget, Listed, Listed, u32)> = vec![
        (
            "on demand only, spot it may not take counted",
            pool(4),
            vec![("a", 2)],
            vec![],
            1,
        ),
        (
            "spot where it has a spot price",
            spot_priced(pool(4)),
            vec![("a", 2)],
            vec![("a", 1)],
            0,
        ),
        (
            "regions compared trimmed",
            with(|t| t.regions = vec!["cn-north".into()]),
            vec![("b", 1)],
            vec![],
            0,
        ),
        (
            "only its model",
            with(|t| t.model = "H800".into()),
            vec![("a", 1)],
            vec![],
            0,
        ),
        (
            "an external pool does not count spot it may not take",
            with(|t| t.external = true),
            vec![("a", 2)],
            vec![],
            0,
        ),
    ];
    for (name, target, on_demand, spot, not_taken) in cases {
        let pools = [target];
        let input = input(&pools, &hosts, &[], &[]);
        let (index, mut books) = index(&input);
        let free = observe_hosts(&input, &index, &mut books, &mut Plan::default());
        let free = Free::new(&input, free);
        let offers = candidates(&input, &pools[0], &books[0], &free);
        let listed = |offer: &Offer<'_>| -> Vec<(String, u32)> {
            offer
                .candidates
                .iter()
                .map(|c| (c.host.to_string(), c.free))
                .collect()
        };
        let listed_as = |want: Listed| -> Vec<(String, u32)> {
            want.iter().map(|&(h, n)| (h.to_string(), n)).collect()
        };
        assert_eq!(listed(&offers.on_demand), listed_as(on_demand), "{name}");
        assert_eq!(listed(&offers.spot), listed_as(spot), "{name}");
        assert_eq!(offers.spot_not_taken, not_taken, "{name}");
    }
}

/// One host's offer of `free` GPUs, as [`candidates`] makes it.
fn offer(host: &'static str, free: u32) -> Offer<'static> {
    if free == 0 {
        return Offer::default();
    }
    Offer {
        hosts: vec![0],
        candidates: vec![Candidate {
            host,
            region: "cn-east",
            free,
            held: 0,
            price_fen: Some(1000),
        }],
    }
}

fn placed(placement: &Placement) -> u32 {
    placement.takes.iter().map(|&(_, count)| count).sum()
}

#[test]
fn grow_asks_for_what_is_missing_on_spot_to_its_share_and_goes_back_to_spot_when_due() {
    struct Case {
        name: &'static str,
        desired: u32,
        /// Of desired, on spot.
        wanted: u32,
        at_unit_end: bool,
        external: bool,
        /// Held leases: (on spot, granted minutes ago).
        held: Vec<(bool, i64)>,
        pending: u32,
        spot_pending: u32,
        /// Free GPUs offered (spot, on demand).
        free: (u32, u32),
        /// (on spot, on demand, short, rebalance).
        want: (u32, u32, u32, bool),
    }
    let case = |name, desired, wanted, held: Vec<(bool, i64)>, free, want| Case {
        name,
        desired,
        wanted,
        at_unit_end: false,
        external: false,
        held,
        pending: 0,
        spot_pending: 0,
        free,
        want,
    };
    let od = |minutes| (false, minutes);
    let sp = |minutes| (true, minutes);
    let cases = vec![
        case(
            "below its count: spot up to its share, the rest on demand",
            4,
            2,
            vec![],
            (4, 4),
            (2, 2, 0, false),
        ),
        case(
            "spot held counts toward the share",
            4,
            2,
            vec![sp(10), sp(10)],
            (4, 4),
            (0, 2, 0, false),
        ),
        Case {
            spot_pending: 1,
            pending: 1,
            ..case(
                "spot asked for counts toward the share",
                4,
                2,
                vec![],
                (4, 4),
                (1, 2, 0, false),
            )
        },
        case(
            "spot short goes on demand",
            4,
            3,
            vec![],
            (1, 8),
            (1, 3, 0, false),
        ),
        case(
            "short past all that is free",
            6,
            2,
            vec![],
            (1, 3),
            (1, 3, 2, false),
        ),
        case(
            "at its count with its spot: nothing",
            2,
            1,
            vec![sp(10), od(10)],
            (4, 4),
            (0, 0, 0, false),
        ),
        Case {
            external: true,
            ..case(
                "an external pool rents nothing on its count",
                4,
                0,
                vec![],
                (4, 4),
                (0, 0, 0, false),
            )
        },
        case(
            "back to spot at once when the pool releases at once",
            2,
            2,
            vec![od(10), od(20)],
            (4, 4),
            (2, 0, 0, true),
        ),
        case(
            "back to spot only as much as its share lacks",
            3,
            1,
            vec![od(10), od(20), od(30)],
            (4, 4),
            (1, 0, 0, true),
        ),
        Case {
            at_unit_end: true,
            ..case(
                "back to spot only for the on-demand GPUs whose paid hour is about to end",
                3,
                3,
                vec![od(20), od(57), od(116)],
                (4, 4),
                (2, 0, 0, true),
            )
        },
        Case {
            at_unit_end: true,
            ..case(
                "none due: rebalancing, nothing rented yet",
                2,
                2,
                vec![od(20), od(40)],
                (4, 4),
                (0, 0, 0, true),
            )
        },
        case(
            "back to spot with no spot free: not short",
            2,
            2,
            vec![od(10), od(20)],
            (0, 4),
            (0, 0, 0, true),
        ),
        Case {
            pending: 1,
            spot_pending: 1,
            ..case(
                "spot on its way: waits for it",
                2,
                2,
                vec![od(10), od(20)],
                (4, 4),
                (0, 0, 0, true),
            )
        },
        Case {
            pending: 1,
            ..case(
                "on demand on its way: not rebalancing",
                2,
                2,
                vec![od(10), od(20)],
                (4, 4),
                (0, 0, 0, false),
            )
        },
    ];
    for case in cases {
        let target = PoolTarget {
            at_unit_end: case.at_unit_end,
            external: case.external,
            spot: SpotTarget {
                wanted: case.wanted,
                prices: Default::default(),
            },
            ..pool(case.desired)
        };
        let leases: Vec<Lease> = (0..case.held.len())
            .map(|i| aged(&format!("l{i}"), case.held[i].1))
            .collect();
        let held: Vec<Holding<'_>> = leases
            .iter()
            .zip(&case.held)
            .map(|(lease, &(spot, _))| Holding {
                lease,
                host: 0,
                util: None,
                spot,
            })
            .collect();
        let book = PoolBook {
            status: PoolStatus {
                actual: u32::try_from(held.len()).unwrap(),
                spot: u32::try_from(held.iter().filter(|h| h.spot).count()).unwrap(),
                pending: case.pending,
                ..PoolStatus::default()
            },
            held,
            spot_pending: case.spot_pending,
            ..PoolBook::default()
        };
        let offers = Offers {
            spot: offer("s", case.free.0),
            on_demand: offer("a", case.free.1),
            ..Offers::default()
        };
        let growth = grow(&target, &book, &offers, NOW);
        let got = (
            placed(&growth.on_spot),
            placed(&growth.on_demand),
            growth.short,
            growth.rebalance,
        );
        assert_eq!(got, case.want, "{}", case.name);
    }
}

#[test]
fn take_asks_for_the_first_free_gpus_of_the_kind_and_no_later_pool_gets_them() {
    let hosts = [host(
        "a",
        vec![
            gpu("GPU-s0", true),
            gpu("GPU-d0", false),
            gpu("GPU-d1", false),
            gpu("GPU-s1", true),
        ],
        vec![],
    )];
    let mut target = pool(3);
    target.spot = SpotTarget {
        wanted: 1,
        prices: [("cn-east".to_string(), 300)].into_iter().collect(),
    };
    let pools = [
        target.clone(),
        PoolTarget {
            id: "q".into(),
            ..target
        },
    ];
    let input = input(&pools, &hosts, &[], &[]);
    let (index, mut books) = index(&input);
    let free = observe_hosts(&input, &index, &mut books, &mut Plan::default());
    let mut free = Free::new(&input, free);
    let mut creates = Vec::new();
    let mut left = Vec::new();
    for (target, book) in pools.iter().zip(&mut books) {
        let mut offers = candidates(&input, target, book, &free);
        let growth = grow(target, book, &offers, NOW);
        take(
            &input,
            target,
            &growth,
            &mut offers,
            &mut free,
            book,
            &mut creates,
        );
        left.push((
            offers.spot.free(),
            offers.on_demand.free(),
            book.created.clone(),
        ));
    }
    let asked: Vec<(&str, &str)> = creates
        .iter()
        .map(|c| (c.pool_id.as_str(), c.gpu_uuids[0].as_str()))
        .collect();
    assert_eq!(
        asked,
        [
            ("p", "GPU-s0"),
            ("p", "GPU-d0"),
            ("p", "GPU-d1"),
            ("q", "GPU-s1")
        ]
    );
    // What is left is what each pool shows free; counted as asked on its host.
    let one_left = vec![HostFree {
        host: "a".into(),
        region: "cn-east".into(),
        free: 1,
    }];
    assert_eq!(left[0].0, one_left);
    assert!(left[0].1.is_empty());
    assert_eq!(left[0].2, BTreeMap::from([(0, 3)]));
    assert_eq!(left[1].2, BTreeMap::from([(0, 1)]));
}

#[test]
fn shrink_gives_back_spot_above_its_share_then_on_demand_then_spot_at_unit_end() {
    use crate::placement::UNIT_END_MARGIN_MS;
    struct Case {
        name: &'static str,
        desired: u32,
        wanted: u32,
        at_unit_end: bool,
        release_first: &'static [&'static str],
        /// Held leases: (id, on spot, granted minutes ago).
        held: Vec<(&'static str, bool, i64)>,
        pending: u32,
        /// (ids released now in order, deferred, next due).
        want: (Vec<&'static str>, u32, Option<i64>),
    }
    let case = |name, desired, wanted, held, want| Case {
        name,
        desired,
        wanted,
        at_unit_end: false,
        release_first: &[],
        held,
        pending: 0,
        want,
    };
    let cases = vec![
        case(
            "at its count: nothing",
            2,
            0,
            vec![("od1", false, 30), ("od2", false, 10)],
            (vec![], 0, None),
        ),
        case(
            "spot above its share goes first, then on demand; newest first",
            2,
            1,
            vec![
                ("od-old", false, 50),
                ("od-new", false, 10),
                ("sp-old", true, 40),
                ("sp-new", true, 5),
            ],
            (vec!["sp-new", "od-new"], 0, None),
        ),
        case(
            "spot within its share stays while on demand goes",
            1,
            1,
            vec![
                ("od-old", false, 50),
                ("od-new", false, 10),
                ("sp", true, 5),
            ],
            (vec!["od-new", "od-old"], 0, None),
        ),
        case(
            "then the rest of spot",
            0,
            1,
            vec![("od", false, 50), ("sp", true, 5)],
            (vec!["sp", "od"], 0, None),
        ),
        Case {
            pending: 2,
            ..case(
                "requests in flight count, but only held leases go",
                1,
                0,
                vec![("od-old", false, 50), ("od-new", false, 10)],
                (vec!["od-new", "od-old"], 0, None),
            )
        },
        Case {
            release_first: &["od-old"],
            ..case(
                "the operator's choice first",
                1,
                0,
                vec![("od-old", false, 50), ("od-new", false, 10)],
                (vec!["od-old"], 0, None),
            )
        },
        Case {
            at_unit_end: true,
            ..case(
                "at unit end: a lease with paid time left waits for it",
                0,
                0,
                vec![("od", false, 10)],
                (vec![], 1, Some(NOW + 50 * MINUTE - UNIT_END_MARGIN_MS)),
            )
        },
        Case {
            at_unit_end: true,
            ..case(
                "at unit end: within the margin of it, goes now",
                1,
                0,
                vec![("od-due", false, 59), ("od-paid", false, 10)],
                (vec!["od-due"], 0, None),
            )
        },
    ];
    let hosts = [holding("a", Vec::new())];
    for case in cases {
        let target = PoolTarget {
            at_unit_end: case.at_unit_end,
            release_first: strings(case.release_first),
            spot: SpotTarget {
                wanted: case.wanted,
                prices: Default::default(),
            },
            ..pool(case.desired)
        };
        let leases: Vec<Lease> = case
            .held
            .iter()
            .map(|&(id, _, minutes)| aged(id, minutes))
            .collect();
        let held: Vec<Holding<'_>> = leases
            .iter()
            .zip(&case.held)
            .map(|(lease, &(_, spot, _))| Holding {
                lease,
                host: 0,
                util: None,
                spot,
            })
            .collect();
        let book = PoolBook {
            status: PoolStatus {
                actual: u32::try_from(held.len()).unwrap(),
                spot: u32::try_from(held.iter().filter(|h| h.spot).count()).unwrap(),
                pending: case.pending,
                ..PoolStatus::default()
            },
            held,
            ..PoolBook::default()
        };
        let pools = [target];
        let input = input(&pools, &hosts, &[], &[]);
        let shrink = shrink(&input, &pools[0], &book);
        let now: Vec<&str> = shrink
            .now
            .iter()
            .map(|&i| book.held[i].lease.id.as_str())
            .collect();
        assert_eq!(
            (now, shrink.deferred, shrink.next_due_ms),
            case.want,
            "{}",
            case.name
        );
    }
}

#[test]
fn drain_keeps_leases_while_their_replacements_are_missing_and_gives_back_the_newest_first() {
    struct Case {
        name: &'static str,
        desired: u32,
        /// Counted elsewhere (the replacements held).
        actual: u32,
        short: u32,
        /// On draining hosts: (id, granted minutes ago).
        draining: Vec<(&'static str, i64)>,
        /// (released now in order, kept).
        want: (Vec<&'static str>, Vec<&'static str>),
    }
    let three = || vec![("old", 30), ("new", 10), ("mid", 20)];
    let cases = vec![
        Case {
            name: "nothing draining",
            desired: 3,
            actual: 3,
            short: 0,
            draining: vec![],
            want: (vec![], vec![]),
        },
        Case {
            name: "no replacement held yet: all kept",
            desired: 3,
            actual: 0,
            short: 0,
            draining: three(),
            want: (vec![], vec!["new", "mid", "old"]),
        },
        Case {
            name: "one replacement held: the newest goes",
            desired: 3,
            actual: 1,
            short: 0,
            draining: three(),
            want: (vec!["new"], vec!["mid", "old"]),
        },
        Case {
            name: "all replacements held: all go, newest first",
            desired: 3,
            actual: 3,
            short: 0,
            draining: three(),
            want: (vec!["new", "mid", "old"], vec![]),
        },
        Case {
            name: "no room for the replacements: all go at once",
            desired: 3,
            actual: 0,
            short: 1,
            draining: three(),
            want: (vec!["new", "mid", "old"], vec![]),
        },
        Case {
            name: "kept no more than are draining",
            desired: 5,
            actual: 0,
            short: 0,
            draining: vec![("a", 10), ("b", 20)],
            want: (vec![], vec!["a", "b"]),
        },
        Case {
            name: "scaled in meanwhile: all go",
            desired: 1,
            actual: 2,
            short: 0,
            draining: three(),
            want: (vec!["new", "mid", "old"], vec![]),
        },
    ];
    for case in cases {
        let leases: Vec<Lease> = case
            .draining
            .iter()
            .map(|&(id, minutes)| aged(id, minutes))
            .collect();
        let book = PoolBook {
            status: PoolStatus {
                actual: case.actual,
                short: case.short,
                ..PoolStatus::default()
            },
            draining: leases
                .iter()
                .map(|lease| Holding {
                    lease,
                    host: 0,
                    util: None,
                    spot: false,
                })
                .collect(),
            ..PoolBook::default()
        };
        let drain = drain(&pool(case.desired), &book);
        let names = |held: &[Holding<'_>]| -> Vec<String> { ids(held) };
        assert_eq!(
            (names(&drain.release), names(&drain.keep)),
            (strings(&case.want.0), strings(&case.want.1)),
            "{}",
            case.name
        );
    }
}

#[test]
fn finish_counts_this_passs_requests_as_pending_and_orders_the_leases() {
    let hosts = [holding("b", Vec::new()), holding("a", Vec::new())];
    let view = |host: &str, token: u64| PoolLeaseView {
        lease_id: format!("{host}{token}"),
        host: host.into(),
        region: "cn-east".into(),
        gpu_uuids: Vec::new(),
        gpu_indexes: Vec::new(),
        fencing_token: token,
        granted_at_ms: 0,
        state: PoolLeaseState::Active,
        util_pct: None,
        checkpoint_at_ms: None,
        release_grace_s: None,
        reclaim_deadline_ms: None,
        spot: false,
        starting: false,
    };
    let mut book = PoolBook::new("p");
    book.status.pending = 1;
    book.host(0, &hosts).pending = 1;
    book.created = BTreeMap::from([(0, 2), (1, 3)]);
    book.status.leases = vec![view("b", 2), view("a", 9), view("b", 1)];
    let pools = [pool(6)];
    let status = finish(&input(&pools, &hosts, &[], &[]), vec![book]).remove(0);
    assert_eq!(status.pending, 6);
    let per_host: Vec<(&str, u32)> = status
        .hosts
        .iter()
        .map(|view| (view.host.as_str(), view.pending))
        .collect();
    assert_eq!(per_host, [("b", 3), ("a", 3)], "by host index");
    let order: Vec<&str> = status.leases.iter().map(|l| l.lease_id.as_str()).collect();
    assert_eq!(order, ["a9", "b1", "b2"]);
}
