//! A simulated agent's state, in memory, for in-process requests.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use ebb_agent::auth::{Auth, Scope, TokenEntry, hex};
use ebb_agent::leases::store::LeaseDb;
use ebb_agent::leases::{LeaseConfig, LeaseService};
use ebb_agent::spot::SpotOffer;
use ebb_agent::{AgentState, GpuModel, GpuProbe, LoadProfile, SimConfig, Simulator, app};
use ebb_testkit::TempDir;
use ebb_wire::agent::GpuList;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tower::ServiceExt;

pub struct TestAgent {
    pub state: AgentState,
    pub publish: watch::Sender<Arc<GpuList>>,
    /// Where the workloads write their logs; removed with the agent.
    _logs: TempDir,
}

/// Four idle simulated A100s on host `h` whose lease service is started on one folder's
/// `leases.db`, and started again there as after a restart.
pub struct RestartableHost {
    dir: PathBuf,
    sim: Arc<Simulator>,
    latest: watch::Receiver<Arc<GpuList>>,
    _publish: watch::Sender<Arc<GpuList>>,
}

impl RestartableHost {
    pub fn new(dir: &Path) -> Self {
        Self::offering(dir, SpotOffer::None)
    }

    /// The host with `spot`'s GPUs offered as spot, as its sampler would mark them.
    pub fn offering(dir: &Path, spot: SpotOffer) -> Self {
        let sim = Arc::new(Simulator::new(SimConfig {
            host: "h".into(),
            gpus: vec![GpuModel::A100; 4],
            seed: 1,
            profile: LoadProfile::Idle,
            startup: std::time::Duration::ZERO,
        }));
        let mut gpus = sim.read(0);
        spot.mark(&mut gpus);
        let list = GpuList {
            host: "h".into(),
            sampled_at_ms: 0,
            gpus,
        };
        let (publish, latest) = watch::channel(Arc::new(list));
        Self {
            dir: dir.to_path_buf(),
            sim,
            latest,
            _publish: publish,
        }
    }

    /// The lease service on the folder's database, as a fresh start of the agent would be.
    pub async fn start(&self, config: LeaseConfig) -> Arc<LeaseService> {
        let db = LeaseDb::open(&self.dir).await.unwrap();
        LeaseService::start(
            "h",
            db.host("h"),
            self.sim.clone(),
            self.latest.clone(),
            config,
        )
        .await
        .unwrap()
    }
}

pub fn token_entry(token: &str, scope: Scope) -> TokenEntry {
    TokenEntry {
        name: token.into(),
        scope,
        sha256: hex(&Sha256::digest(token.as_bytes())),
    }
}

impl TestAgent {
    pub async fn new(gpus: usize) -> Self {
        Self::with(gpus, Auth::open(), Duration::from_secs(5)).await
    }

    pub async fn with(gpus: usize, auth: Auth, grace: Duration) -> Self {
        Self::configured(
            gpus,
            auth,
            grace,
            LeaseConfig::default().retention,
            SpotOffer::None,
            Duration::ZERO,
        )
        .await
    }

    /// [`TestAgent::with`] on a host offering `spot`'s GPUs as spot.
    pub async fn spot(gpus: usize, auth: Auth, grace: Duration, spot: SpotOffer) -> Self {
        Self::configured(
            gpus,
            auth,
            grace,
            LeaseConfig::default().retention,
            spot,
            Duration::ZERO,
        )
        .await
    }

    /// An open agent whose leases' workloads take `startup` to come up.
    pub async fn starting_after(gpus: usize, startup: Duration) -> Self {
        Self::configured(
            gpus,
            Auth::open(),
            Duration::from_secs(5),
            LeaseConfig::default().retention,
            SpotOffer::None,
            startup,
        )
        .await
    }

    /// An open agent with this release grace that keeps released leases for `retention`.
    pub async fn with_retention(gpus: usize, grace: Duration, retention: Duration) -> Self {
        Self::configured(
            gpus,
            Auth::open(),
            grace,
            retention,
            SpotOffer::None,
            Duration::ZERO,
        )
        .await
    }

    async fn configured(
        gpus: usize,
        auth: Auth,
        grace: Duration,
        retention: Duration,
        spot: SpotOffer,
        startup: Duration,
    ) -> Self {
        let sim = Arc::new(Simulator::new(SimConfig {
            host: "host-a".into(),
            gpus: vec![GpuModel::H800; gpus],
            seed: 42,
            profile: LoadProfile::Tidal { period_s: 60.0 },
            startup,
        }));
        let mut gpus = sim.read(5_000);
        spot.mark(&mut gpus);
        let list = GpuList {
            host: "host-a".into(),
            sampled_at_ms: 5_000,
            gpus,
        };
        let (publish, latest) = watch::channel(Arc::new(list));
        let logs = TempDir::new("agent-logs");
        let db = LeaseDb::in_memory().await.unwrap();
        let leases = LeaseService::start(
            "host-a",
            db.host("host-a"),
            sim.clone(),
            latest.clone(),
            LeaseConfig {
                release_grace: grace,
                log_dir: Some(logs.to_path_buf()),
                retention,
            },
        )
        .await
        .unwrap();
        let state = AgentState {
            host: "host-a".into(),
            backend: "simulator",
            latest,
            history: ebb_agent::SampleHistory::new("test".into(), 60),
            leases,
            auth: Arc::new(auth),
        };
        Self {
            state,
            publish,
            _logs: logs,
        }
    }

    pub async fn send(&self, request: Request<Body>) -> (StatusCode, Vec<u8>) {
        let response = app(self.state.clone()).oneshot(request).await.unwrap();
        let status = response.status();
        let body = axum::body::to_bytes(response.into_body(), 1 << 22)
            .await
            .unwrap();
        (status, body.to_vec())
    }

    pub async fn get(&self, path: &str) -> (StatusCode, Vec<u8>) {
        self.send(Request::get(path).body(Body::empty()).unwrap())
            .await
    }

    pub async fn post_lease(&self, key: &str, body: &str) -> (StatusCode, Vec<u8>) {
        self.send(
            Request::post("/v1/leases")
                .header("content-type", "application/json")
                .header("idempotency-key", key)
                .body(Body::from(body.to_string()))
                .unwrap(),
        )
        .await
    }

    pub async fn delete(&self, path: &str) -> (StatusCode, Vec<u8>) {
        self.send(Request::delete(path).body(Body::empty()).unwrap())
            .await
    }
}

pub fn json<T: serde::de::DeserializeOwned>(body: &[u8]) -> T {
    serde_json::from_slice(body)
        .unwrap_or_else(|error| panic!("{error}: {}", String::from_utf8_lossy(body)))
}
