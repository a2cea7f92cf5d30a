//! The console's configuration, typed and read in one place: the data directory's
//! `console.toml` (`database`, `metrics`, `prometheus`, `[spot_breaker]`; any other key is
//! refused, naming it), read once when a console opens, and the files a running console
//! follows — `slurm.toml` (the Slurm binding) and the imported price catalog — each read
//! again only when it changed on disk (its size, modification time or inode), not on
//! every pass or chart.

use crate::catalog_store::ActiveCatalog;
use crate::db::OpenError;
use ebb_cost::Catalog;
use ebb_reconcile::spot::BreakerPolicy;
use ebb_slurm::binding::Binding;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The file in a data directory that names the database and the metrics back end.
pub const CONFIG_FILE: &str = "console.toml";

/// What `console.toml` says, each field checked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConsoleToml {
    /// `database`: a `postgres://` URL or `sqlite`, as written.
    pub database: Option<String>,
    /// `metrics = "prometheus+http://HOST:9090"`, as the server's base URL.
    pub metrics: Option<String>,
    /// `prometheus`: the server the rules' PromQL metrics ask (else `metrics`'s).
    pub prometheus: Option<String>,
    /// `[spot_breaker]`.
    pub spot_breaker: Option<BreakerPolicy>,
}

impl ConsoleToml {
    /// The data directory's `console.toml`; the default when there is none. Reading or
    /// parsing it fails naming the file, a bad field naming the field.
    pub fn read(data_dir: &Path) -> Result<Self, OpenError> {
        let path = data_dir.join(CONFIG_FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) => Self::parse(&text).map_err(|reason| OpenError {
                path: path.display().to_string(),
                reason,
            }),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(error) => Err(OpenError {
                path: path.display().to_string(),
                reason: error.to_string(),
            }),
        }
    }

    /// `console.toml`'s text, checked. Pure.
    pub fn parse(text: &str) -> Result<Self, String> {
        let table: toml::Table = text
            .parse()
            .map_err(|error: toml::de::Error| error.message().to_string())?;
        if let Some(key) = table.keys().find(|key| {
            !matches!(
                key.as_str(),
                "database" | "metrics" | "prometheus" | "spot_breaker"
            )
        }) {
            return Err(format!(
                "unknown field `{key}`: the fields are `database`, `metrics`, `prometheus` and `spot_breaker`"
            ));
        }
        let database = match table.get("database") {
            None => None,
            Some(toml::Value::String(url)) => Some(url.clone()),
            Some(_) => {
                return Err(
                    "database: expected a string such as \"postgres://user@host/ebb\"".into(),
                );
            }
        };
        let metrics = match table.get("metrics") {
            None => None,
            Some(toml::Value::String(text)) => Some(
                ebb_telemetry::prom::backend_url(text)
                    .map_err(|reason| format!("metrics: {reason}"))?,
            ),
            Some(_) => {
                return Err(
                    "metrics: expected a string such as \"prometheus+http://127.0.0.1:9090\""
                        .into(),
                );
            }
        };
        let prometheus = match table.get("prometheus") {
            None => None,
            Some(toml::Value::String(url))
                if url.starts_with("http://") || url.starts_with("https://") =>
            {
                Some(url.trim_end_matches('/').to_string())
            }
            Some(_) => {
                return Err("prometheus: expected a URL such as \"http://127.0.0.1:9090\"".into());
            }
        };
        let spot_breaker = table.get("spot_breaker").map(spot_breaker).transpose()?;
        Ok(Self {
            database,
            metrics,
            prometheus,
            spot_breaker,
        })
    }
}

/// `[spot_breaker]` with `max_interruptions`, `window_minutes`, `cool_off_minutes`,
/// `quiet_minutes`: more than `max_interruptions` reclaims of a model in a region within
/// the window pause spot there for at least the cool-off, until none came for the quiet
/// time. Each field is needed; a bad one is an error naming it.
fn spot_breaker(value: &toml::Value) -> Result<BreakerPolicy, String> {
    let Some(section) = value.as_table() else {
        return Err("spot_breaker: expected a table `[spot_breaker]`".into());
    };
    const FIELDS: [&str; 4] = [
        "max_interruptions",
        "window_minutes",
        "cool_off_minutes",
        "quiet_minutes",
    ];
    if let Some(key) = section.keys().find(|key| !FIELDS.contains(&key.as_str())) {
        return Err(format!(
            "spot_breaker.{key}: unknown field; the fields are {}",
            FIELDS.join(", ")
        ));
    }
    let field = |name: &str, least: i64| -> Result<i64, String> {
        match section.get(name) {
            Some(toml::Value::Integer(n)) if (least..=1440).contains(n) => Ok(*n),
            Some(_) => Err(format!(
                "spot_breaker.{name}: expected a whole number from {least} to 1440"
            )),
            None => Err(format!("spot_breaker.{name}: missing")),
        }
    };
    let minutes = |name: &str| field(name, 1).map(|n| n * 60_000);
    Ok(BreakerPolicy {
        max_interruptions: u32::try_from(field("max_interruptions", 0)?).unwrap_or(0),
        window_ms: minutes("window_minutes")?,
        cool_off_ms: minutes("cool_off_minutes")?,
        quiet_ms: minutes("quiet_minutes")?,
    })
}

/// How a file stood when it was last read: `None` when it did not exist.
type Stamp = Option<(u64, std::time::SystemTime, u64)>;

fn stamp(path: &Path) -> Stamp {
    let meta = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(&meta);
    #[cfg(not(unix))]
    let inode = 0;
    Some((meta.len(), meta.modified().ok()?, inode))
}

/// A file's parsed value, read again only when the file changed.
#[derive(Debug)]
struct Watched<T> {
    path: PathBuf,
    read: fn(&Path) -> T,
    last: Mutex<Option<(Stamp, Arc<T>)>>,
}

impl<T> Watched<T> {
    fn new(path: PathBuf, read: fn(&Path) -> T) -> Self {
        Self {
            path,
            read,
            last: Mutex::new(None),
        }
    }

    fn get(&self) -> Arc<T> {
        let now = stamp(&self.path);
        let mut last = self
            .last
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((seen, value)) = last.as_ref()
            && *seen == now
        {
            return value.clone();
        }
        let value = Arc::new((self.read)(&self.path));
        *last = Some((now, value.clone()));
        value
    }
}

/// A data directory's configuration for a running console: `console.toml` as it was when
/// the console opened, the Slurm binding and the prices as they are now.
#[derive(Debug)]
pub struct ConsoleConfig {
    data_dir: PathBuf,
    toml: ConsoleToml,
    slurm: Watched<Result<Option<Binding>, String>>,
    catalog: Watched<Catalog>,
}

impl ConsoleConfig {
    /// `data_dir`'s configuration: its `console.toml` read now (a bad one is refused,
    /// naming the field).
    pub fn read(data_dir: &Path) -> Result<Self, OpenError> {
        Ok(Self::with(data_dir, ConsoleToml::read(data_dir)?))
    }

    /// `data_dir`'s followed files with `toml` as its `console.toml`.
    pub fn with(data_dir: &Path, toml: ConsoleToml) -> Self {
        Self {
            data_dir: data_dir.to_path_buf(),
            toml,
            slurm: Watched::new(data_dir.join(BINDING_FILE), read_binding),
            catalog: Watched::new(
                data_dir.join(crate::catalog_store::CATALOG_FILE),
                read_prices,
            ),
        }
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// `console.toml` as read.
    pub fn toml(&self) -> &ConsoleToml {
        &self.toml
    }

    /// The metrics back end: `given` (`--metrics`) over `console.toml`'s `metrics`, as
    /// Prometheus's base URL; `None` for the embedded collector. A bad `given` is an error
    /// naming `--metrics`.
    pub fn metrics_url(&self, given: Option<&str>) -> Result<Option<String>, OpenError> {
        match given {
            Some(text) => ebb_telemetry::prom::backend_url(text)
                .map(Some)
                .map_err(|reason| OpenError {
                    path: "--metrics".into(),
                    reason: format!("metrics: {reason}"),
                }),
            None => Ok(self.toml.metrics.clone()),
        }
    }

    /// The spot breaker's policy, where `console.toml` sets one.
    pub fn spot_breaker(&self) -> Option<BreakerPolicy> {
        self.toml.spot_breaker
    }

    /// `slurm.toml`'s binding as it is now: `Ok(None)` without the file; a file that does
    /// not read is `Err` naming it.
    pub fn slurm_binding(&self) -> Arc<Result<Option<Binding>, String>> {
        self.slurm.get()
    }

    /// The prices in use now: the imported catalog, else the demo one (also when the
    /// imported one cannot be read).
    pub fn prices(&self) -> Arc<Catalog> {
        self.catalog.get()
    }
}

/// The binding file in the data directory.
pub const BINDING_FILE: &str = "slurm.toml";

/// Reads `slurm.toml` from the data directory: `Ok(None)` when there is none.
pub fn load_binding(data_dir: &Path) -> Result<Option<Binding>, String> {
    read_binding(&data_dir.join(BINDING_FILE))
}

/// `slurm.toml` at `path`.
fn read_binding(path: &Path) -> Result<Option<Binding>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => Binding::parse(&text)
            .map(Some)
            .map_err(|error| format!("{}: {error}", path.display())),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(format!("{}: {error}", path.display())),
    }
}

fn read_prices(path: &Path) -> Catalog {
    let dir = path.parent().unwrap_or(Path::new("."));
    ActiveCatalog::prices(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn console_toml_names_a_bad_field() {
        let parsed = ConsoleToml::parse(
            "[spot_breaker]\nmax_interruptions = 2\nwindow_minutes = 10\ncool_off_minutes = 5\nquiet_minutes = 4\n",
        )
        .unwrap();
        let policy = parsed.spot_breaker.unwrap();
        assert_eq!(policy.max_interruptions, 2);
        assert_eq!(policy.window_ms, 600_000);
        assert_eq!(policy.quiet_ms, 240_000);
        let error = ConsoleToml::parse(
            "[spot_breaker]\nmax_interruptions = 2\nwindow_minutes = 0\ncool_off_minutes = 5\nquiet_minutes = 4\n",
        )
        .unwrap_err();
        assert!(error.contains("spot_breaker.window_minutes"), "{error}");
        let error =
            ConsoleToml::parse("[spot_breaker]\nmax_interruptions = 2\nwindow = 10\n").unwrap_err();
        assert!(
            error.contains("spot_breaker.window: unknown field"),
            "{error}"
        );
        let error = ConsoleToml::parse("databse = \"postgres://x\"\n").unwrap_err();
        assert!(error.contains("unknown field `databse`"), "{error}");
        let error = ConsoleToml::parse("database = 5\n").unwrap_err();
        assert!(error.contains("database: expected a string"), "{error}");
        let error = ConsoleToml::parse("metrics = \"influx://x\"\n").unwrap_err();
        assert!(error.starts_with("metrics:"), "{error}");
        let error = ConsoleToml::parse("prometheus = \"x:9090\"\n").unwrap_err();
        assert!(error.starts_with("prometheus:"), "{error}");
        let parsed = ConsoleToml::parse(
            "metrics = \"prometheus+http://127.0.0.1:9090\"\nprometheus = \"http://p:9090/\"\n",
        )
        .unwrap();
        assert_eq!(parsed.metrics.as_deref(), Some("http://127.0.0.1:9090"));
        assert_eq!(parsed.prometheus.as_deref(), Some("http://p:9090"));
    }

    #[test]
    fn a_followed_file_is_read_again_only_when_it_changed() {
        let dir = ebb_testkit::TempDir::new("config-watched");
        let path = dir.join("counted.txt");
        static READS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        fn count(path: &Path) -> String {
            READS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            std::fs::read_to_string(path).unwrap_or_default()
        }
        let watched = Watched::new(path.clone(), count);
        assert_eq!(*watched.get(), "");
        assert_eq!(*watched.get(), "");
        assert_eq!(READS.load(std::sync::atomic::Ordering::SeqCst), 1);
        std::fs::write(&path, "one").unwrap();
        assert_eq!(*watched.get(), "one");
        assert_eq!(*watched.get(), "one");
        assert_eq!(READS.load(std::sync::atomic::Ordering::SeqCst), 2);
        // Replaced by a file of the same size (a new inode, as an editor or an import
        // writes): read again.
        let next = dir.join("next.txt");
        std::fs::write(&next, "two").unwrap();
        std::fs::rename(&next, &path).unwrap();
        assert_eq!(*watched.get(), "two");
        std::fs::remove_file(&path).unwrap();
        assert_eq!(*watched.get(), "");
        assert_eq!(READS.load(std::sync::atomic::Ordering::SeqCst), 4);
    }
}
