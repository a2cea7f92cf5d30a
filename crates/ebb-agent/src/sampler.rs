//! The one task that reads the probe; everything else reads its latest snapshot.

use crate::probe::GpuProbe;
use ebb_wire::agent::GpuList;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// Reads the probe every interval and publishes a [`GpuList`].
#[derive(Debug)]
pub struct Sampler {
    latest: watch::Receiver<Arc<GpuList>>,
    task: JoinHandle<()>,
}

impl Sampler {
    /// Takes the first sample at once, then one every `interval`.
    pub fn start(host: String, probe: Arc<dyn GpuProbe>, interval: Duration) -> Self {
        let first = sample(&host, probe.as_ref());
        let (publish, latest) = watch::channel(Arc::new(first));
        let task = tokio::spawn(async move {
            let mut ticks = tokio::time::interval(interval);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
            ticks.tick().await;
            loop {
                ticks.tick().await;
                if publish
                    .send(Arc::new(sample(&host, probe.as_ref())))
                    .is_err()
                {
                    break;
                }
            }
        });
        Self { latest, task }
    }

    /// A handle on the latest sample.
    pub fn latest(&self) -> watch::Receiver<Arc<GpuList>> {
        self.latest.clone()
    }

    pub async fn stop(self) {
        self.task.abort();
        let _ = self.task.await;
    }
}

fn sample(host: &str, probe: &dyn GpuProbe) -> GpuList {
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| elapsed.as_millis() as u64)
        .unwrap_or(0);
    GpuList {
        host: host.to_string(),
        sampled_at_ms: now_ms,
        gpus: probe.read(now_ms),
    }
}
