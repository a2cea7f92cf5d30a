//! The console's HTTP client for one agent. Every call has connect and total timeouts.

use ebb_wire::agent::{API_VERSION, GpuList, Health};
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

/// Why a call to an agent failed, in words an operator can act on.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("`{url}` is not a valid agent URL: {reason}")]
    BadUrl { url: String, reason: String },
    #[error("no answer from {url} within {timeout_ms} ms")]
    Timeout { url: String, timeout_ms: u128 },
    #[error("cannot connect to {url}: {reason}")]
    Connect { url: String, reason: String },
    #[error("{url} answered HTTP {status}")]
    Status { url: String, status: u16 },
    #[error("{url} answered something that is not an Ebb agent's JSON: {reason}")]
    Decode { url: String, reason: String },
    #[error("{url} speaks agent API v{found}; this console speaks v{API_VERSION}")]
    Version { url: String, found: u32 },
}

/// A client for one agent's `/v1` API.
#[derive(Debug, Clone)]
pub struct AgentClient {
    http: reqwest::Client,
    base_url: String,
    config: ClientConfig,
}

impl AgentClient {
    /// `base_url` is like `http://127.0.0.1:7070`; a trailing slash is fine.
    pub fn new(base_url: &str, config: ClientConfig) -> Result<Self, AgentError> {
        let trimmed = base_url.trim();
        let bad = |reason: &str| AgentError::BadUrl {
            url: base_url.to_string(),
            reason: reason.to_string(),
        };
        let rest = trimmed
            .strip_prefix("http://")
            .or_else(|| trimmed.strip_prefix("https://"))
            .ok_or_else(|| bad("it must start with http:// or https://"))?
            .trim_end_matches('/');
        if rest.is_empty() || rest.starts_with(':') || rest.contains(char::is_whitespace) {
            return Err(bad("it has no host name"));
        }
        let http = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .timeout(config.request_timeout)
            .build()
            .map_err(|error| bad(&error.to_string()))?;
        Ok(Self {
            http,
            base_url: trimmed.trim_end_matches('/').to_string(),
            config,
        })
    }

    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    pub async fn health(&self) -> Result<Health, AgentError> {
        let health: Health = self.get("/v1/health").await?;
        if health.api_version != API_VERSION {
            return Err(AgentError::Version {
                url: self.base_url.clone(),
                found: health.api_version,
            });
        }
        Ok(health)
    }

    pub async fn gpus(&self) -> Result<GpuList, AgentError> {
        self.get("/v1/gpus").await
    }

    async fn get<T: serde::de::DeserializeOwned>(&self, path: &str) -> Result<T, AgentError> {
        let url = format!("{}{path}", self.base_url);
        let response = self
            .http
            .get(&url)
            .send()
            .await
            .map_err(|error| self.classify(&error))?;
        let status = response.status();
        if !status.is_success() {
            return Err(AgentError::Status {
                url,
                status: status.as_u16(),
            });
        }
        let bytes = response
            .bytes()
            .await
            .map_err(|error| self.classify(&error))?;
        serde_json::from_slice(&bytes).map_err(|error| AgentError::Decode {
            url,
            reason: error.to_string(),
        })
    }

    fn classify(&self, error: &reqwest::Error) -> AgentError {
        let url = self.base_url.clone();
        if error.is_timeout() {
            AgentError::Timeout {
                url,
                timeout_ms: self.config.request_timeout.as_millis(),
            }
        } else {
            let mut reason = error.to_string();
            let mut source = std::error::Error::source(error);
            while let Some(inner) = source {
                reason = inner.to_string();
                source = inner.source();
            }
            AgentError::Connect { url, reason }
        }
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
            ("http://", "no host name"),
            ("http://:7070", "no host name"),
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
