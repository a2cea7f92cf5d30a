//! What changed in the console's state, for the fronts that show it: a window refreshes a
//! view when its pools or the activity log change, instead of asking every few seconds.
//!
//! One hub per console ([`Console::changes`]), published to from three places:
//!
//! - the enforcer, after a pass that changed a pool (its [`PassReport::pools_changed`]: a
//!   pool's status apart from the readings, a count a rule set, a decision recorded);
//! - the console's own writes (a pool created, edited, scaled, released, its rules saved…),
//!   at once, before the write's answer;
//! - whoever reads the activity log for new entries ([`Changes::appended`]): the desktop's
//!   notifier does every second, which is how another console's writes on a shared
//!   database are heard.
//!
//! The activity log's newest id is published only when it grew, so a write heard twice
//! (said by the console, then read back from the log) refreshes no view twice. A receiver
//! that fell behind has lost which pools changed: it should take it as all of them.
//!
//! [`Console::changes`]: crate::console::Console::changes
//! [`PassReport::pools_changed`]: crate::enforcer::PassReport::pools_changed

use ebb_wire::pools::ActivityEntry;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use tokio::sync::broadcast;

/// Changes kept for a receiver that has not read them yet; one further behind lags.
const KEPT: usize = 256;

/// One change, as published.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// These pools changed (by name, sorted); `None`: any may have (one was created, deleted
    /// or renamed, or the prices changed).
    Pools(Option<Vec<String>>),
    /// The activity log grew; its newest entry's id.
    Activity(i64),
}

/// The hub: cheap to clone, every clone the same channel.
#[derive(Debug, Clone)]
pub struct Changes(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    sender: broadcast::Sender<Change>,
    /// The newest activity id published.
    newest: AtomicI64,
}

impl Default for Changes {
    fn default() -> Self {
        let (sender, _) = broadcast::channel(KEPT);
        Self(Arc::new(Inner {
            sender,
            newest: AtomicI64::new(0),
        }))
    }
}

impl Changes {
    /// Every change from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Change> {
        self.0.sender.subscribe()
    }

    /// These pools changed; nothing is said for none.
    pub fn pools<S: AsRef<str>>(&self, names: &[S]) {
        let mut names: Vec<String> = names.iter().map(|name| name.as_ref().to_owned()).collect();
        names.sort();
        names.dedup();
        if !names.is_empty() {
            self.send(Change::Pools(Some(names)));
        }
    }

    /// Any pool may have changed.
    pub fn all_pools(&self) {
        self.send(Change::Pools(None));
    }

    /// The activity log's newest id is `newest`: said when it is newer than the last said.
    pub fn activity(&self, newest: i64) {
        if self.0.newest.fetch_max(newest, Ordering::AcqRel) < newest {
            self.send(Change::Activity(newest));
        }
    }

    /// The newest activity id said so far (0 before any).
    pub fn newest_activity(&self) -> i64 {
        self.0.newest.load(Ordering::Acquire)
    }

    /// Entries read from the activity log, oldest first: the pools they name (any, for an
    /// entry of the console's own, which names none), then the newest id.
    pub fn appended(&self, entries: &[ActivityEntry]) {
        if entries.iter().any(|entry| entry.pool.is_empty()) {
            self.all_pools();
        } else {
            let names: Vec<&str> = entries.iter().map(|entry| entry.pool.as_str()).collect();
            self.pools(&names);
        }
        if let Some(newest) = entries.iter().map(|entry| entry.id).max() {
            self.activity(newest);
        }
    }

    fn send(&self, change: Change) {
        // No receiver (no window, `ebb daemon`): nothing to tell.
        let _ = self.0.sender.send(change);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::sync::broadcast::error::TryRecvError;

    #[test]
    fn the_newest_activity_is_said_once_and_pools_sorted_without_repeats() {
        let changes = Changes::default();
        let mut heard = changes.subscribe();
        changes.pools(&["train", "burst", "train"]);
        changes.pools::<&str>(&[]);
        changes.activity(7);
        changes.activity(7);
        changes.activity(5);
        assert_eq!(
            heard.try_recv().unwrap(),
            Change::Pools(Some(vec!["burst".into(), "train".into()]))
        );
        assert_eq!(heard.try_recv().unwrap(), Change::Activity(7));
        assert_eq!(heard.try_recv(), Err(TryRecvError::Empty));
        assert_eq!(changes.newest_activity(), 7);
    }

    fn entry(id: i64, pool: &str) -> ActivityEntry {
        ActivityEntry {
            id,
            at_ms: 0,
            pool: pool.into(),
            actor: ebb_wire::pools::Actor::Operator,
            from: 0,
            to: 1,
            reason: ebb_wire::reasons::ChangeReason::Cli,
            delta_per_hour_fen: None,
            delta_per_month_fen: None,
            results: Vec::new(),
            outcome: ebb_wire::pools::Outcome::Done,
            finished_at_ms: None,
            who: String::new(),
            role: String::new(),
        }
    }

    #[test]
    fn entries_read_from_the_log_name_their_pools_and_a_console_entry_names_all() {
        let changes = Changes::default();
        let mut heard = changes.subscribe();
        // Another console's writes, read back: their pools, then the newest id.
        changes.appended(&[entry(3, "train"), entry(4, "burst")]);
        assert_eq!(
            heard.try_recv().unwrap(),
            Change::Pools(Some(vec!["burst".into(), "train".into()]))
        );
        assert_eq!(heard.try_recv().unwrap(), Change::Activity(4));
        // A budget set (no pool): any pool may have changed.
        changes.appended(&[entry(5, "")]);
        assert_eq!(heard.try_recv().unwrap(), Change::Pools(None));
        assert_eq!(heard.try_recv().unwrap(), Change::Activity(5));
        // Nothing new: nothing said.
        changes.appended(&[]);
        assert_eq!(heard.try_recv(), Err(TryRecvError::Empty));
    }
}
