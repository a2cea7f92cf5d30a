//! Rules, live: enforced after each pass (`rules_live`), linted, saved and shown
//! (`console_rules`), replayed and suggested (`rules_replay`), fed by pushed metrics
//! (`metrics_api`).

pub mod console_rules;
pub mod metrics_api;
pub mod promql_live;
pub mod rules_live;
pub mod rules_replay;
