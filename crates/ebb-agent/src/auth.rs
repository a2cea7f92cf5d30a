//! Bearer tokens with scopes. Only SHA-256 hashes of tokens are kept; a presented token
//! is hashed and compared in constant time against every stored hash.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// What a token may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Health, GPUs, the stream, metrics, and reading leases.
    Read,
    /// Everything `read` may, plus creating and releasing leases.
    Lease,
    /// Everything `lease` may, plus what only the host's owner does: reclaiming a lease
    /// from its holder.
    Admin,
}

impl Scope {
    /// The scope as a token file writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Lease => "lease",
            Scope::Admin => "admin",
        }
    }
}

impl std::str::FromStr for Scope {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "read" => Ok(Scope::Read),
            "lease" => Ok(Scope::Lease),
            "admin" => Ok(Scope::Admin),
            other => Err(format!(
                "unknown scope `{other}`: expected read, lease or admin"
            )),
        }
    }
}

/// A token as the config file keeps it: its name, scope and hash, never the token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenEntry {
    pub name: String,
    pub scope: Scope,
    /// Hex SHA-256 of the token.
    pub sha256: String,
}

/// Why a request was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    #[error("missing bearer token: send `Authorization: Bearer <token>`")]
    Missing,
    #[error("the bearer token is not valid for this agent")]
    Invalid,
    #[error("this token's scope is `{}`; this call needs `{}`", have.as_str(), need.as_str())]
    Forbidden { have: Scope, need: Scope },
}

/// The tokens this agent accepts; with none, every request is let in (loopback only).
#[derive(Debug, Clone, Default)]
pub struct Auth {
    tokens: Vec<(Scope, [u8; 32])>,
}

impl Auth {
    /// No tokens: every request is let in. The agent allows this on loopback only.
    pub fn open() -> Self {
        Self::default()
    }

    pub fn is_open(&self) -> bool {
        self.tokens.is_empty()
    }

    /// Builds the token set, naming the entry whose hash is malformed.
    pub fn from_entries(entries: &[TokenEntry]) -> Result<Self, String> {
        let tokens = entries
            .iter()
            .map(|entry| {
                parse_hash(&entry.sha256)
                    .map(|hash| (entry.scope, hash))
                    .ok_or_else(|| {
                        format!(
                            "tokens.{}: sha256 must be 64 hex digits (a SHA-256 hash of the token)",
                            entry.name
                        )
                    })
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { tokens })
    }

    /// Checks an `Authorization` header value for a call that needs `need`.
    pub fn check(&self, authorization: Option<&str>, need: Scope) -> Result<(), AuthError> {
        if self.is_open() {
            return Ok(());
        }
        let token = authorization
            .and_then(|value| value.strip_prefix("Bearer "))
            .map(str::trim)
            .filter(|token| !token.is_empty())
            .ok_or(AuthError::Missing)?;
        let presented: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        // Compare against every entry, without stopping early.
        let mut best: Option<Scope> = None;
        for (scope, hash) in &self.tokens {
            if bool::from(hash.ct_eq(&presented)) {
                best = best.max(Some(*scope));
            }
        }
        match best {
            None => Err(AuthError::Invalid),
            Some(have) if have < need => Err(AuthError::Forbidden { have, need }),
            Some(_) => Ok(()),
        }
    }
}

fn parse_hash(text: &str) -> Option<[u8; 32]> {
    let text = text.trim();
    if text.len() != 64 {
        return None;
    }
    let mut hash = [0u8; 32];
    for (byte, pair) in hash.iter_mut().zip(text.as_bytes().chunks(2)) {
        *byte = u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?;
    }
    Some(hash)
}

/// A new random token and the hex SHA-256 to store for it.
pub fn new_token() -> Result<(String, String), getrandom::Error> {
    let mut bytes = [0u8; 24];
    getrandom::fill(&mut bytes)?;
    let token = format!("ebb_{}", hex(&bytes));
    let hash = hex(&Sha256::digest(token.as_bytes()));
    Ok((token, hash))
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn auth_with(entries: &[(&str, Scope)]) -> Auth {
        let entries: Vec<TokenEntry> = entries
            .iter()
            .map(|(token, scope)| TokenEntry {
                name: token.to_string(),
                scope: *scope,
                sha256: hex(&Sha256::digest(token.as_bytes())),
            })
            .collect();
        Auth::from_entries(&entries).unwrap()
    }

    #[test]
    fn scopes_are_enforced() {
        let auth = auth_with(&[("reader", Scope::Read), ("leaser", Scope::Lease)]);
        assert_eq!(auth.check(None, Scope::Read), Err(AuthError::Missing));
        assert_eq!(
            auth.check(Some("Basic abc"), Scope::Read),
            Err(AuthError::Missing)
        );
        assert_eq!(
            auth.check(Some("Bearer nope"), Scope::Read),
            Err(AuthError::Invalid)
        );
        assert_eq!(auth.check(Some("Bearer reader"), Scope::Read), Ok(()));
        assert_eq!(
            auth.check(Some("Bearer reader"), Scope::Lease),
            Err(AuthError::Forbidden {
                have: Scope::Read,
                need: Scope::Lease
            })
        );
        assert_eq!(auth.check(Some("Bearer leaser"), Scope::Lease), Ok(()));
        assert_eq!(auth.check(Some("Bearer leaser"), Scope::Read), Ok(()));
        assert_eq!(Auth::open().check(None, Scope::Lease), Ok(()));
    }

    #[test]
    fn admin_is_above_lease_and_only_admin_reclaims() {
        let auth = auth_with(&[("leaser", Scope::Lease), ("owner", Scope::Admin)]);
        assert_eq!(
            auth.check(Some("Bearer leaser"), Scope::Admin),
            Err(AuthError::Forbidden {
                have: Scope::Lease,
                need: Scope::Admin
            })
        );
        assert_eq!(auth.check(Some("Bearer owner"), Scope::Admin), Ok(()));
        assert_eq!(auth.check(Some("Bearer owner"), Scope::Lease), Ok(()));
        assert_eq!("admin".parse::<Scope>(), Ok(Scope::Admin));
        assert!("root".parse::<Scope>().unwrap_err().contains("admin"));
    }

    #[test]
    fn new_tokens_verify_against_their_hash_only() {
        let (token, hash) = new_token().unwrap();
        let (other, _) = new_token().unwrap();
        assert_ne!(token, other);
        assert!(!hash.contains(&token));
        let auth = Auth::from_entries(&[TokenEntry {
            name: "t".into(),
            scope: Scope::Lease,
            sha256: hash,
        }])
        .unwrap();
        assert!(
            auth.check(Some(&format!("Bearer {token}")), Scope::Lease)
                .is_ok()
        );
        assert!(
            auth.check(Some(&format!("Bearer {other}")), Scope::Read)
                .is_err()
        );
        let bad = Auth::from_entries(&[TokenEntry {
            name: "x".into(),
            scope: Scope::Read,
            sha256: "zz".into(),
        }]);
        assert!(
            bad.unwrap_err()
                .contains("tokens.x: sha256 must be 64 hex digits")
        );
    }
}
