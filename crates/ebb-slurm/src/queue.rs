//! What Slurm says about a partition, read from `squeue` and `sinfo` text, and the queue
//! metrics a pool bound to the partition scales by.
//!
//! The shell runs
//! `squeue --noheader --array --format='%i|%P|%T|%r|%b|%V|%D|%S'` and
//! `sinfo --noheader -N --format='%N|%P|%T|%G|%E'` and hands their output to
//! [`parse_squeue`] and [`parse_sinfo`]; a line that does not read is an error naming the
//! line and the field, never a job or node quietly skipped.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// A line of `squeue` or `sinfo` output that did not read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("line {line}, {field}: {problem}")]
pub struct ParseError {
    /// 1-based, counting blank lines.
    pub line: usize,
    /// The field's name as this module calls it (`state`, `tres_per_node`, …), or
    /// `fields` when the line has the wrong number of them.
    pub field: &'static str,
    pub problem: String,
}

/// A job's state, as `squeue %T` prints it. States this build does not act on are kept
/// by name rather than refused, so a newer Slurm's output still reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    Pending,
    Running,
    Completing,
    /// Allocated, its nodes booting (a resumed node's first job waits here).
    Configuring,
    Suspended,
    Other(String),
}

impl JobState {
    fn parse(text: &str) -> Self {
        match text.to_ascii_uppercase().as_str() {
            "PENDING" => Self::Pending,
            "RUNNING" => Self::Running,
            "COMPLETING" => Self::Completing,
            "CONFIGURING" => Self::Configuring,
            "SUSPENDED" => Self::Suspended,
            _ => Self::Other(text.to_owned()),
        }
    }

    /// Whether the job holds its nodes' GPUs now. `CONFIGURING` does: its nodes are
    /// allocated while they boot, and a pool that saw them free would shrink under them.
    pub fn holds_gpus(&self) -> bool {
        matches!(self, Self::Running | Self::Completing | Self::Configuring)
    }
}

/// One line of `squeue --array`: one job, or one task of an array job (`1234_5`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueuedJob {
    pub job_id: String,
    /// A pending job submitted to several partitions names them all.
    pub partitions: Vec<String>,
    pub state: JobState,
    /// Slurm's reason (`Resources`, `Priority`, `Dependency`, `JobHeldUser`, `None`, …).
    pub reason: String,
    /// GPUs on each node (`%b`, tres-per-node; 0 for `N/A`).
    pub gpus_per_node: u32,
    pub submitted_at_ms: i64,
    pub nodes: u32,
    /// When it starts or may start (`%S`): a pending job's begin time (a requeued job's is
    /// set by Slurm a little ahead, `cred_expire` + 1 s), a running job's start; `None` for
    /// `N/A`.
    pub starts_at_ms: Option<i64>,
}

impl QueuedJob {
    /// GPUs the job asks for or holds: per node × nodes.
    pub fn gpus(&self) -> u64 {
        u64::from(self.gpus_per_node) * u64::from(self.nodes)
    }

    /// Pending and waiting for nodes now or soon, the demand a bigger pool would meet:
    /// waiting for resources or for nodes that are unavailable ([`waits_for_resources`]),
    /// or held back to a begin time at most [`BEGINS_SOON_MS`] after `now_ms` (Slurm does
    /// that to every job it requeues). Not a job held by a user or an admin, waiting on
    /// another job, on a begin time further ahead, or on a limit.
    pub fn waits_for_gpus(&self, now_ms: i64) -> bool {
        self.state == JobState::Pending
            && (waits_for_resources(&self.reason) || self.begins_soon(now_ms))
    }

    /// Held back to a begin time that comes within [`BEGINS_SOON_MS`] (or has come).
    fn begins_soon(&self, now_ms: i64) -> bool {
        reason_word(&self.reason) == "BeginTime"
            && self
                .starts_at_ms
                .is_some_and(|at| at.saturating_sub(now_ms) <= BEGINS_SOON_MS)
    }

    /// How long it has waited for GPUs at `now_ms`: since it was submitted (or requeued,
    /// which Slurm counts as submitted again), or since its begin time when that is later.
    fn waited_s(&self, now_ms: i64) -> u64 {
        let since = self
            .starts_at_ms
            .filter(|_| reason_word(&self.reason) == "BeginTime")
            .map_or(self.submitted_at_ms, |at| at.max(self.submitted_at_ms));
        u64::try_from(now_ms.saturating_sub(since) / 1000).unwrap_or(0)
    }

    fn in_partition(&self, partition: &str) -> bool {
        self.partitions.iter().any(|p| p == partition)
    }
}

/// Whether Slurm itself held a job because its launch failed on a node (a node that then
/// drains: `Prolog error`, `Duplicate jobid` after a controller restart): squeue's `%r`
/// prints `launch failed requeued held`, scontrol `launch_failed_requeued_held`. Such a job
/// waits for someone to release it, unlike one a user or an admin held on purpose.
pub fn held_after_failed_launch(reason: &str) -> bool {
    reason == "launch_failed_requeued_held" || reason.starts_with("launch failed requeued held")
}

/// How far ahead a begin time may be for its job to count as demand now: a requeued job
/// waits Slurm's `cred_expire` + 1 s (121 s by default), and a node takes about a minute to
/// join; a job a user put off further (`--begin`) does not grow the pool until it nears.
pub const BEGINS_SOON_MS: i64 = 5 * 60_000;

/// The reason's first word (`ReqNodeNotAvail, UnavailableNodes:n1` → `ReqNodeNotAvail`).
fn reason_word(reason: &str) -> &str {
    reason
        .split(|c: char| c == ',' || c.is_whitespace())
        .next()
        .unwrap_or_default()
}

/// Whether a pending job's reason means it waits for nodes, so more GPUs would start it.
/// An allow-list: `Resources`, `Priority` (a job ahead waits for nodes), `None` (not yet
/// looked at) and the node-availability reasons. Holds (`JobHeldUser`, `JobHeldAdmin`, and
/// Slurm's own after a failed launch, [`held_after_failed_launch`], which the binder
/// releases), `Dependency`, association and QOS limits,
/// reservations and licenses are not: more GPUs would not start those jobs, and counting
/// them would grow the pool for nothing. `BeginTime` depends on when: see
/// [`QueuedJob::waits_for_gpus`].
pub fn waits_for_resources(reason: &str) -> bool {
    let word = reason_word(reason);
    matches!(word, "Resources" | "Priority" | "None" | "ReqNodeNotAvail")
        || word.starts_with("Nodes_required_for_job_are_DOWN")
        // squeue's `%r` writes this one out in words (22.05, every node of the partition
        // down or powered off, as a Slurm-bound pool's are before it grows).
        || reason.starts_with("Nodes required for job are DOWN")
}

/// A time as squeue prints it (`2026-12-05T10:31:00`, the controller's local time at
/// `utc_offset_minutes` east of UTC) in UTC milliseconds; `None` when it is not one.
pub fn parse_time(text: &str, utc_offset_minutes: i32) -> Option<i64> {
    local_time_ms(text, utc_offset_minutes).ok()
}

/// A partition's queue at one tick: what the pool bound to it scales by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct QueueMetrics {
    /// GPUs (per node × nodes) of the jobs waiting for GPUs now or soon
    /// ([`QueuedJob::waits_for_gpus`]).
    pub pending_gpus: u64,
    /// GPUs of the jobs holding nodes (running, completing, configuring).
    pub allocated_gpus: u64,
    /// How long the oldest job waiting for GPUs has waited; `None` when none waits.
    pub oldest_pending_wait_s: Option<u64>,
    /// Jobs waiting for GPUs (those `pending_gpus` counts, with or without GPUs).
    pub pending_jobs: u32,
}

impl QueueMetrics {
    /// The metrics of `partition` at `now_ms`. A pending job submitted to several
    /// partitions counts in each, since any of them may start it. A submit time after
    /// `now_ms` (clock skew) waits 0 s.
    pub fn of(jobs: &[QueuedJob], partition: &str, now_ms: i64) -> Self {
        let mut metrics = Self::default();
        for job in jobs.iter().filter(|job| job.in_partition(partition)) {
            if job.state.holds_gpus() {
                metrics.allocated_gpus = metrics.allocated_gpus.saturating_add(job.gpus());
            } else if job.waits_for_gpus(now_ms) {
                metrics.pending_gpus = metrics.pending_gpus.saturating_add(job.gpus());
                metrics.pending_jobs = metrics.pending_jobs.saturating_add(1);
                let wait_s = job.waited_s(now_ms);
                metrics.oldest_pending_wait_s = Some(
                    metrics
                        .oldest_pending_wait_s
                        .map_or(wait_s, |w| w.max(wait_s)),
                );
            }
        }
        metrics
    }
}

/// `squeue --noheader --array --format='%i|%P|%T|%r|%b|%V|%D|%S'` into jobs. Times are the
/// controller's local time without a zone; `utc_offset_minutes` is that zone's offset
/// (UTC+8 is 480), so `submitted_at_ms` and `starts_at_ms` are UTC. Blank lines are skipped.
pub fn parse_squeue(text: &str, utc_offset_minutes: i32) -> Result<Vec<QueuedJob>, ParseError> {
    let mut jobs = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let Some(fields) = fields::<8>(raw, line)? else {
            continue;
        };
        let [
            job_id,
            partition,
            state,
            reason,
            tres,
            submitted,
            nodes,
            starts,
        ] = fields;
        let error = |field, problem: String| ParseError {
            line,
            field,
            problem,
        };
        if job_id.is_empty() {
            return Err(error("job_id", "empty".into()));
        }
        let partitions: Vec<String> = partition.split(',').map(str::to_owned).collect();
        if partitions.iter().any(String::is_empty) {
            return Err(error(
                "partition",
                format!("`{partition}` names an empty partition"),
            ));
        }
        if state.is_empty() {
            return Err(error("state", "empty".into()));
        }
        jobs.push(QueuedJob {
            job_id: job_id.to_owned(),
            partitions,
            state: JobState::parse(state),
            reason: reason.to_owned(),
            gpus_per_node: gpu_count(tres).map_err(|problem| error("tres_per_node", problem))?,
            submitted_at_ms: local_time_ms(submitted, utc_offset_minutes)
                .map_err(|problem| error("submit_time", problem))?,
            nodes: nodes
                .parse()
                .map_err(|_| error("nodes", format!("`{nodes}` is not a node count")))?,
            starts_at_ms: match starts {
                "N/A" | "" | "Unknown" | "None" => None,
                starts => Some(
                    local_time_ms(starts, utc_offset_minutes)
                        .map_err(|problem| error("start_time", problem))?,
                ),
            },
        });
    }
    Ok(jobs)
}

/// A node's state word from `sinfo %T` (long form), without its flag symbols.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeBase {
    Idle,
    Allocated,
    Mixed,
    Completing,
    Drained,
    Draining,
    Down,
    Reserved,
    Planned,
    Future,
    Unknown,
    /// A state this build does not act on, kept by name.
    Other(String),
}

/// The symbols `sinfo` appends to a state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeFlag {
    /// `*`
    NotResponding,
    /// `~`: powered down by power saving (a suspended node).
    PoweredDown,
    /// `#`: being resumed.
    PoweringUp,
    /// `%`: being suspended.
    PoweringDown,
    /// `!`: a power down is pending.
    PowerDownPending,
    /// `$`: in a maintenance reservation.
    Maintenance,
    /// `@`: a reboot is pending.
    RebootPending,
    /// `^`: rebooting.
    Rebooting,
    /// `-`: planned for a pending job by the backfill scheduler.
    PlannedBackfill,
    /// `+`: completing jobs.
    Completing,
}

impl NodeFlag {
    fn from_symbol(symbol: char) -> Option<Self> {
        Some(match symbol {
            '*' => Self::NotResponding,
            '~' => Self::PoweredDown,
            '#' => Self::PoweringUp,
            '%' => Self::PoweringDown,
            '!' => Self::PowerDownPending,
            '$' => Self::Maintenance,
            '@' => Self::RebootPending,
            '^' => Self::Rebooting,
            '-' => Self::PlannedBackfill,
            '+' => Self::Completing,
            _ => return None,
        })
    }
}

/// A node's state: `idle~` is `Idle` with `PoweredDown`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeState {
    pub base: NodeBase,
    pub flags: Vec<NodeFlag>,
}

impl NodeState {
    fn parse(text: &str) -> Result<Self, String> {
        let word_end = text
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(text.len());
        let (word, symbols) = text.split_at(word_end);
        if word.is_empty() {
            return Err(format!("`{text}` has no state word"));
        }
        let flags = symbols
            .chars()
            .map(|symbol| {
                NodeFlag::from_symbol(symbol)
                    .ok_or_else(|| format!("`{symbol}` in `{text}` is not a state flag"))
            })
            .collect::<Result<_, _>>()?;
        let base = match word.to_ascii_lowercase().as_str() {
            "idle" => NodeBase::Idle,
            "allocated" => NodeBase::Allocated,
            "mixed" => NodeBase::Mixed,
            "completing" => NodeBase::Completing,
            "drained" => NodeBase::Drained,
            "draining" => NodeBase::Draining,
            "down" => NodeBase::Down,
            "reserved" => NodeBase::Reserved,
            "planned" => NodeBase::Planned,
            "future" => NodeBase::Future,
            "unknown" => NodeBase::Unknown,
            _ => NodeBase::Other(word.to_owned()),
        };
        Ok(Self { base, flags })
    }

    pub fn has(&self, flag: NodeFlag) -> bool {
        self.flags.contains(&flag)
    }
}

/// One line of `sinfo -N`: a node in one partition (a node in two partitions is two lines).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeInfo {
    pub name: String,
    pub partition: String,
    /// `sinfo` marks the default partition with `*`, dropped from `partition`.
    pub default_partition: bool,
    pub state: NodeState,
    /// GPUs in the node's gres (`gpu:a100:4(S:0-1)` → 4; `(null)` → 0).
    pub gpus: u32,
    /// Why it is down or drained; `None` for sinfo's `none`.
    pub reason: Option<String>,
}

/// `sinfo --noheader -N --format='%N|%P|%T|%G|%E'` into nodes. Blank lines are skipped.
pub fn parse_sinfo(text: &str) -> Result<Vec<NodeInfo>, ParseError> {
    let mut nodes = Vec::new();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let Some(fields) = fields::<5>(raw, line)? else {
            continue;
        };
        let [name, partition, state, gres, reason] = fields;
        let error = |field, problem: String| ParseError {
            line,
            field,
            problem,
        };
        if name.is_empty() {
            return Err(error("node", "empty".into()));
        }
        let (partition, default_partition) = match partition.strip_suffix('*') {
            Some(partition) => (partition, true),
            None => (partition, false),
        };
        if partition.is_empty() {
            return Err(error("partition", "empty".into()));
        }
        nodes.push(NodeInfo {
            name: name.to_owned(),
            partition: partition.to_owned(),
            default_partition,
            state: NodeState::parse(state).map_err(|problem| error("state", problem))?,
            gpus: gpu_count(gres).map_err(|problem| error("gres", problem))?,
            reason: (!reason.is_empty() && reason != "none").then(|| reason.to_owned()),
        });
    }
    Ok(nodes)
}

/// A line split at `|` into exactly `N` trimmed fields; `None` for a blank line.
fn fields<const N: usize>(raw: &str, line: usize) -> Result<Option<[&str; N]>, ParseError> {
    let raw = raw.trim_end_matches('\r');
    if raw.trim().is_empty() {
        return Ok(None);
    }
    let fields: Vec<&str> = raw.split('|').map(str::trim).collect();
    let count = fields.len();
    fields.try_into().map(Some).map_err(|_| ParseError {
        line,
        field: "fields",
        problem: format!("{count} fields separated by `|`, where {N} were expected"),
    })
}

/// GPUs in a gres or tres-per-node field: `gres:gpu:2`, `gres/gpu:2`, `gres/gpu=2`,
/// `gres:gpu:a100:2`, `gpu:a100:4(S:0-1)`, `gpu` (one), other gres ignored, `N/A` and
/// `(null)` none. Entries are comma-separated and summed.
fn gpu_count(field: &str) -> Result<u32, String> {
    if field.is_empty() || field == "N/A" || field == "(null)" {
        return Ok(0);
    }
    let mut total: u32 = 0;
    let mut depth = 0u32;
    let mut entries = Vec::new();
    let mut start = 0;
    for (index, c) in field.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                entries.push(&field[start..index]);
                start = index + 1;
            }
            _ => {}
        }
    }
    entries.push(&field[start..]);
    for entry in entries {
        let entry = entry.split('(').next().unwrap_or_default().trim();
        let entry = entry
            .strip_prefix("gres:")
            .or_else(|| entry.strip_prefix("gres/"))
            .unwrap_or(entry);
        let mut parts = entry.split([':', '=']);
        if parts.next() != Some("gpu") {
            continue;
        }
        let rest: Vec<&str> = parts.collect();
        let count = match rest.as_slice() {
            [] => 1,
            [one] => one.parse().unwrap_or(1),
            [_kind, count] => count
                .parse()
                .map_err(|_| format!("`{count}` in `{field}` is not a GPU count"))?,
            _ => return Err(format!("`{entry}` in `{field}` is not type:count")),
        };
        total = total
            .checked_add(count)
            .ok_or_else(|| format!("`{field}` counts too many GPUs"))?;
    }
    Ok(total)
}

/// `2026-12-05T10:31:00` at a zone `utc_offset_minutes` east of UTC, as UTC milliseconds.
fn local_time_ms(text: &str, utc_offset_minutes: i32) -> Result<i64, String> {
    let bad = || format!("`{text}` is not a time like 2026-12-05T10:31:00");
    let bytes = text.as_bytes();
    if bytes.len() != 19
        || bytes[4] != b'-'
        || bytes[7] != b'-'
        || bytes[10] != b'T'
        || bytes[13] != b':'
        || bytes[16] != b':'
    {
        return Err(bad());
    }
    let part = |range: std::ops::Range<usize>| -> Result<i64, String> {
        let digits = &text[range];
        if !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        digits.parse().map_err(|_| bad())
    };
    let (year, month, day) = (part(0..4)?, part(5..7)?, part(8..10)?);
    let (hour, minute, second) = (part(11..13)?, part(14..16)?, part(17..19)?);
    if !(1..=12).contains(&month)
        || day < 1
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return Err(format!("`{text}` is not a valid date and time"));
    }
    let seconds = days_from_civil(year, month, day) * 86_400 + hour * 3_600 + minute * 60 + second;
    Ok((seconds - i64::from(utc_offset_minutes) * 60) * 1_000)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: &str = "2026-12-05T10:31:00";
    /// `T0` as UTC milliseconds.
    const T0_MS: i64 = 1_796_466_660_000;

    #[test]
    fn squeues_spelled_out_down_nodes_reason_waits_for_gpus() {
        // What 22.05's `%r` printed for a partition whose nodes were all down.
        assert!(waits_for_resources(
            "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions"
        ));
        assert!(waits_for_resources("ReqNodeNotAvail, UnavailableNodes:n1"));
        assert!(!waits_for_resources("JobHeldUser"));
        assert_eq!(parse_time(T0, 0), Some(T0_MS));
        assert_eq!(parse_time("soon", 0), None);
    }

    fn job(line: &str) -> QueuedJob {
        parse_squeue(line, 0).unwrap().remove(0)
    }

    #[test]
    fn reads_a_squeue_line() {
        let parsed = job("1234_5|gpu|PENDING|Resources|gres:gpu:2|2026-12-05T10:31:00|3|N/A");
        assert_eq!(
            parsed,
            QueuedJob {
                job_id: "1234_5".into(),
                partitions: vec!["gpu".into()],
                state: JobState::Pending,
                reason: "Resources".into(),
                gpus_per_node: 2,
                submitted_at_ms: T0_MS,
                nodes: 3,
                starts_at_ms: None,
            }
        );
        assert_eq!(parsed.gpus(), 6);
    }

    #[test]
    fn submit_times_are_local_at_the_given_offset() {
        assert_eq!(local_time_ms(T0, 0), Ok(T0_MS));
        assert_eq!(local_time_ms(T0, 480), Ok(T0_MS - 8 * 3_600_000));
        assert_eq!(local_time_ms("1970-01-01T00:00:00", 0), Ok(0));
        assert_eq!(
            local_time_ms("2028-02-29T00:00:00", 0),
            Ok(1_835_395_200_000)
        );
    }

    #[test]
    fn reads_every_tres_form() {
        for (tres, gpus) in [
            ("gres:gpu:2", 2),
            ("gres/gpu:2", 2),
            ("gres/gpu=2", 2),
            ("gres:gpu:a100:2", 2),
            ("gres/gpu:a100:4", 4),
            ("gres:gpu", 1),
            ("gres:gpu:a100", 1),
            ("N/A", 0),
            ("", 0),
            ("gres:shard:8", 0),
            ("gres:gpu:2,gres:shard:1", 2),
            ("gpu:a100:4(S:0-1)", 4),
            ("gpu:a100:4(S:0,1),gpu:h100:2", 6),
            ("(null)", 0),
        ] {
            assert_eq!(gpu_count(tres), Ok(gpus), "{tres}");
        }
    }

    #[test]
    fn each_squeue_error_names_its_line_and_field() {
        let good = "1|gpu|PENDING|Resources|gres:gpu:1|2026-12-05T10:31:00|1|N/A";
        for (line, field) in [
            (
                "1|gpu|PENDING|Resources|gres:gpu:1|2026-12-05T10:31:00",
                "fields",
            ),
            (
                "|gpu|PENDING|Resources|gres:gpu:1|2026-12-05T10:31:00|1|N/A",
                "job_id",
            ),
            (
                "1|gpu,|PENDING|Resources|gres:gpu:1|2026-12-05T10:31:00|1|N/A",
                "partition",
            ),
            (
                "1|gpu||Resources|gres:gpu:1|2026-12-05T10:31:00|1|N/A",
                "state",
            ),
            (
                "1|gpu|PENDING|Resources|gres:gpu:a100:two|2026-12-05T10:31:00|1|N/A",
                "tres_per_node",
            ),
            (
                "1|gpu|PENDING|Resources|gres:gpu:a:b:c|2026-12-05T10:31:00|1|N/A",
                "tres_per_node",
            ),
            (
                "1|gpu|PENDING|Resources|gres:gpu:1|2026-12-05 10:31|1|N/A",
                "submit_time",
            ),
            (
                "1|gpu|PENDING|Resources|gres:gpu:1|2026-02-30T10:31:00|1|N/A",
                "submit_time",
            ),
            (
                "1|gpu|PENDING|Resources|gres:gpu:1|N/A|1|N/A",
                "submit_time",
            ),
            (
                "1|gpu|PENDING|Resources|gres:gpu:1|2026-12-05T10:31:00|-1|N/A",
                "nodes",
            ),
        ] {
            let text = format!("{good}\n\n{line}\n");
            let error = parse_squeue(&text, 0).unwrap_err();
            assert_eq!((error.line, error.field), (3, field), "{line}: {error}");
        }
        assert_eq!(
            parse_squeue(
                "1|gpu|PENDING|Resources|gres:gpu:1|2026-12-05T10:31:00|x|N/A",
                0
            )
            .unwrap_err()
            .to_string(),
            "line 1, nodes: `x` is not a node count"
        );
    }

    #[test]
    fn counts_only_jobs_pending_for_resources() {
        let text = "\
1|gpu|PENDING|Resources|gres:gpu:2|2026-12-05T10:31:00|2|N/A
2|gpu|PENDING|Priority|gres/gpu:1|2026-12-05T10:41:00|1|N/A
3|gpu|PENDING|JobHeldUser|gres:gpu:8|2026-12-05T09:00:00|1|N/A
4|gpu|PENDING|Dependency|gres:gpu:8|2026-12-05T09:00:00|1|N/A
5|gpu|PENDING|BeginTime|gres:gpu:8|2026-12-05T09:00:00|1|N/A
6|gpu|RUNNING|None|gres:gpu:a100:4|2026-12-05T08:00:00|2|N/A
7|gpu|COMPLETING|None|gres:gpu:1|2026-12-05T08:00:00|1|N/A
8|cpu|PENDING|Resources|gres:gpu:8|2026-12-05T09:00:00|1|N/A
9|cpu,gpu|PENDING|ReqNodeNotAvail, UnavailableNodes:gpu[1-2]|N/A|2026-12-05T10:51:00|1|N/A
10|gpu|PENDING|QOSMaxGRESPerUser|gres:gpu:8|2026-12-05T09:00:00|1|N/A
11|gpu|PENDING|JobHeldAdmin|gres:gpu:8|2026-12-05T09:00:00|1|N/A
";
        let jobs = parse_squeue(text, 0).unwrap();
        let now = T0_MS + 30 * 60_000;
        assert_eq!(
            QueueMetrics::of(&jobs, "gpu", now),
            QueueMetrics {
                pending_gpus: 5,
                allocated_gpus: 9,
                oldest_pending_wait_s: Some(1_800),
                pending_jobs: 3,
            }
        );
        assert_eq!(
            QueueMetrics::of(&jobs, "none", now),
            QueueMetrics {
                oldest_pending_wait_s: None,
                ..QueueMetrics::default()
            }
        );
    }

    /// Real 22.05 output (a cluster on this machine): job 3 ran and was requeued
    /// (`scontrol requeue`); job 1 was submitted `--begin=now+90`, job 2 `--begin=now+3600`;
    /// 6 is held by its user, 7 by Slurm after its launch failed (a `Prolog=/bin/false`
    /// node), 8 waits on another job, 9 waits for nodes that are down or drained.
    const REQUEUED: &str = "\
1|gpu|PENDING|BeginTime|gres:gpu:2|2026-12-06T08:23:50|1|2026-12-06T08:25:20
2|gpu|PENDING|BeginTime|gres:gpu:2|2026-12-06T08:23:50|1|2026-12-06T09:23:50
3|gpu|PENDING|BeginTime|gres:gpu:2|2026-12-06T08:23:54|1|2026-12-06T08:25:55
4|gpu|RUNNING|None|gres:gpu:2|2026-12-06T08:23:50|1|2026-12-06T08:23:51
5|gpu|RUNNING|None|gres:gpu:2|2026-12-06T08:23:50|1|2026-12-06T08:23:54
6|gpu|PENDING|JobHeldUser|gres:gpu:2|2026-12-06T08:20:00|1|N/A
7|gpu|PENDING|launch failed requeued held|gres:gpu:2|2026-12-06T08:20:00|1|2026-12-06T08:20:07
8|gpu|PENDING|Dependency|gres:gpu:2|2026-12-06T08:20:00|1|N/A
9|gpu|PENDING|Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions|gres:gpu:2|2026-12-06T08:22:56|1|N/A
";

    #[test]
    fn a_requeued_job_waiting_on_its_begin_time_is_demand_and_a_far_begin_time_is_not() {
        let jobs = parse_squeue(REQUEUED, 0).unwrap();
        let now = parse_time("2026-12-06T08:23:56", 0).unwrap();
        assert_eq!(
            jobs[2].starts_at_ms,
            parse_time("2026-12-06T08:25:55", 0),
            "the requeued job's begin time"
        );
        let waiting: Vec<&str> = jobs
            .iter()
            .filter(|job| job.waits_for_gpus(now))
            .map(|job| job.job_id.as_str())
            .collect();
        assert_eq!(waiting, ["1", "3", "9"]);
        assert_eq!(
            QueueMetrics::of(&jobs, "gpu", now),
            QueueMetrics {
                pending_gpus: 6,
                allocated_gpus: 4,
                // Job 9, submitted a minute ago; the others wait on their begin times.
                oldest_pending_wait_s: Some(60),
                pending_jobs: 3,
            }
        );
        // An hour on, job 2's begin time has come: it waits too, counted from then.
        let later = parse_time("2026-12-06T09:25:50", 0).unwrap();
        assert!(jobs[1].waits_for_gpus(later));
        assert_eq!(jobs[1].waited_s(later), 120);
        // A begin time Slurm could not print is not taken as soon.
        let unknown = parse_squeue(
            "1|gpu|PENDING|BeginTime|gres:gpu:2|2026-12-06T08:23:50|1|N/A",
            0,
        )
        .unwrap();
        assert!(!unknown[0].waits_for_gpus(now));
        // Held by Slurm after a failed launch (squeue's words and scontrol's), not by a user.
        assert!(held_after_failed_launch(&jobs[6].reason));
        assert!(held_after_failed_launch("launch_failed_requeued_held"));
        assert!(!held_after_failed_launch(&jobs[5].reason));
        assert!(!jobs[6].waits_for_gpus(now));
        let error = parse_squeue(
            "1|gpu|PENDING|BeginTime|gres:gpu:2|2026-12-06T08:23:50|1|soon",
            0,
        )
        .unwrap_err();
        assert_eq!((error.line, error.field), (1, "start_time"), "{error}");
    }

    #[test]
    fn a_submit_time_ahead_of_now_waits_zero() {
        let jobs =
            parse_squeue("1|gpu|PENDING|None|gres:gpu:1|2026-12-05T10:31:00|1|N/A", 0).unwrap();
        assert_eq!(
            QueueMetrics::of(&jobs, "gpu", T0_MS - 5_000).oldest_pending_wait_s,
            Some(0)
        );
    }

    #[test]
    fn metrics_serialize_with_a_null_wait() {
        let json = serde_json::to_value(QueueMetrics::default()).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "pending_gpus": 0, "allocated_gpus": 0,
                "oldest_pending_wait_s": null, "pending_jobs": 0,
            })
        );
    }

    #[test]
    fn reads_sinfo_lines() {
        let text = "\
gpu1|gpu*|idle~|gpu:a100:4(S:0-1)|none
gpu2|gpu|draining|gpu:a100:4|scale-in
gpu3|gpu|down*|(null)|Not responding
gpu4|gpu|mixed#|gpu:2|none
";
        let nodes = parse_sinfo(text).unwrap();
        assert_eq!(
            nodes[0],
            NodeInfo {
                name: "gpu1".into(),
                partition: "gpu".into(),
                default_partition: true,
                state: NodeState {
                    base: NodeBase::Idle,
                    flags: vec![NodeFlag::PoweredDown],
                },
                gpus: 4,
                reason: None,
            }
        );
        assert_eq!(nodes[1].state.base, NodeBase::Draining);
        assert_eq!(nodes[1].reason.as_deref(), Some("scale-in"));
        assert!(nodes[2].state.has(NodeFlag::NotResponding));
        assert_eq!(nodes[2].gpus, 0);
        assert!(nodes[3].state.has(NodeFlag::PoweringUp));
        assert_eq!(NodeState::parse("planned").unwrap().base, NodeBase::Planned);
        assert_eq!(
            NodeState::parse("inval").unwrap().base,
            NodeBase::Other("inval".into())
        );
    }

    #[test]
    fn each_sinfo_error_names_its_line_and_field() {
        for (line, field) in [
            ("gpu1|gpu|idle|gpu:4", "fields"),
            ("|gpu|idle|gpu:4|none", "node"),
            ("gpu1|*|idle|gpu:4|none", "partition"),
            ("gpu1|gpu|~|gpu:4|none", "state"),
            ("gpu1|gpu|idle?|gpu:4|none", "state"),
            ("gpu1|gpu|idle|gpu:a100:x|none", "gres"),
        ] {
            let error = parse_sinfo(&format!("gpu0|gpu|idle|gpu:4|none\n{line}")).unwrap_err();
            assert_eq!((error.line, error.field), (2, field), "{line}: {error}");
        }
    }
}
