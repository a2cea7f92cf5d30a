//! The app in the real webview: tauri-driver in front of WebKitWebDriver, under Xvfb.
//!
//! Needs the custom-protocol build of `ebb-desktop`, `tauri-driver` and a display;
//! `cargo xtask test` provides all three and runs this with `--ignored`.

use ebb_tests::workspace_bin;
use fantoccini::{Client, ClientBuilder, Locator};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// tauri-driver, stopped with SIGTERM (a killed driver leaves WebKitWebDriver holding pipes).
struct Driver {
    child: Child,
    port: u16,
}

impl Driver {
    fn start() -> Self {
        let program = std::env::var_os("EBB_TAURI_DRIVER")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("tauri-driver"));
        let port = free_port();
        let native_port = free_port();
        let child = Command::new(&program)
            .args([
                "--port",
                &port.to_string(),
                "--native-port",
                &native_port.to_string(),
            ])
            .stdout(Stdio::null())
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {}: {error}", program.display()));
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "tauri-driver did not listen on {port} within 20 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Self { child, port }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

async fn open_app(driver: &Driver, data_dir: &std::path::Path) -> Client {
    let app = std::env::var_os("EBB_DESKTOP_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_bin("ebb-desktop"));
    let capabilities = serde_json::json!({
        "browserName": "wry",
        "tauri:options": {
            "application": app,
            "args": ["--demo", "--data-dir", data_dir],
        },
    });
    let serde_json::Value::Object(capabilities) = capabilities else {
        unreachable!()
    };
    ClientBuilder::rustls()
        .expect("rustls")
        .capabilities(capabilities)
        .connect(&format!("http://127.0.0.1:{}", driver.port))
        .await
        .expect("a WebDriver session on the app")
}

/// Polls `read` until it returns `Some`, or fails naming `what`.
async fn eventually<T, F, Fut>(what: &str, timeout: Duration, mut read: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(value) = read().await {
            return value;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {timeout:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn chart_src(client: &Client) -> Option<String> {
    let chart = client
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

async fn tick(client: &Client) -> Option<u64> {
    client
        .find(Locator::Css("#view-fleet"))
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
    let data_dir = std::env::temp_dir().join(format!("ebb-e2e-{}", std::process::id()));
    let driver = Driver::start();
    let client = open_app(&driver, &data_dir).await;

    let session = client.clone();
    let outcome = async move {
        let client = session;
        assert_eq!(client.title().await.unwrap(), "Ebb");

        let first_chart = eventually("the first chart", Duration::from_secs(30), || {
            chart_src(&client)
        })
        .await;
        let first_tick =
            eventually("the first tick", Duration::from_secs(10), || tick(&client)).await;
        assert!(
            first_chart.contains("GPU%200") || first_chart.contains("GPU 0"),
            "the chart has a legend entry per GPU"
        );
        let moved = eventually("the chart to change", Duration::from_secs(20), || async {
            let now = chart_src(&client).await?;
            (now != first_chart).then_some(now)
        })
        .await;
        assert_ne!(moved, first_chart);
        let later_tick = eventually("a later tick", Duration::from_secs(10), || async {
            tick(&client).await.filter(|now| *now > first_tick)
        })
        .await;
        assert!(later_tick > first_tick);

        // Every host of the demo fleet is online.
        let health = client
            .find_all(Locator::Css("tr[data-host] [data-health=\"online\"]"))
            .await
            .unwrap();
        assert_eq!(health.len(), 4, "four demo hosts online");

        // Settings: switch to Simplified Chinese and back.
        client
            .find(Locator::Css("#nav-settings"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        let english_heading = client
            .find(Locator::Css("#view-settings h1"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        client
            .find(Locator::Css("#setting-language-zh-CN"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        let lang = client
            .execute("return document.documentElement.lang", vec![])
            .await
            .unwrap();
        assert_eq!(lang, "zh-CN");
        let chinese_heading = eventually("a Chinese heading", Duration::from_secs(5), || async {
            let text = client
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
        client
            .find(Locator::Css("#setting-language-en"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
    };
    // Close the session (and the app) whatever happened, then report.
    let result = tokio::spawn(outcome).await;
    let _ = client.close().await;
    drop(driver);
    let _ = std::fs::remove_dir_all(&data_dir);
    if let Err(panic) = result {
        std::panic::resume_unwind(panic.into_panic());
    }
}
