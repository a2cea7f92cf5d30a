//! Who is acting, and the roles a shared PostgreSQL database enforces.
//!
//! - On SQLite a console is one operator, the OS user, with every right.
//! - On PostgreSQL the console acts as the role it logged in as (`session_user`). Until
//!   `ebb admin init` has run, every role that can open the database is an admin, as
//!   before. After it, a role is a member of one of Ebb's group roles (`ebb_viewer`,
//!   `ebb_operator`, `ebb_admin`, `ebb_enforcer`), and the database's grants and
//!   row-level security ([`INIT_SQL`]) let it do what that role may and nothing else, so a
//!   modified console cannot exceed its role. The console asks the same question up front
//!   ([`ebb_wire::access::AccessAction::needs`]) to hide or refuse, and word, what the role
//!   cannot do; the database is the boundary.
//! - The table owner (whoever ran `ebb admin init`) is an admin.
//!
//! What [`INIT_SQL`] grants: `ebb_viewer` reads every table but `metric_tokens`, appends to
//! `activity` and `audit` (a refused attempt is logged in its name), and writes its own
//! collector's `host_health`/`host_delivery` and its own notification preferences;
//! `ebb_operator` also moves a pool's count (column grants on `desired`, `release_first`,
//! `force_release`: never its range, base or team), saves rules in shadow mode or off (row
//! policies: never `enabled`) and pushes metrics; `ebb_admin` may do everything but change
//! or delete `audit`; `ebb_enforcer`, the elected enforcer's service role, writes leases,
//! intents, fences, status, history, decisions and the election, and no setting, team or
//! token. Only admins hold the group roles `WITH ADMIN OPTION`, so [`grant`] by anyone else
//! is refused by the database. A console whose role may not enforce (viewer, operator)
//! never stands for election. The price catalog is a file in the data directory: only the
//! console's own check guards it. Grants cover the tables that exist: run `ebb admin init`
//! again after an upgrade adds one.

use crate::db::{ConsoleDb, Engine};
use ebb_wire::access::{AccessRole, Identity};
use sqlx::Row;

/// The PostgreSQL group role that stands for an Ebb role.
pub fn group_role(role: AccessRole) -> &'static str {
    match role {
        AccessRole::Viewer => "ebb_viewer",
        AccessRole::Operator => "ebb_operator",
        AccessRole::Admin => "ebb_admin",
        AccessRole::Enforcer => "ebb_enforcer",
    }
}

/// The OS user this process runs as (the SQLite console's operator).
pub fn os_user() -> String {
    ["USER", "LOGNAME", "USERNAME"]
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|value| !value.is_empty()))
        .unwrap_or_else(|| "operator".to_string())
}

/// Who the database says this console is.
pub async fn identify(db: &ConsoleDb) -> Result<Identity, sqlx::Error> {
    if db.engine() == Engine::Sqlite {
        return Ok(Identity::new(os_user(), AccessRole::Admin, false));
    }
    let row = sqlx::query(
        "SELECT session_user::text AS who, \
            EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ebb_admin') AS roles_made, \
            (SELECT rolsuper FROM pg_roles WHERE rolname = session_user) AS superuser, \
            pg_has_role(session_user, (SELECT tableowner FROM pg_tables WHERE tablename = 'pools' AND schemaname = current_schema()), 'MEMBER') AS owner",
    )
    .fetch_one(db.pool())
    .await?;
    let who: String = row.get("who");
    let made: bool = row.get("roles_made");
    let superuser: bool = row.try_get("superuser").unwrap_or(false);
    let owner: bool = row.try_get("owner").unwrap_or(false);
    let role = if !made || superuser || owner {
        AccessRole::Admin
    } else {
        let mut found = AccessRole::Viewer;
        for role in [
            AccessRole::Admin,
            AccessRole::Enforcer,
            AccessRole::Operator,
        ] {
            let member: bool = sqlx::query_scalar("SELECT pg_has_role(session_user, $1, 'MEMBER')")
                .bind(group_role(role))
                .fetch_one(db.pool())
                .await?;
            if member {
                found = role;
                break;
            }
        }
        found
    };
    Ok(Identity::new(who, role, true))
}

/// The operator's role does not allow what they asked: refused by the console before the
/// database would refuse it (or worded from the database's refusal).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("role: to {} needs the {needs} role; {who} is {role}", action.words())]
pub struct RoleRequired {
    pub action: ebb_wire::access::AccessAction,
    pub needs: AccessRole,
    pub who: String,
    pub role: AccessRole,
}

impl RoleRequired {
    pub fn new(identity: &Identity, action: ebb_wire::access::AccessAction) -> Self {
        Self {
            action,
            needs: action.needs(),
            who: identity.who.clone(),
            role: identity.role,
        }
    }
}

/// Why `ebb admin init` or `ebb admin grant` could not do it.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    #[error(
        "roles are enforced only on a shared PostgreSQL database; this console's is SQLite, where its one operator holds every right"
    )]
    NotShared,
    #[error("{field}: {problem}")]
    Invalid {
        field: &'static str,
        problem: String,
    },
    /// The database refused, naming the privilege it takes.
    #[error("{0}")]
    Privilege(String),
    #[error("the database failed: {0}")]
    Db(#[from] sqlx::Error),
}

/// The grants and row-level security of Ebb's roles (statements run in order, in one
/// transaction, by `ebb admin init`; running them again changes nothing). Which tables hold
/// what:
/// - secrets: `metric_tokens` (the metrics endpoint's token hashes): admins and the
///   enforcer (which checks a push) only;
/// - the audit log: appended to by every role, as the role it is (`who = session_user`),
///   changed or deleted by none;
/// - rules: an operator may save and put them in shadow mode or off, never enable them.
pub const INIT_SQL: &[&str] = &[
    "GRANT ebb_viewer TO ebb_operator",
    "GRANT ebb_operator TO ebb_admin",
    "GRANT USAGE ON SCHEMA public TO ebb_viewer, ebb_enforcer",
    // Viewers read everything but secrets; they write only what a console's own collector
    // and the log of a refused attempt need.
    "GRANT SELECT ON ALL TABLES IN SCHEMA public TO ebb_viewer, ebb_enforcer",
    "REVOKE ALL ON metric_tokens FROM ebb_viewer, ebb_operator",
    "GRANT INSERT, UPDATE, DELETE ON host_health, host_delivery TO ebb_viewer",
    "GRANT INSERT, SELECT ON activity, audit TO ebb_viewer, ebb_enforcer",
    // Operators move counts (and what the move releases), log and supersede their changes,
    // save rules (in shadow or off) and push metrics.
    "GRANT UPDATE (desired, release_first, force_release, updated_at_ms) ON pools TO ebb_operator",
    "GRANT UPDATE ON activity TO ebb_operator, ebb_enforcer",
    "GRANT INSERT, UPDATE ON pool_rules, pool_rules_versions TO ebb_operator",
    "GRANT INSERT, DELETE ON custom_metrics TO ebb_operator",
    // Admins: everything but rewriting the audit log.
    "GRANT ALL ON ALL TABLES IN SCHEMA public TO ebb_admin",
    "REVOKE UPDATE, DELETE, TRUNCATE ON audit FROM ebb_admin",
    // The enforcer: leases, intents, fences, status, history, decisions, the election;
    // no setting, team, host or token.
    "GRANT INSERT, UPDATE, DELETE ON lease_intents, pool_leases, host_fences, pool_status, host_health, host_down, host_drain, pool_history, lease_answered, host_delivery, enforcer_lease, custom_metrics TO ebb_enforcer",
    "GRANT UPDATE ON pools, pool_rules, hosts TO ebb_enforcer",
    "GRANT DELETE ON hosts, pools TO ebb_enforcer",
    // Row-level security: who a log entry names is who wrote it; an operator's rules stay
    // in shadow mode or off.
    "ALTER TABLE audit ENABLE ROW LEVEL SECURITY",
    "DROP POLICY IF EXISTS audit_read ON audit",
    "CREATE POLICY audit_read ON audit FOR SELECT USING (true)",
    "DROP POLICY IF EXISTS audit_append ON audit",
    "CREATE POLICY audit_append ON audit FOR INSERT WITH CHECK (who = session_user)",
    "ALTER TABLE activity ENABLE ROW LEVEL SECURITY",
    "DROP POLICY IF EXISTS activity_read ON activity",
    "CREATE POLICY activity_read ON activity FOR SELECT USING (true)",
    "DROP POLICY IF EXISTS activity_append ON activity",
    "CREATE POLICY activity_append ON activity FOR INSERT WITH CHECK (who = session_user)",
    "DROP POLICY IF EXISTS activity_outcome ON activity",
    "CREATE POLICY activity_outcome ON activity FOR UPDATE USING (true)",
    "ALTER TABLE pool_rules ENABLE ROW LEVEL SECURITY",
    "ALTER TABLE pool_rules_versions ENABLE ROW LEVEL SECURITY",
    "DROP POLICY IF EXISTS rules_read ON pool_rules",
    "CREATE POLICY rules_read ON pool_rules FOR SELECT USING (true)",
    "DROP POLICY IF EXISTS rules_all ON pool_rules",
    "CREATE POLICY rules_all ON pool_rules TO ebb_admin, ebb_enforcer USING (true)",
    "DROP POLICY IF EXISTS rules_shadow_insert ON pool_rules",
    "CREATE POLICY rules_shadow_insert ON pool_rules FOR INSERT TO ebb_operator WITH CHECK (mode <> 'enabled')",
    "DROP POLICY IF EXISTS rules_shadow_update ON pool_rules",
    "CREATE POLICY rules_shadow_update ON pool_rules FOR UPDATE TO ebb_operator USING (true) WITH CHECK (mode <> 'enabled')",
    "DROP POLICY IF EXISTS versions_read ON pool_rules_versions",
    "CREATE POLICY versions_read ON pool_rules_versions FOR SELECT USING (true)",
    "DROP POLICY IF EXISTS versions_all ON pool_rules_versions",
    "CREATE POLICY versions_all ON pool_rules_versions TO ebb_admin, ebb_enforcer USING (true)",
    "DROP POLICY IF EXISTS versions_shadow ON pool_rules_versions",
    "CREATE POLICY versions_shadow ON pool_rules_versions FOR INSERT TO ebb_operator WITH CHECK (mode <> 'enabled')",
    // Settings are the admins', but each operator's own notification preferences.
    "GRANT INSERT, UPDATE ON settings TO ebb_viewer",
    "ALTER TABLE settings ENABLE ROW LEVEL SECURITY",
    "DROP POLICY IF EXISTS settings_read ON settings",
    "CREATE POLICY settings_read ON settings FOR SELECT USING (true)",
    "DROP POLICY IF EXISTS settings_admin ON settings",
    "CREATE POLICY settings_admin ON settings TO ebb_admin USING (true)",
    "DROP POLICY IF EXISTS settings_own_prefs ON settings",
    "CREATE POLICY settings_own_prefs ON settings FOR INSERT TO ebb_viewer WITH CHECK (key = 'notification_prefs:' || session_user)",
    "DROP POLICY IF EXISTS settings_own_prefs_update ON settings",
    "CREATE POLICY settings_own_prefs_update ON settings FOR UPDATE TO ebb_viewer USING (key = 'notification_prefs:' || session_user) WITH CHECK (key = 'notification_prefs:' || session_user)",
    // Admins may grant Ebb's roles (and only they: the database refuses anyone else).
    "GRANT ebb_viewer, ebb_operator, ebb_enforcer TO ebb_admin WITH ADMIN OPTION",
];

/// `ebb admin init`: makes Ebb's group roles (when missing) and sets their grants and
/// row-level security on this database; run by the tables' owner, which needs the
/// `CREATEROLE` privilege to make the roles. Running it again changes nothing.
pub async fn admin_init(db: &ConsoleDb) -> Result<(), AdminError> {
    if db.engine() != Engine::Postgres {
        return Err(AdminError::NotShared);
    }
    let who: String = sqlx::query_scalar("SELECT session_user::text")
        .fetch_one(db.pool())
        .await?;
    // The group's console id, made now by the owner: the roles read it, none may write it.
    crate::pools::PoolStore::new(db.clone())
        .console_id()
        .await
        .map_err(|error| AdminError::Privilege(error.to_string()))?;
    for role in AccessRole::ALL {
        let name = group_role(role);
        let exists: bool =
            sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)")
                .bind(name)
                .fetch_one(db.pool())
                .await?;
        if exists {
            continue;
        }
        // Consoles on one server may make them at once: one that lost the race finds it.
        match sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE ROLE {name} NOLOGIN")))
            .execute(db.pool())
            .await
        {
            Ok(_) => {}
            Err(error) if sql_state(&error).as_deref() == Some("42710") => {}
            Err(error) if sql_state(&error).as_deref() == Some("42501") => {
                return Err(AdminError::Privilege(format!(
                    "ebb admin init needs the CREATEROLE privilege to make the role {name}: {who} lacks it (ALTER ROLE {who} CREATEROLE, as a superuser)"
                )));
            }
            Err(error) => return Err(error.into()),
        }
    }
    let mut tx = db.pool().begin().await?;
    for statement in INIT_SQL {
        if let Err(error) = sqlx::raw_sql(sqlx::AssertSqlSafe(*statement))
            .execute(&mut *tx)
            .await
        {
            let problem = if sql_state(&error).as_deref() == Some("42501") {
                format!(
                    "ebb admin init must be run by the owner of Ebb's tables (row-level security and grants are the owner's to set): {who} is refused at `{statement}`: {error}"
                )
            } else {
                format!("`{statement}` failed: {error}")
            };
            return Err(AdminError::Privilege(problem));
        }
    }
    // Migrations already run are read by every console before it opens the database.
    sqlx::raw_sql("GRANT SELECT ON _sqlx_migrations TO ebb_viewer, ebb_enforcer")
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}

/// The SQLSTATE of a database error (`42501`: insufficient privilege).
pub fn sql_state(error: &sqlx::Error) -> Option<String> {
    match error {
        sqlx::Error::Database(db) => db.code().map(|code| code.to_string()),
        _ => None,
    }
}

/// Whether the database refused for want of a privilege (a role's grants or row-level
/// security).
pub fn is_refused(error: &sqlx::Error) -> bool {
    sql_state(error).as_deref() == Some("42501")
}

/// Whether `cause` is the database refusing for want of a privilege.
pub fn refused_by_database(cause: &(dyn std::error::Error + 'static)) -> bool {
    cause.downcast_ref::<sqlx::Error>().is_some_and(is_refused)
}

/// `ebb admin grant ROLE USER`: `user` (an existing database role) becomes a member of
/// `role`'s group role and of no other Ebb role. The database refuses it from anyone but an
/// admin (or the owner).
pub async fn grant(db: &ConsoleDb, role: &str, user: &str) -> Result<AccessRole, AdminError> {
    if db.engine() != Engine::Postgres {
        return Err(AdminError::NotShared);
    }
    let Some(role) = AccessRole::parse(role) else {
        return Err(AdminError::Invalid {
            field: "role",
            problem: format!(
                "`{}` is not an Ebb role: the roles are viewer, operator, admin and enforcer",
                role.trim()
            ),
        });
    };
    let user = user.trim();
    let exists: bool = sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1 AND rolcanlogin)",
    )
    .bind(user)
    .fetch_one(db.pool())
    .await?;
    if !exists {
        return Err(AdminError::Invalid {
            field: "user",
            problem: format!(
                "no database user `{user}` can log in here (CREATE ROLE {user} LOGIN first)"
            ),
        });
    }
    let made: bool =
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ebb_admin')")
            .fetch_one(db.pool())
            .await?;
    if !made {
        return Err(AdminError::Invalid {
            field: "role",
            problem: "Ebb's roles are not set up on this database: run `ebb admin init` first"
                .into(),
        });
    }
    let quoted = quote_ident(user);
    let mut tx = db.begin_write().await?;
    for other in AccessRole::ALL {
        if other == role {
            continue;
        }
        let member: bool = sqlx::query_scalar(
            "SELECT EXISTS (SELECT 1 FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid JOIN pg_roles u ON u.oid = m.member WHERE g.rolname = $1 AND u.rolname = $2)",
        )
        .bind(group_role(other))
        .bind(user)
        .fetch_one(&mut *tx)
        .await?;
        if member {
            revoke_or_grant(
                &mut tx,
                &format!("REVOKE {} FROM {quoted}", group_role(other)),
            )
            .await?;
        }
    }
    revoke_or_grant(&mut tx, &format!("GRANT {} TO {quoted}", group_role(role))).await?;
    let reason = ebb_wire::reasons::ChangeReason::RoleGranted {
        user: user.to_string(),
        role,
    };
    let identity = db.identity().clone();
    crate::db::insert_console_activity(&mut tx, &identity, &reason, db.now_ms()).await?;
    tx.commit().await?;
    Ok(role)
}

async fn revoke_or_grant(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    statement: &str,
) -> Result<(), AdminError> {
    match sqlx::raw_sql(sqlx::AssertSqlSafe(statement.to_string()))
        .execute(&mut **tx)
        .await
    {
        Ok(_) => Ok(()),
        Err(error) if is_refused(&error) => Err(AdminError::Privilege(format!(
            "only an admin may grant roles (the database refused `{statement}`: {error})"
        ))),
        Err(error) => Err(error.into()),
    }
}

/// A PostgreSQL identifier, quoted.
fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}
