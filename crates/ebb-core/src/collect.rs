//! Collection: polls every registered agent each interval and publishes what the fleet
//! looks like. One collector publishes; the shell, the CLI and the charts only read.

use crate::client::{AgentClient, AgentError, ClientConfig};
use crate::series::UtilHistory;
use ebb_wire::agent::GpuList;
use ebb_wire::ipc::{FleetSnapshot, Health, HostStatus};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};

/// A host to collect from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub name: String,
    pub url: String,
    pub region: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CollectorConfig {
    /// Time between the starts of two rounds.
    pub interval: Duration,
    pub client: ClientConfig,
    /// Readings kept per GPU for the live chart.
    pub history_points: usize,
}

impl Default for CollectorConfig {
    fn default() -> Self {
        Self {
            interval: Duration::from_secs(1),
            client: ClientConfig::default(),
            history_points: 120,
        }
    }
}

/// What the collector knows after a round.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetState {
    pub snapshot: FleetSnapshot,
    pub history: UtilHistory,
}

/// The running collector. Dropping it without [`Collector::stop`] aborts the task.
#[derive(Debug)]
pub struct Collector {
    state: watch::Receiver<Arc<FleetState>>,
    task: Option<JoinHandle<()>>,
}

impl Collector {
    /// Checks every target's URL, then starts polling. The first round starts at once.
    pub fn start(targets: Vec<Target>, config: CollectorConfig) -> Result<Self, AgentError> {
        let clients = targets
            .iter()
            .map(|target| AgentClient::new(&target.url, config.client))
            .collect::<Result<Vec<_>, _>>()?;
        let mut fleet = FleetState {
            snapshot: FleetSnapshot {
                tick: 0,
                hosts: targets.iter().map(unknown_status).collect(),
            },
            history: UtilHistory::new(config.history_points),
        };
        let (publish, state) = watch::channel(Arc::new(fleet.clone()));
        let task = tokio::spawn(async move {
            let mut ticks = tokio::time::interval(config.interval);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                let results = poll_all(&clients).await;
                apply_round(&mut fleet, &results);
                if publish.send(Arc::new(fleet.clone())).is_err() {
                    break;
                }
            }
        });
        Ok(Self {
            state,
            task: Some(task),
        })
    }

    /// A handle on the latest state; `changed()` wakes once per round.
    pub fn subscribe(&self) -> watch::Receiver<Arc<FleetState>> {
        self.state.clone()
    }

    pub fn latest(&self) -> Arc<FleetState> {
        self.state.borrow().clone()
    }

    pub async fn stop(mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
            let _ = task.await;
        }
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

fn unknown_status(target: &Target) -> HostStatus {
    HostStatus {
        name: target.name.clone(),
        url: target.url.clone(),
        region: target.region.clone(),
        health: Health::Unknown,
        gpu_count: 0,
        models: Vec::new(),
        mean_util_pct: None,
        last_error: None,
    }
}

/// Polls every host at once; each call is bounded by the client's timeouts, so a slow
/// host costs the round at most one timeout and never delays the others' results.
async fn poll_all(clients: &[AgentClient]) -> Vec<Result<GpuList, AgentError>> {
    let mut calls = JoinSet::new();
    for (position, client) in clients.iter().enumerate() {
        let client = client.clone();
        calls.spawn(async move { (position, client.gpus().await) });
    }
    let mut results: Vec<Option<Result<GpuList, AgentError>>> =
        (0..clients.len()).map(|_| None).collect();
    while let Some(joined) = calls.join_next().await {
        if let Ok((position, result)) = joined {
            results[position] = Some(result);
        }
    }
    results
        .into_iter()
        .zip(clients)
        .map(|(result, client)| {
            result.unwrap_or_else(|| {
                Err(AgentError::Connect {
                    url: client.base_url().to_string(),
                    reason: "the poll task failed".into(),
                })
            })
        })
        .collect()
}

/// Folds one round of results into the fleet state. Pure.
pub fn apply_round(fleet: &mut FleetState, results: &[Result<GpuList, AgentError>]) {
    fleet.snapshot.tick = fleet.snapshot.tick.wrapping_add(1);
    for (host, result) in fleet.snapshot.hosts.iter_mut().zip(results) {
        match result {
            Ok(list) => {
                fleet.history.record(&host.name, list);
                let mut models: Vec<String> =
                    list.gpus.iter().map(|gpu| gpu.model.clone()).collect();
                models.sort();
                models.dedup();
                let utils: Vec<f32> = list
                    .gpus
                    .iter()
                    .filter_map(|gpu| gpu.gpu_util_pct)
                    .collect();
                host.health = Health::Online;
                host.gpu_count = list.gpus.len() as u32;
                host.models = models;
                host.mean_util_pct =
                    (!utils.is_empty()).then(|| utils.iter().sum::<f32>() / utils.len() as f32);
                host.last_error = None;
            }
            Err(error) => {
                host.health = Health::Offline;
                host.mean_util_pct = None;
                host.last_error = Some(error.to_string());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ebb_wire::agent::Gpu;

    fn gpu(index: u32, model: &str, util: Option<f32>) -> Gpu {
        Gpu {
            index,
            uuid: format!("GPU-{index}"),
            model: model.into(),
            memory_total_mib: 1024,
            memory_used_mib: None,
            gpu_util_pct: util,
            memory_util_pct: None,
            temperature_c: None,
            power_draw_w: None,
            power_limit_w: None,
            ..Default::default()
        }
    }

    fn fleet() -> FleetState {
        let targets = [("a", "cn-north"), ("b", "cn-east")].map(|(name, region)| Target {
            name: name.into(),
            url: format!("http://{name}"),
            region: region.into(),
        });
        FleetState {
            snapshot: FleetSnapshot {
                tick: 0,
                hosts: targets.iter().map(unknown_status).collect(),
            },
            history: UtilHistory::new(10),
        }
    }

    #[test]
    fn a_round_sets_health_counts_models_and_mean() {
        let mut state = fleet();
        let list = GpuList {
            host: "a".into(),
            sampled_at_ms: 1000,
            gpus: vec![
                gpu(0, "V100", Some(20.0)),
                gpu(1, "A100", Some(60.0)),
                gpu(2, "A100", None),
            ],
        };
        let down = AgentError::Timeout {
            url: "http://b".into(),
            timeout_ms: 900,
        };
        apply_round(&mut state, &[Ok(list), Err(down)]);
        let [a, b] = &state.snapshot.hosts[..] else {
            panic!("two hosts")
        };
        assert_eq!(state.snapshot.tick, 1);
        assert_eq!(a.health, Health::Online);
        assert_eq!(a.gpu_count, 3);
        assert_eq!(a.models, vec!["A100".to_string(), "V100".to_string()]);
        assert_eq!(
            a.mean_util_pct,
            Some(40.0),
            "the GPU without a reading is left out"
        );
        assert_eq!(b.health, Health::Offline);
        assert_eq!(
            b.last_error.as_deref(),
            Some("no answer from http://b within 900 ms")
        );
        assert_eq!(state.history.host_series("a").len(), 2);
    }

    #[test]
    fn a_bad_target_url_stops_the_start_and_says_which() {
        let targets = vec![Target {
            name: "x".into(),
            url: "not a url".into(),
            region: "r".into(),
        }];
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let _guard = runtime.enter();
        let error = Collector::start(targets, CollectorConfig::default()).unwrap_err();
        assert!(error.to_string().contains("`not a url`"), "{error}");
    }
}
