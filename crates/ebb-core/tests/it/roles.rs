//! Many operators, one fleet, on a real PostgreSQL: each console connects as its operator's
//! own database role; `ebb admin init` sets up Ebb's roles, and the database itself refuses
//! what a role may not do (a console that skipped its own check would get no further), the
//! console refusing first in words and logging the attempt; a team's quota clamps a slider
//! move; the audit log names an entry edited by hand.

use crate::shared_database;
use ebb_agent::GpuModel;
use ebb_core::access::{AdminError, RoleRequired, admin_init, grant, is_refused};
use ebb_core::console::{Console, ConsoleOptions, TokenStore};
use ebb_core::db::{ConsoleDb, Location};
use ebb_core::pools::PoolError;
use ebb_testkit::{TempDir, TestFleet};
use ebb_wire::access::{AccessAction, AccessRole, AuditProblem};
use ebb_wire::pools::Actor;
use ebb_wire::reasons::ChangeReason;
use ebb_wire::rules::RulesMode;

const RULES: &str = r#"
[limits]
min_gpus = 0
max_gpus = 8

[[threshold]]
name = "hot"
metric = "gpu_util"
op = ">"
value = 80
for_minutes = 2
action = "+1"
"#;

/// A console on its own data directory whose `console.toml` names `url`.
async fn console_on(tag: &str, url: &str, enforce: bool) -> (Console, TempDir) {
    let dir = TempDir::new(tag);
    std::fs::write(dir.join("console.toml"), format!("database = \"{url}\"\n")).unwrap();
    let console = Console::open(ConsoleOptions {
        token_store: TokenStore::File,
        viewer_only: !enforce,
        ..ConsoleOptions::new(dir.path())
    })
    .await
    .unwrap_or_else(|error| panic!("{tag}'s console did not open: {error}"));
    (console, dir)
}

/// The database URL as `user` (trust authentication on the test server).
fn as_user(url: &str, user: &str) -> String {
    let rest = url.split_once('@').expect("a URL with a user").1;
    format!("postgres://{user}@{rest}")
}

fn role_required(error: &PoolError, action: AccessAction) -> bool {
    matches!(error, PoolError::RoleRequired(RoleRequired { action: a, .. }) if *a == action)
}

async fn refused(db: &ConsoleDb, sql: &str) {
    let error = sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_string()))
        .execute(db.pool())
        .await
        .expect_err(sql);
    assert!(
        is_refused(&error),
        "{sql}: refused for want of a privilege, not {error}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn roles_are_enforced_by_the_database_and_quotas_and_the_audit_chain_hold() {
    let (_server, location) = shared_database("roles");
    let Location::Postgres(url) = location else {
        unreachable!()
    };
    let fleet = TestFleet::builder()
        .hosts(1)
        .gpus_per_host(8)
        .model(GpuModel::A100)
        .start()
        .await;
    // The admin's console does not enforce: the enforcer service role's does, below.
    let (admin, _admin_dir) = console_on("roles-admin", &url, false).await;
    assert_eq!(admin.identity().role, AccessRole::Admin);
    for host in fleet.entries() {
        admin.upsert_host(&host, None).await.unwrap();
    }
    let region = fleet.hosts()[0].region.clone();
    for name in ["web", "batch"] {
        admin
            .create_pool(&crate::pool_input(name, "A100", vec![region.clone()], 8))
            .await
            .unwrap();
    }
    let db = admin.pool_store().db().clone();

    // Before `ebb admin init` there are no roles to grant.
    let pid = std::process::id();
    let (viewer_user, operator_user, enforcer_user) = (
        format!("viewer_{pid}"),
        format!("operator_{pid}"),
        format!("enforcer_{pid}"),
    );
    for user in [&viewer_user, &operator_user, &enforcer_user] {
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE ROLE {user} LOGIN")))
            .execute(db.pool())
            .await
            .unwrap();
    }
    admin_init(&db).await.unwrap();
    admin_init(&db).await.expect("a second run changes nothing");
    match grant(&db, "root", &viewer_user).await {
        Err(AdminError::Invalid {
            field: "role",
            problem,
        }) => {
            assert!(
                problem.contains("viewer, operator, admin and enforcer"),
                "{problem}"
            )
        }
        other => panic!("an unknown role is refused naming `role`: {other:?}"),
    }
    match grant(&db, "viewer", "nobody_here").await {
        Err(AdminError::Invalid { field: "user", .. }) => {}
        other => panic!("an unknown user is refused naming `user`: {other:?}"),
    }
    assert_eq!(
        grant(&db, "viewer", &viewer_user).await.unwrap(),
        AccessRole::Viewer
    );
    assert_eq!(
        grant(&db, "operator", &operator_user).await.unwrap(),
        AccessRole::Operator
    );
    assert_eq!(
        grant(&db, "enforcer", &enforcer_user).await.unwrap(),
        AccessRole::Enforcer
    );
    // The enforcer service role's console is elected and enforces with its grants alone.
    let (enforcer, _enforcer_dir) =
        console_on("roles-enforcer", &as_user(&url, &enforcer_user), true).await;
    assert_eq!(enforcer.identity().role, AccessRole::Enforcer);
    let error = enforcer.set_budget(Some(1)).await.unwrap_err();
    assert!(role_required(&error, AccessAction::Budget), "{error}");
    refused(
        enforcer.pool_store().db(),
        "INSERT INTO teams (name, created_at_ms) VALUES ('x', 0)",
    )
    .await;

    // A viewer reads, and may change nothing.
    let (viewer, _viewer_dir) =
        console_on("roles-viewer", &as_user(&url, &viewer_user), false).await;
    assert_eq!(viewer.identity().role, AccessRole::Viewer);
    assert_eq!(viewer.identity().who, viewer_user);
    assert_eq!(
        viewer.list_pools().await.unwrap().len(),
        2,
        "a viewer reads the pools"
    );
    let error = viewer
        .scale_pool("web", 2, Actor::Operator, ChangeReason::Slider)
        .await
        .unwrap_err();
    assert!(role_required(&error, AccessAction::Scale), "{error}");
    assert_eq!(
        error.to_string(),
        format!("role: to scale pools needs the operator role; {viewer_user} is viewer")
    );
    let error = viewer
        .set_rules_mode("web", RulesMode::Shadow)
        .await
        .unwrap_err();
    assert!(role_required(&error, AccessAction::EditRules), "{error}");
    // A price catalog too: refused, named, and logged as every other change.
    let error = viewer.import_catalog("version = 1\n").await.unwrap_err();
    assert!(
        error.to_string().contains("needs the admin role"),
        "{error}"
    );
    let viewer_db = viewer.pool_store().db();
    // What the console refused, the database refuses too.
    refused(viewer_db, "UPDATE pools SET desired = 3 WHERE name = 'web'").await;
    refused(viewer_db, "SELECT * FROM metric_tokens").await;
    refused(viewer_db, "DELETE FROM activity").await;
    refused(
        viewer_db,
        "INSERT INTO audit (id, at_ms, who, role, what, subject, before, after, prev_hash, hash) VALUES (999, 0, 'someone_else', 'admin', 'x', '', '', '', '', '')",
    )
    .await;
    // The attempt is logged, in the viewer's name.
    let log = admin.activity(None, 20).await.unwrap();
    assert!(
        log.iter().any(|entry| entry.who == viewer_user
            && entry.role == "viewer"
            && matches!(
                entry.reason,
                ChangeReason::Refused {
                    action: AccessAction::Scale,
                    needs: AccessRole::Operator
                }
            )),
        "{log:#?}"
    );
    assert!(
        log.iter().any(|entry| entry.who == viewer_user
            && matches!(
                entry.reason,
                ChangeReason::Refused {
                    action: AccessAction::Catalog,
                    ..
                }
            )),
        "{log:#?}"
    );

    // An operator scales within limits, edits rules in shadow mode, and no more.
    let (operator, _operator_dir) =
        console_on("roles-operator", &as_user(&url, &operator_user), false).await;
    assert_eq!(operator.identity().role, AccessRole::Operator);
    let entry = operator
        .scale_pool("web", 2, Actor::Operator, ChangeReason::Slider)
        .await
        .unwrap();
    assert_eq!(
        (entry.who.as_str(), entry.role.as_str()),
        (operator_user.as_str(), "operator")
    );
    let view = enforcer
        .wait_converged("web", entry.at_ms, std::time::Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(view.actual, 2, "the enforcer role rented them: {view:#?}");
    assert_eq!(fleet.held(&view.id).await.len(), 2);
    let saved = operator
        .save_rules("web", RULES, Some(RulesMode::Shadow), true)
        .await
        .unwrap();
    assert_eq!(saved.mode, RulesMode::Shadow);
    let error = operator
        .set_rules_mode("web", RulesMode::Enabled)
        .await
        .unwrap_err();
    assert!(role_required(&error, AccessAction::EnableRules), "{error}");
    let error = operator.set_budget(Some(100_000)).await.unwrap_err();
    assert!(role_required(&error, AccessAction::Budget), "{error}");
    let operator_db = operator.pool_store().db();
    refused(operator_db, "UPDATE pool_rules SET mode = 'enabled'").await;
    refused(
        operator_db,
        "UPDATE pools SET max_gpus = 100 WHERE name = 'web'",
    )
    .await;
    refused(
        operator_db,
        "INSERT INTO settings (key, value) VALUES ('monthly_budget_fen', '1')",
    )
    .await;
    refused(operator_db, "UPDATE audit SET after = 'nothing'").await;
    refused(operator_db, "SELECT * FROM metric_tokens").await;
    // Notification preferences are each operator's own: theirs to set, no one else's.
    let quiet = ebb_wire::pools::NotificationPrefs {
        scaled: false,
        budget: true,
        stale: true,
        spot: true,
    };
    operator
        .pool_store()
        .set_notification_prefs(quiet)
        .await
        .unwrap();
    assert_eq!(
        operator.pool_store().notification_prefs().await.unwrap(),
        quiet
    );
    assert_ne!(
        admin.pool_store().notification_prefs().await.unwrap(),
        quiet
    );
    refused(
        operator_db,
        "INSERT INTO settings (key, value) VALUES ('notification_prefs:postgres', '{}')",
    )
    .await;
    match grant(operator_db, "admin", &operator_user).await {
        Err(AdminError::Privilege(problem)) => {
            assert!(
                problem.contains("only an admin may grant roles"),
                "{problem}"
            )
        }
        other => panic!("a grant by a non-admin is refused by the database: {other:?}"),
    }
    assert_eq!(operator.identity().role, AccessRole::Operator);

    // A team's quota: a slider move past it is clamped, and logged as such.
    admin.set_team("research", None).await.unwrap();
    admin.set_quota("research", "A100", Some(6)).await.unwrap();
    let error = operator
        .set_quota("research", "A100", Some(8))
        .await
        .unwrap_err();
    assert!(role_required(&error, AccessAction::Teams), "{error}");
    admin.set_pool_team("web", "research").await.unwrap();
    admin.set_pool_team("batch", "research").await.unwrap();
    let entry = operator
        .scale_pool("batch", 8, Actor::Operator, ChangeReason::Slider)
        .await
        .unwrap();
    assert_eq!(entry.to, 4, "6 less the 2 web asks for");
    assert!(
        matches!(&entry.reason, ChangeReason::QuotaClamp { team, quota_gpus: 6, asked: 8, .. } if team == "research"),
        "{:?}",
        entry.reason
    );
    // A quota below what the team asks for now, and a pool moved into a full team: refused.
    match admin.set_quota("research", "A100", Some(3)).await {
        Err(PoolError::Invalid {
            field: "gpus",
            problem,
            ..
        }) => {
            assert!(
                problem.contains("3 A100") && problem.contains("the 6"),
                "{problem}"
            )
        }
        other => panic!("{other:?}"),
    }
    admin
        .create_pool(&crate::pool_input("extra", "A100", vec![region.clone()], 8))
        .await
        .unwrap();
    admin
        .scale_pool("extra", 1, Actor::Operator, ChangeReason::Cli)
        .await
        .unwrap();
    match admin.set_pool_team("extra", "research").await {
        Err(PoolError::Invalid {
            field: "team",
            problem,
            ..
        }) => {
            assert!(problem.contains("quota of 6 A100 GPUs"), "{problem}")
        }
        other => panic!("{other:?}"),
    }

    // The audit log: whole, then an entry edited by hand is named.
    let verdict = ebb_core::audit::verify(&db).await.unwrap();
    assert_eq!(verdict.broken, None, "{verdict:?}");
    assert!(verdict.entries >= 10, "{verdict:?}");
    let entries = ebb_core::audit::entries(&db).await.unwrap();
    assert!(
        entries
            .iter()
            .any(|e| e.who == operator_user && e.what == "quota_clamp"),
        "{entries:#?}"
    );
    sqlx::query("UPDATE audit SET after = '1 GPUs' WHERE id = 5")
        .execute(db.pool())
        .await
        .unwrap();
    let broken = ebb_core::audit::verify(&db).await.unwrap().broken.unwrap();
    assert_eq!((broken.id, broken.problem), (5, AuditProblem::Edited));

    operator.shutdown().await;
    viewer.shutdown().await;
    enforcer.shutdown().await;
    admin.shutdown().await;
    fleet.stop().await;
}
