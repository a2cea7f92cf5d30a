//! The lease ledger: who holds which GPU. Pure: no IO, no clock, no randomness; the shell
//! persists every change before it applies it here.

use ebb_wire::agent::{ConsoleTerm, Lease, LeaseRequest, LeaseState};
use std::collections::{BTreeMap, HashMap, HashSet};

/// The most GPUs one request may name or count.
pub const MAX_GPUS_PER_LEASE: u32 = 1024;
/// The longest pool or holder id.
pub const MAX_ID_CHARS: usize = 128;
/// The most arguments a workload command may have, and the longest one.
pub const MAX_COMMAND_ARGS: usize = 256;
pub const MAX_ARG_CHARS: usize = 4096;
/// The load profiles a lease may ask the simulator for.
pub const LOAD_PROFILES: [&str; 4] = ["idle", "steady", "diurnal", "burst"];

/// A GPU as the ledger needs to see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuSlot {
    pub index: u32,
    pub uuid: String,
    pub healthy: bool,
    /// Offered as spot: a lease on it is a spot lease.
    pub spot: bool,
}

/// Why a lease call was refused. Each maps to one HTTP status.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LeaseError {
    /// 422: the request names the field and the problem.
    #[error("{field}: {problem}")]
    Invalid {
        field: &'static str,
        problem: String,
    },
    /// 409: fewer free GPUs than asked for.
    #[error("count: asked for {wanted} GPUs but only {free} are free")]
    NotEnoughFree { wanted: u32, free: u32 },
    /// 409: a named GPU is taken or unhealthy.
    #[error("gpu_uuids: {uuid} is not free: {reason}")]
    GpuNotFree { uuid: String, reason: String },
    /// 422: the idempotency key was used before with another body.
    #[error(
        "Idempotency-Key `{key}` was already used with a different request body; use a new key for a new request"
    )]
    KeyReused { key: String },
    /// 404.
    #[error("no lease with id `{id}`")]
    NotFound { id: String },
    /// 409: the console group has elected a newer leader since this term.
    #[error(
        "term: {term} of console group `{console_group}` is stale: this agent has seen term {highest} from that group, so a newer console leads it and this one must not act"
    )]
    StaleTerm {
        console_group: String,
        term: u64,
        highest: u64,
    },
}

/// What a grant plan comes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Grant {
    /// A new lease, to persist and then [`Ledger::commit_grant`].
    New(Lease),
    /// The key was seen with the same body: the original answer, unchanged.
    Replayed(Lease),
}

/// Released leases past their retention and the idempotency keys that granted them: what
/// a prune forgets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Expired {
    pub lease_ids: Vec<String>,
    pub keys: Vec<String>,
}

impl Expired {
    pub fn is_empty(&self) -> bool {
        self.lease_ids.is_empty() && self.keys.is_empty()
    }
}

/// When a released lease ended: its release time (a record from before those were kept
/// falls back to when the release was asked, then to the grant).
pub fn ended_at_ms(lease: &Lease) -> u64 {
    lease
        .released_at_ms
        .or(lease.release_requested_at_ms)
        .unwrap_or(lease.created_at_ms)
}

/// Every lease of one host and the idempotency records behind them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ledger {
    leases: BTreeMap<String, Lease>,
    /// key → (the request as first sent, the lease as first granted).
    idempotency: HashMap<String, (LeaseRequest, Lease)>,
    last_fencing_token: u64,
    /// Console group → the highest term seen from it.
    terms: HashMap<String, u64>,
}

impl Ledger {
    /// A ledger rebuilt from what the store kept.
    pub fn restore(
        leases: impl IntoIterator<Item = Lease>,
        idempotency: impl IntoIterator<Item = (String, LeaseRequest, Lease)>,
        last_fencing_token: u64,
    ) -> Self {
        let leases: BTreeMap<String, Lease> = leases
            .into_iter()
            .map(|lease| (lease.id.clone(), lease))
            .collect();
        let highest = leases
            .values()
            .map(|lease| lease.fencing_token)
            .max()
            .unwrap_or(0);
        Self {
            leases,
            idempotency: idempotency
                .into_iter()
                .map(|(key, request, lease)| (key, (request, lease)))
                .collect(),
            last_fencing_token: last_fencing_token.max(highest),
            terms: HashMap::new(),
        }
    }

    /// The ledger with the highest terms the store kept, per console group.
    #[must_use]
    pub fn with_terms(mut self, terms: impl IntoIterator<Item = (String, u64)>) -> Self {
        self.terms.extend(terms);
        self
    }

    pub fn last_fencing_token(&self) -> u64 {
        self.last_fencing_token
    }

    /// The highest term seen from a console group.
    pub fn highest_term(&self, console_group: &str) -> Option<u64> {
        self.terms.get(console_group).copied()
    }

    /// Decides whether a lease call fenced by `term` may go on, changing nothing: refused
    /// when its group has been seen with a higher term; `Ok(true)` when the term is new or
    /// higher, to persist and then [`Ledger::commit_term`] (an agent has seen a term once it
    /// is admitted, whatever the call then comes to); `Ok(false)` for no term or the same one.
    pub fn admit_term(&self, term: Option<&ConsoleTerm>) -> Result<bool, LeaseError> {
        let Some(term) = term else {
            return Ok(false);
        };
        match self.highest_term(&term.console_group) {
            Some(highest) if term.term < highest => Err(LeaseError::StaleTerm {
                console_group: term.console_group.clone(),
                term: term.term,
                highest,
            }),
            Some(highest) => Ok(term.term > highest),
            None => Ok(true),
        }
    }

    /// Records a term as the highest seen from its group (after the store has it); a lower
    /// one changes nothing, so terms only grow.
    pub fn commit_term(&mut self, term: &ConsoleTerm) {
        let highest = self.terms.entry(term.console_group.clone()).or_insert(0);
        *highest = (*highest).max(term.term);
    }

    pub fn get(&self, id: &str) -> Option<&Lease> {
        self.leases.get(id)
    }

    /// Every lease, oldest grant first.
    pub fn leases(&self) -> impl Iterator<Item = &Lease> {
        let mut all: Vec<&Lease> = self.leases.values().collect();
        all.sort_by_key(|lease| lease.fencing_token);
        all.into_iter()
    }

    /// UUID → lease id for every GPU held by an active or releasing lease.
    pub fn holders(&self) -> HashMap<&str, &Lease> {
        self.leases
            .values()
            .filter(|lease| lease.state != LeaseState::Released)
            .flat_map(|lease| {
                lease
                    .gpu_uuids
                    .iter()
                    .map(move |uuid| (uuid.as_str(), lease))
            })
            .collect()
    }

    /// Decides what `POST /v1/leases` with `key` and `request` does, changing nothing.
    /// `id` names the new lease if one is granted.
    pub fn plan_grant(
        &self,
        key: &str,
        request: &LeaseRequest,
        gpus: &[GpuSlot],
        id: &str,
        now_ms: u64,
    ) -> Result<Grant, LeaseError> {
        validate_key(key)?;
        if let Some((first_request, first_answer)) = self.idempotency.get(key) {
            // A retry by a newer leader carries its own term: still the same request.
            return if first_request.same_apart_from_term(request) {
                Ok(Grant::Replayed(first_answer.clone()))
            } else {
                Err(LeaseError::KeyReused { key: key.into() })
            };
        }
        validate(request)?;
        let holders = self.holders();
        let chosen: Vec<&GpuSlot> = match (&request.count, &request.gpu_uuids) {
            (Some(count), None) => {
                let mut free: Vec<&GpuSlot> = gpus
                    .iter()
                    .filter(|gpu| gpu.healthy && !holders.contains_key(gpu.uuid.as_str()))
                    .collect();
                if (free.len() as u32) < *count {
                    return Err(LeaseError::NotEnoughFree {
                        wanted: *count,
                        free: free.len() as u32,
                    });
                }
                free.sort_by_key(|gpu| gpu.index);
                free.truncate(*count as usize);
                free
            }
            (None, Some(uuids)) => uuids
                .iter()
                .map(|uuid| {
                    let gpu = gpus.iter().find(|gpu| &gpu.uuid == uuid).ok_or_else(|| {
                        LeaseError::Invalid {
                            field: "gpu_uuids",
                            problem: format!("no GPU with UUID {uuid} on this host"),
                        }
                    })?;
                    if let Some(holder) = holders.get(uuid.as_str()) {
                        return Err(LeaseError::GpuNotFree {
                            uuid: uuid.clone(),
                            reason: format!("held by lease {}", holder.id),
                        });
                    }
                    if !gpu.healthy {
                        return Err(LeaseError::GpuNotFree {
                            uuid: uuid.clone(),
                            reason: "the GPU is unhealthy".into(),
                        });
                    }
                    Ok(gpu)
                })
                .collect::<Result<_, _>>()?,
            _ => unreachable!("validate() allows exactly one of count and gpu_uuids"),
        };
        Ok(Grant::New(Lease {
            id: id.to_string(),
            pool_id: request.pool_id.clone(),
            holder_id: request.holder_id.clone(),
            gpu_uuids: chosen.iter().map(|gpu| gpu.uuid.clone()).collect(),
            gpu_indexes: chosen.iter().map(|gpu| gpu.index).collect(),
            fencing_token: self.last_fencing_token + 1,
            state: LeaseState::Active,
            created_at_ms: now_ms,
            release_requested_at_ms: None,
            released_at_ms: None,
            command: request.command.clone(),
            load_profile: request.load_profile.clone(),
            workload_pid: None,
            workload_exit_code: None,
            workload_signal: None,
            workload_log: None,
            checkpoint_at_ms: None,
            release_grace_s: None,
            reclaim_deadline_ms: None,
            spot: chosen.iter().any(|gpu| gpu.spot),
            starting: false,
        }))
    }

    /// Records a granted lease (after the store has it).
    pub fn commit_grant(&mut self, key: &str, request: &LeaseRequest, lease: Lease) {
        self.last_fencing_token = self.last_fencing_token.max(lease.fencing_token);
        self.idempotency
            .insert(key.to_string(), (request.clone(), lease.clone()));
        self.leases.insert(lease.id.clone(), lease);
    }

    /// Replaces the answer an idempotency key replays (after the store has it).
    pub fn set_response(&mut self, key: &str, lease: Lease) {
        if let Some((_, answer)) = self.idempotency.get_mut(key) {
            *answer = lease.clone();
        }
        self.leases.insert(lease.id.clone(), lease);
    }

    /// Replaces a lease's record (after the store has it).
    pub fn update(&mut self, lease: Lease) {
        self.leases.insert(lease.id.clone(), lease);
    }

    /// The released leases that ended before `cutoff_ms` and the keys that granted them.
    /// A lease not yet released is never expired, however old.
    pub fn expired(&self, cutoff_ms: u64) -> Expired {
        let mut lease_ids: Vec<String> = self
            .leases
            .values()
            .filter(|lease| lease.state == LeaseState::Released && ended_at_ms(lease) < cutoff_ms)
            .map(|lease| lease.id.clone())
            .collect();
        lease_ids.sort();
        let mut keys: Vec<String> = self
            .idempotency
            .iter()
            .filter(|(_, (_, answer))| lease_ids.binary_search(&answer.id).is_ok())
            .map(|(key, _)| key.clone())
            .collect();
        keys.sort();
        Expired { lease_ids, keys }
    }

    /// Forgets expired leases and their keys (after the store has). The last fencing token
    /// stays, so a fence is never given twice.
    pub fn forget(&mut self, expired: &Expired) {
        for id in &expired.lease_ids {
            self.leases.remove(id);
        }
        for key in &expired.keys {
            self.idempotency.remove(key);
        }
    }

    /// The lease as it is once a release is asked: `releasing`, or unchanged when it is
    /// already releasing or released (a release is idempotent).
    pub fn plan_release(&self, id: &str, now_ms: u64) -> Result<Lease, LeaseError> {
        let lease = self
            .leases
            .get(id)
            .ok_or_else(|| LeaseError::NotFound { id: id.into() })?;
        let mut next = lease.clone();
        if next.state == LeaseState::Active {
            next.state = LeaseState::Releasing;
            next.release_requested_at_ms = Some(now_ms);
        }
        Ok(next)
    }
}

/// The fence a lease call carries, checked: both `console_group` and `term` or neither,
/// the group an id like `holder_id`, the term within what SQLite keeps.
pub fn fence(
    console_group: Option<&str>,
    term: Option<u64>,
) -> Result<Option<ConsoleTerm>, LeaseError> {
    let fence =
        ConsoleTerm::from_parts(console_group, term).map_err(|field| LeaseError::Invalid {
            field,
            problem: "give console_group and term together, or neither".into(),
        })?;
    if let Some(fence) = &fence {
        check_id("console_group", &fence.console_group)?;
        if i64::try_from(fence.term).is_err() {
            return Err(LeaseError::Invalid {
                field: "term",
                problem: format!("must be at most {}", i64::MAX),
            });
        }
    }
    Ok(fence)
}

fn check_id(field: &'static str, value: &str) -> Result<(), LeaseError> {
    let invalid = |problem: String| Err(LeaseError::Invalid { field, problem });
    if value.trim().is_empty() {
        return invalid("must not be empty".into());
    }
    if value.chars().count() > MAX_ID_CHARS {
        return invalid(format!("must be at most {MAX_ID_CHARS} characters"));
    }
    if value.chars().any(char::is_control) {
        return invalid("must not contain control characters".into());
    }
    Ok(())
}

fn validate_key(key: &str) -> Result<(), LeaseError> {
    let bad = |problem: &str| LeaseError::Invalid {
        field: "Idempotency-Key",
        problem: problem.into(),
    };
    if key.trim().is_empty() {
        return Err(bad("the header is required and must not be empty"));
    }
    if key.len() > 255 {
        return Err(bad("must be at most 255 characters"));
    }
    if key.chars().any(char::is_control) {
        return Err(bad("must not contain control characters"));
    }
    Ok(())
}

/// Checks a request on its own, naming the first field with a problem.
pub fn validate(request: &LeaseRequest) -> Result<(), LeaseError> {
    let invalid =
        |field: &'static str, problem: String| Err(LeaseError::Invalid { field, problem });
    for (field, value) in [
        ("pool_id", &request.pool_id),
        ("holder_id", &request.holder_id),
    ] {
        check_id(field, value)?;
    }
    fence(request.console_group.as_deref(), request.term)?;
    match (&request.count, &request.gpu_uuids) {
        (None, None) => return invalid("count", "give either count or gpu_uuids".into()),
        (Some(_), Some(_)) => {
            return invalid("count", "give either count or gpu_uuids, not both".into());
        }
        (Some(0), None) => return invalid("count", "must be at least 1".into()),
        (Some(count), None) if *count > MAX_GPUS_PER_LEASE => {
            return invalid("count", format!("must be at most {MAX_GPUS_PER_LEASE}"));
        }
        (None, Some(uuids)) => {
            if uuids.is_empty() {
                return invalid("gpu_uuids", "must name at least one GPU".into());
            }
            if uuids.len() > MAX_GPUS_PER_LEASE as usize {
                return invalid(
                    "gpu_uuids",
                    format!("must name at most {MAX_GPUS_PER_LEASE} GPUs"),
                );
            }
            let mut seen = HashSet::new();
            if let Some(twice) = uuids.iter().find(|uuid| !seen.insert(*uuid)) {
                return invalid("gpu_uuids", format!("{twice} is named twice"));
            }
        }
        (Some(_), None) => {}
    }
    if let Some(command) = &request.command {
        if command.is_empty() || command[0].trim().is_empty() {
            return invalid("command", "must start with the program to run".into());
        }
        if command.len() > MAX_COMMAND_ARGS {
            return invalid(
                "command",
                format!("must have at most {MAX_COMMAND_ARGS} arguments"),
            );
        }
        if command
            .iter()
            .any(|arg| arg.len() > MAX_ARG_CHARS || arg.contains('\0'))
        {
            return invalid(
                "command",
                format!("each argument must be at most {MAX_ARG_CHARS} bytes, without NUL"),
            );
        }
    }
    if let Some(profile) = &request.load_profile
        && !LOAD_PROFILES.contains(&profile.as_str())
    {
        return invalid(
            "load_profile",
            format!(
                "unknown profile `{profile}`: expected one of {}",
                LOAD_PROFILES.join(", ")
            ),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn gpus(n: u32) -> Vec<GpuSlot> {
        (0..n)
            .map(|index| GpuSlot {
                index,
                uuid: format!("GPU-{index}"),
                healthy: true,
                spot: false,
            })
            .collect()
    }

    fn by_count(count: u32) -> LeaseRequest {
        LeaseRequest {
            pool_id: "pool-a".into(),
            holder_id: "console-1".into(),
            count: Some(count),
            gpu_uuids: None,
            command: None,
            load_profile: None,
            console_group: None,
            term: None,
        }
    }

    fn grant(
        ledger: &mut Ledger,
        key: &str,
        request: &LeaseRequest,
        slots: &[GpuSlot],
    ) -> Result<Lease, LeaseError> {
        let id = format!("lease-{}", ledger.last_fencing_token() + 1);
        match ledger.plan_grant(key, request, slots, &id, 1000)? {
            Grant::New(lease) => {
                ledger.commit_grant(key, request, lease.clone());
                Ok(lease)
            }
            Grant::Replayed(lease) => Ok(lease),
        }
    }

    #[test]
    fn grants_the_lowest_free_gpus_with_growing_fences() {
        let slots = gpus(4);
        let mut ledger = Ledger::default();
        let first = grant(&mut ledger, "k1", &by_count(2), &slots).unwrap();
        let second = grant(&mut ledger, "k2", &by_count(2), &slots).unwrap();
        assert_eq!(first.gpu_indexes, vec![0, 1]);
        assert_eq!(second.gpu_indexes, vec![2, 3]);
        assert!(second.fencing_token > first.fencing_token);
        let error = grant(&mut ledger, "k3", &by_count(1), &slots).unwrap_err();
        assert_eq!(error, LeaseError::NotEnoughFree { wanted: 1, free: 0 });
        assert_eq!(
            error.to_string(),
            "count: asked for 1 GPUs but only 0 are free"
        );
    }

    #[test]
    fn same_key_same_body_replays_and_a_different_body_is_refused() {
        let slots = gpus(4);
        let mut ledger = Ledger::default();
        let first = grant(&mut ledger, "k1", &by_count(2), &slots).unwrap();
        let again = grant(&mut ledger, "k1", &by_count(2), &slots).unwrap();
        assert_eq!(first, again);
        assert_eq!(ledger.leases().count(), 1);
        let error = grant(&mut ledger, "k1", &by_count(3), &slots).unwrap_err();
        assert!(matches!(error, LeaseError::KeyReused { .. }));
    }

    #[test]
    fn released_gpus_are_free_again_and_fences_never_repeat() {
        let slots = gpus(2);
        let mut ledger = Ledger::default();
        let first = grant(&mut ledger, "k1", &by_count(2), &slots).unwrap();
        let mut releasing = ledger.plan_release(&first.id, 2000).unwrap();
        assert_eq!(releasing.state, LeaseState::Releasing);
        assert_eq!(releasing.release_requested_at_ms, Some(2000));
        ledger.update(releasing.clone());
        assert!(
            grant(&mut ledger, "k2", &by_count(1), &slots).is_err(),
            "releasing still holds"
        );
        releasing.state = LeaseState::Released;
        ledger.update(releasing);
        let second = grant(&mut ledger, "k2", &by_count(2), &slots).unwrap();
        assert_eq!(second.fencing_token, first.fencing_token + 1);
        let restored = Ledger::restore(ledger.leases().cloned(), [], 0);
        assert_eq!(restored.last_fencing_token(), second.fencing_token);
    }

    #[test]
    fn named_gpus_must_exist_be_free_and_healthy() {
        let mut slots = gpus(3);
        slots[2].healthy = false;
        let mut ledger = Ledger::default();
        let named = |uuids: &[&str]| LeaseRequest {
            count: None,
            gpu_uuids: Some(uuids.iter().map(|uuid| uuid.to_string()).collect()),
            ..by_count(1)
        };
        let held = grant(&mut ledger, "k1", &named(&["GPU-1"]), &slots).unwrap();
        assert_eq!(held.gpu_indexes, vec![1]);
        let taken = grant(&mut ledger, "k2", &named(&["GPU-0", "GPU-1"]), &slots).unwrap_err();
        assert_eq!(
            taken.to_string(),
            format!("gpu_uuids: GPU-1 is not free: held by lease {}", held.id)
        );
        let sick = grant(&mut ledger, "k3", &named(&["GPU-2"]), &slots).unwrap_err();
        assert!(sick.to_string().contains("unhealthy"), "{sick}");
        let unknown = grant(&mut ledger, "k4", &named(&["GPU-9"]), &slots).unwrap_err();
        assert!(
            unknown.to_string().contains("no GPU with UUID GPU-9"),
            "{unknown}"
        );
        let unhealthy_skipped = grant(&mut ledger, "k5", &by_count(2), &slots).unwrap_err();
        assert_eq!(
            unhealthy_skipped,
            LeaseError::NotEnoughFree { wanted: 2, free: 1 }
        );
    }

    #[test]
    fn bad_requests_name_the_field() {
        let cases: Vec<(LeaseRequest, &str)> = vec![
            (by_count(0), "count: must be at least 1"),
            (
                by_count(MAX_GPUS_PER_LEASE + 1),
                "count: must be at most 1024",
            ),
            (
                LeaseRequest {
                    pool_id: " ".into(),
                    ..by_count(1)
                },
                "pool_id: must not be empty",
            ),
            (
                LeaseRequest {
                    holder_id: "x".repeat(200),
                    ..by_count(1)
                },
                "holder_id: must be at most 128",
            ),
            (
                LeaseRequest {
                    count: None,
                    ..by_count(1)
                },
                "count: give either count or gpu_uuids",
            ),
            (
                LeaseRequest {
                    gpu_uuids: Some(vec!["a".into()]),
                    ..by_count(1)
                },
                "not both",
            ),
            (
                LeaseRequest {
                    count: None,
                    gpu_uuids: Some(vec![]),
                    ..by_count(1)
                },
                "gpu_uuids: must name at least one",
            ),
            (
                LeaseRequest {
                    count: None,
                    gpu_uuids: Some(vec!["a".into(), "a".into()]),
                    ..by_count(1)
                },
                "gpu_uuids: a is named twice",
            ),
            (
                LeaseRequest {
                    command: Some(vec![]),
                    ..by_count(1)
                },
                "command: must start with the program",
            ),
            (
                LeaseRequest {
                    load_profile: Some("wild".into()),
                    ..by_count(1)
                },
                "load_profile: unknown profile `wild`",
            ),
        ];
        for (request, expected) in cases {
            let error = validate(&request).unwrap_err().to_string();
            assert!(
                error.starts_with(expected) || error.contains(expected),
                "{expected} vs {error}"
            );
        }
        let ledger = Ledger::default();
        let error = ledger
            .plan_grant("", &by_count(1), &gpus(1), "x", 0)
            .unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("Idempotency-Key: the header is required")
        );
    }

    #[test]
    fn a_released_lease_and_its_key_expire_after_the_cutoff_and_fences_still_grow() {
        let slots = gpus(4);
        let mut ledger = Ledger::default();
        let kept = grant(&mut ledger, "k-live", &by_count(1), &slots).unwrap();
        let old = grant(&mut ledger, "k-old", &by_count(1), &slots).unwrap();
        let mut released = ledger.plan_release(&old.id, 2_000).unwrap();
        released.state = LeaseState::Released;
        released.released_at_ms = Some(3_000);
        ledger.update(released);
        assert_eq!(ledger.expired(3_000), Expired::default(), "not before");
        let expired = ledger.expired(3_001);
        assert_eq!(
            expired,
            Expired {
                lease_ids: vec![old.id.clone()],
                keys: vec!["k-old".into()],
            }
        );
        // A lease not yet released never expires, however old its grant.
        assert!(!expired.lease_ids.contains(&kept.id));
        ledger.forget(&expired);
        assert_eq!(ledger.get(&old.id), None);
        assert_eq!(
            grant(&mut ledger, "k-live", &by_count(1), &slots).unwrap(),
            kept,
            "the live lease's key still replays"
        );
        // Forgotten: the key is a new request now, and its fence is a new one.
        let again = grant(&mut ledger, "k-old", &by_count(1), &slots).unwrap();
        assert_ne!(again.id, old.id);
        assert!(again.fencing_token > old.fencing_token);
    }

    #[test]
    fn a_lower_term_is_refused_an_equal_or_higher_one_admitted_per_group() {
        let mut ledger = Ledger::default();
        let term = |group: &str, term: u64| ConsoleTerm::new(group, term);
        assert_eq!(ledger.admit_term(None), Ok(false), "no term: as before");
        assert_eq!(
            ledger.admit_term(Some(&term("a", 5))),
            Ok(true),
            "new group"
        );
        ledger.commit_term(&term("a", 5));
        assert_eq!(
            ledger.admit_term(Some(&term("a", 5))),
            Ok(false),
            "same term"
        );
        assert_eq!(ledger.admit_term(Some(&term("a", 6))), Ok(true), "higher");
        let stale = ledger.admit_term(Some(&term("a", 4))).unwrap_err();
        assert_eq!(
            stale,
            LeaseError::StaleTerm {
                console_group: "a".into(),
                term: 4,
                highest: 5
            }
        );
        assert!(
            stale
                .to_string()
                .contains("term: 4 of console group `a` is stale")
        );
        assert!(stale.to_string().contains("seen term 5"));
        assert_eq!(
            ledger.admit_term(Some(&term("b", 1))),
            Ok(true),
            "groups apart"
        );
        ledger.commit_term(&term("a", 3));
        assert_eq!(ledger.highest_term("a"), Some(5), "terms only grow");
        let restored = Ledger::default().with_terms([("a".to_string(), 5)]);
        assert!(restored.admit_term(Some(&term("a", 4))).is_err());
    }

    #[test]
    fn a_retry_under_a_newer_term_replays_the_grant() {
        let slots = gpus(2);
        let mut ledger = Ledger::default();
        let old = by_count(1).with_term(Some(&ConsoleTerm::new("g", 1)));
        let first = grant(&mut ledger, "k1", &old, &slots).unwrap();
        let new = by_count(1).with_term(Some(&ConsoleTerm::new("g", 2)));
        assert_eq!(grant(&mut ledger, "k1", &new, &slots).unwrap(), first);
        assert_eq!(ledger.leases().count(), 1);
    }

    #[test]
    fn a_fence_is_both_fields_or_neither() {
        assert_eq!(fence(None, None), Ok(None));
        let half = fence(Some("g"), None).unwrap_err().to_string();
        assert_eq!(
            half,
            "term: give console_group and term together, or neither"
        );
        let half = fence(None, Some(1)).unwrap_err().to_string();
        assert!(half.starts_with("console_group: give"), "{half}");
        let empty = fence(Some(" "), Some(1)).unwrap_err().to_string();
        assert_eq!(empty, "console_group: must not be empty");
        let huge = fence(Some("g"), Some(u64::MAX)).unwrap_err().to_string();
        assert!(huge.starts_with("term: must be at most"), "{huge}");
        let request = LeaseRequest {
            term: Some(1),
            ..by_count(1)
        };
        assert!(validate(&request).is_err());
    }

    #[test]
    fn unknown_leases_are_not_found() {
        let error = Ledger::default().plan_release("nope", 0).unwrap_err();
        assert_eq!(error.to_string(), "no lease with id `nope`");
    }

    proptest! {
        /// Whatever sequence of grants and releases: no GPU is ever in two live leases,
        /// fences only grow, and a refused grant changes nothing.
        #[test]
        fn no_gpu_is_ever_leased_twice(ops in proptest::collection::vec((0u8..3, 0u32..6, 0usize..8), 1..60)) {
            let slots = gpus(8);
            let mut ledger = Ledger::default();
            let mut last_fence = 0;
            let mut seen_ids = HashSet::new();
            for (step, (kind, count, pick)) in ops.into_iter().enumerate() {
                match kind {
                    0 | 1 => {
                        let before = ledger.clone();
                        let key = format!("k{}", step % 5);
                        match grant(&mut ledger, &key, &by_count(count), &slots) {
                            Ok(lease) => {
                                if seen_ids.insert(lease.id.clone()) {
                                    prop_assert!(lease.fencing_token > last_fence);
                                    last_fence = lease.fencing_token;
                                }
                            }
                            Err(_) => prop_assert_eq!(&before, &ledger),
                        }
                    }
                    _ => {
                        let ids: Vec<String> = ledger.leases().map(|lease| lease.id.clone()).collect();
                        if let Some(id) = ids.get(pick % ids.len().max(1)) {
                            let mut lease = ledger.plan_release(id, 5).unwrap();
                            lease.state = LeaseState::Released;
                            ledger.update(lease);
                        }
                    }
                }
                let mut held = HashSet::new();
                for lease in ledger.leases().filter(|lease| lease.state != LeaseState::Released) {
                    for uuid in &lease.gpu_uuids {
                        prop_assert!(held.insert(uuid.clone()), "{} leased twice", uuid);
                    }
                }
            }
        }
    }
}
