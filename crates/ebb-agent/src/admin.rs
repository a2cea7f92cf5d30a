//! What the host's owner does from its command line against a running agent:
//! `ebb-agent reclaim LEASE --notice 2m`. A small HTTP call of its own, so the agent does
//! not take in the console's client (and its charts) for one request.

use ebb_wire::agent::{ApiError, Lease, ReclaimRequest};
use std::time::Duration;

/// The address `ebb-agent serve` listens on by default.
pub const DEFAULT_URL: &str = "http://127.0.0.1:7070";

/// Why an admin call failed.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    /// The agent answered and refused: its own words, with the field named.
    #[error("the agent refused ({status}): {message}")]
    Refused { status: u16, message: String },
    /// No answer that could be read.
    #[error("cannot reach the agent at {url}: {reason}")]
    Unreachable { url: String, reason: String },
}

/// Parses a notice like `90s`, `2m` or `1h` (whole seconds, minutes or hours).
pub fn parse_notice(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a duration like 90s, 2m or 1h"))?;
    let seconds = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        _ => return Err(format!("`{text}`: the unit must be s, m or h")),
    };
    number
        .checked_mul(seconds)
        .map(Duration::from_secs)
        .ok_or_else(|| format!("`{text}` is too long"))
}

/// How to reach the agent of this host.
#[derive(Debug, Clone, Default)]
pub struct AdminAccess {
    pub url: String,
    /// An admin-scoped bearer token.
    pub token: Option<String>,
    /// PEM certificate to trust for an `https` URL, alone: the agent's own self-signed one
    /// (`STATE_DIR/tls/cert.pem`) or the CA that signed its chain.
    pub trust_pem: Option<Vec<u8>>,
}

/// `POST {url}/v1/leases/{id}/reclaim` with an admin token; answers the lease with its
/// deadline.
pub async fn reclaim(
    access: &AdminAccess,
    lease_id: &str,
    notice: Duration,
) -> Result<Lease, AdminError> {
    let url = access.url.trim_end_matches('/');
    let unreachable = |reason: String| AdminError::Unreachable {
        url: url.to_string(),
        reason,
    };
    let mut builder = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(3))
        .timeout(Duration::from_secs(15));
    if let Some(pem) = &access.trust_pem {
        let certificate = reqwest::Certificate::from_pem(pem)
            .map_err(|error| unreachable(format!("--cert is not a PEM certificate: {error}")))?;
        builder = builder.tls_certs_only([certificate]);
    }
    let http = builder
        .build()
        .map_err(|error| unreachable(error.to_string()))?;
    let mut request = http
        .post(format!("{url}/v1/leases/{lease_id}/reclaim"))
        .json(&ReclaimRequest {
            notice_s: notice.as_secs(),
        });
    if let Some(token) = &access.token {
        request = request.bearer_auth(token);
    }
    let response = request
        .send()
        .await
        .map_err(|error| unreachable(error.to_string()))?;
    let status = response.status();
    let bytes = response
        .bytes()
        .await
        .map_err(|error| unreachable(error.to_string()))?;
    if status.is_success() {
        return serde_json::from_slice(&bytes)
            .map_err(|error| unreachable(format!("not an Ebb agent's answer: {error}")));
    }
    let message = serde_json::from_slice::<ApiError>(&bytes)
        .map(|error| error.message)
        .unwrap_or_else(|_| String::from_utf8_lossy(&bytes).into_owned());
    Err(AdminError::Refused {
        status: status.as_u16(),
        message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notices_read_as_seconds_minutes_or_hours() {
        assert_eq!(parse_notice("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_notice("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_notice("1h"), Ok(Duration::from_secs(3600)));
        // Zero and too long are the agent's to refuse, naming notice_s.
        assert_eq!(parse_notice("0s"), Ok(Duration::ZERO));
        assert!(parse_notice("-5s").unwrap_err().contains("not a duration"));
        assert!(parse_notice("2").unwrap_err().contains("unit"));
        assert!(parse_notice("2d").unwrap_err().contains("unit"));
    }
}
