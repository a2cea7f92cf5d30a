//! One enforcer among consoles sharing a database.
//!
//! Consoles on one PostgreSQL database (see [`crate::db`]) elect the console that enforces
//! with a lease row (`enforcer_lease`) timed by **the database's clock**: a console takes it
//! when it is free or expired, renews it while it holds it, and loses it when it stops
//! renewing. Each change of holder raises the **term**; the enforcer sends its term with
//! every lease request and release, and an agent refuses a term lower than the highest it
//! has seen from the group (409 `stale_term`), so a leader that was paused and replaced
//! cannot act when it wakes: it steps down instead.
//!
//! The leader acts only while its lease is surely still its own on its own clock: until
//! `renewed + ttl - renew_every`, measured from before the renewal was sent. A console on
//! its own SQLite file needs none of this: it is [`Leadership::Sole`] and sends no term.
//!
//! Take or renew is one statement every `renew_every` (2 s): the row is taken when this
//! console holds it or it has expired, and its term is raised at each change of holder,
//! never reused. With `ttl` 8 s a stopped leader is replaced within 10 s. A leader steps
//! down on a failed take, its deadline passing, or a `stale_term` answer from any agent; a
//! console that stops expires the row rather than deleting it, so the term only grows. As
//! it takes office a new leader announces its term to every registered host (`POST
//! /v1/terms`, through the enforcer's provider), so a call the old leader still has in
//! flight is refused even on hosts the new one never rents on. The database is reached over
//! TLS when its URL asks (`sslmode=require`, or `verify-full` with `sslrootcert`).

use crate::db::ConsoleDb;
use crate::pools::PoolStore;
use ebb_wire::agent::ConsoleTerm;
use ebb_wire::ipc::EnforcerRole;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ElectionConfig {
    /// How long a lease lasts after each renewal, on the database's clock.
    pub ttl: Duration,
    /// How often the holder renews (and every other console tries to take it).
    pub renew_every: Duration,
}

impl Default for ElectionConfig {
    /// A stopped leader is replaced within `ttl + renew_every` (10 s).
    fn default() -> Self {
        Self {
            ttl: Duration::from_secs(8),
            renew_every: Duration::from_secs(2),
        }
    }
}

/// Whether this console enforces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Leadership {
    /// The only console on its database: it enforces, and sends no term.
    Sole,
    /// Elected for `term`; acts until `until` (this process's clock) unless renewed.
    Leader { term: ConsoleTerm, until: Instant },
    /// Another console enforces (or none yet); this one only views.
    Follower,
}

impl Leadership {
    /// `Some(term)` when this console may act now (`Some(None)`: alone, no term).
    pub fn acting(&self, now: Instant) -> Option<Option<ConsoleTerm>> {
        match self {
            Self::Sole => Some(None),
            Self::Leader { term, until } if now < *until => Some(Some(term.clone())),
            Self::Leader { .. } | Self::Follower => None,
        }
    }
}

impl Leadership {
    /// What the operator is told: whether this console enforces now.
    pub fn role(&self, now: Instant) -> EnforcerRole {
        match self.acting(now) {
            Some(None) => EnforcerRole::Alone,
            Some(Some(term)) => EnforcerRole::Elected { term: term.term },
            None => EnforcerRole::Following,
        }
    }
}

/// What the enforcer holds of the election: the current leadership, and a way to step down
/// when an agent refuses its term.
#[derive(Debug, Clone)]
pub struct LeaderHandle {
    state: Arc<watch::Sender<Leadership>>,
}

impl LeaderHandle {
    /// Elected for `term` until `until`, by an election of the caller's (tests; another
    /// election backend).
    pub fn leader(term: ConsoleTerm, until: Instant) -> Self {
        Self {
            state: Arc::new(watch::Sender::new(Leadership::Leader { term, until })),
        }
    }

    /// A console alone on its database.
    pub fn sole() -> Self {
        Self {
            state: Arc::new(watch::Sender::new(Leadership::Sole)),
        }
    }

    /// A console whose role may not enforce: it follows, and never stands.
    pub fn never() -> Self {
        Self {
            state: Arc::new(watch::Sender::new(Leadership::Follower)),
        }
    }

    pub fn current(&self) -> Leadership {
        self.state.borrow().clone()
    }

    pub fn watch(&self) -> watch::Receiver<Leadership> {
        self.state.subscribe()
    }

    /// An agent refused `term`: a newer leader exists, so stop acting now. The election
    /// takes the lease again only once it is free.
    pub fn step_down(&self, term: &ConsoleTerm) {
        let stepped = self.state.send_if_modified(|state| match state {
            Leadership::Leader { term: held, .. } if held.term <= term.term => {
                *state = Leadership::Follower;
                true
            }
            _ => false,
        });
        if stepped {
            tracing::warn!(
                term = term.term,
                "an agent refused this console's term: a newer enforcer was elected; stepping down"
            );
        }
    }
}

/// The election's loop for one console; [`Election::stop`] gives the lease back.
#[derive(Debug)]
pub struct Election {
    handle: LeaderHandle,
    db: ConsoleDb,
    holder: String,
    task: Option<JoinHandle<()>>,
}

impl Election {
    /// Starts taking part: tries at once, then every `renew_every`.
    pub async fn start(store: &PoolStore, config: ElectionConfig) -> Result<Self, sqlx::Error> {
        let group = store
            .console_id()
            .await
            .map_err(|error| sqlx::Error::Protocol(error.to_string()))?;
        let holder = crate::pools::random_hex(8);
        let handle = LeaderHandle {
            state: Arc::new(watch::Sender::new(Leadership::Follower)),
        };
        let db = store.db().clone();
        // The first try before returning, so a console that is alone leads from the start.
        attempt(&db, &group, &holder, config, &handle).await;
        let task = {
            let (db, holder, handle) = (db.clone(), holder.clone(), handle.clone());
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(config.renew_every).await;
                    attempt(&db, &group, &holder, config, &handle).await;
                }
            })
        };
        Ok(Self {
            handle,
            db,
            holder,
            task: Some(task),
        })
    }

    pub fn handle(&self) -> LeaderHandle {
        self.handle.clone()
    }

    /// This console's id in the election (the row's holder while it leads).
    pub fn holder(&self) -> &str {
        &self.holder
    }

    /// Stops renewing and gives the lease back, so another console takes over at once.
    pub async fn stop(mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
            let _ = task.await;
        }
        self.handle.state.send_replace(Leadership::Follower);
        // Expired, not deleted: the row keeps the term, which must never go down.
        let given = sqlx::query("UPDATE enforcer_lease SET expires_at_ms = 0 WHERE holder = $1")
            .bind(&self.holder)
            .execute(self.db.pool())
            .await;
        if let Err(error) = given {
            tracing::warn!(%error, "cannot give the enforcer lease back; it expires on its own");
        }
    }
}

impl Drop for Election {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

/// One try to take or renew the lease, and what it means for this console.
async fn attempt(
    db: &ConsoleDb,
    group: &str,
    holder: &str,
    config: ElectionConfig,
    handle: &LeaderHandle,
) {
    let ttl_ms = i64::try_from(config.ttl.as_millis()).unwrap_or(i64::MAX);
    let margin = config.renew_every.min(config.ttl / 2);
    let sent = Instant::now();
    match hold(db, holder, ttl_ms).await {
        Ok(Some(term)) => {
            let term = ConsoleTerm::new(group, term);
            let until = sent + config.ttl - margin;
            handle.state.send_if_modified(|state| {
                let fresh =
                    !matches!(state, Leadership::Leader { term: held, .. } if *held == term);
                if fresh {
                    tracing::info!(term = term.term, %holder, "elected to enforce");
                }
                *state = Leadership::Leader { term, until };
                fresh
            });
        }
        Ok(None) => {
            handle.state.send_if_modified(|state| {
                let was = matches!(state, Leadership::Leader { .. });
                if was {
                    tracing::warn!(%holder, "the enforcer lease went to another console; viewing");
                }
                *state = Leadership::Follower;
                was
            });
        }
        // The lease runs out on its own (`until`); the next try may reach the database.
        Err(error) => {
            tracing::warn!(%error, "cannot reach the database to renew the enforcer lease");
        }
    }
}

/// Takes the lease when it is free or expired, renews it when it is ours; the term it is
/// held for, or `None` while another console holds it. One statement, so two consoles
/// trying at once cannot both win; the database's clock decides expiry.
async fn hold(db: &ConsoleDb, holder: &str, ttl_ms: i64) -> Result<Option<u64>, sqlx::Error> {
    let term: Option<i64> = sqlx::query_scalar(
        "INSERT INTO enforcer_lease (id, holder, term, expires_at_ms)
         SELECT 1, $1, 1, CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT) + $2
         ON CONFLICT (id) DO UPDATE SET
             holder = EXCLUDED.holder,
             term = CASE WHEN enforcer_lease.holder = EXCLUDED.holder
                         THEN enforcer_lease.term ELSE enforcer_lease.term + 1 END,
             expires_at_ms = EXCLUDED.expires_at_ms
         WHERE enforcer_lease.holder = EXCLUDED.holder
            OR enforcer_lease.expires_at_ms < EXCLUDED.expires_at_ms - $2
         RETURNING term",
    )
    .bind(holder)
    .bind(ttl_ms)
    .fetch_optional(db.pool())
    .await?;
    Ok(term.and_then(|term| u64::try_from(term).ok()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_leader_acts_only_until_its_lease_may_have_run_out() {
        let now = Instant::now();
        let term = ConsoleTerm::new("g", 3);
        let leader = Leadership::Leader {
            term: term.clone(),
            until: now + Duration::from_secs(6),
        };
        assert_eq!(leader.acting(now), Some(Some(term.clone())));
        assert_eq!(leader.acting(now + Duration::from_secs(6)), None);
        assert_eq!(Leadership::Follower.acting(now), None);
        assert_eq!(Leadership::Sole.acting(now), Some(None));
        assert_eq!(leader.role(now), EnforcerRole::Elected { term: 3 });
        assert_eq!(
            leader.role(now + Duration::from_secs(6)),
            EnforcerRole::Following
        );
        assert_eq!(Leadership::Sole.role(now), EnforcerRole::Alone);
        assert_eq!(Leadership::Follower.role(now), EnforcerRole::Following);
    }

    #[test]
    fn an_agent_refusing_the_term_steps_the_leader_down_once() {
        let handle = LeaderHandle {
            state: Arc::new(watch::Sender::new(Leadership::Leader {
                term: ConsoleTerm::new("g", 3),
                until: Instant::now() + Duration::from_secs(6),
            })),
        };
        // A refusal of an older term (a request from before this term) changes nothing.
        handle.step_down(&ConsoleTerm::new("g", 2));
        assert!(matches!(handle.current(), Leadership::Leader { .. }));
        handle.step_down(&ConsoleTerm::new("g", 3));
        assert_eq!(handle.current(), Leadership::Follower);
        // A console alone never steps down.
        let sole = LeaderHandle::sole();
        sole.step_down(&ConsoleTerm::new("g", 9));
        assert_eq!(sole.current(), Leadership::Sole);
    }
}
