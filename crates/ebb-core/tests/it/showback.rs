//! Showback over a console's lease history: two teams' pools sharing November, one with a
//! subscribed base, billed by the month, split into overlay, base used and idle base, and
//! summed to what the spend summary says of the same month.

use ebb_core::clock::{Clock, ManualClock};
use ebb_core::console::{Console, ConsoleOptions};
use ebb_core::pools::PoolError;
use ebb_testkit::TempDir;
use ebb_wire::plan::{OverlayMode, Term};
use std::sync::Arc;
use std::time::Duration;

const HOUR_MS: i64 = 3_600_000;
const DAY_MS: i64 = 24 * HOUR_MS;

/// Records a lease of `gpus` GPUs of `pool` as the enforcer would have.
async fn lease(
    console: &Console,
    pool_id: &str,
    id: &str,
    gpus: usize,
    span: (i64, i64),
    spot: bool,
) {
    let uuids: Vec<String> = (0..gpus).map(|i| format!("GPU-{id}-{i}")).collect();
    let indexes: Vec<usize> = (0..gpus).collect();
    sqlx::query(
        "INSERT INTO pool_leases (host, lease_id, pool_id, gpu_uuids, gpu_indexes, fencing_token, granted_at_ms, ended_at_ms, spot) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
    )
    .bind("h1")
    .bind(id)
    .bind(pool_id)
    .bind(serde_json::to_string(&uuids).unwrap())
    .bind(serde_json::to_string(&indexes).unwrap())
    .bind(1_i64)
    .bind(span.0)
    .bind(span.1)
    .bind(i64::from(spot))
    .execute(console.pool_store().db().pool())
    .await
    .unwrap();
}

async fn set_team(console: &Console, pool: &str, team: &str) {
    sqlx::query("UPDATE pools SET team = $1 WHERE name = $2")
        .bind(team)
        .bind(pool)
        .execute(console.pool_store().db().pool())
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_teams_share_a_month_and_showback_sums_to_its_spend() {
    let (november, december) = ebb_charts::calendar::utc_month_named("2026-11").unwrap();
    // The pools are made the day before November, so the base is paid all month.
    let clock = Arc::new(ManualClock::new(november - DAY_MS));
    let dir = TempDir::new("core-showback");
    let console = Console::open(ConsoleOptions {
        viewer_only: true,
        clock: clock.clone(),
        ..ConsoleOptions::new(dir.path())
    })
    .await
    .unwrap();
    // A host in the pools' region (never reached: the history below is written directly).
    let host = ebb_wire::ipc::HostEntry {
        name: "h1".into(),
        url: "http://127.0.0.1:9".into(),
        region: "cn-north".into(),
        labels: Default::default(),
        fingerprint: None,
        has_token: false,
        draining: false,
    };
    console.upsert_host(&host, None).await.unwrap();
    let mut train = crate::pool_input("train", "A100", vec!["cn-north".into()], 8);
    train.base_gpus = 4;
    train.term = Term::Month;
    train.overlay = OverlayMode::Hour;
    let train = console.create_pool(&train).await.unwrap();
    let infer = console
        .create_pool(&crate::pool_input(
            "infer",
            "A100",
            vec!["cn-north".into()],
            4,
        ))
        .await
        .unwrap();
    let misc = console
        .create_pool(&crate::pool_input(
            "misc",
            "A100",
            vec!["cn-north".into()],
            4,
        ))
        .await
        .unwrap();
    set_team(&console, "train", "nlp").await;
    set_team(&console, "infer", "vision").await;

    // train: 2 GPUs the first half of November (720 hours), then 3 for 10 hours from the
    // 10th: two of them on the base's free slots, the third by the hour.
    lease(
        &console,
        &train.id,
        "a",
        2,
        (november, november + 15 * DAY_MS),
        false,
    )
    .await;
    let b = november + 9 * DAY_MS;
    lease(&console, &train.id, "b", 3, (b, b + 10 * HOUR_MS), false).await;
    // infer: 1 GPU for 3 hours on demand, 1 for 2 hours on spot.
    let c = november + 4 * DAY_MS;
    lease(&console, &infer.id, "c", 1, (c, c + 3 * HOUR_MS), false).await;
    lease(&console, &infer.id, "d", 1, (c, c + 2 * HOUR_MS), true).await;
    // misc: a lease granted as November ends is December's.
    lease(
        &console,
        &misc.id,
        "e",
        1,
        (december, december + HOUR_MS),
        false,
    )
    .await;

    let entry = console.catalog().find("A100", "cn-north").unwrap().clone();
    let (hour, month, spot) = (
        entry.hour.fen(),
        entry.month.fen(),
        entry.spot_hour.unwrap_or(entry.hour).fen(),
    );
    // November is 720 hours of a 730-hour term: 4 GPUs' base pro rata, rounded.
    let base = (i128::from(4 * month) * 720 * 2 + 730) / (730 * 2);
    let base = i64::try_from(base).unwrap();
    // Held on the base: 2 GPUs × 360 h + 2 GPUs × 10 h, of 4 × 720.
    let used = i64::try_from(i128::from(base) * 740 / 2_880).unwrap();

    // Mid-November: this month's showback is the spend summary's month to date.
    clock.advance(Duration::from_millis(
        u64::try_from(DAY_MS + 19 * DAY_MS).unwrap(),
    ));
    let now = console.showback(None).await.unwrap();
    let summary = console.spend_summary().await.unwrap();
    assert_eq!(now.month, "2026-11");
    assert!(!now.complete);
    assert_eq!(now.through_ms, clock.now_ms());
    assert_eq!(
        now.total.total_fen, summary.month_to_date_fen,
        "{now:#?}\n{summary:#?}"
    );
    assert_eq!(console.showback(Some("2026-11")).await.unwrap(), now);
    for pool in &now.pools {
        let spend = summary.pools.iter().find(|p| p.pool == pool.pool).unwrap();
        assert_eq!(
            pool.spend.unwrap().total_fen,
            spend.spend.as_ref().unwrap().month_to_date_fen,
            "{}",
            pool.pool
        );
    }

    // In December, November is billed whole.
    clock.advance(Duration::from_millis(u64::try_from(25 * DAY_MS).unwrap()));
    let past = console.showback(Some("2026-11")).await.unwrap();
    assert!(past.complete);
    assert_eq!(past.through_ms, december);
    let pool = |name: &str| {
        past.pools
            .iter()
            .find(|p| p.pool == name)
            .and_then(|p| p.spend)
            .unwrap()
    };
    let train_line = pool("train");
    assert_eq!(
        (
            train_line.overlay_fen,
            train_line.base_used_fen,
            train_line.idle_base_fen
        ),
        (10 * hour, used, base - used)
    );
    assert_eq!(train_line.total_fen, base + 10 * hour);
    assert!((train_line.idle_base_gpu_hours - (2_880.0 - 740.0)).abs() < 1e-6);
    let infer_line = pool("infer");
    assert_eq!(
        (
            infer_line.overlay_fen,
            infer_line.base_used_fen,
            infer_line.idle_base_fen
        ),
        (3 * hour + 2 * spot, 0, 0),
        "spot is overlay"
    );
    assert_eq!(pool("misc").total_fen, 0, "December's lease");

    // Per team, no team last; the idle base is nlp's; the total sums the pools.
    let teams: Vec<(&str, i64, i64)> = past
        .teams
        .iter()
        .map(|t| (t.team.as_str(), t.spend.total_fen, t.spend.idle_base_fen))
        .collect();
    assert_eq!(
        teams,
        [
            ("nlp", base + 10 * hour, base - used),
            ("vision", 3 * hour + 2 * spot, 0),
            ("", 0, 0)
        ]
    );
    let pools_sum: i64 = past.pools.iter().map(|p| p.spend.unwrap().total_fen).sum();
    assert_eq!(past.total.total_fen, pools_sum);
    assert_eq!(
        past.total.overlay_fen + past.total.base_used_fen + past.total.idle_base_fen,
        past.total.total_fen
    );

    // A month not begun, or not a month: refused, naming `month`.
    for month in ["2027-01", "november", "2026-13"] {
        assert!(
            matches!(
                console.showback(Some(month)).await,
                Err(PoolError::Invalid { field: "month", .. })
            ),
            "{month}"
        );
    }
    console.shutdown().await;
}
