//! The Pool view says what a pool's rules do to it: the demo's rules are enforced, which
//! the view says in words with a note by the slider that they may move the count; put in
//! shadow mode (in the Rules view), the Pool view says the rules only log and the count
//! stays where it is, and the slider's note says so too.

use crate::support::{App, shooting};
use ebb_testkit::TempDir;
use std::time::Duration;

const RULES: &str = "[data-testid=\"pool-rules\"]";

#[tokio::test]
#[ignore = "needs Xvfb, tauri-driver and the custom-protocol build: run by `cargo xtask test`"]
async fn the_pool_view_says_whether_its_rules_are_enforced_or_in_shadow() {
    let data_dir = TempDir::new("e2e-pool-rules");
    // The demo's pool carries the seed's rules, enforced (the tests' apps turn them off
    // unless asked: this one asks).
    let app = App::open_demo_with_rules(&data_dir).await;
    app.run(|app| async move {
        app.click("#nav-pool").await;
        app.eventually("the rules enforced", Duration::from_secs(20), || async {
            (app.attr_of(RULES, "data-mode").await? == "enforce").then_some(())
        })
        .await;
        let state = app.text_now("[data-testid=\"pool-rules-state\"]").await;
        assert!(state.starts_with("Rules enforced"), "{state}");
        let note = app
            .eventually("the slider's note", Duration::from_secs(10), || {
                app.text_of("[data-testid=\"pool-slider-rules\"]")
            })
            .await;
        assert!(note.contains("may move the count"), "{note}");
        // The latest decision, in words, once the rules have decided.
        let latest = app
            .eventually("the latest decision", Duration::from_secs(120), || async {
                app.text_of("[data-testid=\"pool-rules-latest\"]")
                    .await
                    .filter(|text| text.starts_with("Latest decision"))
            })
            .await;
        assert!(!latest.contains("(s)"), "{latest}");
        app.shoot("en-light-pool-rules-enforced").await;

        // Shadow mode, set in the Rules view: the Pool view says the count stays.
        app.click("#nav-rules").await;
        app.eventually(
            "the rules' mode buttons",
            Duration::from_secs(20),
            || async { app.exists("#rules-mode-shadow").await.then_some(()) },
        )
        .await;
        app.click("#rules-mode-shadow").await;
        app.eventually("the rules in shadow", Duration::from_secs(10), || async {
            let mode = app
                .attr_of("[data-testid=\"rules-current\"]", "data-mode")
                .await?;
            (mode == "shadow").then_some(())
        })
        .await;
        app.click("#nav-pool").await;
        app.eventually(
            "the pool's rules in shadow",
            Duration::from_secs(20),
            || async { (app.attr_of(RULES, "data-mode").await? == "shadow").then_some(()) },
        )
        .await;
        let state = app.text_now("[data-testid=\"pool-rules-state\"]").await;
        assert!(
            state.contains("they log what they would do; the count stays where it is"),
            "{state}"
        );
        let note = app.text_now("[data-testid=\"pool-slider-rules\"]").await;
        assert!(note.contains("only log what they would do"), "{note}");
        app.shoot("en-light-pool-rules-shadow").await;

        if shooting() {
            app.open_settings_hosts().await;
            app.click("#setting-theme-dark").await;
            app.click("#setting-language-zh-CN").await;
            app.click("#nav-pool").await;
            app.eventually("the rules in Chinese", Duration::from_secs(20), || async {
                let text = app.text_of("[data-testid=\"pool-rules-state\"]").await?;
                text.contains("影子模式").then_some(())
            })
            .await;
            app.shoot("zh-dark-pool-rules-shadow").await;
            app.open_settings_hosts().await;
            app.click("#setting-language-en").await;
            app.click("#setting-theme-light").await;
        }
    })
    .await;
}
