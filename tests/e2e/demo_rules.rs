//! The demo scales by itself: its pool carries the seed's e-commerce rules and the demo's
//! users rise to a festival peak, so a new user sees the pool scale out, with its reason in
//! the Activity view, within a couple of minutes of starting; its training pool grows on
//! the simulated Slurm partition's queued jobs, and a GPU of its spot pool is reclaimed
//! and replaced. (Back to normal comes after
//! the peak and, paid-unit-aware, releases in the last minutes of the paid hour: the
//! rules' own tests cover that on virtual time.)

use crate::support::{App, shooting};
use ebb_testkit::TempDir;
use fantoccini::Locator;
use std::time::Duration;

/// Focuses the chart's newest scale-out mark; answers its tooltip's text once shown.
const FOCUS_NEWEST_OUT_MARK: &str = "const marks = document.querySelectorAll('button[data-testid=\"pool-chart-mark\"][data-kind=\"out\"]');\
     const mark = marks[marks.length - 1]; if (!mark) return null; mark.focus();\
     const tip = document.getElementById(mark.getAttribute('aria-describedby'));\
     return tip && !tip.hidden ? tip.textContent : null;";

#[tokio::test]
#[ignore = "needs Xvfb, tauri-driver and the custom-protocol build: run by `cargo xtask test`"]
async fn the_demo_pool_follows_its_users_out_and_back_on_its_own() {
    let data_dir = TempDir::new("e2e-demo-rules");
    let app = App::open_demo_with_rules(&data_dir).await;

    app.run(|app| async move {
        let started = std::time::Instant::now();
        app.click("#nav-pool").await;
        // The festival peak: the rule sets 6, the pool holds them.
        app.wait_text(
            "the festival peak to set 6",
            "[data-testid=\"pool-desired\"]",
            "6",
            Duration::from_secs(240),
        )
        .await;
        let out = started.elapsed();
        app.wait_text(
            "six GPUs held",
            "[data-testid=\"pool-actual\"]",
            "6",
            Duration::from_secs(60),
        )
        .await;
        // The decision is marked on the pool's chart; focusing the newest scale-out mark
        // shows its reason (the chart is drawn again every 3 s).
        let tip = app
            .eventually(
                "the festival's mark and its reason",
                Duration::from_secs(60),
                || async {
                    let text = app.execute(FOCUS_NEWEST_OUT_MARK, vec![]).await.ok()?;
                    let text = text.as_str()?.to_string();
                    text.contains("festival-peak").then_some(text)
                },
            )
            .await;
        assert!(tip.contains("6"), "{tip}");
        app.shoot("en-light-demo-pool-scaled-out").await;
        eprintln!("demo: out after {out:?}");
        assert!(out < Duration::from_secs(240), "out after {out:?}");

        // The Activity view says who did it and why.
        app.click("#nav-activity").await;
        let rows = app
            .eventually("the rules' entries", Duration::from_secs(20), || async {
                let rows = app
                    .find_all(Locator::Css(
                        "tr[data-testid=\"activity-row\"][data-actor=\"rule\"]",
                    ))
                    .await
                    .ok()?;
                let mut texts = Vec::new();
                for row in rows {
                    texts.push(row.text().await.ok()?);
                }
                texts
                    .iter()
                    .any(|t| t.contains("festival-peak"))
                    .then_some(texts)
            })
            .await;
        assert!(!rows.is_empty());
        // The demo's own setup (hosts, pool, rules) reads as the demo's, not the operator's.
        assert!(
            app.exists("tr[data-testid=\"activity-row\"][data-actor=\"demo\"]")
                .await
        );
        assert!(
            !app.exists("tr[data-testid=\"activity-row\"][data-actor=\"operator\"]")
                .await
        );
        app.shoot("en-light-demo-activity-rules").await;

        // The queue-driven pool: its rules grew it on the simulated partition's queued jobs,
        // the binder leased its nodes, and its Pool view shows the partition as simulated.
        app.eventually(
            "the training pool's nodes leased",
            Duration::from_secs(60),
            || async {
                let rows = app
                    .find_all(Locator::Css(
                        "tr[data-testid=\"activity-row\"][data-pool=\"training\"][data-actor=\"enforcer\"]",
                    ))
                    .await
                    .ok()?;
                let mut texts = Vec::new();
                for row in rows {
                    texts.push(row.text().await.ok()?);
                }
                texts.iter().any(|t| t.contains("Slurm train")).then_some(())
            },
        )
        .await;
        app.click("#nav-pool").await;
        app.select_value("#pool-select", "training").await;
        app.eventually(
            "the Slurm card, simulated",
            Duration::from_secs(30),
            || async {
                (app.exists("[data-testid=\"pool-slurm\"][data-partition=\"train\"]").await
                    && app.exists("[data-testid=\"pool-slurm-simulated\"]").await)
                    .then_some(())
            },
        )
        .await;
        app.shoot("en-light-demo-training-slurm").await;
        // The spot pool: its hosts' owner takes a GPU back (about 90 s in), the console
        // says so and orders the replacement.
        app.click("#nav-activity").await;
        app.eventually("a spot GPU reclaimed", Duration::from_secs(120), || async {
            let rows = app
                .find_all(Locator::Css(
                    "tr[data-testid=\"activity-row\"][data-pool=\"render\"][data-actor=\"failover\"]",
                ))
                .await
                .ok()?;
            let mut texts = Vec::new();
            for row in rows {
                texts.push(row.text().await.ok()?);
            }
            texts
                .iter()
                .any(|t| t.contains("takes back") && t.contains("a replacement is ordered now"))
                .then_some(())
        })
        .await;
        app.click("#nav-pool").await;
        app.select_value("#pool-select", "inference").await;
        app.click("#nav-activity").await;
        if shooting() {
            app.open_settings_hosts().await;
            app.click("#setting-theme-dark").await;
            app.click("#setting-language-zh-CN").await;
            app.click("#nav-activity").await;
            app.shoot("zh-dark-demo-activity-rules").await;
            app.click("#nav-pool").await;
            app.eventually("a mark in Chinese", Duration::from_secs(30), || async {
                let text = app.execute(FOCUS_NEWEST_OUT_MARK, vec![]).await.ok()?;
                text.as_str().map(str::to_string)
            })
            .await;
            app.shoot("zh-dark-demo-pool-mark").await;
            app.open_settings_hosts().await;
            app.click("#setting-theme-light").await;
            app.click("#setting-language-en").await;
        }
    })
    .await;
}
