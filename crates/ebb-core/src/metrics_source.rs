//! Where the console's readings come from, as one seam: [`MetricsSource`], implemented by
//! the embedded collector and its `metrics.db` ([`embedded::Embedded`], the default: every
//! agent polled) and by Prometheus ([`prometheus::Prometheus`], named by `metrics =
//! "prometheus+http://HOST:9090"` in the data directory's `console.toml` or `--metrics`).
//!
//! The console, the enforcer and every front hold one `Arc<dyn MetricsSource>` and ask it
//! for the fleet's snapshot, a host's series, the heatmap, the rules' GPU readings and the
//! hosts' health now; no code outside the two implementations asks which one it is.

pub mod embedded;
pub mod prometheus;

use crate::console::{ConsoleError, ConsoleOptions, Role};
use crate::db::ConsoleDb;
use crate::registry::Registry;
use ebb_charts::history::{GpuSeries, Heatmap};
use ebb_charts::series::UtilHistory;
use ebb_reconcile::reconcile::{HostObs, PoolStatus};
use ebb_telemetry::collect::Collector;
use ebb_telemetry::metrics_store::{HeatmapQuery, MetricsError, SeriesQuery};
use ebb_telemetry::prom::PromError;
use ebb_wire::ipc::{FleetSnapshot, HostStatus};
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::{Arc, RwLock};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// A metrics source's answer, later.
pub type ReadFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, ReadError>> + Send + 'a>>;

/// Why a reading could not be had.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The query was refused, or the stored readings could not be read.
    #[error(transparent)]
    Stored(#[from] MetricsError),
    /// Prometheus did not answer.
    #[error("metrics unavailable: {0}")]
    Unavailable(#[from] PromError),
    /// The registry or the console's records could not be read.
    #[error(transparent)]
    Console(#[from] Box<ConsoleError>),
}

impl From<ReadError> for ConsoleError {
    fn from(error: ReadError) -> Self {
        match error {
            ReadError::Stored(error) => ConsoleError::Metrics(error),
            ReadError::Unavailable(error) => ConsoleError::MetricsUnavailable(error),
            ReadError::Console(error) => *error,
        }
    }
}

/// What a console gives its source to follow the fleet with.
#[derive(Debug)]
pub struct FeedContext<'a> {
    pub role: Role,
    pub registry: &'a Registry,
    pub db: &'a ConsoleDb,
    /// The live charts' recent readings, which the feed records into.
    pub history: &'a Arc<RwLock<UtilHistory>>,
    pub options: &'a ConsoleOptions,
}

/// The fleet as a source follows it: the snapshot each round, the collector when this
/// process polls the agents itself, and the tasks to stop on shutdown.
#[derive(Debug)]
pub struct Feed {
    pub snapshot: watch::Receiver<Arc<FleetSnapshot>>,
    pub collector: Option<Collector>,
    pub tasks: Vec<JoinHandle<()>>,
}

/// Where the console's readings come from.
pub trait MetricsSource: Send + Sync + std::fmt::Debug {
    /// Where, in words for the operator ("Prometheus at http://…", "metrics.db in …").
    fn describe(&self) -> String;

    /// The Prometheus server that answers the rules' PromQL metrics when `console.toml`
    /// names none of its own.
    fn promql_server(&self) -> Option<String>;

    /// Starts following the fleet for a console in `context.role`.
    fn feed(&self, context: FeedContext<'_>) -> Result<Feed, ConsoleError>;

    /// One host's per-GPU lines (`query.host`, all its GPUs or `query.gpu_index`).
    fn host_series<'a>(&'a self, query: &'a SeriesQuery) -> ReadFuture<'a, Vec<GpuSeries>>;

    /// Every GPU × time, each cell's mean.
    fn heatmap<'a>(&'a self, query: &'a HeatmapQuery) -> ReadFuture<'a, Heatmap>;

    /// The hosts where pools hold leases as the rules read them: `None` when the pass's
    /// own observations (from the agents) are the readings.
    fn readings_for_rules<'a>(
        &'a self,
        hosts: &'a [HostObs],
        statuses: &'a [PoolStatus],
    ) -> Pin<Box<dyn Future<Output = Option<Vec<HostObs>>> + Send + 'a>>;

    /// Each registered host's health now, for `ebb hosts list`: from the running
    /// collector's records or one poll (embedded), or Prometheus's `up`.
    fn health_now<'a>(
        &'a self,
        registry: &'a Registry,
        db: &'a ConsoleDb,
        data_dir: &'a Path,
    ) -> ReadFuture<'a, Vec<HostStatus>>;

    /// Lets go of what it holds open.
    fn close(&self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>>;
}

/// How a source keeps its readings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// Opens (or makes) `metrics.db`: the console's own store.
    Store,
    /// Reads `metrics.db` as it is; no store yet is an error (a command that only reads).
    ReadOnly,
}

/// The source `url` names (Prometheus's base URL, from [`crate::config::ConsoleConfig`]
/// or `--metrics`), else the embedded store in `data_dir`.
pub async fn open(
    data_dir: &Path,
    url: Option<&str>,
    keep: Keep,
) -> Result<Arc<dyn MetricsSource>, ConsoleError> {
    match url {
        Some(url) => Ok(Arc::new(prometheus::Prometheus::new(url)?)),
        None => Ok(Arc::new(embedded::Embedded::open(data_dir, keep).await?)),
    }
}
