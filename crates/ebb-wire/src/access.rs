//! Who is acting, and what their role lets them do: the console's identity, the roles a
//! shared PostgreSQL database enforces (`ebb admin init`), teams with quotas, and the
//! tamper-evident audit log.
//!
//! On SQLite a console is one operator (the OS user) with every right. On a shared
//! PostgreSQL each console connects as its operator's own database role, a member of one of
//! Ebb's group roles; the database's grants and row-level security enforce the role, and
//! the console hides or refuses up front what the role cannot do ([`AccessAction::needs`]).

use serde::{Deserialize, Serialize};
use specta::Type;

/// An Ebb role, from least to most: each holds every right of the roles before it, but
/// `enforcer`, the service role the elected enforcer runs as, which holds only what
/// enforcing takes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Type,
)]
#[serde(rename_all = "snake_case")]
pub enum AccessRole {
    /// Reads everything but secrets (tokens).
    Viewer,
    /// Scales pools within their limits and quotas, edits rules in shadow mode, pushes
    /// metrics.
    Operator,
    /// Everything: hosts, tokens, the catalog, budgets, teams and quotas, enabling rules,
    /// roles.
    Admin,
    /// The enforcer's service role: acts on pools, leases and rule decisions; changes no
    /// setting.
    Enforcer,
}

impl AccessRole {
    pub const ALL: [AccessRole; 4] = [
        AccessRole::Viewer,
        AccessRole::Operator,
        AccessRole::Admin,
        AccessRole::Enforcer,
    ];

    pub fn name(self) -> &'static str {
        match self {
            AccessRole::Viewer => "viewer",
            AccessRole::Operator => "operator",
            AccessRole::Admin => "admin",
            AccessRole::Enforcer => "enforcer",
        }
    }

    /// A role by its name (`viewer`, `operator`, `admin`, `enforcer`).
    pub fn parse(text: &str) -> Option<AccessRole> {
        Self::ALL
            .into_iter()
            .find(|role| role.name() == text.trim())
    }

    /// Whether this role may do `action`.
    pub fn allows(self, action: AccessAction) -> bool {
        match self {
            AccessRole::Enforcer => {
                matches!(action, AccessAction::Scale | AccessAction::PushMetrics)
            }
            role => role >= action.needs(),
        }
    }
}

impl std::fmt::Display for AccessRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What an operator may ask the console to change, by the role it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum AccessAction {
    /// Move a pool's count (the slider, `ebb pool scale`, release now).
    Scale,
    /// Save rules, or put them in shadow mode or off.
    EditRules,
    /// Push a custom metric's value.
    PushMetrics,
    /// Enable rules: let them change a pool's count.
    EnableRules,
    /// Add, change or remove hosts and their tokens.
    Hosts,
    /// Make, change or delete pools (their range, base, team).
    Pools,
    /// Import a price catalog.
    Catalog,
    /// Set the monthly budget, a pool's budget override, or when the slider asks first.
    Budget,
    /// Make teams and set their quotas.
    Teams,
    /// Grant roles.
    Roles,
}

impl AccessAction {
    pub const ALL: [AccessAction; 10] = [
        AccessAction::Scale,
        AccessAction::EditRules,
        AccessAction::PushMetrics,
        AccessAction::EnableRules,
        AccessAction::Hosts,
        AccessAction::Pools,
        AccessAction::Catalog,
        AccessAction::Budget,
        AccessAction::Teams,
        AccessAction::Roles,
    ];

    /// The least role that may do it.
    pub fn needs(self) -> AccessRole {
        match self {
            AccessAction::Scale | AccessAction::EditRules | AccessAction::PushMetrics => {
                AccessRole::Operator
            }
            AccessAction::EnableRules
            | AccessAction::Hosts
            | AccessAction::Pools
            | AccessAction::Catalog
            | AccessAction::Budget
            | AccessAction::Teams
            | AccessAction::Roles => AccessRole::Admin,
        }
    }

    /// In words, for messages: "scale pools".
    pub fn words(self) -> &'static str {
        match self {
            AccessAction::Scale => "scale pools",
            AccessAction::EditRules => "edit rules",
            AccessAction::PushMetrics => "push metrics",
            AccessAction::EnableRules => "enable rules",
            AccessAction::Hosts => "change hosts",
            AccessAction::Pools => "change pools",
            AccessAction::Catalog => "import a price catalog",
            AccessAction::Budget => "change budgets",
            AccessAction::Teams => "change teams and quotas",
            AccessAction::Roles => "grant roles",
        }
    }
}

/// Who this console acts as.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct Identity {
    /// The operator: the database role on a shared PostgreSQL, else the OS user.
    pub who: String,
    pub role: AccessRole,
    /// Whether the database is shared (PostgreSQL), where roles are enforced by it.
    pub shared: bool,
    /// What the role may not do, each with the role it needs (the app disables those
    /// controls and says why).
    pub denied: Vec<Denied>,
}

/// An action the operator's role does not allow, and the least role that does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct Denied {
    pub action: AccessAction,
    pub needs: AccessRole,
}

impl Identity {
    pub fn new(who: String, role: AccessRole, shared: bool) -> Self {
        let denied = AccessAction::ALL
            .into_iter()
            .filter(|action| !role.allows(*action))
            .map(|action| Denied {
                action,
                needs: action.needs(),
            })
            .collect();
        Self {
            who,
            role,
            shared,
            denied,
        }
    }

    pub fn allows(&self, action: AccessAction) -> bool {
        self.role.allows(action)
    }
}

/// A team: the pools it owns and the quotas that bound them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct TeamView {
    pub name: String,
    /// Spend per calendar month its pools may project to (fen), when set.
    pub spend_per_month_fen: Option<i64>,
    /// GPUs per model its pools may hold in all.
    pub quotas: Vec<GpuQuota>,
    /// Its pools, by name.
    pub pools: Vec<String>,
    /// GPUs its pools ask for now, per model (their desired counts).
    pub holding: Vec<GpuQuota>,
}

/// GPUs of one model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct GpuQuota {
    pub model: String,
    pub gpus: u32,
}

/// One entry of the audit log: a change, who made it and as what role, before and after,
/// and the hash chaining it to the entry before.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct AuditEntry {
    pub id: i64,
    pub at_ms: i64,
    pub who: String,
    pub role: String,
    /// What changed: the kind of change (`slider`, `host_added`, `team_quota`, …).
    pub what: String,
    /// The pool, host, team or user it changed (empty when console-wide).
    pub subject: String,
    pub before: String,
    pub after: String,
    pub prev_hash: String,
    pub hash: String,
}

/// What `ebb audit verify` found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct AuditVerdict {
    /// Entries read.
    pub entries: u32,
    /// The first place the chain breaks; `None`: every entry is as written.
    pub broken: Option<AuditBreak>,
}

/// Where, and how, the audit chain breaks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct AuditBreak {
    /// The entry's id (for a deleted one, the id that is missing).
    pub id: i64,
    pub problem: AuditProblem,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum AuditProblem {
    /// Its content no longer matches its hash.
    Edited,
    /// An entry is missing before it (ids run on without a gap).
    Deleted,
    /// It does not follow the entry before it (its link names another entry's hash).
    Reordered,
}

impl std::fmt::Display for AuditBreak {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.problem {
            AuditProblem::Edited => write!(
                f,
                "entry {} was changed after it was written (its hash does not match)",
                self.id
            ),
            AuditProblem::Deleted => write!(f, "entry {} was deleted", self.id),
            AuditProblem::Reordered => write!(
                f,
                "entry {} does not follow the entry before it (moved, or one before it replaced)",
                self.id
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_role_holds_the_rights_of_those_before_it_and_the_enforcer_only_its_own() {
        assert!(AccessRole::Viewer < AccessRole::Operator);
        assert!(!AccessRole::Viewer.allows(AccessAction::Scale));
        assert!(AccessRole::Operator.allows(AccessAction::Scale));
        assert!(AccessRole::Operator.allows(AccessAction::EditRules));
        assert!(!AccessRole::Operator.allows(AccessAction::EnableRules));
        assert!(!AccessRole::Operator.allows(AccessAction::Budget));
        assert!(AccessRole::Admin.allows(AccessAction::Roles));
        assert!(AccessRole::Enforcer.allows(AccessAction::Scale));
        assert!(!AccessRole::Enforcer.allows(AccessAction::Hosts));
        assert!(!AccessRole::Enforcer.allows(AccessAction::EditRules));
        for role in AccessRole::ALL {
            assert_eq!(AccessRole::parse(role.name()), Some(role));
        }
        assert_eq!(AccessRole::parse("root"), None);
    }
}
