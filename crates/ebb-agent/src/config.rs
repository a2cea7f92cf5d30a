//! The agent's configuration: a TOML file, then `EBB_AGENT_*` environment variables, then
//! flags, each overriding the one before. Parse, then validate into [`AgentConfig`].

use crate::auth::TokenEntry;
use crate::sim::{GpuModel, LoadProfile, parse_spec, parse_trace};
use crate::spot::{DEFAULT_SPOT_NOTICE, Interruptions, MAX_INTERRUPTIONS_PER_HOUR, SpotOffer};
use serde::Deserialize;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Hours a released lease is kept when the config does not say: 7 days.
pub const DEFAULT_LEASE_RETENTION_H: u64 = 168;
/// The longest retention: a year.
pub const MAX_LEASE_RETENTION_H: u64 = 8760;

/// The settings one source (file, environment or flags) may give; `None` leaves it be.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    pub listen: Option<SocketAddr>,
    pub host_name: Option<String>,
    /// GPU spec for the simulator, like `8xA100`; absent means real GPUs through NVML.
    pub sim: Option<String>,
    /// Simulator load: `tidal`, `idle`, `steady`, `diurnal` or `burst`.
    pub sim_profile: Option<String>,
    /// Simulator load replayed from a `t_s,util_pct` CSV file.
    pub sim_trace: Option<PathBuf>,
    pub nvml_library: Option<PathBuf>,
    pub state_dir: Option<PathBuf>,
    pub tls: Option<bool>,
    /// A PEM certificate chain to serve (leaf first), e.g. signed by the operator's CA;
    /// with `tls_key`, instead of the self-signed certificate.
    pub tls_cert: Option<PathBuf>,
    /// The PEM private key of `tls_cert`'s leaf.
    pub tls_key: Option<PathBuf>,
    /// Serve plain HTTP on a non-loopback address (tokens then cross the network in clear).
    pub allow_plain_http: Option<bool>,
    pub sample_interval_ms: Option<u64>,
    pub release_grace_s: Option<u64>,
    /// Hours a released lease (and the idempotency key that granted it) is kept.
    pub lease_retention_h: Option<u64>,
    /// Offer every GPU as spot: cheaper, and the host's owner may reclaim a lease on it
    /// with a notice (`ebb-agent reclaim`).
    pub spot: Option<bool>,
    /// Offer these GPUs as spot, by index (instead of `spot = true`).
    pub spot_gpus: Option<Vec<u32>>,
    /// The simulator's owner reclaims spot leases at this rate: expected reclaims per spot
    /// lease-hour, more than 0 and at most 60 (seeded, the same each run).
    pub spot_interruptions_per_hour: Option<f64>,
    /// The notice those reclaims give, in seconds (default 120, 1 to 3600).
    pub spot_notice_s: Option<u64>,
}

/// The config file: settings plus the token hashes.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    #[serde(flatten)]
    pub settings: Settings,
    #[serde(default)]
    pub tokens: Vec<TokenEntry>,
}

/// Where the GPU readings come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Backend {
    Simulator {
        gpus: Vec<GpuModel>,
        profile: LoadProfile,
    },
    Nvml {
        library: Option<PathBuf>,
    },
}

/// How the agent serves its API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TlsMode {
    /// Plain HTTP.
    Off,
    /// HTTPS with a self-signed certificate made on first start in `state_dir/tls`.
    SelfSigned,
    /// HTTPS with the operator's certificate chain (leaf first) and its key.
    Provided { cert: PathBuf, key: PathBuf },
}

impl TlsMode {
    pub fn is_on(&self) -> bool {
        *self != TlsMode::Off
    }
}

/// A validated configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentConfig {
    pub listen: SocketAddr,
    pub host_name: String,
    pub backend: Backend,
    pub state_dir: PathBuf,
    pub tls: TlsMode,
    pub allow_plain_http: bool,
    pub sample_interval: Duration,
    pub release_grace: Duration,
    pub lease_retention: Duration,
    /// Which GPUs are offered as spot (checked against an NVML host's GPUs at start).
    pub spot: SpotOffer,
    /// The simulator's seeded reclaims of its own spot leases, when configured.
    pub interruptions: Option<Interruptions>,
    pub tokens: Vec<TokenEntry>,
}

/// A configuration problem, naming the source and key.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("config file {path}: {message}")]
    Parse { path: String, message: String },
    #[error("{key}: {problem}")]
    Invalid { key: String, problem: String },
}

fn invalid(key: &str, problem: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        key: key.into(),
        problem: problem.into(),
    }
}

/// Reads the config file; a missing file is an error only when `required`.
pub fn read_file(path: &Path, required: bool) -> Result<FileConfig, ConfigError> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound && !required => {
            return Ok(FileConfig::default());
        }
        Err(source) => {
            return Err(ConfigError::Read {
                path: path.display().to_string(),
                source,
            });
        }
    };
    utf8(&bytes)
        .and_then(parse_file)
        .map_err(|message| ConfigError::Parse {
            path: path.display().to_string(),
            message,
        })
}

/// The file's text, or where it stops being UTF-8 (line and column, as TOML errors say).
fn utf8(bytes: &[u8]) -> Result<&str, String> {
    std::str::from_utf8(bytes).map_err(|error| {
        let good = &bytes[..error.valid_up_to()];
        let line = good.iter().filter(|byte| **byte == b'\n').count() + 1;
        let line_start = good
            .iter()
            .rposition(|byte| *byte == b'\n')
            .map_or(0, |i| i + 1);
        let column = String::from_utf8_lossy(&good[line_start..]).chars().count() + 1;
        format!(
            "line {line}, column {column}: not UTF-8 (byte 0x{:02X}): save the file as UTF-8",
            bytes[error.valid_up_to()]
        )
    })
}

pub fn parse_file(text: &str) -> Result<FileConfig, String> {
    toml::from_str(text).map_err(|error| error.to_string().trim().to_string())
}

/// The settings `EBB_AGENT_<KEY>` variables give, naming the variable at fault.
pub fn from_env(var: impl Fn(&str) -> Option<String>) -> Result<Settings, ConfigError> {
    fn parsed<T: std::str::FromStr>(
        var: &impl Fn(&str) -> Option<String>,
        name: &str,
        what: &str,
    ) -> Result<Option<T>, ConfigError> {
        var(name)
            .map(|value| {
                value
                    .trim()
                    .parse()
                    .map_err(|_| invalid(name, format!("`{value}` is not {what}")))
            })
            .transpose()
    }
    fn flag(
        var: &impl Fn(&str) -> Option<String>,
        name: &str,
    ) -> Result<Option<bool>, ConfigError> {
        var(name)
            .map(|value| match value.trim().to_ascii_lowercase().as_str() {
                "1" | "true" | "yes" | "on" => Ok(true),
                "0" | "false" | "no" | "off" => Ok(false),
                _ => Err(invalid(name, format!("`{value}` is not true or false"))),
            })
            .transpose()
    }
    Ok(Settings {
        listen: parsed(&var, "EBB_AGENT_LISTEN", "an address like 0.0.0.0:7070")?,
        host_name: var("EBB_AGENT_HOST_NAME"),
        sim: var("EBB_AGENT_SIM"),
        sim_profile: var("EBB_AGENT_SIM_PROFILE"),
        sim_trace: var("EBB_AGENT_SIM_TRACE").map(PathBuf::from),
        nvml_library: var("EBB_AGENT_NVML_LIBRARY").map(PathBuf::from),
        state_dir: var("EBB_AGENT_STATE_DIR").map(PathBuf::from),
        tls: flag(&var, "EBB_AGENT_TLS")?,
        tls_cert: var("EBB_AGENT_TLS_CERT").map(PathBuf::from),
        tls_key: var("EBB_AGENT_TLS_KEY").map(PathBuf::from),
        allow_plain_http: flag(&var, "EBB_AGENT_ALLOW_PLAIN_HTTP")?,
        sample_interval_ms: parsed(
            &var,
            "EBB_AGENT_SAMPLE_INTERVAL_MS",
            "a number of milliseconds",
        )?,
        release_grace_s: parsed(&var, "EBB_AGENT_RELEASE_GRACE_S", "a number of seconds")?,
        lease_retention_h: parsed(&var, "EBB_AGENT_LEASE_RETENTION_H", "a number of hours")?,
        spot: flag(&var, "EBB_AGENT_SPOT")?,
        spot_gpus: var("EBB_AGENT_SPOT_GPUS")
            .map(|value| {
                parse_indexes(&value).map_err(|problem| invalid("EBB_AGENT_SPOT_GPUS", problem))
            })
            .transpose()?,
        spot_interruptions_per_hour: parsed(
            &var,
            "EBB_AGENT_SPOT_INTERRUPTIONS_PER_HOUR",
            "a number of reclaims per spot lease-hour",
        )?,
        spot_notice_s: parsed(&var, "EBB_AGENT_SPOT_NOTICE_S", "a number of seconds")?,
    })
}

/// GPU indexes as a list like `0,1,3` (spaces allowed; empty: none).
pub fn parse_indexes(text: &str) -> Result<Vec<u32>, String> {
    text.split(',')
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .map(|part| {
            part.parse()
                .map_err(|_| format!("`{part}` is not a GPU index (a list like 0,1)"))
        })
        .collect()
}

impl Settings {
    /// `self`, with every setting `over` gives replacing it.
    pub fn overridden_by(self, over: Settings) -> Settings {
        Settings {
            listen: over.listen.or(self.listen),
            host_name: over.host_name.or(self.host_name),
            sim: over.sim.or(self.sim),
            sim_profile: over.sim_profile.or(self.sim_profile),
            sim_trace: over.sim_trace.or(self.sim_trace),
            nvml_library: over.nvml_library.or(self.nvml_library),
            state_dir: over.state_dir.or(self.state_dir),
            tls: over.tls.or(self.tls),
            tls_cert: over.tls_cert.or(self.tls_cert),
            tls_key: over.tls_key.or(self.tls_key),
            allow_plain_http: over.allow_plain_http.or(self.allow_plain_http),
            sample_interval_ms: over.sample_interval_ms.or(self.sample_interval_ms),
            release_grace_s: over.release_grace_s.or(self.release_grace_s),
            lease_retention_h: over.lease_retention_h.or(self.lease_retention_h),
            spot: over.spot.or(self.spot),
            spot_gpus: over.spot_gpus.or(self.spot_gpus),
            spot_interruptions_per_hour: over
                .spot_interruptions_per_hour
                .or(self.spot_interruptions_per_hour),
            spot_notice_s: over.spot_notice_s.or(self.spot_notice_s),
        }
    }
}

/// The state directory when none is given: systemd's, root's, or the user's.
pub fn default_state_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("STATE_DIRECTORY") {
        return PathBuf::from(dir);
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    match (std::env::var("USER").as_deref(), home) {
        (Ok("root"), _) | (_, None) => PathBuf::from("/var/lib/ebb-agent"),
        (_, Some(home)) => home.join(".local/state/ebb-agent"),
    }
}

/// The machine's host name, for agents not given one.
fn system_host_name() -> String {
    #[cfg(unix)]
    if let Some(name) = nix::unistd::gethostname()
        .ok()
        .and_then(|name| name.into_string().ok())
        .filter(|name| !name.is_empty())
    {
        return name;
    }
    std::env::var("HOSTNAME")
        .ok()
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "gpu-host".into())
}

/// Validates merged settings. `read_trace` reads the trace file (IO stays with the caller).
#[allow(
    clippy::too_many_lines,
    reason = "the agent's flags, file and environment resolved field by field in one place"
)]
pub fn resolve(
    settings: Settings,
    tokens: Vec<TokenEntry>,
    read_trace: impl Fn(&Path) -> std::io::Result<String>,
) -> Result<AgentConfig, ConfigError> {
    let host_name = settings.host_name.unwrap_or_else(system_host_name);
    if host_name.trim().is_empty()
        || host_name.len() > 64
        || host_name.chars().any(char::is_control)
    {
        return Err(invalid("host_name", "must be 1 to 64 printable characters"));
    }
    let backend = match settings.sim {
        Some(spec) => {
            let gpus = parse_spec(&spec).map_err(|error| invalid("sim", error.to_string()))?;
            let profile = match (&settings.sim_trace, settings.sim_profile.as_deref()) {
                (Some(path), _) => {
                    let text = read_trace(path).map_err(|error| {
                        invalid("sim_trace", format!("cannot read {}: {error}", path.display()))
                    })?;
                    parse_trace(&text).map_err(|error| invalid("sim_trace", error.to_string()))?
                }
                (None, None | Some("tidal")) => LoadProfile::Tidal { period_s: 600.0 },
                (None, Some(name)) => LoadProfile::from_name(name).ok_or_else(|| {
                    invalid(
                        "sim_profile",
                        format!("unknown profile `{name}`: expected tidal, idle, steady, diurnal or burst"),
                    )
                })?,
            };
            Backend::Simulator { gpus, profile }
        }
        None => {
            if settings.sim_profile.is_some() || settings.sim_trace.is_some() {
                return Err(invalid(
                    "sim_profile",
                    "only applies with `sim` (the simulator)",
                ));
            }
            Backend::Nvml {
                library: settings.nvml_library,
            }
        }
    };
    let sample_interval_ms = settings.sample_interval_ms.unwrap_or(1000);
    if !(50..=60_000).contains(&sample_interval_ms) {
        return Err(invalid("sample_interval_ms", "must be from 50 to 60000"));
    }
    let release_grace_s = settings.release_grace_s.unwrap_or(30);
    if release_grace_s > 3600 {
        return Err(invalid("release_grace_s", "must be at most 3600"));
    }
    let lease_retention_h = settings
        .lease_retention_h
        .unwrap_or(DEFAULT_LEASE_RETENTION_H);
    if !(1..=MAX_LEASE_RETENTION_H).contains(&lease_retention_h) {
        return Err(invalid(
            "lease_retention_h",
            format!(
                "must be from 1 to {MAX_LEASE_RETENTION_H} hours (a retry of a released lease's key is answered only within it)"
            ),
        ));
    }
    let spot = spot_offer(settings.spot, settings.spot_gpus)?;
    let simulated_gpus = match &backend {
        Backend::Simulator { gpus, .. } => Some(gpus.len()),
        Backend::Nvml { .. } => None,
    };
    if let Some(count) = simulated_gpus {
        check_spot_gpus(&spot, count)?;
    }
    let interruptions = match settings.spot_interruptions_per_hour {
        None => {
            if settings.spot_notice_s.is_some() {
                return Err(invalid(
                    "spot_notice_s",
                    "only applies with spot_interruptions_per_hour (the simulator's reclaims)",
                ));
            }
            None
        }
        Some(per_hour) => {
            if simulated_gpus.is_none() {
                return Err(invalid(
                    "spot_interruptions_per_hour",
                    "only applies with `sim` (the simulator): on a real host its owner reclaims with `ebb-agent reclaim`",
                ));
            }
            if !(per_hour > 0.0 && per_hour <= MAX_INTERRUPTIONS_PER_HOUR) {
                return Err(invalid(
                    "spot_interruptions_per_hour",
                    format!(
                        "must be more than 0 and at most {MAX_INTERRUPTIONS_PER_HOUR} reclaims per spot lease-hour"
                    ),
                ));
            }
            if !spot.any() {
                return Err(invalid(
                    "spot_interruptions_per_hour",
                    "no GPU is offered as spot: set spot = true or spot_gpus",
                ));
            }
            let notice_s = settings
                .spot_notice_s
                .unwrap_or(DEFAULT_SPOT_NOTICE.as_secs());
            if !(1..=3600).contains(&notice_s) {
                return Err(invalid("spot_notice_s", "must be from 1 to 3600 seconds"));
            }
            Some(Interruptions {
                per_hour,
                notice: Duration::from_secs(notice_s),
                seed: crate::sim::DEFAULT_SEED,
            })
        }
    };
    let mut names = std::collections::HashSet::new();
    for token in &tokens {
        if !names.insert(token.name.as_str()) {
            return Err(invalid(
                "tokens",
                format!("the name `{}` is used twice", token.name),
            ));
        }
    }
    let tls = match (settings.tls_cert, settings.tls_key) {
        (Some(_), Some(_)) if settings.tls == Some(false) => {
            return Err(invalid(
                "tls",
                "is false, but tls_cert and tls_key are given: remove them or set tls = true",
            ));
        }
        (Some(cert), Some(key)) => TlsMode::Provided { cert, key },
        (Some(_), None) => {
            return Err(invalid(
                "tls_key",
                "missing: tls_cert is given, so its private key must be too (--tls-key FILE or EBB_AGENT_TLS_KEY)",
            ));
        }
        (None, Some(_)) => {
            return Err(invalid(
                "tls_cert",
                "missing: tls_key is given, so its certificate must be too (--tls-cert FILE or EBB_AGENT_TLS_CERT)",
            ));
        }
        (None, None) if settings.tls == Some(true) => TlsMode::SelfSigned,
        (None, None) => TlsMode::Off,
    };
    let config = AgentConfig {
        listen: settings
            .listen
            .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 7070))),
        host_name,
        backend,
        state_dir: settings.state_dir.unwrap_or_else(default_state_dir),
        tls,
        allow_plain_http: settings.allow_plain_http.unwrap_or(false),
        sample_interval: Duration::from_millis(sample_interval_ms),
        release_grace: Duration::from_secs(release_grace_s),
        lease_retention: Duration::from_secs(lease_retention_h * 3600),
        spot,
        interruptions,
        tokens,
    };
    config.check_exposure()?;
    Ok(config)
}

/// `spot` and `spot_gpus` as one offer: one or the other, each index once.
fn spot_offer(all: Option<bool>, gpus: Option<Vec<u32>>) -> Result<SpotOffer, ConfigError> {
    match (all, gpus) {
        (Some(true), Some(_)) => Err(invalid(
            "spot_gpus",
            "is given with spot = true, which offers every GPU already: give one or the other",
        )),
        (Some(false), Some(_)) => Err(invalid(
            "spot_gpus",
            "is given with spot = false: remove one of them",
        )),
        (Some(true), None) => Ok(SpotOffer::All),
        (Some(false) | None, None) => Ok(SpotOffer::None),
        (None, Some(indexes)) => {
            let mut set = std::collections::BTreeSet::new();
            for index in indexes {
                if !set.insert(index) {
                    return Err(invalid("spot_gpus", format!("GPU {index} is listed twice")));
                }
            }
            Ok(if set.is_empty() {
                SpotOffer::None
            } else {
                SpotOffer::Gpus(set)
            })
        }
    }
}

/// Refuses a spot GPU index a host of `gpu_count` GPUs does not have, naming `spot_gpus`.
pub fn check_spot_gpus(spot: &SpotOffer, gpu_count: usize) -> Result<(), ConfigError> {
    match spot.missing_index(gpu_count) {
        None => Ok(()),
        Some(index) => Err(invalid(
            "spot_gpus",
            format!(
                "this host has no GPU {index}: it has {gpu_count} ({})",
                match gpu_count {
                    0 => "none".to_string(),
                    1 => "index 0".to_string(),
                    n => format!("indexes 0 to {}", n - 1),
                }
            ),
        )),
    }
}

impl AgentConfig {
    /// An agent reachable from other machines must check tokens, and must use TLS unless
    /// told otherwise.
    fn check_exposure(&self) -> Result<(), ConfigError> {
        if self.listen.ip().is_loopback() {
            return Ok(());
        }
        if self.tokens.is_empty() {
            return Err(invalid(
                "listen",
                format!(
                    "{} is reachable from other machines but no tokens are configured: create one with `ebb-agent token new --scope lease --config FILE`",
                    self.listen
                ),
            ));
        }
        if !self.tls.is_on() && !self.allow_plain_http {
            return Err(invalid(
                "listen",
                format!(
                    "{} is reachable from other machines: serve TLS (--tls) or allow plain HTTP explicitly (--allow-plain-http)",
                    self.listen
                ),
            ));
        }
        Ok(())
    }

    /// A warning to log at start, if any.
    pub fn exposure_warning(&self) -> Option<String> {
        (!self.listen.ip().is_loopback() && !self.tls.is_on()).then(|| {
            format!(
                "serving plain HTTP on {}: tokens and readings cross the network unencrypted",
                self.listen
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::Scope;

    fn no_trace(_: &Path) -> std::io::Result<String> {
        Err(std::io::Error::other("no file"))
    }

    fn token() -> TokenEntry {
        TokenEntry {
            name: "console".into(),
            scope: Scope::Lease,
            sha256: "ab".repeat(32),
        }
    }

    #[test]
    fn file_then_env_then_flags() {
        let file =
            parse_file("listen = \"127.0.0.1:9000\"\nsim = \"2xA100\"\nsample_interval_ms = 500\n")
                .unwrap();
        let env = from_env(|name| (name == "EBB_AGENT_SIM").then(|| "4xV100".to_string())).unwrap();
        let flags = Settings {
            sample_interval_ms: Some(250),
            ..Settings::default()
        };
        let merged = file.settings.overridden_by(env).overridden_by(flags);
        let config = resolve(merged, vec![], no_trace).unwrap();
        assert_eq!(config.listen.port(), 9000);
        assert_eq!(config.sample_interval, Duration::from_millis(250));
        let Backend::Simulator { gpus, .. } = config.backend else {
            panic!("simulator")
        };
        assert_eq!(gpus, vec![GpuModel::V100; 4]);
    }

    #[test]
    fn bad_keys_and_values_are_named() {
        let unknown = parse_file("listen = \"127.0.0.1:1\"\nlsten = 3\n").unwrap_err();
        assert!(unknown.contains("unknown field `lsten`"), "{unknown}");
        let wrong_type = parse_file("tls = \"yes\"\n").unwrap_err();
        assert!(wrong_type.contains("tls"), "{wrong_type}");
        let env =
            from_env(|name| (name == "EBB_AGENT_TLS").then(|| "maybe".to_string())).unwrap_err();
        assert_eq!(
            env.to_string(),
            "EBB_AGENT_TLS: `maybe` is not true or false"
        );
        let cases = [
            (
                Settings {
                    sim: Some("3xB200".into()),
                    ..Settings::default()
                },
                "sim: --sim `3xB200`: unknown GPU model",
            ),
            (
                Settings {
                    sample_interval_ms: Some(5),
                    ..Settings::default()
                },
                "sample_interval_ms: must be from 50",
            ),
            (
                Settings {
                    sim_profile: Some("idle".into()),
                    ..Settings::default()
                },
                "sim_profile: only applies with `sim`",
            ),
            (
                Settings {
                    sim: Some("1xA100".into()),
                    sim_profile: Some("wavy".into()),
                    ..Settings::default()
                },
                "sim_profile: unknown profile `wavy`",
            ),
            (
                Settings {
                    sim: Some("1xA100".into()),
                    sim_trace: Some("/nope.csv".into()),
                    ..Settings::default()
                },
                "sim_trace: cannot read /nope.csv",
            ),
        ];
        for (settings, expected) in cases {
            let error = resolve(settings, vec![], no_trace).unwrap_err().to_string();
            assert!(error.starts_with(expected), "{expected} vs {error}");
        }
    }

    #[test]
    fn the_lease_retention_is_a_week_unless_given_in_hours_within_a_year() {
        let sim = || Settings {
            sim: Some("1xA100".into()),
            ..Settings::default()
        };
        let default = resolve(sim(), vec![], no_trace).unwrap();
        assert_eq!(default.lease_retention, Duration::from_secs(7 * 24 * 3600));
        let file = parse_file("sim = \"1xA100\"\nlease_retention_h = 24\n").unwrap();
        let env =
            from_env(|name| (name == "EBB_AGENT_LEASE_RETENTION_H").then(|| "48".to_string()))
                .unwrap();
        let from_file = resolve(file.settings.clone(), vec![], no_trace).unwrap();
        assert_eq!(from_file.lease_retention, Duration::from_secs(24 * 3600));
        let env_wins = resolve(file.settings.overridden_by(env), vec![], no_trace).unwrap();
        assert_eq!(env_wins.lease_retention, Duration::from_secs(48 * 3600));
        for hours in [0, MAX_LEASE_RETENTION_H + 1] {
            let error = resolve(
                Settings {
                    lease_retention_h: Some(hours),
                    ..sim()
                },
                vec![],
                no_trace,
            )
            .unwrap_err()
            .to_string();
            assert!(
                error.starts_with("lease_retention_h: must be from 1 to 8760 hours"),
                "{error}"
            );
        }
        let bad =
            from_env(|name| (name == "EBB_AGENT_LEASE_RETENTION_H").then(|| "a week".to_string()))
                .unwrap_err();
        assert_eq!(
            bad.to_string(),
            "EBB_AGENT_LEASE_RETENTION_H: `a week` is not a number of hours"
        );
    }

    #[test]
    fn the_shipped_sample_config_is_valid_once_it_has_a_token() {
        let sample = parse_file(include_str!("../dist/agent.toml")).unwrap();
        let without = resolve(sample.settings.clone(), sample.tokens.clone(), no_trace);
        assert!(
            without
                .unwrap_err()
                .to_string()
                .contains("ebb-agent token new")
        );
        let config = resolve(sample.settings, vec![token()], no_trace).unwrap();
        assert_eq!(config.tls, TlsMode::SelfSigned);
        assert_eq!(config.backend, Backend::Nvml { library: None });
        assert_eq!(
            config.lease_retention,
            Duration::from_secs(DEFAULT_LEASE_RETENTION_H * 3600)
        );
    }

    #[test]
    fn a_certificate_and_key_come_together_and_imply_tls() {
        let env = from_env(|name| match name {
            "EBB_AGENT_TLS_CERT" => Some("/etc/ebb-agent/chain.pem".into()),
            "EBB_AGENT_TLS_KEY" => Some("/etc/ebb-agent/key.pem".into()),
            _ => None,
        })
        .unwrap();
        let public = Settings {
            listen: Some("0.0.0.0:7070".parse().unwrap()),
            sim: Some("1xA100".into()),
            ..Settings::default()
        };
        let config = resolve(public.clone().overridden_by(env), vec![token()], no_trace).unwrap();
        assert_eq!(
            config.tls,
            TlsMode::Provided {
                cert: "/etc/ebb-agent/chain.pem".into(),
                key: "/etc/ebb-agent/key.pem".into(),
            }
        );
        assert_eq!(config.exposure_warning(), None);
        let only_cert = Settings {
            tls_cert: Some("chain.pem".into()),
            ..public.clone()
        };
        let error = resolve(only_cert, vec![token()], no_trace).unwrap_err();
        assert!(error.to_string().starts_with("tls_key: missing"), "{error}");
        let only_key = Settings {
            tls_key: Some("key.pem".into()),
            ..public.clone()
        };
        let error = resolve(only_key, vec![token()], no_trace).unwrap_err();
        assert!(
            error.to_string().starts_with("tls_cert: missing"),
            "{error}"
        );
        let refused = Settings {
            tls: Some(false),
            tls_cert: Some("chain.pem".into()),
            tls_key: Some("key.pem".into()),
            ..public
        };
        let error = resolve(refused, vec![token()], no_trace).unwrap_err();
        assert!(error.to_string().starts_with("tls: is false"), "{error}");
    }

    #[test]
    fn a_network_address_needs_tokens_and_tls_or_an_explicit_opt_in() {
        let public = Settings {
            listen: Some("0.0.0.0:7070".parse().unwrap()),
            sim: Some("1xA100".into()),
            ..Settings::default()
        };
        let no_tokens = resolve(public.clone(), vec![], no_trace)
            .unwrap_err()
            .to_string();
        assert!(
            no_tokens.contains("no tokens are configured"),
            "{no_tokens}"
        );
        let no_tls = resolve(public.clone(), vec![token()], no_trace)
            .unwrap_err()
            .to_string();
        assert!(no_tls.contains("--tls"), "{no_tls}");
        let tls = resolve(
            Settings {
                tls: Some(true),
                ..public.clone()
            },
            vec![token()],
            no_trace,
        )
        .unwrap();
        assert_eq!(tls.exposure_warning(), None);
        let plain = resolve(
            Settings {
                allow_plain_http: Some(true),
                ..public
            },
            vec![token()],
            no_trace,
        )
        .unwrap();
        assert!(plain.exposure_warning().unwrap().contains("unencrypted"));
    }

    #[test]
    fn spot_gpus_come_from_the_file_env_or_flags_and_bad_ones_are_named() {
        let sim = |spec: &str| Settings {
            sim: Some(spec.into()),
            ..Settings::default()
        };
        let resolved = |settings: Settings| resolve(settings, vec![], no_trace);
        let error = |settings: Settings| resolved(settings).unwrap_err().to_string();
        assert_eq!(resolved(sim("2xH800")).unwrap().spot, SpotOffer::None);
        let file = parse_file("sim = \"4xH800\"\nspot_gpus = [0, 2]\n").unwrap();
        assert_eq!(
            resolved(file.settings.clone()).unwrap().spot,
            SpotOffer::Gpus([0, 2].into())
        );
        let env =
            from_env(|name| (name == "EBB_AGENT_SPOT_GPUS").then(|| " 3, 1".to_string())).unwrap();
        assert_eq!(
            resolved(file.settings.clone().overridden_by(env))
                .unwrap()
                .spot,
            SpotOffer::Gpus([1, 3].into())
        );
        let all = parse_file("sim = \"2xH800\"\nspot = true\n").unwrap();
        assert_eq!(resolved(all.settings).unwrap().spot, SpotOffer::All);
        let env = from_env(|name| (name == "EBB_AGENT_SPOT").then(|| "yes".to_string())).unwrap();
        assert_eq!(env.spot, Some(true));
        let bad = from_env(|name| (name == "EBB_AGENT_SPOT_GPUS").then(|| "0,one".to_string()))
            .unwrap_err();
        assert_eq!(
            bad.to_string(),
            "EBB_AGENT_SPOT_GPUS: `one` is not a GPU index (a list like 0,1)"
        );
        let wrong_type = parse_file("spot_gpus = [-1]\n").unwrap_err();
        assert!(
            wrong_type.contains("spot_gpus") || wrong_type.contains("-1"),
            "{wrong_type}"
        );
        let cases = [
            (
                Settings {
                    spot_gpus: Some(vec![0, 4]),
                    ..sim("4xH800")
                },
                "spot_gpus: this host has no GPU 4: it has 4 (indexes 0 to 3)",
            ),
            (
                Settings {
                    spot_gpus: Some(vec![1, 1]),
                    ..sim("4xH800")
                },
                "spot_gpus: GPU 1 is listed twice",
            ),
            (
                Settings {
                    spot: Some(true),
                    spot_gpus: Some(vec![0]),
                    ..sim("4xH800")
                },
                "spot_gpus: is given with spot = true",
            ),
            (
                Settings {
                    spot: Some(false),
                    spot_gpus: Some(vec![0]),
                    ..sim("4xH800")
                },
                "spot_gpus: is given with spot = false",
            ),
        ];
        for (settings, expected) in cases {
            let error = error(settings);
            assert!(error.starts_with(expected), "{expected} vs {error}");
        }
        // NVML's GPUs are counted at start (`check_spot_gpus`), not here.
        let nvml = resolved(Settings {
            spot_gpus: Some(vec![7]),
            ..Settings::default()
        })
        .unwrap();
        assert_eq!(
            check_spot_gpus(&nvml.spot, 1).unwrap_err().to_string(),
            "spot_gpus: this host has no GPU 7: it has 1 (index 0)"
        );
    }

    #[test]
    fn the_simulators_interruptions_need_spot_gpus_a_rate_within_an_hours_sixty_and_a_notice() {
        let spot_sim = Settings {
            sim: Some("2xH800".into()),
            spot: Some(true),
            ..Settings::default()
        };
        let file = parse_file("sim = \"2xH800\"\nspot = true\nspot_interruptions_per_hour = 1.5\n")
            .unwrap();
        let config = resolve(file.settings.clone(), vec![], no_trace).unwrap();
        assert_eq!(
            config.interruptions,
            Some(Interruptions {
                per_hour: 1.5,
                notice: Duration::from_secs(120),
                seed: crate::sim::DEFAULT_SEED,
            })
        );
        let env = from_env(|name| match name {
            "EBB_AGENT_SPOT_INTERRUPTIONS_PER_HOUR" => Some("60".into()),
            "EBB_AGENT_SPOT_NOTICE_S" => Some("5".into()),
            _ => None,
        })
        .unwrap();
        let config = resolve(file.settings.overridden_by(env), vec![], no_trace).unwrap();
        let process = config.interruptions.unwrap();
        assert_eq!(
            (process.per_hour, process.notice),
            (60.0, Duration::from_secs(5))
        );
        let cases = [
            (
                Settings {
                    spot_interruptions_per_hour: Some(0.0),
                    ..spot_sim.clone()
                },
                "spot_interruptions_per_hour: must be more than 0 and at most 60",
            ),
            (
                Settings {
                    spot_interruptions_per_hour: Some(-2.0),
                    ..spot_sim.clone()
                },
                "spot_interruptions_per_hour: must be more than 0",
            ),
            (
                Settings {
                    spot_interruptions_per_hour: Some(61.0),
                    ..spot_sim.clone()
                },
                "spot_interruptions_per_hour: must be more than 0 and at most 60",
            ),
            (
                Settings {
                    spot_interruptions_per_hour: Some(f64::NAN),
                    ..spot_sim.clone()
                },
                "spot_interruptions_per_hour: must be more than 0",
            ),
            (
                Settings {
                    spot_interruptions_per_hour: Some(1.0),
                    spot_notice_s: Some(0),
                    ..spot_sim.clone()
                },
                "spot_notice_s: must be from 1 to 3600",
            ),
            (
                Settings {
                    spot_interruptions_per_hour: Some(1.0),
                    spot_notice_s: Some(3601),
                    ..spot_sim.clone()
                },
                "spot_notice_s: must be from 1 to 3600",
            ),
            (
                Settings {
                    spot_notice_s: Some(60),
                    ..spot_sim.clone()
                },
                "spot_notice_s: only applies with spot_interruptions_per_hour",
            ),
            (
                Settings {
                    spot_interruptions_per_hour: Some(1.0),
                    spot: None,
                    ..spot_sim.clone()
                },
                "spot_interruptions_per_hour: no GPU is offered as spot",
            ),
            (
                Settings {
                    spot_interruptions_per_hour: Some(1.0),
                    sim: None,
                    ..spot_sim
                },
                "spot_interruptions_per_hour: only applies with `sim`",
            ),
        ];
        for (settings, expected) in cases {
            let error = resolve(settings, vec![], no_trace).unwrap_err().to_string();
            assert!(error.starts_with(expected), "{expected} vs {error}");
        }
        let bad = from_env(|name| (name == "EBB_AGENT_SPOT_NOTICE_S").then(|| "-5".to_string()))
            .unwrap_err();
        assert_eq!(
            bad.to_string(),
            "EBB_AGENT_SPOT_NOTICE_S: `-5` is not a number of seconds"
        );
    }
}
