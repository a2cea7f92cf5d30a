//! Left open on Fleet with the live charts in view, the app's memory stays flat (issue 43):
//! the short form of `tests/bench/soak.sh`. Before the fixes WebKit's web process grew about
//! 170 MiB over 60 sample rounds (every live chart redrawn each second, each superseded SVG
//! image kept in WebKit's memory cache), then still about 2 MiB a minute with charts in view
//! (each chart an `<img>` of its own SVG document); now a few MiB. The bound is ten times what
//! a fixed app grows, well under what the first leak did.

use crate::support::{App, Session};
use ebb_testkit::TempDir;
use std::path::Path;
use std::time::Duration;

/// The most either process may grow over the measured rounds, in MiB.
const MAX_GROWTH_MIB: u64 = 50;
/// Rounds (about a second each) before the first reading: start-up settles.
const WARM_ROUNDS: u64 = 20;
/// Rounds between the two readings.
const MEASURED_ROUNDS: u64 = 60;

async fn tick(app: &Session) -> Option<u64> {
    app.attr_of("#view-fleet", "data-tick").await?.parse().ok()
}

/// The pid of the process whose command line holds `needle` (this test's data directory:
/// other tests' apps run beside it).
fn pid_with_arg(needle: &str) -> Option<u32> {
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
            let exe = std::fs::read_link(entry.path().join("exe")).ok()?;
            let is_app = exe
                .file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with("ebb-desktop"));
            (is_app && args.contains(&needle.as_bytes())).then_some(pid)
        })
}

/// The WebKitWebProcess the app `parent` started.
fn web_process_of(parent: u32) -> Option<u32> {
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let status = std::fs::read_to_string(entry.path().join("status")).ok()?;
            let field = |name: &str| {
                status
                    .lines()
                    .find_map(|line| line.strip_prefix(name))
                    .map(str::trim)
            };
            (field("Name:")?.starts_with("WebKitWebProces")
                && field("PPid:")?.parse::<u32>().ok()? == parent)
                .then_some(pid)
        })
}

fn rss_mib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_else(|error| panic!("process {pid} is gone: {error}"));
    let kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/PID/status");
    kib / 1024
}

/// Waits until the Fleet view shows sample round `round`, at most five seconds a round
/// from `from` (a round is about a second); a timeout says the last round seen.
async fn wait_for_round(app: &Session, from: u64, round: u64) {
    app.eventually(
        &format!("sample round {round}"),
        Duration::from_secs(30 + 5 * round.saturating_sub(from)),
        || async {
            match tick(app).await {
                Some(now) if now >= round => Ok(now),
                seen => Err(format!("round {seen:?}")),
            }
        },
    )
    .await;
}

#[tokio::test]
#[ignore = "needs Xvfb, tauri-driver and the custom-protocol build: run by `cargo xtask test`"]
async fn idle_on_fleet_the_app_and_its_web_process_stay_flat() {
    if !cfg!(target_os = "linux") {
        return;
    }
    let data_dir = TempDir::new("e2e-soak");
    let needle = Path::new(&*data_dir).to_string_lossy().into_owned();
    let app = App::open_demo(&data_dir).await;
    app.run(|app| async move {
        let first = app
            .eventually("the first tick", Duration::from_secs(30), || tick(&app))
            .await;
        // The charts in view: only a chart that can be seen is redrawn each second.
        app.scroll_to(".fleet-charts").await;
        wait_for_round(&app, first, first + WARM_ROUNDS).await;
        let desktop = pid_with_arg(&needle).expect("the app's process, by its data directory");
        let web = web_process_of(desktop).expect("the app's WebKitWebProcess");
        let start = tick(&app).await.expect("a round");
        let before = (rss_mib(desktop), rss_mib(web));
        wait_for_round(&app, start, start + MEASURED_ROUNDS).await;
        let after = (rss_mib(desktop), rss_mib(web));
        for (name, was, now) in [
            ("ebb-desktop", before.0, after.0),
            ("WebKitWebProcess", before.1, after.1),
        ] {
            eprintln!("{name}: {was} MiB -> {now} MiB over {MEASURED_ROUNDS} rounds idle on Fleet");
            assert!(
                now.saturating_sub(was) <= MAX_GROWTH_MIB,
                "{name} grew from {was} MiB to {now} MiB over {MEASURED_ROUNDS} sample rounds idle on Fleet"
            );
        }
    })
    .await;
}
