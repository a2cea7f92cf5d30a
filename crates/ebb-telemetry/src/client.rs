//! The console's HTTP client for one agent. Every call has connect and total timeouts;
//! a pinned certificate is checked by its SHA-256 fingerprint; failures are classified in
//! words an operator can act on.
//!
//! The hosts without a pinned certificate share one [`SharedHttp`] client (the collector's
//! and the enforcer's calls alike), so a host costs its connection's buffers, not a
//! `reqwest::Client` with its own copy of the root certificates.

use ebb_wire::agent::{
    API_VERSION, ApiError, ConsoleTerm, GpuList, Health, Lease, LeaseList, LeaseRequest,
    ReclaimRequest, SampleBatch,
};
use ebb_wire::reasons::HostProblem;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::Duration;

/// Timeouts for calls to agents (reqwest has none by default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientConfig {
    pub connect_timeout: Duration,
    pub request_timeout: Duration,
}

impl Default for ClientConfig {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_millis(500),
            request_timeout: Duration::from_millis(900),
        }
    }
}

/// How to reach one agent: where, and with which credentials.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentAccess {
    pub url: String,
    /// Bearer token; never logged, never shown.
    pub token: Option<String>,
    /// SHA-256 of the agent's certificate (`AB:CD:...`) to pin.
    pub fingerprint: Option<String>,
}

impl AgentAccess {
    pub fn open(url: &str) -> Self {
        Self {
            url: url.into(),
            ..Self::default()
        }
    }
}

/// Why a call to an agent failed: the wire's [`HostProblem`] (its `Display` is the English
/// an operator can act on; the UI words its kind).
pub type AgentError = HostProblem;

fn http_builder(config: ClientConfig) -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .connect_timeout(config.connect_timeout)
        .timeout(config.request_timeout)
        .pool_max_idle_per_host(2)
}

/// One HTTP client for every agent reached without a pinned certificate (a pinned one
/// has its own, to check its certificate): its pool keeps each agent's connections apart,
/// and the platform's root certificates are loaded and kept once, not once per host (a
/// `reqwest::Client` holds about 60 KB of them and its TLS caches). The collector and the
/// enforcer each make one; cheap to clone.
#[derive(Debug, Clone)]
pub struct SharedHttp {
    config: ClientConfig,
    /// Or why it could not be made (no root certificates on this machine), said for each
    /// host as a client of its own would.
    http: Result<reqwest::Client, String>,
}

impl SharedHttp {
    pub fn new(config: ClientConfig) -> Self {
        Self {
            config,
            http: http_builder(config)
                .build()
                .map_err(|error| error.to_string()),
        }
    }

    /// A client for one agent, on the shared connection pool unless its certificate is
    /// pinned.
    pub fn client(&self, access: &AgentAccess) -> Result<AgentClient, AgentError> {
        AgentClient::build(access, self.config, Some(&self.http))
    }
}

/// A client for one agent's `/v1` API.
#[derive(Debug, Clone)]
pub struct AgentClient {
    http: reqwest::Client,
    base_url: String,
    token: Option<String>,
    config: ClientConfig,
}

impl AgentClient {
    /// An agent without a token or a pinned certificate.
    pub fn new(base_url: &str, config: ClientConfig) -> Result<Self, AgentError> {
        Self::with_access(&AgentAccess::open(base_url), config)
    }

    /// `access.url` is like `http://127.0.0.1:7070`; a trailing slash is fine. The client
    /// has an HTTP client of its own: for one-off calls. Many hosts at once go through
    /// [`SharedHttp`].
    pub fn with_access(access: &AgentAccess, config: ClientConfig) -> Result<Self, AgentError> {
        Self::build(access, config, None)
    }

    fn build(
        access: &AgentAccess,
        config: ClientConfig,
        shared: Option<&Result<reqwest::Client, String>>,
    ) -> Result<Self, AgentError> {
        let bad = |reason: String| AgentError::BadUrl {
            url: access.url.clone(),
            reason,
        };
        let base_url = normalize_url(&access.url).map_err(|problem| {
            bad(problem
                .to_string()
                .trim_start_matches(&format!("`{}` ", access.url.trim()))
                .to_string())
        })?;
        let http = match (&access.fingerprint, shared) {
            (Some(fingerprint), _) => {
                let pin = parse_fingerprint(fingerprint)
                    .ok_or_else(|| bad("the pinned fingerprint is not 64 hex digits".into()))?;
                http_builder(config)
                    .tls_backend_preconfigured(
                        pinned_tls(pin).map_err(|error| bad(error.to_string()))?,
                    )
                    .build()
                    .map_err(|error| bad(error.to_string()))?
            }
            (None, Some(shared)) => shared.clone().map_err(bad)?,
            (None, None) => http_builder(config)
                .build()
                .map_err(|error| bad(error.to_string()))?,
        };
        Ok(Self {
            http,
            base_url,
            token: access.token.clone(),
            config,
        })
    }

    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// `GET /v1/health`, checking the API version.
    pub async fn health(&self) -> Result<Health, AgentError> {
        let health: Health = self.get("/v1/health").await?;
        if health.api_version != API_VERSION {
            return Err(AgentError::Incompatible {
                url: self.base_url.clone(),
                found: health.api_version,
                expected: API_VERSION,
            });
        }
        Ok(health)
    }

    /// What "Test connection" runs: health (with the version check), then a GPU read so a
    /// token's scope is exercised too.
    pub async fn test(&self) -> Result<(Health, GpuList), AgentError> {
        let health = self.health().await?;
        let gpus = self.gpus().await?;
        Ok((health, gpus))
    }

    pub async fn gpus(&self) -> Result<GpuList, AgentError> {
        self.get("/v1/gpus").await
    }

    /// `GET /v1/samples`: the samples taken after number `after` of the agent's run `boot`
    /// (the last answer's), or every sample it keeps when there is none.
    pub async fn samples(&self, after: Option<(&str, u64)>) -> Result<SampleBatch, AgentError> {
        match after {
            Some((boot, seq)) => {
                let boot: String = boot
                    .chars()
                    .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
                    .collect();
                self.get(&format!("/v1/samples?boot={boot}&after={seq}"))
                    .await
            }
            None => self.get("/v1/samples").await,
        }
    }

    /// `GET /v1/leases`: the leases not yet released (active and releasing); the agent
    /// keeps released ones a while longer, but a pass has no need of them.
    pub async fn leases(&self) -> Result<LeaseList, AgentError> {
        self.get("/v1/leases").await
    }

    /// `GET /v1/leases/{id}`: one lease, released ones too while the agent keeps them;
    /// `None` when it keeps no such lease (404).
    pub async fn lease(&self, id: &str) -> Result<Option<Lease>, AgentError> {
        match self.get(&format!("/v1/leases/{id}")).await {
            Ok(lease) => Ok(Some(lease)),
            Err(AgentError::RefusedRequest { status: 404, .. }) => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// `POST /v1/leases` with an idempotency key: the same key and body always come back
    /// with the same lease, however often they are sent. `Ok(true, _)` when newly granted.
    pub async fn create_lease(
        &self,
        key: &str,
        request: &LeaseRequest,
    ) -> Result<(bool, Lease), AgentError> {
        let builder = self
            .http
            .post(format!("{}/v1/leases", self.base_url))
            .header("Idempotency-Key", key)
            .json(request);
        let (status, lease) = self.send(builder).await?;
        Ok((status == 201, lease))
    }

    /// `DELETE /v1/leases/{id}`: graceful; the lease is `releasing` until its workload ends.
    /// `term` fences it (`?console_group=G&term=N`); `None` sends none, as a console that is
    /// not elected does.
    pub async fn release_lease(
        &self,
        id: &str,
        term: Option<&ConsoleTerm>,
    ) -> Result<Lease, AgentError> {
        let mut url =
            reqwest::Url::parse(&format!("{}/v1/leases/{id}", self.base_url)).map_err(|error| {
                AgentError::BadUrl {
                    url: self.base_url.clone(),
                    reason: error.to_string(),
                }
            })?;
        if let Some(term) = term {
            url.query_pairs_mut()
                .append_pair("console_group", &term.console_group)
                .append_pair("term", &term.term.to_string());
        }
        Ok(self.send(self.http.delete(url)).await?.1)
    }

    /// `POST /v1/leases/{id}/restart`: the lease's workload stopped and started again on
    /// the same GPUs (the lease and its paid time unchanged).
    pub async fn restart_lease(&self, id: &str) -> Result<Lease, AgentError> {
        let builder = self
            .http
            .post(format!("{}/v1/leases/{id}/restart", self.base_url));
        Ok(self.send(builder).await?.1)
    }

    /// `POST /v1/leases/{id}/reclaim` (an admin token): the host's owner takes the lease
    /// back; it is released `notice` from now (whole seconds) and its workload is told to
    /// stop at once. Answers the lease with its `reclaim_deadline_ms`.
    pub async fn reclaim_lease(&self, id: &str, notice: Duration) -> Result<Lease, AgentError> {
        let builder = self
            .http
            .post(format!("{}/v1/leases/{id}/reclaim", self.base_url))
            .json(&ReclaimRequest {
                notice_s: notice.as_secs(),
            });
        Ok(self.send(builder).await?.1)
    }

    /// `POST /v1/terms`: announces an elected console's term, so the agent refuses its
    /// replaced predecessor's calls from now on. Answers the term the agent keeps for the
    /// group; a 409 `stale_term` when a newer leader announced itself first.
    pub async fn announce_term(&self, term: &ConsoleTerm) -> Result<u64, AgentError> {
        let builder = self
            .http
            .post(format!("{}/v1/terms", self.base_url))
            .json(term);
        let (_, kept): (u16, ConsoleTerm) = self.send(builder).await?;
        Ok(kept.term)
    }

    async fn get<T: serde::de::DeserializeOwned>(&self, path: &str) -> Result<T, AgentError> {
        let builder = self.http.get(format!("{}{path}", self.base_url));
        Ok(self.send(builder).await?.1)
    }

    async fn send<T: serde::de::DeserializeOwned>(
        &self,
        mut request: reqwest::RequestBuilder,
    ) -> Result<(u16, T), AgentError> {
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        let response = request
            .send()
            .await
            .map_err(|error| self.classify(&error))?;
        let status = response.status().as_u16();
        let base = self.base_url.clone();
        match status {
            200..=299 => {}
            401 => return Err(AgentError::Unauthorized { url: base }),
            403 => return Err(AgentError::Forbidden { url: base }),
            code => {
                // The agent explains itself in `{kind, message}`; anything else is a status.
                let bytes = response.bytes().await.unwrap_or_default();
                return Err(match serde_json::from_slice::<ApiError>(&bytes) {
                    Ok(body) => AgentError::RefusedRequest {
                        url: base,
                        status: code,
                        agent_kind: body.kind,
                        message: body.message,
                    },
                    // An agent words every 4xx (its fallbacks too): a bare one is something
                    // else answering, most often on the wrong port. A 5xx may be a proxy in
                    // front of an agent, so it stays a status.
                    Err(_) if (400..500).contains(&code) => AgentError::Decode {
                        url: base,
                        reason: format!("HTTP {code} without an agent's error body"),
                    },
                    Err(_) => AgentError::Status {
                        url: base,
                        status: code,
                    },
                });
            }
        }
        let bytes = response
            .bytes()
            .await
            .map_err(|error| self.classify(&error))?;
        let body = serde_json::from_slice(&bytes).map_err(|error| AgentError::Decode {
            url: self.base_url.clone(),
            reason: error.to_string(),
        })?;
        Ok((status, body))
    }

    fn classify(&self, error: &reqwest::Error) -> AgentError {
        let url = self.base_url.clone();
        if error.is_timeout() {
            return AgentError::Timeout {
                url,
                timeout_ms: millis(self.config.request_timeout),
            };
        }
        let mut chain = Vec::new();
        let mut source: Option<&dyn std::error::Error> = Some(error);
        while let Some(inner) = source {
            if let Some(io) = inner.downcast_ref::<std::io::Error>() {
                if io.kind() == std::io::ErrorKind::ConnectionRefused {
                    return AgentError::Refused { url };
                }
                if io.kind() == std::io::ErrorKind::TimedOut {
                    return AgentError::Timeout {
                        url,
                        timeout_ms: millis(self.config.connect_timeout),
                    };
                }
            }
            if let Some(tls) = inner.downcast_ref::<rustls::Error>() {
                return AgentError::Tls {
                    url,
                    reason: tls_reason(tls),
                };
            }
            chain.push(inner.to_string());
            source = inner.source();
        }
        let text = chain.join(": ").to_ascii_lowercase();
        // Something answered, but not in HTTP (an SSH or database port, say).
        if text.contains("invalid http") || text.contains("http/0.9") {
            return AgentError::Decode {
                url,
                reason: chain.last().cloned().unwrap_or_default(),
            };
        }
        if text.contains("dns error")
            || text.contains("failed to lookup")
            || text.contains("name or service not known")
        {
            return AgentError::Dns { url };
        }
        if text.contains("certificate") || text.contains("tls") || text.contains("handshake") {
            return AgentError::Tls {
                url,
                reason: chain.last().cloned().unwrap_or_default(),
            };
        }
        AgentError::Connect {
            url,
            reason: chain.last().cloned().unwrap_or_default(),
        }
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

fn tls_reason(error: &rustls::Error) -> String {
    match error {
        rustls::Error::General(reason) => reason.clone(),
        rustls::Error::InvalidCertificate(_) => format!(
            "{error}: the agent's self-signed certificate is not trusted; pin its fingerprint"
        ),
        other => other.to_string(),
    }
}

/// Why a text is not an agent's address; `Display` is the English (naming the text where
/// that helps), the registry reports it as its `url` field's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlProblem {
    #[error("`{0}` must start with http:// or https://")]
    Scheme(String),
    #[error("`{0}` has no host")]
    NoHost(String),
    #[error("`{0}` must be the agent's address only, without a path")]
    Path(String),
    #[error("must not carry credentials; give the token separately")]
    Credentials,
    #[error("`{0}` has no valid host")]
    BadHost(String),
    #[error("`{0}` is not a port from 1 to 65535")]
    Port(String),
}

/// An agent's address checked and normalized: `http(s)://host[:port]` with no path, query
/// or credentials, no trailing slash. Pure.
pub fn normalize_url(text: &str) -> Result<String, UrlProblem> {
    let text = text.trim();
    let rest = text
        .strip_prefix("http://")
        .or_else(|| text.strip_prefix("https://"))
        .ok_or_else(|| UrlProblem::Scheme(text.to_string()))?;
    let authority = rest.trim_end_matches('/');
    if authority.is_empty() {
        return Err(UrlProblem::NoHost(text.to_string()));
    }
    if authority.contains(['/', '?', '#']) {
        return Err(UrlProblem::Path(text.to_string()));
    }
    if authority.contains('@') {
        return Err(UrlProblem::Credentials);
    }
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) if !host.ends_with(']') || authority.starts_with('[') => {
            (host, Some(port))
        }
        _ => (authority, None),
    };
    if host.is_empty() || host.chars().any(|c| c.is_whitespace()) {
        return Err(UrlProblem::BadHost(text.to_string()));
    }
    if let Some(port) = port
        && port.parse::<u16>().ok().filter(|port| *port > 0).is_none()
    {
        return Err(UrlProblem::Port(port.to_string()));
    }
    let scheme = if text.starts_with("https://") {
        "https"
    } else {
        "http"
    };
    Ok(format!("{scheme}://{authority}"))
}

fn parse_fingerprint(text: &str) -> Option<[u8; 32]> {
    let hex: String = text
        .chars()
        .filter(|c| *c != ':' && !c.is_whitespace())
        .collect();
    if hex.len() != 64 {
        return None;
    }
    let mut bytes = [0u8; 32];
    for (byte, pair) in bytes.iter_mut().zip(hex.as_bytes().chunks(2)) {
        *byte = u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?;
    }
    Some(bytes)
}

fn pinned_tls(pin: [u8; 32]) -> Result<rustls::ClientConfig, rustls::Error> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let verifier = PinnedCertificate {
        pin,
        provider: provider.clone(),
    };
    Ok(rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth())
}

/// Trusts exactly the certificate whose SHA-256 is pinned; signatures are still checked.
#[derive(Debug)]
struct PinnedCertificate {
    pin: [u8; 32],
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for PinnedCertificate {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let presented: [u8; 32] = Sha256::digest(end_entity.as_ref()).into();
        if presented == self.pin {
            Ok(ServerCertVerified::assertion())
        } else {
            let shown: Vec<String> = presented.iter().map(|byte| format!("{byte:02X}")).collect();
            Err(rustls::Error::General(format!(
                "the certificate does not match the pinned fingerprint; the agent presents {}",
                shown.join(":")
            )))
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_urls_are_named_with_the_problem() {
        let cases = [
            ("127.0.0.1:7070", "must start with http://"),
            ("ftp://host", "must start with http://"),
            ("http://", "has no host"),
        ];
        for (url, expected) in cases {
            let error = AgentClient::new(url, ClientConfig::default()).unwrap_err();
            let message = error.to_string();
            assert!(message.contains(expected), "{url}: {message}");
            assert!(message.contains(url), "{url}: {message}");
        }
        let client = AgentClient::new("http://host-a:7070/", ClientConfig::default()).unwrap();
        assert_eq!(client.base_url(), "http://host-a:7070");
    }
}
