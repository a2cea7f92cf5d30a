//! Removing a host that holds a pool's GPUs: the refusal says so and offers to release
//! them first; the pool takes its GPUs on other hosts, then the host is gone.

use crate::fleet::scale_demo_pool;
use crate::support::{App, shooting};
use ebb_testkit::TempDir;
use fantoccini::Locator;
use std::time::Duration;

#[tokio::test]
#[ignore = "needs Xvfb, tauri-driver and the custom-protocol build: run by `cargo xtask test`"]
async fn removing_a_host_that_holds_pool_gpus_offers_to_release_them_first() {
    let data_dir = TempDir::new("e2e-host-drain");
    let app = App::open_demo(&data_dir).await;

    app.run(|app| async move {
        scale_demo_pool(&app, 2).await;
        let holder = app
            .attr_of("[data-testid=\"pool-lease-row\"]", "data-host")
            .await
            .expect("a lease row names its host");

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
