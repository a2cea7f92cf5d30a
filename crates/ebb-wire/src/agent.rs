//! The host agent's HTTP API, version 1.

use serde::{Deserialize, Serialize};
use specta::Type;

/// The API version this build speaks; it is the `/v1` in every path.
pub const API_VERSION: u32 = 1;

/// `GET /v1/health`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct Health {
    /// Always `"ok"` when the agent answers at all.
    pub status: String,
    pub api_version: u32,
    /// The agent's crate version.
    pub agent_version: String,
    /// The name this agent reports for its host.
    pub host: String,
    /// Which probe backs the readings: `"simulator"` or `"nvml"`.
    pub backend: String,
}

/// `GET /v1/gpus`: every GPU of the host with its latest sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct GpuList {
    pub host: String,
    /// When the samples were taken, Unix milliseconds.
    pub sampled_at_ms: u64,
    pub gpus: Vec<Gpu>,
}

/// `GET /v1/samples?boot=B&after=N`: every sample the agent took after number `after`, oldest first, so a
/// collector that polls out of phase with the sampling (or misses a poll) stores each one.
/// Samples are numbered from 1 in each run of the agent (`boot`); an `after` from another
/// boot, or none, gives the samples the agent still keeps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct SampleBatch {
    /// This run of the agent; a new value means the numbering began again.
    pub boot: String,
    /// The number of the newest sample kept (0 before the first): the next call's `after`.
    pub last_seq: u64,
    /// Samples after `after` that the agent no longer keeps (it keeps about a minute).
    pub missed: u64,
    /// Oldest first; the last is the newest. Each with its GPUs' current leases.
    pub samples: Vec<GpuList>,
}

/// A total no card has: an older agent's way of saying it could not read one.
fn zero_is_unknown<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<u32>, D::Error> {
    Ok(Option::<u32>::deserialize(deserializer)?.filter(|&mib| mib > 0))
}

/// One GPU: its static facts and its latest dynamic readings.
///
/// Every reading is `None` when the card cannot give it (NVML's NOT_SUPPORTED) or when the
/// card is lost; `healthy` is `false` for a card that stopped answering.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, Type)]
pub struct Gpu {
    pub index: u32,
    pub uuid: String,
    pub model: String,
    /// The card's memory; `None` when it could not be read. An agent from before this was
    /// optional wrote 0 for that, which reads as `None` too.
    #[serde(deserialize_with = "zero_is_unknown")]
    pub memory_total_mib: Option<u32>,
    /// `false` when the card is lost or no longer answers; its readings are then `None`.
    pub healthy: bool,
    /// Why the card is unhealthy, in words; `None` when healthy.
    pub health_reason: Option<String>,
    /// The lease holding this card, if any.
    pub lease_id: Option<String>,
    pub memory_used_mib: Option<u32>,
    pub gpu_util_pct: Option<f32>,
    pub memory_util_pct: Option<f32>,
    pub temperature_c: Option<f32>,
    pub power_draw_w: Option<f32>,
    pub power_limit_w: Option<f32>,
    pub sm_clock_mhz: Option<u32>,
    pub memory_clock_mhz: Option<u32>,
    /// Processes using the card; `None` when they cannot be listed.
    pub processes: Option<Vec<GpuProcess>>,
    /// Volatile (since driver load) corrected ECC errors.
    pub ecc_corrected: Option<u64>,
    /// Volatile (since driver load) uncorrected ECC errors.
    pub ecc_uncorrected: Option<u64>,
    /// Memory pages retired for ECC errors (single- plus double-bit).
    pub retired_pages: Option<u32>,
    /// Xid error events seen since the agent started.
    pub xid_errors: Option<u32>,
    /// Offered as spot: cheaper, and its host's owner may take a lease on it back with a
    /// notice (`POST /v1/leases/{id}/reclaim`). Older agents do not send it.
    #[serde(default)]
    pub spot: bool,
}

/// A process running on a GPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct GpuProcess {
    pub pid: u32,
    /// The process's name (NVML's `nvmlSystemGetProcessName`); `None` when it cannot be
    /// read.
    /// Older agents do not send it.
    #[serde(default)]
    pub name: Option<String>,
    /// GPU memory the process uses; `None` when the driver does not say.
    pub used_memory_mib: Option<u32>,
}

/// The body of `POST /v1/leases`. Give either `count` or `gpu_uuids`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(deny_unknown_fields)]
pub struct LeaseRequest {
    /// The console's pool this lease belongs to.
    pub pool_id: String,
    /// Who holds the lease (a console's id).
    pub holder_id: String,
    /// How many free GPUs to take.
    #[serde(default)]
    pub count: Option<u32>,
    /// Exactly these GPUs.
    #[serde(default)]
    pub gpu_uuids: Option<Vec<String>>,
    /// A workload to start on the leased GPUs (argv, no shell), with
    /// `CUDA_VISIBLE_DEVICES` set to them.
    #[serde(default)]
    pub command: Option<Vec<String>>,
    /// Simulator only: how busy the leased GPUs run (`idle`, `steady`, `diurnal`, `burst`).
    #[serde(default)]
    pub load_profile: Option<String>,
    /// The group of consoles (sharing one database) this request speaks for; given with
    /// `term`, or neither (a single console). Left out of the JSON when `None`, so an agent
    /// that predates terms still takes the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub console_group: Option<String>,
    /// The term the group's leader was elected for (see [`ConsoleTerm`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub term: Option<u64>,
}

impl LeaseRequest {
    /// `count` free GPUs for `pool_id`, held by `holder_id`: no command, no fence.
    pub fn count(pool_id: impl Into<String>, holder_id: impl Into<String>, count: u32) -> Self {
        Self {
            pool_id: pool_id.into(),
            holder_id: holder_id.into(),
            count: Some(count),
            gpu_uuids: None,
            command: None,
            load_profile: None,
            console_group: None,
            term: None,
        }
    }

    /// The request fenced by `term`; `None` sends none, as a console that is not elected
    /// (a single console) does.
    #[must_use]
    pub fn with_term(mut self, term: Option<&ConsoleTerm>) -> Self {
        self.console_group = term.map(|term| term.console_group.clone());
        self.term = term.map(|term| term.term);
        self
    }

    /// The same request, fence aside: a retry of a key by a newer term is the same request.
    pub fn same_apart_from_term(&self, other: &LeaseRequest) -> bool {
        self.clone().with_term(None) == other.clone().with_term(None)
    }
}

/// An elected console's standing on a lease call: the group of consoles that share one
/// database, and the term its leader was elected for (a number that grows with each
/// election). An agent keeps the highest term it has seen from each group and refuses a
/// lower one with 409 `stale_term`, so a leader that was paused and replaced cannot act: a
/// fencing token per console group.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Type)]
pub struct ConsoleTerm {
    pub console_group: String,
    pub term: u64,
}

impl ConsoleTerm {
    pub fn new(console_group: impl Into<String>, term: u64) -> Self {
        Self {
            console_group: console_group.into(),
            term,
        }
    }

    /// The fence two optional wire fields make: `Ok(None)` for neither, `Err(field)` naming
    /// the missing one when only one is given.
    pub fn from_parts(
        console_group: Option<&str>,
        term: Option<u64>,
    ) -> Result<Option<Self>, &'static str> {
        match (console_group, term) {
            (None, None) => Ok(None),
            (Some(group), Some(term)) => Ok(Some(Self::new(group, term))),
            (Some(_), None) => Err("term"),
            (None, Some(_)) => Err("console_group"),
        }
    }
}

/// The query of `DELETE /v1/leases/{id}`: the caller's [`ConsoleTerm`], both fields or
/// neither (`?console_group=G&term=N`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct ReleaseQuery {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub console_group: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub term: Option<u64>,
}

impl ReleaseQuery {
    pub fn new(term: Option<&ConsoleTerm>) -> Self {
        Self {
            console_group: term.map(|term| term.console_group.clone()),
            term: term.map(|term| term.term),
        }
    }

    /// See [`ConsoleTerm::from_parts`].
    pub fn console_term(&self) -> Result<Option<ConsoleTerm>, &'static str> {
        ConsoleTerm::from_parts(self.console_group.as_deref(), self.term)
    }
}

/// Where a lease is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum LeaseState {
    /// Granted; its GPUs are the holder's.
    Active,
    /// Release asked; the workload is being stopped.
    Releasing,
    /// Over; its GPUs are free again.
    Released,
}

/// One grant of GPUs to a holder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct Lease {
    pub id: String,
    pub pool_id: String,
    pub holder_id: String,
    pub gpu_uuids: Vec<String>,
    pub gpu_indexes: Vec<u32>,
    /// Grows with every grant this agent makes, never reused: a holder can tell a stale
    /// lease from a newer one.
    pub fencing_token: u64,
    pub state: LeaseState,
    pub created_at_ms: u64,
    pub release_requested_at_ms: Option<u64>,
    pub released_at_ms: Option<u64>,
    pub command: Option<Vec<String>>,
    pub load_profile: Option<String>,
    pub workload_pid: Option<u32>,
    /// The workload's exit code; `None` while it runs, when there is none, or when it
    /// was ended by a signal (see `workload_signal`).
    pub workload_exit_code: Option<i32>,
    pub workload_signal: Option<i32>,
    /// Where the workload's output goes, on the agent's host.
    pub workload_log: Option<String>,
    /// When the workload last said it had saved its state (it touched the file named by
    /// `EBB_CHECKPOINT_FILE`, or someone called `POST /v1/leases/{id}/checkpoint`), Unix ms:
    /// releasing it loses only the work done since. `None`: it never said so.
    #[serde(default)]
    pub checkpoint_at_ms: Option<u64>,
    /// Granted, its workload not up yet (the simulator's startup not over): its GPUs are
    /// the holder's and paid for, not yet ready for work. `false` from agents that do not say.
    #[serde(default)]
    pub starting: bool,
    /// How long a release lets the workload stop after SIGTERM before SIGKILL, in seconds, as
    /// this agent is set; `None` from agents that do not say.
    #[serde(default)]
    pub release_grace_s: Option<u32>,
    /// Set when the host's owner reclaimed the lease (a spot lease's notice): Unix ms by
    /// which it is released whatever its holder does. The lease stays `active` until then
    /// (its GPUs are still the holder's); its workload was sent SIGTERM at the notice.
    /// `None`: not reclaimed, or an agent that cannot reclaim.
    #[serde(default)]
    pub reclaim_deadline_ms: Option<u64>,
    /// It holds GPUs its host offers as spot (priced at spot; its owner may reclaim it).
    /// Older agents do not send it.
    #[serde(default)]
    pub spot: bool,
}

/// The body of `POST /v1/leases/{id}/reclaim` (admin scope): how long the holder has
/// before the lease is released, more than 0 and at most 3600 seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(deny_unknown_fields)]
pub struct ReclaimRequest {
    pub notice_s: u64,
}

/// `GET /v1/leases`: oldest grant first, those [`LeaseListQuery`] asks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct LeaseList {
    pub leases: Vec<Lease>,
}

/// The query of `GET /v1/leases`. Left out, `state` answers the leases not yet released
/// (active and releasing): what a holder acts on, which does not grow with the agent's
/// history.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct LeaseListQuery {
    #[serde(default)]
    pub state: Option<LeaseListState>,
}

/// `?state=`: which leases besides, or instead of, those not yet released. An agent keeps
/// a released lease (and the idempotency key that granted it) for its retention
/// (`lease_retention_h`, 7 days by default), then forgets both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum LeaseListState {
    /// Every lease kept: those not yet released and those released within the retention.
    All,
    /// Only the released leases still kept.
    Released,
}

impl LeaseListState {
    /// The value as written in the query.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::All => "all",
            Self::Released => "released",
        }
    }
}

impl LeaseListQuery {
    /// Whether a lease in `state` is answered.
    pub fn includes(&self, state: LeaseState) -> bool {
        match self.state {
            None => state != LeaseState::Released,
            Some(LeaseListState::All) => true,
            Some(LeaseListState::Released) => state == LeaseState::Released,
        }
    }
}

/// The JSON body of every error the agent answers with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct ApiError {
    /// A stable machine-readable kind, e.g. `"not_found"`.
    pub kind: AgentErrorKind,
    /// What went wrong, in words an operator can act on.
    pub message: String,
}

/// Why the agent refused a request: the `kind` of its error body, `snake_case` on the wire.
///
/// A closed set for this build; a newer agent may answer a kind this console does not know,
/// which reads as [`AgentErrorKind::Unknown`] (the body's `message` then says what it is).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum AgentErrorKind {
    /// 400/422: the request is not one the agent can act on (a bad query, a field out of range).
    InvalidRequest,
    /// 400: the body is not JSON.
    MalformedJson,
    /// 413: the body is larger than the agent reads.
    BodyTooLarge,
    /// 415: the body was not sent as JSON.
    UnsupportedMediaType,
    /// 401: no token, or one the agent does not know.
    Unauthorized,
    /// 403: the token lacks the scope.
    Forbidden,
    /// 404: no such lease or endpoint.
    NotFound,
    /// 405: the endpoint does not take this method.
    MethodNotAllowed,
    /// 409: fewer GPUs free than asked for.
    NotEnoughFree,
    /// 409: a GPU asked for by UUID is held or unhealthy.
    GpuNotFree,
    /// 409: the call's console term is below one the agent has seen from the group: a
    /// newer leader exists.
    StaleTerm,
    /// 422: the idempotency key was used before for a different request.
    IdempotencyKeyReused,
    /// 500: the agent could not record the change.
    Internal,
    /// A kind this build does not know (from a newer agent).
    #[serde(other)]
    Unknown,
}

impl AgentErrorKind {
    /// The kind as the wire writes it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::InvalidRequest => "invalid_request",
            Self::MalformedJson => "malformed_json",
            Self::BodyTooLarge => "body_too_large",
            Self::UnsupportedMediaType => "unsupported_media_type",
            Self::Unauthorized => "unauthorized",
            Self::Forbidden => "forbidden",
            Self::NotFound => "not_found",
            Self::MethodNotAllowed => "method_not_allowed",
            Self::NotEnoughFree => "not_enough_free",
            Self::GpuNotFree => "gpu_not_free",
            Self::StaleTerm => "stale_term",
            Self::IdempotencyKeyReused => "idempotency_key_reused",
            Self::Internal => "internal",
            Self::Unknown => "unknown",
        }
    }
}

impl std::fmt::Display for AgentErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> LeaseRequest {
        LeaseRequest::count("pool-a", "console-1", 1)
    }

    #[test]
    fn agent_error_kinds_are_todays_strings_and_an_unknown_one_is_tolerated() {
        let all = [
            AgentErrorKind::InvalidRequest,
            AgentErrorKind::MalformedJson,
            AgentErrorKind::BodyTooLarge,
            AgentErrorKind::UnsupportedMediaType,
            AgentErrorKind::Unauthorized,
            AgentErrorKind::Forbidden,
            AgentErrorKind::NotFound,
            AgentErrorKind::MethodNotAllowed,
            AgentErrorKind::NotEnoughFree,
            AgentErrorKind::GpuNotFree,
            AgentErrorKind::StaleTerm,
            AgentErrorKind::IdempotencyKeyReused,
            AgentErrorKind::Internal,
            AgentErrorKind::Unknown,
        ];
        for kind in all {
            let json = serde_json::to_value(kind).unwrap();
            assert_eq!(json, serde_json::json!(kind.as_str()));
            assert_eq!(
                serde_json::from_value::<AgentErrorKind>(json).unwrap(),
                kind
            );
        }
        assert_eq!(
            serde_json::to_value(AgentErrorKind::StaleTerm).unwrap(),
            serde_json::json!("stale_term")
        );
        let newer: ApiError =
            serde_json::from_str(r#"{"kind": "quota_exceeded", "message": "over quota"}"#).unwrap();
        assert_eq!(newer.kind, AgentErrorKind::Unknown);
        assert_eq!(newer.message, "over quota");
    }

    #[test]
    fn a_memory_total_not_read_is_none_and_an_older_agents_zero_reads_as_none() {
        let gpu = Gpu {
            memory_total_mib: None,
            ..Gpu::default()
        };
        let json = serde_json::to_value(&gpu).unwrap();
        assert_eq!(json["memory_total_mib"], serde_json::Value::Null);
        assert_eq!(serde_json::from_value::<Gpu>(json.clone()).unwrap(), gpu);
        let mut older = json.clone();
        older["memory_total_mib"] = serde_json::json!(0);
        assert_eq!(
            serde_json::from_value::<Gpu>(older)
                .unwrap()
                .memory_total_mib,
            None
        );
        let mut read = json;
        read["memory_total_mib"] = serde_json::json!(81_920);
        assert_eq!(
            serde_json::from_value::<Gpu>(read)
                .unwrap()
                .memory_total_mib,
            Some(81_920)
        );
    }

    #[test]
    fn a_request_without_a_term_says_nothing_of_one() {
        let json = serde_json::to_value(request()).unwrap();
        assert!(json.get("term").is_none(), "{json}");
        assert!(json.get("console_group").is_none(), "{json}");
        let fenced = request().with_term(Some(&ConsoleTerm::new("group-1", 7)));
        let json = serde_json::to_value(&fenced).unwrap();
        assert_eq!(json["term"], 7);
        assert_eq!(json["console_group"], "group-1");
        assert!(fenced.same_apart_from_term(&request()));
        assert!(!fenced.same_apart_from_term(&LeaseRequest {
            count: Some(2),
            ..request()
        }));
    }

    #[test]
    fn a_term_comes_with_its_group_or_not_at_all() {
        assert_eq!(ConsoleTerm::from_parts(None, None), Ok(None));
        assert_eq!(
            ConsoleTerm::from_parts(Some("g"), Some(3)),
            Ok(Some(ConsoleTerm::new("g", 3)))
        );
        assert_eq!(ConsoleTerm::from_parts(Some("g"), None), Err("term"));
        assert_eq!(ConsoleTerm::from_parts(None, Some(3)), Err("console_group"));
        let query = ReleaseQuery::new(Some(&ConsoleTerm::new("g", 3)));
        assert_eq!(query.console_term(), Ok(Some(ConsoleTerm::new("g", 3))));
        assert_eq!(ReleaseQuery::new(None), ReleaseQuery::default());
    }

    #[test]
    fn the_lease_list_query_picks_states_and_names_them_as_the_query_does() {
        use LeaseState::{Active, Released, Releasing};
        let cases = [
            (LeaseListQuery::default(), [true, true, false]),
            (
                LeaseListQuery {
                    state: Some(LeaseListState::All),
                },
                [true, true, true],
            ),
            (
                LeaseListQuery {
                    state: Some(LeaseListState::Released),
                },
                [false, false, true],
            ),
        ];
        for (query, expected) in cases {
            let got = [Active, Releasing, Released].map(|state| query.includes(state));
            assert_eq!(got, expected, "{query:?}");
        }
        for (state, name) in [
            (LeaseListState::All, "all"),
            (LeaseListState::Released, "released"),
        ] {
            assert_eq!(state.as_str(), name);
            assert_eq!(
                serde_json::to_string(&state).unwrap(),
                format!("\"{name}\"")
            );
        }
    }

    #[test]
    fn a_process_from_an_older_agent_parses_without_a_name() {
        let process: GpuProcess =
            serde_json::from_str(r#"{"pid": 4242, "used_memory_mib": 1024}"#).unwrap();
        assert_eq!(
            process,
            GpuProcess {
                pid: 4242,
                name: None,
                used_memory_mib: Some(1024),
            }
        );
    }
}
