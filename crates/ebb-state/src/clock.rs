//! The console's clock, injected. Pure code takes the time as a parameter; the shells (the
//! stores, the enforcer) ask the [`Clock`] their [`crate::db::ConsoleDb`] carries, so a test
//! can run them on virtual time ([`TokioClock`] under `tokio::time::pause`) or on a clock
//! it sets by hand ([`ManualClock`]).

use std::fmt::Debug;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Where the shells read "now".
pub trait Clock: Send + Sync + Debug {
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> i64;
}

/// A shared clock.
pub type SharedClock = Arc<dyn Clock>;

/// The wall clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        now_ms()
    }
}

/// The wall clock at creation, moved on by tokio's clock: under `tokio::time::pause` it
/// advances exactly as virtual time does (`advance`, auto-advance while idle).
#[derive(Debug, Clone, Copy)]
pub struct TokioClock {
    start_ms: i64,
    start: tokio::time::Instant,
}

impl TokioClock {
    /// Starts at `start_ms` (call it inside the runtime whose clock it follows).
    pub fn starting_at(start_ms: i64) -> Self {
        Self {
            start_ms,
            start: tokio::time::Instant::now(),
        }
    }
}

impl Clock for TokioClock {
    fn now_ms(&self) -> i64 {
        let elapsed = i64::try_from(self.start.elapsed().as_millis()).unwrap_or(i64::MAX);
        self.start_ms.saturating_add(elapsed)
    }
}

/// A clock that moves only when told.
#[derive(Debug, Default)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    pub fn new(start_ms: i64) -> Self {
        Self(AtomicI64::new(start_ms))
    }

    pub fn advance(&self, by: Duration) {
        let by = i64::try_from(by.as_millis()).unwrap_or(i64::MAX);
        self.0.fetch_add(by, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// Milliseconds since the Unix epoch on the wall clock (0 if the clock is before it).
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| i64::try_from(elapsed.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn the_tokio_clock_follows_virtual_time() {
        let clock = TokioClock::starting_at(1_000);
        assert_eq!(clock.now_ms(), 1_000);
        tokio::time::advance(Duration::from_secs(31)).await;
        assert_eq!(clock.now_ms(), 32_000);
    }

    #[test]
    fn the_manual_clock_moves_when_told() {
        let clock = ManualClock::new(5);
        clock.advance(Duration::from_millis(10));
        assert_eq!(clock.now_ms(), 15);
    }
}
