//! Settling a pass's answers, without a network: the outcomes each answer gives, the
//! history only where it moved, the activity reasons, and how open changes stand.

use super::*;
use crate::reconcile::SpotTarget;
use ebb_wire::agent::AgentErrorKind;
use ebb_wire::pools::{PlacementPolicy, PoolHostView};

const US: &str = "console-1";

fn lease(id: &str, pool: &str, holder: &str) -> Lease {
    Lease {
        id: id.into(),
        pool_id: pool.into(),
        holder_id: holder.into(),
        gpu_uuids: vec![format!("GPU-{id}")],
        gpu_indexes: vec![0],
        fencing_token: 1,
        state: LeaseState::Active,
        created_at_ms: 1,
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

fn host(name: &str, leases: Vec<Lease>) -> HostObs {
    HostObs {
        name: name.into(),
        region: "cn-east".into(),
        seen: Some(crate::reconcile::Seen {
            gpus: Vec::new(),
            leases,
        }),
        down_since_ms: None,
        lost_fence: None,
        refusing: None,
        draining: false,
    }
}

fn pending(key: &str, host: &str) -> Pending {
    Pending {
        key: key.into(),
        pool_id: "pool-a".into(),
        host: host.into(),
        gpu_uuids: vec![format!("GPU-{key}")],
        command: None,
    }
}

fn target(desired: u32) -> PoolTarget {
    PoolTarget {
        id: "pool-a".into(),
        model: "A100".into(),
        regions: vec!["cn-east".into()],
        desired,
        policy: PlacementPolicy::Pack,
        at_unit_end: false,
        unit_ms: 3_600_000,
        prices: BTreeMap::new(),
        release_first: Vec::new(),
        external: false,
        nodes: Default::default(),
        spot: SpotTarget::default(),
    }
}

fn known(host: &str, id: &str) -> KnownLease {
    KnownLease {
        host: host.into(),
        lease_id: id.into(),
        pool_id: "pool-a".into(),
        fencing_token: 1,
        gpu_uuids: vec![format!("GPU-{id}")],
        gpu_indexes: vec![0],
        granted_at_ms: 1,
    }
}

fn planned(actual: u32, pending: u32, host: &str) -> PoolStatus {
    PoolStatus {
        pool_id: "pool-a".into(),
        actual,
        pending,
        hosts: vec![PoolHostView {
            host: host.into(),
            region: "cn-east".into(),
            leased: actual,
            pending,
            releasing: 0,
            failed: 0,
            last_error: None,
        }],
        ..PoolStatus::default()
    }
}

#[test]
fn a_grant_ends_its_intent_a_refusal_ends_it_failed_and_a_timeout_keeps_it() {
    let mut hosts = vec![host("gpu-a", Vec::new())];
    let mut tally = Tally::default();
    let timeout = HostProblem::Timeout {
        url: "http://gpu-a:7070".into(),
        timeout_ms: 3000,
    };
    let refused = HostProblem::Forbidden {
        url: "http://gpu-a:7070".into(),
    };
    let settled = creates(
        vec![
            (
                pending("k1", "gpu-a"),
                CreateAnswer::Granted(Box::new(lease("l1", "pool-a", US))),
            ),
            (
                pending("k2", "gpu-a"),
                CreateAnswer::Refused(refused.clone()),
            ),
            (
                pending("k3", "gpu-a"),
                CreateAnswer::Unknown(timeout.clone()),
            ),
        ],
        &mut hosts,
        &mut tally,
    );
    assert_eq!(
        settled.resolved,
        vec![
            (
                "k1".to_string(),
                Some(("gpu-a".to_string(), lease("l1", "pool-a", US)))
            ),
            ("k2".to_string(), None),
        ]
    );
    assert_eq!(settled.pending, vec![pending("k3", "gpu-a")]);
    let (name, done) = tally.of_pool("pool-a").next().unwrap();
    assert_eq!(name, "gpu-a");
    assert_eq!((done.granted, done.failed), (1, 2));
    assert_eq!(
        done.last_error,
        Some(timeout),
        "the last failure is the one kept"
    );
    // The grant is in the observation, once.
    let seen = hosts[0].seen.as_ref().unwrap();
    assert_eq!(seen.leases.len(), 1);
    assert_eq!(
        (tally.granted(), tally.released(), tally.failed()),
        (1, 0, 2)
    );
}

#[test]
fn history_moves_only_where_our_live_leases_differ_from_the_record() {
    let hosts = vec![
        host(
            "same",
            vec![
                lease("l1", "pool-a", US),
                lease("x", "pool-z", "someone-else"),
            ],
        ),
        host(
            "grew",
            vec![lease("l2", "pool-a", US), lease("l3", "pool-a", US)],
        ),
        HostObs {
            seen: None,
            ..host("away", Vec::new())
        },
    ];
    let recorded = vec![
        known("same", "l1"),
        known("grew", "l2"),
        known("away", "l9"),
    ];
    let moved = moved_history(&hosts, &recorded, US, &BTreeSet::new());
    assert_eq!(moved.len(), 1, "{moved:?}");
    assert_eq!(moved[0].0, "grew");
    assert_eq!(moved[0].1.len(), 2);
    let waiting = BTreeSet::from(["grew".to_string()]);
    assert!(moved_history(&hosts, &recorded, US, &waiting).is_empty());
}

fn released(id: &str, at_ms: u64) -> Lease {
    Lease {
        state: LeaseState::Released,
        release_requested_at_ms: Some(at_ms - 1),
        released_at_ms: Some(at_ms),
        ..lease(id, "pool-a", US)
    }
}

#[test]
fn a_lease_gone_from_the_list_is_looked_up_and_recorded_with_the_agents_end() {
    // gpu-1 lists l1 still; l2 and l3 left its list; gpu-2 did not answer.
    let mut hosts = vec![
        host("gpu-1", vec![lease("l1", "pool-a", US)]),
        host("gpu-3", Vec::new()),
        HostObs {
            seen: None,
            ..host("gpu-2", Vec::new())
        },
    ];
    let recorded = vec![
        known("gpu-1", "l1"),
        known("gpu-1", "l2"),
        known("gpu-1", "l3"),
        known("gpu-2", "l4"),
        known("gpu-3", "l5"),
    ];
    let asked = vanished(&hosts, &recorded);
    let pair = |host: &str, id: &str| (host.to_string(), id.to_string());
    assert_eq!(
        asked,
        vec![
            pair("gpu-1", "l2"),
            pair("gpu-1", "l3"),
            pair("gpu-3", "l5")
        ],
        "the silent host's lease is not asked for"
    );
    let waiting = looked_up(
        vec![
            (
                pair("gpu-1", "l2"),
                Lookup::Found(Box::new(released("l2", 5_000))),
            ),
            (pair("gpu-1", "l3"), Lookup::Forgotten),
            (
                pair("gpu-3", "l5"),
                Lookup::Failed(HostProblem::Timeout {
                    url: "http://gpu-3".into(),
                    timeout_ms: 900,
                }),
            ),
        ],
        &mut hosts,
    );
    assert_eq!(waiting, BTreeSet::from(["gpu-3".to_string()]));
    let seen = hosts[0].seen.as_ref().unwrap();
    assert_eq!(
        seen.leases.len(),
        2,
        "the released l2 joins the observation"
    );
    // gpu-1's history moves: l2 with the agent's end, l3 (forgotten) to be ended now.
    let moved = moved_history(&hosts, &recorded, US, &waiting);
    assert_eq!(moved.len(), 1, "{moved:?}");
    assert_eq!(moved[0].0, "gpu-1");
    let ids: Vec<(&str, Option<u64>)> = moved[0]
        .1
        .iter()
        .map(|lease| (lease.id.as_str(), lease.released_at_ms))
        .collect();
    assert_eq!(ids, vec![("l1", None), ("l2", Some(5_000))]);
    // Once recorded, nothing is asked again.
    let recorded = vec![known("gpu-1", "l1")];
    assert!(vanished(&hosts, &recorded).is_empty());
}

#[test]
fn a_lookup_that_finds_the_lease_not_released_waits_a_pass() {
    let mut hosts = vec![host("gpu-1", Vec::new())];
    let pair = ("gpu-1".to_string(), "l1".to_string());
    let waiting = looked_up(
        vec![(pair, Lookup::Found(Box::new(lease("l1", "pool-a", US))))],
        &mut hosts,
    );
    assert_eq!(waiting, BTreeSet::from(["gpu-1".to_string()]));
    assert!(hosts[0].seen.as_ref().unwrap().leases.is_empty());
}

#[test]
fn a_release_answered_released_is_an_end_to_record_and_a_releasing_one_is_not() {
    let order = |id: &str| ReleaseOrder {
        host: "gpu-1".into(),
        lease_id: id.into(),
        pool_id: "pool-a".into(),
        why: crate::reconcile::Why::ScaleIn,
    };
    let releasing = Lease {
        state: LeaseState::Releasing,
        release_requested_at_ms: Some(4_000),
        ..lease("l2", "pool-a", US)
    };
    let answers = vec![
        (order("l1"), Ok(Box::new(released("l1", 5_000)))),
        (order("l2"), Ok(Box::new(releasing))),
        (
            order("l3"),
            Err(HostProblem::Timeout {
                url: "http://gpu-1".into(),
                timeout_ms: 900,
            }),
        ),
    ];
    let ends: Vec<(&str, &str, Option<u64>)> = ended(&answers)
        .into_iter()
        .map(|(host, lease)| (host, lease.id.as_str(), lease.released_at_ms))
        .collect();
    assert_eq!(ends, vec![("gpu-1", "l1", Some(5_000))]);
    let mut tally = Tally::default();
    releases(answers, &mut tally);
    assert_eq!((tally.released(), tally.failed()), (2, 1));
}

#[test]
fn a_write_off_and_a_host_back_give_their_reasons_with_numbers() {
    let pools = vec![target(2)];
    let known = vec![
        known("gpu-a", "l1"),
        known("gpu-a", "l2"),
        known("gpu-b", "l3"),
    ];
    let reasons = failovers(&[("gpu-a".into(), 7)], &pools, &known, 30);
    assert_eq!(
        reasons,
        vec![(
            "pool-a".to_string(),
            ChangeReason::Failover {
                host: "gpu-a".into(),
                gpus: 2,
                grace_s: 30
            }
        )]
    );
    let stale = |id: &str| ReleaseOrder {
        host: "gpu-a".into(),
        lease_id: id.into(),
        pool_id: "pool-a".into(),
        why: Why::Stale,
    };
    let scale_in = ReleaseOrder {
        why: Why::ScaleIn,
        ..stale("l9")
    };
    assert_eq!(
        hosts_back(&[stale("l1"), scale_in, stale("l2")]),
        vec![(
            "pool-a".to_string(),
            ChangeReason::HostBack {
                host: "gpu-a".into(),
                leases: 2
            }
        )]
    );
}

#[test]
fn finish_moves_the_planned_status_and_closes_a_converged_change() {
    let pools = vec![target(1)];
    let mut hosts = vec![host("gpu-a", Vec::new())];
    let mut tally = Tally::default();
    creates(
        vec![(
            pending("k1", "gpu-a"),
            CreateAnswer::Granted(Box::new(lease("l1", "pool-a", US))),
        )],
        &mut hosts,
        &mut tally,
    );
    let open = HashMap::from([(
        "pool-a".to_string(),
        vec![(10, Vec::new()), (11, Vec::new())],
    )]);
    let settled = finish(
        vec![planned(0, 1, "gpu-a")],
        &pools,
        &tally,
        &hosts,
        US,
        &open,
    );
    assert!(settled.converged);
    let status = &settled.statuses[0];
    assert_eq!((status.actual, status.pending), (1, 0));
    assert_eq!(status.hosts[0].leased, 1);
    assert_eq!(status.leases.len(), 1, "the grant is shown at once");
    assert!(status.notes.is_empty());
    // Both open changes close; the latest carries this pass's results.
    assert_eq!(settled.changes.len(), 2);
    assert_eq!(
        settled.changes[0],
        ChangeUpdate {
            id: 10,
            results: Vec::new(),
            outcome: Outcome::Done
        }
    );
    assert_eq!(settled.changes[1].id, 11);
    assert_eq!(settled.changes[1].outcome, Outcome::Done);
    assert_eq!(settled.changes[1].results[0].granted, 1);
}

#[test]
fn a_failed_request_leaves_the_change_partial_with_the_host_failing_note() {
    let pools = vec![target(1)];
    let mut hosts = vec![host("gpu-a", Vec::new())];
    let mut tally = Tally::default();
    let problem = HostProblem::Forbidden {
        url: "http://gpu-a:7070".into(),
    };
    creates(
        vec![(
            pending("k1", "gpu-a"),
            CreateAnswer::Refused(problem.clone()),
        )],
        &mut hosts,
        &mut tally,
    );
    let open = HashMap::from([(
        "pool-a".to_string(),
        vec![(10, Vec::new()), (11, Vec::new())],
    )]);
    let settled = finish(
        vec![planned(0, 1, "gpu-a")],
        &pools,
        &tally,
        &hosts,
        US,
        &open,
    );
    assert!(!settled.converged);
    assert_eq!(
        settled.statuses[0].notes,
        vec![PoolNote::HostFailing {
            host: "gpu-a".into(),
            problem: problem.clone()
        }]
    );
    // Only the latest change is updated while the pool has not converged.
    assert_eq!(settled.changes.len(), 1);
    assert_eq!(settled.changes[0].id, 11);
    assert_eq!(settled.changes[0].outcome, Outcome::Partial);
    assert_eq!(settled.changes[0].results[0].error, Some(problem));
}

#[test]
fn merge_adds_counts_and_keeps_the_newest_error() {
    let a = HostResult {
        host: "gpu-a".into(),
        granted: 1,
        released: 0,
        failed: 1,
        error: Some(HostProblem::Refused { url: "u".into() }),
    };
    let b = HostResult {
        granted: 2,
        failed: 0,
        error: None,
        ..a.clone()
    };
    let c = HostResult {
        host: "gpu-b".into(),
        ..b.clone()
    };
    let merged = merge(std::slice::from_ref(&a), &[b, c]);
    assert_eq!(merged.len(), 2);
    assert_eq!((merged[0].granted, merged[0].failed), (3, 1));
    assert_eq!(
        merged[0].error, a.error,
        "no error this pass keeps the last one"
    );
}

#[test]
fn a_refusal_of_the_host_itself_starts_its_backoff_and_is_noted_on_its_pools() {
    let mut hosts = vec![host("gpu-a", Vec::new()), host("gpu-b", Vec::new())];
    let mut tally = Tally::default();
    let forbidden = HostProblem::Forbidden {
        url: "http://gpu-a:7070".into(),
    };
    let taken = HostProblem::RefusedRequest {
        url: "http://gpu-b:7070".into(),
        status: 409,
        agent_kind: AgentErrorKind::NotEnoughFree,
        message: "taken".into(),
    };
    let settled = creates(
        vec![
            (
                pending("k1", "gpu-a"),
                CreateAnswer::Refused(forbidden.clone()),
            ),
            (
                pending("k2", "gpu-a"),
                CreateAnswer::Refused(forbidden.clone()),
            ),
            (pending("k3", "gpu-b"), CreateAnswer::Refused(taken)),
        ],
        &mut hosts,
        &mut tally,
    );
    // Only the host-level refusal counts, once per host; a GPU taken is not the host's fault.
    assert_eq!(
        settled.host_refusals,
        vec![("gpu-a".to_string(), forbidden.clone())]
    );
    let mut refusals = Refusals::default();
    settled.update(&mut refusals, 1_000);
    refusals.mark(&mut hosts, 1_001);
    assert_eq!(hosts[0].refusing, Some(forbidden.clone()));
    assert_eq!(hosts[1].refusing, None);
    // While it waits, the pools that may use it say why.
    let status = PoolStatus {
        pool_id: "pool-a".into(),
        ..PoolStatus::default()
    };
    assert_eq!(
        notes(&target(2), &status, &hosts),
        vec![PoolNote::HostFailing {
            host: "gpu-a".into(),
            problem: forbidden
        }]
    );
}
