//! Temporary directories, one per test, removed when the test is done with them.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Set to a PostgreSQL server's URL (`postgres://user@127.0.0.1:port`, no database), test
/// directories name a fresh database there for their console (see [`TempDir::new`]).
pub const POSTGRES_ENV: &str = "EBB_TEST_POSTGRES";

/// A fresh, empty directory under the system's temp dir, removed on drop. With
/// [`POSTGRES_ENV`] set it holds a `console.toml` naming a fresh database on that server.
///
/// `EBB_KEEP_TEST_DIRS=1` keeps the directory of a test that panics (and prints where it
/// is); `EBB_KEEP_TEST_DIRS=all` keeps every one.
#[derive(Debug)]
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    /// `tag` names the test in the directory's name, so a kept one is easy to find.
    pub fn new(tag: &str) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|since| since.subsec_nanos())
            .unwrap_or_default();
        let path = std::env::temp_dir().join(format!(
            "ebb-test-{tag}-{}-{}-{nanos}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed),
        ));
        std::fs::create_dir_all(&path)
            .unwrap_or_else(|error| panic!("cannot create {}: {error}", path.display()));
        // The console suites' second run: every console on a test directory keeps its state
        // in a fresh PostgreSQL database on the test server instead of console.db.
        if let Ok(server) = std::env::var(POSTGRES_ENV) {
            let database = format!(
                "ebb_{}_{}_{nanos}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            );
            let config = format!(
                "database = \"{}/{database}\"\n",
                server.trim_end_matches('/')
            );
            std::fs::write(path.join("console.toml"), config)
                .unwrap_or_else(|error| panic!("cannot write {}: {error}", path.display()));
        }
        Self { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `path/name`, not created.
    pub fn join(&self, name: impl AsRef<Path>) -> PathBuf {
        self.path.join(name)
    }

    /// `path/name`, created (with its parents).
    pub fn subdir(&self, name: impl AsRef<Path>) -> PathBuf {
        let dir = self.path.join(name);
        std::fs::create_dir_all(&dir)
            .unwrap_or_else(|error| panic!("cannot create {}: {error}", dir.display()));
        dir
    }
}

/// A `&TempDir` goes wherever a `&Path` does.
impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let keep = std::env::var("EBB_KEEP_TEST_DIRS").unwrap_or_default();
        if keep == "all" || (!keep.is_empty() && std::thread::panicking()) {
            eprintln!("kept {}", self.path.display());
            return;
        }
        let _ = std::fs::remove_dir_all(&self.path);
    }
}
