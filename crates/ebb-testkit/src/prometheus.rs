//! A Prometheus server from the machine's packages (Debian's `prometheus`), started in a
//! test's directory on `127.0.0.1:0` with the test's scrape configuration, and killed when
//! dropped. The port is the one it bound, read from its log (`msg="Listening on"
//! address=127.0.0.1:PORT`), so none is picked beforehand; a restart binds the same port
//! again and keeps the same TSDB, as a Prometheus restarted in place would.

use std::io::{BufRead, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long Prometheus may take to bind and to say it is ready.
const START: Duration = Duration::from_secs(60);

/// A running Prometheus; [`url`](Self::url) is `http://127.0.0.1:PORT`.
#[derive(Debug)]
pub struct PrometheusServer {
    child: Option<Child>,
    url: String,
    address: String,
    dir: PathBuf,
    config: PathBuf,
}

impl PrometheusServer {
    /// `prometheus` or `promtool` from Debian's package, on `PATH` or in `/usr/bin`; a panic
    /// that says how to install it when missing.
    pub fn tool(name: &str) -> PathBuf {
        let path = std::env::var_os("PATH").unwrap_or_default();
        std::env::split_paths(&path)
            .chain([PathBuf::from("/usr/bin")])
            .map(|dir| dir.join(name))
            .find(|candidate| candidate.is_file())
            .unwrap_or_else(|| {
                panic!(
                    "`{name}` is not on PATH nor in /usr/bin: this test runs a real Prometheus. \
                     Install Debian's `prometheus` package (`apt-get install prometheus`); \
                     `cargo xtask test` installs it when missing"
                )
            })
    }

    /// Writes `config` (Prometheus's YAML) to `dir/prometheus.yml` and starts Prometheus on
    /// it, its TSDB in `dir/tsdb`; returns once `/-/ready` answers.
    pub fn start(dir: &Path, config: &str) -> Self {
        let file = dir.join("prometheus.yml");
        std::fs::write(&file, config)
            .unwrap_or_else(|error| panic!("cannot write {}: {error}", file.display()));
        Self::start_with(dir, &file)
    }

    /// Starts Prometheus on a configuration file already written.
    pub fn start_with(dir: &Path, config: &Path) -> Self {
        let (child, address) = spawn(dir, config, "127.0.0.1:0");
        let server = Self {
            child: Some(child),
            url: format!("http://{address}"),
            address,
            dir: dir.to_path_buf(),
            config: config.to_path_buf(),
        };
        server.wait_ready();
        server
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// The process's id while it runs (for a benchmark's look at its CPU and memory).
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Kills Prometheus (as a crash would) and waits for it to go.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port and TSDB, once stopped.
    pub fn restart(&mut self) {
        self.stop();
        let (child, _) = spawn(&self.dir, &self.config, &self.address);
        self.child = Some(child);
        self.wait_ready();
    }

    /// Writes `config` over the configuration file and has Prometheus read it again
    /// (SIGHUP); returns once it answers again. For a scrape job that names a server
    /// started after Prometheus (the console's service discovery on its own port).
    pub fn reload(&self, config: &str) {
        std::fs::write(&self.config, config)
            .unwrap_or_else(|error| panic!("cannot write {}: {error}", self.config.display()));
        if let Some(child) = &self.child {
            let sent = Command::new("kill")
                .args(["-HUP", &child.id().to_string()])
                .status()
                .map(|status| status.success());
            assert!(
                matches!(sent, Ok(true)),
                "cannot signal Prometheus: {sent:?}"
            );
        }
        self.wait_ready();
    }

    /// An instant query's JSON answer as text (for a test's own look at what was scraped).
    pub fn get(&self, path_and_query: &str) -> Result<String, String> {
        http_get(&self.address, path_and_query)
    }

    fn wait_ready(&self) {
        let started = Instant::now();
        let mut last = String::new();
        while started.elapsed() < START {
            match http_get(&self.address, "/-/ready") {
                Ok(_) => return,
                Err(problem) => last = problem,
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!(
            "Prometheus at {} was not ready in {START:?}: {last}",
            self.url
        );
    }
}

impl Drop for PrometheusServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Starts the binary listening on `listen` and answers the address it bound.
fn spawn(dir: &Path, config: &Path, listen: &str) -> (Child, String) {
    let binary = PrometheusServer::tool("prometheus");
    let mut child = Command::new(&binary)
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("tsdb").display()
        ))
        .arg(format!("--web.listen-address={listen}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| panic!("cannot start {}: {error}", binary.display()));
    let log = child.stderr.take().expect("piped stderr");
    let (send, lines) = std::sync::mpsc::channel::<String>();
    // Drains the log for Prometheus's whole life, so it never writes to a closed pipe.
    std::thread::spawn(move || {
        for line in BufReader::new(log).lines().map_while(Result::ok) {
            let _ = send.send(line);
        }
    });
    let mut seen = Vec::new();
    loop {
        // An exit ends the reader, which ends the wait at once.
        let Ok(line) = lines.recv_timeout(START) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "Prometheus did not say where it listens; it logged:\n{}",
                seen.join("\n")
            );
        };
        if line.contains("msg=\"Listening on\"")
            && let Some(address) = line.split(" address=").nth(1)
        {
            let address = address.split_whitespace().next().unwrap_or_default();
            return (child, address.to_string());
        }
        seen.push(line);
    }
}

/// A plain HTTP/1.0 GET on loopback with a timeout: the body of a 2xx, else what went wrong.
fn http_get(address: &str, path: &str) -> Result<String, String> {
    let timeout = Duration::from_secs(5);
    let socket = address
        .parse()
        .map_err(|error| format!("{address}: {error}"))?;
    let mut stream =
        TcpStream::connect_timeout(&socket, timeout).map_err(|error| error.to_string())?;
    stream
        .set_read_timeout(Some(timeout))
        .and_then(|()| stream.set_write_timeout(Some(timeout)))
        .map_err(|error| error.to_string())?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {address}\r\n\r\n")
        .map_err(|error| error.to_string())?;
    let mut answer = String::new();
    stream
        .read_to_string(&mut answer)
        .map_err(|error| error.to_string())?;
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let status = head.lines().next().unwrap_or_default();
    if status
        .split_whitespace()
        .nth(1)
        .is_some_and(|code| code.starts_with('2'))
    {
        Ok(body.to_string())
    } else {
        Err(format!("{status}: {body}"))
    }
}
