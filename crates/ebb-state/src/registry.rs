//! The host registry: which agents this console collects from. Rows in SQLite
//! (`console.db` in the data directory); tokens in a [`TokenVault`], never in the rows.
//!
//! A host where pools hold or asked for GPUs is never simply removed (their leases would be
//! forgotten, never released): [`Registry::remove`] refuses it
//! ([`RegistryError::HoldsGpus`]), or [`Registry::remove_releasing`] marks it draining
//! (nothing new goes there; each lease there is released once the pool holds its
//! replacement elsewhere) and the host is dropped when nothing is left. A host written off
//! while silent never finishes draining: [`Registry::forget`] removes it, its leases
//! recorded as ended at the write-off. An agent's URL is checked by the client's own
//! `normalize_url`.

use crate::db::ConsoleDb;
use crate::vault::{TokenVault, VaultError};
use ebb_wire::reasons::ChangeReason;
use sqlx::Row;
use std::sync::Arc;

/// A host as the operator describes it (the token travels beside it, never inside): the
/// wire's one host type, stored here as the Settings view and `ebb hosts` show it.
pub use ebb_wire::ipc::HostEntry;
use ebb_wire::ipc::{HostCheck, HostForm, HostInput, HostRemoval, PoolGpus};
use ebb_wire::phrase::{FieldProblem, Phrase};

#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("{field}: {problem}")]
    Invalid {
        field: &'static str,
        problem: String,
        /// The problem in the operator's words, where it is worded.
        words: Option<Box<Phrase>>,
    },
    #[error("no host named `{0}` is registered")]
    NotFound(String),
    #[error(transparent)]
    Vault(#[from] VaultError),
    #[error("cannot open the console database {path}: {reason}")]
    Open { path: String, reason: String },
    #[error("console database error: {0}")]
    Sql(#[from] sqlx::Error),
    /// Pools hold GPUs on the host: removing it now would forget their leases.
    #[error(
        "name: `{host}` still holds GPUs for {}: release them first (`ebb hosts remove {host} --release` releases them, the pools take theirs elsewhere, then the host goes), so no lease is forgotten",
        held_words(.pools)
    )]
    HoldsGpus { host: String, pools: Vec<PoolGpus> },
    /// The operator's role does not allow it.
    #[error(transparent)]
    RoleRequired(#[from] crate::access::RoleRequired),
}

fn held_words(pools: &[PoolGpus]) -> String {
    pools
        .iter()
        .map(|held| {
            let s = if held.gpus == 1 { "" } else { "s" };
            format!("`{}` ({} GPU{s})", held.pool, held.gpus)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A refusal of `field` with its English and its words.
fn refused(field: &'static str, problem: impl Into<String>, words: Phrase) -> RegistryError {
    RegistryError::Invalid {
        field,
        problem: problem.into(),
        words: Some(Box::new(words)),
    }
}

/// The most characters a host's name or region may have.
pub const NAME_MAX: usize = 63;
/// The most labels a host may have, and the longest key and value.
pub const LABELS_MAX: usize = 32;
pub const LABEL_KEY_MAX: usize = 63;
pub const LABEL_VALUE_MAX: usize = 255;

/// What is wrong with one field of a host as typed: the registry's one set of checks, which
/// both refuses a save ([`validate`], in English) and answers the Settings form before it
/// saves ([`check_form`], in the operator's words).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostFieldProblem {
    #[error("must be 1 to 63 characters")]
    NameLength { empty: bool },
    #[error("may hold only letters, digits, '-', '_' and '.'")]
    NamePattern,
    #[error("{0}")]
    Url(ebb_telemetry::client::UrlProblem),
    #[error("must be 1 to 63 characters")]
    RegionLength { empty: bool },
    #[error("must not contain spaces")]
    RegionSpaces,
    #[error("at most 32 labels")]
    LabelCount,
    #[error("label `{key}`: keys 1-63 and values up to 255 characters")]
    LabelLength { key: String },
    #[error("`{piece}` is not a key=value pair")]
    LabelPair { piece: String },
    #[error("`{piece}` has no key before the =")]
    LabelKeyEmpty { piece: String },
    #[error("the label key `{key}` appears twice")]
    LabelDuplicate { key: String },
    #[error("must be a SHA-256: 64 hex digits, colons optional")]
    FingerprintFormat,
    #[error("a pinned certificate needs an https:// URL")]
    FingerprintHttps,
}

impl HostFieldProblem {
    /// The field it is about, as the form and the CLI name it.
    pub fn field(&self) -> &'static str {
        use HostFieldProblem as P;
        match self {
            P::NameLength { .. } | P::NamePattern => "name",
            P::Url(_) => "url",
            P::RegionLength { .. } | P::RegionSpaces => "region",
            P::LabelCount
            | P::LabelLength { .. }
            | P::LabelPair { .. }
            | P::LabelKeyEmpty { .. }
            | P::LabelDuplicate { .. } => "labels",
            P::FingerprintFormat | P::FingerprintHttps => "fingerprint",
        }
    }

    /// The problem in the operator's words (the catalog's `hosts.check.*`).
    pub fn phrase(&self) -> Phrase {
        use HostFieldProblem as P;
        use ebb_telemetry::client::UrlProblem as U;
        let max = i64::try_from(NAME_MAX).unwrap_or(i64::MAX);
        match self {
            P::NameLength { empty: true } => Phrase::new("hosts.check.nameRequired"),
            P::NameLength { empty: false } => Phrase::new("hosts.check.nameLength").int("max", max),
            P::NamePattern => Phrase::new("hosts.check.namePattern"),
            P::Url(U::Scheme(text)) if text.is_empty() => Phrase::new("hosts.check.urlRequired"),
            P::Url(U::Scheme(_)) => Phrase::new("hosts.check.urlScheme"),
            P::Url(U::NoHost(_) | U::BadHost(_)) => Phrase::new("hosts.check.urlHost"),
            P::Url(U::Path(_)) => Phrase::new("hosts.check.urlPath"),
            P::Url(U::Credentials) => Phrase::new("hosts.check.urlCredentials"),
            P::Url(U::Port(port)) => Phrase::new("hosts.check.urlPort").text("port", port),
            P::RegionLength { empty: true } => Phrase::new("hosts.check.regionRequired"),
            P::RegionLength { empty: false } => {
                Phrase::new("hosts.check.regionLength").int("max", max)
            }
            P::RegionSpaces => Phrase::new("hosts.check.regionSpaces"),
            P::LabelCount => Phrase::new("hosts.check.labelCount").int("max", 32),
            P::LabelLength { key } => Phrase::new("hosts.check.labelLength")
                .text("key", key)
                .int("keyMax", 63)
                .int("valueMax", 255),
            P::LabelPair { piece } => Phrase::new("hosts.check.labelPair").text("piece", piece),
            P::LabelKeyEmpty { piece } => {
                Phrase::new("hosts.check.labelKeyEmpty").text("piece", piece)
            }
            P::LabelDuplicate { key } => Phrase::new("hosts.check.labelDuplicate").text("key", key),
            P::FingerprintFormat => Phrase::new("hosts.check.fingerprintFormat"),
            P::FingerprintHttps => Phrase::new("hosts.check.fingerprintHttps"),
        }
    }
}

impl From<HostFieldProblem> for RegistryError {
    /// Refused as the form words it: the English for logs and the CLI, the phrase for the UI.
    fn from(problem: HostFieldProblem) -> RegistryError {
        refused(problem.field(), problem.to_string(), problem.phrase())
    }
}

/// Every problem of a host spec, at most one a field, in the form's order, and the spec
/// normalized when there is none. Pure.
pub fn check(spec: &HostEntry) -> Result<HostEntry, Vec<HostFieldProblem>> {
    let mut problems = Vec::new();
    let name = spec.name.trim();
    if name.is_empty() || name.len() > NAME_MAX {
        problems.push(HostFieldProblem::NameLength {
            empty: name.is_empty(),
        });
    } else if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        problems.push(HostFieldProblem::NamePattern);
    }
    let url = ebb_telemetry::client::normalize_url(&spec.url)
        .map_err(|problem| problems.push(HostFieldProblem::Url(problem)))
        .ok();
    let region = spec.region.trim();
    if region.is_empty() || region.len() > NAME_MAX {
        problems.push(HostFieldProblem::RegionLength {
            empty: region.is_empty(),
        });
    } else if region.chars().any(|c| c.is_whitespace() || c.is_control()) {
        problems.push(HostFieldProblem::RegionSpaces);
    }
    if spec.labels.len() > LABELS_MAX {
        problems.push(HostFieldProblem::LabelCount);
    } else if let Some(key) = spec.labels.iter().find_map(|(key, value)| {
        (key.trim().is_empty() || key.len() > LABEL_KEY_MAX || value.len() > LABEL_VALUE_MAX)
            .then(|| key.clone())
    }) {
        problems.push(HostFieldProblem::LabelLength { key });
    }
    let typed = spec
        .fingerprint
        .as_deref()
        .filter(|text| !text.trim().is_empty());
    let fingerprint = match typed.map(fingerprint_hex).transpose() {
        Err(problem) => {
            problems.push(problem);
            None
        }
        Ok(hex) => hex,
    };
    if fingerprint.is_some() && url.as_deref().is_some_and(|url| url.starts_with("http://")) {
        problems.push(HostFieldProblem::FingerprintHttps);
    }
    match url {
        Some(url) if problems.is_empty() => Ok(HostEntry {
            name: name.to_string(),
            url,
            region: region.to_string(),
            labels: spec.labels.clone(),
            fingerprint,
            has_token: spec.has_token,
            draining: spec.draining,
        }),
        _ => Err(problems),
    }
}

/// Checks and normalizes a host spec, naming the first field with a problem. Pure.
pub fn validate(spec: &HostEntry) -> Result<HostEntry, RegistryError> {
    check(spec).map_err(|problems| {
        problems.into_iter().next().map_or_else(
            || refused("name", "is invalid", Phrase::new("hosts.refuse.invalid")),
            RegistryError::from,
        )
    })
}

/// `"gpu=a100, team=ml"` as labels: pieces split on commas and trimmed, empty ones skipped
/// (a trailing comma is fine); a value may hold `=` (the first one splits), not a comma.
pub fn parse_labels(
    text: &str,
) -> Result<std::collections::BTreeMap<String, String>, HostFieldProblem> {
    let mut labels = std::collections::BTreeMap::new();
    for piece in text
        .split(',')
        .map(str::trim)
        .filter(|piece| !piece.is_empty())
    {
        let Some((key, value)) = piece.split_once('=') else {
            return Err(HostFieldProblem::LabelPair {
                piece: piece.to_string(),
            });
        };
        let key = key.trim();
        if key.is_empty() {
            return Err(HostFieldProblem::LabelKeyEmpty {
                piece: piece.to_string(),
            });
        }
        if labels
            .insert(key.to_string(), value.trim().to_string())
            .is_some()
        {
            return Err(HostFieldProblem::LabelDuplicate {
                key: key.to_string(),
            });
        }
    }
    Ok(labels)
}

/// The Settings form's host as typed, checked: every field's problem in words, or the host
/// to send (its token is the form's to add).
pub fn check_form(form: &HostForm) -> HostCheck {
    let labels = parse_labels(&form.labels);
    let spec = HostEntry {
        name: form.name.clone(),
        url: form.url.clone(),
        region: form.region.clone(),
        labels: labels.clone().unwrap_or_default(),
        fingerprint: Some(form.fingerprint.clone()),
        has_token: false,
        draining: false,
    };
    let mut checked = check(&spec);
    if let Err(problem) = labels {
        let mut problems = checked.err().unwrap_or_default();
        problems.retain(|p| p.field() != "labels");
        problems.push(problem);
        checked = Err(problems);
    }
    match checked {
        Ok(entry) => HostCheck {
            problems: Vec::new(),
            input: Some(HostInput {
                name: entry.name,
                url: entry.url,
                region: entry.region,
                labels: entry.labels,
                fingerprint: entry.fingerprint,
                token: None,
            }),
        },
        Err(problems) => HostCheck {
            problems: problems
                .iter()
                .map(|p| FieldProblem::new(p.field(), p.phrase()))
                .collect(),
            input: None,
        },
    }
}

/// `http(s)://host[:port]` with no path, query or credentials: the client's own check
/// ([`ebb_telemetry::client::normalize_url`]), its problem named as the `url` field's.
pub fn normalize_url(text: &str) -> Result<String, RegistryError> {
    ebb_telemetry::client::normalize_url(text)
        .map_err(|problem| HostFieldProblem::Url(problem).into())
}

fn fingerprint_hex(text: &str) -> Result<String, HostFieldProblem> {
    let hex: String = text
        .chars()
        .filter(|c| *c != ':' && !c.is_whitespace())
        .collect();
    if hex.len() != 64 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return Err(HostFieldProblem::FingerprintFormat);
    }
    let upper = hex.to_ascii_uppercase();
    Ok(upper
        .as_bytes()
        .chunks(2)
        .map(|pair| String::from_utf8_lossy(pair).into_owned())
        .collect::<Vec<_>>()
        .join(":"))
}

/// `AB:CD:..` (32 bytes), from any case, with or without colons.
pub fn normalize_fingerprint(text: &str) -> Result<String, RegistryError> {
    fingerprint_hex(text).map_err(RegistryError::from)
}

/// Registered hosts, with their tokens in the vault.
#[derive(Debug, Clone)]
pub struct Registry {
    db: ConsoleDb,
    vault: Arc<dyn TokenVault>,
}

impl Registry {
    pub fn new(db: ConsoleDb, vault: Arc<dyn TokenVault>) -> Self {
        Self { db, vault }
    }

    pub fn db(&self) -> &ConsoleDb {
        &self.db
    }

    pub fn vault(&self) -> &Arc<dyn TokenVault> {
        &self.vault
    }

    pub async fn list(&self) -> Result<Vec<HostEntry>, RegistryError> {
        let rows = sqlx::query(
            "SELECT name, url, region, labels, fingerprint, has_token,
                    CASE WHEN EXISTS (SELECT 1 FROM host_drain d WHERE d.host = hosts.name) THEN 1 ELSE 0 END AS draining
             FROM hosts ORDER BY region, name",
        )
        .fetch_all(self.db.pool())
        .await?;
        Ok(rows.iter().map(row_to_spec).collect())
    }

    pub async fn get(&self, name: &str) -> Result<HostEntry, RegistryError> {
        let row = sqlx::query(
            "SELECT name, url, region, labels, fingerprint, has_token,
                    CASE WHEN EXISTS (SELECT 1 FROM host_drain d WHERE d.host = hosts.name) THEN 1 ELSE 0 END AS draining
             FROM hosts WHERE name = $1",
        )
        .bind(name)
        .fetch_optional(self.db.pool())
        .await?
        .ok_or_else(|| RegistryError::NotFound(name.into()))?;
        Ok(row_to_spec(&row))
    }

    /// The token of a host, from the vault (not asked when the host has none).
    pub async fn token(&self, spec: &HostEntry) -> Result<Option<String>, RegistryError> {
        if !spec.has_token {
            return Ok(None);
        }
        self.token_by_name(&spec.name).await
    }

    async fn token_by_name(&self, name: &str) -> Result<Option<String>, RegistryError> {
        let vault = self.vault.clone();
        let name = name.to_string();
        Ok(blocking(move || vault.get(&name)).await?)
    }

    /// Adds a host. The row and the token go in together: if the vault refuses the token,
    /// the row is not kept.
    pub async fn add(
        &self,
        spec: &HostEntry,
        token: Option<&str>,
    ) -> Result<HostEntry, RegistryError> {
        let token = token.map(str::trim).filter(|token| !token.is_empty());
        let spec = validate(&HostEntry {
            has_token: token.is_some(),
            ..spec.clone()
        })?;
        let mut tx = self.db.begin_write().await?;
        let exists: Option<String> = sqlx::query_scalar("SELECT name FROM hosts WHERE name = $1")
            .bind(&spec.name)
            .fetch_optional(&mut *tx)
            .await?;
        if exists.is_some() {
            return Err(refused(
                "name",
                format!("a host named `{}` is already registered", spec.name),
                Phrase::new("hosts.refuse.exists").text("name", &spec.name),
            ));
        }
        let now = self.db.now_ms();
        sqlx::query(
            "INSERT INTO hosts (name, url, region, labels, fingerprint, has_token, created_at_ms, updated_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(&spec.name)
        .bind(&spec.url)
        .bind(&spec.region)
        .bind(serde_json::to_string(&spec.labels).unwrap_or_else(|_| "{}".into()))
        .bind(&spec.fingerprint)
        .bind(i64::from(spec.has_token))
        .bind(now)
        .bind(now)
        .execute(&mut *tx)
        .await?;
        if let Some(token) = token {
            let vault = self.vault.clone();
            let (name, token) = (spec.name.clone(), token.to_string());
            blocking(move || vault.set(&name, &token)).await?;
        }
        let reason = ChangeReason::HostAdded {
            host: spec.name.clone(),
            region: spec.region.clone(),
        };
        crate::db::insert_console_activity(&mut tx, self.db.identity(), &reason, now).await?;
        tx.commit().await?;
        Ok(spec)
    }

    /// Changes a host. `token`: `None` keeps the stored one, `Some("")` removes it.
    pub async fn update(
        &self,
        name: &str,
        spec: &HostEntry,
        token: Option<&str>,
    ) -> Result<HostEntry, RegistryError> {
        let current = self.get(name).await?;
        let has_token = token.map_or(current.has_token, |token| !token.trim().is_empty());
        let spec = validate(&HostEntry {
            has_token,
            ..spec.clone()
        })?;
        if spec.name != name {
            return Err(refused(
                "name",
                "a host cannot be renamed; remove it and add it again",
                Phrase::new("hosts.refuse.rename"),
            ));
        }
        let mut tx = self.db.begin_write().await?;
        let updated = sqlx::query(
            "UPDATE hosts SET url = $1, region = $2, labels = $3, fingerprint = $4, has_token = $5, updated_at_ms = $6 WHERE name = $7",
        )
        .bind(&spec.url)
        .bind(&spec.region)
        .bind(serde_json::to_string(&spec.labels).unwrap_or_else(|_| "{}".into()))
        .bind(&spec.fingerprint)
        .bind(i64::from(spec.has_token))
        .bind(self.db.now_ms())
        .bind(name)
        .execute(&mut *tx)
        .await?;
        if updated.rows_affected() == 0 {
            return Err(RegistryError::NotFound(name.into()));
        }
        if let Some(token) = token {
            let vault = self.vault.clone();
            let (name, token) = (name.to_string(), token.trim().to_string());
            blocking(move || {
                if token.is_empty() {
                    vault.delete(&name)
                } else {
                    vault.set(&name, &token)
                }
            })
            .await?;
        }
        tx.commit().await?;
        Ok(spec)
    }

    /// Removes a host and its token. Refused while a pool holds or asked for GPUs there
    /// ([`RegistryError::HoldsGpus`]): their leases would be forgotten, never released.
    pub async fn remove(&self, name: &str) -> Result<(), RegistryError> {
        match self.remove_or_drain(name, false).await? {
            HostRemoval::Removed => Ok(()),
            HostRemoval::Draining { pools } => Err(RegistryError::HoldsGpus {
                host: name.to_string(),
                pools,
            }),
        }
    }

    /// Removes a host now when no pool holds GPUs there; otherwise marks it draining (one
    /// transaction with its activity entry): the enforcer releases the pools' GPUs there,
    /// each pool takes its GPUs elsewhere, and [`Registry::remove_drained`] drops the host
    /// once none is left. Asking again while it drains changes nothing.
    pub async fn remove_releasing(&self, name: &str) -> Result<HostRemoval, RegistryError> {
        self.remove_or_drain(name, true).await
    }

    /// The hosts being removed once their pools' GPUs are released.
    pub async fn draining(&self) -> Result<Vec<String>, RegistryError> {
        Ok(
            sqlx::query_scalar("SELECT host FROM host_drain ORDER BY host")
                .fetch_all(self.db.pool())
                .await?,
        )
    }

    /// Drops a draining host once no pool holds or asked for GPUs there; `false` while some
    /// are left (or it is not draining).
    pub async fn remove_drained(&self, name: &str) -> Result<bool, RegistryError> {
        let draining: Option<i64> =
            sqlx::query_scalar("SELECT since_ms FROM host_drain WHERE host = $1")
                .bind(name)
                .fetch_optional(self.db.pool())
                .await?;
        if draining.is_none() {
            return Ok(false);
        }
        match self.remove_or_drain(name, false).await {
            Ok(HostRemoval::Removed) => Ok(true),
            Ok(HostRemoval::Draining { .. }) => Ok(false),
            Err(RegistryError::NotFound(_)) => Ok(false),
            Err(error) => Err(error),
        }
    }

    /// Forgets a host that went silent and was written off (past the grace period, its
    /// pools' GPUs there replaced elsewhere), which a drain can never finish: no agent
    /// answers to release the leases. Its written-off leases are recorded as ended when they
    /// were written off, its unanswered requests are dropped, and the host goes with its
    /// token, in one transaction with its activity entry. Refused, naming `name`, while the
    /// host is not written off (it answers, or has not been silent that long): then a drain
    /// releases its GPUs properly. If the machine ever comes back, its agent still holds
    /// those GPUs for this console and nothing here releases them: the operator's call, which
    /// `ebb hosts remove --help` and the activity entry say. Answers how many leases were
    /// forgotten.
    pub async fn forget(&self, name: &str) -> Result<u32, RegistryError> {
        let mut tx = self.db.begin_write().await?;
        let current = self.get(name).await?;
        let written_off: Option<i64> =
            sqlx::query_scalar("SELECT at_ms FROM host_fences WHERE host = $1")
                .bind(name)
                .fetch_optional(&mut *tx)
                .await?;
        let Some(written_off_ms) = written_off else {
            // The English names the CLI's flag; the words, the Settings view's action.
            return Err(refused(
                "name",
                format!(
                    "`{name}` has not been written off (it answers, or has not been silent past the grace period), so its leases may still be released: remove it with --release instead"
                ),
                Phrase::new("hosts.refuse.notWrittenOff").text("name", name),
            ));
        };
        let ended = sqlx::query(
            "UPDATE pool_leases SET ended_at_ms = CASE WHEN granted_at_ms > $2 THEN granted_at_ms ELSE $2 END \
             WHERE host = $1 AND ended_at_ms IS NULL",
        )
        .bind(name)
        .bind(written_off_ms)
        .execute(&mut *tx)
        .await?
        .rows_affected();
        for table in [
            "DELETE FROM lease_intents WHERE host = $1",
            "DELETE FROM host_fences WHERE host = $1",
            "DELETE FROM host_down WHERE host = $1",
            "DELETE FROM host_drain WHERE host = $1",
            "DELETE FROM host_health WHERE name = $1",
            "DELETE FROM hosts WHERE name = $1",
        ] {
            sqlx::query(table).bind(name).execute(&mut *tx).await?;
        }
        if current.has_token {
            let vault = self.vault.clone();
            let owned = name.to_string();
            blocking(move || vault.delete(&owned)).await?;
        }
        let leases = u32::try_from(ended).unwrap_or(u32::MAX);
        let reason = ChangeReason::HostForgotten {
            host: current.name.clone(),
            leases,
        };
        crate::db::insert_console_activity(&mut tx, self.db.identity(), &reason, self.db.now_ms())
            .await?;
        tx.commit().await?;
        Ok(leases)
    }

    async fn remove_or_drain(&self, name: &str, drain: bool) -> Result<HostRemoval, RegistryError> {
        let mut tx = self.db.begin_write().await?;
        let current = self.get(name).await?;
        // A pool's GPUs there would be forgotten, never released: drain, or say which.
        let held = held_on(&mut tx, name).await?;
        if !held.is_empty() {
            if drain && !current.draining {
                sqlx::query("INSERT INTO host_drain (host, since_ms) VALUES ($1, $2)")
                    .bind(name)
                    .bind(self.db.now_ms())
                    .execute(&mut *tx)
                    .await?;
                let reason = ChangeReason::HostDraining {
                    host: current.name.clone(),
                    gpus: held.iter().map(|h| h.gpus).sum(),
                };
                crate::db::insert_console_activity(
                    &mut tx,
                    self.db.identity(),
                    &reason,
                    self.db.now_ms(),
                )
                .await?;
                tx.commit().await?;
            }
            return Ok(HostRemoval::Draining { pools: held });
        }
        for table in [
            "DELETE FROM hosts WHERE name = $1",
            "DELETE FROM host_health WHERE name = $1",
            "DELETE FROM host_drain WHERE host = $1",
        ] {
            sqlx::query(table).bind(name).execute(&mut *tx).await?;
        }
        if current.has_token {
            let vault = self.vault.clone();
            let owned = name.to_string();
            blocking(move || vault.delete(&owned)).await?;
        }
        let reason = ChangeReason::HostRemoved {
            host: current.name.clone(),
        };
        crate::db::insert_console_activity(&mut tx, self.db.identity(), &reason, self.db.now_ms())
            .await?;
        tx.commit().await?;
        Ok(HostRemoval::Removed)
    }
}

fn row_to_spec(row: &crate::db::DbRow) -> HostEntry {
    HostEntry {
        name: row.get("name"),
        url: row.get("url"),
        region: row.get("region"),
        labels: serde_json::from_str(row.get::<&str, _>("labels")).unwrap_or_default(),
        fingerprint: row.get("fingerprint"),
        has_token: row.get::<i64, _>("has_token") != 0,
        draining: row.get::<i64, _>("draining") != 0,
    }
}

/// The GPUs each pool holds or asked for on a host, by pool name.
async fn held_on(tx: &mut sqlx::AnyConnection, host: &str) -> Result<Vec<PoolGpus>, sqlx::Error> {
    let held: Vec<(String, i64)> = sqlx::query_as(
        "SELECT COALESCE(p.name, held.pool_id), COUNT(*) FROM (
             SELECT pool_id FROM pool_leases WHERE host = $1 AND ended_at_ms IS NULL
             UNION ALL SELECT pool_id FROM lease_intents WHERE host = $1
         ) AS held LEFT JOIN pools p ON p.id = held.pool_id
         GROUP BY held.pool_id, p.name ORDER BY 1",
    )
    .bind(host)
    .fetch_all(&mut *tx)
    .await?;
    Ok(held
        .into_iter()
        .map(|(pool, gpus)| PoolGpus {
            pool,
            gpus: u32::try_from(gpus).unwrap_or(u32::MAX),
        })
        .collect())
}

/// Keychains may block (and some talk D-Bus): keep them off the async workers.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, VaultError> + Send + 'static,
) -> Result<T, VaultError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|error| VaultError::Failed(error.to_string()))?
}

impl From<crate::db::OpenError> for RegistryError {
    fn from(error: crate::db::OpenError) -> Self {
        RegistryError::Open {
            path: error.path,
            reason: error.reason,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(name: &str, url: &str) -> HostEntry {
        HostEntry {
            name: name.into(),
            url: url.into(),
            region: "cn-east".into(),
            labels: std::collections::BTreeMap::new(),
            fingerprint: None,
            has_token: false,
            draining: false,
        }
    }

    #[test]
    fn urls_are_checked_and_normalized() {
        let ok = [
            ("http://10.0.0.7:7070/", "http://10.0.0.7:7070"),
            (
                " https://gpu-01.example:7070 ",
                "https://gpu-01.example:7070",
            ),
            ("http://[::1]:7070", "http://[::1]:7070"),
            ("http://gpu-02", "http://gpu-02"),
        ];
        for (input, expected) in ok {
            assert_eq!(normalize_url(input).unwrap(), expected, "{input}");
        }
        let bad = [
            ("gpu-01:7070", "must start with http:// or https://"),
            ("ftp://gpu", "must start with http://"),
            ("http://", "has no host"),
            ("http://gpu/v1/gpus", "without a path"),
            ("http://user:pw@gpu", "must not carry credentials"),
            ("http://gpu:99999", "`99999` is not a port"),
            ("http://gpu:0", "`0` is not a port"),
            ("http://gp u", "no valid host"),
        ];
        for (input, expected) in bad {
            let error = normalize_url(input).unwrap_err().to_string();
            assert!(
                error.starts_with("url: ") && error.contains(expected),
                "{input}: {error}"
            );
        }
    }

    fn form(name: &str, url: &str, region: &str, labels: &str, fingerprint: &str) -> HostForm {
        HostForm {
            name: name.into(),
            url: url.into(),
            region: region.into(),
            labels: labels.into(),
            fingerprint: fingerprint.into(),
        }
    }

    fn keys(check: &HostCheck) -> Vec<(&str, &str)> {
        check
            .problems
            .iter()
            .map(|p| (p.field.as_str(), p.words.key.as_str()))
            .collect()
    }

    #[test]
    fn the_form_is_checked_by_the_registry_rules_every_field_at_once() {
        let fp = "ab".repeat(32);
        let good = check_form(&form(
            " gpu-01 ",
            " https://h:7070/ ",
            "us-east-1",
            " team = ml , rack=7 ,",
            &fp,
        ));
        assert_eq!(keys(&good), []);
        let input = good.input.unwrap();
        assert_eq!(
            (input.name.as_str(), input.url.as_str()),
            ("gpu-01", "https://h:7070")
        );
        assert_eq!(input.labels.len(), 2);
        assert_eq!(input.labels["team"], "ml");
        assert_eq!(input.fingerprint.unwrap(), ["AB"; 32].join(":"));
        assert_eq!(input.token, None, "the token is the form's to add");

        let bad = check_form(&form("", "x", "", "x", "x"));
        assert!(bad.input.is_none());
        assert_eq!(
            keys(&bad),
            [
                ("name", "hosts.check.nameRequired"),
                ("url", "hosts.check.urlScheme"),
                ("region", "hosts.check.regionRequired"),
                ("fingerprint", "hosts.check.fingerprintFormat"),
                ("labels", "hosts.check.labelPair"),
            ]
        );
        let one = |f: HostForm| {
            keys(&check_form(&f))
                .first()
                .map(|(f, k)| (f.to_string(), k.to_string()))
        };
        let cases = [
            (
                form("gpu 01", "http://a", "r", "", ""),
                "hosts.check.namePattern",
            ),
            (
                form(&"a".repeat(64), "http://a", "r", "", ""),
                "hosts.check.nameLength",
            ),
            (form("a", "", "r", "", ""), "hosts.check.urlRequired"),
            (form("a", "https://", "r", "", ""), "hosts.check.urlHost"),
            (
                form("a", "http://a/v1/health", "r", "", ""),
                "hosts.check.urlPath",
            ),
            (
                form("a", "http://u:p@a", "r", "", ""),
                "hosts.check.urlCredentials",
            ),
            (form("a", "http://a:0", "r", "", ""), "hosts.check.urlPort"),
            (
                form("a", "http://a", "us east", "", ""),
                "hosts.check.regionSpaces",
            ),
            (
                form("a", "http://a", "r", "=ml", ""),
                "hosts.check.labelKeyEmpty",
            ),
            (
                form("a", "http://a", "r", "a=1, a=2", ""),
                "hosts.check.labelDuplicate",
            ),
            (
                form("a", "http://a", "r", &format!("{}=v", "k".repeat(64)), ""),
                "hosts.check.labelLength",
            ),
            (
                form(
                    "a",
                    "http://a",
                    "r",
                    &(0..33)
                        .map(|i| format!("k{i}=v"))
                        .collect::<Vec<_>>()
                        .join(","),
                    "",
                ),
                "hosts.check.labelCount",
            ),
            (
                form("a", "http://a", "r", "", &fp),
                "hosts.check.fingerprintHttps",
            ),
        ];
        for (typed, key) in cases {
            assert_eq!(
                one(typed.clone()).map(|(_, k)| k).as_deref(),
                Some(key),
                "{typed:?}"
            );
        }
        // The save refuses in English what the form words in the catalog's.
        let error = validate(&spec("a", "http://a/v1/health"))
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("url: ") && error.contains("without a path"),
            "{error}"
        );
    }

    #[test]
    fn specs_name_the_field_at_fault() {
        let cases = [
            (spec("", "http://a"), "name: must be 1 to 63"),
            (spec("a b", "http://a"), "name: may hold only"),
            (
                HostEntry {
                    region: " ".into(),
                    ..spec("a", "http://a")
                },
                "region: must be 1 to 63",
            ),
            (
                HostEntry {
                    fingerprint: Some("abc".into()),
                    ..spec("a", "https://a")
                },
                "fingerprint: must be a SHA-256",
            ),
            (
                HostEntry {
                    fingerprint: Some("ab".repeat(32)),
                    ..spec("a", "http://a")
                },
                "fingerprint: a pinned certificate needs an https://",
            ),
        ];
        for (spec, expected) in cases {
            let error = validate(&spec).unwrap_err().to_string();
            assert!(error.starts_with(expected), "{expected} vs {error}");
        }
        let pinned = validate(&HostEntry {
            fingerprint: Some("ab".repeat(32)),
            ..spec("a", "https://a")
        })
        .unwrap();
        assert_eq!(pinned.fingerprint.unwrap(), ["AB"; 32].join(":"));
    }
}
