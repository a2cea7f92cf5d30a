//! Machine-readable reasons: why a change was made, why a host or a request failed, why
//! a slider move asks first, why a pool is not where it should be. Each is a tagged enum
//! with its numbers (`{"kind": "failover", "host": "gpu-a", "gpus": 2, ...}`), so the UI
//! words it in the operator's language; `Display` gives the English for logs and the CLI.
//!
//! Free text inside a reason (`reason`, `message`) is what a library or a peer said,
//! passed through as detail; the sentence around it is always the kind's.

use crate::agent::AgentErrorKind;
use crate::plan::yuan;
use crate::rules::counted;
use serde::{Deserialize, Serialize};
use specta::Type;
use std::fmt;

/// Why a host could not be used, or a call to it failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HostProblem {
    /// The registered URL is not one an agent can have.
    BadUrl { url: String, reason: String },
    /// The host name does not resolve.
    Dns { url: String },
    /// Nothing listens there.
    Refused { url: String },
    /// No answer within the client's timeout.
    Timeout { url: String, timeout_ms: u64 },
    /// The TLS handshake or the pinned certificate failed.
    Tls { url: String, reason: String },
    /// Any other failure to connect.
    Connect { url: String, reason: String },
    /// HTTP 401: the token was refused.
    Unauthorized { url: String },
    /// HTTP 403: the token lacks the scope.
    Forbidden { url: String },
    /// An unexpected HTTP status.
    Status { url: String, status: u16 },
    /// The agent refused the request (4xx with its own `{kind, message}`).
    RefusedRequest {
        url: String,
        status: u16,
        /// The agent's own kind; `unknown` for one this build does not know.
        agent_kind: AgentErrorKind,
        message: String,
    },
    /// Something answered that is not an Ebb agent (not its JSON, a bare 4xx, not HTTP).
    Decode { url: String, reason: String },
    /// The agent speaks another API version.
    Incompatible {
        url: String,
        found: u32,
        expected: u32,
    },
    /// The host answered, but some of its GPUs did not.
    GpusNotAnswering { gpus: u32 },
    /// The host answered, slowly.
    Slow { latency_ms: u64 },
}

impl HostProblem {
    /// A stable word for the kind (the serde tag).
    pub const fn kind(&self) -> &'static str {
        match self {
            HostProblem::BadUrl { .. } => "bad_url",
            HostProblem::Dns { .. } => "dns",
            HostProblem::Refused { .. } => "refused",
            HostProblem::Timeout { .. } => "timeout",
            HostProblem::Tls { .. } => "tls",
            HostProblem::Connect { .. } => "connect",
            HostProblem::Unauthorized { .. } => "unauthorized",
            HostProblem::Forbidden { .. } => "forbidden",
            HostProblem::Status { .. } => "status",
            HostProblem::RefusedRequest { .. } => "refused_request",
            HostProblem::Decode { .. } => "decode",
            HostProblem::Incompatible { .. } => "incompatible",
            HostProblem::GpusNotAnswering { .. } => "gpus_not_answering",
            HostProblem::Slow { .. } => "slow",
        }
    }
}

impl fmt::Display for HostProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostProblem::BadUrl { url, reason } => {
                write!(f, "`{url}` is not a valid agent URL: {reason}")
            }
            HostProblem::Dns { url } => {
                write!(
                    f,
                    "cannot resolve the host name of {url}: check the address"
                )
            }
            HostProblem::Refused { url } => write!(
                f,
                "{url} refused the connection: is ebb-agent running and listening there?"
            ),
            HostProblem::Timeout { url, timeout_ms } => {
                write!(f, "no answer from {url} within {timeout_ms} ms")
            }
            HostProblem::Tls { url, reason } => write!(f, "TLS with {url} failed: {reason}"),
            HostProblem::Connect { url, reason } => write!(f, "cannot connect to {url}: {reason}"),
            HostProblem::Unauthorized { url } => write!(
                f,
                "{url} refused the token (HTTP 401): check the host's token"
            ),
            HostProblem::Forbidden { url } => write!(
                f,
                "{url} accepted the token but not for this (HTTP 403): it needs a token with the right scope"
            ),
            HostProblem::Status { url, status } => write!(f, "{url} answered HTTP {status}"),
            HostProblem::RefusedRequest {
                url,
                status,
                message,
                ..
            } => write!(f, "{url} refused (HTTP {status}): {message}"),
            HostProblem::Decode { url, reason } => write!(
                f,
                "{url} answered, but it is not an Ebb agent (wrong port?): {reason}"
            ),
            HostProblem::Incompatible {
                url,
                found,
                expected,
            } => write!(
                f,
                "{url} speaks agent API v{found}; this console speaks v{expected}"
            ),
            HostProblem::GpusNotAnswering { gpus } => {
                write!(
                    f,
                    "{} not answering on the host",
                    counted(*gpus, "GPU", "GPUs")
                )
            }
            HostProblem::Slow { latency_ms } => write!(f, "answering slowly ({latency_ms} ms)"),
        }
    }
}

impl std::error::Error for HostProblem {}

/// Why a pool's desired count (or its settings) changed: one line of the activity log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ChangeReason {
    /// The pool was made.
    Created {
        model: String,
        regions: Vec<String>,
        min: u32,
        max: u32,
    },
    /// Its settings were edited; `min`/`max` are the range after the edit.
    SettingsChanged {
        min: u32,
        max: u32,
        range_moved: bool,
    },
    /// Deleted: every GPU it held is released.
    Deleted,
    /// "Release now": GPUs kept for their paid unit are released at once.
    ReleaseNow,
    /// The operator moved the slider in the Pool view.
    Slider,
    /// `ebb pool scale` on the command line.
    Cli,
    /// A host has not answered for `grace_s`: its GPUs are written off and replaced.
    Failover {
        host: String,
        gpus: u32,
        grace_s: u64,
    },
    /// A host's owner takes back `gpus` of the pool's (a spot reclaim) at `until_ms`:
    /// replaced at once, released by the host at the deadline.
    Reclaimed {
        host: String,
        gpus: u32,
        until_ms: i64,
    },
    /// Spot of `model` in `region` was taken back `interruptions` times within
    /// `window_minutes`: new GPUs there go on demand until `until_ms` at the earliest, and
    /// after that once spot has been quiet (the circuit breaker opened; console-wide).
    SpotPaused {
        model: String,
        region: String,
        interruptions: u32,
        window_minutes: u32,
        until_ms: i64,
    },
    /// Spot of `model` in `region` has been quiet for `quiet_minutes`: new GPUs there may
    /// go on spot again (the circuit breaker closed; console-wide).
    SpotResumed {
        model: String,
        region: String,
        quiet_minutes: u32,
    },
    /// GPUs granted to the pool and warming (their workload starting: a process, a Slurm
    /// node registering) are up and counted ready: `gpus` on `hosts`, the slowest
    /// `warmed_s` seconds after its grant.
    Ready {
        hosts: Vec<String>,
        gpus: u32,
        warmed_s: u64,
    },
    /// A host that was written off answers again: its stale leases are released.
    HostBack { host: String, leases: u32 },
    /// The count unchanged, the enforcer rented and released GPUs to keep it (a
    /// replacement, back to spot at a paid unit's end, a GPU kept to its unit's end going):
    /// `rented` and `released` GPUs, each host's in the entry's results.
    Upkeep { rented: u32, released: u32 },
    /// A host was registered (console-wide: no pool).
    HostAdded { host: String, region: String },
    /// A host was removed from the registry (console-wide).
    HostRemoved { host: String },
    /// A host is to be removed: the pools' GPUs there are released and taken elsewhere
    /// first (console-wide).
    HostDraining { host: String, gpus: u32 },
    /// A host written off while silent was forgotten (console-wide): its `leases` were
    /// recorded as ended when they were written off; if it ever answers again, its agent
    /// still holds those GPUs.
    HostForgotten { host: String, leases: u32 },
    /// When a slider move asks first changed (console-wide).
    ConfirmLimitsChanged {
        above_gpus: u32,
        above_per_hour_fen: i64,
    },
    /// The monthly budget was set (`Some`) or cleared (console-wide).
    BudgetChanged { budget_fen: Option<i64> },
    /// The pool's rule set was saved as `version`: the rules (and `limits`, `scale_in`,
    /// `metrics` for those sections) added, removed and changed, by name.
    RulesSaved {
        version: u32,
        mode: crate::rules::RulesMode,
        added: Vec<String>,
        removed: Vec<String>,
        changed: Vec<String>,
        /// Lint warnings the operator acknowledged on saving.
        warnings: u32,
    },
    /// The pool's rules were enabled, disabled or put in shadow mode.
    RulesMode {
        version: u32,
        mode: crate::rules::RulesMode,
    },
    /// A rule decision: the count it set (or, in shadow mode or held by a clamp, would
    /// have set), with every rule's say, each clamp and the cost delta.
    RuleDecision {
        decision: Box<crate::rules::Decision>,
        /// Shadow mode: decided and logged, nothing changed.
        shadow: bool,
    },
    /// The operator went past the pool's budget cap on purpose (the slider or the CLI).
    BudgetOverride { per_hour_fen: i64, cap_fen: i64 },
    /// A pool bound to a Slurm partition changed its nodes (`nodes`, a hostlist, holding
    /// `gpus` GPUs in all).
    Slurm {
        partition: String,
        nodes: String,
        gpus: u32,
        step: SlurmStep,
    },
    /// A team was made, or its monthly spend quota set (`Some`) or cleared (console-wide).
    TeamChanged {
        team: String,
        spend_per_month_fen: Option<i64>,
    },
    /// A team's quota of `model` GPUs was set (`Some`) or cleared (console-wide).
    TeamQuota {
        team: String,
        model: String,
        gpus: Option<u32>,
    },
    /// A pool was moved into `team` (`""`: out of any team; console-wide).
    PoolTeam { pool: String, team: String },
    /// `user` was given the Ebb role `role` (console-wide).
    RoleGranted {
        user: String,
        role: crate::access::AccessRole,
    },
    /// An operator asked for what their role does not allow: refused, and logged
    /// (console-wide).
    Refused {
        action: crate::access::AccessAction,
        needs: crate::access::AccessRole,
    },
    /// A slider or CLI move clamped by the team's quota: `asked` GPUs, `to` allowed (the
    /// team's `model` quota of `quota_gpus`).
    QuotaClamp {
        team: String,
        model: String,
        quota_gpus: u32,
        asked: u32,
    },
    /// A slider or CLI move clamped by the team's spend quota: `asked` GPUs, `to` allowed
    /// (the most the rest of the month pays for within `per_month_fen`).
    SpendQuotaClamp {
        team: String,
        per_month_fen: i64,
        asked: u32,
    },
    /// Words with no kind: log lines written before reasons had one.
    Note { text: String },
}

/// Why Ebb could not lease a Slurm node's GPUs when it was asked for (each worded in both
/// languages by the UI; the English is Slurm's down reason).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum NodeProblem {
    /// The node's host is not in the registry.
    HostNotRegistered { host: String },
    /// The node's host does not answer.
    HostSilent { host: String },
    /// The host has no GPU of that index.
    NoSuchGpu { host: String, index: u32 },
    /// The GPU is leased (to another pool or tenant).
    GpuLeased { host: String, index: u32 },
    /// The GPU reports itself unhealthy.
    GpuUnhealthy { host: String, index: u32 },
    /// The node's agent refused the lease.
    Refused { problem: HostProblem },
    /// Words stored before problems had a kind.
    Said { words: String },
}

impl fmt::Display for NodeProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NodeProblem::HostNotRegistered { host } => write!(f, "host {host} is not registered"),
            NodeProblem::HostSilent { host } => write!(f, "host {host} does not answer"),
            NodeProblem::NoSuchGpu { host, index } => write!(f, "host {host} has no GPU {index}"),
            NodeProblem::GpuLeased { host, index } => write!(f, "GPU {index} on {host} is leased"),
            NodeProblem::GpuUnhealthy { host, index } => {
                write!(f, "GPU {index} on {host} is unhealthy")
            }
            NodeProblem::Refused { problem } => write!(f, "{problem}"),
            NodeProblem::Said { words } => f.write_str(words),
        }
    }
}

/// A node problem as stored: its kind, or (written before problems had one) its words.
fn node_problem<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<NodeProblem, D::Error> {
    match serde_json::Value::deserialize(deserializer)? {
        serde_json::Value::String(words) => Ok(NodeProblem::Said { words }),
        value => NodeProblem::deserialize(value).map_err(serde::de::Error::custom),
    }
}

/// What a Slurm-bound pool did to a node, and why where it is not plain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(tag = "step", rename_all = "snake_case")]
pub enum SlurmStep {
    /// Its GPUs were leased and its slurmd started (the queue asked, or Slurm resumed it).
    Resumed,
    /// Drained in Slurm for scale-in: no new job starts there; it goes back when its jobs
    /// end.
    Drained,
    /// Wanted again while draining: back in service.
    Undrained,
    /// Given back: its lease released (idle, or drained and its jobs ended).
    Released,
    /// Suspended by Slurm, or chosen for scale-in while idle: its lease is kept until its
    /// paid unit ends (`until_ms`), so a resume before then reuses it at once.
    Parked { until_ms: i64 },
    /// Its jobs were requeued: the drain passed the pool's cost cap, or `--force`.
    Requeued { jobs: Vec<String> },
    /// Its jobs that cannot be requeued (`--no-requeue`) were cancelled: only under
    /// `--force`, the one way Ebb ends a job.
    Cancelled { jobs: Vec<String> },
    /// A resume Ebb could not serve: the node is marked down in Slurm with this reason.
    CannotServe {
        #[serde(deserialize_with = "node_problem")]
        problem: NodeProblem,
    },
    /// Held and wanted, but drained or set down by Slurm (or an admin) for `slurm_reason`,
    /// in Slurm's words (`Duplicate jobid` after a controller restart): resumed.
    Returned { slurm_reason: String },
    /// Held, but kept out of service by Slurm for `slurm_reason` and not coming back: its
    /// lease released and another node leased in its place.
    Replaced { slurm_reason: String },
    /// Jobs Slurm held because their launch failed on a node (`launch_failed_requeued_held`)
    /// released to run again; each at most twice.
    Unheld { jobs: Vec<String> },
}

impl fmt::Display for ChangeReason {
    #[allow(
        clippy::too_many_lines,
        reason = "one arm per reason: the English words of every reason"
    )]
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChangeReason::Created {
                model,
                regions,
                min,
                max,
            } => write!(
                f,
                "created: {model} in {}, {min} to {max} GPUs",
                regions.join(", ")
            ),
            ChangeReason::SettingsChanged {
                min,
                max,
                range_moved,
            } => {
                if *range_moved {
                    write!(f, "settings changed: range now {min} to {max}")
                } else {
                    f.write_str("settings changed")
                }
            }
            ChangeReason::Deleted => f.write_str("deleted: every GPU it held is released"),
            ChangeReason::ReleaseNow => {
                f.write_str("release now: GPUs kept for their paid unit are released at once")
            }
            ChangeReason::Slider => f.write_str("slider in the Pool view"),
            ChangeReason::Cli => f.write_str("ebb pool scale"),
            ChangeReason::Ready { .. } => match self.phrase() {
                Some(phrase) => crate::rules::english(&phrase, f),
                None => f.write_str("ready"),
            },
            ChangeReason::Reclaimed { host, gpus, .. } => write!(
                f,
                "{host} takes back {} (its owner's reclaim notice): a replacement is ordered now",
                counted(*gpus, "GPU", "GPUs")
            ),
            ChangeReason::SpotPaused {
                model,
                region,
                interruptions,
                window_minutes,
                ..
            } => write!(
                f,
                "spot {model} in {region} taken back {interruptions} times in {window_minutes} min: new GPUs there go on demand until it is quiet"
            ),
            ChangeReason::SpotResumed {
                model,
                region,
                quiet_minutes,
            } => write!(
                f,
                "spot {model} in {region} quiet for {quiet_minutes} min: new GPUs there may go on spot again"
            ),
            ChangeReason::Failover {
                host,
                gpus,
                grace_s,
            } => write!(
                f,
                "{host} has not answered for {grace_s} s: its {} written off and replaced elsewhere",
                if *gpus == 1 {
                    "1 GPU is".to_string()
                } else {
                    format!("{gpus} GPUs are")
                }
            ),
            ChangeReason::HostBack { host, leases } => write!(
                f,
                "{host} is back: releasing its {}, already replaced",
                counted(*leases, "stale lease", "stale leases")
            ),
            ChangeReason::Upkeep { rented, released } => write!(
                f,
                "count kept: {} rented, {} released (replacements, back to spot, paid units ended)",
                counted(*rented, "GPU", "GPUs"),
                counted(*released, "GPU", "GPUs")
            ),
            ChangeReason::HostAdded { host, region } => {
                write!(f, "host {host} added in {region}")
            }
            ChangeReason::HostRemoved { host } => write!(f, "host {host} removed"),
            ChangeReason::Slurm {
                partition,
                nodes,
                gpus,
                step,
            } => {
                let gpus = counted(*gpus, "GPU", "GPUs");
                match step {
                    SlurmStep::Resumed => {
                        write!(f, "Slurm {partition}: {nodes} resumed ({gpus} leased)")
                    }
                    SlurmStep::Drained => write!(
                        f,
                        "Slurm {partition}: {nodes} draining for scale-in ({gpus} go back when their jobs end)"
                    ),
                    SlurmStep::Undrained => {
                        write!(f, "Slurm {partition}: {nodes} back in service")
                    }
                    SlurmStep::Released => {
                        write!(f, "Slurm {partition}: {nodes} released ({gpus})")
                    }
                    SlurmStep::Parked { .. } => write!(
                        f,
                        "Slurm {partition}: {nodes} parked ({gpus} kept to the end of the paid unit)"
                    ),
                    SlurmStep::Requeued { jobs } => write!(
                        f,
                        "Slurm {partition}: {nodes} requeued {} to go back",
                        counted(u32::try_from(jobs.len()).unwrap_or(u32::MAX), "job", "jobs")
                    ),
                    SlurmStep::Cancelled { jobs } => write!(
                        f,
                        "Slurm {partition}: {nodes} cancelled {} that could not be requeued (forced)",
                        counted(u32::try_from(jobs.len()).unwrap_or(u32::MAX), "job", "jobs")
                    ),
                    SlurmStep::CannotServe { problem } => write!(
                        f,
                        "Slurm {partition}: cannot resume {nodes}: {problem}; marked down"
                    ),
                    SlurmStep::Returned { slurm_reason } => write!(
                        f,
                        "Slurm {partition}: {nodes} taken out of service by Slurm ({slurm_reason}) and still wanted: resumed"
                    ),
                    SlurmStep::Replaced { slurm_reason } => write!(
                        f,
                        "Slurm {partition}: {nodes} kept out of service by Slurm ({slurm_reason}): released, another node leased in its place"
                    ),
                    SlurmStep::Unheld { jobs } => write!(
                        f,
                        "Slurm {partition}: {} Slurm held after a failed launch let run again",
                        counted(u32::try_from(jobs.len()).unwrap_or(u32::MAX), "job", "jobs")
                    ),
                }
            }
            ChangeReason::HostDraining { host, gpus } => write!(
                f,
                "host {host} to be removed: releasing the {} there first, taken elsewhere",
                counted(*gpus, "pool GPU", "pool GPUs")
            ),
            ChangeReason::HostForgotten { host, leases } => write!(
                f,
                "host {host} forgotten while silent: its {} recorded as ended",
                counted(*leases, "written-off lease", "written-off leases")
            ),
            ChangeReason::ConfirmLimitsChanged {
                above_gpus,
                above_per_hour_fen,
            } => write!(
                f,
                "confirmation limits changed: ask above {above_gpus} GPUs or {} per hour",
                yuan(*above_per_hour_fen)
            ),
            ChangeReason::BudgetChanged {
                budget_fen: Some(fen),
            } => write!(f, "monthly budget set to {}", yuan(*fen)),
            ChangeReason::BudgetChanged { budget_fen: None } => {
                f.write_str("monthly budget cleared")
            }
            ChangeReason::RulesSaved {
                version,
                mode,
                added,
                removed,
                changed,
                warnings,
            } => {
                write!(f, "rules saved as version {version} ({mode})")?;
                for (what, names) in [("added", added), ("removed", removed), ("changed", changed)]
                {
                    if !names.is_empty() {
                        write!(f, "; {what} {}", names.join(", "))?;
                    }
                }
                if *warnings > 0 {
                    write!(
                        f,
                        "; {} acknowledged",
                        counted(*warnings, "lint warning", "lint warnings")
                    )?;
                }
                Ok(())
            }
            ChangeReason::RulesMode { version, mode } => {
                write!(f, "rules version {version} {mode}")
            }
            ChangeReason::RuleDecision { decision, shadow } => {
                if *shadow {
                    f.write_str("shadow: ")?;
                }
                write!(f, "{}", decision.reason)?;
                if decision.desired_gpus != decision.current_gpus {
                    write!(
                        f,
                        " ({} → {} GPUs)",
                        decision.current_gpus, decision.desired_gpus
                    )?;
                }
                Ok(())
            }
            ChangeReason::BudgetOverride {
                per_hour_fen,
                cap_fen,
            } => write!(
                f,
                "past the budget cap on purpose: {} per hour against a cap of {}",
                yuan(*per_hour_fen),
                yuan(*cap_fen)
            ),
            ChangeReason::TeamChanged {
                team,
                spend_per_month_fen: Some(fen),
            } => write!(f, "team {team}: spend quota {} a month", yuan(*fen)),
            ChangeReason::TeamChanged {
                team,
                spend_per_month_fen: None,
            } => write!(f, "team {team}: no spend quota"),
            ChangeReason::TeamQuota {
                team,
                model,
                gpus: Some(gpus),
            } => write!(f, "team {team}: quota of {gpus} {model} GPUs"),
            ChangeReason::TeamQuota {
                team,
                model,
                gpus: None,
            } => write!(f, "team {team}: no quota of {model} GPUs"),
            ChangeReason::PoolTeam { pool, team } if team.is_empty() => {
                write!(f, "pool {pool} taken out of its team")
            }
            ChangeReason::PoolTeam { pool, team } => {
                write!(f, "pool {pool} moved into team {team}")
            }
            ChangeReason::RoleGranted { user, role } => write!(f, "{user} made {role}"),
            ChangeReason::Refused { action, needs } => {
                write!(f, "refused: to {} needs the {needs} role", action.words())
            }
            ChangeReason::QuotaClamp {
                team,
                model,
                quota_gpus,
                asked,
            } => write!(
                f,
                "asked for {asked} GPUs, clamped by team {team}'s quota of {quota_gpus} {model} GPUs"
            ),
            ChangeReason::SpendQuotaClamp {
                team,
                per_month_fen,
                asked,
            } => write!(
                f,
                "asked for {asked} GPUs, clamped by team {team}'s spend quota of {} a month",
                yuan(*per_month_fen)
            ),
            ChangeReason::Note { text } => f.write_str(text),
        }
    }
}

impl ChangeReason {
    /// Reads a reason as stored: JSON, or (rows from before reasons had a kind) plain words.
    pub fn from_stored(text: &str) -> ChangeReason {
        serde_json::from_str(text).unwrap_or_else(|_| ChangeReason::Note {
            text: text.to_string(),
        })
    }

    /// The form it is stored in.
    pub fn to_stored(&self) -> String {
        serde_json::to_string(self).expect("a reason always serializes")
    }
}

/// Why a slider move asks for confirmation before it is made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ConfirmationReason {
    /// It changes the pool by more GPUs than the limit.
    Gpus { change: u32, limit: u32 },
    /// It moves the cost per hour by more than the limit (both in fen).
    CostPerHour { delta_fen: i64, limit_fen: i64 },
}

impl fmt::Display for ConfirmationReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfirmationReason::Gpus { change, limit } => {
                write!(f, "changes the pool by {change} GPUs (more than {limit})")
            }
            ConfirmationReason::CostPerHour {
                delta_fen,
                limit_fen,
            } => write!(
                f,
                "moves the cost by {} per hour (more than {})",
                yuan(*delta_fen),
                yuan(*limit_fen)
            ),
        }
    }
}

/// The agent's documented default grace between SIGTERM and SIGKILL when a lease is
/// released (`release_grace_s` in the agent's config), used while an agent does not report its own.
pub const DEFAULT_RELEASE_GRACE_S: u32 = 30;

/// What a scale-in would stop, said before it is made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ReleaseWarning {
    /// `busy` of the `of` GPUs to release run work (utilization from `min_util_pct` to
    /// `max_util_pct`); their workloads get SIGTERM, then SIGKILL after `grace_s` seconds.
    BusyGpus {
        busy: u32,
        of: u32,
        min_util_pct: u32,
        max_util_pct: u32,
        grace_s: u32,
    },
}

impl fmt::Display for ReleaseWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReleaseWarning::BusyGpus {
                busy,
                of,
                min_util_pct,
                max_util_pct,
                grace_s,
            } => {
                let range = if min_util_pct == max_util_pct {
                    format!("{min_util_pct}%")
                } else {
                    format!("{min_util_pct}–{max_util_pct}%")
                };
                let grace = format!("SIGTERM with a {grace_s} s grace");
                if *of == 1 {
                    write!(f, "This GPU runs a job at {range}: it gets {grace}")
                } else if busy == of {
                    write!(
                        f,
                        "All {of} of these GPUs run jobs at {range}: they get {grace}"
                    )
                } else {
                    write!(
                        f,
                        "{busy} of these {of} GPUs run jobs at {range}: they get {grace}"
                    )
                }
            }
        }
    }
}

/// Why a pool, its spend or a slider move could not be priced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PriceProblem {
    /// The catalog has no entry for the model in any of `regions`.
    NoPrice { model: String, regions: Vec<String> },
    /// The entry lacks the price the pool's mode needs (`field` names the catalog field).
    NotOffered {
        model: String,
        region: String,
        field: String,
    },
    /// The pool has no region to price in.
    NoRegion,
    /// The figures are too large to compute exactly.
    TooLarge,
}

impl fmt::Display for PriceProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PriceProblem::NoPrice { model, regions } => write!(
                f,
                "the catalog has no price for {model} in {}",
                regions.join(", ")
            ),
            PriceProblem::NotOffered {
                model,
                region,
                field,
            } => write!(
                f,
                "{model} in {region} has no `{field}` price, so that mode is not offered there"
            ),
            PriceProblem::NoRegion => f.write_str("the pool has no region"),
            PriceProblem::TooLarge => f.write_str("the figures are too large to compute exactly"),
        }
    }
}

/// One reason a pool is not where it should be.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PoolNote {
    /// No process enforces this data directory.
    NotEnforced,
    /// More GPUs wanted than are free.
    Short {
        gpus: u32,
        model: String,
        regions: Vec<String>,
    },
    /// Requests to a host failed.
    HostFailing { host: String, problem: HostProblem },
    /// GPUs on unreachable hosts written off and being replaced.
    Lost { gpus: u32 },
    /// GPUs kept until their paid unit ends.
    HeldToUnitEnd { gpus: u32 },
    /// Spot is paused in `region` (too many reclaims lately): new GPUs there go on demand
    /// until `until_ms` at the earliest.
    SpotPaused { region: String, until_ms: i64 },
    /// Beside a short pool: `gpus` free GPUs of its model in its regions are offered as
    /// spot, and it does not take them, for `why` (Fleet shows them free).
    SpotNotTaken { gpus: u32, why: SpotRefusal },
}

/// Why a pool does not take free GPUs offered as spot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum SpotRefusal {
    /// The pool is not interruptible: it takes no spot.
    NotInterruptible,
    /// Spot is paused where they are (too many reclaims lately).
    Paused,
    /// Their spot price is above the pool's max price.
    OverMaxPrice,
}

impl fmt::Display for PoolNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PoolNote::NotEnforced => f.write_str(
                "no Ebb process is enforcing this data directory: start the app or `ebb daemon`",
            ),
            PoolNote::Short {
                gpus,
                model,
                regions,
            } => write!(
                f,
                "{gpus} more {model} wanted than are free in {}",
                regions.join(", ")
            ),
            PoolNote::HostFailing { host, problem } => write!(f, "{host}: {problem}"),
            PoolNote::Lost { gpus } => write!(
                f,
                "{} on unreachable hosts written off and being replaced",
                counted(*gpus, "GPU", "GPUs")
            ),
            PoolNote::HeldToUnitEnd { gpus } => {
                write!(
                    f,
                    "{} kept until their paid unit ends",
                    counted(*gpus, "GPU", "GPUs")
                )
            }
            PoolNote::SpotPaused { region, .. } => write!(
                f,
                "spot paused in {region} after repeated reclaims: new GPUs there go on demand"
            ),
            PoolNote::SpotNotTaken { gpus, why } => write!(
                f,
                "{} free there offered as spot, not taken: {}",
                counted(*gpus, "GPU", "GPUs"),
                match why {
                    SpotRefusal::NotInterruptible => "the pool is not interruptible",
                    SpotRefusal::Paused => "spot is paused there",
                    SpotRefusal::OverMaxPrice => "above the pool's max spot price",
                }
            ),
        }
    }
}

/// Notes in English, joined for one line of a log or a table.
pub fn notes_in_words(notes: &[PoolNote]) -> Option<String> {
    (!notes.is_empty()).then(|| {
        notes
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new_problem_words(step: &SlurmStep) -> String {
        match step {
            SlurmStep::CannotServe { problem } => problem.to_string(),
            _ => String::new(),
        }
    }

    #[test]
    fn a_release_warning_names_the_busy_gpus_their_range_and_grace() {
        let warning = ReleaseWarning::BusyGpus {
            busy: 2,
            of: 3,
            min_util_pct: 55,
            max_util_pct: 89,
            grace_s: 30,
        };
        assert_eq!(
            serde_json::to_value(&warning).unwrap(),
            serde_json::json!({"kind": "busy_gpus", "busy": 2, "of": 3, "min_util_pct": 55, "max_util_pct": 89, "grace_s": 30})
        );
        assert_eq!(
            warning.to_string(),
            "2 of these 3 GPUs run jobs at 55–89%: they get SIGTERM with a 30 s grace"
        );
        let all = ReleaseWarning::BusyGpus {
            busy: 3,
            of: 3,
            min_util_pct: 55,
            max_util_pct: 89,
            grace_s: 5,
        };
        assert_eq!(
            all.to_string(),
            "All 3 of these GPUs run jobs at 55–89%: they get SIGTERM with a 5 s grace"
        );
        let one = ReleaseWarning::BusyGpus {
            busy: 1,
            of: 1,
            min_util_pct: 70,
            max_util_pct: 70,
            grace_s: 5,
        };
        assert_eq!(
            one.to_string(),
            "This GPU runs a job at 70%: it gets SIGTERM with a 5 s grace"
        );
    }

    #[test]
    fn reasons_are_tagged_with_their_numbers() {
        let reason = ChangeReason::Failover {
            host: "gpu-a".into(),
            gpus: 2,
            grace_s: 30,
        };
        assert_eq!(
            serde_json::to_value(&reason).unwrap(),
            serde_json::json!({"kind": "failover", "host": "gpu-a", "gpus": 2, "grace_s": 30})
        );
        assert_eq!(ChangeReason::from_stored(&reason.to_stored()), reason);
        assert_eq!(
            reason.to_string(),
            "gpu-a has not answered for 30 s: its 2 GPUs are written off and replaced elsewhere"
        );
    }

    #[test]
    fn a_node_problem_stored_as_words_reads_as_said_and_a_new_one_keeps_its_kind() {
        let old = r#"{"kind":"slurm","partition":"gpu","nodes":"n1","gpus":2,"step":{"step":"cannot_serve","problem":"GPU 0 on gpu-a is leased"}}"#;
        let ChangeReason::Slurm { step, .. } = ChangeReason::from_stored(old) else {
            panic!("a Slurm step");
        };
        assert_eq!(
            step,
            SlurmStep::CannotServe {
                problem: NodeProblem::Said {
                    words: "GPU 0 on gpu-a is leased".into()
                }
            }
        );
        let new = SlurmStep::CannotServe {
            problem: NodeProblem::GpuLeased {
                host: "gpu-a".into(),
                index: 0,
            },
        };
        let text = serde_json::to_string(&new).unwrap();
        assert_eq!(serde_json::from_str::<SlurmStep>(&text).unwrap(), new);
        assert_eq!(
            new_problem_words(&new),
            "GPU 0 on gpu-a is leased",
            "the English is the old words"
        );
    }

    #[test]
    fn words_stored_before_reasons_had_a_kind_read_as_a_note() {
        assert_eq!(
            ChangeReason::from_stored("slider in the Pool view"),
            ChangeReason::Note {
                text: "slider in the Pool view".into()
            }
        );
    }

    #[test]
    fn every_price_problem_is_worded_in_zh_cn() {
        let all = [
            PriceProblem::NoPrice {
                model: "A100".into(),
                regions: vec!["cn-east".into()],
            },
            PriceProblem::NotOffered {
                model: "A100".into(),
                region: "cn-east".into(),
                field: "spot_hour".into(),
            },
            PriceProblem::NoRegion,
            PriceProblem::TooLarge,
        ];
        // No wildcard: a new kind fails to compile here until it is listed above.
        let listed = |problem: &PriceProblem| match problem {
            PriceProblem::NoPrice { .. }
            | PriceProblem::NotOffered { .. }
            | PriceProblem::NoRegion
            | PriceProblem::TooLarge => true,
        };
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../ui/src/locales/zh-CN.json");
        let catalog = std::fs::read_to_string(path).expect("ui/src/locales/zh-CN.json");
        let zh: std::collections::BTreeMap<String, String> =
            serde_json::from_str(&catalog).expect("the zh-CN catalog is a JSON object of strings");
        for problem in &all {
            assert!(listed(problem));
            let tag = serde_json::to_value(problem).unwrap()["kind"].clone();
            let key = format!("reason.price.{}", tag.as_str().unwrap());
            let words = zh
                .get(&key)
                .unwrap_or_else(|| panic!("no zh-CN words for {key}"));
            assert!(
                words
                    .chars()
                    .any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
                "{words}"
            );
            assert!(!problem.to_string().is_empty());
        }
    }

    #[test]
    fn a_price_problem_names_the_model_and_regions() {
        let problem = PriceProblem::NoPrice {
            model: "H100".into(),
            regions: vec!["cn-north".into(), "cn-east".into()],
        };
        assert_eq!(
            serde_json::to_value(&problem).unwrap(),
            serde_json::json!({"kind": "no_price", "model": "H100", "regions": ["cn-north", "cn-east"]})
        );
        assert_eq!(
            problem.to_string(),
            "the catalog has no price for H100 in cn-north, cn-east"
        );
        assert_eq!(
            serde_json::to_value(PriceProblem::TooLarge).unwrap(),
            serde_json::json!({"kind": "too_large"})
        );
    }

    #[test]
    fn english_words_for_logs_and_the_cli() {
        let cost = ConfirmationReason::CostPerHour {
            delta_fen: 123_456,
            limit_fen: 10_000,
        };
        assert_eq!(
            cost.to_string(),
            "moves the cost by ¥1,234.56 per hour (more than ¥100.00)"
        );
        let problem = HostProblem::Timeout {
            url: "http://h:1".into(),
            timeout_ms: 2000,
        };
        assert_eq!(problem.kind(), "timeout");
        assert_eq!(
            serde_json::to_value(&problem).unwrap()["kind"],
            serde_json::json!("timeout")
        );
        let notes = [
            PoolNote::Lost { gpus: 2 },
            PoolNote::HeldToUnitEnd { gpus: 1 },
        ];
        assert_eq!(
            notes_in_words(&notes).unwrap(),
            "2 GPUs on unreachable hosts written off and being replaced; 1 GPU kept until their paid unit ends"
        );
        assert_eq!(notes_in_words(&[]), None);
    }
}
