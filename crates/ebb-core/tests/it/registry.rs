//! The registry and the console service on a real SQLite file, with a mock keychain.

use ebb_core::console::{Console, Role, TokenStore};
use ebb_core::db::ConsoleDb;
use ebb_core::pools::PoolStore;
use ebb_core::registry::{HostEntry, Registry, RegistryError};
use ebb_core::vault::{MemoryVault, TokenVault};
use ebb_testkit::{TempDir, TestConsole};
use ebb_wire::reasons::ChangeReason;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

fn spec(name: &str) -> HostEntry {
    HostEntry {
        name: name.into(),
        url: "http://127.0.0.1:7070".into(),
        region: "cn-east".into(),
        labels: BTreeMap::from([("rack".to_string(), "r7".to_string())]),
        fingerprint: None,
        has_token: false,
        draining: false,
    }
}

#[tokio::test]
async fn tokens_go_to_the_vault_and_never_to_the_database() {
    let dir = TempDir::new("core-registry-vault");
    let vault = Arc::new(MemoryVault::default());
    let registry = Registry::new(ConsoleDb::open(dir.path()).await.unwrap(), vault.clone());
    let added = registry
        .add(&spec("gpu-01"), Some("ebb_secret_token"))
        .await
        .unwrap();
    assert!(added.has_token);
    assert_eq!(
        registry.token(&added).await.unwrap().as_deref(),
        Some("ebb_secret_token")
    );
    let on_disk: Vec<u8> = std::fs::read_dir(dir.path())
        .unwrap()
        .flat_map(|entry| std::fs::read(entry.unwrap().path()).unwrap_or_default())
        .collect();
    assert!(
        !String::from_utf8_lossy(&on_disk).contains("ebb_secret_token"),
        "no token in the database files"
    );

    let listed = registry.list().await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].labels["rack"], "r7");

    let duplicate = registry.add(&spec("gpu-01"), None).await.unwrap_err();
    assert_eq!(
        duplicate.to_string(),
        "name: a host named `gpu-01` is already registered"
    );
    // The UI says it in the operator's words, not the English above.
    let reported = ebb_state::errors::Reported::report(&duplicate);
    assert_eq!(reported.field.as_deref(), Some("name"));
    let words = reported.words.expect("a refusal worded for the UI");
    assert_eq!(words.key, "hosts.refuse.exists");

    registry
        .update("gpu-01", &spec("gpu-01"), Some(""))
        .await
        .unwrap();
    assert_eq!(
        vault.get("gpu-01").unwrap(),
        None,
        "an empty token removes it"
    );
    registry.remove("gpu-01").await.unwrap();
    assert!(matches!(
        registry.remove("gpu-01").await.unwrap_err(),
        RegistryError::NotFound(_)
    ));
    // Adding and removing are in the activity log (the refused duplicate is not).
    let log = PoolStore::new(ConsoleDb::open(dir.path()).await.unwrap())
        .activity(None, 10)
        .await
        .unwrap();
    let reasons: Vec<ChangeReason> = log.into_iter().map(|entry| entry.reason).collect();
    assert_eq!(
        reasons,
        [
            ChangeReason::HostRemoved {
                host: "gpu-01".into()
            },
            ChangeReason::HostAdded {
                host: "gpu-01".into(),
                region: "cn-east".into()
            },
        ]
    );
}

#[tokio::test]
async fn a_vault_failure_leaves_nothing_half_added() {
    let dir = TempDir::new("core-registry-half");
    let vault = Arc::new(MemoryVault::default());
    let registry = Registry::new(ConsoleDb::open(dir.path()).await.unwrap(), vault.clone());
    vault.fail.store(true, Ordering::SeqCst);
    let error = registry.add(&spec("gpu-02"), Some("t")).await.unwrap_err();
    assert!(
        error.to_string().contains("the token store failed"),
        "{error}"
    );
    assert!(
        registry.list().await.unwrap().is_empty(),
        "the row was rolled back"
    );
    let db = ConsoleDb::open(dir.path()).await.unwrap();
    assert!(
        PoolStore::new(db)
            .activity(None, 10)
            .await
            .unwrap()
            .is_empty(),
        "and its activity entry with it"
    );
    vault.fail.store(false, Ordering::SeqCst);
    registry.add(&spec("gpu-02"), None).await.unwrap();
    assert_eq!(registry.list().await.unwrap().len(), 1);
}

#[tokio::test]
async fn bad_specs_are_refused_naming_the_field() {
    let dir = TempDir::new("core-registry-bad");
    let registry = Registry::new(
        ConsoleDb::open(dir.path()).await.unwrap(),
        Arc::new(MemoryVault::default()),
    );
    let bad_url = HostEntry {
        url: "gpu-03:7070".into(),
        ..spec("gpu-03")
    };
    let error = registry.add(&bad_url, None).await.unwrap_err().to_string();
    assert!(
        error.starts_with("url: `gpu-03:7070` must start with http://"),
        "{error}"
    );
    assert!(registry.list().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_second_console_on_the_same_data_directory_only_views() {
    let dir = TempDir::new("core-registry-lock");
    let options = TestConsole::builder("lock")
        .token_store(TokenStore::Memory)
        .options(dir.path());
    let first = Console::open(options.clone()).await.unwrap();
    let second = Console::open(options.clone()).await.unwrap();
    assert_eq!(first.role(), Role::Collector);
    assert_eq!(second.role(), Role::Viewer);
    first.shutdown().await;
    drop(first);
    let third = Console::open(options).await.unwrap();
    assert_eq!(
        third.role(),
        Role::Collector,
        "the lock is freed with the collector"
    );
    second.shutdown().await;
    third.shutdown().await;
}

#[tokio::test]
async fn the_demos_setup_is_logged_as_the_demos_and_later_changes_as_the_operators() {
    let dir = TempDir::new("core-demo-setup");
    let options = TestConsole::builder("demo")
        .token_store(TokenStore::Memory)
        .options(dir.path());
    let console = Console::open(options).await.unwrap();
    let hosts = vec![
        (
            "cn-east-001".to_string(),
            "http://127.0.0.1:9".to_string(),
            "cn-east".to_string(),
        ),
        (
            "cn-south-001".to_string(),
            "http://127.0.0.1:10".to_string(),
            "cn-south".to_string(),
        ),
    ];
    console.seed_demo(hosts.clone(), true).await.unwrap();
    // The demo pool's rules hold its base (2 GPUs) from the start: that move is the rules',
    // everything else the demo's.
    use ebb_wire::pools::Actor;
    let pool_at_base = || async {
        let pools = console.list_pools().await.ok()?;
        pools
            .iter()
            .any(|pool| pool.name == "inference" && pool.desired == 2)
            .then_some(())
    };
    ebb_testkit::eventually(
        "the demo pool at its base",
        Duration::from_secs(30),
        pool_at_base,
    )
    .await;
    let log = console.activity(None, 50).await.unwrap();
    assert!(
        log.iter().any(|entry| entry.actor == Actor::Demo),
        "the setup is logged: {log:#?}"
    );
    assert!(
        log.iter()
            .all(|entry| matches!(entry.actor, Actor::Demo | Actor::Rule | Actor::Enforcer)),
        "{log:#?}"
    );
    // The operator's own change after it is theirs; a second start changes nothing back.
    console
        .scale_pool(
            "inference",
            3,
            ebb_wire::pools::Actor::Operator,
            ChangeReason::Cli,
        )
        .await
        .unwrap();
    console.seed_demo(hosts, true).await.unwrap();
    let log = console.activity(None, 50).await.unwrap();
    let theirs = log
        .iter()
        .find(|entry| entry.reason == ChangeReason::Cli)
        .expect("the operator's change is logged");
    assert_eq!(theirs.actor, ebb_wire::pools::Actor::Operator, "{theirs:?}");
    console.shutdown().await;
}
