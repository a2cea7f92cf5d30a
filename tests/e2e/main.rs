//! The app in the real webview: tauri-driver in front of WebKitWebDriver, under Xvfb.
//!
//! Needs the custom-protocol build of `ebb-desktop`, `tauri-driver` and a display;
//! `cargo xtask test` provides all three and runs this with `--ignored`. One file per view;
//! `support` holds the one session helper they share.
// Tests read as their story, start to end: no line budget for them.
#![allow(clippy::too_many_lines)]

mod costs;
mod demo_rules;
mod fleet;
mod host_detail;
mod host_drain;
mod pool;
mod pool_chart;
mod pool_release;
mod pool_rules;
mod roles;
mod rules;
mod settings_hosts;
mod soak;
mod support;
mod zh_sweep;
