//! Workspace-level tests: `it/` runs real `ebb-agent` and `ebb` processes on loopback, `e2e/`
//! drives the app in the real webview (one file per view, `e2e/support.rs` for the session).
//! Their helpers live in `ebb-testkit`; this library has nothing of its own.
