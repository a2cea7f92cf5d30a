use std::collections::{BTreeMap, BTreeSet};

use ebb_slurm::drain::{
    Candidate, DisruptionBudget, DrainPlan, DrainRequest, NodeLoad, RunningJob, plan,
};
use proptest::prelude::*;

const NOW: i64 = 10_000_000;

fn job() -> impl Strategy<Value = RunningJob> {
    (
        0u32..1_000,
        proptest::option::weighted(0.8, -1_000i64..100_000),
        proptest::bool::weighted(0.7),
    )
        .prop_map(|(id, ends_in, requeueable)| RunningJob {
            id: format!("j{id}"),
            ends_at_ms: ends_in.map(|ms| NOW + ms),
            requeueable,
        })
}

fn candidates() -> impl Strategy<Value = Vec<Candidate>> {
    proptest::collection::vec(
        (
            prop_oneof![Just(1u32), Just(2), Just(4), Just(8), 0u32..9],
            proptest::collection::vec(job(), 0..4),
            -50_000i64..50_000,
            proptest::option::of(0i64..200_000),
        ),
        0..10,
    )
    .prop_map(|nodes| {
        nodes
            .into_iter()
            .enumerate()
            .map(|(index, (gpus, jobs, paid_in, draining_for))| Candidate {
                name: format!("n{index:02}"),
                gpus,
                load: if jobs.is_empty() && index % 2 == 0 {
                    NodeLoad::Idle
                } else {
                    NodeLoad::Busy { jobs }
                },
                paid_until_ms: NOW + paid_in,
                draining_since_ms: draining_for.map(|ms| NOW - ms),
            })
            .collect()
    })
}

fn budget() -> impl Strategy<Value = DisruptionBudget> {
    (
        proptest::option::of(0u32..20),
        proptest::option::of(0u32..120),
        0u32..10,
        0u32..80,
        proptest::bool::weighted(0.2),
    )
        .prop_map(|(count, pct, released, pool, quiet)| DisruptionBudget {
            max_gpus_per_window: count,
            max_pct_per_window: pct,
            window_ms: 3_600_000,
            released_in_window: released,
            pool_gpus: pool,
            quiet,
        })
}

fn request() -> impl Strategy<Value = DrainRequest> {
    (
        candidates(),
        0u32..40,
        budget(),
        proptest::option::of(0i64..150_000),
        any::<bool>(),
        proptest::bool::weighted(0.2),
    )
        .prop_map(
            |(candidates, gpus_to_release, budget, cap, park, force)| DrainRequest {
                candidates,
                gpus_to_release,
                budget,
                drain_cost_cap_ms: cap,
                park_until_paid_end: park,
                force,
                now_ms: NOW,
            },
        )
}

fn by_name(request: &DrainRequest) -> BTreeMap<&str, &Candidate> {
    request
        .candidates
        .iter()
        .map(|c| (c.name.as_str(), c))
        .collect()
}

/// Every node the plan takes (released, parked, drained, requeued or held), once each.
fn chosen(plan: &DrainPlan) -> BTreeSet<&str> {
    plan.release
        .iter()
        .chain(&plan.drain)
        .chain(&plan.held)
        .map(String::as_str)
        .chain(plan.park.iter().map(|p| p.node.as_str()))
        .collect()
}

fn gpus_of<'a>(nodes: impl IntoIterator<Item = &'a str>, all: &BTreeMap<&str, &Candidate>) -> u32 {
    nodes.into_iter().map(|name| all[name].gpus).sum()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn never_more_given_back_than_the_budget_allows(request in request()) {
        let plan = plan(&request);
        let all = by_name(&request);
        let going = gpus_of(
            plan.release.iter().map(String::as_str).chain(plan.requeue.iter().map(|r| r.node.as_str())),
            &all,
        );
        if let Some(allowance) = request.budget.allowance_gpus() {
            prop_assert!(going <= allowance, "{going} > {allowance}: {plan:?}");
        }
        // Nor more than asked, counting what is parked and held.
        let taken = gpus_of(chosen(&plan), &all);
        prop_assert!(taken <= request.gpus_to_release);
    }

    #[test]
    fn a_quiet_window_takes_no_busy_node(mut request in request()) {
        request.budget.quiet = true;
        let plan = plan(&request);
        prop_assert!(plan.drain.is_empty() && plan.requeue.is_empty(), "{plan:?}");
    }

    #[test]
    fn never_a_busy_node_before_an_idle_one_that_fits(request in request()) {
        let plan = plan(&request);
        let all = by_name(&request);
        let taken = chosen(&plan);
        let idle_taken = gpus_of(taken.iter().copied().filter(|name| all[name].is_idle()), &all);
        if taken.iter().any(|name| !all[name].is_idle()) {
            for candidate in request.candidates.iter().filter(|c| c.is_idle() && c.gpus > 0) {
                prop_assert!(
                    taken.contains(candidate.name.as_str())
                        || candidate.gpus > request.gpus_to_release - idle_taken,
                    "idle {} left while a busy node went: {plan:?}", candidate.name
                );
            }
        }
        // A busy node is never released directly, only drained (and requeued at most).
        for name in plan.release.iter().chain(plan.park.iter().map(|p| &p.node)) {
            prop_assert!(all[name.as_str()].is_idle());
        }
        for name in &plan.drain {
            prop_assert!(!all[name.as_str()].is_idle());
        }
        // No job is disrupted while the budget keeps an idle node.
        if plan.held.iter().any(|name| all[name.as_str()].is_idle()) {
            prop_assert!(plan.requeue.is_empty(), "{plan:?}");
        }
        prop_assert_eq!(plan.held_by_budget, gpus_of(plan.held.iter().map(String::as_str), &all));
    }

    #[test]
    fn never_a_job_requeued_without_force_or_the_cap(request in request()) {
        let plan = plan(&request);
        let all = by_name(&request);
        for requeue in &plan.requeue {
            let node = all[requeue.node.as_str()];
            prop_assert!(plan.drain.contains(&requeue.node), "requeued but not drained");
            if !request.force {
                let since = node.draining_since_ms.expect("requeued a node not draining");
                let cap = request.drain_cost_cap_ms.expect("requeued with no cap");
                prop_assert!(request.now_ms - since >= cap);
            }
        }
    }

    #[test]
    fn never_a_no_requeue_job_ended_without_force(mut request in request()) {
        request.force = false;
        let plan = plan(&request);
        let all = by_name(&request);
        for requeue in &plan.requeue {
            prop_assert!(requeue.cancel_job_ids.is_empty());
            let NodeLoad::Busy { jobs } = &all[requeue.node.as_str()].load else {
                panic!("requeued an idle node");
            };
            prop_assert!(jobs.iter().all(|job| job.requeueable), "{plan:?}");
        }
    }

    #[test]
    fn under_force_a_no_requeue_node_goes_only_when_no_other_can(mut request in request()) {
        request.force = true;
        let plan = plan(&request);
        let all = by_name(&request);
        let taken = chosen(&plan);
        let pinned = |c: &Candidate| match &c.load {
            NodeLoad::Busy { jobs } => jobs.iter().any(|job| !job.requeueable),
            NodeLoad::Idle => false,
        };
        let unpinned_taken = gpus_of(taken.iter().copied().filter(|name| !pinned(all[name])), &all);
        if taken.iter().any(|name| pinned(all[name])) {
            for candidate in request.candidates.iter().filter(|c| !pinned(c) && c.gpus > 0) {
                prop_assert!(
                    taken.contains(candidate.name.as_str())
                        || candidate.gpus > request.gpus_to_release - unpinned_taken,
                    "a no-requeue node chosen while {} could go: {plan:?}", candidate.name
                );
            }
        }
    }
}
