//! One session on the app: tauri-driver started, the app opened with its arguments, and the
//! helpers every view's test uses (click, type, read, wait, screenshots).

use ebb_testkit::{Timeout, try_eventually, workspace_bin};
use fantoccini::elements::Element;
use fantoccini::key::Key;
use fantoccini::{Client, ClientBuilder, Locator};
use std::ffi::OsStr;
use std::future::Future;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long an element may take to be drawn (a view draws its parts as their data comes).
const ELEMENT_WAIT: Duration = Duration::from_secs(10);

/// tauri-driver, stopped with SIGTERM (a killed driver leaves WebKitWebDriver holding pipes).
struct Driver {
    child: Child,
    port: u16,
}

/// A port for tauri-driver, which takes port numbers, not listeners: bound to learn a free
/// one and released for the driver to bind. The only such port in the suites; a driver that
/// loses the race exits, and [`Driver::start`] tries again with new ports.
fn port_for_the_driver() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Driver {
    /// With `env` set for the driver, and so for the app it starts.
    fn start(env: &[(&str, &OsStr)]) -> Self {
        let program = std::env::var_os("EBB_TAURI_DRIVER")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("tauri-driver"));
        let mut exits = Vec::new();
        for _ in 0..5 {
            let port = port_for_the_driver();
            let native_port = port_for_the_driver();
            let mut child = Command::new(&program)
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
            loop {
                if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return Self { child, port };
                }
                if let Ok(Some(status)) = child.try_wait() {
                    exits.push(format!("port {port}: {status}"));
                    break;
                }
                if Instant::now() >= deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!("tauri-driver did not listen on {port} within 20 s");
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
        panic!("tauri-driver exited before listening, five times: {exits:?}");
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

/// An X server of the test's own (Xvfb), so that windows of tests running beside it never
/// send this one's window crossing or motion events: one that arrived while a test held the
/// pointer on the Pool slider moved the slider to where the X pointer was.
struct Display {
    child: Child,
    name: String,
}

impl Display {
    /// A new Xvfb screen of 1280x800, or `None` where there is no Xvfb (the window then
    /// goes to the inherited `DISPLAY`).
    fn start() -> Option<Self> {
        use std::io::BufRead;
        if !cfg!(target_os = "linux") || std::env::var_os("EBB_E2E_SHARED_DISPLAY").is_some() {
            return None;
        }
        let mut child = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                "1280x800x24",
                "-nolisten",
                "tcp",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        // Xvfb writes the display's number once it accepts clients.
        let mut line = String::new();
        let read = std::io::BufReader::new(child.stdout.take()?).read_line(&mut line);
        match (read, line.trim().parse::<u32>()) {
            (Ok(_), Ok(number)) => Some(Self {
                child,
                name: format!(":{number}"),
            }),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("Xvfb started but did not say its display number: {line:?}");
            }
        }
    }
}

impl Drop for Display {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The app under tauri-driver; [`App::run`] runs a test on it and closes it whatever
/// happened.
pub struct App {
    driver: Driver,
    session: Session,
    /// Dropped after the driver (fields drop in order): the app leaves its display first.
    _display: Option<Display>,
}

impl App {
    /// The app with `args` (e.g. `--demo`, `--data-dir DIR`).
    pub async fn open(args: &[&OsStr]) -> Self {
        Self::open_with_env(&[], args).await
    }

    /// The app on its demo fleet, keeping its data in `data_dir`.
    pub async fn open_demo(data_dir: &Path) -> Self {
        Self::open(&[
            "--demo".as_ref(),
            "--data-dir".as_ref(),
            data_dir.as_os_str(),
        ])
        .await
    }

    /// The demo with its own rules on (the tests' apps turn them off unless asked): its pool
    /// follows the demo's users.
    pub async fn open_demo_with_rules(data_dir: &Path) -> Self {
        Self::open_with_env(
            &[("EBB_DEMO_RULES", OsStr::new("on"))],
            &[
                "--demo".as_ref(),
                "--data-dir".as_ref(),
                data_dir.as_os_str(),
            ],
        )
        .await
    }

    /// With `env` set for the driver and the app.
    pub async fn open_with_env(env: &[(&str, &OsStr)], args: &[&OsStr]) -> Self {
        let display = Display::start();
        let mut env = env.to_vec();
        // The demo pool's own rules move it on their own: off unless a test asks for them,
        // so a test's slider is the only thing that moves it.
        if !env.iter().any(|(key, _)| *key == "EBB_DEMO_RULES") {
            env.push(("EBB_DEMO_RULES", OsStr::new("off")));
        }
        // Outside the demo the app serves its metrics endpoint on the fixed 127.0.0.1:7171,
        // which two apps at once (or anything else on the machine) would fight over; no test
        // here pushes to it, so it is off unless a test asks.
        if !env.iter().any(|(key, _)| *key == "EBB_METRICS_LISTEN") {
            env.push(("EBB_METRICS_LISTEN", OsStr::new("off")));
        }
        if let Some(display) = &display {
            env.push(("DISPLAY", OsStr::new(&display.name)));
        }
        let driver = Driver::start(&env);
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
        let client = ClientBuilder::rustls()
            .expect("rustls")
            .capabilities(capabilities)
            .connect(&format!("http://127.0.0.1:{}", driver.port))
            .await
            .expect("a WebDriver session on the app");
        let session = Session { client };
        // The console starts beside the window (src-tauri/src/starting.rs) and the UI
        // renders its shell (#main) once it has: a test begins there, its console's store
        // seeded, as when the window waited for the console.
        session
            .eventually("the console to start", Duration::from_secs(60), || async {
                session.exists("#main").await.then_some(())
            })
            .await;
        Self {
            driver,
            session,
            _display: display,
        }
    }

    /// Runs `test` on the session, closes the session (and the app) and the driver whatever
    /// happened, then reports the test's panic, if any.
    pub async fn run<F, Fut>(self, test: F)
    where
        F: FnOnce(Session) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let result = tokio::spawn(test(self.session.clone())).await;
        let _ = self.session.client.close().await;
        drop(self.driver);
        if let Err(panic) = result {
            std::panic::resume_unwind(panic.into_panic());
        }
    }
}

/// The WebDriver session on the app window, with the suite's helpers. Derefs to the
/// fantoccini [`Client`] for anything else.
#[derive(Clone)]
pub struct Session {
    client: Client,
}

impl std::ops::Deref for Session {
    type Target = Client;
    fn deref(&self) -> &Client {
        &self.client
    }
}

impl Session {
    /// Polls `probe` until it returns `Some` (or `Ok`); a timeout names `what`, the last
    /// thing the probe saw, and where the window was.
    pub async fn eventually<P, F, Fut>(&self, what: &str, timeout: Duration, probe: F) -> P::Value
    where
        P: ebb_testkit::Probe,
        F: FnMut() -> Fut,
        Fut: Future<Output = P>,
    {
        match try_eventually(what, timeout, probe).await {
            Ok(value) => value,
            Err(timeout) => self.fail(timeout, "").await,
        }
    }

    /// Panics for a wait that ran out: what it waited for and saw last, `context` (what
    /// else the test knows), where the window was, and a screenshot with `EBB_E2E_SHOTS`.
    pub async fn fail(&self, timeout: Timeout, context: &str) -> ! {
        let page = self
            .client
            .execute(
                "const main = document.querySelector('main') || document.body;\
                 return location.hash + ' | ' + main.innerText.slice(0, 600);",
                vec![],
            )
            .await
            .map(|value| value.as_str().unwrap_or_default().to_string())
            .unwrap_or_else(|error| format!("(cannot read the page: {error})"));
        self.shoot("timed-out").await;
        panic!("{timeout}\nthe window shows: {page}\n{context}");
    }

    /// The element at `css` once it is on the page: a view draws its parts as their data
    /// comes, so nothing is looked up only once.
    pub async fn element(&self, css: &str) -> Element {
        self.eventually(&format!("{css} on the page"), ELEMENT_WAIT, || {
            self.find(Locator::Css(css))
        })
        .await
    }

    /// Clicks `css` once it is on the page and takes the click, finding it again when a
    /// live re-render replaced the node in between.
    pub async fn click(&self, css: &str) {
        self.eventually(&format!("a click on {css}"), ELEMENT_WAIT, || async {
            self.find(Locator::Css(css)).await?.click().await
        })
        .await;
    }

    /// Replaces the text of the input `css` with `text`.
    pub async fn type_into(&self, css: &str, text: &str) {
        let input = self.element(css).await;
        input.clear().await.unwrap();
        input.send_keys(text).await.unwrap();
    }

    /// Replaces the text of the textarea `css` with `text`: WebKitWebDriver drops a typed
    /// `\n`, so each line break is sent as the Enter key.
    pub async fn type_lines(&self, css: &str, text: &str) {
        self.type_into(css, &text.replace('\n', &Key::Enter.to_string()))
            .await;
    }

    pub async fn text_of(&self, css: &str) -> Option<String> {
        self.find(Locator::Css(css)).await.ok()?.text().await.ok()
    }

    /// The text of `css` now; the live views re-render each second, so a read that finds
    /// the node between two renders is made again.
    pub async fn text_now(&self, css: &str) -> String {
        self.eventually(css, Duration::from_secs(5), || self.text_of(css))
            .await
    }

    /// Waits until the text of `css` is `want`; a timeout names what it saw last.
    pub async fn wait_text(&self, what: &str, css: &str, want: &str, timeout: Duration) {
        self.eventually(what, timeout, || async {
            let text = self.text_of(css).await;
            if text.as_deref().map(str::trim) == Some(want) {
                Ok(())
            } else {
                Err(format!("{css} shows {text:?}"))
            }
        })
        .await;
    }

    pub async fn exists(&self, css: &str) -> bool {
        self.find_all(Locator::Css(css))
            .await
            .is_ok_and(|found| !found.is_empty())
    }

    /// Waits until an element matches `css`; a timeout names `what`.
    pub async fn wait_exists(&self, what: &str, css: &str, timeout: Duration) {
        self.eventually(what, timeout, || async {
            self.exists(css).await.then_some(())
        })
        .await;
    }

    /// The chart drawn in the first element matching `css` (a `SvgImage`): its SVG markup,
    /// once there is one.
    pub async fn svg_of(&self, css: &str) -> Option<String> {
        self.find(Locator::Css(css))
            .await
            .ok()?
            .html(true)
            .await
            .ok()
            .filter(|svg| svg.trim_start().starts_with("<svg"))
    }

    /// The attribute `name` of the first element matching `css`.
    pub async fn attr_of(&self, css: &str, name: &str) -> Option<String> {
        self.find(Locator::Css(css))
            .await
            .ok()?
            .attr(name)
            .await
            .ok()
            .flatten()
    }

    /// The `value` property of the form control at `css`.
    /// Starts recording what happens in the window: input, change, key, pointer and focus
    /// events (target id and value), IPC calls and elements with an id that leave the page.
    /// [`Session::recorded`] reads it back: a timeout can say what led to it.
    pub async fn record(&self) {
        let _ = self.execute(RECORDER, vec![]).await;
    }

    /// What [`Session::record`] saw, one line per event (the last 200), or why nothing.
    pub async fn recorded(&self) -> String {
        match self
            .execute(
                "return window.__ebbLog ? window.__ebbLog.slice(-200).join('\\n') : 'nothing recorded (the page was reloaded?)';",
                vec![],
            )
            .await
        {
            Ok(value) => value.as_str().unwrap_or_default().to_string(),
            Err(error) => format!("cannot read the record: {error}"),
        }
    }

    pub async fn value_of(&self, css: &str) -> Result<Option<String>, String> {
        self.execute(
            "const el = document.querySelector(arguments[0]); return el ? el.value : null;",
            vec![serde_json::Value::String(css.to_string())],
        )
        .await
        .map(|value| value.as_str().map(str::to_string))
        .map_err(|error| error.to_string())
    }

    /// Waits until the form control at `css` holds `want`; a timeout names what it held.
    pub async fn wait_value(&self, css: &str, want: &str) {
        self.eventually(
            &format!("{css} to hold {want:?}"),
            Duration::from_secs(5),
            || async {
                let value = self.value_of(css).await;
                if value.as_ref().is_ok_and(|v| v.as_deref() == Some(want)) {
                    Ok(())
                } else {
                    Err(value)
                }
            },
        )
        .await;
    }

    /// The id of the focused element (`""` when it has none).
    pub async fn active_id(&self) -> String {
        self.execute(
            "return document.activeElement ? document.activeElement.id : ''",
            vec![],
        )
        .await
        .unwrap()
        .as_str()
        .unwrap_or_default()
        .to_string()
    }

    /// `document.documentElement.lang`, once it is `want`.
    pub async fn wait_lang(&self, what: &str, want: &str) {
        self.eventually(what, Duration::from_secs(10), || async {
            let lang = self
                .execute("return document.documentElement.lang", vec![])
                .await
                .map_err(|error| error.to_string())?;
            if lang == want {
                Ok(())
            } else {
                Err(lang.to_string())
            }
        })
        .await;
    }

    /// Focuses the element at `css` (as Tab would reach it), once it is on the page.
    pub async fn focus(&self, css: &str) {
        self.eventually(&format!("{css} to take the focus"), ELEMENT_WAIT, || async {
            let focused = self
                .execute(
                    "const el = document.querySelector(arguments[0]); if (!el) return false; el.focus(); return document.activeElement === el;",
                    vec![serde_json::Value::String(css.to_string())],
                )
                .await
                .map_err(|error| error.to_string())?;
            if focused == serde_json::Value::Bool(true) {
                Ok(())
            } else {
                Err(format!("focused: {focused}"))
            }
        })
        .await;
    }

    /// Presses `key` `times` times on whatever has the focus, as keyboard actions (real key
    /// events: a range input moves one step per press and fires `input` and `change`).
    pub async fn press(&self, key: Key, times: usize) {
        use fantoccini::actions::{InputSource, KeyAction, KeyActions};
        let mut actions = KeyActions::new("keyboard".into());
        for _ in 0..times {
            actions = actions
                .then(KeyAction::Down { value: key.into() })
                .then(KeyAction::Up { value: key.into() });
        }
        self.perform_actions(actions)
            .await
            .unwrap_or_else(|error| panic!("cannot press {key:?}: {error}"));
    }

    /// Types `text` on whatever has the focus, as keyboard actions.
    pub async fn press_chars(&self, text: &str) {
        use fantoccini::actions::{InputSource, KeyAction, KeyActions};
        let mut actions = KeyActions::new("keyboard".into());
        for c in text.chars() {
            actions = actions
                .then(KeyAction::Down { value: c })
                .then(KeyAction::Up { value: c });
        }
        self.perform_actions(actions)
            .await
            .unwrap_or_else(|error| panic!("cannot type {text:?}: {error}"));
    }

    /// Sends `key` to the element at `css`.
    pub async fn send_key(&self, css: &str, key: Key) {
        self.element(css)
            .await
            .send_keys(&key.to_string())
            .await
            .unwrap_or_else(|error| panic!("cannot send {key:?} to {css}: {error}"));
    }

    /// Sends a file's absolute path to the `<input type=file>` at `css`.
    pub async fn choose_file(&self, css: &str, file: &Path) {
        assert!(file.is_absolute(), "{}", file.display());
        self.element(css)
            .await
            .send_keys(&file.to_string_lossy())
            .await
            .unwrap_or_else(|error| panic!("cannot choose {} in {css}: {error}", file.display()));
    }

    /// Selects `value` in the select `css`, once the select and that option are there.
    pub async fn select_value(&self, css: &str, value: &str) {
        self.eventually(
            &format!("{value} selected in {css}"),
            ELEMENT_WAIT,
            || async {
                self.find(Locator::Css(css))
                    .await?
                    .select_by_value(value)
                    .await
            },
        )
        .await;
    }

    /// Drops a file named `name` holding `text` on the element at `css`, the way the page
    /// sees a drop (dragenter, dragover, drop with a `DataTransfer`).
    pub async fn drop_file(&self, css: &str, name: &str, text: &str) {
        let dropped = self
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
    pub async fn scroll_to(&self, css: &str) {
        let _ = self
            .execute(
                "const el = document.querySelector(arguments[0]); if (el) el.scrollIntoView({block: 'start'});",
                vec![serde_json::Value::String(css.to_string())],
            )
            .await;
    }

    /// With `EBB_E2E_SHOTS=DIR`, saves what the window shows as `DIR/NAME.png`.
    pub async fn shoot(&self, name: &str) {
        let Some(dir) = std::env::var_os("EBB_E2E_SHOTS").map(PathBuf::from) else {
            return;
        };
        std::fs::create_dir_all(&dir).unwrap();
        // The screenshot is the last painted frame, which can trail the DOM, and CSS
        // transitions run 120 ms: wait for every finite animation to end, then two frames.
        let _ = self
            .execute_async(
                "const done = arguments[arguments.length - 1];\
                 const running = document.getAnimations()\
                   .filter((a) => a.effect && a.effect.getComputedTiming().endTime !== Infinity)\
                   .map((a) => a.finished.catch(() => null));\
                 Promise.all(running).then(() =>\
                   requestAnimationFrame(() => requestAnimationFrame(() => done(null))));",
                vec![],
            )
            .await;
        let png = self.screenshot().await.expect("a screenshot");
        std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
    }

    /// Settings → Hosts, from anywhere.
    pub async fn open_settings_hosts(&self) {
        self.click("#nav-settings").await;
        self.eventually("the hosts section", Duration::from_secs(10), || async {
            self.exists("[data-testid=\"settings-hosts\"]")
                .await
                .then_some(())
        })
        .await;
    }
}

/// Whether screenshots are asked for (`EBB_E2E_SHOTS`): the extra screens in Chinese and
/// dark are shown only then.
pub fn shooting() -> bool {
    std::env::var_os("EBB_E2E_SHOTS").is_some()
}

/// Every file under `dir`, recursively.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
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

/// The recorder [`Session::record`] installs (once per page).
const RECORDER: &str = r##"
if (window.__ebbLog) return;
const log = (window.__ebbLog = []);
const t0 = performance.now();
const at = () => (performance.now() - t0).toFixed(0).padStart(6);
const what = (el) => (el && el.id ? "#" + el.id : el && el.tagName ? el.tagName.toLowerCase() : String(el));
for (const type of ["input", "change", "keydown", "pointerdown", "pointerup", "focusin", "focusout"]) {
  document.addEventListener(type, (ev) => {
    const el = ev.target;
    const value = el && "value" in el ? " value=" + el.value : "";
    const key = ev.key ? " key=" + ev.key : "";
    const xy = "clientX" in ev ? " x=" + ev.clientX.toFixed(0) + " y=" + ev.clientY.toFixed(0) : "";
    log.push(at() + " " + type + " " + what(el) + value + key + xy + (ev.isTrusted ? "" : " (untrusted)"));
  }, true);
}
new MutationObserver((records) => {
  for (const r of records) for (const n of r.removedNodes) {
    if (n.nodeType !== 1) continue;
    const ids = [n, ...n.querySelectorAll("[id]")].filter((e) => e.id).map((e) => e.id);
    if (ids.length) log.push(at() + " removed " + ids.slice(0, 6).join(" "));
  }
}).observe(document.body, { childList: true, subtree: true });
const internals = window.__TAURI_INTERNALS__;
if (internals && internals.invoke) {
  const invoke = internals.invoke.bind(internals);
  internals.invoke = (cmd, args, options) => {
    if (!/list_hosts|fleet|metrics|health|activity|chart|info/.test(cmd))
      log.push(at() + " invoke " + cmd + " " + JSON.stringify(args ?? {}).slice(0, 120));
    return invoke(cmd, args, options);
  };
}
"##;
