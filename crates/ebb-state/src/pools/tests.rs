use super::*;

fn input(name: &str, model: &str, regions: &[&str], min: u32, max: u32) -> PoolInput {
    PoolInput {
        name: name.into(),
        model: model.into(),
        regions: regions.iter().map(|r| r.to_string()).collect(),
        min,
        max,
        base_gpus: 0,
        term: Term::Month,
        overlay: OverlayMode::Hour,
        placement: PlacementPolicy::Pack,
        interruptible: false,
        release_at_unit_end: false,
        spot: Default::default(),
    }
}

fn hosts() -> Vec<HostFacts> {
    vec![
        HostFacts {
            name: "a".into(),
            region: "cn-north".into(),
            models: vec!["NVIDIA A100-SXM4-80GB".into()],
        },
        HostFacts {
            name: "b".into(),
            region: "cn-south".into(),
            models: vec!["Tesla V100-SXM2-32GB".into()],
        },
        HostFacts {
            name: "c".into(),
            region: "cn-east".into(),
            models: vec![],
        },
    ]
}

#[test]
fn validation_names_the_field() {
    let catalog = Catalog::demo();
    let ok = validate(
        &input("web", "A100", &["cn-north"], 0, 10),
        &hosts(),
        &catalog,
    )
    .unwrap();
    assert_eq!(ok.0.desired, 0);
    let cases: Vec<(PoolInput, &str)> = vec![
        (
            input("", "A100", &["cn-north"], 0, 1),
            "name: must be 1 to 63",
        ),
        (
            input("a b", "A100", &["cn-north"], 0, 1),
            "name: `a b` may only",
        ),
        (
            input("web", "B200", &["cn-north"], 0, 1),
            "model: unknown GPU model `B200`",
        ),
        (
            input("web", "H800", &[], 0, 1),
            "regions: no registered host reports a H800",
        ),
        (
            input("web", "A100", &["eu-west"], 0, 1),
            "regions: no registered host is in `eu-west`",
        ),
        (
            input("web", "A100", &["cn-south"], 0, 1),
            "regions: no host in `cn-south` offers A100 (they have: Tesla V100-SXM2-32GB)",
        ),
        (
            input("web", "A100", &["cn-north"], 5, 2),
            "min: 5 is more than max (2)",
        ),
        (
            input("web", "A100", &["cn-north"], 0, 20_000),
            "max: 20000 is more than",
        ),
        (
            PoolInput {
                base_gpus: 12,
                ..input("web", "A100", &["cn-north"], 0, 10)
            },
            "base_gpus: 12 subscribed is more than max (10)",
        ),
        (
            PoolInput {
                overlay: OverlayMode::Spot,
                ..input("web", "A100", &["cn-north"], 0, 10)
            },
            "overlay: spot GPUs can be interrupted",
        ),
    ];
    for (input, want) in cases {
        let error = validate(&input, &hosts(), &catalog)
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with(want),
            "{error:?} should start with {want:?}"
        );
    }
    // No region named: the regions whose hosts have the model.
    let all = validate(&input("web", "A100", &[], 0, 1), &hosts(), &catalog).unwrap();
    assert_eq!(all.0.regions, vec!["cn-north".to_string()]);
    // A region whose hosts were never polled is taken on trust.
    assert!(
        validate(
            &input("web", "A100", &["cn-east"], 0, 1),
            &hosts(),
            &catalog
        )
        .is_ok()
    );
}

#[test]
fn months_are_calendar_months_in_utc() {
    // 2026-12-03T06:00Z.
    let (name, start, end) = utc_month(1_796_277_600_000);
    assert_eq!(name, "2026-12");
    assert_eq!(start, 1_796_083_200_000);
    assert_eq!(end, 1_798_761_600_000);
    let (name, _, end) = utc_month(1_772_236_800_000 + 86_400_000 - 1);
    assert_eq!(name, "2026-02");
    assert_eq!(end, 1_772_323_200_000);
}

async fn store() -> (PoolStore, ebb_testkit::TempDir) {
    let dir = ebb_testkit::TempDir::new("pools");
    let db = ConsoleDb::open(&dir).await.unwrap();
    (PoolStore::new(db), dir)
}

#[tokio::test]
async fn pools_round_trip_and_changes_are_logged() {
    let (store, dir) = store().await;
    let catalog = Catalog::demo();
    let valid = validate(
        &input("web", "A100", &["cn-north"], 2, 10),
        &hosts(),
        &catalog,
    )
    .unwrap();
    let pool = store.create(valid.clone()).await.unwrap();
    assert_eq!(pool.desired, 2);
    assert!(matches!(
        store.create(valid).await,
        Err(PoolError::Exists(_))
    ));
    assert_eq!(store.get("web").await.unwrap(), pool);
    let change = NewActivity {
        actor: Actor::Operator,
        from: 2,
        to: 8,
        reason: ChangeReason::Slider,
        delta_per_hour_fen: Some(7500),
        delta_per_month_fen: Some(5_475_000),
    };
    let (scaled, entry) = store
        .set_desired("web", 8, &[], &change, None)
        .await
        .unwrap();
    assert_eq!(scaled.desired, 8);
    assert_eq!(entry.outcome, Outcome::InProgress);
    let error = store
        .set_desired("web", 11, &[], &change, None)
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "desired: 11 is outside the pool's range 2 to 10"
    );
    assert_eq!(
        store.get("web").await.unwrap().desired,
        8,
        "nothing half-changed"
    );
    // A change made from a count the pool is no longer at is refused, changing nothing.
    let stale = NewActivity {
        to: 4,
        ..change.clone()
    };
    assert!(matches!(
        store.set_desired("web", 4, &[], &stale, None).await,
        Err(PoolError::Moved {
            expected: 2,
            actual: 8,
            ..
        })
    ));
    assert_eq!(store.get("web").await.unwrap().desired, 8);
    // A second change supersedes the first.
    let second = NewActivity {
        from: 8,
        to: 4,
        ..change.clone()
    };
    store
        .set_desired("web", 4, &[], &second, None)
        .await
        .unwrap();
    let log = store.activity(Some("web"), 10).await.unwrap();
    assert_eq!(
        log.len(),
        3,
        "made (once: the refused duplicate logged nothing), then two changes"
    );
    assert_eq!(
        (log[0].from, log[0].to),
        (8, 4),
        "the second entry moved from the first's count"
    );
    assert_eq!(log[1].outcome, Outcome::Superseded);
    assert!(
        matches!(
            log[2].reason,
            ChangeReason::Created {
                min: 2,
                max: 10,
                ..
            }
        ),
        "{:?}",
        log[2].reason
    );
    // Editing keeps desired inside the new range.
    let narrower = validate(
        &input("web", "A100", &["cn-north"], 0, 3),
        &hosts(),
        &catalog,
    )
    .unwrap();
    let (_, after) = store.update("web", narrower).await.unwrap();
    assert_eq!(after.desired, 3);
    let edited = &store.activity(Some("web"), 1).await.unwrap()[0];
    assert_eq!(
        edited.reason,
        ChangeReason::SettingsChanged {
            min: 0,
            max: 3,
            range_moved: true
        },
        "the edit and its entry are one transaction"
    );
    assert_eq!((edited.from, edited.to), (4, 3));
    let id = store.console_id().await.unwrap();
    assert_eq!(store.console_id().await.unwrap(), id, "made once");
    store.delete("web").await.unwrap();
    assert!(matches!(
        store.get("web").await,
        Err(PoolError::NotFound(_))
    ));
    drop(dir);
}

#[test]
fn the_form_offers_the_catalogs_names_for_what_hosts_report() {
    let catalog: Vec<String> = ["A100", "H800", "V100", "A100-80GB"]
        .iter()
        .map(|m| m.to_string())
        .collect();
    let facts = |name: &str, region: &str, models: &[&str]| HostFacts {
        name: name.into(),
        region: region.into(),
        models: models.iter().map(|m| m.to_string()).collect(),
    };
    let hosts = vec![
        facts("a", "cn-north", &["NVIDIA A100-SXM4-40GB"]),
        facts("b", "cn-east", &["NVIDIA A100-SXM4-40GB", "NVIDIA H800"]),
        facts("c", "cn-east", &["NVIDIA A100 80GB PCIe"]),
        facts("d", "cn-east", &["Ascend 910B"]),
        facts("e", "cn-east", &[]),
    ];
    let offers = model_offers(&catalog, &hosts);
    let names: Vec<(&str, bool, u32)> = offers
        .iter()
        .map(|o| (o.model.as_str(), o.priced, o.hosts))
        .collect();
    // Reported and priced first, then unpriced reports, then priced models no host has.
    assert_eq!(
        names,
        vec![
            ("A100", true, 2),
            ("A100-80GB", true, 1),
            ("H800", true, 1),
            ("Ascend 910B", false, 1),
            ("V100", true, 0),
        ]
    );
    assert_eq!(offers[0].reported, vec!["NVIDIA A100-SXM4-40GB"]);
    assert_eq!(offers[0].regions, vec!["cn-east", "cn-north"]);
    // The most specific catalog name takes an 80 GB card.
    assert_eq!(offers[1].reported, vec!["NVIDIA A100 80GB PCIe"]);
    assert!(offers[4].reported.is_empty());
}

#[test]
fn spend_across_pools_sums_what_is_priced_and_prorates_a_new_base() {
    let catalog = Catalog::demo();
    let month_start = ebb_charts::calendar::days_from_civil(2026, 12, 1) * 86_400_000;
    let now = month_start + 10 * 86_400_000;
    let mut web = validate(
        &PoolInput {
            base_gpus: 10,
            ..input("web", "A100", &["cn-north"], 0, 12)
        },
        &hosts(),
        &catalog,
    )
    .unwrap()
    .0;
    // Made a minute ago, holding nothing: a minute of its base, not ten days'.
    web.created_at_ms = now - 60_000;
    let mut old = web.clone();
    old.name = "old".into();
    old.created_at_ms = month_start - 86_400_000;
    let mut unpriced = web.clone();
    unpriced.name = "aaa".into();
    unpriced.model = "B200".into();
    let views: Vec<(Pool, PoolView)> = [web, old, unpriced]
        .into_iter()
        .map(|pool| {
            let view = pool_view(&pool, None, &[], &catalog, now);
            (pool, view)
        })
        .collect();
    let month = catalog.find("A100", "cn-north").unwrap().month.fen();
    let web_spend = views[0].1.spend.clone().unwrap();
    assert_eq!(web_spend.base_from_ms, now - 60_000);
    assert_eq!(
        web_spend.month_to_date_fen,
        (i128::from(month) * 10 * 60_000 / (730 * 3_600_000)) as i64
    );
    let old_spend = views[1].1.spend.clone().unwrap();
    assert_eq!(
        old_spend.base_from_ms, month_start,
        "from the month's start"
    );
    assert!(views[2].1.spend.is_none() && views[2].1.spend_problem.is_some());

    let summary = spend_summary("2026-12".into(), &views, None).unwrap();
    assert_eq!(
        summary.month_to_date_fen,
        web_spend.month_to_date_fen + old_spend.month_to_date_fen
    );
    assert_eq!(
        summary.projected_month_fen,
        web_spend.projected_month_fen + old_spend.projected_month_fen
    );
    assert_eq!(summary.budget_state, BudgetState::NoBudget);
    let names: Vec<&str> = summary.pools.iter().map(|p| p.pool.as_str()).collect();
    assert_eq!(names, ["aaa", "old", "web"], "every pool, by name");
    let budget = |fen| spend_summary("2026-12".into(), &views, Some(fen)).unwrap();
    assert_eq!(
        budget(summary.projected_month_fen).budget_state,
        BudgetState::Within
    );
    assert_eq!(
        budget(summary.month_to_date_fen + 1).budget_state,
        BudgetState::ProjectedOver
    );
    assert_eq!(
        budget(summary.month_to_date_fen - 1).budget_state,
        BudgetState::Over
    );

    let csv = spend_csv(&budget(1_000_000));
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 5, "{csv}");
    assert!(lines[0].starts_with("month,pool,model,gpus_now,base_gpus"));
    assert!(lines[0].ends_with(",gpu_hours,spot_cny,spot_saved_cny,problem"));
    assert!(lines[1].starts_with("2026-12,aaa,B200,0,10,month,hour,,,,,,"));
    let old_line = format!(
        "2026-12,old,A100,0,10,month,hour,2026-12-01 00:00:00Z,{}.{:02},",
        old_spend.month_to_date_fen / 100,
        old_spend.month_to_date_fen % 100
    );
    assert!(lines[2].starts_with(&old_line), "{}", lines[2]);
    assert!(lines[4].starts_with("2026-12,total,,0,30,"));
    assert!(lines[4].ends_with(",budget 10000.00"));
}

#[tokio::test]
async fn budget_and_limit_changes_are_logged_once() {
    let (store, dir) = store().await;
    assert_eq!(store.budget().await.unwrap(), None);
    store.set_budget(Some(500_000)).await.unwrap();
    store.set_budget(Some(500_000)).await.unwrap();
    assert_eq!(store.budget().await.unwrap(), Some(500_000));
    store.set_budget(None).await.unwrap();
    let mut policy = store.confirm_policy().await.unwrap();
    store.set_confirm_policy(policy).await.unwrap();
    policy.above_gpus += 1;
    store.set_confirm_policy(policy).await.unwrap();
    let log = store.activity(None, 10).await.unwrap();
    let reasons: Vec<&ChangeReason> = log.iter().map(|e| &e.reason).collect();
    assert_eq!(
        reasons,
        [
            &ChangeReason::ConfirmLimitsChanged {
                above_gpus: policy.above_gpus,
                above_per_hour_fen: policy.above_per_hour_fen
            },
            &ChangeReason::BudgetChanged { budget_fen: None },
            &ChangeReason::BudgetChanged {
                budget_fen: Some(500_000)
            },
        ],
        "an unchanged value logs nothing"
    );
    assert!(
        log.iter()
            .all(|e| e.pool.is_empty() && e.outcome == Outcome::Done)
    );
    drop(dir);
}

#[tokio::test]
async fn notifications_read_new_entries_prefs_and_the_charts_rule_decisions() {
    use ebb_wire::pools::NotificationPrefs;
    let (store, dir) = store().await;
    assert_eq!(
        store.notification_prefs().await.unwrap(),
        NotificationPrefs::default(),
        "all on until the operator says"
    );
    let quiet = NotificationPrefs {
        scaled: false,
        budget: true,
        stale: false,
        spot: false,
    };
    store.set_notification_prefs(quiet).await.unwrap();
    assert_eq!(store.notification_prefs().await.unwrap(), quiet);
    assert!(
        store.activity(None, 10).await.unwrap().is_empty(),
        "a preference, not a change"
    );
    assert_eq!(store.last_activity_id().await.unwrap(), 0);

    let valid = validate(
        &input("web", "A100", &["cn-north"], 0, 10),
        &hosts(),
        &Catalog::demo(),
    )
    .unwrap();
    store.create(valid).await.unwrap();
    let seen = store.last_activity_id().await.unwrap();
    assert!(seen > 0);
    let change = |actor, from, to| NewActivity {
        actor,
        from,
        to,
        reason: ChangeReason::Slider,
        delta_per_hour_fen: None,
        delta_per_month_fen: None,
    };
    store
        .set_desired("web", 3, &[], &change(Actor::Rule, 0, 3), None)
        .await
        .unwrap();
    store
        .set_desired("web", 5, &[], &change(Actor::Operator, 3, 5), None)
        .await
        .unwrap();
    let new = store.activity_after(seen, 10).await.unwrap();
    assert_eq!(
        new.iter().map(|e| e.to).collect::<Vec<_>>(),
        [3, 5],
        "oldest first"
    );
    assert_eq!(store.activity_after(seen, 1).await.unwrap().len(), 1);
    assert!(
        store
            .activity_after(new[1].id, 10)
            .await
            .unwrap()
            .is_empty()
    );
    let rules = store.rule_activity("web", 0, i64::MAX, 10).await.unwrap();
    assert_eq!(
        rules.iter().map(|e| e.to).collect::<Vec<_>>(),
        [3],
        "the rule's only"
    );
    // A change carried out ends the entry already written: heard as its pool's, once.
    let (_, before) = store.finished_after(i64::MIN).await.unwrap();
    assert_eq!(
        store.finished_after(before).await.unwrap(),
        (vec![], before)
    );
    store
        .update_change(new[1].id, &[], Outcome::Done)
        .await
        .unwrap();
    let (ended, latest) = store.finished_after(before).await.unwrap();
    assert_eq!(ended, ["web"]);
    assert!(latest > before);
    assert_eq!(
        store.finished_after(latest).await.unwrap(),
        (vec![], latest)
    );
    assert!(
        store
            .rule_activity("web", 0, 1, 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .rule_activity("other", 0, i64::MAX, 10)
            .await
            .unwrap()
            .is_empty()
    );
    drop(dir);
}

/// Two writers on one database (each with its own connections, as two consoles sharing it
/// are), interleaving slider moves, rule decisions and pool edits, each made from what it
/// read: no change is lost. Every change is in the activity log, each one made from the
/// count the one before left (a lost update would show two changes from the same count),
/// and the pool ends where the last one put it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_writers_interleaving_lose_no_change() {
    let dir = ebb_testkit::TempDir::new("pools-two-writers");
    let catalog = Catalog::demo();
    let first = PoolStore::new(ConsoleDb::open(&dir).await.unwrap());
    let second = PoolStore::new(ConsoleDb::open(&dir).await.unwrap());
    let valid = validate(
        &input("web", "A100", &["cn-north"], 0, 40),
        &hosts(),
        &catalog,
    )
    .unwrap();
    first.create(valid).await.unwrap();
    const ROUNDS: u32 = 40;
    let writer = |store: PoolStore, seed: u32| {
        let catalog = catalog.clone();
        tokio::spawn(async move {
            let (mut made, mut refused) = (0u32, 0u32);
            for round in 0..ROUNDS {
                let pick = (round * 7 + seed * 3) % 5;
                if pick == 4 {
                    // An edit: the range moves, the count is clamped into it.
                    let max = 20 + (round + seed) % 20;
                    let valid = validate(
                        &input("web", "A100", &["cn-north"], 0, max),
                        &hosts(),
                        &catalog,
                    )
                    .unwrap();
                    store.update("web", valid).await.unwrap();
                    made += 1;
                    continue;
                }
                let seen = store.get("web").await.unwrap();
                // Yield between the read and the write, so the other writer gets in.
                tokio::task::yield_now().await;
                let to = (seen.desired + 1 + seed + round) % (seen.max + 1);
                let change = NewActivity {
                    actor: if pick.is_multiple_of(2) {
                        Actor::Rule
                    } else {
                        Actor::Operator
                    },
                    from: seen.desired,
                    to,
                    reason: ChangeReason::Slider,
                    delta_per_hour_fen: None,
                    delta_per_month_fen: None,
                };
                match store.set_desired("web", to, &[], &change, None).await {
                    Ok(_) => made += 1,
                    Err(PoolError::Moved {
                        expected, actual, ..
                    }) => {
                        assert_eq!(expected, seen.desired);
                        assert_ne!(actual, expected);
                        refused += 1;
                    }
                    Err(PoolError::Invalid {
                        field: "desired", ..
                    }) => refused += 1,
                    Err(error) => panic!("{error}"),
                }
            }
            (made, refused)
        })
    };
    let a = writer(first.clone(), 1);
    let b = writer(second.clone(), 2);
    let (a, b) = (a.await.unwrap(), b.await.unwrap());
    let log = first.activity(Some("web"), 1_000).await.unwrap();
    // Oldest first; the first entry is the creation.
    let chain: Vec<&ActivityEntry> = log.iter().rev().collect();
    assert_eq!(
        chain.len() as u32 - 1,
        a.0 + b.0,
        "every change made is logged once (made {a:?} {b:?})"
    );
    for pair in chain.windows(2) {
        assert_eq!(
            pair[1].from, pair[0].to,
            "entry {} moved from {}, but the entry before it left {}: an update was lost",
            pair[1].id, pair[1].from, pair[0].to
        );
    }
    assert_eq!(
        first.get("web").await.unwrap().desired,
        chain.last().unwrap().to,
        "the pool is where the last change put it"
    );
    drop(dir);
}

#[test]
fn a_cross_region_placement_is_priced_per_region() {
    // A100 is ¥12/h in cn-east and ¥13/h in cn-south. The pool holds nothing; east has 2
    // free, south 4: "rent 6: 2 on east, 4 on south" is ¥76/h, not 6 × ¥12.
    let catalog = Catalog::demo();
    let facts = vec![
        HostFacts {
            name: "east".into(),
            region: "cn-east".into(),
            models: vec!["NVIDIA A100-SXM4-80GB".into()],
        },
        HostFacts {
            name: "south".into(),
            region: "cn-south".into(),
            models: vec!["NVIDIA A100-SXM4-80GB".into()],
        },
    ];
    let mut pool = validate(
        &input("p", "A100", &["cn-east", "cn-south"], 0, 8),
        &facts,
        &catalog,
    )
    .unwrap()
    .0;
    let free = |host: &str, region: &str, free: u32| ebb_wire::pools::HostFree {
        host: host.into(),
        region: region.into(),
        free,
    };
    let status = PoolStatus {
        free: vec![free("east", "cn-east", 2), free("south", "cn-south", 4)],
        ..PoolStatus::default()
    };
    let preview = scale_preview(
        &pool,
        &status,
        6,
        &[],
        &catalog,
        ConfirmPolicy::default(),
        0,
    );
    assert_eq!(preview.rent.len(), 2, "{:?}", preview.rent);
    assert_eq!(preview.delta_per_hour_fen, 76_00);
    assert_eq!(preview.per_hour_after_fen, 76_00);
    // The rules' pricing (budgets, cost deltas) places the GPUs the same way.
    let rules_price = priced_pool(&pool, Some(&status), &catalog).unwrap();
    assert_eq!(
        rules_price.preview(0, 6).unwrap().delta.per_hour.fen(),
        76_00
    );

    // Held: 2 on east (oldest), 4 on south. Spend's run rate and the rules' pricing say
    // ¥76/h too, and giving back 4 goes newest first (south): −¥52/h.
    let lease = |id: &str, host: &str, region: &str, gpus: usize, at: i64| PoolLeaseView {
        lease_id: id.into(),
        host: host.into(),
        region: region.into(),
        gpu_uuids: (0..gpus).map(|i| format!("{id}-{i}")).collect(),
        gpu_indexes: (0..gpus as u32).collect(),
        fencing_token: 1,
        granted_at_ms: at,
        state: PoolLeaseState::Active,
        util_pct: Some(0.0),
        checkpoint_at_ms: None,
        release_grace_s: None,
        reclaim_deadline_ms: None,
        spot: false,
        starting: false,
    };
    let held = PoolStatus {
        actual: 6,
        leases: vec![
            lease("e", "east", "cn-east", 2, 1_000),
            lease("s", "south", "cn-south", 4, 2_000),
        ],
        ..PoolStatus::default()
    };
    pool.desired = 6;
    let priced = priced_pool(&pool, Some(&held), &catalog).unwrap();
    assert_eq!(priced.run_rate(6).unwrap().total.per_hour.fen(), 76_00);
    let spans: Vec<RegionSpan> = held
        .leases
        .iter()
        .map(|l| RegionSpan {
            span: LeaseSpan {
                start_ms: l.granted_at_ms,
                end_ms: None,
                gpus: l.gpu_uuids.len() as u32,
            },
            region: Some(l.region.clone()),
            spot: false,
            lease: None,
        })
        .collect();
    let view = pool_view(&pool, Some((held.clone(), 3_000)), &spans, &catalog, 3_000);
    let spend = view.spend.unwrap();
    assert_eq!(spend.run_rate_per_hour_fen, 76_00);
    // One started hour each: 2 × ¥12 + 4 × ¥13.
    assert_eq!(spend.month_to_date_fen, 76_00);
    let back = scale_preview(
        &pool,
        &held,
        2,
        &[],
        &catalog,
        ConfirmPolicy::default(),
        3_000,
    );
    assert_eq!(back.delta_per_hour_fen, -52_00, "{back:?}");
}

#[test]
fn spot_is_priced_at_spot_where_it_can_be_had_and_on_demand_where_it_cannot() {
    // A100 in cn-east: ¥12/h on demand, ¥5.60/h spot. All above the base on spot.
    let catalog = Catalog::demo();
    let facts = vec![HostFacts {
        name: "east".into(),
        region: "cn-east".into(),
        models: vec!["NVIDIA A100-SXM4-80GB".into()],
    }];
    let mut typed = input("p", "A100", &["cn-east"], 0, 8);
    typed.interruptible = true;
    typed.spot.spot_pct = 100;
    let mut pool = validate(&typed, &facts, &catalog).unwrap().0;
    pool.desired = 1;
    let free = |host: &str, free: u32| ebb_wire::pools::HostFree {
        host: host.into(),
        region: "cn-east".into(),
        free,
    };
    let spot_lease = PoolLeaseView {
        lease_id: "s1".into(),
        host: "spot-host".into(),
        region: "cn-east".into(),
        gpu_uuids: vec!["GPU-s1".into()],
        gpu_indexes: vec![0],
        fencing_token: 1,
        granted_at_ms: 0,
        state: PoolLeaseState::Active,
        util_pct: Some(50.0),
        checkpoint_at_ms: None,
        release_grace_s: None,
        reclaim_deadline_ms: None,
        spot: true,
        starting: false,
    };
    // One spot GPU held; 1 spot and 2 on demand free: 3 is 1 more spot and 1 on demand.
    let status = PoolStatus {
        actual: 1,
        spot: 1,
        leases: vec![spot_lease.clone()],
        free: vec![free("east", 2)],
        free_spot: vec![free("spot-host", 1)],
        ..PoolStatus::default()
    };
    let preview = scale_preview(
        &pool,
        &status,
        3,
        &[],
        &catalog,
        ConfirmPolicy::default(),
        0,
    );
    assert_eq!(preview.per_hour_before_fen, 5_60);
    assert_eq!(preview.per_hour_after_fen, 2 * 5_60 + 12_00, "{preview:?}");
    assert_eq!((preview.split.spot, preview.split.on_demand), (2, 1));
    assert_eq!(preview.spot_saving_per_hour_fen, Some(2 * (12_00 - 5_60)));
    let hosts: Vec<(&str, u32)> = preview
        .rent
        .iter()
        .map(|m| (m.host.as_str(), m.count))
        .collect();
    assert_eq!(hosts, vec![("spot-host", 1), ("east", 1)]);
    // Giving back 2 from 3 (2 spot, 1 on demand): spot above the share of 1 goes first.
    pool.desired = 3;
    let mut od = spot_lease.clone();
    od.lease_id = "d1".into();
    od.host = "east".into();
    od.spot = false;
    let mut s2 = spot_lease.clone();
    s2.lease_id = "s2".into();
    let held = PoolStatus {
        actual: 3,
        spot: 2,
        leases: vec![spot_lease, s2, od],
        ..PoolStatus::default()
    };
    let back = scale_preview(&pool, &held, 1, &[], &catalog, ConfirmPolicy::default(), 0);
    assert_eq!(back.split.spot, 1, "{back:?}");
    assert_eq!(back.per_hour_after_fen, 5_60);
    assert!(
        back.released
            .iter()
            .all(|l| l.host == "spot-host" || l.lease_id == "d1")
    );
    assert_eq!(back.released.len(), 2);
}

#[test]
fn the_spend_view_says_what_spot_saved_net_of_its_reclaims() {
    // A100 in cn-east: ¥12/h on demand, ¥5.60/h spot. One GPU on the base throughout.
    let catalog = Catalog::demo();
    let facts = vec![HostFacts {
        name: "east".into(),
        region: "cn-east".into(),
        models: vec!["NVIDIA A100-SXM4-80GB".into()],
    }];
    let mut typed = input("p", "A100", &["cn-east"], 0, 8);
    typed.interruptible = true;
    typed.spot.spot_pct = 100;
    typed.base_gpus = 1;
    let mut pool = validate(&typed, &facts, &catalog).unwrap().0;
    let month_start = ebb_charts::calendar::days_from_civil(2026, 12, 1) * 86_400_000;
    pool.created_at_ms = month_start - 86_400_000;
    let now = month_start + 10 * 86_400_000;
    let t0 = now - 5 * 3_600_000;
    let minute = 60_000;
    let span = |from_min: i64, to_min: Option<i64>, spot: bool| RegionSpan {
        span: LeaseSpan {
            start_ms: t0 + from_min * minute,
            end_ms: to_min.map(|to| t0 + to * minute),
            gpus: 1,
        },
        region: Some("cn-east".into()),
        spot,
        lease: None,
    };
    let base = RegionSpan {
        span: LeaseSpan {
            start_ms: month_start,
            end_ms: None,
            gpus: 1,
        },
        ..span(0, None, false)
    };
    let saved = |spans: &[RegionSpan]| {
        let spend = pool_view(&pool, None, spans, &catalog, now).spend.unwrap();
        (spend.spot_fen, spend.spot_saved_fen)
    };
    // Spot held 4 hours: 4 hours' price gap.
    assert_eq!(
        saved(&[base.clone(), span(0, Some(240), true)]),
        (4 * 5_60, 4 * (12_00 - 5_60))
    );
    // Spot taken back 20 minutes in (2 minutes' notice), replaced on demand, back 20
    // minutes later, six times over: one GPU held 4 hours on demand would have cost
    // 4 × ¥12; it paid 6 spot hours and 6 fresh on-demand hours. The spot leases' own price
    // gap (6 × ¥6.40, what this figure was) says nothing of the replacements.
    let mut churn = vec![base];
    for k in 0..6 {
        churn.push(span(40 * k, Some(40 * k + 22), true));
        churn.push(span(40 * k + 20, Some(40 * k + 40), false));
    }
    assert_eq!(
        saved(&churn),
        (6 * 5_60, 4 * 12_00 - (6 * 5_60 + 6 * 12_00))
    );
    // No spot this month: nothing saved.
    assert_eq!(saved(&[churn[0].clone(), span(0, None, false)]), (0, 0));
    // In a reclaim's notice: spot held from 0, its owner takes it back at 182 (notice from
    // 180), the replacement granted at 181. Until the deadline the agent still lists the
    // spot lease as held; known to end at 182, the all-on-demand pool holds one GPU for the
    // two, as it will once the lease has ended: not one GPU more to count a saving on.
    let reclaimed = RegionSpan {
        lease: Some(("east".into(), "s1".into())),
        ..span(0, None, true)
    };
    let status = PoolStatus {
        leases: vec![PoolLeaseView {
            lease_id: "s1".into(),
            host: "east".into(),
            region: "cn-east".into(),
            gpu_uuids: vec!["GPU-s1".into()],
            gpu_indexes: vec![0],
            fencing_token: 1,
            granted_at_ms: t0,
            state: PoolLeaseState::Reclaimed,
            util_pct: None,
            checkpoint_at_ms: None,
            release_grace_s: None,
            reclaim_deadline_ms: Some(t0 + 182 * minute),
            spot: true,
            starting: false,
        }],
        ..PoolStatus::default()
    };
    let in_notice = [churn[0].clone(), reclaimed, span(181, None, false)];
    let now_in_notice = t0 + 181 * minute + 30_000;
    let spend = |status: Option<(PoolStatus, i64)>| {
        pool_view(&pool, status, &in_notice, &catalog, now_in_notice)
            .spend
            .unwrap()
            .spot_saved_fen
    };
    let ended = [
        churn[0].clone(),
        span(0, Some(182), true),
        span(181, None, false),
    ];
    let after = pool_view(&pool, None, &ended, &catalog, now_in_notice)
        .spend
        .unwrap()
        .spot_saved_fen;
    assert_eq!(spend(Some((status, now_in_notice))), after);
    // Without the deadline known, the two read as two GPUs: a saving that is not there.
    assert!(spend(None) > after, "{} vs {after}", spend(None));
}

#[tokio::test]
async fn a_pools_activity_holds_the_console_wide_spot_switches_of_its_model_and_regions() {
    let (store, _dir) = store().await;
    let catalog = Catalog::demo();
    let valid = validate(
        &input("web", "A100", &["cn-north"], 0, 10),
        &hosts(),
        &catalog,
    )
    .unwrap();
    store.create(valid).await.unwrap();
    let paused = |model: &str, region: &str| ChangeReason::SpotPaused {
        model: model.into(),
        region: region.into(),
        interruptions: 3,
        window_minutes: 10,
        until_ms: 0,
    };
    store
        .log_console(Actor::Enforcer, &paused("A100", "cn-north"))
        .await
        .unwrap();
    store
        .log_console(Actor::Enforcer, &paused("A100", "cn-south"))
        .await
        .unwrap();
    store
        .log_console(Actor::Enforcer, &paused("V100", "cn-north"))
        .await
        .unwrap();
    store
        .log_console(
            Actor::Enforcer,
            &ChangeReason::SpotResumed {
                model: "A100".into(),
                region: "cn-north".into(),
                quiet_minutes: 5,
            },
        )
        .await
        .unwrap();
    let kinds: Vec<String> = store
        .activity(Some("web"), 10)
        .await
        .unwrap()
        .iter()
        .map(|entry| entry.reason.to_string())
        .collect();
    assert_eq!(kinds.len(), 3, "{kinds:#?}");
    assert!(
        kinds[0].contains("resume") || kinds[0].contains("quiet"),
        "{kinds:#?}"
    );
    assert!(
        kinds[1].contains("A100") && kinds[1].contains("cn-north"),
        "{kinds:#?}"
    );
    // The pool's own entry (created) is last, newest first; at most `limit`.
    assert_eq!(store.activity(Some("web"), 2).await.unwrap().len(), 2);
}
