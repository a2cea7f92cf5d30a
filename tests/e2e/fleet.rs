//! The Fleet view: the demo fleet live, its chart moving; the language switched in Settings.

use crate::support::{App, Session};
use ebb_testkit::TempDir;
use fantoccini::Locator;
use std::time::Duration;

/// The first live chart's SVG document, once drawn (in the document, not an image).
async fn chart_src(app: &Session) -> Option<String> {
    app.svg_of("figure.host-chart [data-testid=\"util-chart\"]")
        .await
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
    let app = App::open_demo(&data_dir).await;

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
        // A chart is redrawn every few rounds, and only while it can be seen.
        app.scroll_to(".fleet-charts").await;
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
        app.eventually(
            "eight demo hosts online",
            Duration::from_secs(30),
            || async {
                let online = app
                    .find_all(Locator::Css("tr[data-host] [data-health=\"online\"]"))
                    .await
                    .map_or(0, |found| found.len());
                (online == 8).then_some(()).ok_or(online)
            },
        )
        .await;

        // Settings: switch to Simplified Chinese and back.
        app.click("#nav-settings").await;
        let english_heading = app.text_now("#view-settings h1").await;
        // The radio stays under the pointer while the view is laid out again in Chinese
        // (its host table loads after it, above the radio).
        app.wait_exists(
            "the hosts in Settings",
            "#view-settings table tbody tr",
            Duration::from_secs(10),
        )
        .await;
        app.scroll_to("#setting-language-zh-CN").await;
        let before = radio_top(&app).await.expect("the Chinese radio");
        app.click("#setting-language-zh-CN").await;
        app.wait_lang("the window in Chinese", "zh-CN").await;
        app.wait_exists(
            "the hosts in Chinese",
            "#view-settings table tbody tr",
            Duration::from_secs(10),
        )
        .await;
        let after = radio_top(&app).await.expect("the Chinese radio");
        assert!(
            (after - before).abs() < 2.0,
            "the radio moved from {before} px to {after} px"
        );
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
        app.click("#setting-language-en").await;
    })
    .await;
}

/// The demo's hosts as the Fleet tables list them: name → agent URL.
pub(crate) async fn demo_hosts(app: &Session) -> std::collections::BTreeMap<String, String> {
    app.eventually(
        "eight hosts with their addresses",
        Duration::from_secs(30),
        || async {
            let rows = app.find_all(Locator::Css("tr[data-host]")).await.ok()?;
            let mut hosts = std::collections::BTreeMap::new();
            for row in rows {
                let name = row.attr("data-host").await.ok()??;
                let url = row
                    .find(Locator::Css(".host-url"))
                    .await
                    .ok()?
                    .text()
                    .await
                    .ok()?;
                hosts.insert(name, url);
            }
            (hosts.len() == 8).then_some(hosts)
        },
    )
    .await
}

fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap()
}

/// Another console leases one free GPU of the agent at `url` directly: its index.
pub(crate) async fn lease_as_someone_else(url: &str) -> u32 {
    let answer: serde_json::Value = http()
        .post(format!("{url}/v1/leases"))
        .header("Idempotency-Key", "e2e-someone-else")
        .json(&serde_json::json!({
            "pool_id": "elsewhere",
            "holder_id": SOMEONE_ELSE,
            "count": 1,
        }))
        .send()
        .await
        .unwrap()
        .error_for_status()
        .unwrap()
        .json()
        .await
        .unwrap();
    answer["gpu_indexes"][0].as_u64().expect("a leased GPU") as u32
}

const SOMEONE_ELSE: &str = "another-console";

/// Who holds the demo fleet's other tenants' GPUs (`src-tauri/src/state.rs`).
const DEMO_OTHER_TEAM: &str = "another-team";

/// The catalog's name for a model the demo's simulator reports.
fn catalog_model(reported: &str) -> &str {
    match reported {
        "NVIDIA A100-SXM4-80GB" => "A100",
        "NVIDIA H800" => "H800",
        "Tesla V100-SXM2-32GB" => "V100",
        other => other,
    }
}

/// [total, free, ours, others, offline] by (catalog model, region).
type Counts = std::collections::BTreeMap<(String, String), [u32; 5]>;

/// What the agents report, counted as the summary should count it.
async fn agent_counts(hosts: &std::collections::BTreeMap<String, String>) -> Option<Counts> {
    let client = http();
    let mut counts = Counts::new();
    for (name, url) in hosts {
        let region = name.rsplit_once('-')?.0.to_string();
        let gpus: serde_json::Value = client
            .get(format!("{url}/v1/gpus"))
            .send()
            .await
            .ok()?
            .json()
            .await
            .ok()?;
        let leases: serde_json::Value = client
            .get(format!("{url}/v1/leases"))
            .send()
            .await
            .ok()?
            .json()
            .await
            .ok()?;
        for gpu in gpus["gpus"].as_array()? {
            let model = catalog_model(gpu["model"].as_str()?).to_string();
            let entry = counts.entry((model, region.clone())).or_default();
            entry[0] += 1;
            let column = match gpu["lease_id"].as_str() {
                _ if gpu["healthy"] != serde_json::Value::Bool(true) => 4,
                None => 1,
                Some(id) => {
                    let lease = leases["leases"]
                        .as_array()?
                        .iter()
                        .find(|lease| lease["id"] == id)?;
                    if lease["holder_id"] == SOMEONE_ELSE || lease["holder_id"] == DEMO_OTHER_TEAM {
                        3
                    } else {
                        2
                    }
                }
            };
            entry[column] += 1;
        }
    }
    Some(counts)
}

/// The capacity summary as the Fleet view shows it.
async fn shown_counts(app: &Session) -> Option<Counts> {
    let rows = app
        .find_all(Locator::Css(
            "[data-testid=\"capacity-summary\"] tbody tr[data-model]",
        ))
        .await
        .ok()?;
    let mut counts = Counts::new();
    for row in rows {
        let model = row.attr("data-model").await.ok()??;
        let region = row.attr("data-region").await.ok()??;
        let mut cells = [0u32; 5];
        for (i, column) in ["total", "free", "ours", "others", "offline"]
            .iter()
            .enumerate()
        {
            let text = row
                .find(Locator::Css(&format!("td[data-count=\"{column}\"]")))
                .await
                .ok()?
                .text()
                .await
                .ok()?;
            cells[i] = text.trim().replace(',', "").parse().ok()?;
        }
        counts.insert((model, region), cells);
    }
    (!counts.is_empty()).then_some(counts)
}

/// Scales the demo pool `inference` to `count` with the Pool view's slider and waits until
/// it holds them.
pub(crate) async fn scale_demo_pool(app: &Session, count: usize) {
    use fantoccini::key::Key;
    app.click("#nav-pool").await;
    app.eventually("the demo pool", Duration::from_secs(30), || async {
        let names = app.attr_of("#pool-select", "data-names").await?;
        names.lines().any(|name| name == "inference").then_some(())
    })
    .await;
    app.select_value("#pool-select", "inference").await;
    app.focus("#pool-slider").await;
    app.press(Key::Right, count).await;
    app.wait_value("#pool-count", &count.to_string()).await;
    app.press(Key::Enter, 1).await;
    app.wait_text(
        "the pool to hold its GPUs",
        "[data-testid=\"pool-actual\"]",
        &count.to_string(),
        Duration::from_secs(90),
    )
    .await;
}

#[tokio::test]
#[ignore = "needs Xvfb, tauri-driver and the custom-protocol build: run by `cargo xtask test`"]
async fn the_capacity_summary_counts_what_the_agents_report() {
    let data_dir = TempDir::new("e2e-capacity");
    let app = App::open_demo(&data_dir).await;

    app.run(|app| async move {
        let hosts = demo_hosts(&app).await;
        // Someone else holds a GPU of the A100 host in cn-east; our pool takes two.
        lease_as_someone_else(&hosts["cn-east-001"]).await;
        scale_demo_pool(&app, 2).await;
        app.click("#nav-fleet").await;

        let shown = app
            .eventually("the summary to match the agents", Duration::from_secs(60), || async {
                let expected = agent_counts(&hosts).await?;
                let shown = shown_counts(&app).await?;
                (expected == shown).then_some(shown)
            })
            .await;
        let sum = |column: usize| shown.values().map(|cells| cells[column]).sum::<u32>();
        assert_eq!(sum(0), 32, "eight hosts of four GPUs: {shown:?}");
        assert_eq!(sum(2), 2, "ours: {shown:?}");
        assert!(
            sum(3) > 1,
            "someone else's and the demo's other team's: {shown:?}"
        );
        assert_eq!(shown[&("A100".to_string(), "cn-east".to_string())][3], 1);
        assert_eq!(
            app.text_now("[data-testid=\"capacity-summary\"] tfoot td[data-count=\"total\"]")
                .await,
            "32"
        );
        let price = app
            .text_now(
                "[data-testid=\"capacity-summary\"] tr[data-model=\"A100\"][data-region=\"cn-east\"] [data-testid=\"capacity-price\"]",
            )
            .await;
        assert!(price.starts_with('¥'), "the catalog's hourly price: {price}");
        // The host table says which pool holds what.
        let held = app
            .find_all(Locator::Css("[data-testid=\"host-held\"] li[data-pool=\"inference\"]"))
            .await
            .unwrap();
        assert!(!held.is_empty(), "a host row names the pool");
        assert!(
            app.text_now("tr[data-host=\"cn-east-001\"] [data-testid=\"host-models\"]")
                .await
                .contains("A100")
        );
        app.shoot("en-light-fleet-capacity").await;

        // Search and filters narrow the tables and the charts alike.
        app.type_into("#fleet-search", "south").await;
        app.eventually("two cn-south hosts", Duration::from_secs(5), || async {
            let rows = app.find_all(Locator::Css("tr[data-host]")).await.ok()?;
            let charts = app.find_all(Locator::Css("figure.host-chart")).await.ok()?;
            (rows.len() == 2 && charts.len() == 2).then_some(())
        })
        .await;
        app.select_value("#fleet-filter-model", "A100").await;
        app.eventually("the one A100 host in cn-south", Duration::from_secs(5), || async {
            let rows = app.find_all(Locator::Css("tr[data-host]")).await.ok()?;
            let name = rows.first()?.attr("data-host").await.ok()??;
            (rows.len() == 1 && name == "cn-south-002").then_some(())
        })
        .await;
        app.shoot("en-light-fleet-filtered").await;
        // Kept while the app runs: back on Fleet it says the hosts are filtered.
        app.click("#nav-activity").await;
        app.click("#nav-fleet").await;
        let count = app
            .eventually("the filter kept and said", Duration::from_secs(5), || async {
                let active = app.attr_of("[data-testid=\"filter-count\"]", "data-active").await?;
                let text = app.text_now("[data-testid=\"filter-count\"]").await;
                (active == "true").then_some(text)
            })
            .await;
        assert_eq!(count, "Filtered: 1 of 8 hosts");
        app.click("#fleet-filter-clear").await;
        app.eventually("every host again", Duration::from_secs(5), || async {
            let rows = app.find_all(Locator::Css("tr[data-host]")).await.ok()?;
            (rows.len() == 8).then_some(())
        })
        .await;

        if crate::support::shooting() {
            app.scroll_to("[data-testid=\"fleet-heatmap\"]").await;
            app.shoot("en-light-fleet-heatmap").await;
            app.open_settings_hosts().await;
            app.click("#setting-theme-dark").await;
            app.click("#setting-language-zh-CN").await;
            app.click("#nav-fleet").await;
            app.wait_text(
                "the summary in Chinese",
                "#capacity-title",
                "容量",
                Duration::from_secs(10),
            )
            .await;
            app.shoot("zh-dark-fleet-capacity").await;
            app.scroll_to("[data-testid=\"fleet-heatmap\"]").await;
            app.shoot("zh-dark-fleet-heatmap").await;
            app.open_settings_hosts().await;
            app.click("#setting-theme-light").await;
            app.shoot("zh-light-settings").await;
            app.click("#nav-fleet").await;
            app.shoot("zh-light-fleet-capacity").await;
            app.open_settings_hosts().await;
            app.click("#setting-theme-dark").await;
            app.click("#setting-language-en").await;
            app.click("#nav-fleet").await;
            app.shoot("en-dark-fleet-capacity").await;
            app.open_settings_hosts().await;
            app.click("#setting-theme-light").await;
        }
    })
    .await;
}

/// Where the Chinese language radio is, px from the window's top.
async fn radio_top(app: &Session) -> Option<f64> {
    app.execute(
        "const r = document.getElementById('setting-language-zh-CN'); return r ? r.getBoundingClientRect().top : null;",
        vec![],
    )
    .await
    .ok()?
    .as_f64()
}
