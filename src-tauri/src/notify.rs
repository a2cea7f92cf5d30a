//! Desktop notifications: the activity entries new since the last look (ids above the last
//! seen, looked for every second) and the pools' latest rule decisions (every other look,
//! or with new entries) go through
//! `ebb_notify::select` under the operator's preferences, and what it returns is
//! shown with the notification plugin, worded in the operator's language (`set_ui_language`), from Rust (the webview is granted none of its
//! commands). With no notification server (no D-Bus session under Xvfb) the plugin shows
//! nothing: that is logged once and the app goes on; a show that does not return in time is
//! given up, so nothing here can hold the app.
//!
//! The same look tells the console's changes which pools the new entries name
//! (`Changes::appended`): the one way this window hears another console's writes on a
//! shared database (its own writes and passes it hears at once).

use crate::state::{Delivery, Language};
use ebb_core::changes::Changes;
use ebb_core::pools::{PoolError, PoolStore};
use ebb_notify::{Notification, Said, more_not_shown, select};
use ebb_wire::ipc::UiLanguage;
use ebb_wire::rules::RulesMode;
use std::sync::Mutex;
use std::time::Duration;
use tauri::AppHandle;
use tauri::async_runtime::JoinHandle;
use tauri_plugin_notification::NotificationExt;

/// How often the activity log is looked at.
const EVERY: Duration = Duration::from_secs(1);
/// The rules' latest decisions are read every this many looks (and on a look that found
/// new entries).
const DECISIONS_EVERY: u64 = 2;
/// The most entries read a look (the rest wait for the next).
const BATCH: u32 = 200;
/// The most notifications shown a look; any more are summed up in one.
const MOST_SHOWN: usize = 4;
/// How long a show may take before it is given up.
const SHOW_TIMEOUT: Duration = Duration::from_secs(5);

/// The notification task; its owner stops it.
pub struct Notifier {
    task: Mutex<Option<JoinHandle<()>>>,
}

impl Notifier {
    /// Starts looking at the activity log from its newest entry on (nothing from before
    /// the app started is said).
    pub fn start(
        app: AppHandle,
        store: PoolStore,
        changes: Changes,
        language: Language,
        delivery: Delivery,
    ) -> Notifier {
        let task = tauri::async_runtime::spawn(run(app, store, changes, language, delivery));
        Notifier {
            task: Mutex::new(Some(task)),
        }
    }

    pub fn stop(&self) {
        if let Some(task) = self.task.lock().ok().and_then(|mut slot| slot.take()) {
            task.abort();
        }
    }
}

async fn run(
    app: AppHandle,
    store: PoolStore,
    changes: Changes,
    language: Language,
    delivery: Delivery,
) {
    if let Some(why) = no_notification_server() {
        tracing::warn!("desktop notifications cannot be shown: {why}");
        delivery.set(Some(why.to_string()));
    }
    let mut last = None;
    let mut finished = None;
    let mut said = Said::default();
    let mut failing = false;
    let mut looks: u64 = 0;
    loop {
        tokio::time::sleep(EVERY).await;
        looks += 1;
        let words = language.get();
        let decisions = looks.is_multiple_of(DECISIONS_EVERY);
        let look = look(
            &store,
            &changes,
            words,
            (&mut last, &mut finished),
            &mut said,
            decisions,
        );
        let notes = match look.await {
            Ok(notes) => notes,
            Err(error) => {
                tracing::warn!(%error, "cannot read the activity log for notifications");
                continue;
            }
        };
        for note in &notes {
            tracing::debug!(kind = ?note.kind, pool = %note.pool, title = %note.title, "desktop notification");
        }
        let shown = notes.len().min(MOST_SHOWN);
        let mut batch: Vec<(String, String)> = notes[..shown]
            .iter()
            .map(|note| (note.title.clone(), note.body.clone()))
            .collect();
        if notes.len() > shown {
            let more = notes.len() - shown;
            batch.push(more_not_shown(more, words));
        }
        for (title, body) in batch {
            match show(&app, title, body).await {
                Ok(()) => {
                    failing = false;
                    // The plugin hands the notification to a thread and answers at once:
                    // without a session bus it is lost there, so the notice stays.
                    delivery.set(no_notification_server().map(str::to_string));
                }
                Err(error) if !failing => {
                    failing = true;
                    tracing::warn!(%error, "cannot show a desktop notification");
                    delivery.set(Some(error));
                }
                Err(error) => delivery.set(Some(error)),
            }
        }
    }
}

/// One look: the entries after the last seen id and the changes finished after the last
/// seen finish (the first look only notes where each stands), told to the console's
/// changes, and, with new entries or when `decisions`, each pool's latest decision, through
/// the pure selection.
async fn look(
    store: &PoolStore,
    changes: &Changes,
    language: UiLanguage,
    (last, finished): (&mut Option<i64>, &mut Option<i64>),
    said: &mut Said,
    decisions: bool,
) -> Result<Vec<Notification>, PoolError> {
    let entries = match *last {
        None => {
            *last = Some(store.last_activity_id().await?);
            Vec::new()
        }
        Some(after) => store.activity_after(after, BATCH).await?,
    };
    if let Some(newest) = entries.last() {
        *last = Some(newest.id);
    }
    changes.appended(&entries);
    // Another console's grants and releases finish its entries: their pools changed.
    let (ended, latest) = store.finished_after(finished.unwrap_or(i64::MIN)).await?;
    if finished.is_some() {
        changes.pools(&ended);
    }
    *finished = Some(latest);
    if entries.is_empty() && !decisions {
        return Ok(Vec::new());
    }
    let prefs = store.notification_prefs().await?;
    let latest: Vec<(String, ebb_wire::rules::Decision)> = store
        .all_rules()
        .await?
        .into_iter()
        .filter(|rules| rules.mode != RulesMode::Disabled)
        .filter_map(|rules| Some((rules.pool_name, rules.last_decision?)))
        .collect();
    Ok(select(&entries, &latest, &prefs, language, said))
}

/// A notification's body as a Linux notification server reads it: the freedesktop
/// protocol lets servers take the body as markup (GNOME's and dunst do), so a rule's
/// `users < 50000` would be a broken tag there. Other systems show the text as it is.
fn body_text(body: String) -> String {
    if cfg!(target_os = "linux") {
        body.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    } else {
        body
    }
}

/// Shows one notification off the async threads, given up after [`SHOW_TIMEOUT`].
async fn show(app: &AppHandle, title: String, body: String) -> Result<(), String> {
    let body = body_text(body);
    let app = app.clone();
    let shown = tauri::async_runtime::spawn_blocking(move || {
        app.notification()
            .builder()
            .title(title)
            .body(body)
            .show()
            .map_err(|error| error.to_string())
    });
    match tokio::time::timeout(SHOW_TIMEOUT, shown).await {
        Ok(Ok(result)) => result,
        Ok(Err(error)) => Err(error.to_string()),
        Err(_) => Err(format!("no answer in {} s", SHOW_TIMEOUT.as_secs())),
    }
}

/// Why no notification can show, where that can be told up front: on Linux and the BSDs
/// the notification server is reached over the D-Bus session bus.
fn no_notification_server() -> Option<&'static str> {
    if cfg!(all(unix, not(target_os = "macos"))) {
        let bus_socket = std::env::var_os("XDG_RUNTIME_DIR")
            .is_some_and(|dir| std::path::Path::new(&dir).join("bus").exists());
        if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_none() && !bus_socket {
            return Some("no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set)");
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_os = "linux")]
    fn a_body_with_a_comparison_is_not_markup_to_a_linux_notification_server() {
        assert_eq!(
            body_text("users < 50000 & queue > 3".into()),
            "users &lt; 50000 &amp; queue &gt; 3"
        );
    }
}
