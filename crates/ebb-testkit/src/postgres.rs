//! A PostgreSQL server from the machine's packages (Debian's `postgresql`), made in a temp
//! dir for a test run and stopped when dropped: loopback only, trust auth, no locale (so
//! `ORDER BY` sorts as SQLite's does), fsync off (a test server's data dies with it), and
//! TLS on with a self-signed certificate made by `openssl` (a client may ask for it with
//! `sslmode=require`).
//!
//! As root it runs as the `postgres` user the package makes (the server refuses root).

use crate::temp::TempDir;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running test server; `url()` is `postgres://postgres@127.0.0.1:PORT` (no database).
#[derive(Debug)]
pub struct PostgresServer {
    child: Child,
    url: String,
    port: u16,
    /// The data directory and log, removed with the server.
    _dir: TempDir,
}

impl PostgresServer {
    /// Makes and starts a server, or says what is missing.
    pub fn start(tag: &str) -> Result<Self, String> {
        let bin = bin_dir().ok_or(
            "PostgreSQL's server is not installed (Debian: apt-get install postgresql; \
             cargo xtask test installs it)",
        )?;
        let dir = TempDir::new(&format!("postgres-{tag}"));
        // The directory is for the server only: no console.toml in it.
        let _ = std::fs::remove_file(dir.join("console.toml"));
        let data = dir.join("data");
        let (cert, key) = (dir.join("server.crt"), dir.join("server.key"));
        run(Command::new("openssl")
            .args([
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            ])
            .args(["-subj", "/CN=localhost", "-keyout"])
            .arg(&key)
            .arg("-out")
            .arg(&cert))?;
        run(Command::new("chmod").arg("600").arg(&key))?;
        let as_root = is_root();
        if as_root {
            run(Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(dir.path()))?;
        }
        let command = |program: &str| -> Command {
            let path = bin.join(program);
            if as_root {
                let mut command = Command::new("setpriv");
                command
                    .args(["--reuid=postgres", "--regid=postgres", "--init-groups"])
                    .arg(path);
                command
            } else {
                Command::new(path)
            }
        };
        run(command("initdb")
            .args([
                "--auth=trust",
                "--username=postgres",
                "--no-locale",
                "--encoding=UTF8",
            ])
            .arg("-D")
            .arg(&data))?;
        // PostgreSQL takes a port number (1 to 65535: `-p 0` is refused), never a listener,
        // and says nothing of a port it picked: so a free one is learnt by binding it and
        // letting it go, and a server that then loses it to another process (it exits with
        // "Address already in use") is started again on another. The one exception, with
        // tauri-driver's, to "no port picked and hoped for".
        let mut lost = Vec::new();
        for _ in 0..5 {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|listener| listener.local_addr())
                .map_err(|error| format!("no free port for PostgreSQL: {error}"))?
                .port();
            let log_path = dir.join("server.log");
            let log = std::fs::File::create(&log_path)
                .map_err(|error| format!("cannot write the server's log: {error}"))?;
            let mut child = command("postgres")
                .arg("-D")
                .arg(&data)
                .args(["-p", &port.to_string(), "-k"])
                .arg(dir.path())
                .args(["-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"])
                .args(["-c", "max_connections=400", "-c", "synchronous_commit=off"])
                .args(["-c", "ssl=on", "-c"])
                .arg(format!("ssl_cert_file={}", cert.display()))
                .arg("-c")
                .arg(format!("ssl_key_file={}", key.display()))
                .stdin(Stdio::null())
                .stdout(log.try_clone().map_err(|error| error.to_string())?)
                .stderr(log)
                .spawn()
                .map_err(|error| format!("cannot start postgres: {error}"))?;
            match wait_ready(&bin, port, &mut child, Duration::from_secs(60)) {
                Ok(()) => {
                    return Ok(Self {
                        child,
                        url: format!("postgres://postgres@127.0.0.1:{port}"),
                        port,
                        _dir: dir,
                    });
                }
                Err(exited) => {
                    let log = std::fs::read_to_string(&log_path).unwrap_or_default();
                    let _ = child.kill();
                    let _ = child.wait();
                    if !(exited && log.contains("already in use")) {
                        return Err(format!(
                            "PostgreSQL did not become ready on port {port}:\n{log}"
                        ));
                    }
                    lost.push(port);
                }
            }
        }
        Err(format!(
            "PostgreSQL lost its port to another process five times: {lost:?}"
        ))
    }

    /// The server's URL without a database: append `/name` for one.
    pub fn url(&self) -> &str {
        &self.url
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Runs `sql` on `database` as the server's superuser (`psql`), as an operator would
    /// by hand; panics with the server's answer when it fails.
    pub fn psql(&self, database: &str, sql: &str) {
        let output = Command::new("psql")
            .args(["-h", "127.0.0.1", "-U", "postgres", "-v", "ON_ERROR_STOP=1"])
            .args(["-p", &self.port.to_string(), "-d", database, "-c", sql])
            .output()
            .expect("psql runs (Debian: postgresql-client)");
        assert!(
            output.status.success(),
            "{sql}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// Waits until the server on `port` accepts connections; `Err(true)` when it exited first,
/// `Err(false)` when `within` ran out.
fn wait_ready(bin: &Path, port: u16, child: &mut Child, within: Duration) -> Result<(), bool> {
    let started = Instant::now();
    loop {
        let ready = Command::new(bin.join("pg_isready"))
            .args(["-q", "-h", "127.0.0.1", "-p", &port.to_string()])
            .status()
            .is_ok_and(|status| status.success());
        if ready {
            return Ok(());
        }
        if matches!(child.try_wait(), Ok(Some(_))) {
            return Err(true);
        }
        if started.elapsed() > within {
            return Err(false);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

impl Drop for PostgresServer {
    fn drop(&mut self) {
        // SIGINT: PostgreSQL's fast shutdown (clients cut off, no wait for them).
        let _ = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Debian keeps the server's programs out of PATH, one folder per major version.
fn bin_dir() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("postgres").exists().then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin).or_else(|| {
        std::env::var_os("PATH")
            .and_then(|path| std::env::split_paths(&path).find(|dir| has_server(dir)))
    })
}

fn has_server(dir: &Path) -> bool {
    dir.join("postgres").exists() && dir.join("initdb").exists()
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|output| output.stdout.starts_with(b"0\n"))
}

fn run(command: &mut Command) -> Result<(), String> {
    let output = command
        .stdin(Stdio::null())
        .output()
        .map_err(|error| format!("cannot run {command:?}: {error}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{command:?} failed: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}
