//! One way to call many hosts at once: every item's work as its own task, at most `limit`
//! running together, the answers gathered when all are done.

use std::future::Future;
use std::sync::Arc;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

/// Runs `work` for every item, at most `limit` at once (at least one), and returns the
/// answers in the order they finished. A task that panicked gives no answer; each call
/// must carry its own timeout (every agent call does).
pub async fn fan_out<I, T, F, Fut>(
    items: impl IntoIterator<Item = I>,
    limit: usize,
    work: F,
) -> Vec<T>
where
    F: Fn(I) -> Fut,
    Fut: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    let permits = Arc::new(Semaphore::new(limit.max(1)));
    let mut tasks = JoinSet::new();
    for item in items {
        let permits = permits.clone();
        // An async block does nothing until polled, so the work starts under the permit.
        let task = work(item);
        tasks.spawn(async move {
            let _permit = permits.acquire_owned().await;
            task.await
        });
    }
    let mut answers = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        if let Ok(answer) = joined {
            answers.push(answer);
        }
    }
    answers
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn runs_everything_with_at_most_limit_at_once() {
        let running = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let mut answers = fan_out(0..10u32, 3, |n| {
            let running = running.clone();
            let peak = peak.clone();
            async move {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(100)).await;
                running.fetch_sub(1, Ordering::SeqCst);
                n * 2
            }
        })
        .await;
        answers.sort_unstable();
        assert_eq!(answers, (0..10).map(|n| n * 2).collect::<Vec<_>>());
        assert_eq!(
            peak.load(Ordering::SeqCst),
            3,
            "the limit holds and is used"
        );
    }

    #[tokio::test]
    async fn a_panicking_task_gives_no_answer_and_the_rest_do() {
        let answers = fan_out([1, 2, 3], 0, |n| async move {
            assert_ne!(n, 2, "boom");
            n
        })
        .await;
        let mut answers = answers;
        answers.sort_unstable();
        assert_eq!(answers, [1, 3]);
    }
}
