//! The Pool slider's scale-in preview: it names the GPUs it would release (host, GPU index,
//! lease) and warns when they run work, with the grace their agents give workloads; a lease
//! ticked in the table is the one released.

use crate::support::{App, Session, shooting};
use ebb_testkit::TempDir;
use fantoccini::Locator;
use fantoccini::key::Key;
use std::time::Duration;

/// The preview once it answers for `to`, with its release list: (lease, host, busy) each.
async fn released_for(app: &Session, to: u32, want: usize) -> Vec<(String, String, bool)> {
    app.eventually(
        &format!("the preview for {to} naming {want} GPUs"),
        Duration::from_secs(20),
        || async {
            let preview = "[data-testid=\"pool-preview\"]";
            (app.attr_of(preview, "data-state").await.as_deref() == Some("ready")).then_some(())?;
            (app.attr_of(preview, "data-to").await == Some(to.to_string())).then_some(())?;
            let items = app
                .find_all(Locator::Css("[data-testid=\"pool-release-item\"]"))
                .await
                .ok()?;
            let mut out = Vec::new();
            for item in items {
                let lease = item.attr("data-lease").await.ok()??;
                let host = item.attr("data-host").await.ok()??;
                let busy = item.attr("data-busy").await.ok()?? == "true";
                out.push((lease, host, busy));
            }
            (out.len() == want).then_some(out)
        },
    )
    .await
}

/// A GPU this busy is one the release warns about (`ebb_reconcile::placement::IDLE_PCT`).
const BUSY_PCT: f64 = 5.0;

/// The pool's lease rows whose utilization has been read at `at_least` % or more: (lease,
/// host) each.
async fn measured_lease_rows(app: &Session, at_least: f64) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Ok(rows) = app
        .find_all(Locator::Css("[data-testid=\"pool-lease-row\"]"))
        .await
    {
        for row in rows {
            // A cell reads `76%` (the row's text runs its cells together).
            let measured = row.text().await.is_ok_and(|text| {
                text.match_indices('%').any(|(at, _)| {
                    let digits = text[..at]
                        .rfind(|c: char| !c.is_ascii_digit())
                        .map_or(0, |before| before + 1);
                    text[digits..at]
                        .parse::<f64>()
                        .is_ok_and(|pct| pct >= at_least)
                })
            });
            if let (true, Ok(Some(lease)), Ok(Some(host))) = (
                measured,
                row.attr("data-lease").await,
                row.attr("data-host").await,
            ) {
                out.push((lease, host));
            }
        }
    }
    out
}

#[tokio::test]
#[ignore = "needs Xvfb, tauri-driver and the custom-protocol build: run by `cargo xtask test`"]
async fn the_scale_in_preview_names_the_gpus_it_releases_and_warns_they_are_busy() {
    let data_dir = TempDir::new("e2e-pool-release");
    let app = App::open_demo(&data_dir).await;

    app.run(|app| async move {
        let converge = Duration::from_secs(90);
        app.click("#nav-pool").await;
        app.eventually("the demo pool", Duration::from_secs(30), || async {
            let names = app.attr_of("#pool-select", "data-names").await?;
            names.lines().any(|name| name == "inference").then_some(())
        })
        .await;
        app.select_value("#pool-select", "inference").await;
        app.wait_text(
            "the pool at 0",
            "[data-testid=\"pool-desired\"]",
            "0",
            Duration::from_secs(10),
        )
        .await;

        // Rent 3; the demo's GPUs run a tidal load (15-85%), so every leased GPU is busy.
        app.focus("#pool-slider").await;
        app.press(Key::Right, 3).await;
        released_for(&app, 3, 0).await;
        app.press(Key::Enter, 1).await;
        app.wait_text(
            "desired 3",
            "[data-testid=\"pool-desired\"]",
            "3",
            Duration::from_secs(10),
        )
        .await;
        app.wait_text(
            "3 GPUs held",
            "[data-testid=\"pool-actual\"]",
            "3",
            converge,
        )
        .await;
        // Granted GPUs warm up first (the demo's workloads take 5 s to come up, idle till
        // then): wait for every one to be ready and running its load.
        app.wait_text(
            "none warming",
            "[data-testid=\"pool-starting\"]",
            "0",
            converge,
        )
        .await;
        let leases = app
            .eventually(
                "three lease rows with their utilization, each busy",
                Duration::from_secs(30),
                || async {
                    let rows = measured_lease_rows(&app, BUSY_PCT).await;
                    (rows.len() == 3).then_some(rows)
                },
            )
            .await;

        // Down to 1: the preview names the 2 GPUs to go, each one of the pool's leases, and
        // warns that they run work and get SIGTERM with the grace the agents report (the demo
        // fleet's agents give 5 s).
        app.focus("#pool-slider").await;
        app.press(Key::Left, 2).await;
        let released = released_for(&app, 1, 2).await;
        app.scroll_to("[data-testid=\"pool-preview\"]").await;
        app.shoot("pool-release-en-light").await;
        for (lease, host, _) in &released {
            assert!(
                leases.contains(&(lease.clone(), host.clone())),
                "{lease} on {host} is one of the pool's leases: {leases:?}"
            );
        }
        assert_ne!(released[0].0, released[1].0, "two different leases");
        assert!(
            released.iter().any(|(_, _, busy)| *busy),
            "a busy GPU is named: {released:?}"
        );
        let warning = app
            .eventually("the busy warning", Duration::from_secs(10), || async {
                app.text_of("[data-testid=\"pool-release-warning\"]").await
            })
            .await;
        assert!(
            warning.contains("run jobs at") && warning.contains("SIGTERM with a 5 s grace"),
            "{warning}"
        );
        let items = app.text_now("[data-testid=\"pool-release\"]").await;
        assert!(items.contains("GPU "), "host and GPU index named: {items}");
        assert!(items.contains("lease "), "the lease named: {items}");
        assert!(
            app.text_now("[data-testid=\"pool-desired\"]").await == "3",
            "nothing committed by the preview"
        );

        if shooting() {
            // The same preview in zh-CN, dark.
            app.open_settings_hosts().await;
            app.click("#setting-theme-dark").await;
            app.click("#setting-language-zh-CN").await;
            app.click("#nav-pool").await;
            app.select_value("#pool-select", "inference").await;
            app.wait_text(
                "desired 3",
                "[data-testid=\"pool-desired\"]",
                "3",
                Duration::from_secs(10),
            )
            .await;
            app.focus("#pool-slider").await;
            app.press(Key::Left, 2).await;
            released_for(&app, 1, 2).await;
            let warning = app
                .eventually(
                    "the busy warning in zh-CN",
                    Duration::from_secs(10),
                    || async { app.text_of("[data-testid=\"pool-release-warning\"]").await },
                )
                .await;
            assert!(
                warning.contains("SIGTERM") && warning.contains("宽限 5 秒"),
                "{warning}"
            );
            app.scroll_to("[data-testid=\"pool-preview\"]").await;
            app.shoot("pool-release-zh-dark").await;
            app.open_settings_hosts().await;
            app.click("#setting-language-en").await;
            app.click("#setting-theme-light").await;
            app.click("#nav-pool").await;
            app.select_value("#pool-select", "inference").await;
        }

        // The operator's choice: Escape drops the preview; ticking the lease the placement
        // would keep moves the slider to 2 and names exactly that one; Apply releases it.
        app.focus("#pool-slider").await;
        app.press(Key::Escape, 1).await;
        let placement: Vec<&String> = released.iter().map(|(lease, _, _)| lease).collect();
        let (keep, keep_host) = leases
            .iter()
            .find(|(lease, _)| !placement.contains(&lease))
            .cloned()
            .expect("a lease the placement keeps");
        app.click(&format!(
            "[data-testid=\"pool-lease-pick\"][data-lease=\"{keep}\"]"
        ))
        .await;
        let chosen = released_for(&app, 2, 1).await;
        assert_eq!(chosen, vec![(keep.clone(), keep_host.clone(), chosen[0].2)]);
        assert_eq!(
            app.attr_of("[data-testid=\"pool-release-item\"]", "data-chosen")
                .await
                .as_deref(),
            Some("true")
        );
        assert!(
            app.text_now("[data-testid=\"pool-release\"]")
                .await
                .contains("your choice")
        );
        assert_eq!(
            app.value_of("#pool-slider").await.ok().flatten().as_deref(),
            Some("2")
        );
        assert_eq!(
            app.attr_of("[data-testid=\"pool-picked\"]", "data-count")
                .await
                .as_deref(),
            Some("1")
        );
        app.scroll_to("[data-testid=\"pool-preview\"]").await;
        app.shoot("pool-release-chosen-en-light").await;
        app.scroll_to("[data-testid=\"pool-leases\"]").await;
        app.shoot("pool-leases-picked-en-light").await;
        app.click("#pool-apply").await;
        app.wait_text(
            "desired 2",
            "[data-testid=\"pool-desired\"]",
            "2",
            Duration::from_secs(10),
        )
        .await;
        let left = app
            .eventually("two leases left", converge, || async {
                let rows = measured_lease_rows(&app, 0.0).await;
                let active = app
                    .find_all(Locator::Css(
                        "[data-testid=\"pool-lease-row\"][data-state=\"active\"]",
                    ))
                    .await
                    .ok()?
                    .len();
                (active == 2 && rows.len() == 2).then_some(rows)
            })
            .await;
        assert!(
            left.iter().all(|(lease, _)| lease != &keep),
            "the chosen lease {keep} went: {left:?}"
        );
        assert!(
            !app.exists("[data-testid=\"pool-picked\"]").await,
            "the choice is cleared once committed"
        );
    })
    .await;
}
