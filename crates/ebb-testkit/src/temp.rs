//! Temporary directories, one per test, removed when the test is done with them.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A fresh, empty directory under the system's temp dir, removed on drop.
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
