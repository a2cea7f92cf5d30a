//! The Pool view's own chart: desired, ready, warming and utilization over time, and the
//! scale-out in progress as a bar with its ETA from the hosts' measured delivery time.
//!
//! The demo's simulated agents grant a lease at once, so the GPUs warm for at most one
//! enforcer pass: the test records whatever warming it sees on the way and asserts what
//! is always true: the bar ends with every desired GPU ready and none warming, the chart
//! is drawn, and (where a pass caught them warming) the warming count never exceeded the
//! GPUs asked for.

use crate::support::{App, Session, shooting};
use ebb_testkit::TempDir;
use fantoccini::key::Key;
use std::time::Duration;

async fn type_count(app: &Session, count: u32) {
    app.focus("#pool-count").await;
    app.press(Key::End, 1).await;
    app.press(Key::Backspace, 3).await;
    app.press_chars(&count.to_string()).await;
}

const BAR: &str = "[data-testid=\"pool-scale-out\"]";

/// (state, desired, ready, warming) of the scale-out bar now.
async fn bar(app: &Session) -> Option<(String, u32, u32, u32)> {
    let n = |v: Option<String>| v.and_then(|v| v.parse::<u32>().ok());
    Some((
        app.attr_of(BAR, "data-state").await?,
        n(app.attr_of(BAR, "data-desired").await)?,
        n(app.attr_of(BAR, "data-ready").await)?,
        n(app.attr_of(BAR, "data-warming").await)?,
    ))
}

/// The chart's SVG, as drawn in the page.
async fn chart_svg(app: &Session) -> Option<String> {
    app.svg_of("[data-testid=\"pool-chart-img\"]").await
}

#[tokio::test]
#[ignore = "needs Xvfb, tauri-driver and the custom-protocol build: run by `cargo xtask test`"]
async fn the_pool_chart_shows_warming_then_ready_after_a_scale_out() {
    let data_dir = TempDir::new("e2e-pool-chart");
    let app = App::open_demo(&data_dir).await;

    app.run(|app| async move {
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
        let before = app
            .eventually("the chart drawn", Duration::from_secs(20), || async {
                let svg = chart_svg(&app).await?;
                let settled = bar(&app).await?;
                (settled == ("none".to_string(), 0, 0, 0)).then_some(svg)
            })
            .await;
        for label in ["inference", "desired", "ready", "warming", "utilization"] {
            assert!(before.contains(label), "{label} in the chart");
        }

        // Rent 3, then watch the bar until all three are ready.
        type_count(&app, 3).await;
        app.eventually("the preview for 3", Duration::from_secs(20), || async {
            let preview = "[data-testid=\"pool-preview\"]";
            (app.attr_of(preview, "data-state").await.as_deref() == Some("ready")).then_some(())
        })
        .await;
        app.press(Key::Enter, 1).await;
        // Every state the bar is seen in on the way, in order.
        let seen: std::sync::Mutex<Vec<(String, u32, u32, u32)>> = Default::default();
        app.eventually(
            "the bar to show 3 ready",
            Duration::from_secs(90),
            || async {
                let now = bar(&app).await.ok_or("no bar".to_string())?;
                let mut seen = seen.lock().unwrap();
                if seen.last() != Some(&now) {
                    seen.push(now.clone());
                }
                (now == ("none".to_string(), 3, 3, 0))
                    .then_some(())
                    .ok_or(format!("{seen:?}"))
            },
        )
        .await;
        let seen = seen.into_inner().unwrap();
        eprintln!("pool chart: the bar went {seen:?}");
        let warming: Vec<&(String, u32, u32, u32)> =
            seen.iter().filter(|(_, _, _, w)| *w > 0).collect();
        for (state, desired, ready, warm) in &warming {
            assert!(
                ready + warm <= *desired,
                "never more warming than asked: {seen:?}"
            );
            assert_ne!(state, "none", "warming has an ETA state: {seen:?}");
        }
        if warming.is_empty() {
            eprintln!("pool chart: the simulator granted within one pass; no warming was visible");
        }
        // Ready is never more than desired on the way.
        assert!(
            seen.iter().all(|(_, d, r, _)| r <= d || *d == 0),
            "{seen:?}"
        );
        assert!(
            app.text_now(BAR).await.contains("3 of 3 GPUs ready"),
            "{}",
            app.text_now(BAR).await
        );
        // The chart redraws with the scale-out in it (desired rises to 3).
        app.eventually("the chart redrawn", Duration::from_secs(20), || async {
            let svg = chart_svg(&app).await?;
            (svg != before).then_some(())
        })
        .await;
        app.scroll_to("[data-testid=\"pool-chart\"]").await;
        app.shoot("pool-chart-en-light").await;

        if shooting() {
            app.open_settings_hosts().await;
            app.click("#setting-theme-dark").await;
            app.click("#nav-pool").await;
            app.select_value("#pool-select", "inference").await;
            app.eventually("the dark chart", Duration::from_secs(20), || async {
                (app.attr_of("[data-testid=\"pool-chart-img\"]", "data-theme")
                    .await?
                    == "dark")
                    .then_some(())
            })
            .await;
            app.scroll_to("[data-testid=\"pool-chart\"]").await;
            app.shoot("pool-chart-en-dark").await;
            app.open_settings_hosts().await;
            app.click("#setting-language-zh-CN").await;
            app.click("#nav-pool").await;
            app.select_value("#pool-select", "inference").await;
            app.eventually("the chart in zh-CN", Duration::from_secs(20), || async {
                let svg = chart_svg(&app).await?;
                (svg.contains("预热中") && app.text_now(BAR).await.contains("就绪")).then_some(())
            })
            .await;
            app.scroll_to("[data-testid=\"pool-chart\"]").await;
            app.shoot("pool-chart-zh-dark").await;
            app.open_settings_hosts().await;
            app.click("#setting-theme-light").await;
            app.click("#nav-pool").await;
            app.select_value("#pool-select", "inference").await;
            app.eventually(
                "the light chart in zh-CN",
                Duration::from_secs(20),
                || async {
                    let light = app
                        .attr_of("[data-testid=\"pool-chart-img\"]", "data-theme")
                        .await?
                        == "light";
                    (light && chart_svg(&app).await?.contains("预热中")).then_some(())
                },
            )
            .await;
            app.scroll_to("[data-testid=\"pool-chart\"]").await;
            app.shoot("pool-chart-zh-light").await;
            app.open_settings_hosts().await;
            app.click("#setting-language-en").await;
        }
    })
    .await;
}
