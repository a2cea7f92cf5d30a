//! Waiting for something to become true, and saying what was seen when it never did.

use std::fmt::Debug;
use std::future::Future;
use std::time::Duration;

/// What one look of a probe found: the value waited for, or what was seen instead.
pub trait Probe {
    type Value;
    /// `Ok(value)` ends the wait; `Err(seen)` says what this look found instead.
    fn look(self) -> Result<Self::Value, String>;
}

impl<T> Probe for Option<T> {
    type Value = T;
    fn look(self) -> Result<T, String> {
        self.ok_or_else(|| "nothing yet".to_string())
    }
}

impl<T, E: Debug> Probe for Result<T, E> {
    type Value = T;
    fn look(self) -> Result<T, String> {
        self.map_err(|seen| format!("{seen:?}"))
    }
}

impl Probe for bool {
    type Value = ();
    fn look(self) -> Result<(), String> {
        if self { Ok(()) } else { Err("false".into()) }
    }
}

/// A wait that ran out: what was waited for, for how long, and the last thing seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timeout {
    pub what: String,
    pub after: Duration,
    pub last_seen: String,
    pub looks: u32,
}

impl std::fmt::Display for Timeout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "timed out after {:?} ({} looks) waiting for {}; last saw: {}",
            self.after, self.looks, self.what, self.last_seen
        )
    }
}

/// How long to sleep between two looks: short at first, then a fifth of a second.
fn pause(looks: u32) -> Duration {
    Duration::from_millis(match looks {
        0..=4 => 10,
        5..=14 => 50,
        _ => 200,
    })
}

/// Polls `probe` until it succeeds or `timeout` passes; the error says what it saw last.
///
/// Runs on tokio's clock, so under `start_paused` a wait costs no real time.
pub async fn try_eventually<P, F, Fut>(
    what: &str,
    timeout: Duration,
    mut probe: F,
) -> Result<P::Value, Timeout>
where
    P: Probe,
    F: FnMut() -> Fut,
    Fut: Future<Output = P>,
{
    let started = tokio::time::Instant::now();
    let mut looks = 0;
    loop {
        let seen = match probe().await.look() {
            Ok(value) => return Ok(value),
            Err(seen) => seen,
        };
        looks += 1;
        if started.elapsed() >= timeout {
            return Err(Timeout {
                what: what.to_string(),
                after: timeout,
                last_seen: seen,
                looks,
            });
        }
        tokio::time::sleep(pause(looks)).await;
    }
}

/// [`try_eventually`], panicking with what it saw last.
pub async fn eventually<P, F, Fut>(what: &str, timeout: Duration, probe: F) -> P::Value
where
    P: Probe,
    F: FnMut() -> Fut,
    Fut: Future<Output = P>,
{
    match try_eventually(what, timeout, probe).await {
        Ok(value) => value,
        Err(timeout) => panic!("{timeout}"),
    }
}

/// [`eventually`] for a test without a runtime: sleeps the thread between looks.
pub fn eventually_blocking<P, F>(what: &str, timeout: Duration, mut probe: F) -> P::Value
where
    P: Probe,
    F: FnMut() -> P,
{
    let started = std::time::Instant::now();
    let mut looks = 0;
    loop {
        let seen = match probe().look() {
            Ok(value) => return value,
            Err(seen) => seen,
        };
        looks += 1;
        if started.elapsed() >= timeout {
            panic!(
                "{}",
                Timeout {
                    what: what.to_string(),
                    after: timeout,
                    last_seen: seen,
                    looks,
                }
            );
        }
        std::thread::sleep(pause(looks));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_wait_that_runs_out_names_what_it_saw_last() {
        let mut count = 0;
        let timeout = try_eventually("three", Duration::from_secs(2), || {
            count += 1;
            let seen = count;
            async move { if seen > 1_000 { Ok(()) } else { Err(seen) } }
        })
        .await
        .unwrap_err();
        assert_eq!(timeout.last_seen, timeout.looks.to_string());
        assert!(timeout.to_string().contains("waiting for three; last saw:"));
    }

    #[tokio::test(start_paused = true)]
    async fn a_wait_returns_the_value_once_the_probe_has_it() {
        let mut count = 0;
        let value = eventually("the fifth look", Duration::from_secs(60), || {
            count += 1;
            let seen = count;
            async move { (seen == 5).then_some(seen) }
        })
        .await;
        assert_eq!(value, 5);
    }

    #[test]
    #[should_panic(expected = "last saw: false")]
    fn a_blocking_wait_panics_with_what_it_saw() {
        eventually_blocking("never", Duration::from_millis(30), || false);
    }
}
