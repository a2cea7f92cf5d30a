//! Removing a host that holds a pool's GPUs: the refusal says so and offers to release
//! them first; the pool takes its GPUs on other hosts, then the host is gone. A host that
//! died while draining is forgotten from its row once written off.

use crate::fleet::scale_demo_pool;
use crate::support::{App, shooting};
use ebb_core::console::collector_running;
use ebb_core::db::ConsoleDb;
use ebb_core::pools::PoolStore;
use ebb_core::registry::{HostEntry, Registry};
use ebb_core::vault::MemoryVault;
use ebb_testkit::{TempDir, eventually};
use ebb_wire::ipc::HostRemoval;
use fantoccini::Locator;
use std::ffi::OsStr;
use std::sync::Arc;
use std::time::Duration;

#[tokio::test]
#[ignore = "needs Xvfb, tauri-driver and the custom-protocol build: run by `cargo xtask test`"]
async fn removing_a_host_that_holds_pool_gpus_offers_to_release_them_first() {
    let data_dir = TempDir::new("e2e-host-drain");
    let app = App::open_demo(&data_dir).await;

    app.run(|app| async move {
        scale_demo_pool(&app, 2).await;
        let holder = app
            .eventually("a lease row naming its host", Duration::from_secs(10), || {
                app.attr_of("[data-testid=\"pool-lease-row\"]", "data-host")
            })
            .await;

        app.open_settings_hosts().await;
        let row = format!("[data-testid=\"settings-hosts-table\"] tr[data-host=\"{holder}\"]");
        app.click(&format!("{row} button[data-action=\"remove\"]")).await;
        app.click(&format!(
            "[data-testid=\"settings-hosts-table\"] tr[data-confirm-for=\"{holder}\"] button[data-action=\"confirm-remove\"]"
        ))
        .await;
        // Refused, with the pool named and the offer beside it.
        app.eventually("the refusal", Duration::from_secs(10), || async {
            (app.attr_of("[data-testid=\"hosts-error\"]", "data-kind").await.as_deref()
                == Some("host_holds_gpus"))
            .then_some(())
        })
        .await;
        let refusal = app.text_now("[data-testid=\"hosts-error\"]").await;
        assert!(refusal.contains("`inference` (2 GPUs)"), "{refusal}");
        assert!(app.exists(&row).await, "still registered");
        app.shoot("en-light-settings-host-holds-gpus").await;

        app.click("[data-testid=\"hosts-error\"] button[data-action=\"release-and-remove\"]")
            .await;
        // The row says it drains (unless it went already), then it is gone.
        app.eventually("the host drained and removed", Duration::from_secs(90), || async {
            if app.exists(&format!("{row} [data-draining]")).await {
                return Err("draining".to_string());
            }
            if app.exists(&row).await {
                return Err("still listed".to_string());
            }
            Ok(())
        })
        .await;
        let status = app.text_now("[data-testid=\"hosts-status\"]").await;
        assert!(status.contains(&holder), "{status}");

        // The pool kept its two GPUs, now on other hosts.
        app.click("#nav-pool").await;
        app.eventually("two GPUs elsewhere", Duration::from_secs(60), || async {
            let rows = app
                .find_all(Locator::Css("[data-testid=\"pool-lease-row\"]"))
                .await
                .map_err(|e| e.to_string())?;
            let mut hosts = Vec::new();
            for row in rows {
                hosts.push(row.attr("data-host").await.ok().flatten().unwrap_or_default());
            }
            let actual = app.text_now("[data-testid=\"pool-actual\"]").await;
            if actual == "2" && hosts.len() == 2 && hosts.iter().all(|h| *h != holder) {
                Ok(())
            } else {
                Err(format!("actual {actual}, leases on {hosts:?}"))
            }
        })
        .await;

        if shooting() {
            app.click("#nav-activity").await;
            app.open_settings_hosts().await;
            app.click("#setting-theme-dark").await;
            app.click("#setting-language-zh-CN").await;
            app.click("#nav-activity").await;
            app.shoot("zh-dark-activity-host-drained").await;
            app.open_settings_hosts().await;
            app.click("#setting-theme-light").await;
            app.click("#setting-language-en").await;
        }
    })
    .await;
}

/// A host that dies while it drains is written off after the grace period (the pool's GPU
/// there counted lost) but can never be released, so it would drain for ever: its row
/// offers to forget it, which records the lease as ended and removes the host.
///
/// The app runs twice on one data directory, so no real grace period is waited out and
/// neither step races the clock: first with a grace period of an hour (forgetting is
/// refused: not written off), then with one of a second, which the ghost's silence,
/// remembered from the first run, is past at once (it is forgotten once written off).
#[tokio::test]
#[ignore = "needs Xvfb, tauri-driver and the custom-protocol build: run by `cargo xtask test`"]
async fn a_host_that_died_while_draining_is_forgotten_from_its_row() {
    let data_dir = TempDir::new("e2e-host-forget");
    let demo_dir = data_dir.join("demo");
    let demo: [&OsStr; 3] = [
        "--demo".as_ref(),
        "--data-dir".as_ref(),
        data_dir.as_os_str(),
    ];
    let row = "[data-testid=\"settings-hosts-table\"] tr[data-host=\"ghost\"]";
    let remove = format!("{row} button[data-action=\"remove\"]");
    let confirm = "[data-testid=\"settings-hosts-table\"] tr[data-confirm-for=\"ghost\"] button[data-action=\"confirm-remove\"]";

    let app = App::open_with_env(&[("EBB_FAILOVER_GRACE_S", OsStr::new("3600"))], &demo).await;
    let (first_dir, first_remove) = (demo_dir.clone(), remove.clone());
    app.run(|app| async move {
        let (demo_dir, remove) = (first_dir, first_remove);
        // A host that never answers, with a lease of the demo pool on record there (as
        // one granted before the machine died), asked to drain.
        let db = ConsoleDb::open(&demo_dir).await.unwrap();
        let registry = Registry::new(db.clone(), Arc::new(MemoryVault::default()));
        registry
            .add(
                &HostEntry {
                    name: "ghost".into(),
                    url: "http://127.0.0.1:9".into(),
                    region: "cn-east".into(),
                    labels: Default::default(),
                    fingerprint: None,
                    has_token: false,
                    draining: false,
                },
                None,
            )
            .await
            .unwrap();
        let pool = PoolStore::new(db.clone()).list().await.unwrap()[0].id.clone();
        let now = db.now_ms();
        sqlx::query(
            "INSERT INTO pool_leases (host, lease_id, pool_id, gpu_uuids, gpu_indexes, fencing_token, granted_at_ms, ended_at_ms) \
             VALUES ('ghost', 'ghost-lease-1', $1, '[\"GPU-ghost-0\"]', '[0]', 1, $2, NULL)",
        )
        .bind(&pool)
        .bind(now)
        .execute(db.pool())
        .await
        .unwrap();
        assert!(matches!(
            registry.remove_releasing("ghost").await.unwrap(),
            HostRemoval::Draining { .. }
        ));

        app.open_settings_hosts().await;
        app.eventually("the ghost draining, with Forget", Duration::from_secs(20), || async {
            (app.exists(&format!("{row} [data-draining]")).await
                && app.attr_of(&remove, "data-forget").await.as_deref() == Some("true"))
            .then_some(())
        })
        .await;
        // Inside the grace period it is not written off: forgetting is refused, by name.
        app.click(&remove).await;
        app.shoot("en-light-settings-host-forget-question").await;
        app.click(confirm).await;
        app.eventually("the refusal", Duration::from_secs(10), || async {
            let text = app.text_now("[data-testid=\"hosts-error\"]").await;
            text.contains("has not been written off").then_some(())
        })
        .await;
        assert!(app.exists(row).await, "still registered");
    })
    .await;

    // The second run enforces only once the first has let the data directory go.
    eventually(
        "the first run to let its data directory go",
        Duration::from_secs(20),
        || async { collector_running(&demo_dir).map(|running| !running) },
    )
    .await;
    let app = App::open_with_env(&[("EBB_FAILOVER_GRACE_S", OsStr::new("1"))], &demo).await;
    app.run(|app| async move {
        let db = ConsoleDb::open(&demo_dir).await.unwrap();
        // Past the grace period, the ghost is written off: its fence is on record.
        eventually("the ghost written off", Duration::from_secs(30), || async {
            sqlx::query_scalar::<_, i64>("SELECT at_ms FROM host_fences WHERE host = 'ghost'")
                .fetch_optional(db.pool())
                .await
                .map_err(|error| error.to_string())?
                .ok_or("no fence yet".to_string())
        })
        .await;
        // Then Forget removes it.
        app.open_settings_hosts().await;
        app.click(&remove).await;
        app.click(confirm).await;
        let forgotten = app
            .eventually("the ghost forgotten", Duration::from_secs(10), || async {
                if app.exists(row).await {
                    return Err(app.text_of("[data-testid=\"hosts-error\"]").await);
                }
                Ok(app.text_now("[data-testid=\"hosts-status\"]").await)
            })
            .await;
        assert!(
            forgotten.contains("Forgot ghost and its 1 written-off lease"),
            "{forgotten}"
        );
        app.shoot("en-light-settings-host-forgotten").await;
        let ended: Option<i64> = sqlx::query_scalar(
            "SELECT ended_at_ms FROM pool_leases WHERE lease_id = 'ghost-lease-1'",
        )
        .fetch_one(db.pool())
        .await
        .unwrap();
        assert!(ended.is_some(), "the lease is history");
    })
    .await;
}
