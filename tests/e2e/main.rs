//! The app in the real webview: tauri-driver in front of WebKitWebDriver, under Xvfb.
//!
//! Needs the custom-protocol build of `ebb-desktop`, `tauri-driver` and a display;
//! `cargo xtask test` provides all three and runs this with `--ignored`.

use ebb_tests::workspace_bin;
use fantoccini::key::Key;
use fantoccini::{Client, ClientBuilder, Locator};
use std::ffi::OsStr;
use std::io::BufRead;
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
        Self::start_with_env(&[])
    }

    /// With `env` set for the driver, and so for the app it starts.
    fn start_with_env(env: &[(&str, &OsStr)]) -> Self {
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
            .envs(env.iter().copied())
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

/// The app with `args` (e.g. `--demo`, `--data-dir DIR`).
async fn open_app(driver: &Driver, args: &[&OsStr]) -> Client {
    let app = std::env::var_os("EBB_DESKTOP_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_bin("ebb-desktop"));
    let args: Vec<String> = args
        .iter()
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect();
    let capabilities = serde_json::json!({
        "browserName": "wry",
        "tauri:options": {
            "application": app,
            "args": args,
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
    let client = open_app(
        &driver,
        &[
            "--demo".as_ref(),
            "--data-dir".as_ref(),
            data_dir.as_os_str(),
        ],
    )
    .await;

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
        assert_eq!(health.len(), 8, "eight demo hosts online");

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

/// A simulated `ebb-agent` on loopback, killed when dropped.
struct Agent {
    child: Child,
    url: String,
}

impl Agent {
    fn start(state_dir: &std::path::Path, host_name: &str) -> Self {
        let mut child = Command::new(workspace_bin("ebb-agent"))
            .args(["serve", "--listen", "127.0.0.1:0", "--sim", "2xA100"])
            .arg("--state-dir")
            .arg(state_dir)
            .args(["--host-name", host_name])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("cannot start ebb-agent");
        let stdout = child.stdout.take().expect("piped stdout");
        let (send_line, first_line) = std::sync::mpsc::channel();
        // Reads the first line, then drains the rest so the agent never blocks on a full pipe.
        std::thread::spawn(move || {
            let mut lines_in = std::io::BufReader::new(stdout).lines();
            let _ = send_line.send(lines_in.next().and_then(Result::ok));
            for _ in lines_in {}
        });
        let line = first_line
            .recv_timeout(Duration::from_secs(20))
            .ok()
            .flatten();
        let url = match line
            .as_deref()
            .and_then(|line| line.strip_prefix("listening on "))
        {
            Some(url) => url.trim().to_string(),
            None => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("ebb-agent did not say where it listens: {line:?}");
            }
        };
        Self { child, url }
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Clicks `css`, finding it again when a live re-render replaced the node in between.
async fn click(client: &Client, css: &str) {
    let mut tries = 0;
    loop {
        let element = client
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|error| panic!("no {css}: {error}"));
        match element.click().await {
            Ok(()) => return,
            Err(error) if tries < 10 => {
                tries += 1;
                eprintln!("retrying the click on {css}: {error}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(error) => panic!("cannot click {css}: {error}"),
        }
    }
}

/// Replaces the text of the input `css` with `text`.
async fn type_into(client: &Client, css: &str, text: &str) {
    let input = client
        .find(Locator::Css(css))
        .await
        .unwrap_or_else(|error| panic!("no {css}: {error}"));
    input.clear().await.unwrap();
    input.send_keys(text).await.unwrap();
}

async fn text_of(client: &Client, css: &str) -> Option<String> {
    client.find(Locator::Css(css)).await.ok()?.text().await.ok()
}

async fn exists(client: &Client, css: &str) -> bool {
    client
        .find_all(Locator::Css(css))
        .await
        .is_ok_and(|found| !found.is_empty())
}

async fn active_id(client: &Client) -> String {
    client
        .execute(
            "return document.activeElement ? document.activeElement.id : ''",
            vec![],
        )
        .await
        .unwrap()
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// With `EBB_E2E_SHOTS=DIR`, saves what the window shows as `DIR/NAME.png`.
async fn shoot(client: &Client, name: &str) {
    let Some(dir) = std::env::var_os("EBB_E2E_SHOTS").map(PathBuf::from) else {
        return;
    };
    std::fs::create_dir_all(&dir).unwrap();
    // The screenshot is the last painted frame, which can trail the DOM (and CSS
    // transitions run 120 ms): let two frames and the transitions go by first.
    let _ = client
        .execute_async(
            "const done = arguments[arguments.length - 1];\
             requestAnimationFrame(() => requestAnimationFrame(() => done(null)));",
            vec![],
        )
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let png = client.screenshot().await.expect("a screenshot");
    std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
}

/// Every file under `dir`, recursively.
fn files_under(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files
}

const HOST: &str = "e2e-host";
const TOKEN: &str = "e2e-token-3b9f0c1d-never-shown";

/// The host's chart `src` on the Fleet view, once drawn.
async fn host_chart_src(client: &Client) -> Option<String> {
    client
        .find(Locator::Css(&format!(
            "figure.host-chart[data-host=\"{HOST}\"] img[data-testid=\"util-chart\"]"
        )))
        .await
        .ok()?
        .attr("src")
        .await
        .ok()
        .flatten()
        .filter(|src| src.starts_with("data:image/svg+xml"))
}

/// Settings → Hosts, from anywhere.
async fn open_settings_hosts(client: &Client) {
    click(client, "#nav-settings").await;
    eventually("the hosts section", Duration::from_secs(10), || async {
        exists(client, "[data-testid=\"settings-hosts\"]")
            .await
            .then_some(())
    })
    .await;
}

#[tokio::test]
#[ignore = "needs Xvfb, tauri-driver and the custom-protocol build: run by `cargo xtask test`"]
async fn a_host_added_in_settings_goes_online_and_its_chart_moves() {
    let scratch = std::env::temp_dir().join(format!("ebb-e2e-hosts-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let data_dir = scratch.join("data");
    let agent = Agent::start(&scratch.join("agent"), HOST);
    let agent_url = agent.url.clone();
    let agent_pid = agent.child.id();
    let driver = Driver::start();
    let client = open_app(
        &driver,
        &[
            "--data-dir".as_ref(),
            data_dir.as_os_str(),
            "--token-store".as_ref(),
            "file".as_ref(),
        ],
    )
    .await;

    let session = client.clone();
    let scan_dir = data_dir.clone();
    let outcome = async move {
        let client = session;

        // A fresh data directory: no hosts, and the Fleet view says how to add one.
        eventually("the empty fleet", Duration::from_secs(30), || async {
            exists(&client, "#view-fleet [data-testid=\"empty-state\"]")
                .await
                .then_some(())
        })
        .await;
        assert!(!exists(&client, "[data-testid=\"demo-badge\"]").await);

        open_settings_hosts(&client).await;
        eventually("the empty registry", Duration::from_secs(10), || async {
            exists(&client, "[data-testid=\"hosts-empty\"]")
                .await
                .then_some(())
        })
        .await;
        let store = text_of(&client, "[data-testid=\"token-store\"]")
            .await
            .unwrap();
        assert!(
            store.contains("tokens.json"),
            "tokens go to the file: {store}"
        );

        // The form opens on the name; Escape closes it and gives focus back.
        click(&client, "#host-add").await;
        assert_eq!(active_id(&client).await, "host-name");
        client
            .active_element()
            .await
            .unwrap()
            .send_keys(&Key::Escape.to_string())
            .await
            .unwrap();
        assert!(
            !exists(&client, "#host-form").await,
            "Escape closes the form"
        );
        assert_eq!(active_id(&client).await, "host-add");

        click(&client, "#host-add").await;
        type_into(&client, "#host-name", HOST).await;
        type_into(&client, "#host-region", "e2e-region").await;
        type_into(&client, "#host-labels", "team=e2e, rack=7").await;
        type_into(&client, "#host-token", TOKEN).await;
        assert_eq!(
            client
                .find(Locator::Css("#host-token"))
                .await
                .unwrap()
                .attr("type")
                .await
                .unwrap()
                .as_deref(),
            Some("password")
        );

        // The client's own check: no scheme.
        let bare = agent_url.trim_start_matches("http://").to_string();
        type_into(&client, "#host-url", &bare).await;
        click(&client, "#host-save").await;
        let client_error = eventually("the client's URL error", Duration::from_secs(5), || {
            text_of(
                &client,
                "#host-url-error [role=\"alert\"][data-source=\"client\"]",
            )
        })
        .await;
        assert!(client_error.contains("http://"), "{client_error}");
        assert_eq!(active_id(&client).await, "host-url");

        // Passes the client's check, fails the server's: the server's words, at the URL.
        type_into(&client, "#host-url", &format!("{agent_url}/v1/health")).await;
        click(&client, "#host-save").await;
        let server_error = eventually("the server's URL error", Duration::from_secs(10), || {
            text_of(
                &client,
                "#host-url-error [role=\"alert\"][data-source=\"server\"]",
            )
        })
        .await;
        assert!(server_error.contains("without a path"), "{server_error}");
        assert_eq!(
            client
                .find(Locator::Css("#host-url"))
                .await
                .unwrap()
                .attr("aria-invalid")
                .await
                .unwrap()
                .as_deref(),
            Some("true")
        );
        assert!(!exists(&client, "tr[data-host]").await, "nothing was saved");
        shoot(&client, "en-light-settings-server-error").await;

        // The real address: Test connection says who answered.
        type_into(&client, "#host-url", &agent_url).await;
        assert!(
            !exists(&client, "#host-url-error [role=\"alert\"]").await,
            "typing clears the field's error"
        );
        click(&client, "#host-test").await;
        let tested = eventually("a successful test", Duration::from_secs(15), || async {
            let result = client
                .find(Locator::Css("[data-testid=\"host-test-result\"]"))
                .await
                .ok()?;
            let state = result.attr("data-state").await.ok().flatten()?;
            assert_ne!(state, "error", "{:?}", result.text().await);
            (state == "ok").then_some(())?;
            result.text().await.ok()
        })
        .await;
        assert!(
            tested.contains(HOST) && tested.contains("simulator"),
            "{tested}"
        );
        shoot(&client, "en-light-settings-test-ok").await;

        // Enter in a field saves.
        client
            .find(Locator::Css("#host-region"))
            .await
            .unwrap()
            .send_keys(&Key::Enter.to_string())
            .await
            .unwrap();
        let row = format!("[data-testid=\"settings-hosts-table\"] tr[data-host=\"{HOST}\"]");
        let confirm =
            format!("[data-testid=\"settings-hosts-table\"] tr[data-confirm-for=\"{HOST}\"]");
        eventually("the saved row", Duration::from_secs(10), || async {
            exists(&client, &row).await.then_some(())
        })
        .await;
        assert!(!exists(&client, "#host-form").await, "the form closes");
        assert_eq!(
            text_of(&client, &format!("{row} [data-col=\"url\"]"))
                .await
                .unwrap(),
            agent_url
        );
        assert_eq!(
            text_of(&client, &format!("{row} [data-col=\"labels\"]"))
                .await
                .unwrap(),
            "rack=7, team=e2e"
        );
        assert!(
            exists(
                &client,
                &format!("{row} [data-col=\"token\"][data-has-token=\"true\"]")
            )
            .await
        );
        let status = text_of(&client, "[data-testid=\"hosts-status\"]")
            .await
            .unwrap();
        assert!(status.contains(HOST), "{status}");
        eventually(
            "the host online in Settings",
            Duration::from_secs(15),
            || async {
                exists(
                    &client,
                    &format!("{row} [data-col=\"health\"] [data-health=\"online\"]"),
                )
                .await
                .then_some(())
            },
        )
        .await;
        shoot(&client, "en-light-settings-table").await;

        // The token went to the token file and nowhere else: not the page, not the database.
        let page = client.source().await.unwrap();
        assert!(!page.contains(TOKEN), "the token is in the page");
        let mut in_token_file = false;
        for file in files_under(&scan_dir) {
            let bytes = std::fs::read(&file).unwrap_or_default();
            let found = bytes.windows(TOKEN.len()).any(|w| w == TOKEN.as_bytes());
            if file.file_name().is_some_and(|name| name == "tokens.json") {
                in_token_file = found;
            } else {
                assert!(!found, "the token leaked into {}", file.display());
            }
        }
        assert!(in_token_file, "the token is in tokens.json");

        // The Fleet view: online, and the chart moves.
        click(&client, "#nav-fleet").await;
        eventually(
            "the host online in the Fleet view",
            Duration::from_secs(15),
            || async {
                exists(
                    &client,
                    &format!("#view-fleet tr[data-host=\"{HOST}\"] [data-health=\"online\"]"),
                )
                .await
                .then_some(())
            },
        )
        .await;
        let first = eventually("the host's chart", Duration::from_secs(20), || {
            host_chart_src(&client)
        })
        .await;
        let moved = eventually(
            "the host's chart to change",
            Duration::from_secs(20),
            || async {
                let now = host_chart_src(&client).await?;
                (now != first).then_some(now)
            },
        )
        .await;
        assert_ne!(moved, first);
        shoot(&client, "en-light-fleet").await;

        // The pool form: the console's refusal shows at the field it names.
        click(&client, "#nav-pool").await;
        // No pool yet here: the empty state offers the form.
        let new_pool = eventually("the pool view", Duration::from_secs(10), || async {
            if exists(&client, "#pool-create-first").await {
                Some("#pool-create-first")
            } else if exists(&client, "#pool-select option").await {
                Some("#pool-new")
            } else {
                None
            }
        })
        .await;
        click(&client, new_pool).await;
        type_into(&client, "#pool-f-name", "batch").await;
        type_into(&client, "#pool-f-model", "Z999").await;
        click(&client, "#pool-f-regions input[value=\"e2e-region\"]").await;
        click(&client, "#pool-f-save").await;
        // The error box is there before the answer: wait for its words.
        let refusal = eventually("the model refused", Duration::from_secs(10), || async {
            text_of(&client, "#pool-f-model-error")
                .await
                .filter(|text| !text.trim().is_empty())
        })
        .await;
        assert!(refusal.contains("unknown GPU model `Z999`"), "{refusal}");
        scroll_to(&client, "#pool-form").await;
        shoot(&client, "pool-en-light-form-error").await;
        click(&client, "#pool-f-cancel").await;
        assert!(!exists(&client, "#pool-form").await);

        // The same screens in Chinese and dark, for a person to look at.
        if std::env::var_os("EBB_E2E_SHOTS").is_some() {
            open_settings_hosts(&client).await;
            click(&client, "#setting-theme-dark").await;
            click(&client, "#setting-language-zh-CN").await;
            eventually("the Chinese settings", Duration::from_secs(10), || async {
                let lang = client
                    .execute("return document.documentElement.lang", vec![])
                    .await
                    .ok()?;
                (lang == "zh-CN").then_some(())
            })
            .await;
            eventually("the table again", Duration::from_secs(10), || async {
                exists(&client, &row).await.then_some(())
            })
            .await;
            tokio::time::sleep(Duration::from_millis(500)).await;
            shoot(&client, "zh-dark-settings-table").await;
            click(&client, &format!("{row} button[data-action=\"edit\"]")).await;
            assert_eq!(active_id(&client).await, "host-url");
            type_into(&client, "#host-url", "gpu-01:7070").await;
            type_into(&client, "#host-labels", "team").await;
            click(&client, "#host-save").await;
            tokio::time::sleep(Duration::from_millis(300)).await;
            shoot(&client, "zh-dark-settings-client-errors").await;
            type_into(&client, "#host-url", "http://127.0.0.1:1").await;
            type_into(&client, "#host-labels", "team=e2e").await;
            click(&client, "#host-test").await;
            eventually("a failed test", Duration::from_secs(15), || async {
                let state = client
                    .find(Locator::Css("[data-testid=\"host-test-result\"]"))
                    .await
                    .ok()?
                    .attr("data-state")
                    .await
                    .ok()
                    .flatten()?;
                (state == "error").then_some(())
            })
            .await;
            shoot(&client, "zh-dark-settings-test-refused").await;
            click(&client, "#host-cancel").await;
            click(&client, &format!("{row} button[data-action=\"remove\"]")).await;
            assert_eq!(
                client
                    .active_element()
                    .await
                    .unwrap()
                    .attr("data-action")
                    .await
                    .unwrap()
                    .as_deref(),
                Some("cancel-remove"),
                "the confirmation starts on the safe choice"
            );
            assert!(exists(&client, &format!("{confirm} .confirm")).await);
            shoot(&client, "zh-dark-settings-confirm-remove").await;
            click(
                &client,
                &format!("{confirm} button[data-action=\"cancel-remove\"]"),
            )
            .await;
            click(&client, "#nav-fleet").await;
            eventually("the chart again", Duration::from_secs(20), || {
                host_chart_src(&client)
            })
            .await;
            tokio::time::sleep(Duration::from_millis(1500)).await;
            shoot(&client, "zh-dark-fleet").await;
            open_settings_hosts(&client).await;
            click(&client, "#setting-language-en").await;
            eventually("English again", Duration::from_secs(10), || async {
                let lang = client
                    .execute("return document.documentElement.lang", vec![])
                    .await
                    .ok()?;
                (lang == "en").then_some(())
            })
            .await;
            click(&client, "#setting-theme-light").await;
        }

        // The agent dies: the host turns degraded, then offline, each with the reason.
        click(&client, "#nav-fleet").await;
        let fleet_row = format!("#view-fleet tr[data-host=\"{HOST}\"]");
        let _ = Command::new("kill")
            .args(["-KILL", &agent_pid.to_string()])
            .status();
        for health in ["degraded", "offline"] {
            let reason = eventually(
                &format!("the host {health} with a reason"),
                Duration::from_secs(30),
                || async {
                    exists(&client, &format!("{fleet_row} [data-health=\"{health}\"]"))
                        .await
                        .then_some(())?;
                    text_of(
                        &client,
                        &format!("{fleet_row} [data-testid=\"host-reason\"]"),
                    )
                    .await
                },
            )
            .await;
            assert!(reason.contains(&agent_url), "{health}: {reason}");
            shoot(&client, &format!("en-light-fleet-{health}")).await;
        }

        // Remove, confirmed inline: the registry and the fleet are empty again.
        open_settings_hosts(&client).await;
        let why = eventually(
            "the host offline in Settings, with the reason",
            Duration::from_secs(10),
            || async {
                exists(
                    &client,
                    &format!("{row} [data-col=\"health\"] [data-health=\"offline\"]"),
                )
                .await
                .then_some(())?;
                let reason = client
                    .find(Locator::Css(&format!("tr[data-reason-for=\"{HOST}\"]")))
                    .await
                    .ok()?;
                reason.is_displayed().await.ok()?.then_some(())?;
                reason.text().await.ok()
            },
        )
        .await;
        assert!(why.contains(&agent_url), "{why}");
        shoot(&client, "en-light-settings-offline").await;
        click(&client, &format!("{row} button[data-action=\"remove\"]")).await;
        click(
            &client,
            &format!("{confirm} button[data-action=\"confirm-remove\"]"),
        )
        .await;
        eventually(
            "the empty registry again",
            Duration::from_secs(10),
            || async {
                exists(&client, "[data-testid=\"hosts-empty\"]")
                    .await
                    .then_some(())
            },
        )
        .await;
        assert_eq!(active_id(&client).await, "host-add");
        click(&client, "#nav-fleet").await;
        eventually("the empty fleet again", Duration::from_secs(15), || async {
            exists(&client, "#view-fleet [data-testid=\"empty-state\"]")
                .await
                .then_some(())
        })
        .await;
    };
    // Close the session (and the app) whatever happened, then the agent, then report.
    let result = tokio::spawn(outcome).await;
    let _ = client.close().await;
    drop(driver);
    drop(agent);
    let _ = std::fs::remove_dir_all(&scratch);
    if let Err(panic) = result {
        std::panic::resume_unwind(panic.into_panic());
    }
}

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

/// The attribute `name` of the first element matching `css`.
async fn attr_of(client: &Client, css: &str, name: &str) -> Option<String> {
    client
        .find(Locator::Css(css))
        .await
        .ok()?
        .attr(name)
        .await
        .ok()
        .flatten()
}

/// Replaces the text of the textarea `css` with `text`: WebKitWebDriver drops a typed
/// `\n`, so each line break is sent as the Enter key.
async fn type_lines(client: &Client, css: &str, text: &str) {
    type_into(client, css, &text.replace('\n', &Key::Enter.to_string())).await;
}

/// Sends a file's absolute path to the `<input type=file>` at `css`.
async fn choose_file(client: &Client, css: &str, file: &std::path::Path) {
    assert!(file.is_absolute(), "{}", file.display());
    client
        .find(Locator::Css(css))
        .await
        .unwrap_or_else(|error| panic!("no {css}: {error}"))
        .send_keys(&file.to_string_lossy())
        .await
        .unwrap_or_else(|error| panic!("cannot choose {} in {css}: {error}", file.display()));
}

async fn select_value(client: &Client, css: &str, value: &str) {
    client
        .find(Locator::Css(css))
        .await
        .unwrap_or_else(|error| panic!("no {css}: {error}"))
        .select_by_value(value)
        .await
        .unwrap_or_else(|error| panic!("cannot select {value} in {css}: {error}"));
}

/// Drops a file named `name` holding `text` on the element at `css`, the way the page sees
/// a drop (dragenter, dragover, drop with a `DataTransfer`).
async fn drop_file(client: &Client, css: &str, name: &str, text: &str) {
    let dropped = client
        .execute(
            "const [css, name, text] = arguments;\
             const target = document.querySelector(css);\
             if (!target) return false;\
             const data = new DataTransfer();\
             data.items.add(new File([text], name, {type: 'text/plain'}));\
             for (const type of ['dragenter', 'dragover', 'drop']) {\
               target.dispatchEvent(new DragEvent(type, {bubbles: true, cancelable: true, dataTransfer: data}));\
             }\
             return true;",
            vec![css.into(), name.into(), text.into()],
        )
        .await
        .unwrap_or_else(|error| panic!("cannot drop {name} on {css}: {error}"));
    assert_eq!(
        dropped,
        serde_json::Value::Bool(true),
        "no {css} to drop on"
    );
}

/// Scrolls the element at `css` to the top of the view (for screenshots).
async fn scroll_to(client: &Client, css: &str) {
    let _ = client
        .execute(
            "const el = document.querySelector(arguments[0]); if (el) el.scrollIntoView({block: 'start'});",
            vec![serde_json::Value::String(css.to_string())],
        )
        .await;
}

/// The comparison card once a comparison newer than `after` is on screen: its chart `src`.
async fn compared_chart(client: &Client, after: Option<&str>) -> Option<String> {
    let state = attr_of(client, "[data-testid=\"costs-result\"]", "data-state").await?;
    (state == "ready").then_some(())?;
    let src = attr_of(client, "img[data-testid=\"costs-chart\"]", "src").await?;
    (Some(src.as_str()) != after).then_some(src)
}

#[tokio::test]
#[ignore = "needs Xvfb, tauri-driver and the custom-protocol build: run by `cargo xtask test`"]
async fn costs_compares_plans_for_a_demand_file_under_an_imported_catalog() {
    let scratch = std::env::temp_dir().join(format!("ebb-e2e-costs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).unwrap();
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

    let driver = Driver::start();
    let client = open_app(
        &driver,
        &[
            "--demo".as_ref(),
            "--data-dir".as_ref(),
            data_dir.as_os_str(),
        ],
    )
    .await;

    let session = client.clone();
    // The active catalog's file, wherever in the data directory the app keeps it (a demo
    // app keeps its state apart, under `demo/`).
    let scan_dir = data_dir.clone();
    let active_catalog = move || {
        files_under(&scan_dir)
            .into_iter()
            .find(|file| file.file_name().is_some_and(|name| name == "catalog.toml"))
            .map(|file| std::fs::read_to_string(file).unwrap())
    };
    let outcome = async move {
        let client = session;
        click(&client, "#nav-costs").await;

        // A fresh data directory: the demo prices, from the catalog built in.
        eventually("the demo catalog", Duration::from_secs(20), || async {
            let source =
                attr_of(&client, "[data-testid=\"catalog-source\"]", "data-source").await?;
            (source == "demo").then_some(())
        })
        .await;
        let rows = client
            .find_all(Locator::Css(
                "[data-testid=\"catalog-table\"] tbody tr[data-model]",
            ))
            .await
            .unwrap();
        assert_eq!(rows.len(), 12, "four models in three regions");
        shoot(&client, "en-light-costs-start").await;
        assert_eq!(active_catalog(), None, "nothing imported yet");

        // Compare with no demand: the view says what to do.
        click(&client, "#costs-compare").await;
        let empty = eventually("the empty-demand error", Duration::from_secs(5), || {
            text_of(&client, "[data-testid=\"costs-error\"][role=\"alert\"]")
        })
        .await;
        assert!(empty.contains("Add demand first"), "{empty}");
        assert_eq!(active_id(&client).await, "costs-demand-text");

        // A demand file with a bad row: the error names the line, and a button goes there.
        type_lines(&client, "#costs-demand-text", "hour,demand\n0,10\n1,ten\n").await;
        click(&client, "#costs-compare").await;
        let bad = eventually("the demand error", Duration::from_secs(10), || async {
            let kind = attr_of(&client, "[data-testid=\"costs-error\"]", "data-kind").await?;
            (kind == "invalid_input").then_some(())?;
            text_of(&client, "[data-testid=\"costs-error\"]").await
        })
        .await;
        assert!(bad.contains("line 3"), "{bad}");
        assert_eq!(
            active_id(&client).await,
            "",
            "focus is on the go-to-line button (no id)"
        );
        click(
            &client,
            "[data-testid=\"costs-error\"] button[data-action=\"go-to-line\"]",
        )
        .await;
        assert_eq!(active_id(&client).await, "costs-demand-text");
        let selected = client
            .execute(
                "const t = document.getElementById('costs-demand-text');\
                 return t.value.slice(t.selectionStart, t.selectionEnd);",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(selected, "1,ten");
        assert!(
            !exists(&client, "[data-testid=\"costs-result\"]:not([hidden])").await,
            "no comparison yet"
        );

        // Import the demo catalog file through the file input.
        choose_file(&client, "#catalog-file", &demo_catalog).await;
        let imported = eventually("the imported catalog", Duration::from_secs(15), || async {
            let source =
                attr_of(&client, "[data-testid=\"catalog-source\"]", "data-source").await?;
            (source == "imported").then_some(())?;
            text_of(&client, "[data-testid=\"catalog-status\"]").await
        })
        .await;
        assert!(
            imported.contains("demo.toml") && imported.contains("12 prices"),
            "{imported}"
        );
        assert_eq!(active_catalog().as_deref(), Some(demo_text.as_str()));
        assert!(!exists(&client, "[data-testid=\"catalog-problems\"]").await);

        // The demand file, the same way; then A100 in cn-north, and Compare.
        choose_file(&client, "#costs-demand-file", &demand_file).await;
        let loaded = eventually("the demand file loaded", Duration::from_secs(10), || {
            text_of(&client, "[data-testid=\"costs-demand-status\"]")
        })
        .await;
        assert!(loaded == "Loaded faq4.csv: 730 rows.", "{loaded}");
        assert!(
            !exists(&client, "[data-testid=\"costs-error\"]").await,
            "a new demand clears the old error"
        );
        select_value(&client, "#costs-model", "A100").await;
        select_value(&client, "#costs-region", "cn-north").await;
        click(&client, "#costs-compare").await;
        let chart = eventually("the comparison", Duration::from_secs(20), || {
            compared_chart(&client, None)
        })
        .await;
        assert!(chart.starts_with("data:image/svg+xml"), "{}", &chart[..40]);
        assert!(chart.contains("svg"), "the chart is an SVG document");
        let recommendation = "[data-testid=\"costs-recommendation\"]";
        assert_eq!(
            attr_of(&client, recommendation, "data-kind")
                .await
                .as_deref(),
            Some("base_hourly")
        );
        assert_eq!(
            attr_of(&client, recommendation, "data-base")
                .await
                .as_deref(),
            Some("10")
        );
        let headline = text_of(&client, "[data-testid=\"costs-rec-headline\"]")
            .await
            .unwrap();
        assert_eq!(
            headline,
            "Subscribe 10 GPUs monthly and rent the rest by the hour: ¥120,000.00 a month, \
             52% less than subscribing the peak (50 GPUs)."
        );
        let details = text_of(&client, "[data-testid=\"costs-rec-details\"]")
            .await
            .unwrap();
        assert!(details.contains("401 of the 730 hours"), "{details}");
        let summary = text_of(&client, "[data-testid=\"costs-summary\"]")
            .await
            .unwrap();
        assert!(
            summary.contains("A100") && summary.contains("cn-north") && summary.contains("12,900"),
            "{summary}"
        );
        let plans = "[data-testid=\"costs-plans\"]";
        assert_eq!(
            text_of(
                &client,
                &format!("{plans} tr[data-plan=\"all_subscribed\"] td[data-col=\"total\"]")
            )
            .await
            .as_deref(),
            Some("¥250,000.00")
        );
        assert_eq!(
            text_of(
                &client,
                &format!(
                    "{plans} tr[data-plan=\"base_hourly\"][data-recommended] td[data-col=\"total\"]"
                )
            )
            .await
            .as_deref(),
            Some("¥120,000.00")
        );
        assert_eq!(
            client
                .find_all(Locator::Css(&format!("{plans} tr[data-recommended]")))
                .await
                .unwrap()
                .len(),
            1,
            "one plan is recommended"
        );
        let skipped = text_of(
            &client,
            "[data-testid=\"costs-skipped\"] li[data-plan=\"base_spot\"]",
        )
        .await
        .unwrap();
        assert!(skipped.contains("Interruptible"), "{skipped}");
        shoot(&client, "en-light-costs").await;
        scroll_to(&client, "[data-testid=\"costs-result\"]").await;
        shoot(&client, "en-light-costs-result").await;

        // Spot allowed: priced at once, and cheaper still.
        click(&client, "#costs-interruptible").await;
        eventually("the spot plan", Duration::from_secs(20), || async {
            exists(&client, &format!("{plans} tr[data-plan=\"base_spot\"]"))
                .await
                .then_some(())
        })
        .await;
        click(&client, "#costs-interruptible").await;
        eventually("spot skipped again", Duration::from_secs(20), || async {
            exists(
                &client,
                "[data-testid=\"costs-skipped\"] li[data-plan=\"base_spot\"]",
            )
            .await
            .then_some(())
        })
        .await;

        // A broken catalog: every problem in place, and the prices in use unchanged.
        choose_file(&client, "#catalog-file", &broken_file).await;
        let problems = eventually("the catalog's problems", Duration::from_secs(15), || {
            text_of(
                &client,
                "[data-testid=\"catalog-problems\"][role=\"alert\"]",
            )
        })
        .await;
        assert!(
            problems.contains("broken.toml was not imported") && problems.contains("3 problems"),
            "{problems}"
        );
        let listed = client
            .find_all(Locator::Css(
                "[data-testid=\"catalog-problems\"] li[data-entry]",
            ))
            .await
            .unwrap();
        assert!(listed.len() >= 3, "{problems}");
        assert!(
            exists(
                &client,
                "[data-testid=\"catalog-problems\"] li[data-entry^=\"[[price]] #1\"][data-field=\"hour\"]"
            )
            .await,
            "the negative price is named with its entry and field: {problems}"
        );
        assert!(
            exists(
                &client,
                "[data-testid=\"catalog-problems\"] li[data-entry^=\"[[price]] #2\"][data-field=\"wek\"]"
            )
            .await,
            "the unknown mode is named: {problems}"
        );
        assert_eq!(
            attr_of(&client, "[data-testid=\"catalog-source\"]", "data-source")
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
            client
                .find_all(Locator::Css(
                    "[data-testid=\"catalog-table\"] tbody tr[data-model]"
                ))
                .await
                .unwrap()
                .len(),
            12
        );
        scroll_to(&client, "[data-testid=\"costs-catalog\"]").await;
        shoot(&client, "en-light-costs-catalog-refused").await;

        // Another demand, dropped on the drop zone (a page-level drop: WebDriver cannot drag
        // from the desktop): it replaces the text, and the comparison says it is out of date.
        drop_file(
            &client,
            "[data-testid=\"costs-dropzone\"]",
            "one-gpu.csv",
            "hour,demand\n0,1\n",
        )
        .await;
        let dropped = eventually("the dropped demand", Duration::from_secs(10), || {
            text_of(&client, "[data-testid=\"costs-demand-status\"]")
        })
        .await;
        assert_eq!(dropped, "Loaded one-gpu.csv: 1 row.");
        assert!(exists(&client, "[data-testid=\"costs-stale\"]").await);
        click(&client, "#costs-compare").await;
        let one_gpu = eventually("the one-GPU comparison", Duration::from_secs(20), || {
            compared_chart(&client, Some(&chart))
        })
        .await;
        assert_eq!(
            attr_of(&client, recommendation, "data-base")
                .await
                .as_deref(),
            Some("0")
        );
        assert!(!exists(&client, "[data-testid=\"costs-stale\"]").await);

        // The sample fills in FAQ 4 and compares at once.
        click(&client, "#costs-sample").await;
        eventually(
            "the sample's comparison",
            Duration::from_secs(20),
            || async {
                let status = text_of(&client, "[data-testid=\"costs-demand-status\"]").await?;
                status.contains("FAQ-4").then_some(())?;
                compared_chart(&client, Some(&one_gpu)).await
            },
        )
        .await;
        assert_eq!(
            attr_of(&client, recommendation, "data-base")
                .await
                .as_deref(),
            Some("10")
        );
        assert!(!exists(&client, "[data-testid=\"costs-stale\"]").await);

        // Dark theme: back on Costs, the comparison is there, its chart drawn dark.
        let light_chart = attr_of(&client, "img[data-testid=\"costs-chart\"]", "src").await;
        open_settings_hosts(&client).await;
        click(&client, "#setting-theme-dark").await;
        if std::env::var_os("EBB_E2E_SHOTS").is_some() {
            click(&client, "#setting-language-zh-CN").await;
        }
        click(&client, "#nav-costs").await;
        let dark_chart = eventually("the dark chart", Duration::from_secs(20), || async {
            let theme = attr_of(&client, "img[data-testid=\"costs-chart\"]", "data-theme").await?;
            (theme == "dark").then_some(())?;
            compared_chart(&client, light_chart.as_deref()).await
        })
        .await;
        assert!(dark_chart.starts_with("data:image/svg+xml"));
        eventually("the problems kept", Duration::from_secs(10), || async {
            exists(&client, "[data-testid=\"catalog-problems\"]")
                .await
                .then_some(())
        })
        .await;
        if std::env::var_os("EBB_E2E_SHOTS").is_some() {
            shoot(&client, "zh-dark-costs").await;
            scroll_to(&client, "[data-testid=\"costs-result\"]").await;
            shoot(&client, "zh-dark-costs-result").await;
            scroll_to(&client, "[data-testid=\"costs-plans\"]").await;
            shoot(&client, "zh-dark-costs-plans").await;
            scroll_to(&client, "[data-testid=\"costs-catalog\"]").await;
            shoot(&client, "zh-dark-costs-catalog").await;
            open_settings_hosts(&client).await;
            click(&client, "#setting-language-en").await;
        } else {
            open_settings_hosts(&client).await;
        }
        click(&client, "#setting-theme-light").await;
    };
    let result = tokio::spawn(outcome).await;
    let _ = client.close().await;
    drop(driver);
    let _ = std::fs::remove_dir_all(&scratch);
    if let Err(panic) = result {
        std::panic::resume_unwind(panic.into_panic());
    }
}

/// The `src` of a host detail chart once it shows `range`.
async fn history_chart(client: &Client, metric: &str, range: &str) -> Option<String> {
    let figure = format!("#fleet-detail figure.history-chart[data-chart=\"{metric}\"]");
    let state = attr_of(client, &figure, "data-state").await?;
    let shown = attr_of(client, &figure, "data-range").await?;
    (state == "ready" && shown == range).then_some(())?;
    attr_of(
        client,
        &format!("{figure} img[data-testid=\"history-chart\"]"),
        "src",
    )
    .await
    .filter(|src| src.starts_with("data:image/svg+xml"))
}

/// The heatmap card once it shows its chart or says it has no minute yet: its state.
async fn heatmap_state(client: &Client) -> Option<String> {
    let state = attr_of(client, "[data-testid=\"fleet-heatmap\"]", "data-state").await?;
    match state.as_str() {
        "ready" => attr_of(client, "img[data-testid=\"heatmap-chart\"]", "src")
            .await
            .filter(|src| src.starts_with("data:image/svg+xml"))
            .map(|_| state),
        "empty" => text_of(client, "[data-testid=\"heatmap-empty\"]")
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
    let scratch = std::env::temp_dir().join(format!("ebb-e2e-detail-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let data_dir = scratch.join("data");
    let downloads = scratch.join("downloads");
    let config = scratch.join("config");
    std::fs::create_dir_all(&downloads).unwrap();
    std::fs::create_dir_all(&config).unwrap();
    // `dirs::download_dir()` reads the XDG user-dirs file: point Downloads into the scratch.
    std::fs::write(
        config.join("user-dirs.dirs"),
        format!("XDG_DOWNLOAD_DIR=\"{}\"\n", downloads.display()),
    )
    .unwrap();

    let driver = Driver::start_with_env(&[("XDG_CONFIG_HOME", config.as_os_str())]);
    let client = open_app(
        &driver,
        &[
            "--demo".as_ref(),
            "--data-dir".as_ref(),
            data_dir.as_os_str(),
        ],
    )
    .await;

    let session = client.clone();
    let downloads_dir = downloads.clone();
    let outcome = async move {
        let client = session;

        // The heatmap card: its chart, or (a fleet younger than a minute) why there is none.
        let heatmap = eventually("the heatmap card", Duration::from_secs(30), || {
            heatmap_state(&client)
        })
        .await;
        if heatmap == "empty" {
            let words = text_of(&client, "[data-testid=\"heatmap-empty\"]")
                .await
                .unwrap();
            assert!(words.contains("fills in"), "{words}");
            assert!(
                !exists(
                    &client,
                    "[data-testid=\"fleet-heatmap\"] figure:not([hidden])"
                )
                .await
            );
        }
        scroll_to(&client, "[data-testid=\"fleet-heatmap\"]").await;
        shoot(&client, "fleet-heatmap-en-light").await;

        // A host's name is a link to its detail.
        let link = "tr[data-host] a[data-testid=\"host-link\"]";
        let host = eventually("a host link", Duration::from_secs(20), || {
            text_of(&client, link)
        })
        .await;
        click(&client, link).await;
        eventually("the host detail", Duration::from_secs(10), || async {
            let shown = attr_of(&client, "#fleet-detail", "data-host").await?;
            (shown == host).then_some(())
        })
        .await;
        assert_eq!(
            active_id(&client).await,
            "detail-title",
            "the detail takes the focus"
        );
        let hash = client
            .execute("return location.hash", vec![])
            .await
            .unwrap();
        assert!(
            hash.as_str().unwrap_or_default().starts_with("#/fleet/"),
            "{hash}"
        );

        // Four charts over the last 5 minutes, each an SVG image.
        for metric in DETAIL_METRICS {
            eventually(
                &format!("the {metric} chart"),
                Duration::from_secs(20),
                || history_chart(&client, metric, "5m"),
            )
            .await;
        }
        let five_minutes = history_chart(&client, "util", "5m").await.unwrap();
        shoot(&client, "fleet-detail-en-light").await;

        // One hour: the utilization chart is drawn again for that range.
        click(&client, "#detail-range-1h").await;
        let hour = eventually("the 1 h utilization chart", Duration::from_secs(20), || {
            history_chart(&client, "util", "1h")
        })
        .await;
        assert_ne!(hour, five_minutes);
        for metric in DETAIL_METRICS {
            eventually(
                &format!("the 1 h {metric} chart"),
                Duration::from_secs(20),
                || history_chart(&client, metric, "1h"),
            )
            .await;
        }

        // Export the utilization chart as SVG: "Saved to PATH", and the file is there.
        let figure = "#fleet-detail figure[data-chart=\"util\"]";
        click(
            &client,
            &format!("{figure} button[data-action=\"export-svg\"]"),
        )
        .await;
        let status = format!("{figure} [data-testid=\"export-status\"]");
        let saved = eventually("the export", Duration::from_secs(20), || {
            attr_of(&client, &status, "data-path")
        })
        .await;
        let words = text_of(
            &client,
            &format!("{figure} [data-testid=\"export-status\"]"),
        )
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
        assert!(!exists(&client, "#fleet-detail [data-testid=\"chart-error\"]").await);

        // Escape returns to the fleet, onto the host's link.
        client
            .find(Locator::Css("#detail-range-1h"))
            .await
            .unwrap()
            .send_keys(&Key::Escape.to_string())
            .await
            .unwrap();
        eventually("the fleet list", Duration::from_secs(10), || async {
            let mode = attr_of(&client, "#view-fleet", "data-mode").await?;
            (mode == "list" && !exists(&client, "#fleet-detail").await).then_some(())
        })
        .await;
        let focused = client
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
        open_settings_hosts(&client).await;
        click(&client, "#setting-language-zh-CN").await;
        click(&client, "#setting-theme-dark").await;
        click(&client, "#nav-fleet").await;
        eventually(
            "the heatmap card, dark",
            Duration::from_secs(20),
            || async {
                let state = heatmap_state(&client).await?;
                if state == "empty" {
                    return Some(());
                }
                let theme = attr_of(
                    &client,
                    "[data-testid=\"fleet-heatmap\"] figure",
                    "data-theme",
                )
                .await?;
                (theme == "dark").then_some(())
            },
        )
        .await;
        scroll_to(&client, "[data-testid=\"fleet-heatmap\"]").await;
        shoot(&client, "fleet-heatmap-zh-dark").await;
        click(&client, link).await;
        for metric in DETAIL_METRICS {
            eventually(
                &format!("the dark {metric} chart"),
                Duration::from_secs(20),
                || async {
                    let theme = attr_of(
                        &client,
                        &format!("#fleet-detail figure[data-chart=\"{metric}\"]"),
                        "data-theme",
                    )
                    .await?;
                    (theme == "dark").then_some(())?;
                    history_chart(&client, metric, "1h").await
                },
            )
            .await;
        }
        let title = text_of(&client, "#fleet-detail h1").await.unwrap();
        assert_eq!(title, host);
        let back = text_of(&client, "#fleet-back").await.unwrap();
        assert!(back.contains("返回"), "{back}");
        shoot(&client, "fleet-detail-zh-dark").await;
    };
    let result = tokio::spawn(outcome).await;
    let _ = client.close().await;
    drop(driver);
    let _ = std::fs::remove_dir_all(&scratch);
    if let Err(panic) = result {
        std::panic::resume_unwind(panic.into_panic());
    }
}

/// Presses `key` `times` times on whatever has the focus, as keyboard actions (real key
/// events: a range input moves one step per press and fires `input` and `change`).
async fn press(client: &Client, key: Key, times: usize) {
    use fantoccini::actions::{InputSource, KeyAction, KeyActions};
    let mut actions = KeyActions::new("keyboard".into());
    for _ in 0..times {
        actions = actions
            .then(KeyAction::Down { value: key.into() })
            .then(KeyAction::Up { value: key.into() });
    }
    client
        .perform_actions(actions)
        .await
        .unwrap_or_else(|error| panic!("cannot press {key:?}: {error}"));
}

/// Types `text` on whatever has the focus, as keyboard actions.
async fn press_chars(client: &Client, text: &str) {
    use fantoccini::actions::{InputSource, KeyAction, KeyActions};
    let mut actions = KeyActions::new("keyboard".into());
    for c in text.chars() {
        actions = actions
            .then(KeyAction::Down { value: c })
            .then(KeyAction::Up { value: c });
    }
    client
        .perform_actions(actions)
        .await
        .unwrap_or_else(|error| panic!("cannot type {text:?}: {error}"));
}

/// Focuses the element at `css` (as Tab would reach it).
async fn focus(client: &Client, css: &str) {
    let focused = client
        .execute(
            "const el = document.querySelector(arguments[0]); if (!el) return false; el.focus(); return document.activeElement === el;",
            vec![serde_json::Value::String(css.to_string())],
        )
        .await
        .unwrap();
    assert_eq!(focused, serde_json::Value::Bool(true), "cannot focus {css}");
}

/// The `value` property of the form control at `css`.
async fn value_of(client: &Client, css: &str) -> Result<Option<String>, String> {
    client
        .execute(
            "const el = document.querySelector(arguments[0]); return el ? el.value : null;",
            vec![serde_json::Value::String(css.to_string())],
        )
        .await
        .map(|value| value.as_str().map(str::to_string))
        .map_err(|error| error.to_string())
}

/// Waits until the form control at `css` holds `want`; a timeout names what it held.
async fn wait_value(client: &Client, css: &str, want: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let value = value_of(client, css).await;
        if value.as_ref().is_ok_and(|v| v.as_deref() == Some(want)) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {css} to hold {want:?}: {value:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits until the text of `css` is `want`; a timeout names what it saw last.
async fn wait_text(client: &Client, what: &str, css: &str, want: &str, timeout: Duration) {
    let deadline = Instant::now() + timeout;
    loop {
        let text = text_of(client, css).await;
        if text.as_deref().map(str::trim) == Some(want) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {timeout:?} waiting for {what}: {css} shows {text:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The preview once it answers for `to`: (cost text, per-hour fen after, plan text).
async fn preview_for(client: &Client, to: u32) -> (String, i64, String) {
    let preview = "[data-testid=\"pool-preview\"]";
    let cost_css = "[data-testid=\"pool-preview-cost\"]";
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let state = attr_of(client, preview, "data-state").await;
        let shown = attr_of(client, preview, "data-to").await;
        if state.as_deref() == Some("ready") && shown == Some(to.to_string()) {
            let cost = text_of(client, cost_css).await;
            let fen = attr_of(client, cost_css, "data-per-hour-fen")
                .await
                .and_then(|fen| fen.parse().ok());
            let plan = text_of(client, "[data-testid=\"pool-preview-plan\"]").await;
            if let (Some(cost), Some(fen), Some(plan)) = (cost, fen, plan) {
                return (cost, fen, plan);
            }
        }
        if Instant::now() >= deadline {
            let count = value_of(client, "#pool-count").await;
            let slider = value_of(client, "#pool-slider").await;
            let text = text_of(client, preview).await;
            panic!(
                "timed out waiting for the preview for {to}: state {state:?}, for {shown:?}, \
                 number field {count:?}, slider {slider:?}, text {text:?}"
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Presses the pointer on the Pool slider's thumb at `from` and moves it to `to`, the button
/// still held (the slider spans the pool's 0 to 8).
async fn drag_slider_holding(client: &Client, from: u32, to: u32) {
    use fantoccini::actions::{InputSource, MOUSE_BUTTON_LEFT, MouseActions, PointerAction};
    let width = client
        .execute(
            "return document.querySelector('#pool-slider').getBoundingClientRect().width",
            vec![],
        )
        .await
        .ok()
        .and_then(|value| value.as_f64())
        .expect("the slider's width");
    let slider = client
        .find(Locator::Css("#pool-slider"))
        .await
        .expect("the slider");
    // Offsets from the element's centre; the thumb's own width is left at the ends.
    let thumb = 16.0;
    let at = |value: u32| -width / 2.0 + thumb / 2.0 + (width - thumb) * f64::from(value) / 8.0;
    let actions = MouseActions::new("mouse".into())
        .then(PointerAction::MoveToElement {
            element: slider.clone(),
            duration: None,
            x: at(from),
            y: 0.0,
        })
        .then(PointerAction::Down {
            button: MOUSE_BUTTON_LEFT,
        })
        .then(PointerAction::MoveToElement {
            element: slider,
            duration: Some(Duration::from_millis(300)),
            x: at(to),
            y: 0.0,
        });
    client
        .perform_actions(actions)
        .await
        .expect("the pointer drags the slider");
}

/// Lets the pointer's button go.
async fn release_pointer(client: &Client) {
    use fantoccini::actions::{InputSource, MOUSE_BUTTON_LEFT, MouseActions, PointerAction};
    let actions = MouseActions::new("mouse".into()).then(PointerAction::Up {
        button: MOUSE_BUTTON_LEFT,
    });
    client
        .perform_actions(actions)
        .await
        .expect("the pointer lets go");
}

/// The text of `css` now; the live views re-render each second, so a read that finds the
/// node between two renders is made again.
async fn text_now(client: &Client, css: &str) -> String {
    eventually(css, Duration::from_secs(5), || text_of(client, css)).await
}

async fn lease_rows(client: &Client) -> usize {
    client
        .find_all(Locator::Css("[data-testid=\"pool-lease-row\"]"))
        .await
        .map(|rows| rows.len())
        .unwrap_or(0)
}

#[tokio::test]
#[ignore = "needs Xvfb, tauri-driver and the custom-protocol build: run by `cargo xtask test`"]
async fn the_pool_slider_previews_the_cost_then_rents_and_releases() {
    let data_dir = std::env::temp_dir().join(format!("ebb-e2e-pool-{}", std::process::id()));
    let driver = Driver::start();
    let client = open_app(
        &driver,
        &[
            "--demo".as_ref(),
            "--data-dir".as_ref(),
            data_dir.as_os_str(),
        ],
    )
    .await;

    let session = client.clone();
    let outcome = async move {
        let client = session;
        let converge = Duration::from_secs(90);
        click(&client, "#nav-pool").await;
        eventually("the demo pool", Duration::from_secs(30), || async {
            let names = attr_of(&client, "#pool-select", "data-names").await?;
            names.lines().any(|name| name == "inference").then_some(())
        })
        .await;
        select_value(&client, "#pool-select", "inference").await;
        wait_text(
            &client,
            "the pool at 0",
            "[data-testid=\"pool-desired\"]",
            "0",
            Duration::from_secs(10),
        )
        .await;
        wait_text(
            &client,
            "no GPU held",
            "[data-testid=\"pool-actual\"]",
            "0",
            converge,
        )
        .await;
        assert_eq!(
            attr_of(&client, "#pool-slider", "max").await.as_deref(),
            Some("8")
        );
        shoot(&client, "pool-en-light-start").await;

        // Four steps right with the keyboard: the preview says what 4 would cost and do,
        // and nothing is rented yet.
        focus(&client, "#pool-slider").await;
        press(&client, Key::Right, 4).await;
        let (cost, after_fen, plan) = preview_for(&client, 4).await;
        let before_fen: i64 = attr_of(
            &client,
            "[data-testid=\"pool-preview-cost\"]",
            "data-per-hour-before-fen",
        )
        .await
        .and_then(|fen| fen.parse().ok())
        .expect("the cost at 0");
        assert!(
            after_fen > before_fen,
            "{cost}: {after_fen} vs {before_fen} fen at 0"
        );
        let delta = text_now(&client, "[data-testid=\"pool-preview-delta\"]").await;
        assert!(delta.starts_with('+'), "the cost goes up: {delta}");
        assert!(plan.starts_with("Rent 4"), "{plan}");
        assert!(cost.contains("¥") && cost.contains("/h"), "{cost}");
        wait_value(&client, "#pool-count", "4").await;
        assert_eq!(
            text_now(&client, "[data-testid=\"pool-desired\"]").await,
            "0",
            "nothing is committed before letting go"
        );
        // One step back: the cost text changes before anything is committed.
        press(&client, Key::Left, 1).await;
        let (cost3, after3, plan3) = preview_for(&client, 3).await;
        assert!(after3 < after_fen, "{cost3} vs {cost}");
        assert_ne!(cost3, cost);
        assert!(plan3.starts_with("Rent 3"), "{plan3}");
        press(&client, Key::Right, 1).await;
        preview_for(&client, 4).await;
        shoot(&client, "pool-en-light-preview").await;

        // Enter lets go: the pool rents 4, each host's part shows, the leases appear.
        press(&client, Key::Enter, 1).await;
        wait_text(
            &client,
            "desired 4",
            "[data-testid=\"pool-desired\"]",
            "4",
            Duration::from_secs(10),
        )
        .await;
        let committed = text_now(&client, "[data-testid=\"pool-commit\"]").await;
        assert!(committed.contains("from 0 to 4"), "{committed}");
        wait_text(
            &client,
            "4 GPUs held",
            "[data-testid=\"pool-actual\"]",
            "4",
            converge,
        )
        .await;
        let rows = eventually("four lease rows", Duration::from_secs(10), || async {
            let rows = lease_rows(&client).await;
            (rows == 4).then_some(rows)
        })
        .await;
        assert_eq!(rows, 4);
        assert!(exists(&client, "[data-testid=\"pool-host-row\"]").await);
        scroll_to(&client, "[data-testid=\"pool-status\"]").await;
        shoot(&client, "pool-en-light-rented").await;

        // Back to 0 with the number field: the preview says what is released, Enter commits.
        // Typed as a person would: into the field, the old digits erased, the new one typed
        // (a WebDriver clear blurs the field, and a refresh may put the pool's count back).
        focus(&client, "#pool-count").await;
        press(&client, Key::End, 1).await;
        press(&client, Key::Backspace, 3).await;
        press_chars(&client, "0").await;
        let (_, zero_fen, release) = preview_for(&client, 0).await;
        assert!(zero_fen < after_fen);
        assert!(release.starts_with("Release 4"), "{release}");
        wait_value(&client, "#pool-slider", "0").await;
        press(&client, Key::Enter, 1).await;
        wait_text(
            &client,
            "desired 0",
            "[data-testid=\"pool-desired\"]",
            "0",
            Duration::from_secs(10),
        )
        .await;
        wait_text(
            &client,
            "all released",
            "[data-testid=\"pool-actual\"]",
            "0",
            converge,
        )
        .await;
        eventually("no lease rows", Duration::from_secs(20), || async {
            (lease_rows(&client).await == 0).then_some(())
        })
        .await;

        // Dragged with the pointer: while the button is held the preview follows and nothing
        // is rented; letting go rents.
        scroll_to(&client, ".pool-slider-card").await;
        drag_slider_holding(&client, 0, 3).await;
        let (_, dragged_fen, dragged_plan) = preview_for(&client, 3).await;
        assert!(dragged_fen > before_fen, "{dragged_fen} vs {before_fen}");
        assert!(dragged_plan.starts_with("Rent 3"), "{dragged_plan}");
        assert_eq!(
            text_now(&client, "[data-testid=\"pool-desired\"]").await,
            "0",
            "nothing committed while the pointer is down"
        );
        release_pointer(&client).await;
        wait_text(
            &client,
            "desired 3 after the drag",
            "[data-testid=\"pool-desired\"]",
            "3",
            Duration::from_secs(10),
        )
        .await;
        wait_text(
            &client,
            "3 GPUs held after the drag",
            "[data-testid=\"pool-actual\"]",
            "3",
            converge,
        )
        .await;
        focus(&client, "#pool-count").await;
        press(&client, Key::End, 1).await;
        press(&client, Key::Backspace, 3).await;
        press_chars(&client, "0").await;
        preview_for(&client, 0).await;
        press(&client, Key::Enter, 1).await;
        wait_text(
            &client,
            "all released again",
            "[data-testid=\"pool-actual\"]",
            "0",
            converge,
        )
        .await;

        // A change above the confirmation limit asks first; Cancel puts the slider back.
        type_into(&client, "#pool-policy-gpus", "2").await;
        click(&client, "#pool-policy-save").await;
        eventually("the limit saved", Duration::from_secs(10), || async {
            let status = text_of(&client, "[data-testid=\"pool-policy-status\"]").await?;
            status.contains("more than 2 GPUs").then_some(())
        })
        .await;
        focus(&client, "#pool-slider").await;
        press(&client, Key::Right, 3).await;
        let (_, _, asks) = preview_for(&client, 3).await;
        assert!(asks.contains("confirmation"), "{asks}");
        press(&client, Key::Enter, 1).await;
        let question = eventually("the confirmation", Duration::from_secs(10), || {
            text_of(&client, "[data-testid=\"pool-confirm\"]")
        })
        .await;
        assert!(question.contains("more than 2"), "{question}");
        scroll_to(&client, ".pool-slider-card").await;
        shoot(&client, "pool-en-light-confirm").await;
        click(&client, "[data-testid=\"cancel-scale\"]").await;
        assert!(!exists(&client, "[data-testid=\"pool-confirm\"]").await);
        wait_value(&client, "#pool-slider", "0").await;
        assert_eq!(
            text_now(&client, "[data-testid=\"pool-desired\"]").await,
            "0"
        );
        // Asked again and confirmed: it goes through.
        focus(&client, "#pool-slider").await;
        press(&client, Key::Right, 3).await;
        preview_for(&client, 3).await;
        press(&client, Key::Enter, 1).await;
        eventually(
            "the confirmation again",
            Duration::from_secs(10),
            || async {
                exists(&client, "[data-testid=\"confirm-scale\"]")
                    .await
                    .then_some(())
            },
        )
        .await;
        click(&client, "[data-testid=\"confirm-scale\"]").await;
        wait_text(
            &client,
            "desired 3",
            "[data-testid=\"pool-desired\"]",
            "3",
            Duration::from_secs(10),
        )
        .await;

        // The Activity view lists the changes, newest first.
        click(&client, "#nav-activity").await;
        let changes = eventually("three slider changes", Duration::from_secs(15), || async {
            let rows = client
                .find_all(Locator::Css(
                    "[data-testid=\"activity-row\"][data-pool=\"inference\"][data-actor=\"operator\"]",
                ))
                .await
                .ok()?;
            let mut seen = Vec::new();
            for row in rows {
                let from = row.attr("data-from").await.ok()??;
                let to = row.attr("data-to").await.ok()??;
                seen.push(format!("{from}>{to}"));
            }
            seen.starts_with(&[
                "0>3".into(),
                "3>0".into(),
                "0>3".into(),
                "4>0".into(),
                "0>4".into(),
            ])
                .then_some(seen)
        })
        .await;
        assert!(changes.len() >= 3, "{changes:?}");
        shoot(&client, "activity-en-light").await;

        // The pool form: the console's refusal shows at the field it names.
        click(&client, "#nav-pool").await;
        click(&client, "#pool-new").await;
        type_into(&client, "#pool-f-name", "batch").await;
        type_into(&client, "#pool-f-model", "Z999").await;
        click(&client, "#pool-f-regions input[value=\"cn-east\"]").await;
        click(&client, "#pool-f-save").await;
        // The error box is there before the answer: wait for its words.
        let refusal = eventually("the model refused", Duration::from_secs(10), || async {
            text_of(&client, "#pool-f-model-error")
                .await
                .filter(|text| !text.trim().is_empty())
        })
        .await;
        assert!(refusal.contains("unknown GPU model `Z999`"), "{refusal}");
        scroll_to(&client, "#pool-form").await;
        shoot(&client, "pool-en-light-form-error").await;
        click(&client, "#pool-f-cancel").await;
        assert!(!exists(&client, "#pool-form").await);

        // The same screens in Chinese and dark, for a person to look at.
        if std::env::var_os("EBB_E2E_SHOTS").is_some() {
            open_settings_hosts(&client).await;
            click(&client, "#setting-theme-dark").await;
            click(&client, "#setting-language-zh-CN").await;
            click(&client, "#nav-pool").await;
            wait_text(
                &client,
                "3 GPUs held",
                "[data-testid=\"pool-actual\"]",
                "3",
                converge,
            )
            .await;
            focus(&client, "#pool-slider").await;
            press(&client, Key::Right, 2).await;
            preview_for(&client, 5).await;
            shoot(&client, "pool-zh-dark").await;
            scroll_to(&client, "[data-testid=\"pool-hosts\"]").await;
            shoot(&client, "pool-zh-dark-tables").await;
            click(&client, "#pool-edit").await;
            scroll_to(&client, "#pool-form").await;
            shoot(&client, "pool-zh-dark-form").await;
            click(&client, "#nav-activity").await;
            eventually("the activity rows", Duration::from_secs(10), || async {
                exists(&client, "[data-testid=\"activity-row\"]")
                    .await
                    .then_some(())
            })
            .await;
            shoot(&client, "activity-zh-dark").await;
            open_settings_hosts(&client).await;
            click(&client, "#setting-language-en").await;
            click(&client, "#setting-theme-light").await;
        }
    };
    let result = tokio::spawn(outcome).await;
    let _ = client.close().await;
    drop(driver);
    let _ = std::fs::remove_dir_all(&data_dir);
    if let Err(panic) = result {
        std::panic::resume_unwind(panic.into_panic());
    }
}
