//! Leases: the pure [`ledger`], its [`store`], the [`workload`]s, and the service that
//! ties them together. Every change is persisted before it is applied or answered.
//!
//! Released leases and the keys that granted them are forgotten together after the
//! retention (`lease_retention_h`, a week by default), at start and on a timer: a retry of
//! a key after that is a new request. Per console group the highest term a lease call came
//! with is kept in the store (a restart keeps it); a create or release with a lower one is
//! refused (`stale_term`) before anything changes, and `POST /v1/terms` raises it without a
//! lease call. A reclaim (spot leases only) keeps the lease active until its deadline,
//! sends its workload SIGTERM at once and releases it at the deadline, by a timer set again
//! on start.

pub mod ledger;
pub mod store;
pub mod workload;

use crate::probe::{GpuProbe, LeaseWorkload};
use crate::sim::LoadProfile;
use ebb_wire::agent::{ConsoleTerm, GpuList, Lease, LeaseListQuery, LeaseRequest, LeaseState};
use ledger::{GpuSlot, Grant, LeaseError, Ledger};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use store::{HostStore, StoreError};
use tokio::sync::watch;
use tokio::task::JoinSet;

/// The longest notice a reclaim may give: an hour.
pub const MAX_RECLAIM_NOTICE: Duration = Duration::from_secs(3600);

/// How long a released lease is kept by default: 7 days.
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(168 * 3600);

/// How leases behave on this host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseConfig {
    /// Between SIGTERM and SIGKILL when a lease is released.
    pub release_grace: Duration,
    /// Where workload logs go; `None` refuses leases with a command.
    pub log_dir: Option<PathBuf>,
    /// How long a released lease, and the idempotency key that granted it, is kept after
    /// its release. Within it, a retry of the key replays the grant; after it both are
    /// forgotten and the key is a new request.
    pub retention: Duration,
}

impl Default for LeaseConfig {
    fn default() -> Self {
        Self {
            release_grace: Duration::from_secs(30),
            log_dir: None,
            retention: DEFAULT_RETENTION,
        }
    }
}

/// How often released leases past their retention are pruned: a quarter of it, from a
/// second to an hour, so one outlives its retention by at most that.
pub fn prune_interval(retention: Duration) -> Duration {
    (retention / 4).clamp(Duration::from_secs(1), Duration::from_secs(3600))
}

/// A lease call's failure: the request's fault, or the store's.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error(transparent)]
    Lease(#[from] LeaseError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What a create answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Created {
    pub lease: Lease,
    /// `false` when the idempotency key replayed an earlier grant.
    pub new: bool,
}

/// One host's leases.
#[derive(Debug)]
pub struct LeaseService {
    host: String,
    store: HostStore,
    ledger: tokio::sync::Mutex<Ledger>,
    probe: Arc<dyn GpuProbe>,
    gpus: watch::Receiver<Arc<GpuList>>,
    config: LeaseConfig,
    tasks: Mutex<JoinSet<()>>,
    releasing: Mutex<std::collections::HashSet<String>>,
    /// UUID → lease id of every held GPU, as of the last change; read without waiting.
    holders: std::sync::RwLock<Arc<HashMap<String, String>>>,
    me: Weak<LeaseService>,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| elapsed.as_millis() as u64)
        .unwrap_or(0)
}

impl LeaseService {
    /// Loads the host's leases, forgets those released longer ago than the retention,
    /// restarts what a crash interrupted (a release half done, a workload never started),
    /// tells the probe which loads the leased GPUs run, and prunes on a timer from then on.
    pub async fn start(
        host: &str,
        store: HostStore,
        probe: Arc<dyn GpuProbe>,
        gpus: watch::Receiver<Arc<GpuList>>,
        config: LeaseConfig,
    ) -> Result<Arc<Self>, StoreError> {
        let ledger = store.load().await?;
        let service = Arc::new_cyclic(|me| Self {
            host: host.to_string(),
            store,
            ledger: tokio::sync::Mutex::new(ledger),
            probe,
            gpus,
            config,
            tasks: Mutex::new(JoinSet::new()),
            releasing: Mutex::new(Default::default()),
            holders: Default::default(),
            me: me.clone(),
        });
        service.prune_released(now_ms()).await?;
        let mut ledger = service.ledger.lock().await;
        let leases: Vec<Lease> = ledger.leases().cloned().collect();
        for lease in leases {
            // Reclaimed before the stop: released at its deadline, at once if past.
            if lease.state == LeaseState::Active
                && let Some(deadline_ms) = lease.reclaim_deadline_ms
            {
                service.spawn_reclaim_timer(lease.id.clone(), deadline_ms);
            }
            match lease.state {
                LeaseState::Releasing => service.spawn_release(lease.id.clone()),
                LeaseState::Active
                    if lease.command.is_some()
                        && lease.workload_pid.is_none()
                        && lease.workload_exit_code.is_none() =>
                {
                    // Granted, then the agent stopped before the workload started.
                    service.start_workload(&mut ledger, lease).await?;
                }
                _ => {}
            }
        }
        service.publish(&ledger);
        drop(ledger);
        service.spawn_pruning();
        Ok(service)
    }

    /// The leases `query` asks for, oldest first, as answered (see [`Self::shown`]).
    pub async fn list(&self, query: LeaseListQuery) -> Vec<Lease> {
        let leases: Vec<Lease> = self
            .ledger
            .lock()
            .await
            .leases()
            .filter(|lease| query.includes(lease.state))
            .cloned()
            .collect();
        leases.into_iter().map(|lease| self.shown(lease)).collect()
    }

    /// Forgets the leases released before `now_ms` less the retention, with the keys that
    /// granted them (the store first, then the ledger). Returns how many leases went.
    pub async fn prune_released(&self, now_ms: u64) -> Result<usize, StoreError> {
        let retention_ms = u64::try_from(self.config.retention.as_millis()).unwrap_or(u64::MAX);
        let cutoff_ms = now_ms.saturating_sub(retention_ms);
        let mut ledger = self.ledger.lock().await;
        let expired = ledger.expired(cutoff_ms);
        if expired.is_empty() {
            return Ok(0);
        }
        self.store.forget(&expired).await?;
        ledger.forget(&expired);
        drop(ledger);
        tracing::info!(
            host = %self.host,
            leases = expired.lease_ids.len(),
            "released leases past their retention forgotten"
        );
        Ok(expired.lease_ids.len())
    }

    /// Prunes every [`prune_interval`], starting one interval from now (start has pruned).
    fn spawn_pruning(&self) {
        let me = self.me.clone();
        let every = prune_interval(self.config.retention);
        self.tasks.lock().expect("tasks lock").spawn(async move {
            let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                // Held only while pruning: the service may go away between ticks.
                let Some(service) = me.upgrade() else { return };
                if let Err(error) = service.prune_released(now_ms()).await {
                    tracing::warn!(%error, host = %service.host, "cannot prune released leases; trying again later");
                }
            }
        });
    }

    pub async fn get(&self, id: &str) -> Result<Lease, LeaseError> {
        let lease = self
            .ledger
            .lock()
            .await
            .get(id)
            .cloned()
            .ok_or_else(|| LeaseError::NotFound { id: id.into() })?;
        Ok(self.shown(lease))
    }

    /// `POST /v1/leases/{id}/checkpoint`: the lease's workload has saved its state, so
    /// releasing it now loses only what it did since. Kept with the lease; only an active
    /// lease can say so.
    pub async fn checkpoint(&self, id: &str) -> Result<Lease, ServiceError> {
        let mut ledger = self.ledger.lock().await;
        let mut lease = ledger
            .get(id)
            .cloned()
            .ok_or_else(|| LeaseError::NotFound { id: id.into() })?;
        if lease.state != LeaseState::Active {
            return Err(LeaseError::Invalid {
                field: "id",
                problem: format!(
                    "lease {id} is being released or was: only an active lease can report a checkpoint"
                ),
            }
            .into());
        }
        lease.checkpoint_at_ms = Some(now_ms());
        self.store.update(&lease).await?;
        ledger.update(lease.clone());
        drop(ledger);
        Ok(self.shown(lease))
    }

    /// `POST /v1/leases/{id}/restart`: the lease's workload stopped (SIGTERM, the release
    /// grace, SIGKILL) and started again on the same GPUs. The lease, its GPUs and its
    /// paid time are unchanged: a Slurm node's slurmd started afresh, so Slurm takes a
    /// parked node as booted again. Only an active lease with a command.
    pub async fn restart(&self, id: &str) -> Result<Lease, ServiceError> {
        let lease = self.get(id).await?;
        let refuse = |problem: String| -> ServiceError {
            LeaseError::Invalid {
                field: "id",
                problem,
            }
            .into()
        };
        if lease.state != LeaseState::Active {
            return Err(refuse(format!(
                "lease {id} is being released or was: only an active lease's workload can restart"
            )));
        }
        if lease.command.is_none() {
            return Err(refuse(format!("lease {id} has no workload to restart")));
        }
        if lease.reclaim_deadline_ms.is_some() {
            return Err(refuse(format!(
                "lease {id} is reclaimed by the host's owner: its workload stops at the deadline and cannot restart"
            )));
        }
        if let Some(pid) = lease.workload_pid
            && workload::group_alive(pid)
        {
            let killed = workload::stop(pid, self.config.release_grace).await;
            tracing::info!(lease = %id, pid, killed, "workload stopped to restart");
        }
        let mut ledger = self.ledger.lock().await;
        let Some(mut lease) = ledger.get(id).cloned() else {
            return Err(LeaseError::NotFound { id: id.into() }.into());
        };
        if lease.state != LeaseState::Active {
            return Err(refuse(format!(
                "lease {id} was released while its workload stopped"
            )));
        }
        lease.workload_pid = None;
        lease.workload_exit_code = None;
        lease.workload_signal = None;
        let lease = self.start_workload(&mut ledger, lease).await?;
        self.publish(&ledger);
        drop(ledger);
        Ok(self.shown(lease))
    }

    /// A lease as this agent answers it: with the time its workload last touched its
    /// checkpoint file when that is newer than the one kept, and the release grace.
    fn shown(&self, mut lease: Lease) -> Lease {
        lease.starting = self.starting(&lease, now_ms());
        if lease.state == LeaseState::Active
            && let Some(dir) = &self.config.log_dir
            && let Some(at) = workload::checkpoint_touched(dir, &lease.id)
            && lease.checkpoint_at_ms.is_none_or(|known| at > known)
        {
            lease.checkpoint_at_ms = Some(at);
        }
        lease.release_grace_s =
            Some(u32::try_from(self.config.release_grace.as_secs()).unwrap_or(u32::MAX));
        lease
    }

    /// UUID → lease id of every held GPU, as of the last change.
    pub fn holders_now(&self) -> Arc<HashMap<String, String>> {
        self.holders
            .read()
            .map(|holders| holders.clone())
            .unwrap_or_default()
    }

    /// Refuses a call whose console term is below its group's highest, and keeps a higher
    /// one (persisted first) before the call goes on: a term counts as seen once admitted,
    /// even when the call is then refused for something else. Called with the ledger locked.
    async fn admit_term(
        &self,
        ledger: &mut Ledger,
        term: Option<&ConsoleTerm>,
    ) -> Result<(), ServiceError> {
        if let Some(term) = term
            && ledger.admit_term(Some(term))?
        {
            self.store.raise_term(term).await?;
            ledger.commit_term(term);
        }
        Ok(())
    }

    /// `POST /v1/terms`: a newly elected console announces its term before it acts, so a
    /// call its replaced predecessor still has in flight is refused here even when the new
    /// leader has not rented or released on this host yet. Refused like any fenced call when
    /// below the group's highest; answers the highest now kept.
    pub async fn announce_term(&self, term: &ConsoleTerm) -> Result<u64, ServiceError> {
        ledger::fence(Some(&term.console_group), Some(term.term))?;
        let mut ledger = self.ledger.lock().await;
        self.admit_term(&mut ledger, Some(term)).await?;
        Ok(ledger
            .highest_term(&term.console_group)
            .unwrap_or(term.term))
    }

    /// The highest term seen from a console group.
    pub async fn highest_term(&self, console_group: &str) -> Option<u64> {
        self.ledger.lock().await.highest_term(console_group)
    }

    /// `POST /v1/leases`. One at a time per host: the ledger lock is held from the plan
    /// to the commit, so two requests can never take the same GPU. A request fenced by a
    /// console term below its group's highest is refused before anything else.
    pub async fn create(&self, key: &str, request: &LeaseRequest) -> Result<Created, ServiceError> {
        let term = ledger::fence(request.console_group.as_deref(), request.term)?;
        let slots: Vec<GpuSlot> = self
            .gpus
            .borrow()
            .gpus
            .iter()
            .map(|gpu| GpuSlot {
                index: gpu.index,
                uuid: gpu.uuid.clone(),
                healthy: gpu.healthy,
                spot: gpu.spot,
            })
            .collect();
        let mut ledger = self.ledger.lock().await;
        self.admit_term(&mut ledger, term.as_ref()).await?;
        let id = lease_id(&self.host, ledger.last_fencing_token() + 1, key);
        let lease = match ledger.plan_grant(key, request, &slots, &id, now_ms())? {
            Grant::Replayed(lease) => {
                return Ok(Created {
                    lease: self.shown(lease),
                    new: false,
                });
            }
            Grant::New(lease) => lease,
        };
        if let Some(command) = &lease.command {
            if self.config.log_dir.is_none() {
                return Err(LeaseError::Invalid {
                    field: "command",
                    problem: "this agent runs no workloads (it has no state directory)".into(),
                }
                .into());
            }
            if !program_exists(&command[0]) {
                return Err(LeaseError::Invalid {
                    field: "command",
                    problem: format!("`{}` is not an executable program on this host", command[0]),
                }
                .into());
            }
        }
        self.store.insert_grant(key, request, &lease).await?;
        ledger.commit_grant(key, request, lease.clone());
        let lease = if lease.command.is_some() {
            let started = self.start_workload(&mut ledger, lease).await?;
            self.store.update_grant_response(key, &started).await?;
            ledger.set_response(key, started.clone());
            started
        } else {
            lease
        };
        self.publish(&ledger);
        self.publish_when_up();
        Ok(Created {
            lease: self.shown(lease),
            new: true,
        })
    }

    /// `DELETE /v1/leases/{id}`: stops the workload gracefully, then frees the GPUs.
    /// Returns the lease as it is now: `released` when there was nothing to stop,
    /// `releasing` while the workload is being stopped.
    pub async fn release(&self, id: &str) -> Result<Lease, ServiceError> {
        self.release_fenced(id, None).await
    }

    /// [`Self::release`] fenced by a console term, as a create is: refused when the term is
    /// below its group's highest.
    pub async fn release_fenced(
        &self,
        id: &str,
        term: Option<&ConsoleTerm>,
    ) -> Result<Lease, ServiceError> {
        if let Some(term) = term {
            ledger::fence(Some(&term.console_group), Some(term.term))?;
        }
        let mut ledger = self.ledger.lock().await;
        self.admit_term(&mut ledger, term).await?;
        let current = ledger
            .get(id)
            .cloned()
            .ok_or_else(|| LeaseError::NotFound { id: id.into() })?;
        if current.state == LeaseState::Released {
            return Ok(self.shown(current));
        }
        let mut next = ledger.plan_release(id, now_ms())?;
        let running = next.workload_pid.is_some_and(|pid| {
            next.workload_exit_code.is_none()
                && next.workload_signal.is_none()
                && workload::group_alive(pid)
        });
        if !running {
            next.state = LeaseState::Released;
            next.released_at_ms = Some(now_ms());
        }
        if next != current {
            self.store.update(&next).await?;
            ledger.update(next.clone());
            self.publish(&ledger);
        }
        drop(ledger);
        if running {
            self.spawn_release(id.to_string());
        }
        Ok(self.shown(next))
    }

    /// `POST /v1/leases/{id}/reclaim`: the host's owner takes an active lease back with
    /// `notice`. The lease records its deadline and stays active (its GPUs are the
    /// holder's until then); its workload is sent SIGTERM now, as a release would, and at
    /// the deadline the lease is released with no further grace. A second reclaim never
    /// moves the deadline later; a shorter notice brings it forward.
    pub async fn reclaim(&self, id: &str, notice: Duration) -> Result<Lease, ServiceError> {
        if notice.is_zero() || notice > MAX_RECLAIM_NOTICE {
            return Err(LeaseError::Invalid {
                field: "notice_s",
                problem: format!(
                    "must be more than 0 and at most {} seconds",
                    MAX_RECLAIM_NOTICE.as_secs()
                ),
            }
            .into());
        }
        let mut ledger = self.ledger.lock().await;
        let current = ledger
            .get(id)
            .cloned()
            .ok_or_else(|| LeaseError::NotFound { id: id.into() })?;
        if current.state != LeaseState::Active {
            return Err(LeaseError::Invalid {
                field: "id",
                problem: format!(
                    "lease {id} is {}: only an active lease can be reclaimed",
                    state_word(current.state)
                ),
            }
            .into());
        }
        if !current.spot {
            return Err(LeaseError::Invalid {
                field: "lease",
                problem: format!("lease {id} holds no spot GPU: only spot leases can be reclaimed"),
            }
            .into());
        }
        let asked_ms =
            now_ms().saturating_add(u64::try_from(notice.as_millis()).unwrap_or(u64::MAX));
        let deadline_ms = current
            .reclaim_deadline_ms
            .map_or(asked_ms, |earlier| earlier.min(asked_ms));
        if current.reclaim_deadline_ms == Some(deadline_ms) {
            drop(ledger);
            return Ok(self.shown(current));
        }
        let mut next = current.clone();
        next.reclaim_deadline_ms = Some(deadline_ms);
        self.store.update(&next).await?;
        ledger.update(next.clone());
        drop(ledger);
        if current.reclaim_deadline_ms.is_none()
            && let Some(pid) = next.workload_pid
            && next.workload_exit_code.is_none()
            && next.workload_signal.is_none()
        {
            let signalled = workload::terminate(pid);
            tracing::info!(lease = %id, pid, signalled, deadline_ms, "lease reclaimed: workload told to stop");
        } else {
            tracing::info!(lease = %id, deadline_ms, "lease reclaimed");
        }
        self.spawn_reclaim_timer(id.to_string(), deadline_ms);
        Ok(self.shown(next))
    }

    /// The simulator's owner: reclaims each active spot lease when `interruptions` says its
    /// time has come (from its grant; see [`crate::spot::Interruptions::reclaim_at_ms`]),
    /// through [`Self::reclaim`] with the process's notice, as `ebb-agent reclaim` would.
    /// Wakes at the next lease's time, or each second for leases granted since.
    pub fn start_interruptions(&self, interruptions: crate::spot::Interruptions) {
        let me = self.me.clone();
        tracing::info!(
            host = %self.host,
            per_hour = interruptions.per_hour,
            notice_s = interruptions.notice.as_secs(),
            "simulated spot interruptions on"
        );
        self.tasks.lock().expect("tasks lock").spawn(async move {
            loop {
                let Some(service) = me.upgrade() else { return };
                let now = now_ms();
                let mut next_ms = now.saturating_add(1000);
                let leases = service.list(LeaseListQuery::default()).await;
                for lease in leases.iter().filter(|lease| {
                    lease.spot
                        && lease.state == LeaseState::Active
                        && lease.reclaim_deadline_ms.is_none()
                }) {
                    let due_ms = interruptions.reclaim_at_ms(&lease.id, lease.created_at_ms);
                    if due_ms > now {
                        next_ms = next_ms.min(due_ms);
                        continue;
                    }
                    match service.reclaim(&lease.id, interruptions.notice).await {
                        Ok(_) => tracing::info!(lease = %lease.id, "simulated spot interruption: lease reclaimed"),
                        Err(error) => tracing::warn!(%error, lease = %lease.id, "simulated spot interruption failed"),
                    }
                }
                drop(service);
                tokio::time::sleep(Duration::from_millis(next_ms.saturating_sub(now))).await;
            }
        });
    }

    /// Releases a reclaimed lease at `deadline_ms` (wall clock, so a deadline kept across a
    /// restart holds), unless it went before. An earlier timer of a deadline brought
    /// forward finds the lease released and does nothing.
    fn spawn_reclaim_timer(&self, id: String, deadline_ms: u64) {
        let me = self.me.clone();
        self.tasks.lock().expect("tasks lock").spawn(async move {
            let wait_ms = deadline_ms.saturating_sub(now_ms());
            tokio::time::sleep(Duration::from_millis(wait_ms)).await;
            let Some(service) = me.upgrade() else { return };
            match service.release(&id).await {
                Ok(lease) => {
                    tracing::info!(lease = %id, state = state_word(lease.state), "reclaim deadline reached: lease released")
                }
                Err(error) => {
                    tracing::error!(%error, lease = %id, "cannot release a reclaimed lease at its deadline; it is tried again on restart")
                }
            }
        });
    }

    /// Waits for background work (workload watchers, releases) to be stopped.
    pub async fn shutdown(&self) {
        let mut tasks = std::mem::take(&mut *self.tasks.lock().expect("tasks lock"));
        tasks.shutdown().await;
    }

    fn spawn_release(&self, id: String) {
        if !self
            .releasing
            .lock()
            .expect("releasing lock")
            .insert(id.clone())
        {
            return;
        }
        let Some(me) = self.me.upgrade() else { return };
        self.tasks.lock().expect("tasks lock").spawn(async move {
            if let Err(error) = me.finish_release(&id).await {
                tracing::error!(%error, lease = %id, "release failed; it resumes on restart");
            }
            me.releasing.lock().expect("releasing lock").remove(&id);
        });
    }

    async fn finish_release(&self, id: &str) -> Result<(), ServiceError> {
        let lease = self.get(id).await?;
        // A reclaimed lease's notice was its grace: nothing runs past the deadline.
        let grace = match lease.reclaim_deadline_ms {
            Some(deadline_ms) => self
                .config
                .release_grace
                .min(Duration::from_millis(deadline_ms.saturating_sub(now_ms()))),
            None => self.config.release_grace,
        };
        if let Some(pid) = lease.workload_pid
            && workload::group_alive(pid)
        {
            let killed = workload::stop(pid, grace).await;
            tracing::info!(lease = %id, pid, killed, "workload stopped");
        }
        let mut ledger = self.ledger.lock().await;
        let Some(mut lease) = ledger.get(id).cloned() else {
            return Ok(());
        };
        if lease.state == LeaseState::Released {
            return Ok(());
        }
        lease.state = LeaseState::Released;
        lease.released_at_ms = Some(now_ms());
        self.store.update(&lease).await?;
        ledger.update(lease);
        self.publish(&ledger);
        Ok(())
    }

    /// Starts the workload of a stored lease and records its pid (or why it could not start).
    async fn start_workload(
        &self,
        ledger: &mut Ledger,
        mut lease: Lease,
    ) -> Result<Lease, StoreError> {
        let Some(log_dir) = self.config.log_dir.clone() else {
            return Ok(lease);
        };
        match workload::start(&lease, &log_dir) {
            Ok((child, log_path)) => {
                lease.workload_pid = child.id();
                lease.workload_log = Some(log_path.display().to_string());
                self.store.update(&lease).await?;
                ledger.update(lease.clone());
                self.watch_workload(lease.id.clone(), child);
            }
            Err(error) => {
                tracing::warn!(lease = %lease.id, %error, "workload did not start");
                lease.workload_exit_code = Some(127);
                lease.workload_log = workload::record_start_failure(&log_dir, &lease.id, &error)
                    .map(|path| path.display().to_string());
                self.store.update(&lease).await?;
                ledger.update(lease.clone());
            }
        }
        Ok(lease)
    }

    /// Reaps the workload when it ends and records how it ended.
    fn watch_workload(&self, id: String, mut child: tokio::process::Child) {
        let Some(me) = self.me.upgrade() else { return };
        let pid = child.id();
        self.tasks.lock().expect("tasks lock").spawn(async move {
            let Ok(status) = child.wait().await else {
                return;
            };
            let (code, signal) = workload::exit_parts(status);
            let mut ledger = me.ledger.lock().await;
            let Some(mut lease) = ledger.get(&id).cloned() else {
                return;
            };
            if lease.workload_pid != pid {
                // Restarted since: the exit is the earlier process's, not the lease's now.
                return;
            }
            lease.workload_exit_code = code;
            lease.workload_signal = signal;
            match me.store.update(&lease).await {
                Ok(()) => {
                    ledger.update(lease);
                    me.publish(&ledger);
                }
                Err(error) => {
                    tracing::error!(%error, lease = %id, "cannot record the workload's exit")
                }
            }
        });
    }

    /// Whether `lease` is granted and its workload not up yet at `now_ms` (the probe's
    /// startup not over since its grant).
    fn starting(&self, lease: &Lease, now_ms: u64) -> bool {
        let startup = u64::try_from(self.probe.startup().as_millis()).unwrap_or(u64::MAX);
        lease.state == LeaseState::Active && now_ms < lease.created_at_ms.saturating_add(startup)
    }

    /// Publishes again once a lease granted now is up: its GPUs run its load from then.
    fn publish_when_up(&self) {
        let startup = self.probe.startup();
        if startup.is_zero() {
            return;
        }
        let Some(me) = self.me.upgrade() else { return };
        self.tasks.lock().expect("tasks lock").spawn(async move {
            tokio::time::sleep(startup).await;
            let ledger = me.ledger.lock().await;
            me.publish(&ledger);
        });
    }

    /// Tells the probe the leased loads and refreshes the holders snapshot. A starting
    /// lease's GPUs run nothing yet.
    fn publish(&self, ledger: &Ledger) {
        let now = now_ms();
        let loads: HashMap<String, LoadProfile> = ledger
            .leases()
            .filter(|lease| lease.state == LeaseState::Active && !self.starting(lease, now))
            .filter_map(|lease| {
                let profile = LoadProfile::from_name(lease.load_profile.as_deref()?)?;
                Some(
                    lease
                        .gpu_uuids
                        .iter()
                        .map(move |uuid| (uuid.clone(), profile.clone())),
                )
            })
            .flatten()
            .collect();
        self.probe.set_lease_loads(&loads);
        // A lease's workload runs until it is released or its process has exited.
        let workloads: HashMap<String, LeaseWorkload> = ledger
            .leases()
            .filter(|lease| lease.state == LeaseState::Active && !self.starting(lease, now))
            .filter(|lease| lease.workload_exit_code.is_none() && lease.workload_signal.is_none())
            .flat_map(|lease| {
                let workload =
                    LeaseWorkload {
                        lease_id: lease.id.clone(),
                        pid: lease.workload_pid,
                        program: lease.command.as_ref().and_then(|argv| argv.first()).map(
                            |program| program.rsplit('/').next().unwrap_or(program).to_string(),
                        ),
                    };
                lease
                    .gpu_uuids
                    .iter()
                    .map(move |uuid| (uuid.clone(), workload.clone()))
            })
            .collect();
        self.probe.set_lease_workloads(&workloads);
        let holders: HashMap<String, String> = ledger
            .holders()
            .into_iter()
            .map(|(uuid, lease)| (uuid.to_string(), lease.id.clone()))
            .collect();
        if let Ok(mut current) = self.holders.write() {
            *current = Arc::new(holders);
        }
    }
}

/// A lease state as the wire writes it, for messages.
fn state_word(state: LeaseState) -> &'static str {
    match state {
        LeaseState::Active => "active",
        LeaseState::Releasing => "releasing",
        LeaseState::Released => "released",
    }
}

/// A lease id unique per host and grant: the fence plus a digest of host and key.
fn lease_id(host: &str, fence: u64, key: &str) -> String {
    let digest = Sha256::digest(format!("{host}\n{fence}\n{key}").as_bytes());
    let suffix: String = digest[..4]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    format!("lease-{fence}-{suffix}")
}

/// Whether `program` names an executable file, directly or on PATH.
fn program_exists(program: &str) -> bool {
    let path = std::path::Path::new(program);
    if path.components().count() > 1 {
        return is_executable(path);
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .any(|dir| is_executable(&dir.join(program)))
}

fn is_executable(path: &std::path::Path) -> bool {
    let Ok(metadata) = path.metadata() else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        metadata.is_file() && metadata.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        metadata.is_file()
    }
}
