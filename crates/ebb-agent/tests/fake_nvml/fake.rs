//! Builds the fake `libnvidia-ml.so.1` (`fake_nvml.c`) with the system C compiler.
//!
//! Shared by the `it` tests and the `nvml_sample` bench through `#[path]`. Each caller
//! gets its own directory and its own copy of the library, so copies loaded into one
//! process never share state; the script sits next to the library, where the fake looks.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A fake NVML library built into its own directory, with its script beside it.
#[derive(Debug)]
pub struct FakeNvml {
    library: PathBuf,
}

impl FakeNvml {
    /// Compiles the fake into `<CARGO_TARGET_TMPDIR>/fake-nvml/<name>/` (emptied first)
    /// and writes `script` beside it. `name` must be unique among the callers in a process.
    pub fn build(name: &str, script: &str) -> Self {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join("fake-nvml")
            .join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake_nvml/fake_nvml.c");
        let library = dir.join("libnvidia-ml.so.1");
        let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
        let output = Command::new(&compiler)
            .args(["-shared", "-fPIC", "-O1", "-Wall", "-o"])
            .arg(&library)
            .arg(&source)
            .arg("-ldl")
            .output()
            .unwrap_or_else(|error| panic!("cannot run the C compiler `{compiler}`: {error}"));
        assert!(
            output.status.success(),
            "{compiler} failed to build the fake NVML:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        std::fs::write(dir.join("fake_nvml.script"), script).unwrap();
        Self { library }
    }

    /// The library to hand to `NvmlProbe::open`.
    pub fn library(&self) -> &Path {
        &self.library
    }
}
