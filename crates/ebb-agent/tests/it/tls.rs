//! `ebb-agent serve` with the operator's own certificate: a chain a test CA signed is served
//! to clients that trust that CA, and a bad pair of files stops the agent before it listens.

use ebb_testkit::{AgentCommand, TempDir, eventually_blocking};
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

const AGENT: &str = env!("CARGO_BIN_EXE_ebb-agent");

struct TestCa {
    issuer: CertifiedIssuer<'static, KeyPair>,
}

impl TestCa {
    fn new(name: &str) -> Self {
        let mut params = CertificateParams::new(Vec::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, name);
        Self {
            issuer: CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap(),
        }
    }

    fn pem(&self) -> String {
        self.issuer.pem()
    }

    /// A leaf for `localhost` and 127.0.0.1: (certificate, its key as PEM).
    fn leaf(&self) -> (rcgen::Certificate, String) {
        let key = KeyPair::generate().unwrap();
        let leaf = CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])
            .unwrap()
            .signed_by(&key, &self.issuer)
            .unwrap();
        (leaf, key.serialize_pem())
    }
}

fn sha256_hex(der: &[u8]) -> String {
    Sha256::digest(der)
        .iter()
        .map(|byte| format!("{byte:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

fn client_trusting(ca_pem: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(ca_pem.as_bytes()).unwrap()])
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap()
}

fn serve_with(state_dir: &Path, cert: &Path, key: &Path) -> AgentCommand {
    AgentCommand::sim(state_dir, "1xA100")
        .program(Path::new(AGENT))
        .args(["--tls-cert", cert.to_str().unwrap()])
        .args(["--tls-key", key.to_str().unwrap()])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ca_signed_chain_is_served_to_clients_trusting_that_ca() {
    let dir = TempDir::new("agent-ca-tls");
    let ca = TestCa::new("Ebb test CA");
    let (leaf, key_pem) = ca.leaf();
    let chain = dir.join("chain.pem");
    let key = dir.join("key.pem");
    std::fs::write(&chain, leaf.pem() + &ca.pem()).unwrap();
    std::fs::write(&key, key_pem).unwrap();
    let state_dir = dir.subdir("state");
    // No --tls: the files imply it.
    let agent = serve_with(&state_dir, &chain, &key).start();
    assert!(agent.url.starts_with("https://"), "{}", agent.url);
    let printed = agent
        .lines
        .iter()
        .find_map(|line| line.strip_prefix("tls: sha256 fingerprint "))
        .expect("the fingerprint is printed");
    assert_eq!(printed, sha256_hex(leaf.der()), "the leaf's, for pinning");
    assert!(
        !state_dir.join("tls").exists(),
        "no self-signed certificate is made"
    );

    let port = agent.addr.port();
    let trusting = client_trusting(&ca.pem());
    for host in ["localhost", "127.0.0.1"] {
        let answer = trusting
            .get(format!("https://{host}:{port}/v1/health"))
            .send()
            .await
            .unwrap_or_else(|error| panic!("{host}: {error:?}"));
        assert_eq!(answer.status(), 200, "{host}");
        let health: serde_json::Value = answer.json().await.unwrap();
        assert_eq!(health["host"], "it-host");
    }

    let other_ca = TestCa::new("Another CA");
    let refused = client_trusting(&other_ca.pem())
        .get(format!("https://localhost:{port}/v1/health"))
        .send()
        .await
        .expect_err("a client trusting another CA is refused");
    let why = format!("{refused:?}");
    assert!(why.contains("UnknownIssuer"), "{why}");
}

/// A child process killed (and reaped) if the test gives up on it.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs `ebb-agent serve` expecting it to exit before it listens: (stdout, stderr).
fn serve_failing(state_dir: &Path, tls_args: &[&str]) -> (String, String) {
    let mut child = KillOnDrop(
        Command::new(AGENT)
            .args(["serve", "--listen", "127.0.0.1:0", "--sim", "1xA100"])
            .arg("--state-dir")
            .arg(state_dir)
            .args(tls_args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let status = eventually_blocking(
        &format!("ebb-agent {tls_args:?} to exit before it listens"),
        Duration::from_secs(20),
        || child.0.try_wait().unwrap().ok_or("still running"),
    );
    let child = &mut child.0;
    let mut stdout = String::new();
    let mut stderr = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(!status.success(), "{tls_args:?}: {stdout}");
    assert!(!stdout.contains("listening on"), "{tls_args:?}: {stdout}");
    (stdout, stderr)
}

fn arg(path: &Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn a_wrong_or_missing_key_stops_the_agent_with_the_file_named() {
    let dir = TempDir::new("agent-ca-tls-bad");
    let ca = TestCa::new("Ebb test CA");
    let (leaf, _) = ca.leaf();
    let (_, other_key_pem) = ca.leaf();
    let chain = dir.join("chain.pem");
    let other_key = dir.join("other-key.pem");
    let missing_key = dir.join("missing-key.pem");
    std::fs::write(&chain, leaf.pem() + &ca.pem()).unwrap();
    std::fs::write(&other_key, other_key_pem).unwrap();
    let state_dir = dir.subdir("state");

    let (_, mismatch) = serve_failing(
        &state_dir,
        &["--tls-cert", arg(&chain), "--tls-key", arg(&other_key)],
    );
    let expected = format!(
        "the private key in {} does not match the certificate in {}",
        other_key.display(),
        chain.display()
    );
    assert!(mismatch.contains(&expected), "{mismatch}");

    let (_, missing) = serve_failing(
        &state_dir,
        &["--tls-cert", arg(&chain), "--tls-key", arg(&missing_key)],
    );
    let expected = format!("cannot read {}: ", missing_key.display());
    assert!(missing.contains(&expected), "{missing}");

    let (_, half) = serve_failing(&state_dir, &["--tls-cert", arg(&chain)]);
    assert!(half.contains("tls_key: missing"), "{half}");
    assert!(
        !state_dir.join("tls").exists(),
        "no self-signed certificate is made in its place"
    );
}
