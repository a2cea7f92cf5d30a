//! The installers, installed: the app's and the agent's `.deb` (from `cargo xtask bundle`)
//! go in with `dpkg -i` (`/usr/bin/ebb` a link to the app's binary, `ebb` under that name),
//! the agent runs the way its systemd unit runs it (the unit's user, `ExecStart` and state
//! directory, read from the installed unit), the installed `ebb`
//! reaches it over TLS with a token and a pinned certificate, the installed `ebb-desktop
//! --demo` paints its window under Xvfb, and `dpkg -r` leaves nothing but the agent's
//! config (a conffile), which `dpkg -P` then removes.
//!
//! It prints the figures issue 12 asks for: both packages' sizes, the app's start to its
//! first loaded page, and its idle memory after 60 s of the demo.
//!
//! Ignored by `cargo test`: it installs packages system-wide (as root, or through `sudo -n`).
//! `cargo xtask test` runs it after `cargo xtask bundle`, with `EBB_APP_DEB` and
//! `EBB_AGENT_DEB` naming the two files, under Xvfb.
// Tests read as their story, start to end: no line budget for them.
#![allow(clippy::too_many_lines)]

use ebb_testkit::TempDir;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const APP_PACKAGE: &str = "ebb";
const AGENT_PACKAGE: &str = "ebb-agent";
const AGENT_CONFIG: &str = "/etc/ebb-agent/agent.toml";
const AGENT_UNIT: &str = "/usr/lib/systemd/system/ebb-agent.service";

#[test]
#[ignore = "installs packages system-wide: `cargo xtask test` runs it after `cargo xtask bundle`"]
fn both_debs_install_run_and_remove_cleanly() {
    let app_deb = deb_from_env("EBB_APP_DEB");
    let agent_deb = deb_from_env("EBB_AGENT_DEB");
    for package in [APP_PACKAGE, AGENT_PACKAGE] {
        assert!(
            !installed(package),
            "{package} is installed on this machine already; this test installs and removes \
             it, so it refuses to touch an operator's installation (dpkg -r {package} first)"
        );
    }
    let app_mb = mb(std::fs::metadata(&app_deb).unwrap().len());
    let agent_mb = mb(std::fs::metadata(&agent_deb).unwrap().len());

    let packages = Installed::install(&[&app_deb, &agent_deb]);
    let dir = TempDir::new("install");

    // One binary is the app and, run as `ebb`, the command line.
    assert_eq!(
        std::fs::read_link("/usr/bin/ebb").ok(),
        Some(PathBuf::from("ebb-desktop")),
        "/usr/bin/ebb is a link to ebb-desktop"
    );
    let version = Command::new("/usr/bin/ebb")
        .arg("--version")
        .output()
        .unwrap();
    assert!(version.status.success());
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("ebb {}", env!("CARGO_PKG_VERSION"))
    );

    // What postinst made: the user, the config's owner and mode, the state directory.
    assert!(
        Command::new("getent")
            .args(["passwd", "ebb-agent"])
            .output()
            .unwrap()
            .status
            .success(),
        "postinst made no ebb-agent user"
    );
    assert_eq!(
        owner_and_mode(Path::new(AGENT_CONFIG)),
        "root:ebb-agent 640"
    );
    assert_eq!(
        owner_and_mode(Path::new("/var/lib/ebb-agent")),
        "ebb-agent:ebb-agent 700"
    );

    // The agent, the way its unit runs it.
    let unit = Unit::read(Path::new(AGENT_UNIT));
    assert_eq!(
        unit.exec_start,
        ["/usr/bin/ebb-agent", "serve", "--config", AGENT_CONFIG]
    );
    let token = root_output(&[
        "/usr/bin/ebb-agent",
        "token",
        "new",
        "--scope",
        "lease",
        "--config",
        AGENT_CONFIG,
    ]);
    let token = token.trim();
    let mut agent = Command::new("runuser");
    agent
        .args(["-u", &unit.user, "--"])
        .args(&unit.exec_start)
        .env(
            "STATE_DIRECTORY",
            Path::new("/var/lib").join(&unit.state_directory),
        )
        // The config listens on 0.0.0.0:7070; a test keeps to loopback, on a port the agent
        // picks and prints (`listening on URL`, read below).
        .env("EBB_AGENT_LISTEN", "127.0.0.1:0");
    // The unit reads the GPUs through NVML; a machine without NVIDIA's driver simulates them.
    let nvidia = Command::new("nvidia-smi")
        .arg("-L")
        .output()
        .is_ok_and(|output| output.status.success());
    if !nvidia {
        agent.env("EBB_AGENT_SIM", "8xA100");
    }
    println!(
        "the installed agent reads {}",
        if nvidia { "NVML" } else { "8 simulated A100s" }
    );
    for (key, value) in &unit.environment {
        agent.env(key, value);
    }
    let mut agent = Running::spawn(agent, "the installed agent");
    let fingerprint = agent
        .line_with("tls: sha256 fingerprint ", Duration::from_secs(20))
        .trim()
        .rsplit(' ')
        .next()
        .unwrap()
        .to_string();
    let listening = agent.line_with("listening on ", Duration::from_secs(20));
    let url = listening
        .trim()
        .trim_start_matches("listening on ")
        .to_string();
    assert!(
        url.starts_with("https://"),
        "the packaged agent serves TLS: {url}"
    );
    assert_eq!(
        owner_and_mode(Path::new("/var/lib/ebb-agent/tls/cert.pem")),
        "ebb-agent:ebb-agent 644",
        "the certificate is made on first start, in the state directory"
    );

    // The installed `ebb` reaches it with the token and the pinned certificate.
    let token_file = dir.join("token");
    std::fs::write(&token_file, token).unwrap();
    let data = dir.subdir("console");
    let ebb = |args: &[&str]| {
        let output = Command::new("/usr/bin/ebb")
            .arg("--data-dir")
            .arg(&data)
            .args(["--token-store", "file"])
            .args(args)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout).to_string();
        assert!(
            output.status.success(),
            "ebb {args:?}: {stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        );
        stdout
    };
    ebb(&[
        "hosts",
        "add",
        "gpu-0",
        &url,
        "--region",
        "local",
        "--token-file",
        token_file.to_str().unwrap(),
        "--fingerprint",
        &fingerprint,
    ]);
    let tested = ebb(&["hosts", "test", "gpu-0"]);
    println!("installed ebb hosts test gpu-0:\n{tested}");
    agent.stop();

    // The app, from its installed path, on its demo fleet.
    let display = std::env::var("DISPLAY")
        .expect("no DISPLAY: run under Xvfb (cargo xtask test wraps this test in xvfb-run)");
    println!("the app on DISPLAY {display}");
    let mut app = Command::new("/usr/bin/ebb-desktop");
    app.args(["--demo", "--token-store", "file", "--metrics-listen", "off"])
        .arg("--data-dir")
        .arg(dir.subdir("app"))
        .env("RUST_LOG", "info");
    let started = Instant::now();
    let mut app = Running::spawn(app, "the installed app");
    app.line_with("first page loaded", Duration::from_secs(60));
    let first_page = started.elapsed();
    if let Some(shots) = std::env::var_os("EBB_E2E_SHOTS") {
        // A picture for a person only, nothing asserts on it: the installed app runs without
        // WebDriver, so no marker of the page can be waited for; a moment to paint.
        std::thread::sleep(Duration::from_secs(2));
        let shot = PathBuf::from(shots).join("installed-app.png");
        let _ = std::fs::create_dir_all(shot.parent().unwrap());
        let _ = Command::new("import")
            .args(["-window", "root"])
            .arg(&shot)
            .status();
    }
    // The measure itself: the memory after 60 s of the demo, not a wait for a state.
    std::thread::sleep(Duration::from_secs(60).saturating_sub(started.elapsed()));
    assert!(app.alive(), "the installed app exited during the demo");
    let own_rss = rss_kib(app.pid());
    let tree_rss: u64 = descendants(app.pid()).into_iter().map(rss_kib).sum::<u64>() + own_rss;
    app.stop();

    // Removal: nothing left but the agent's config; a purge takes that too.
    let listed: Vec<String> = [&app_deb, &agent_deb]
        .iter()
        .flat_map(|deb| files_in(deb))
        .collect();
    packages.remove();
    // `symlink_metadata`: a link whose target is gone still counts as left behind.
    let left: Vec<&String> = listed
        .iter()
        .filter(|file| Path::new(file).symlink_metadata().is_ok())
        .collect();
    assert_eq!(
        left,
        vec![AGENT_CONFIG],
        "dpkg -r left files behind other than the agent's conffile"
    );
    assert!(dpkg_status(AGENT_PACKAGE).contains("config-files"));
    root_output(&["dpkg", "--purge", AGENT_PACKAGE]);
    assert!(
        !Path::new("/etc/ebb-agent").exists(),
        "a purge removes the config"
    );
    assert!(
        !Path::new("/var/lib/ebb-agent").exists(),
        "a purge removes the agent's state"
    );

    println!(
        "installed: app .deb {app_mb:.1} MB, agent .deb {agent_mb:.1} MB; app start to first \
         loaded page {} ms; idle RSS after 60 s of the demo: ebb-desktop {:.0} MB, with its \
         WebKit processes {:.0} MB",
        first_page.as_millis(),
        own_rss as f64 / 1024.0,
        tree_rss as f64 / 1024.0,
    );
    // The goals are 15 MB, 1 s and 150 MB; the figures are reported above. The bounds here
    // catch a regression (the .deb was 13.2 MB when this was written: one binary is the app
    // and, as the link /usr/bin/ebb, the command line; xz) or a hang, not a miss of the goals.
    assert!(
        app_mb <= 16.0,
        "the app's .deb is {app_mb:.1} MB, over 16 MB"
    );
    assert!(first_page < Duration::from_secs(10));
    assert!(tree_rss < 1_500 * 1024);
}

fn deb_from_env(var: &str) -> PathBuf {
    let path = PathBuf::from(std::env::var_os(var).unwrap_or_else(|| {
        panic!("{var} is not set: `cargo xtask bundle` builds the .deb files, `cargo xtask test` passes them")
    }));
    assert!(path.is_file(), "{var}={} is no file", path.display());
    path
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1_000_000.0
}

/// `args` as root: directly when we are root, else through `sudo -n`.
fn as_root(args: &[&str]) -> Command {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|output| String::from_utf8_lossy(&output.stdout).trim() == "0");
    let mut command = if root {
        Command::new(args[0])
    } else {
        let mut sudo = Command::new("sudo");
        sudo.args(["-n", args[0]]);
        sudo
    };
    command.args(&args[1..]);
    command
}

fn root_output(args: &[&str]) -> String {
    let output = as_root(args)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .output()
        .unwrap_or_else(|error| panic!("cannot run {args:?}: {error}"));
    assert!(
        output.status.success(),
        "{args:?} failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).to_string()
}

fn dpkg_status(package: &str) -> String {
    let output = Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", package])
        .output()
        .unwrap();
    String::from_utf8_lossy(&output.stdout).to_string()
}

fn installed(package: &str) -> bool {
    dpkg_status(package).contains("install ok installed")
}

/// The packages while installed; removed (and the agent's config purged) when dropped, so a
/// failing test leaves the machine as it found it.
struct Installed {
    removed: bool,
}

impl Installed {
    fn install(debs: &[&Path]) -> Self {
        let mut args = vec!["dpkg", "-i"];
        args.extend(debs.iter().map(|deb| deb.to_str().unwrap()));
        let said = root_output(&args);
        println!("{said}");
        Self { removed: false }
    }

    fn remove(mut self) {
        root_output(&["dpkg", "-r", APP_PACKAGE, AGENT_PACKAGE]);
        self.removed = true;
    }
}

impl Drop for Installed {
    fn drop(&mut self) {
        if !self.removed {
            let _ = as_root(&["dpkg", "--purge", APP_PACKAGE, AGENT_PACKAGE]).status();
        }
    }
}

/// Every file and link (not folder) a `.deb` installs, as absolute paths.
fn files_in(deb: &Path) -> Vec<String> {
    let output = Command::new("dpkg-deb")
        .arg("-c")
        .arg(deb)
        .output()
        .unwrap();
    assert!(output.status.success());
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|line| !line.starts_with('d'))
        // A link is listed as `./usr/bin/ebb -> ebb-desktop`: its own path, not its target.
        .map(|line| line.split_once(" -> ").map_or(line, |(link, _)| link))
        .filter_map(|line| line.split_whitespace().last())
        .map(|path| path.trim_start_matches('.').to_string())
        .collect()
}

fn owner_and_mode(path: &Path) -> String {
    let output = Command::new("stat")
        .args(["-c", "%U:%G %a"])
        .arg(path)
        .output()
        .unwrap();
    assert!(output.status.success(), "{} is missing", path.display());
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// The parts of the installed unit that say how the agent runs.
struct Unit {
    exec_start: Vec<String>,
    user: String,
    state_directory: String,
    environment: Vec<(String, String)>,
}

impl Unit {
    fn read(path: &Path) -> Self {
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|error| panic!("the unit {} is missing: {error}", path.display()));
        let value = |key: &str| {
            text.lines()
                .find_map(|line| line.strip_prefix(&format!("{key}=")))
                .unwrap_or_else(|| panic!("the unit has no {key}="))
                .to_string()
        };
        let environment = text
            .lines()
            .filter_map(|line| line.strip_prefix("Environment="))
            .filter_map(|pair| pair.split_once('='))
            .map(|(key, value)| (key.to_string(), value.to_string()))
            .collect();
        Self {
            exec_start: value("ExecStart")
                .split_whitespace()
                .map(str::to_string)
                .collect(),
            user: value("User"),
            state_directory: value("StateDirectory"),
            environment,
        }
    }
}

/// A child whose stdout and stderr lines are read as they come.
struct Running {
    what: &'static str,
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Running {
    fn spawn(mut command: Command, what: &'static str) -> Self {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {what}: {error}"));
        let (send, lines) = mpsc::channel();
        for pipe in [
            Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
            Box::new(child.stderr.take().unwrap()),
        ] {
            let send = send.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                    if send.send(line).is_err() {
                        break;
                    }
                }
            });
        }
        Self {
            what,
            child,
            lines,
            seen: Vec::new(),
        }
    }

    fn line_with(&mut self, needle: &str, within: Duration) -> String {
        let deadline = Instant::now() + within;
        if let Some(line) = self.seen.iter().find(|line| line.contains(needle)) {
            return line.clone();
        }
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line.contains(needle) => return line,
                Ok(line) => self.seen.push(line),
                Err(_) => panic!(
                    "{} said no line with {needle:?} within {within:?}; it said:\n{}",
                    self.what,
                    self.seen.join("\n")
                ),
            }
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// SIGTERM, then SIGKILL after 10 s.
    fn stop(&mut self) {
        let _ = Command::new("kill")
            .arg(self.child.id().to_string())
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if !self.alive() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.alive() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Resident memory in KiB (0 for a process gone).
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("VmRSS:"))
                .and_then(|value| value.split_whitespace().next()?.parse().ok())
        })
        .unwrap_or(0)
}

/// Every process below `pid` (the webview's WebKit processes).
fn descendants(pid: u32) -> Vec<u32> {
    let parents: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|child| {
            let stat = std::fs::read_to_string(format!("/proc/{child}/stat")).ok()?;
            // The command name is in parentheses and may hold spaces: read after the last ')'.
            let after = &stat[stat.rfind(')')? + 2..];
            let parent = after.split_whitespace().nth(1)?.parse().ok()?;
            Some((child, parent))
        })
        .collect();
    let mut found = vec![pid];
    let mut index = 0;
    while index < found.len() {
        let parent = found[index];
        found.extend(
            parents
                .iter()
                .filter(|(_, of)| *of == parent)
                .map(|(child, _)| *child),
        );
        index += 1;
    }
    found.remove(0);
    found
}
