//! Collection: one supervised task per host polls its agent at the interval, with
//! timeouts, bounded concurrency and exponential backoff with jitter for failing hosts.
//! One supervisor folds the results into host health and publishes a snapshot per tick;
//! a slow or hung host only ever delays itself.

use crate::client::{AgentAccess, AgentClient, AgentError, ClientConfig, SharedHttp};
use ebb_wire::agent::{Gpu, GpuList};
use ebb_wire::ipc::{FleetSnapshot, Health, HostStatus};
use ebb_wire::reasons::HostProblem;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Semaphore, mpsc, watch};
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::Instant;

/// A host to collect from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub name: String,
    pub region: String,
    pub access: AgentAccess,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CollectorConfig {
    /// Time between two polls of a healthy host, and between two published ticks.
    pub interval: Duration,
    pub client: ClientConfig,
    /// Polls in flight at once, over all hosts.
    pub max_concurrent_polls: usize,
    /// The longest wait between two polls of a failing host.
    pub max_backoff: Duration,
    /// Consecutive failures before a host is offline (before that it is degraded).
    pub offline_after_failures: u32,
}

impl Default for CollectorConfig {
    fn default() -> Self {
        Self {
            interval: Duration::from_secs(1),
            client: ClientConfig::default(),
            max_concurrent_polls: 256,
            max_backoff: Duration::from_secs(30),
            offline_after_failures: 3,
        }
    }
}

/// What the supervisor hands on after each tick: the snapshot, and every sample that
/// arrived since the last tick (for the metrics store), each `GpuList.host` set to the
/// host's registered name.
#[derive(Debug, Clone)]
pub struct Tick {
    pub snapshot: Arc<FleetSnapshot>,
    pub samples: Vec<Arc<GpuList>>,
}

enum Command {
    SetTargets(Vec<Target>),
}

/// Changes a running collector's targets; does nothing once it has stopped.
#[derive(Debug, Clone)]
pub struct TargetsHandle(mpsc::UnboundedSender<Command>);

impl TargetsHandle {
    pub fn set(&self, targets: Vec<Target>) {
        let _ = self.0.send(Command::SetTargets(targets));
    }
}

/// The running collector. [`Collector::stop`] ends every task.
#[derive(Debug)]
pub struct Collector {
    snapshot: watch::Receiver<Arc<FleetSnapshot>>,
    commands: mpsc::UnboundedSender<Command>,
    supervisor: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Command")
    }
}

impl Collector {
    /// Checks every target's URL, then starts polling; each tick goes to `sink` if given.
    pub fn start(
        targets: Vec<Target>,
        config: CollectorConfig,
        sink: Option<mpsc::Sender<Tick>>,
    ) -> Result<Self, AgentError> {
        // One HTTP client for all hosts (a pinned one has its own).
        let http = SharedHttp::new(config.client);
        for target in &targets {
            http.client(&target.access)?;
        }
        let (publish, snapshot) = watch::channel(Arc::new(FleetSnapshot {
            tick: 0,
            hosts: targets.iter().map(unknown_status).collect(),
            metrics_unavailable: None,
        }));
        let (commands, inbox) = mpsc::unbounded_channel();
        let supervisor = tokio::spawn(supervise(targets, config, http, publish, inbox, sink));
        Ok(Self {
            snapshot,
            commands,
            supervisor: Some(supervisor),
        })
    }

    /// A handle on the latest snapshot; `changed()` wakes once per tick.
    pub fn subscribe(&self) -> watch::Receiver<Arc<FleetSnapshot>> {
        self.snapshot.clone()
    }

    pub fn latest(&self) -> Arc<FleetSnapshot> {
        self.snapshot.borrow().clone()
    }

    /// Collects from exactly these hosts from now on: new ones start, removed ones stop,
    /// changed ones restart.
    pub fn set_targets(&self, targets: Vec<Target>) {
        self.targets_handle().set(targets);
    }

    /// A handle that can change the targets from another task.
    pub fn targets_handle(&self) -> TargetsHandle {
        TargetsHandle(self.commands.clone())
    }

    pub async fn stop(mut self) {
        if let Some(task) = self.supervisor.take() {
            task.abort();
            let _ = task.await;
        }
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        if let Some(task) = &self.supervisor {
            task.abort();
        }
    }
}

pub fn unknown_status(target: &Target) -> HostStatus {
    HostStatus {
        name: target.name.clone(),
        url: target.access.url.clone(),
        region: target.region.clone(),
        health: Health::Unknown,
        gpu_count: 0,
        models: Vec::new(),
        mean_util_pct: None,
        last_error: None,
        gpus: Vec::new(),
    }
}

/// A GPU's static facts and lease as last reported, every reading `None`: what is known of
/// a card on a host that does not answer now.
fn without_readings(gpu: &Gpu) -> Gpu {
    Gpu {
        index: gpu.index,
        uuid: gpu.uuid.clone(),
        model: gpu.model.clone(),
        memory_total_mib: gpu.memory_total_mib,
        healthy: gpu.healthy,
        health_reason: gpu.health_reason.clone(),
        lease_id: gpu.lease_id.clone(),
        power_limit_w: gpu.power_limit_w,
        ..Gpu::default()
    }
}

/// One poll's outcome, as a host task reports it.
#[derive(Debug)]
struct PollResult {
    name: String,
    generation: u64,
    /// The host's newest sample, or why it did not answer.
    result: Result<GpuList, AgentError>,
    /// Every sample new since the last poll, oldest first (the newest among them).
    fresh: Vec<GpuList>,
    latency: Duration,
}

/// A host as the supervisor tracks it.
#[derive(Debug)]
struct Tracked {
    target: Target,
    status: HostStatus,
    failures: u32,
    generation: u64,
    last_sample_ms: Option<u64>,
    /// Its first poll has come back (answered or failed).
    polled: bool,
    task: tokio::task::AbortHandle,
}

async fn supervise(
    targets: Vec<Target>,
    config: CollectorConfig,
    http: SharedHttp,
    publish: watch::Sender<Arc<FleetSnapshot>>,
    mut inbox: mpsc::UnboundedReceiver<Command>,
    sink: Option<mpsc::Sender<Tick>>,
) {
    let permits = Arc::new(Semaphore::new(config.max_concurrent_polls.max(1)));
    let (results_tx, mut results) = mpsc::channel::<PollResult>(1024);
    let mut tasks = JoinSet::new();
    let mut hosts: HashMap<String, Tracked> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut generation = 0u64;
    let spawn = |target: Target, tasks: &mut JoinSet<()>, generation: u64| {
        let client = http.client(&target.access);
        let results = results_tx.clone();
        let permits = permits.clone();
        let name = target.name.clone();
        tasks.spawn(poll_host(
            name, generation, client, config, permits, results,
        ))
    };
    let mut apply_targets = |targets: Vec<Target>,
                             hosts: &mut HashMap<String, Tracked>,
                             order: &mut Vec<String>,
                             tasks: &mut JoinSet<()>| {
        let wanted: HashMap<String, Target> = targets
            .iter()
            .map(|t| (t.name.clone(), t.clone()))
            .collect();
        hosts.retain(|name, tracked| {
            let keep = wanted.get(name) == Some(&tracked.target);
            if !keep {
                tracked.task.abort();
            }
            keep
        });
        let new: Vec<Target> = targets
            .iter()
            .filter(|target| !hosts.contains_key(&target.name))
            .cloned()
            .collect();
        for target in &new {
            generation += 1;
            let task = spawn(target.clone(), tasks, generation);
            hosts.insert(
                target.name.clone(),
                Tracked {
                    target: target.clone(),
                    status: unknown_status(target),
                    failures: 0,
                    generation,
                    last_sample_ms: None,
                    polled: false,
                    task,
                },
            );
        }
        *order = targets.into_iter().map(|target| target.name).collect();
        !new.is_empty()
    };
    // New hosts get a round of their own as soon as each has answered (or failed), not at
    // the next tick: a console's first fleet is seen at once (issue 43: content at once).
    let mut early = apply_targets(targets, &mut hosts, &mut order, &mut tasks);

    let mut tick = 0u32;
    let mut pending: Vec<Arc<GpuList>> = Vec::new();
    let mut ticks = tokio::time::interval(config.interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            Some(command) = inbox.recv() => match command {
                Command::SetTargets(targets) => {
                    early |= apply_targets(targets, &mut hosts, &mut order, &mut tasks);
                }
            },
            Some(poll) = results.recv() => {
                let Some(tracked) = hosts.get_mut(&poll.name) else { continue };
                if tracked.generation != poll.generation {
                    continue;
                }
                apply_poll(&mut tracked.status, &mut tracked.failures, &poll.result, poll.latency, &config);
                tracked.polled = true;
                // Polling faster than the agent samples must not store a reading twice.
                for mut list in poll.fresh {
                    if tracked.last_sample_ms.is_none_or(|last| list.sampled_at_ms > last) {
                        tracked.last_sample_ms = Some(list.sampled_at_ms);
                        // Samples are filed under the registry's name, not the one the agent reports.
                        list.host.clone_from(&poll.name);
                        pending.push(Arc::new(list));
                    }
                }
                if early && hosts.values().all(|tracked| tracked.polled) {
                    early = false;
                    publish_round(&mut tick, &order, &hosts, &publish, sink.as_ref(), &mut pending);
                    ticks.reset();
                }
            },
            _ = ticks.tick() => {
                publish_round(&mut tick, &order, &hosts, &publish, sink.as_ref(), &mut pending);
            },
            Some(_) = tasks.join_next() => {}
        }
    }
}

/// One round: the snapshot of every tracked host, in the targets' order, published, and
/// with the samples gathered since the last round to the sink.
fn publish_round(
    tick: &mut u32,
    order: &[String],
    hosts: &HashMap<String, Tracked>,
    publish: &watch::Sender<Arc<FleetSnapshot>>,
    sink: Option<&mpsc::Sender<Tick>>,
    pending: &mut Vec<Arc<GpuList>>,
) {
    *tick = tick.wrapping_add(1);
    let snapshot = Arc::new(FleetSnapshot {
        tick: *tick,
        hosts: order
            .iter()
            .filter_map(|name| hosts.get(name))
            .map(|tracked| tracked.status.clone())
            .collect(),
        metrics_unavailable: None,
    });
    publish.send_replace(snapshot.clone());
    if let Some(sink) = sink {
        let samples = std::mem::take(pending);
        if sink.try_send(Tick { snapshot, samples }).is_err() {
            tracing::warn!("the metrics writer is behind; a tick's samples were dropped");
        }
    } else {
        pending.clear();
    }
}

/// Polls one host until aborted: at the interval while it answers, backing off with
/// jitter while it fails.
async fn poll_host(
    name: String,
    generation: u64,
    client: Result<AgentClient, AgentError>,
    config: CollectorConfig,
    permits: Arc<Semaphore>,
    results: mpsc::Sender<PollResult>,
) {
    let client = match client {
        Ok(client) => client,
        Err(error) => {
            let _ = results
                .send(PollResult {
                    name,
                    generation,
                    result: Err(error),
                    fresh: Vec::new(),
                    latency: Duration::ZERO,
                })
                .await;
            return;
        }
    };
    let mut failures = 0u32;
    let mut reader = SampleReader::default();
    loop {
        let started = Instant::now();
        let (result, fresh) = {
            let Ok(_permit) = permits.acquire().await else {
                return;
            };
            reader.read(&client).await
        };
        let latency = started.elapsed();
        failures = if result.is_ok() {
            0
        } else {
            failures.saturating_add(1)
        };
        if results
            .send(PollResult {
                name: name.clone(),
                generation,
                result,
                fresh,
                latency,
            })
            .await
            .is_err()
        {
            return;
        }
        let wait = next_delay(failures, &config, jitter_seed(&name, started));
        tokio::time::sleep_until(started + wait).await;
    }
}

/// Reads a host's samples by number (`/v1/samples`), so none is skipped when polls and
/// sampling drift out of phase or a poll is late; an agent without that endpoint is read
/// through `/v1/gpus` (its newest sample) from then on.
#[derive(Debug, Default)]
struct SampleReader {
    /// The agent's run and the number of the last sample read.
    cursor: Option<(String, u64)>,
    /// The newest sample read, answered again when nothing is new.
    newest: Option<GpuList>,
    latest_only: bool,
}

impl SampleReader {
    async fn read(&mut self, client: &AgentClient) -> (Result<GpuList, AgentError>, Vec<GpuList>) {
        if !self.latest_only {
            let after = self
                .cursor
                .as_ref()
                .map(|(boot, seq)| (boot.as_str(), *seq));
            match client.samples(after).await {
                Ok(batch) => {
                    self.cursor = Some((batch.boot, batch.last_seq));
                    if batch.missed > 0 {
                        tracing::debug!(
                            missed = batch.missed,
                            "samples no longer kept by the agent"
                        );
                    }
                    if let Some(newest) = batch.samples.last() {
                        self.newest = Some(newest.clone());
                    }
                    return match &self.newest {
                        Some(newest) => (Ok(newest.clone()), batch.samples),
                        None => (client.gpus().await, Vec::new()),
                    };
                }
                Err(
                    AgentError::RefusedRequest { status: 404, .. }
                    | AgentError::Status { status: 404, .. },
                ) => self.latest_only = true,
                Err(error) => return (Err(error), Vec::new()),
            }
        }
        match client.gpus().await {
            Ok(list) => (Ok(list.clone()), vec![list]),
            Err(error) => (Err(error), Vec::new()),
        }
    }
}

fn jitter_seed(name: &str, at: Instant) -> u64 {
    let mut seed = at.elapsed().as_nanos() as u64 ^ 0x9E37_79B9_7F4A_7C15;
    for byte in name.bytes() {
        seed = (seed ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    seed
}

/// The wait before the next poll: the interval while healthy; while failing, doubling
/// from the interval up to `max_backoff`, scaled by a jitter of 0.75–1.25. Pure.
pub fn next_delay(failures: u32, config: &CollectorConfig, seed: u64) -> Duration {
    if failures == 0 {
        return config.interval;
    }
    let doubled = config
        .interval
        .saturating_mul(1u32 << failures.min(16))
        .min(config.max_backoff);
    let jitter = 0.75 + (seed % 1000) as f64 / 2000.0;
    doubled.mul_f64(jitter)
}

/// Folds one poll into a host's status. Pure.
pub fn apply_poll(
    status: &mut HostStatus,
    failures: &mut u32,
    result: &Result<GpuList, AgentError>,
    latency: Duration,
    config: &CollectorConfig,
) {
    match result {
        Ok(list) => {
            *failures = 0;
            let mut models: Vec<String> = list.gpus.iter().map(|gpu| gpu.model.clone()).collect();
            models.sort();
            models.dedup();
            let utils: Vec<f32> = list
                .gpus
                .iter()
                .filter_map(|gpu| gpu.gpu_util_pct)
                .collect();
            let lost = list.gpus.iter().filter(|gpu| !gpu.healthy).count();
            let slow = latency > config.client.request_timeout / 2;
            (status.health, status.last_error) = if lost > 0 {
                (
                    Health::Degraded,
                    Some(HostProblem::GpusNotAnswering { gpus: lost as u32 }),
                )
            } else if slow {
                (
                    Health::Degraded,
                    Some(HostProblem::Slow {
                        latency_ms: u64::try_from(latency.as_millis()).unwrap_or(u64::MAX),
                    }),
                )
            } else {
                (Health::Online, None)
            };
            status.gpu_count = list.gpus.len() as u32;
            status.models = models;
            status.mean_util_pct =
                (!utils.is_empty()).then(|| utils.iter().sum::<f32>() / utils.len() as f32);
            status.gpus.clone_from(&list.gpus);
        }
        Err(error) => {
            *failures = failures.saturating_add(1);
            // Nothing listens at the address (refused, no such name): offline at once. A
            // timeout or a broken connection may pass: degraded until it repeats.
            let nothing_there = matches!(
                error,
                AgentError::Refused { .. } | AgentError::Dns { .. } | AgentError::BadUrl { .. }
            );
            status.health = if nothing_there || *failures >= config.offline_after_failures {
                Health::Offline
            } else {
                Health::Degraded
            };
            status.mean_util_pct = None;
            status.last_error = Some(error.clone());
            status.gpus = status.gpus.iter().map(without_readings).collect();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpu(index: u32, model: &str, util: Option<f32>) -> Gpu {
        Gpu {
            index,
            uuid: format!("GPU-{index}"),
            model: model.into(),
            memory_total_mib: Some(1024),
            healthy: true,
            gpu_util_pct: util,
            ..Gpu::default()
        }
    }

    fn status() -> HostStatus {
        unknown_status(&Target {
            name: "a".into(),
            region: "cn-north".into(),
            access: AgentAccess::open("http://a"),
        })
    }

    #[test]
    fn a_poll_sets_health_counts_models_and_mean() {
        let config = CollectorConfig::default();
        let (mut status, mut failures) = (status(), 0);
        let list = GpuList {
            host: "a".into(),
            sampled_at_ms: 1000,
            gpus: vec![
                gpu(0, "V100", Some(20.0)),
                gpu(1, "A100", Some(60.0)),
                gpu(2, "A100", None),
            ],
        };
        apply_poll(
            &mut status,
            &mut failures,
            &Ok(list),
            Duration::from_millis(5),
            &config,
        );
        assert_eq!(status.health, Health::Online);
        assert_eq!(status.gpu_count, 3);
        assert_eq!(status.models, vec!["A100".to_string(), "V100".to_string()]);
        assert_eq!(
            status.mean_util_pct,
            Some(40.0),
            "the GPU without a reading is left out"
        );
    }

    #[test]
    fn failures_degrade_then_take_a_host_offline_and_one_answer_brings_it_back() {
        let config = CollectorConfig::default();
        let (mut status, mut failures) = (status(), 0);
        let down = Err(AgentError::Timeout {
            url: "http://a".into(),
            timeout_ms: 900,
        });
        let mut seen = Vec::new();
        for _ in 0..3 {
            apply_poll(
                &mut status,
                &mut failures,
                &down,
                Duration::from_millis(900),
                &config,
            );
            seen.push(status.health);
        }
        assert_eq!(
            seen,
            vec![Health::Degraded, Health::Degraded, Health::Offline]
        );
        // A refused connection: nothing listens there, offline at the first poll.
        let (mut refused, mut refusals) = (super::tests::status(), 0);
        let gone = Err(AgentError::Refused {
            url: "http://a".into(),
        });
        apply_poll(
            &mut refused,
            &mut refusals,
            &gone,
            Duration::from_millis(1),
            &config,
        );
        assert_eq!(refused.health, Health::Offline);
        assert_eq!(
            status
                .last_error
                .as_ref()
                .map(ToString::to_string)
                .as_deref(),
            Some("no answer from http://a within 900 ms")
        );
        let back = Ok(GpuList {
            host: "a".into(),
            sampled_at_ms: 1,
            gpus: vec![gpu(0, "A100", Some(1.0))],
        });
        apply_poll(
            &mut status,
            &mut failures,
            &back,
            Duration::from_millis(800),
            &config,
        );
        assert_eq!(status.health, Health::Degraded, "slow answers are degraded");
        assert!(matches!(status.last_error, Some(HostProblem::Slow { .. })));
        apply_poll(
            &mut status,
            &mut failures,
            &back,
            Duration::from_millis(3),
            &config,
        );
        assert_eq!(
            (status.health, status.last_error.clone(), failures),
            (Health::Online, None, 0)
        );
    }

    #[test]
    fn a_host_carries_its_gpus_and_keeps_only_their_facts_while_it_does_not_answer() {
        let config = CollectorConfig::default();
        let (mut status, mut failures) = (status(), 0);
        let mut leased = gpu(1, "NVIDIA A100-SXM4-80GB", Some(70.0));
        leased.lease_id = Some("lease-3-abcd".into());
        leased.memory_used_mib = Some(512);
        let list = GpuList {
            host: "a".into(),
            sampled_at_ms: 1,
            gpus: vec![gpu(0, "NVIDIA A100-SXM4-80GB", Some(10.0)), leased.clone()],
        };
        apply_poll(
            &mut status,
            &mut failures,
            &Ok(list.clone()),
            Duration::ZERO,
            &config,
        );
        assert_eq!(
            status.gpus, list.gpus,
            "the readings as the agent sent them"
        );
        let down = Err(AgentError::Timeout {
            url: "http://a".into(),
            timeout_ms: 900,
        });
        apply_poll(&mut status, &mut failures, &down, Duration::ZERO, &config);
        assert_eq!(status.gpus.len(), 2);
        let kept = &status.gpus[1];
        assert_eq!(
            (
                kept.model.as_str(),
                kept.lease_id.as_deref(),
                kept.memory_total_mib
            ),
            ("NVIDIA A100-SXM4-80GB", Some("lease-3-abcd"), Some(1024))
        );
        assert_eq!(
            (kept.gpu_util_pct, kept.memory_used_mib),
            (None, None),
            "no stale reading"
        );
    }

    #[test]
    fn backoff_doubles_up_to_the_cap_with_bounded_jitter() {
        let config = CollectorConfig::default();
        assert_eq!(next_delay(0, &config, 7), Duration::from_secs(1));
        for seed in [0, 499, 999, 123_456] {
            let one = next_delay(1, &config, seed);
            assert!(
                one >= Duration::from_millis(1500) && one <= Duration::from_millis(2500),
                "{one:?}"
            );
            let many = next_delay(20, &config, seed);
            assert!(
                many >= Duration::from_millis(22_500) && many <= Duration::from_millis(37_500),
                "{many:?}"
            );
        }
        assert_ne!(
            next_delay(3, &config, 1),
            next_delay(3, &config, 600),
            "jitter spreads retries"
        );
    }
}
