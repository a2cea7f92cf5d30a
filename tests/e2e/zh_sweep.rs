//! The console in zh-CN, view by view and with a refusal in each that has input (a pool
//! name taken, a replay without history, a rule file's max of 0 GPUs, a demand row too
//! long): the main panel reads in Chinese. What may stay in Latin letters is a name (a host, a pool, a region, a model, a
//! rule, a metric), a unit or an acronym; any other word of three letters or more is
//! English that reached the screen.

use crate::support::{App, Session};
use ebb_testkit::TempDir;
use fantoccini::key::Key;
use std::time::Duration;

/// The main panel's text, with everything that may stay Latin taken out: identifiers (with
/// a digit, `-`, `_`, `.`, `/` or `=`), CSV headers (`hour,demand`), all-capital acronyms,
/// and the few plain names (the demo's pool, GPU families, key names, products, the cron
/// syntax a schedule is written in, Slurm, the operators who made each change).
const LEFTOVER_ENGLISH: &str = r#"
const text = document.getElementById('main').innerText;
const kept = new Set(['inference', 'Agent', 'Ebb', 'English', 'Ascend', 'Tesla', 'Kubernetes',
  'Slurm', 'cron', 'Cron', 'Ctrl', 'Enter', 'Esc', 'Escape', 'Tab', 'Shift', 'Space',
  ...[...document.querySelectorAll('[data-who]')].map((e) => e.dataset.who)]);
const code = text.replace(/[A-Za-z_\[]+(?:,[A-Za-z_\[\]…]+)+/g, ' ');
const words = code.split(/[^A-Za-z0-9_./:=-]+/).filter((w) => w !== '');
const english = words.filter((w) => /[A-Za-z]{3,}/.test(w) && !/[0-9_./:=-]/.test(w)
  && !/^[A-Z0-9]+$/.test(w) && !/^[A-Z][a-z]?[A-Z0-9]/.test(w) && !kept.has(w));
return [...new Set(english)].join(' ');
"#;

/// Notes the English words left in the main panel, if any, under the view's name.
async fn all_chinese(app: &Session, view: &str, found: &mut Vec<String>) {
    let left = app
        .execute(LEFTOVER_ENGLISH, vec![])
        .await
        .expect("the main panel's text");
    let left = left.as_str().unwrap_or_default();
    if !left.is_empty() {
        found.push(format!("{view}: {left}"));
    }
}

/// Waits until the view has drawn every part: each of `parts` (a selector naming a part in
/// its drawn state) is on the page. A view read before then could pass on a loading line.
async fn drawn(app: &Session, view: &str, parts: &[&str]) {
    app.eventually(
        &format!("the {view} view drawn"),
        Duration::from_secs(30),
        || async {
            let mut missing = Vec::new();
            for part in parts {
                if !app.exists(part).await {
                    missing.push(*part);
                }
            }
            if missing.is_empty() {
                Ok(())
            } else {
                Err(format!("not yet: {missing:?}"))
            }
        },
    )
    .await;
}

#[tokio::test]
#[ignore = "needs Xvfb, tauri-driver and the custom-protocol build: run by `cargo xtask test`"]
async fn every_view_reads_in_chinese() {
    let data_dir = TempDir::new("e2e-zh");
    let app = App::open_demo(&data_dir).await;

    app.run(|app| async move {
        // Every view is looked at before failing, so one run names all that is left.
        let mut found = Vec::new();
        app.open_settings_hosts().await;
        app.click("#setting-language-zh-CN").await;
        app.wait_lang("the window in Chinese", "zh-CN").await;
        drawn(
            &app,
            "Settings",
            &["[data-testid=\"settings-hosts-table\"] tr[data-host]"],
        )
        .await;
        app.shoot("zh-settings-hosts").await;
        all_chinese(&app, "Settings", &mut found).await;
        // The host form's refusals: a name with a space, an address with a path, a label
        // without `=`, each under its field in Chinese.
        app.click("#host-add").await;
        app.type_into("#host-name", "gpu 9").await;
        app.type_into("#host-url", "http://10.0.0.9:7070/v1").await;
        app.type_into("#host-region", "cn-east").await;
        app.type_into("#host-labels", "rack7").await;
        app.click("#host-save").await;
        drawn(
            &app,
            "Settings (host refused)",
            &[
                "#host-name-error [role=\"alert\"]",
                "#host-url-error [role=\"alert\"]",
                "#host-labels-error [role=\"alert\"]",
            ],
        )
        .await;
        app.scroll_to("#host-form").await;
        app.shoot("zh-settings-host-refused").await;
        all_chinese(&app, "Settings (host refused)", &mut found).await;
        app.send_key("#host-name", Key::Escape).await;
        app.wait_exists("the discard question", "#host-discard-yes", Duration::from_secs(5)).await;
        app.click("#host-discard-yes").await;

        app.click("#nav-fleet").await;
        drawn(
            &app,
            "Fleet",
            &[
                "[data-testid=\"hosts-table\"] tr[data-host]",
                "[data-testid=\"capacity-summary\"] tr[data-model]",
                "figure.host-chart[data-state=\"ready\"]",
                "[data-testid=\"fleet-heatmap\"]:not([data-state=\"loading\"])",
            ],
        )
        .await;
        app.shoot("zh-fleet").await;
        all_chinese(&app, "Fleet", &mut found).await;

        app.click("#nav-pool").await;
        app.eventually("the demo pool", Duration::from_secs(30), || async {
            let names = app.attr_of("#pool-select", "data-names").await?;
            names.lines().any(|name| name == "inference").then_some(())
        })
        .await;
        app.select_value("#pool-select", "inference").await;
        drawn(
            &app,
            "Pool",
            &[
                "#view-pool[data-pool=\"inference\"] [data-testid=\"pool-status\"]",
                "[data-testid=\"pool-chart\"][data-state=\"ready\"]",
                "#pool-slider",
                "#pool-policy-save",
            ],
        )
        .await;
        app.shoot("zh-pool").await;
        all_chinese(&app, "Pool", &mut found).await;
        // A move past the confirmation limit asks first, its reason in words.
        app.type_into("#pool-policy-gpus", "2").await;
        app.click("#pool-policy-save").await;
        drawn(
            &app,
            "Pool (limit saved)",
            &["[data-testid=\"pool-policy-status\"] [role=\"status\"]"],
        )
        .await;
        app.focus("#pool-slider").await;
        app.press(Key::Right, 3).await;
        crate::pool::preview_for(&app, 3).await;
        app.press(Key::Enter, 1).await;
        app.eventually("the confirmation", Duration::from_secs(10), || {
            app.text_of("[data-testid=\"pool-confirm\"]")
        })
        .await;
        app.scroll_to(".pool-slider-card").await;
        app.shoot("zh-pool-confirm").await;
        all_chinese(&app, "Pool (confirmation)", &mut found).await;
        app.click("[data-testid=\"cancel-scale\"]").await;
        // A refusal reads in Chinese too: a new pool named as one that exists.
        app.click("#pool-new").await;
        app.type_into("#pool-f-name", "inference").await;
        app.wait_exists("a region to tick", "#pool-f-regions input", Duration::from_secs(10)).await;
        app.click("#pool-f-regions input").await;
        app.click("#pool-f-save").await;
        app.eventually("the name refused", Duration::from_secs(10), || async {
            app.text_of("#pool-f-name-error")
                .await
                .filter(|text| !text.trim().is_empty())
        })
        .await;
        app.shoot("zh-pool-form-refused").await;
        all_chinese(&app, "Pool (a name taken)", &mut found).await;
        app.click("#pool-f-cancel").await;
        app.click("#pool-f-discard-yes").await;

        app.click("#nav-rules").await;
        drawn(
            &app,
            "Rules",
            &[
                "#view-rules[data-pool=\"inference\"] #rules-select",
                "[data-testid=\"rules-current\"]",
                "[data-testid=\"rules-decision\"]",
                "#rules-editor",
                "[data-testid=\"rules-lint\"]:not([data-state=\"pending\"])",
                "[data-testid=\"rules-replay\"]",
            ],
        )
        .await;
        app.shoot("zh-rules").await;
        all_chinese(&app, "Rules", &mut found).await;
        // The replay refused: the pool's own history is too short this soon after start.
        app.click("#rules-replay-history").await;
        app.click("#rules-replay-run").await;
        drawn(
            &app,
            "Rules (replay refused)",
            &["[data-testid=\"rules-replay-error\"]"],
        )
        .await;
        app.shoot("zh-rules-replay-refused").await;
        all_chinese(&app, "Rules (replay refused)", &mut found).await;
        // The linter refuses a max of 0 GPUs: in the list and under the field, in Chinese.
        app.type_into("#rules-f-limits-max_gpus", "0").await;
        drawn(
            &app,
            "Rules (max_gpus refused)",
            &[
                "li[data-testid=\"rules-lint-item\"][data-severity=\"error\"][data-field=\"limits.max_gpus\"]",
                "#rules-f-limits-max_gpus-notes .field-error[data-severity=\"error\"]",
            ],
        )
        .await;
        app.scroll_to("[data-testid=\"rules-lint\"]").await;
        app.shoot("zh-rules-lint-refused").await;
        all_chinese(&app, "Rules (max_gpus refused)", &mut found).await;
        app.send_key("#rules-f-limits-max_gpus", Key::Escape).await;
        app.wait_exists("the discard question", "#rules-discard-yes", Duration::from_secs(5)).await;
        app.click("#rules-discard-yes").await;
        app.eventually("the saved rules back", Duration::from_secs(10), || async {
            (app.attr_of("#rules-editor", "data-dirty").await.as_deref() != Some("true"))
                .then_some(())
        })
        .await;

        app.click("#nav-activity").await;
        drawn(&app, "Activity", &["[data-testid=\"activity-row\"]"]).await;
        app.shoot("zh-activity").await;
        all_chinese(&app, "Activity", &mut found).await;

        app.click("#nav-costs").await;
        drawn(
            &app,
            "Costs",
            &[
                "[data-testid=\"spend-card\"][data-state=\"ready\"]",
                "#costs-model option",
                "[data-testid=\"costs-result\"]",
                "[data-testid=\"catalog-table\"] tr[data-model]",
            ],
        )
        .await;
        app.shoot("zh-costs").await;
        all_chinese(&app, "Costs", &mut found).await;
        // A demand row with a cell too many: the error names the line, in Chinese.
        app.type_lines("#costs-demand-text", "hour,demand\n0,10\n1,2,7\n")
            .await;
        app.click("#costs-compare").await;
        app.eventually("the demand refused", Duration::from_secs(10), || async {
            let kind = app
                .attr_of("[data-testid=\"costs-error\"]", "data-kind")
                .await?;
            (kind == "invalid_input").then_some(())
        })
        .await;
        app.shoot("zh-costs-demand-refused").await;
        all_chinese(&app, "Costs (demand refused)", &mut found).await;
        assert!(found.is_empty(), "English left:\n{}", found.join("\n"));
    })
    .await;
}
