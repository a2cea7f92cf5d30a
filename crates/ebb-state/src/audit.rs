//! The audit log: every change (who, as what role, what, before → after, when), each entry
//! carrying the hash of the one before it, so an entry edited, deleted or moved in the
//! database breaks the chain where it is ([`verify`] names the first).
//!
//! An entry is written in the transaction of the change it records, under the one-writer
//! lock every write takes ([`ConsoleDb::begin_write`]), so ids run 1, 2, 3… with no gap and
//! each links to the entry before. Its hash is SHA-256 over its id, time, who, role, what,
//! subject, before, after and the previous hash. On a shared PostgreSQL after `ebb admin
//! init` no Ebb role may change or delete an entry, and each may only write entries in its
//! own name (row-level security); the chain finds what the tables' owner or a superuser
//! changes by hand. The newest entries removed together leave a shorter chain that still
//! verifies: an export kept elsewhere shows them.

use crate::db::{ConsoleDb, DbRow};
use ebb_wire::access::{AuditBreak, AuditEntry, AuditProblem, AuditVerdict, Identity};
use sha2::{Digest, Sha256};
use sqlx::Row;

/// One change to record.
#[derive(Debug, Clone)]
pub struct Change<'a> {
    pub what: &'a str,
    pub subject: &'a str,
    pub before: &'a str,
    pub after: &'a str,
}

/// The hash an entry carries.
pub fn entry_hash(entry: &AuditEntry) -> String {
    let mut hasher = Sha256::new();
    for field in [
        entry.id.to_string().as_str(),
        entry.at_ms.to_string().as_str(),
        &entry.who,
        &entry.role,
        &entry.what,
        &entry.subject,
        &entry.before,
        &entry.after,
        &entry.prev_hash,
    ] {
        hasher.update(field.as_bytes());
        hasher.update([0x1f]);
    }
    hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// Appends `change` to the chain, in the caller's write transaction
/// ([`ConsoleDb::begin_write`]: its one-writer lock keeps the ids and links in order).
pub async fn append(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    identity: &Identity,
    at_ms: i64,
    change: &Change<'_>,
) -> Result<i64, sqlx::Error> {
    let last = sqlx::query("SELECT id, hash FROM audit ORDER BY id DESC LIMIT 1")
        .fetch_optional(&mut **tx)
        .await?;
    let (id, prev_hash) = match last {
        Some(row) => (row.get::<i64, _>("id") + 1, row.get::<String, _>("hash")),
        None => (1, String::new()),
    };
    let mut entry = AuditEntry {
        id,
        at_ms,
        who: identity.who.clone(),
        role: identity.role.name().to_string(),
        what: change.what.to_string(),
        subject: change.subject.to_string(),
        before: change.before.to_string(),
        after: change.after.to_string(),
        prev_hash,
        hash: String::new(),
    };
    entry.hash = entry_hash(&entry);
    sqlx::query(
        "INSERT INTO audit (id, at_ms, who, role, what, subject, before, after, prev_hash, hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
    )
    .bind(entry.id)
    .bind(entry.at_ms)
    .bind(&entry.who)
    .bind(&entry.role)
    .bind(&entry.what)
    .bind(&entry.subject)
    .bind(&entry.before)
    .bind(&entry.after)
    .bind(&entry.prev_hash)
    .bind(&entry.hash)
    .execute(&mut **tx)
    .await?;
    Ok(id)
}

fn entry_row(row: &DbRow) -> AuditEntry {
    AuditEntry {
        id: row.get("id"),
        at_ms: row.get("at_ms"),
        who: row.get("who"),
        role: row.get("role"),
        what: row.get("what"),
        subject: row.get("subject"),
        before: row.get("before"),
        after: row.get("after"),
        prev_hash: row.get("prev_hash"),
        hash: row.get("hash"),
    }
}

/// Every entry, oldest first.
pub async fn entries(db: &ConsoleDb) -> Result<Vec<AuditEntry>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT id, at_ms, who, role, what, subject, before, after, prev_hash, hash FROM audit ORDER BY id",
    )
    .fetch_all(db.pool())
    .await?;
    Ok(rows.iter().map(entry_row).collect())
}

/// Where the chain of `entries` (oldest first) first breaks, if it does.
pub fn check(entries: &[AuditEntry]) -> AuditVerdict {
    let mut expected_id = 1;
    let mut prev_hash = String::new();
    let broken = entries.iter().find_map(|entry| {
        let found = if entry.id != expected_id {
            Some(AuditBreak {
                id: expected_id,
                problem: AuditProblem::Deleted,
            })
        } else if entry.prev_hash != prev_hash {
            Some(AuditBreak {
                id: entry.id,
                problem: AuditProblem::Reordered,
            })
        } else if entry_hash(entry) != entry.hash {
            Some(AuditBreak {
                id: entry.id,
                problem: AuditProblem::Edited,
            })
        } else {
            None
        };
        expected_id = entry.id + 1;
        prev_hash = entry.hash.clone();
        found
    });
    AuditVerdict {
        entries: u32::try_from(entries.len()).unwrap_or(u32::MAX),
        broken,
    }
}

/// Reads the whole chain and checks it.
pub async fn verify(db: &ConsoleDb) -> Result<AuditVerdict, sqlx::Error> {
    Ok(check(&entries(db).await?))
}

/// The chain as JSON lines, oldest first.
pub fn json_lines(entries: &[AuditEntry]) -> String {
    entries
        .iter()
        .map(|entry| serde_json::to_string(entry).expect("an entry serializes") + "\n")
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(n: i64) -> Vec<AuditEntry> {
        let mut entries: Vec<AuditEntry> = Vec::new();
        for id in 1..=n {
            let mut entry = AuditEntry {
                id,
                at_ms: 1_000 * id,
                who: "alice".into(),
                role: "admin".into(),
                what: "slider".into(),
                subject: "web".into(),
                before: format!("{id} GPUs"),
                after: format!("{} GPUs", id + 1),
                prev_hash: entries.last().map(|e| e.hash.clone()).unwrap_or_default(),
                hash: String::new(),
            };
            entry.hash = entry_hash(&entry);
            entries.push(entry);
        }
        entries
    }

    #[test]
    fn an_untouched_chain_verifies() {
        let verdict = check(&chain(5));
        assert_eq!(verdict.entries, 5);
        assert_eq!(verdict.broken, None);
        assert_eq!(check(&[]).broken, None);
    }

    #[test]
    fn an_edited_entry_is_named() {
        let mut entries = chain(5);
        entries[2].after = "40 GPUs".into();
        assert_eq!(
            check(&entries).broken,
            Some(AuditBreak {
                id: 3,
                problem: AuditProblem::Edited
            })
        );
        // Its hash made again to match: the next entry no longer follows it.
        entries[2].hash = entry_hash(&entries[2]);
        assert_eq!(
            check(&entries).broken,
            Some(AuditBreak {
                id: 4,
                problem: AuditProblem::Reordered
            })
        );
    }

    #[test]
    fn a_deleted_entry_and_a_swapped_pair_are_named() {
        let mut entries = chain(5);
        entries.remove(1);
        assert_eq!(
            check(&entries).broken,
            Some(AuditBreak {
                id: 2,
                problem: AuditProblem::Deleted
            })
        );
        let mut entries = chain(5);
        // Two entries' contents swapped, ids kept.
        let (a, b) = (entries[1].clone(), entries[2].clone());
        entries[1] = AuditEntry { id: 2, ..b };
        entries[2] = AuditEntry { id: 3, ..a };
        assert_eq!(
            check(&entries).broken,
            Some(AuditBreak {
                id: 2,
                problem: AuditProblem::Reordered
            })
        );
    }
}
