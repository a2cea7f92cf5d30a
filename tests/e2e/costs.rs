//! The Costs view: a demand file compared under an imported catalog, a refused catalog,
//! a dropped demand, the sample, and the dark chart; this month's spend across pools (one
//! made in the pool form, whose model choices come from the hosts) against a budget, its
//! CSV, and the budget's changes in Activity.

use crate::support::{App, Session, files_under, shooting};
use ebb_testkit::TempDir;
use fantoccini::Locator;
use fantoccini::key::Key;
use std::time::Duration;

/// The seed's FAQ 4 as a planning file: 10 GPUs all month, 50 from 19:00 to 24:00 on 28
/// days of a 730-hour month.
fn faq4_csv() -> String {
    let mut csv = String::from("hour,demand\n");
    for hour in 0..730 {
        let (day, hour_of_day) = (hour / 24, hour % 24);
        let demand = if day < 28 && (19..24).contains(&hour_of_day) {
            50
        } else {
            10
        };
        csv.push_str(&format!("{hour},{demand}\n"));
    }
    csv
}

/// A catalog with three problems: a negative price, an unknown mode, and a duplicate.
const BROKEN_CATALOG: &str = r#"currency = "CNY"

[[price]]
model = "A100"
region = "cn-north"
hour = -12.50
month = 5000

[[price]]
model = "A100"
region = "cn-north"
hour = 12.50
month = 5000
wek = 1400
"#;

/// The comparison card once a comparison newer than `after` is on screen: its chart `src`.
async fn compared_chart(app: &Session, after: Option<&str>) -> Option<String> {
    let state = app
        .attr_of("[data-testid=\"costs-result\"]", "data-state")
        .await?;
    (state == "ready").then_some(())?;
    let src = app.svg_of("[data-testid=\"costs-chart\"]").await?;
    (Some(src.as_str()) != after).then_some(src)
}

#[tokio::test]
#[ignore = "needs Xvfb, tauri-driver and the custom-protocol build: run by `cargo xtask test`"]
async fn costs_compares_plans_for_a_demand_file_under_an_imported_catalog() {
    let scratch = TempDir::new("e2e-costs");
    let data_dir = scratch.join("data");
    let demand_file = scratch.join("faq4.csv");
    std::fs::write(&demand_file, faq4_csv()).unwrap();
    let broken_file = scratch.join("broken.toml");
    std::fs::write(&broken_file, BROKEN_CATALOG).unwrap();
    let demo_catalog = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../crates/ebb-cost/catalogs/demo.toml")
        .canonicalize()
        .expect("the demo catalog file");
    let demo_text = std::fs::read_to_string(&demo_catalog).unwrap();

    let app = App::open_demo(&data_dir).await;

    // The active catalog's file, wherever in the data directory the app keeps it (a demo
    // app keeps its state apart, under `demo/`).
    let scan_dir = data_dir.clone();
    let active_catalog = move || {
        files_under(&scan_dir)
            .into_iter()
            .find(|file| file.file_name().is_some_and(|name| name == "catalog.toml"))
            .map(|file| std::fs::read_to_string(file).unwrap())
    };
    app.run(|app| async move {
        app.click("#nav-costs").await;

        // A fresh data directory: the demo prices, from the catalog built in.
        app.eventually("the demo catalog", Duration::from_secs(20), || async {
            let source =
                app.attr_of("[data-testid=\"catalog-source\"]", "data-source").await?;
            (source == "demo").then_some(())
        })
        .await;
        let rows = app
            .find_all(Locator::Css(
                "[data-testid=\"catalog-table\"] tbody tr[data-model]",
            ))
            .await
            .unwrap();
        assert_eq!(rows.len(), 12, "four models in three regions");
        app.shoot("en-light-costs-start").await;
        assert_eq!(active_catalog(), None, "nothing imported yet");

        // Compare with no demand: the view says what to do.
        app.click("#costs-compare").await;
        let empty = app.eventually("the empty-demand error", Duration::from_secs(5), || {
            app.text_of("[data-testid=\"costs-error\"][role=\"alert\"]")
        })
        .await;
        assert!(empty.contains("Add demand first"), "{empty}");
        assert_eq!(app.active_id().await, "costs-demand-text");

        // A demand file with a bad row: the error names the line, and a button goes there.
        app.type_lines("#costs-demand-text", "hour,demand\n0,10\n1,ten\n").await;
        app.click("#costs-compare").await;
        let bad = app.eventually("the demand error", Duration::from_secs(10), || async {
            let kind = app.attr_of("[data-testid=\"costs-error\"]", "data-kind").await?;
            (kind == "invalid_input").then_some(())?;
            app.text_of("[data-testid=\"costs-error\"]").await
        })
        .await;
        assert!(bad.contains("line 3"), "{bad}");
        assert_eq!(
            app.active_id().await,
            "",
            "focus is on the go-to-line button (no id)"
        );
        app.click("[data-testid=\"costs-error\"] button[data-action=\"go-to-line\"]",
        )
        .await;
        assert_eq!(app.active_id().await, "costs-demand-text");
        let selected = app
            .execute(
                "const t = document.getElementById('costs-demand-text');\
                 return t.value.slice(t.selectionStart, t.selectionEnd);",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(selected, "1,ten");
        assert!(
            !app.exists("[data-testid=\"costs-result\"]:not([hidden])").await,
            "no comparison yet"
        );

        // Import the demo catalog file through the file input.
        app.choose_file("#catalog-file", &demo_catalog).await;
        let imported = app.eventually("the imported catalog", Duration::from_secs(15), || async {
            let source =
                app.attr_of("[data-testid=\"catalog-source\"]", "data-source").await?;
            (source == "imported").then_some(())?;
            app.text_of("[data-testid=\"catalog-status\"]").await
        })
        .await;
        assert!(
            imported.contains("demo.toml") && imported.contains("12 prices"),
            "{imported}"
        );
        assert_eq!(active_catalog().as_deref(), Some(demo_text.as_str()));
        assert!(!app.exists("[data-testid=\"catalog-problems\"]").await);

        // The demand file, the same way; then A100 in cn-north, and Compare.
        app.choose_file("#costs-demand-file", &demand_file).await;
        // The status is empty until the file is read.
        let loaded = app.eventually("the demand file loaded", Duration::from_secs(10), || async {
            let status = app.text_of("[data-testid=\"costs-demand-status\"]").await?;
            (!status.is_empty()).then_some(status)
        })
        .await;
        assert!(loaded == "Loaded faq4.csv: 730 rows.", "{loaded}");
        assert!(
            !app.exists("[data-testid=\"costs-error\"]").await,
            "a new demand clears the old error"
        );
        app.select_value("#costs-model", "A100").await;
        app.select_value("#costs-region", "cn-north").await;
        app.click("#costs-compare").await;
        let chart = app.eventually("the comparison", Duration::from_secs(20), || {
            compared_chart(&app, None)
        })
        .await;
        assert!(chart.starts_with("<svg"), "{}", &chart[..40]);
        assert!(chart.contains("svg"), "the chart is an SVG document");
        let recommendation = "[data-testid=\"costs-recommendation\"]";
        assert_eq!(
            app.attr_of(recommendation, "data-kind")
                .await
                .as_deref(),
            Some("base_hourly")
        );
        assert_eq!(
            app.attr_of(recommendation, "data-base")
                .await
                .as_deref(),
            Some("10")
        );
        let headline = app.text_of("[data-testid=\"costs-rec-headline\"]")
            .await
            .unwrap();
        assert_eq!(
            headline,
            "Subscribe 10 GPUs monthly and rent the rest by the hour: ¥120,000.00 a month, \
             52% less than subscribing the peak (50 GPUs)."
        );
        let details = app.text_of("[data-testid=\"costs-rec-details\"]")
            .await
            .unwrap();
        assert!(details.contains("401 of the 730 hours"), "{details}");
        let summary = app.text_of("[data-testid=\"costs-summary\"]")
            .await
            .unwrap();
        assert!(
            summary.contains("A100") && summary.contains("cn-north") && summary.contains("12,900"),
            "{summary}"
        );
        let plans = "[data-testid=\"costs-plans\"]";
        assert_eq!(
            app.text_of(&format!("{plans} tr[data-plan=\"all_subscribed\"] td[data-col=\"total\"]")
            )
            .await
            .as_deref(),
            Some("¥250,000.00")
        );
        assert_eq!(
            app.text_of(&format!(
                    "{plans} tr[data-plan=\"base_hourly\"][data-recommended] td[data-col=\"total\"]"
                )
            )
            .await
            .as_deref(),
            Some("¥120,000.00")
        );
        assert_eq!(
            app
                .find_all(Locator::Css(&format!("{plans} tr[data-recommended]")))
                .await
                .unwrap()
                .len(),
            1,
            "one plan is recommended"
        );
        let skipped = app.text_of("[data-testid=\"costs-skipped\"] li[data-plan=\"base_spot\"]",
        )
        .await
        .unwrap();
        assert!(skipped.contains("Interruptible"), "{skipped}");
        app.shoot("en-light-costs").await;
        app.scroll_to("[data-testid=\"costs-result\"]").await;
        app.shoot("en-light-costs-result").await;

        // Spot allowed: priced at once, and cheaper still.
        app.click("#costs-interruptible").await;
        app.wait_exists("the spot plan", &format!("{plans} tr[data-plan=\"base_spot\"]"), Duration::from_secs(20)).await;
        app.click("#costs-interruptible").await;
        app.wait_exists("spot skipped again", "[data-testid=\"costs-skipped\"] li[data-plan=\"base_spot\"]", Duration::from_secs(20)).await;

        // A broken catalog: every problem in place, and the prices in use unchanged.
        app.choose_file("#catalog-file", &broken_file).await;
        let problems = app.eventually("the catalog's problems", Duration::from_secs(15), || {
            app.text_of("[data-testid=\"catalog-problems\"][role=\"alert\"]",
            )
        })
        .await;
        assert!(
            problems.contains("broken.toml was not imported") && problems.contains("3 problems"),
            "{problems}"
        );
        let listed = app
            .find_all(Locator::Css(
                "[data-testid=\"catalog-problems\"] li[data-entry]",
            ))
            .await
            .unwrap();
        assert!(listed.len() >= 3, "{problems}");
        assert!(
            app.exists("[data-testid=\"catalog-problems\"] li[data-entry^=\"[[price]] #1\"][data-field=\"hour\"]"
            )
            .await,
            "the negative price is named with its entry and field: {problems}"
        );
        assert!(
            app.exists("[data-testid=\"catalog-problems\"] li[data-entry^=\"[[price]] #2\"][data-field=\"wek\"]"
            )
            .await,
            "the unknown mode is named: {problems}"
        );
        assert_eq!(
            app.attr_of("[data-testid=\"catalog-source\"]", "data-source")
                .await
                .as_deref(),
            Some("imported")
        );
        assert_eq!(
            active_catalog().as_deref(),
            Some(demo_text.as_str()),
            "the refused file changed nothing"
        );
        assert_eq!(
            app
                .find_all(Locator::Css(
                    "[data-testid=\"catalog-table\"] tbody tr[data-model]"
                ))
                .await
                .unwrap()
                .len(),
            12
        );
        app.scroll_to("[data-testid=\"costs-catalog\"]").await;
        app.shoot("en-light-costs-catalog-refused").await;

        // Another demand, dropped on the drop zone (a page-level drop: WebDriver cannot drag
        // from the desktop): it replaces the text, and the comparison says it is out of date.
        app.drop_file("[data-testid=\"costs-dropzone\"]",
            "one-gpu.csv",
            "hour,demand\n0,1\n",
        )
        .await;
        // Until the drop is read, the status still names the file before it.
        let dropped = app.eventually("the dropped demand", Duration::from_secs(10), || async {
            let status = app.text_of("[data-testid=\"costs-demand-status\"]").await?;
            status.contains("one-gpu.csv").then_some(status)
        })
        .await;
        assert_eq!(dropped, "Loaded one-gpu.csv: 1 row.");
        assert!(app.exists("[data-testid=\"costs-stale\"]").await);
        app.click("#costs-compare").await;
        let one_gpu = app.eventually("the one-GPU comparison", Duration::from_secs(20), || {
            compared_chart(&app, Some(&chart))
        })
        .await;
        assert_eq!(
            app.attr_of(recommendation, "data-base")
                .await
                .as_deref(),
            Some("0")
        );
        assert!(!app.exists("[data-testid=\"costs-stale\"]").await);

        // The sample fills in FAQ 4 and compares at once.
        app.click("#costs-sample").await;
        app.eventually(
            "the sample's comparison",
            Duration::from_secs(20),
            || async {
                let status = app.text_of("[data-testid=\"costs-demand-status\"]").await?;
                status.contains("festival sample").then_some(())?;
                compared_chart(&app, Some(&one_gpu)).await
            },
        )
        .await;
        assert_eq!(
            app.attr_of(recommendation, "data-base")
                .await
                .as_deref(),
            Some("10")
        );
        assert!(!app.exists("[data-testid=\"costs-stale\"]").await);

        // Dark theme: back on Costs, the comparison is there, its chart drawn dark.
        let light_chart = app.svg_of("[data-testid=\"costs-chart\"]").await;
        app.open_settings_hosts().await;
        app.click("#setting-theme-dark").await;
        if shooting() {
            app.click("#setting-language-zh-CN").await;
        }
        app.click("#nav-costs").await;
        let dark_chart = app.eventually("the dark chart", Duration::from_secs(20), || async {
            let theme = app.attr_of("[data-testid=\"costs-chart\"]", "data-theme").await?;
            (theme == "dark").then_some(())?;
            compared_chart(&app, light_chart.as_deref()).await
        })
        .await;
        assert!(dark_chart.starts_with("<svg"));
        app.wait_exists("the problems kept", "[data-testid=\"catalog-problems\"]", Duration::from_secs(10)).await;
        if shooting() {
            app.shoot("zh-dark-costs").await;
            app.scroll_to("[data-testid=\"costs-result\"]").await;
            app.shoot("zh-dark-costs-result").await;
            app.scroll_to("[data-testid=\"costs-plans\"]").await;
            app.shoot("zh-dark-costs-plans").await;
            app.scroll_to("[data-testid=\"costs-catalog\"]").await;
            app.shoot("zh-dark-costs-catalog").await;
            app.open_settings_hosts().await;
            app.click("#setting-language-en").await;
        } else {
            app.open_settings_hosts().await;
        }
        app.click("#setting-theme-light").await;
    })
    .await;
}

/// A money figure as the UI writes it ("¥1,234.56") in fen.
fn fen_of(text: &str) -> Option<i64> {
    let digits: String = text
        .trim()
        .trim_start_matches('¥')
        .chars()
        .filter(|c| *c != ',')
        .collect();
    let (units, cents) = digits.split_once('.')?;
    Some(units.parse::<i64>().ok()? * 100 + cents.parse::<i64>().ok()?)
}

#[tokio::test]
#[ignore = "needs Xvfb, tauri-driver and the custom-protocol build: run by `cargo xtask test`"]
async fn spend_across_pools_against_a_budget_with_a_pool_made_in_the_form() {
    let scratch = TempDir::new("e2e-spend");
    let data_dir = scratch.join("data");
    let exports = scratch.subdir("exports");
    // Exports open the native save dialog, which WebDriver cannot answer.
    let app = App::open_with_env(
        &[("EBB_EXPORT_DIR", exports.as_os_str())],
        &[
            "--demo".as_ref(),
            "--data-dir".as_ref(),
            data_dir.as_os_str(),
        ],
    )
    .await;
    let export_dir = exports.clone();
    app.run(|app| async move {
        // The pool form picks the model from what the hosts report, under the catalog's names.
        app.click("#nav-pool").await;
        app.click("#pool-new").await;
        let a100 = app
            .eventually("the A100 choice", Duration::from_secs(15), || {
                app.text_of("#pool-f-model option[value=\"A100\"]")
            })
            .await;
        assert_eq!(a100, "A100 — NVIDIA A100-SXM4-80GB");
        let unpriced_or_all = app
            .find_all(Locator::Css("#pool-f-model option"))
            .await
            .unwrap()
            .len();
        assert!(unpriced_or_all >= 4, "every catalog model is offered");
        app.type_into("#pool-f-name", "batch").await;
        app.select_value("#pool-f-model", "A100").await;
        let where_ = app
            .text_of("[data-testid=\"pool-f-model-where\"]")
            .await
            .unwrap();
        assert!(
            where_.contains("cn-east") && where_.contains("cn-south"),
            "{where_}"
        );
        app.click("#pool-f-regions input[value=\"cn-east\"]").await;
        app.type_into("#pool-f-max", "4").await;
        app.shoot("en-light-pool-form-models").await;

        // Escape on a changed form asks; Escape again (or Keep editing) keeps it.
        app.send_key("#pool-f-name", Key::Escape).await;
        app.wait_exists(
            "the discard question",
            "#pool-form [data-testid=\"discard-question\"]",
            Duration::from_secs(5),
        )
        .await;
        assert_eq!(
            app.active_id().await,
            "pool-f-discard-no",
            "the safe answer has the focus"
        );
        app.shoot("en-light-pool-form-discard").await;
        app.press(Key::Escape, 1).await;
        assert!(!app.exists("[data-testid=\"discard-question\"]").await);
        assert!(app.exists("#pool-form").await, "kept editing");

        // Enter on the model select saves (a select does not submit by itself).
        app.send_key("#pool-f-model", Key::Enter).await;
        app.eventually("the new pool", Duration::from_secs(15), || async {
            (!app.exists("#pool-form").await).then_some(())
        })
        .await;

        // Costs: both pools' spend, the demo's base prorated from its creation seconds ago.
        app.click("#nav-costs").await;
        let row = |pool: &str| format!("[data-testid=\"spend-table\"] tr[data-pool=\"{pool}\"]");
        app.eventually("both pools' spend", Duration::from_secs(15), || async {
            (app.exists(&row("batch")).await && app.exists(&row("inference")).await).then_some(())
        })
        .await;
        let from = app
            .text_of(&format!("{} [data-col=\"from\"]", row("inference")))
            .await
            .unwrap();
        assert!(
            from.starts_with("from 20"),
            "a base made this month counts from then: {from}"
        );
        let mtd = app
            .text_of(&format!("{} [data-col=\"mtd\"]", row("inference")))
            .await
            .unwrap();
        // Two A100s subscribed at ¥7,950/month for the minute since the demo made the
        // pool: cents, never the ¥795 of a month's first days.
        assert!(fen_of(&mtd).is_some_and(|fen| fen < 10_000), "{mtd}");
        let total = app.text_of("[data-testid=\"spend-mtd\"]").await.unwrap();
        assert!(fen_of(&total).is_some(), "{total}");
        assert!(
            app.text_of("[data-testid=\"spend-rule\"]")
                .await
                .unwrap()
                .contains("since the pool was made")
        );
        assert_eq!(
            app.attr_of("[data-testid=\"spend-card\"]", "data-budget-state")
                .await
                .as_deref(),
            Some("no_budget")
        );

        // A budget far above: within. A budget of a fen: the projection passes it.
        app.type_into("#spend-budget", "1000000").await;
        app.click("#spend-budget-set").await;
        let within = app
            .eventually("within the budget", Duration::from_secs(10), || async {
                app.text_of("[data-testid=\"spend-budget-text\"]")
                    .await
                    .filter(|text| text.contains("of the ¥1,000,000.00 budget"))
            })
            .await;
        assert!(within.starts_with("Projected ¥"), "{within}");
        app.shoot("en-light-costs-spend").await;
        // Emptied without an input event (WebDriver's clear, which also blurs it), the field
        // is not refilled with the stored budget by the next read: the keys typed after it
        // are the whole value.
        let reads = || async {
            app.attr_of("[data-testid=\"spend-card\"]", "data-reads")
                .await
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or(0)
        };
        let before = reads().await;
        app.element("#spend-budget").await.clear().await.unwrap();
        app.eventually("the next read", Duration::from_secs(30), || async {
            (reads().await > before).then_some(())
        })
        .await;
        assert_eq!(app.value_of("#spend-budget").await, Ok(Some(String::new())));
        app.send_key("#spend-budget", Key::Enter).await;
        app.eventually("the empty budget refused", Duration::from_secs(5), || {
            app.text_of("[data-testid=\"spend-budget-error\"]")
        })
        .await;
        app.type_into("#spend-budget", "0.01").await;
        app.send_key("#spend-budget", Key::Enter).await;
        app.eventually("over the budget", Duration::from_secs(10), || async {
            let state = app
                .attr_of("[data-testid=\"spend-card\"]", "data-budget-state")
                .await?;
            matches!(state.as_str(), "over" | "projected_over").then_some(())
        })
        .await;
        app.type_into("#spend-budget", "nope").await;
        app.click("#spend-budget-set").await;
        app.eventually("the budget's error", Duration::from_secs(5), || {
            app.text_of("[data-testid=\"spend-budget-error\"]")
        })
        .await;
        app.shoot("en-light-costs-spend-over").await;

        // CSV: a line per pool and the total.
        app.click("#spend-export").await;
        let saved = app
            .eventually("the CSV", Duration::from_secs(10), || {
                app.attr_of("[data-testid=\"spend-export-status\"]", "data-path")
            })
            .await;
        let saved = std::path::PathBuf::from(saved);
        assert_eq!(saved.parent(), Some(export_dir.as_path()));
        let csv = std::fs::read_to_string(&saved).unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        assert!(
            lines[0].starts_with("month,pool,model,gpus_now,base_gpus"),
            "{csv}"
        );
        assert!(lines.iter().any(|l| l.contains(",batch,A100,")), "{csv}");
        assert!(
            lines.iter().any(|l| l.contains(",inference,A100,")),
            "{csv}"
        );
        assert!(
            lines.last().unwrap().contains(",total,")
                && lines.last().unwrap().ends_with("budget 0.01"),
            "{csv}"
        );

        // Activity: the budget changes and the demo's hosts, console-wide, with dates. The
        // refused "nope" is still typed in the budget field: leaving asks, and Discard goes.
        app.click("#nav-activity").await;
        app.click("#spend-budget-discard-yes").await;
        let budget_row =
            "[data-testid=\"activity-row\"][data-pool=\"\"] [data-reason=\"budget_changed\"]";
        let budget = app
            .eventually("the budget in Activity", Duration::from_secs(10), || {
                app.text_of(budget_row)
            })
            .await;
        assert!(budget.contains("monthly budget set to ¥0.01"), "{budget}");
        assert!(
            app.exists(
                "[data-testid=\"activity-row\"][data-pool=\"\"] [data-reason=\"host_added\"]"
            )
            .await,
            "the demo's hosts were added"
        );
        let when = app
            .text_of("[data-testid=\"activity-row\"] [data-col=\"time\"]")
            .await
            .unwrap();
        assert!(
            when.len() >= 19 && when.starts_with("20") && when.as_bytes()[4] == b'-',
            "a date on every entry: {when}"
        );
        app.shoot("en-light-activity-console").await;

        if shooting() {
            app.open_settings_hosts().await;
            app.click("#setting-theme-dark").await;
            app.click("#setting-language-zh-CN").await;
            app.click("#nav-costs").await;
            app.eventually("the spend in Chinese", Duration::from_secs(10), || async {
                app.text_of("#spend-title")
                    .await
                    .filter(|t| t.contains("本月支出"))
            })
            .await;
            app.shoot("zh-dark-costs-spend").await;
            app.scroll_to("[data-testid=\"spend-table\"]").await;
            app.shoot("zh-dark-costs-spend-table").await;
            app.click("#nav-activity").await;
            app.wait_exists(
                "the activity rows",
                "[data-testid=\"activity-row\"]",
                Duration::from_secs(10),
            )
            .await;
            app.shoot("zh-dark-activity-console").await;
            app.click("#nav-pool").await;
            app.click("#pool-new").await;
            app.eventually("the models in Chinese", Duration::from_secs(10), || {
                app.text_of("#pool-f-model option[value=\"A100\"]")
            })
            .await;
            app.scroll_to("#pool-form").await;
            app.shoot("zh-dark-pool-form-models").await;
            app.click("#pool-f-cancel").await;
            app.open_settings_hosts().await;
            app.click("#setting-language-en").await;
            app.click("#setting-theme-light").await;
        }
    })
    .await;
}
