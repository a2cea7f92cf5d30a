//! The provider seam: the enforcer driven against an in-memory cloud, no agent and no HTTP.
//! A pool scales out and in through `GpuProvider` alone, and a grant whose answer was lost
//! is sent again under the same key and granted once.

use ebb_core::catalog_store::ActiveCatalog;
use ebb_core::db::ConsoleDb;
use ebb_core::enforcer::{Enforcer, EnforcerConfig, PassReport};
use ebb_core::pools::{self, HostFacts, PoolStore};
use ebb_core::provider::{GpuChoice, GpuProvider, ProviderFuture, Release, Rent, Rented};
use ebb_core::registry::{HostEntry, Registry};
use ebb_core::vault::MemoryVault;
use ebb_testkit::TempDir;
use ebb_wire::agent::{AgentErrorKind, Gpu, GpuList, Lease, LeaseState};
use ebb_wire::plan::{OverlayMode, Term};
use ebb_wire::pools::{PlacementPolicy, PoolInput};
use ebb_wire::reasons::HostProblem;
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;

const MODEL: &str = "NVIDIA A100-SXM4-80GB";

/// A cloud in memory: each target has four GPUs; leases are granted at once, released at
/// once, and a key always answers with its first lease.
#[derive(Debug, Default)]
struct FakeCloud {
    state: Mutex<Cloud>,
}

#[derive(Debug, Default)]
struct Cloud {
    leases: BTreeMap<String, Vec<Lease>>,
    by_key: HashMap<String, Lease>,
    rents: Vec<Rent>,
    releases: Vec<Release>,
    /// This many grants are made but answered with a timeout, as a lost answer would be.
    lose_answers: u32,
    last_token: u64,
}

impl FakeCloud {
    fn losing(answers: u32) -> Self {
        Self {
            state: Mutex::new(Cloud {
                lose_answers: answers,
                ..Cloud::default()
            }),
        }
    }

    fn cloud(&self) -> std::sync::MutexGuard<'_, Cloud> {
        self.state.lock().unwrap()
    }

    /// Active leases per target.
    fn held(&self) -> BTreeMap<String, usize> {
        self.cloud()
            .leases
            .iter()
            .map(|(target, leases)| {
                let active = leases
                    .iter()
                    .filter(|l| l.state == LeaseState::Active)
                    .count();
                (target.clone(), active)
            })
            .collect()
    }
}

fn uuid(target: &str, index: u32) -> String {
    format!("{target}-gpu-{index}")
}

impl Cloud {
    fn gpus(&self, target: &str) -> Vec<Gpu> {
        let held: HashMap<&str, &str> = self
            .leases
            .get(target)
            .into_iter()
            .flatten()
            .filter(|lease| lease.state != LeaseState::Released)
            .flat_map(|lease| {
                lease
                    .gpu_uuids
                    .iter()
                    .map(|uuid| (uuid.as_str(), lease.id.as_str()))
            })
            .collect();
        (0..4)
            .map(|index| Gpu {
                index,
                uuid: uuid(target, index),
                model: MODEL.into(),
                memory_total_mib: Some(81_920),
                healthy: true,
                lease_id: held
                    .get(uuid(target, index).as_str())
                    .map(|id| id.to_string()),
                ..Gpu::default()
            })
            .collect()
    }

    fn rent(&mut self, rent: &Rent) -> Result<Rented, HostProblem> {
        self.rents.push(rent.clone());
        if let Some(lease) = self.by_key.get(&rent.key) {
            return Ok(Rented {
                lease: lease.clone(),
                new: false,
            });
        }
        let free: Vec<Gpu> = self
            .gpus(&rent.target)
            .into_iter()
            .filter(|gpu| gpu.lease_id.is_none())
            .collect();
        let chosen: Vec<&Gpu> = match &rent.gpus {
            GpuChoice::Count(count) => free.iter().take(*count as usize).collect(),
            GpuChoice::Exact(uuids) => free.iter().filter(|g| uuids.contains(&g.uuid)).collect(),
        };
        let wanted = match &rent.gpus {
            GpuChoice::Count(count) => *count as usize,
            GpuChoice::Exact(uuids) => uuids.len(),
        };
        if chosen.len() != wanted {
            return Err(HostProblem::RefusedRequest {
                url: rent.target.clone(),
                status: 409,
                agent_kind: AgentErrorKind::GpuNotFree,
                message: "not free".into(),
            });
        }
        self.last_token += 1;
        let lease = Lease {
            id: format!("{}-lease-{}", rent.target, self.last_token),
            pool_id: rent.pool_id.clone(),
            holder_id: rent.holder_id.clone(),
            gpu_uuids: chosen.iter().map(|g| g.uuid.clone()).collect(),
            gpu_indexes: chosen.iter().map(|g| g.index).collect(),
            fencing_token: self.last_token,
            state: LeaseState::Active,
            created_at_ms: 1_000,
            release_requested_at_ms: None,
            released_at_ms: None,
            command: None,
            load_profile: None,
            workload_pid: None,
            workload_exit_code: None,
            workload_signal: None,
            workload_log: None,
            checkpoint_at_ms: None,
            release_grace_s: Some(0),
            reclaim_deadline_ms: None,
            spot: false,
            starting: false,
        };
        self.by_key.insert(rent.key.clone(), lease.clone());
        self.leases
            .entry(rent.target.clone())
            .or_default()
            .push(lease.clone());
        if self.lose_answers > 0 {
            self.lose_answers -= 1;
            return Err(HostProblem::Timeout {
                url: rent.target.clone(),
                timeout_ms: 1,
            });
        }
        Ok(Rented { lease, new: true })
    }

    fn release(&mut self, release: &Release) -> Result<Lease, HostProblem> {
        self.releases.push(release.clone());
        let lease = self
            .leases
            .get_mut(&release.target)
            .into_iter()
            .flatten()
            .find(|lease| lease.id == release.lease_id)
            .ok_or_else(|| HostProblem::RefusedRequest {
                url: release.target.clone(),
                status: 404,
                agent_kind: AgentErrorKind::NotFound,
                message: "no such lease".into(),
            })?;
        lease.state = LeaseState::Released;
        lease.released_at_ms = Some(2_000);
        Ok(lease.clone())
    }
}

impl GpuProvider for FakeCloud {
    fn prepare<'a>(
        &'a self,
        _targets: &'a [HostEntry],
    ) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> {
        Box::pin(async {})
    }

    fn capacity<'a>(&'a self, target: &'a str) -> ProviderFuture<'a, GpuList> {
        let gpus = self.cloud().gpus(target);
        Box::pin(async move {
            Ok(GpuList {
                host: target.to_string(),
                sampled_at_ms: 1_000,
                gpus,
            })
        })
    }

    fn list<'a>(&'a self, target: &'a str) -> ProviderFuture<'a, Vec<Lease>> {
        let leases = self.cloud().leases.get(target).cloned().unwrap_or_default();
        Box::pin(async move { Ok(leases) })
    }

    fn rent<'a>(&'a self, rent: &'a Rent) -> ProviderFuture<'a, Rented> {
        let answer = self.cloud().rent(rent);
        Box::pin(async move { answer })
    }

    fn release<'a>(&'a self, release: &'a Release) -> ProviderFuture<'a, Lease> {
        let answer = self.cloud().release(release);
        Box::pin(async move { answer })
    }
}

struct Setup {
    store: PoolStore,
    enforcer: Enforcer,
    reports: watch::Receiver<PassReport>,
    _dir: TempDir,
}

/// Two registered targets (not reachable: only the fake cloud is asked) and a pool of A100s
/// in their region, enforced through `cloud`.
async fn setup(name: &str, cloud: Arc<FakeCloud>) -> Setup {
    let dir = TempDir::new(name);
    let db = ConsoleDb::open(&dir).await.unwrap();
    let registry = Registry::new(db.clone(), Arc::new(MemoryVault::default()));
    for host in ["cloud-a", "cloud-b"] {
        let spec = HostEntry {
            name: host.into(),
            url: format!("http://{host}.invalid:7070"),
            region: "cn-north".into(),
            labels: BTreeMap::new(),
            fingerprint: None,
            has_token: false,
            draining: false,
        };
        registry.add(&spec, None).await.unwrap();
    }
    let store = PoolStore::new(db);
    let facts: Vec<HostFacts> = ["cloud-a", "cloud-b"]
        .map(|host| HostFacts {
            name: host.into(),
            region: "cn-north".into(),
            models: vec![MODEL.into()],
        })
        .into();
    let input = PoolInput {
        name: "train".into(),
        model: "A100".into(),
        regions: vec!["cn-north".into()],
        min: 0,
        max: 8,
        base_gpus: 0,
        term: Term::Month,
        overlay: OverlayMode::Hour,
        placement: PlacementPolicy::Spread,
        interruptible: false,
        release_at_unit_end: false,
        spot: Default::default(),
    };
    let valid = pools::validate(&input, &facts, &ActiveCatalog::prices(&dir)).unwrap();
    store.create(valid).await.unwrap();
    let provider: Arc<dyn GpuProvider> = cloud;
    let enforcer = Enforcer::with_provider(
        store.clone(),
        registry,
        dir.to_path_buf(),
        EnforcerConfig {
            interval: Duration::from_millis(20),
            ..EnforcerConfig::default()
        },
        provider,
    );
    let reports = enforcer.reports();
    Setup {
        store,
        enforcer,
        reports,
        _dir: dir,
    }
}

impl Setup {
    async fn scale(&self, to: u32) {
        crate::set_desired(&self.store, "train", to).await;
        self.enforcer.wake();
    }

    /// Waits for a converged pass that began after now.
    async fn converged(&mut self) -> PassReport {
        let after = self.reports.borrow_and_update().number + 1;
        let waited = tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                self.reports.changed().await.unwrap();
                let report = self.reports.borrow_and_update().clone();
                if report.number > after && report.converged {
                    return report;
                }
            }
        })
        .await;
        waited.unwrap_or_else(|_| panic!("no converged pass; last: {:?}", self.reports.borrow()))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_enforcer_scales_a_pool_through_a_provider_alone() {
    let cloud = Arc::new(FakeCloud::default());
    let mut setup = setup("core-provider-scale", cloud.clone()).await;
    setup.scale(6).await;
    let report = setup.converged().await;
    // A pass with work runs every stage, in their one order.
    assert_eq!(report.stages, ebb_core::enforcer::STAGES);
    // Spread over both targets, 3 each, one GPU a rent, each under its own key.
    assert_eq!(
        cloud.held(),
        BTreeMap::from([("cloud-a".to_string(), 3), ("cloud-b".to_string(), 3)])
    );
    let console_id = setup.store.console_id().await.unwrap();
    let pool_id = setup.store.get("train").await.unwrap().id;
    {
        let state = cloud.cloud();
        assert_eq!(state.rents.len(), 6);
        for rent in &state.rents {
            assert!(matches!(&rent.gpus, GpuChoice::Exact(uuids) if uuids.len() == 1));
            assert_eq!((&rent.holder_id, &rent.pool_id), (&console_id, &pool_id));
            assert_eq!(rent.term, None, "no console is elected yet: no term sent");
        }
        let mut keys: Vec<&str> = state.rents.iter().map(|r| r.key.as_str()).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), 6);
    }

    setup.scale(2).await;
    setup.converged().await;
    setup.enforcer.stop().await;
    let held: usize = cloud.held().values().sum();
    assert_eq!(held, 2);
    let state = cloud.cloud();
    assert_eq!(state.releases.len(), 4);
    assert!(state.releases.iter().all(|release| release.term.is_none()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_answer_is_asked_again_with_the_same_key_and_granted_once() {
    let cloud = Arc::new(FakeCloud::losing(1));
    let mut setup = setup("core-provider-retry", cloud.clone()).await;
    setup.scale(1).await;
    setup.converged().await;
    setup.enforcer.stop().await;
    assert_eq!(cloud.held().values().sum::<usize>(), 1);
    let state = cloud.cloud();
    assert_eq!(state.last_token, 1, "granted once");
    assert_eq!(
        state.rents.len(),
        2,
        "the first answer was lost, then asked again"
    );
    assert_eq!(state.rents[0].key, state.rents[1].key);
}
