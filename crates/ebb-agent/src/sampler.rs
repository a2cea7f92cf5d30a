//! The one task that reads the probe; everything else reads its latest snapshot, or the
//! numbered samples of the last minute (`/v1/samples`, so a collector stores every one).

use crate::probe::GpuProbe;
use crate::spot::SpotOffer;
use ebb_wire::agent::GpuList;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// How long the numbered samples are kept for collectors that fell behind.
pub const SAMPLE_HISTORY: Duration = Duration::from_secs(60);

/// The samples of the last [`SAMPLE_HISTORY`], numbered from 1 in this run of the agent.
#[derive(Debug, Clone)]
pub struct SampleHistory {
    boot: Arc<str>,
    kept: Arc<Mutex<Kept>>,
}

#[derive(Debug, Default)]
struct Kept {
    capacity: usize,
    last_seq: u64,
    samples: VecDeque<Arc<GpuList>>,
}

/// What [`SampleHistory::after`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct Since {
    pub boot: String,
    pub last_seq: u64,
    pub missed: u64,
    pub samples: Vec<Arc<GpuList>>,
}

impl SampleHistory {
    /// Keeps `capacity` samples (at least 2); `boot` names this run.
    pub fn new(boot: String, capacity: usize) -> Self {
        Self {
            boot: boot.into(),
            kept: Arc::new(Mutex::new(Kept {
                capacity: capacity.max(2),
                ..Kept::default()
            })),
        }
    }

    /// Enough samples for [`SAMPLE_HISTORY`] at `interval`, under a fresh boot id.
    pub fn for_interval(interval: Duration) -> Self {
        let per_history = SAMPLE_HISTORY.as_millis() / interval.as_millis().max(1);
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let boot = format!("{:x}-{:x}", now.as_millis(), std::process::id());
        Self::new(boot, usize::try_from(per_history).unwrap_or(usize::MAX))
    }

    pub fn push(&self, sample: Arc<GpuList>) {
        let mut kept = self.kept.lock().expect("sample history lock");
        kept.last_seq += 1;
        if kept.samples.len() == kept.capacity {
            kept.samples.pop_front();
        }
        kept.samples.push_back(sample);
    }

    /// The samples after number `after` of boot `boot`: all those kept when the boot is
    /// another or none, with how many after `after` are no longer kept.
    pub fn after(&self, boot: Option<&str>, after: u64) -> Since {
        let kept = self.kept.lock().expect("sample history lock");
        let first_kept = kept.last_seq + 1 - kept.samples.len() as u64;
        let same_boot = boot == Some(&*self.boot);
        let after = if same_boot {
            after.min(kept.last_seq)
        } else {
            0
        };
        let from = (after + 1).max(first_kept);
        let skip = usize::try_from(from - first_kept).unwrap_or(usize::MAX);
        Since {
            boot: self.boot.to_string(),
            last_seq: kept.last_seq,
            // From another run nothing was missed: the numbering began again.
            missed: if same_boot { from - (after + 1) } else { 0 },
            samples: kept.samples.iter().skip(skip).cloned().collect(),
        }
    }
}

/// Reads the probe every interval and publishes a [`GpuList`].
#[derive(Debug)]
pub struct Sampler {
    latest: watch::Receiver<Arc<GpuList>>,
    history: SampleHistory,
    task: JoinHandle<()>,
}

impl Sampler {
    /// Takes the first sample at once, then one every `interval`; each with the GPUs
    /// `spot` names marked as spot, whatever the probe.
    pub fn start(
        host: String,
        probe: Arc<dyn GpuProbe>,
        interval: Duration,
        spot: SpotOffer,
    ) -> Self {
        let history = SampleHistory::for_interval(interval);
        let first = Arc::new(sample(&host, probe.as_ref(), &spot));
        history.push(first.clone());
        let (publish, latest) = watch::channel(first);
        let kept = history.clone();
        let task = tokio::spawn(async move {
            let mut ticks = tokio::time::interval(interval);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
            ticks.tick().await;
            loop {
                ticks.tick().await;
                let next = Arc::new(sample(&host, probe.as_ref(), &spot));
                kept.push(next.clone());
                if publish.send(next).is_err() {
                    break;
                }
            }
        });
        Self {
            latest,
            history,
            task,
        }
    }

    /// A handle on the latest sample.
    pub fn latest(&self) -> watch::Receiver<Arc<GpuList>> {
        self.latest.clone()
    }

    /// A handle on the numbered samples of the last minute.
    pub fn history(&self) -> SampleHistory {
        self.history.clone()
    }

    pub async fn stop(self) {
        self.task.abort();
        let _ = self.task.await;
    }
}

fn sample(host: &str, probe: &dyn GpuProbe, spot: &SpotOffer) -> GpuList {
    let now_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| elapsed.as_millis() as u64)
        .unwrap_or(0);
    let mut gpus = probe.read(now_ms);
    spot.mark(&mut gpus);
    GpuList {
        host: host.to_string(),
        sampled_at_ms: now_ms,
        gpus,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(at: u64) -> Arc<GpuList> {
        Arc::new(GpuList {
            host: "h".into(),
            sampled_at_ms: at,
            gpus: Vec::new(),
        })
    }

    fn times(since: &Since) -> Vec<u64> {
        since.samples.iter().map(|s| s.sampled_at_ms).collect()
    }

    #[test]
    fn a_collector_gets_each_sample_once_and_hears_of_those_it_missed() {
        let history = SampleHistory::new("b1".into(), 3);
        let empty = history.after(None, 0);
        assert_eq!(
            (empty.last_seq, empty.missed, empty.samples.len()),
            (0, 0, 0)
        );
        history.push(list(10));
        history.push(list(20));
        let first = history.after(None, 0);
        assert_eq!((first.last_seq, times(&first)), (2, vec![10, 20]));
        assert_eq!(times(&history.after(Some("b1"), 2)), Vec::<u64>::new());
        history.push(list(30));
        assert_eq!(times(&history.after(Some("b1"), 2)), vec![30]);
        // Three kept: 20, 30, 40 (numbers 2..=4); a collector at 0 missed number 1.
        history.push(list(40));
        let late = history.after(Some("b1"), 0);
        assert_eq!((late.missed, times(&late)), (1, vec![20, 30, 40]));
        // Another boot's number means nothing here: everything kept, nothing called missed.
        let other = history.after(Some("b0"), 9);
        assert_eq!(
            (other.missed, times(&other), other.last_seq),
            (0, vec![20, 30, 40], 4)
        );
        // A number from the future (a confused client) gives nothing new.
        assert!(history.after(Some("b1"), 99).samples.is_empty());
    }
}
