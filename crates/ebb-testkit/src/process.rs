//! The workspace's binaries as processes: `ebb-agent` on a port it picks and says, and `ebb`
//! on a data directory.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

/// A binary of this workspace, next to the test executable's `deps/` folder.
///
/// `cargo xtask test` builds every binary first; a plain `cargo test` may not have.
pub fn workspace_bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable's path");
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>/deps/<test>");
    let path = profile_dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{} is missing: run `cargo build --workspace --bins` (cargo xtask test does)",
        path.display()
    );
    path
}

/// How to start an `ebb-agent serve`: it always listens on `127.0.0.1:0` and the test reads
/// the address from the `listening on URL` line the agent prints once it is bound.
#[derive(Debug, Clone)]
pub struct AgentCommand {
    state_dir: PathBuf,
    host_name: String,
    args: Vec<String>,
    program: Option<PathBuf>,
}

impl AgentCommand {
    /// An agent keeping its state (leases, TLS files) in `state_dir`, named `it-host`.
    pub fn new(state_dir: &Path) -> Self {
        Self {
            state_dir: state_dir.to_path_buf(),
            host_name: "it-host".into(),
            args: Vec::new(),
            program: None,
        }
    }

    /// A simulated agent: `spec` as `--sim` takes it (`4xH800`).
    pub fn sim(state_dir: &Path, spec: &str) -> Self {
        Self::new(state_dir).args(["--sim", spec])
    }

    pub fn host_name(mut self, name: &str) -> Self {
        self.host_name = name.into();
        self
    }

    pub fn sample_interval_ms(self, ms: u32) -> Self {
        self.args(["--sample-interval-ms", &ms.to_string()])
    }

    /// More flags for `ebb-agent serve` (`--listen` is not one: the agent picks its port).
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        self.args
            .extend(args.into_iter().map(|arg| arg.as_ref().to_string()));
        self
    }

    /// Another `ebb-agent` binary (default: the workspace's).
    pub fn program(mut self, path: &Path) -> Self {
        self.program = Some(path.to_path_buf());
        self
    }

    pub fn start(&self) -> AgentProcess {
        self.try_start().unwrap_or_else(|why| panic!("{why}"))
    }

    /// Like [`AgentCommand::start`], but an agent that exits before listening is an `Err`.
    pub fn try_start(&self) -> Result<AgentProcess, String> {
        assert!(
            !self.args.iter().any(|arg| arg == "--listen"),
            "the agent picks its own port; read AgentProcess::url"
        );
        let program = self
            .program
            .clone()
            .unwrap_or_else(|| workspace_bin("ebb-agent"));
        let mut child = Command::new(program)
            .args(["serve", "--listen", "127.0.0.1:0", "--host-name"])
            .arg(&self.host_name)
            .arg("--state-dir")
            .arg(&self.state_dir)
            .args(&self.args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|error| format!("cannot start ebb-agent: {error}"))?;
        let stdout = child.stdout.take().expect("piped stdout");
        let (send, lines) = std::sync::mpsc::channel::<String>();
        // Reads every line, so the agent never blocks on a full pipe.
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let mut before = Vec::new();
        loop {
            match lines.recv_timeout(Duration::from_secs(20)) {
                Ok(line) => {
                    if let Some(url) = line.trim().strip_prefix("listening on ") {
                        let url = url.to_string();
                        return Ok(AgentProcess {
                            child,
                            addr: addr_of(&url),
                            url,
                            lines: before,
                        });
                    }
                    before.push(line.trim().to_string());
                }
                Err(_) => {
                    let _ = child.kill();
                    let status = child.wait();
                    return Err(format!(
                        "ebb-agent did not say where it listens ({status:?}) after printing {before:?}"
                    ));
                }
            }
        }
    }
}

fn addr_of(url: &str) -> SocketAddr {
    let authority = url.split_once("://").map_or(url, |(_, rest)| rest);
    authority
        .parse()
        .unwrap_or_else(|error| panic!("ebb-agent printed {url}: {error}"))
}

/// A running agent, killed (SIGKILL: nothing flushed) when dropped.
#[derive(Debug)]
pub struct AgentProcess {
    child: Child,
    /// `http://127.0.0.1:PORT` or `https://...`, as the agent printed it.
    pub url: String,
    pub addr: SocketAddr,
    /// What it printed before `listening on` (TLS certificate and fingerprint lines).
    pub lines: Vec<String>,
}

impl AgentProcess {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `ebb` CLI on one data directory, with the file token store.
#[derive(Debug, Clone)]
pub struct Cli {
    program: PathBuf,
    data_dir: PathBuf,
}

impl Cli {
    /// The workspace's `ebb` on `data_dir`.
    pub fn new(data_dir: &Path) -> Self {
        Self::with_program(&workspace_bin("ebb"), data_dir)
    }

    /// `program` (a crate's own `CARGO_BIN_EXE_ebb`) on `data_dir`.
    pub fn with_program(program: &Path, data_dir: &Path) -> Self {
        Self {
            program: program.to_path_buf(),
            data_dir: data_dir.to_path_buf(),
        }
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// `ebb --data-dir DIR --token-store file ARGS...`, to spawn or run.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.program);
        command
            .arg("--data-dir")
            .arg(&self.data_dir)
            .args(["--token-store", "file"])
            .args(args);
        command
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args)
            .output()
            .unwrap_or_else(|error| panic!("cannot run ebb {args:?}: {error}"))
    }

    /// Runs `ebb ARGS`, asserts it succeeded, and returns its stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let output = self.run(args);
        let stdout = String::from_utf8_lossy(&output.stdout).to_string();
        assert!(
            output.status.success(),
            "ebb {args:?} failed ({}): {stdout}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        stdout
    }
}
