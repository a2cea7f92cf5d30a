//! One enforcer among consoles sharing a database: the election on a real PostgreSQL
//! (take, renew, lose, take over), and the fence at real agents (a replaced leader's
//! request refused on its term, and the leader stepping down).
//!
//! These stay on real time: the lease expires on the database's clock, which tokio's paused
//! clock cannot move, and the fence is tried on agents over loopback, whose sockets a paused
//! clock would time out while still busy. Every wait is for a state (a term, a renewal the
//! database shows, a lease on an agent), never for a stretch of time.

use crate::shared_database;
use ebb_agent::sim::GpuModel;
use ebb_core::catalog_store::ActiveCatalog;
use ebb_core::db::{ConsoleDb, Location};
use ebb_core::election::{Election, ElectionConfig, LeaderHandle, Leadership};
use ebb_core::enforcer::{Enforcer, EnforcerConfig};
use ebb_core::pools::{self, HostFacts, PoolStore};
use ebb_core::registry::Registry;
use ebb_core::vault::MemoryVault;
use ebb_telemetry::client::{AgentClient, ClientConfig};
use ebb_testkit::{TempDir, TestFleet, eventually};
use ebb_wire::agent::{AgentErrorKind, ConsoleTerm, LeaseRequest, LeaseState};
use ebb_wire::reasons::HostProblem;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Waits until `done`; answers how long that took.
async fn wait_for(what: &str, within: Duration, mut done: impl FnMut() -> bool) -> Duration {
    let started = Instant::now();
    eventually(what, within, || std::future::ready(done())).await;
    started.elapsed()
}

/// When the enforcer lease now expires, on the database's clock (ms).
async fn lease_expiry_ms(store: &PoolStore) -> i64 {
    sqlx::query_scalar("SELECT expires_at_ms FROM enforcer_lease WHERE id = 1")
        .fetch_one(store.db().pool())
        .await
        .unwrap()
}

/// Waits until the holder has renewed the lease to expire at least `by` past `from_ms`.
async fn renewed_past(store: &PoolStore, from_ms: i64, by: Duration, what: &str) {
    let until_ms = from_ms + i64::try_from(by.as_millis()).unwrap();
    eventually(what, Duration::from_secs(30), || async {
        let expiry_ms = lease_expiry_ms(store).await;
        (expiry_ms >= until_ms)
            .then_some(())
            .ok_or(format!("expires at {expiry_ms}, waiting for {until_ms}"))
    })
    .await;
}

fn term_of(leadership: &Leadership) -> Option<u64> {
    match leadership {
        Leadership::Leader { term, .. } => Some(term.term),
        _ => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consoles_on_one_database_elect_one_enforcer_and_a_stopped_one_is_replaced() {
    let (_server, location) = shared_database("election");
    let config = ElectionConfig {
        ttl: Duration::from_millis(1_200),
        renew_every: Duration::from_millis(200),
    };
    let first = PoolStore::new(ConsoleDb::connect(&location).await.unwrap());
    let second = PoolStore::new(ConsoleDb::connect(&location).await.unwrap());
    let third = PoolStore::new(ConsoleDb::connect(&location).await.unwrap());
    let a = Election::start(&first, config).await.unwrap();
    let a_leads = a.handle();
    wait_for("the first console elected", Duration::from_secs(10), || {
        term_of(&a_leads.current()).is_some()
    })
    .await;
    let first_term = term_of(&a_leads.current()).unwrap();
    let first_expiry_ms = lease_expiry_ms(&first).await;
    let b = Election::start(&second, config).await.unwrap();
    let b_leads = b.handle();
    // A change of leadership notifies these; a renewal of the same term does not.
    let a_changes = a_leads.watch();
    let b_changes = b_leads.watch();
    // Renewals go on for several ttls (the database shows the lease pushed 3 ttls past
    // where it first ran out, the other console trying all along): the leader keeps it
    // throughout, the other only views.
    renewed_past(
        &first,
        first_expiry_ms,
        config.ttl * 3,
        "the leader's renewals 3 ttls on",
    )
    .await;
    assert!(!a_changes.has_changed().unwrap(), "the leader renews");
    assert!(!b_changes.has_changed().unwrap(), "the other never leads");
    assert_eq!(
        term_of(&a_leads.current()),
        Some(first_term),
        "the leader renews"
    );
    assert_eq!(b_leads.current(), Leadership::Follower);

    // The leader stops without a word (its process paused or gone): the lease runs out on
    // the database's clock and the other console takes it, one term up.
    drop(a);
    let took = wait_for(
        "the second console takes over",
        config.ttl + config.renew_every * 10,
        || term_of(&b_leads.current()).is_some(),
    )
    .await;
    assert_eq!(term_of(&b_leads.current()), Some(first_term + 1));
    assert!(
        a_leads
            .current()
            .acting(tokio::time::Instant::now())
            .is_none(),
        "the stopped leader's own clock has it stop acting by now"
    );
    println!(
        "election: a silent leader replaced in {took:?} (ttl {:?}, renewals every {:?})",
        config.ttl, config.renew_every
    );

    // A leader that stops properly gives the lease back: the next console takes it at once.
    // Until then the new console's tries (its first made before `start` returns) find it
    // held: two more renewals by the leader go by with it following.
    let c = Election::start(&third, config).await.unwrap();
    let c_leads = c.handle();
    let c_changes = c_leads.watch();
    let expiry_ms = lease_expiry_ms(&third).await;
    renewed_past(
        &third,
        expiry_ms,
        config.renew_every * 2,
        "two renewals with a third console trying",
    )
    .await;
    assert!(
        !c_changes.has_changed().unwrap(),
        "the third never leads yet"
    );
    assert_eq!(c_leads.current(), Leadership::Follower);
    b.stop().await;
    let took = wait_for(
        "the third console takes over from one that stopped",
        config.renew_every * 10,
        || term_of(&c_leads.current()).is_some(),
    )
    .await;
    assert_eq!(term_of(&c_leads.current()), Some(first_term + 2));
    assert_eq!(b_leads.current(), Leadership::Follower);
    println!("election: a leader that stopped handed over in {took:?}");
    c.stop().await;
}

/// One host of four A100s and a pool of them; its enforcer acts for `leader`.
struct Fenced {
    fleet: TestFleet,
    store: PoolStore,
    enforcer: Enforcer,
    pool_id: String,
    _dir: TempDir,
}

async fn fenced(leader: impl FnOnce(&str) -> LeaderHandle) -> (Fenced, LeaderHandle, String) {
    let fleet = TestFleet::builder()
        .hosts(1)
        .gpus_per_host(4)
        .model(GpuModel::A100)
        .release_grace(Duration::from_millis(50))
        .start()
        .await;
    let dir = TempDir::new("core-election-fence");
    let db = ConsoleDb::open(&dir).await.unwrap();
    let registry = Registry::new(db.clone(), Arc::new(MemoryVault::default()));
    let host = &fleet.hosts()[0];
    registry.add(&fleet.entries()[0], None).await.unwrap();
    let store = PoolStore::new(db);
    let facts = vec![HostFacts {
        name: host.name.clone(),
        region: host.region.clone(),
        models: vec![GpuModel::A100.name().to_string()],
    }];
    let input = crate::pool_input("train", "A100", vec![host.region.clone()], 4);
    let valid = pools::validate(&input, &facts, &ActiveCatalog::prices(&dir)).unwrap();
    let pool_id = store.create(valid).await.unwrap().id;
    let group = store.console_id().await.unwrap();
    let handle = leader(&group);
    let enforcer = Enforcer::start(
        store.clone(),
        registry,
        dir.to_path_buf(),
        EnforcerConfig {
            interval: Duration::from_millis(50),
            ..EnforcerConfig::default()
        },
        handle.clone(),
    );
    let url = host.url.clone();
    (
        Fenced {
            fleet,
            store,
            enforcer,
            pool_id,
            _dir: dir,
        },
        handle,
        url,
    )
}

impl Fenced {
    async fn scale(&self, to: u32) {
        crate::set_desired(&self.store, "train", to).await;
        self.enforcer.wake();
    }

    async fn held(&self) -> usize {
        self.fleet.held(&self.pool_id).await.len()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replaced_leader_is_refused_on_its_term_by_the_agents_and_steps_down() {
    // This console was elected for term 1 and, as far as its own clock knows, still is: a
    // pause that outlasted its lease without its clock seeing it (the case the fence is for).
    let far = tokio::time::Instant::now() + Duration::from_secs(3_600);
    let (fenced, leader, url) =
        fenced(|group| LeaderHandle::leader(ConsoleTerm::new(group, 1), far)).await;
    fenced.scale(2).await;
    eventually(
        "the leader to rent 2 GPUs",
        Duration::from_secs(20),
        || async {
            let held = fenced.held().await;
            (held >= 2).then_some(()).ok_or(held)
        },
    )
    .await;

    // The console elected after it (term 2) reaches the agent: a lease of its own, given
    // back at once (any rent or release carries the term to the agent).
    let group = fenced.store.console_id().await.unwrap();
    let newer = ConsoleTerm::new(group.clone(), 2);
    let agent = AgentClient::new(&url, ClientConfig::default()).unwrap();
    let request = LeaseRequest::count("another-pool", group.clone(), 1).with_term(Some(&newer));
    let (_, lease) = agent
        .create_lease("newer-leader-1", &request)
        .await
        .unwrap();
    agent.release_lease(&lease.id, Some(&newer)).await.unwrap();

    // The old leader acts on: its next request is refused on its term, and it steps down.
    fenced.scale(3).await;
    let started = Instant::now();
    eventually(
        "the replaced leader to step down",
        Duration::from_secs(20),
        || async {
            let now = leader.current();
            (now == Leadership::Follower).then_some(()).ok_or(now)
        },
    )
    .await;
    let stepped_down_in = started.elapsed();
    // It acts no more: the pool stays at the 2 GPUs it had, nothing granted on term 1. No
    // wait is needed to see it: the enforcer steps down after its pass, every call of which
    // has been answered by then, and a follower makes no call.
    assert_eq!(fenced.held().await, 2, "nothing granted to the stale term");
    let leases = agent.leases().await.unwrap().leases;
    let active: Vec<_> = leases
        .iter()
        .filter(|lease| lease.state == LeaseState::Active)
        .collect();
    assert_eq!(active.len(), 2, "{active:?}");
    println!(
        "fence: the replaced leader's rent refused on term 1 (stale_term) and it stepped down in {stepped_down_in:?}; GPUs held for the pool stayed 2 of the 3 it asked"
    );
    fenced.enforcer.stop().await;
    fenced.fleet.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_database_is_reached_over_tls_when_asked() {
    let (_server, location) = shared_database("tls");
    let Location::Postgres(url) = location else {
        unreachable!()
    };
    let db = ConsoleDb::connect(&Location::Postgres(format!("{url}?sslmode=require")))
        .await
        .unwrap();
    let encrypted: bool =
        sqlx::query_scalar("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
            .fetch_one(db.pool())
            .await
            .unwrap();
    assert!(encrypted, "sslmode=require connects over TLS");
    // And the console's own tables work over it.
    let store = PoolStore::new(db);
    assert!(store.list().await.unwrap().is_empty());
}

/// Whether an agent admits `term` now: a fenced release of a lease it never had is refused
/// on the term (409 `stale_term`) or, the term admitted, not found; nothing changes either way.
async fn admits(agent: &AgentClient, term: &ConsoleTerm) -> bool {
    match agent.release_lease("no-such-lease", Some(term)).await {
        Err(HostProblem::RefusedRequest {
            agent_kind: AgentErrorKind::StaleTerm,
            ..
        }) => false,
        Err(HostProblem::RefusedRequest { status: 404, .. }) => true,
        other => panic!("a fenced release of no lease: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_leader_tells_every_host_its_term_so_the_old_one_cannot_act_even_where_it_never_rents()
 {
    let fleet = TestFleet::builder()
        .hosts(3)
        .gpus_per_host(2)
        .model(GpuModel::A100)
        .start()
        .await;
    let dir = TempDir::new("core-election-announce");
    let db = ConsoleDb::open(&dir).await.unwrap();
    let registry = Registry::new(db.clone(), Arc::new(MemoryVault::default()));
    for entry in fleet.entries() {
        registry.add(&entry, None).await.unwrap();
    }
    let store = PoolStore::new(db);
    let group = store.console_id().await.unwrap();
    let (old, new) = (ConsoleTerm::new(&group, 1), ConsoleTerm::new(&group, 2));
    let agents: Vec<AgentClient> = fleet
        .hosts()
        .iter()
        .map(|host| AgentClient::new(&host.url, ClientConfig::default()).unwrap())
        .collect();
    let request = LeaseRequest::count("train", group.clone(), 1);
    // The old leader holds a GPU on the first host and has never called the others.
    let (_, held) = agents[0]
        .create_lease("old-1", &request.clone().with_term(Some(&old)))
        .await
        .unwrap();
    for agent in &agents {
        assert!(
            admits(agent, &old).await,
            "term 1 is the newest each has seen"
        );
    }

    // The new leader has no pool of its own here, so it never rents or releases: only its
    // announcement can reach the agents.
    let far = tokio::time::Instant::now() + Duration::from_secs(3_600);
    let config = EnforcerConfig {
        interval: Duration::from_millis(50),
        ..EnforcerConfig::default()
    };
    let started = Instant::now();
    let leader = Enforcer::start(
        store.clone(),
        registry.clone(),
        dir.to_path_buf(),
        config,
        LeaderHandle::leader(new.clone(), far),
    );
    // A host that has heard of term 2 refuses term 1 for good (terms only grow).
    eventually(
        "every host to hear of term 2",
        Duration::from_secs(10),
        || async {
            let mut unfenced = Vec::new();
            for (index, agent) in agents.iter().enumerate() {
                if admits(agent, &old).await {
                    unfenced.push(index);
                }
            }
            unfenced
                .is_empty()
                .then_some(())
                .ok_or(format!("hosts {unfenced:?} still admit term 1"))
        },
    )
    .await;
    let announced_in = started.elapsed();
    // The old leader's late calls are refused everywhere, where it never rented too.
    for agent in &agents {
        let refused = agent
            .create_lease("old-late", &request.clone().with_term(Some(&old)))
            .await
            .unwrap_err();
        assert!(
            matches!(
                &refused,
                HostProblem::RefusedRequest {
                    agent_kind: AgentErrorKind::StaleTerm,
                    ..
                }
            ),
            "{refused:?}"
        );
    }
    let refused = agents[0]
        .release_lease(&held.id, Some(&old))
        .await
        .unwrap_err();
    assert!(matches!(
        &refused,
        HostProblem::RefusedRequest { status: 409, .. }
    ));
    assert_eq!(
        agents[0].lease(&held.id).await.unwrap().unwrap().state,
        LeaseState::Active,
        "the old leader's release refused: still held"
    );
    // The new leader's own calls go through.
    agents[1]
        .create_lease("new-1", &request.clone().with_term(Some(&new)))
        .await
        .unwrap();

    // The old leader resuming (its clock still says it leads) hears of term 2 from its own
    // announcement and steps down without a pass.
    let resumed = LeaderHandle::leader(old.clone(), far);
    let stale = Enforcer::start(
        store.clone(),
        registry,
        dir.to_path_buf(),
        config,
        resumed.clone(),
    );
    wait_for(
        "the resumed old leader steps down",
        Duration::from_secs(10),
        || resumed.current() == Leadership::Follower,
    )
    .await;
    println!(
        "announcement: all {} hosts refused term 1 within {announced_in:?} of term 2 taking office, 2 of them never called by either leader",
        agents.len()
    );
    stale.stop().await;
    leader.stop().await;
    fleet.stop().await;
}
