//! The Fleet view: the demo fleet live, its chart moving; the language switched in Settings.

use crate::support::{App, Session};
use ebb_testkit::TempDir;
use fantoccini::Locator;
use std::time::Duration;

async fn chart_src(app: &Session) -> Option<String> {
    let chart = app
        .find(Locator::Css(
            "figure.host-chart img[data-testid=\"util-chart\"]",
        ))
        .await
        .ok()?;
    chart
        .attr("src")
        .await
        .ok()
        .flatten()
        .filter(|src| src.starts_with("data:image/svg+xml"))
}

async fn tick(app: &Session) -> Option<u64> {
    app.find(Locator::Css("#view-fleet"))
        .await
        .ok()?
        .attr("data-tick")
        .await
        .ok()
        .flatten()?
        .parse()
        .ok()
}

#[tokio::test]
#[ignore = "needs Xvfb, tauri-driver and the custom-protocol build: run by `cargo xtask test`"]
async fn the_demo_window_shows_a_live_chart_and_switches_language() {
    let data_dir = TempDir::new("e2e-demo");
    let app = App::open(&[
        "--demo".as_ref(),
        "--data-dir".as_ref(),
        data_dir.as_os_str(),
    ])
    .await;

    app.run(|app| async move {
        assert_eq!(app.title().await.unwrap(), "Ebb");

        let first_chart = app
            .eventually("the first chart", Duration::from_secs(30), || {
                chart_src(&app)
            })
            .await;
        let first_tick = app
            .eventually("the first tick", Duration::from_secs(10), || tick(&app))
            .await;
        assert!(
            first_chart.contains("GPU%200") || first_chart.contains("GPU 0"),
            "the chart has a legend entry per GPU"
        );
        let moved = app
            .eventually("the chart to change", Duration::from_secs(20), || async {
                let now = chart_src(&app).await?;
                (now != first_chart).then_some(now)
            })
            .await;
        assert_ne!(moved, first_chart);
        let later_tick = app
            .eventually("a later tick", Duration::from_secs(10), || async {
                tick(&app).await.filter(|now| *now > first_tick)
            })
            .await;
        assert!(later_tick > first_tick);

        // Every host of the demo fleet is online.
        let health = app
            .find_all(Locator::Css("tr[data-host] [data-health=\"online\"]"))
            .await
            .unwrap();
        assert_eq!(health.len(), 8, "eight demo hosts online");

        // Settings: switch to Simplified Chinese and back.
        app.find(Locator::Css("#nav-settings"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        let english_heading = app
            .find(Locator::Css("#view-settings h1"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        app.find(Locator::Css("#setting-language-zh-CN"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        let lang = app
            .execute("return document.documentElement.lang", vec![])
            .await
            .unwrap();
        assert_eq!(lang, "zh-CN");
        let chinese_heading = app
            .eventually("a Chinese heading", Duration::from_secs(5), || async {
                let text = app
                    .find(Locator::Css("#view-settings h1"))
                    .await
                    .ok()?
                    .text()
                    .await
                    .ok()?;
                (text != english_heading).then_some(text)
            })
            .await;
        assert!(
            chinese_heading
                .chars()
                .any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
            "{chinese_heading}"
        );
        app.find(Locator::Css("#setting-language-en"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
    })
    .await;
}
