//! Workspace-level tests live in `it/` and `e2e/`.
