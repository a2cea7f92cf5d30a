//! An error as the operator reads it: the chain of causes once each (a layer that repeats
//! its source's words is not said twice), led by what the storage problem is when the data
//! directory's disk is full or another process holds `console.db` locked.

use std::io::Write as _;
use std::path::Path;

/// Leads `error` with the storage problem behind it, if there is one: the disk holding
/// `data_dir` full (found by trying to write there, whatever the layers made of SQLite's
/// error), or the database locked by another process past the busy timeout.
pub fn explain(error: anyhow::Error, data_dir: Option<&Path>) -> anyhow::Error {
    if let Some(dir) = data_dir
        && disk_full(dir)
    {
        return error.context(format!(
            "the disk holding {} is full: free some space and run the command again",
            dir.display()
        ));
    }
    let text = words(&error);
    if text.contains("database is locked") || text.contains("database table is locked") {
        return error.context(
            "another process holds the console database (console.db) locked and kept it past the 5 s wait: run the command again once it is done",
        );
    }
    error
}

/// The chain of causes joined by ": ", each said once.
pub fn words(error: &anyhow::Error) -> String {
    let mut said = String::new();
    for cause in error.chain() {
        let text = cause.to_string();
        if said.contains(&text) {
            continue;
        }
        if !said.is_empty() {
            said.push_str(": ");
        }
        said.push_str(&text);
    }
    said
}

/// Whether a small file can no longer be written in `dir` for want of space.
fn disk_full(dir: &Path) -> bool {
    if !dir.is_dir() {
        return false;
    }
    let probe = dir.join(".ebb-space-probe");
    let written = std::fs::File::create(&probe).and_then(|mut file| {
        file.write_all(&[0u8; 64 * 1024])?;
        file.sync_all()
    });
    let _ = std::fs::remove_file(&probe);
    matches!(written, Err(error) if error.kind() == std::io::ErrorKind::StorageFull)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_repeated_by_its_wrapper_is_said_once() {
        let inner = anyhow::anyhow!("(code: 5) database is locked");
        let error = inner
            .context("error returned from database: (code: 5) database is locked")
            .context("console database error: error returned from database: (code: 5) database is locked");
        assert_eq!(
            words(&error),
            "console database error: error returned from database: (code: 5) database is locked"
        );
        let lead = explain(error, None);
        assert!(
            words(&lead)
                .starts_with("another process holds the console database (console.db) locked"),
            "{}",
            words(&lead)
        );
    }

    #[test]
    fn other_errors_keep_every_cause() {
        let error = anyhow::anyhow!("no host named `h1`").context("cannot scale");
        assert_eq!(
            words(&explain(error, None)),
            "cannot scale: no host named `h1`"
        );
    }
}
