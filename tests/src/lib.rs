//! Helpers shared by the workspace-level tests in `it/` and `e2e/`.

use std::path::PathBuf;

/// A binary of this workspace, next to the test executable's `deps/` folder.
///
/// `cargo xtask test` builds every binary first; a plain `cargo test` may not have.
pub fn workspace_bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable's path");
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>/deps/<test>");
    let path = profile_dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{} is missing: run `cargo build --workspace --bins` (cargo xtask test does)",
        path.display()
    );
    path
}
