//! The console starts beside the window, not before it: `run`'s setup opens the window and
//! spawns `AppState::start`, so the page loads and draws its skeleton (ui/index.html) while
//! the database opens and the demo fleet comes up (issue 43: the main thread blocked on
//! the start left the window black for its first second and a half). Every command reads
//! `AppState`, which is managed only once the console has started: the UI asks
//! `console_started` first and calls nothing else that reads the console until it answers
//! (`set_ui_theme`, which sets the window's theme, reads none).

use ebb_wire::ipc::{IpcError, IpcErrorKind};
use tauri::State;
use tokio::sync::watch;

/// How the start went: `None` while starting, then `Ok` or the failure in words.
pub type Outcome = Option<Result<(), String>>;

/// The start's outcome as the command reads it.
#[derive(Debug, Clone)]
pub struct Started(pub watch::Receiver<Outcome>);

/// A new start: the sender for the starting task, the state for the command.
pub fn channel() -> (watch::Sender<Outcome>, Started) {
    let (sender, receiver) = watch::channel(None);
    (sender, Started(receiver))
}

/// Answers once the console has started (at once after that), or with why it could not.
#[tauri::command]
#[specta::specta]
pub async fn console_started(started: State<'_, Started>) -> Result<(), IpcError> {
    let mut receiver = started.0.clone();
    let outcome = receiver
        .wait_for(Option::is_some)
        .await
        .map(|outcome| outcome.clone())
        .map_err(|_| IpcError::new(IpcErrorKind::Io, "the console stopped while starting"))?;
    match outcome {
        Some(Ok(())) => Ok(()),
        Some(Err(error)) => Err(IpcError::new(IpcErrorKind::Io, error)),
        None => Err(IpcError::new(IpcErrorKind::Io, "the console did not start")),
    }
}
