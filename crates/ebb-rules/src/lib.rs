//! Ebb's auto-scaling rules engine, pure: no IO, no clock, no runtime (its `Cargo.toml`
//! proves it, and `cargo xtask test` checks). Rules and observations in, decisions out,
//! so it can be tested in the thousands and replayed over a month of minutes in
//! milliseconds.
//!
//! - [`model`]: the rule set of one pool (TOML), validated with the line and field of
//!   every problem;
//! - [`decide`]: `(rules, pool state, metric windows, now) -> Decision`, every clamp named;
//! - [`lint`]: warnings before a rule set is saved (flapping, dead zones, fights);
//! - [`replay`]: a rule set (or a baseline, or the oracle) against a trace, priced by the
//!   billing model;
//! - [`suggest`]: a rule file chosen by replay.
//!
//! [`policy`] is the seam: replay asks a [`policy::Policy`] each minute, and the rules
//! (through [`decide`]), the baselines and the oracle are policies.

pub mod decide;
pub mod lint;
pub mod model;
pub mod model_toml;
pub mod policy;
pub mod promql;
pub mod replay;
pub mod rules_policy;
pub mod suggest;
