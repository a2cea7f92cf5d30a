//! Keeping pools at their desired count: the reconcile loop (`enforcer`), the seam to
//! whatever rents GPUs (`provider`), the fleet's capacity facts, and each pool's recorded
//! history (desired, ready, warming, utilization; delivery times).

pub mod capacity;
pub mod enforcer;
pub mod pool_history;
pub mod provider;
pub mod sender;
pub(crate) mod spot;
