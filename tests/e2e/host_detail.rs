//! A host's detail from the Fleet view: four metric charts over a chosen range, one
//! exported to Downloads, the heatmap card, and the way back.

use crate::support::{App, Session};
use ebb_testkit::TempDir;
use fantoccini::key::Key;
use std::ffi::OsStr;
use std::path::PathBuf;
use std::time::Duration;

/// A host detail chart's SVG once it shows `range`.
async fn history_chart(app: &Session, metric: &str, range: &str) -> Option<String> {
    let figure = format!("#fleet-detail figure.history-chart[data-chart=\"{metric}\"]");
    let state = app.attr_of(&figure, "data-state").await?;
    let shown = app.attr_of(&figure, "data-range").await?;
    (state == "ready" && shown == range).then_some(())?;
    app.svg_of(&format!("{figure} [data-testid=\"history-chart\"]"))
        .await
}

/// The heatmap card once it shows its chart or says it has no minute yet: its state.
async fn heatmap_state(app: &Session) -> Option<String> {
    let state = app
        .attr_of("[data-testid=\"fleet-heatmap\"]", "data-state")
        .await?;
    match state.as_str() {
        "ready" => app
            .svg_of("[data-testid=\"heatmap-chart\"]")
            .await
            .map(|_| state),
        "empty" => app
            .text_of("[data-testid=\"heatmap-empty\"]")
            .await
            .filter(|text| !text.trim().is_empty())
            .map(|_| state),
        _ => None,
    }
}

const DETAIL_METRICS: [&str; 4] = ["util", "memory_pct", "temperature", "power"];

#[tokio::test]
#[ignore = "needs Xvfb, tauri-driver and the custom-protocol build: run by `cargo xtask test`"]
async fn a_hosts_detail_charts_four_metrics_over_a_chosen_range_and_exports_one() {
    let scratch = TempDir::new("e2e-detail");
    let data_dir = scratch.join("data");
    let downloads = scratch.subdir("downloads");
    let config = scratch.subdir("config");
    // `dirs::download_dir()` reads the XDG user-dirs file: point Downloads into the scratch.
    std::fs::write(
        config.join("user-dirs.dirs"),
        format!("XDG_DOWNLOAD_DIR=\"{}\"\n", downloads.display()),
    )
    .unwrap();

    // Exports open the native save dialog, which WebDriver cannot answer: EBB_EXPORT_DIR
    // saves straight into the scratch Downloads instead.
    let app = App::open_with_env(
        &[
            ("XDG_CONFIG_HOME", config.as_os_str()),
            ("EBB_EXPORT_DIR", downloads.as_os_str()),
        ],
        &[
            "--demo".as_ref(),
            "--data-dir".as_ref(),
            data_dir.as_os_str(),
        ],
    )
    .await;

    let downloads_dir = downloads.clone();
    app.run(|app| async move {
        // The heatmap card: its chart, or (a fleet younger than a minute) why there is none.
        let heatmap = app
            .eventually("the heatmap card", Duration::from_secs(30), || {
                heatmap_state(&app)
            })
            .await;
        if heatmap == "empty" {
            let words = app
                .text_of("[data-testid=\"heatmap-empty\"]")
                .await
                .unwrap();
            assert!(words.contains("fills in"), "{words}");
            assert!(
                !app.exists("[data-testid=\"fleet-heatmap\"] figure:not([hidden])")
                    .await
            );
        }
        app.scroll_to("[data-testid=\"fleet-heatmap\"]").await;
        app.shoot("fleet-heatmap-en-light").await;

        // A host's name is a link to its detail.
        let link = "tr[data-host] a[data-testid=\"host-link\"]";
        let host = app
            .eventually("a host link", Duration::from_secs(20), || app.text_of(link))
            .await;
        app.click(link).await;
        app.eventually("the host detail", Duration::from_secs(10), || async {
            let shown = app.attr_of("#fleet-detail", "data-host").await?;
            (shown == host).then_some(())
        })
        .await;
        assert_eq!(
            app.active_id().await,
            "detail-title",
            "the detail takes the focus"
        );
        let hash = app.execute("return location.hash", vec![]).await.unwrap();
        assert!(
            hash.as_str().unwrap_or_default().starts_with("#/fleet/"),
            "{hash}"
        );

        // Four charts over the last 5 minutes, each an SVG image.
        for metric in DETAIL_METRICS {
            app.eventually(
                &format!("the {metric} chart"),
                Duration::from_secs(20),
                || history_chart(&app, metric, "5m"),
            )
            .await;
        }
        let five_minutes = history_chart(&app, "util", "5m").await.unwrap();
        app.shoot("fleet-detail-en-light").await;

        // One hour: the utilization chart is drawn again for that range.
        app.click("#detail-range-1h").await;
        let hour = app
            .eventually("the 1 h utilization chart", Duration::from_secs(20), || {
                history_chart(&app, "util", "1h")
            })
            .await;
        assert_ne!(hour, five_minutes);
        for metric in DETAIL_METRICS {
            app.eventually(
                &format!("the 1 h {metric} chart"),
                Duration::from_secs(20),
                || history_chart(&app, metric, "1h"),
            )
            .await;
        }

        // Export the utilization chart as SVG: "Saved to PATH", and the file is there.
        let figure = "#fleet-detail figure[data-chart=\"util\"]";
        app.click(&format!("{figure} button[data-action=\"export-svg\"]"))
            .await;
        let status = format!("{figure} [data-testid=\"export-status\"]");
        let saved = app
            .eventually("the export", Duration::from_secs(20), || {
                app.attr_of(&status, "data-path")
            })
            .await;
        let words = app
            .text_of(&format!("{figure} [data-testid=\"export-status\"]"))
            .await
            .unwrap();
        assert!(
            words.contains("Saved to") && words.contains(&saved),
            "{words}"
        );
        let saved = PathBuf::from(saved);
        assert_eq!(
            saved.extension().and_then(OsStr::to_str),
            Some("svg"),
            "{}",
            saved.display()
        );
        assert_eq!(
            saved.parent(),
            Some(downloads_dir.as_path()),
            "saved in Downloads"
        );
        let svg = std::fs::read_to_string(&saved).expect("the exported file");
        assert!(
            svg.trim_start().starts_with("<svg"),
            "{}",
            &svg[..svg.len().min(80)]
        );
        // Titled with what it shows: the metric, the host and the range.
        let title = svg
            .split("<text")
            .nth(1)
            .and_then(|text| text.split('>').nth(1))
            .and_then(|text| text.split('<').next())
            .unwrap_or_default()
            .to_string();
        assert!(
            title.contains(&host) && title.contains("last hour"),
            "the exported chart's title: {title}"
        );
        assert!(
            !app.exists("#fleet-detail [data-testid=\"chart-error\"]")
                .await
        );

        // Escape returns to the fleet, onto the host's link.
        app.send_key("#detail-range-1h", Key::Escape).await;
        app.eventually("the fleet list", Duration::from_secs(10), || async {
            let mode = app.attr_of("#view-fleet", "data-mode").await?;
            (mode == "list" && !app.exists("#fleet-detail").await).then_some(())
        })
        .await;
        let focused = app
            .execute(
                "return document.activeElement ? document.activeElement.textContent : ''",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(
            focused.as_str(),
            Some(host.as_str()),
            "focus back on the host's link"
        );

        // Chinese, dark: the detail again, charts redrawn dark.
        app.open_settings_hosts().await;
        app.click("#setting-language-zh-CN").await;
        app.click("#setting-theme-dark").await;
        app.click("#nav-fleet").await;
        app.eventually(
            "the heatmap card, dark",
            Duration::from_secs(20),
            || async {
                let state = heatmap_state(&app).await?;
                if state == "empty" {
                    return Some(());
                }
                let theme = app
                    .attr_of("[data-testid=\"fleet-heatmap\"] figure", "data-theme")
                    .await?;
                (theme == "dark").then_some(())
            },
        )
        .await;
        app.scroll_to("[data-testid=\"fleet-heatmap\"]").await;
        app.shoot("fleet-heatmap-zh-dark").await;
        app.click(link).await;
        for metric in DETAIL_METRICS {
            app.eventually(
                &format!("the dark {metric} chart"),
                Duration::from_secs(20),
                || async {
                    let theme = app
                        .attr_of(
                            &format!("#fleet-detail figure[data-chart=\"{metric}\"]"),
                            "data-theme",
                        )
                        .await?;
                    (theme == "dark").then_some(())?;
                    history_chart(&app, metric, "1h").await
                },
            )
            .await;
        }
        let title = app.text_of("#fleet-detail h1").await.unwrap();
        assert_eq!(title, host);
        let back = app.text_of("#fleet-back").await.unwrap();
        assert!(back.contains("返回"), "{back}");
        app.shoot("fleet-detail-zh-dark").await;
    })
    .await;
}

#[tokio::test]
#[ignore = "needs Xvfb, tauri-driver and the custom-protocol build: run by `cargo xtask test`"]
async fn a_hosts_gpu_table_shows_each_gpus_process_memory_and_holder() {
    use crate::fleet::{demo_hosts, lease_as_someone_else, scale_demo_pool};
    use fantoccini::Locator;
    let data_dir = TempDir::new("e2e-gpu-table");
    let app = App::open_demo(&data_dir).await;

    app.run(|app| async move {
        let hosts = demo_hosts(&app).await;
        let theirs = lease_as_someone_else(&hosts["cn-south-002"]).await;
        scale_demo_pool(&app, 1).await;
        app.click("#nav-fleet").await;
        // The host where our pool took its GPU, from the Fleet table.
        let host = app
            .eventually("a host row naming the pool", Duration::from_secs(30), || async {
                let item = app
                    .find(Locator::Css("tr[data-host] [data-testid=\"host-held\"] li[data-pool=\"inference\"]"))
                    .await
                    .ok()?;
                let row = item
                    .find(Locator::XPath("ancestor::tr[@data-host]"))
                    .await
                    .ok()?;
                row.attr("data-host").await.ok()?
            })
            .await;
        app.click(&format!("tr[data-host=\"{host}\"] a[data-testid=\"host-link\"]"))
            .await;
        let model = app.text_now("[data-testid=\"detail-model\"]").await;
        assert!(
            model.contains("NVIDIA A100-SXM4-80GB") && model.contains("A100"),
            "as reported and as the catalog names it: {model}"
        );
        // Our pool's GPU runs a simulated process with its memory.
        let ours = "table[data-testid=\"gpu-table\"] tr[data-gpu]:has([data-holder=\"ours\"][data-pool=\"inference\"])";
        let (pid, memory_mib, words) = app
            .eventually("our GPU's process", Duration::from_secs(30), || async {
                let item = app
                    .find(Locator::Css(&format!("{ours} td[data-col=\"processes\"] li[data-pid]")))
                    .await
                    .ok()?;
                let pid = item.attr("data-pid").await.ok()??;
                let memory: u32 = item.attr("data-memory-mib").await.ok()??.parse().ok()?;
                let words = item.text().await.ok()?;
                (memory > 0).then_some((pid, memory, words))
            })
            .await;
        assert!(words.starts_with(&pid), "{words}");
        assert!(words.contains("GiB"), "its memory in words: {words}");
        assert!(memory_mib < 81_920, "{memory_mib} MiB");
        let lease = app
            .text_now(&format!("{ours} td[data-col=\"holder\"] .holder-lease"))
            .await;
        assert!(lease.starts_with("lease-"), "the lease holding it: {lease}");
        for column in ["util", "memory", "temperature", "power", "clocks", "ecc", "xid"] {
            let text = app
                .text_now(&format!("{ours} td[data-col=\"{column}\"]"))
                .await;
            assert!(text.chars().any(|c| c.is_ascii_digit()), "{column}: {text}");
        }
        app.shoot("en-light-host-gpus").await;

        // Someone else's lease on another host: a process too, held by another holder;
        // a free GPU runs none.
        app.click("#fleet-back").await;
        app.click("tr[data-host=\"cn-south-002\"] a[data-testid=\"host-link\"]")
            .await;
        let row = format!("table[data-testid=\"gpu-table\"] tr[data-gpu=\"{theirs}\"]");
        app.eventually("their GPU's process", Duration::from_secs(30), || async {
            let holder = app
                .attr_of(&format!("{row} [data-holder]"), "data-holder")
                .await?;
            let pids = app
                .find_all(Locator::Css(&format!("{row} li[data-pid]")))
                .await
                .ok()?;
            (holder == "others" && pids.len() == 1).then_some(())
        })
        .await;
        let free = app
            .find_all(Locator::Css(
                "table[data-testid=\"gpu-table\"] tr[data-gpu]:has([data-holder=\"free\"]) li[data-pid]",
            ))
            .await
            .unwrap();
        assert!(free.is_empty(), "a free GPU runs nothing");

        // The Ascend card has no ECC or Xid counts: "—", not 0.
        app.click("#fleet-back").await;
        app.click("tr[data-host=\"cn-north-002\"] a[data-testid=\"host-link\"]")
            .await;
        app.wait_text(
            "no ECC count",
            "table[data-testid=\"gpu-table\"] tr[data-gpu=\"0\"] td[data-col=\"ecc\"]",
            "—",
            Duration::from_secs(20),
        )
        .await;
        assert_eq!(
            app.text_now("table[data-testid=\"gpu-table\"] tr[data-gpu=\"0\"] td[data-col=\"xid\"]")
                .await,
            "—"
        );

        if crate::support::shooting() {
            app.click("#fleet-back").await;
            app.click(&format!("tr[data-host=\"{host}\"] a[data-testid=\"host-link\"]"))
                .await;
            app.text_now(ours).await;
            app.open_settings_hosts().await;
            app.click("#setting-theme-dark").await;
            app.click("#setting-language-zh-CN").await;
            app.click("#nav-fleet").await;
            app.click(&format!("tr[data-host=\"{host}\"] a[data-testid=\"host-link\"]"))
                .await;
            app.text_now(ours).await;
            app.shoot("zh-dark-host-gpus").await;
            app.open_settings_hosts().await;
            app.click("#setting-theme-light").await;
            app.click("#nav-fleet").await;
            app.click(&format!("tr[data-host=\"{host}\"] a[data-testid=\"host-link\"]"))
                .await;
            app.text_now(ours).await;
            app.shoot("zh-light-host-gpus").await;
            app.open_settings_hosts().await;
            app.click("#setting-theme-dark").await;
            app.click("#setting-language-en").await;
            app.click("#nav-fleet").await;
            app.click(&format!("tr[data-host=\"{host}\"] a[data-testid=\"host-link\"]"))
                .await;
            app.text_now(ours).await;
            app.shoot("en-dark-host-gpus").await;
            app.open_settings_hosts().await;
            app.click("#setting-theme-light").await;
        }
    })
    .await;
}
