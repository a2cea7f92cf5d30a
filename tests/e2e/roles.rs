//! A viewer's app on a shared PostgreSQL: the header says who it acts as and its role, the
//! slider's Apply is disabled saying which role it needs, and the Activity view shows who
//! made each change and that the audit log verifies, then where it breaks once an entry is
//! edited in the database by hand.

use crate::support::{App, Session};
use ebb_testkit::{AgentCommand, Cli, PostgresServer, TempDir};
use std::time::Duration;

async fn wait_attr(app: &Session, what: &str, css: &str, name: &str, want: &str) {
    app.eventually(what, Duration::from_secs(60), || async {
        let now = app.attr_of(css, name).await?;
        (now == want).then_some(())
    })
    .await;
}

#[tokio::test]
#[ignore = "needs Xvfb, tauri-driver and the custom-protocol build: run by `cargo xtask test`"]
async fn a_viewers_app_says_its_role_disables_the_slider_and_shows_the_audit_chain() {
    let server = PostgresServer::start("e2e-roles").unwrap_or_else(|error| panic!("{error}"));
    let dir = TempDir::new("e2e-roles");
    let database = "ebb_e2e_roles";
    let host_port = server.url().split_once('@').unwrap().1.to_string();
    let on = |name: &str, user: &str| {
        let data = dir.subdir(name);
        std::fs::write(
            data.join("console.toml"),
            format!("database = \"postgres://{user}@{host_port}/{database}\"\n"),
        )
        .unwrap();
        data
    };
    let agent = AgentCommand::sim(&dir.subdir("agent"), "2xA100").start();
    let admin = Cli::new(&on("admin", "postgres"));
    admin.ok(&["hosts", "add", "gpu-a", &agent.url, "--region", "cn-north"]);
    admin.ok(&[
        "pool", "create", "web", "--model", "A100", "--region", "cn-north", "--min", "0", "--max",
        "2",
    ]);
    admin.ok(&["admin", "init"]);
    server.psql(database, "CREATE ROLE vera LOGIN");
    admin.ok(&["admin", "grant", "viewer", "vera"]);
    let vera_dir = on("vera", "vera");

    let app = App::open(&[
        "--data-dir".as_ref(),
        vera_dir.as_os_str(),
        "--token-store".as_ref(),
        "file".as_ref(),
    ])
    .await;
    app.run(move |app| async move {
        wait_attr(
            &app,
            "the role badge",
            "[data-testid=\"role-badge\"]",
            "data-role",
            "viewer",
        )
        .await;
        let badge = app.text_now("[data-testid=\"role-badge\"]").await;
        assert!(
            badge.contains("vera") && badge.contains("viewer"),
            "{badge}"
        );

        app.click("#nav-pool").await;
        app.eventually("the pool", Duration::from_secs(30), || async {
            let names = app.attr_of("#pool-select", "data-names").await?;
            names.lines().any(|name| name == "web").then_some(())
        })
        .await;
        let denied = app
            .eventually("why Apply is disabled", Duration::from_secs(20), || async {
                app.text_of("[data-testid=\"role-denied\"][data-action=\"scale\"]")
                    .await
            })
            .await;
        assert!(
            denied.contains("Only the operator role may scale pools; you are viewer"),
            "{denied}"
        );
        assert_eq!(
            app.attr_of("#pool-apply", "disabled").await.as_deref(),
            Some("true")
        );
        app.shoot("roles-viewer-pool").await;

        app.click("#nav-activity").await;
        wait_attr(
            &app,
            "the audit chain verified",
            "[data-testid=\"audit-status\"]",
            "data-state",
            "verified",
        )
        .await;
        let who = app
            .eventually("who made the grant", Duration::from_secs(20), || async {
                app.attr_of("[data-testid=\"activity-who\"]", "data-who")
                    .await
            })
            .await;
        assert_eq!(who, "postgres");
        app.shoot("roles-activity-verified").await;

        // An entry edited by hand: Activity, opened again, names it.
        server.psql(database, "UPDATE audit SET after = 'edited' WHERE id = 2");
        app.click("#nav-pool").await;
        app.click("#nav-activity").await;
        wait_attr(
            &app,
            "the audit chain broken",
            "[data-testid=\"audit-status\"]",
            "data-state",
            "broken",
        )
        .await;
        assert_eq!(
            app.attr_of("[data-testid=\"audit-status\"]", "data-id")
                .await
                .as_deref(),
            Some("2")
        );
        let broken = app.text_now("[data-testid=\"audit-status\"]").await;
        assert!(broken.contains("broken at entry 2"), "{broken}");
        app.shoot("roles-activity-broken").await;
    })
    .await;
    drop(agent);
}
