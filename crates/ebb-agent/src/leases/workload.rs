//! Starting and stopping a lease's workload: a process group with `CUDA_VISIBLE_DEVICES`
//! set to the leased cards, its output in a per-lease log.

use ebb_wire::agent::Lease;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

/// Starts the lease's command; returns the child (to reap) and the log path.
pub fn start(lease: &Lease, log_dir: &Path) -> std::io::Result<(tokio::process::Child, PathBuf)> {
    let argv = lease.command.as_deref().unwrap_or_default();
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| std::io::Error::other("the lease has no command"))?;
    std::fs::create_dir_all(log_dir)?;
    let log_path = log_dir.join(format!("{}.log", lease.id));
    // Appended: a restarted workload's log keeps what the earlier run said.
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)?;
    let visible: Vec<String> = lease.gpu_indexes.iter().map(u32::to_string).collect();
    let mut command = tokio::process::Command::new(program);
    command
        .args(args)
        .env("CUDA_VISIBLE_DEVICES", visible.join(","))
        .env("EBB_LEASE_ID", &lease.id)
        .env("EBB_FENCING_TOKEN", lease.fencing_token.to_string())
        .env("EBB_CHECKPOINT_FILE", checkpoint_file(log_dir, &lease.id))
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        // The workload outlives an agent restart; a release stops it explicitly.
        .kill_on_drop(false);
    #[cfg(unix)]
    command.process_group(0);
    let child = command.spawn().map_err(|error| {
        std::io::Error::new(error.kind(), format!("cannot start `{program}`: {error}"))
    })?;
    Ok((child, log_path))
}

/// The file a workload touches when it has saved its state (named to it in
/// `EBB_CHECKPOINT_FILE`); the agent never writes it.
pub fn checkpoint_file(log_dir: &Path, lease_id: &str) -> PathBuf {
    log_dir.join(format!("{lease_id}.checkpoint"))
}

/// When the workload last touched its checkpoint file, Unix ms; `None` when it never did.
pub fn checkpoint_touched(log_dir: &Path, lease_id: &str) -> Option<u64> {
    let modified = std::fs::metadata(checkpoint_file(log_dir, lease_id))
        .ok()?
        .modified()
        .ok()?;
    let since = modified.duration_since(std::time::UNIX_EPOCH).ok()?;
    u64::try_from(since.as_millis()).ok()
}

/// Writes why a workload could not start into its log, so the operator finds it there.
pub fn record_start_failure(
    log_dir: &Path,
    lease_id: &str,
    error: &std::io::Error,
) -> Option<PathBuf> {
    let path = log_dir.join(format!("{lease_id}.log"));
    std::fs::create_dir_all(log_dir).ok()?;
    std::fs::write(&path, format!("ebb-agent: {error}\n")).ok()?;
    Some(path)
}

/// Whether any process of the workload's group is still alive.
pub fn group_alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        use nix::sys::signal::killpg;
        use nix::unistd::Pid;
        killpg(Pid::from_raw(pid as i32), None).is_ok()
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        false
    }
}

/// Sends SIGTERM to the group and returns at once: the workload is told to stop and
/// may save its state. Returns whether the signal was delivered.
pub fn terminate(pid: u32) -> bool {
    #[cfg(unix)]
    {
        use nix::sys::signal::{Signal, killpg};
        use nix::unistd::Pid;
        killpg(Pid::from_raw(pid as i32), Signal::SIGTERM).is_ok()
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        false
    }
}

/// Sends SIGTERM to the group, waits up to `grace` for it to go, then SIGKILL.
/// Returns whether it had to be killed.
pub async fn stop(pid: u32, grace: Duration) -> bool {
    #[cfg(unix)]
    {
        use nix::sys::signal::{Signal, killpg};
        use nix::unistd::Pid;
        let group = Pid::from_raw(pid as i32);
        if killpg(group, Signal::SIGTERM).is_err() {
            return false;
        }
        let deadline = tokio::time::Instant::now() + grace;
        while tokio::time::Instant::now() < deadline {
            if !group_alive(pid) {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let _ = killpg(group, Signal::SIGKILL);
        for _ in 0..100 {
            if !group_alive(pid) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        true
    }
    #[cfg(not(unix))]
    {
        let _ = (pid, grace);
        false
    }
}

/// `(exit code, signal)` of a finished process.
pub fn exit_parts(status: std::process::ExitStatus) -> (Option<i32>, Option<i32>) {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        (status.code(), status.signal())
    }
    #[cfg(not(unix))]
    {
        (status.code(), None)
    }
}
