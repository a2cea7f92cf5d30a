//! `ebb-agent`: flags and glue over the `ebb_agent` library.

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use ebb_agent::auth::{Auth, Scope, TokenEntry};
use ebb_agent::config::{self, AgentConfig, Backend, Settings, TlsMode};
use ebb_agent::leases::LeaseConfig;
use ebb_agent::leases::store::LeaseDb;
use ebb_agent::{
    AgentParts, Fleet, FleetConfig, GpuProbe, LoadProfile, RunningAgent, SimConfig, Simulator,
};
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Parser)]
#[command(
    name = "ebb-agent",
    version,
    about = "Ebb host agent: serves this host's GPUs and leases over HTTP"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve this host's GPUs (NVML) or simulated ones (--sim).
    Serve(Box<ServeFlags>),
    /// Serve many simulated hosts from one process, each on its own loopback port.
    Fleet(FleetFlags),
    /// Manage access tokens.
    #[command(subcommand)]
    Token(TokenCommand),
    /// Take a lease back from its holder (a spot lease): its workload is sent SIGTERM now
    /// and the lease is released at the end of the notice. Needs an admin token.
    Reclaim(ReclaimFlags),
}

#[derive(Debug, Args)]
struct ReclaimFlags {
    /// The lease's id, as `/v1/leases` shows it.
    lease: String,
    /// How long the holder has: 90s, 2m, 1h (at most 1h).
    #[arg(long, value_parser = ebb_agent::admin::parse_notice)]
    notice: Duration,
    /// The agent's address.
    #[arg(long, default_value = ebb_agent::admin::DEFAULT_URL)]
    url: String,
    /// A file holding an admin-scoped token (`ebb-agent token new --scope admin`).
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// For an https URL: the PEM certificate to trust, e.g. the agent's self-signed
    /// STATE_DIR/tls/cert.pem, or the CA that signed its chain.
    #[arg(long, value_name = "FILE")]
    cert: Option<PathBuf>,
}

/// Flags override `EBB_AGENT_*` variables, which override the config file.
#[derive(Debug, Args)]
struct ServeFlags {
    /// TOML config file (default: /etc/ebb-agent/agent.toml when it exists).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Address to listen on; port 0 takes a free port (printed on start).
    #[arg(long)]
    listen: Option<SocketAddr>,
    /// Simulate GPUs instead of reading them: COUNTxMODEL[,COUNTxMODEL...], e.g. 8xA100.
    #[arg(long)]
    sim: Option<String>,
    /// Simulated load: tidal, idle, steady, diurnal or burst.
    #[arg(long)]
    sim_profile: Option<String>,
    /// Simulated load replayed from a CSV file with header `t_s,util_pct`.
    #[arg(long)]
    sim_trace: Option<PathBuf>,
    /// Path of libnvidia-ml.so, when not the system's.
    #[arg(long)]
    nvml_library: Option<PathBuf>,
    /// Where leases, logs and the TLS certificate are kept.
    #[arg(long)]
    state_dir: Option<PathBuf>,
    /// Serve HTTPS with a self-signed certificate made on first start.
    #[arg(long)]
    tls: bool,
    /// Serve HTTPS with this PEM certificate chain (leaf first, e.g. signed by your CA)
    /// instead of a self-signed one; needs --tls-key.
    #[arg(long, value_name = "FILE")]
    tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert's leaf certificate.
    #[arg(long, value_name = "FILE")]
    tls_key: Option<PathBuf>,
    /// Allow plain HTTP on a non-loopback address.
    #[arg(long)]
    allow_plain_http: bool,
    /// The name this host reports.
    #[arg(long)]
    host_name: Option<String>,
    #[arg(long)]
    sample_interval_ms: Option<u64>,
    /// Seconds between SIGTERM and SIGKILL when a lease's workload is stopped.
    #[arg(long)]
    release_grace_s: Option<u64>,
    /// Hours a released lease, and the idempotency key that granted it, is kept (default
    /// 168, a week); a retry of that key is answered with the lease only within it.
    #[arg(long, value_name = "HOURS")]
    lease_retention_h: Option<u64>,
    /// Offer every GPU as spot: cheaper, and reclaimable by this host's owner with a notice
    /// (`ebb-agent reclaim`).
    #[arg(long, conflicts_with = "spot_gpus")]
    spot: bool,
    /// Offer these GPUs as spot, by index: 0,1.
    #[arg(long, value_name = "INDEXES", value_parser = parse_indexes)]
    spot_gpus: Option<Indexes>,
    /// With --sim: the simulated owner reclaims spot leases at this rate, in expected
    /// reclaims per spot lease-hour (more than 0, at most 60; seeded, the same each run).
    #[arg(long, value_name = "RATE")]
    spot_interruptions_per_hour: Option<f64>,
    /// The notice those reclaims give, in seconds (default 120, at most 3600).
    #[arg(long, value_name = "SECONDS")]
    spot_notice_s: Option<u64>,
}

/// GPU indexes as `--spot-gpus` takes them (a type of its own, so clap takes the whole list).
#[derive(Debug, Clone)]
struct Indexes(Vec<u32>);

fn parse_indexes(text: &str) -> Result<Indexes, String> {
    config::parse_indexes(text).map(Indexes)
}

#[derive(Debug, Args)]
struct FleetFlags {
    #[arg(long, default_value_t = 3)]
    hosts: u32,
    #[arg(long, default_value_t = 8)]
    gpus_per_host: u32,
    /// Host i listens on base-port + i; 0 takes free ports.
    #[arg(long, default_value_t = 7100)]
    base_port: u16,
    #[arg(long, default_value = "127.0.0.1")]
    listen_ip: IpAddr,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long, default_value_t = 1000)]
    sample_interval_ms: u64,
    /// Keep the fleet's leases here (default: in memory).
    #[arg(long)]
    state_dir: Option<PathBuf>,
    /// Hosts offering their GPUs as spot: `all`, or models and host indexes, like H800,3.
    #[arg(long, value_name = "HOSTS", value_parser = ebb_agent::fleet::parse_spot_hosts)]
    spot: Option<SpotHosts>,
    /// The spot hosts' simulated owner reclaims their leases at this rate, in expected
    /// reclaims per spot lease-hour (more than 0, at most 60).
    #[arg(long, value_name = "RATE", requires = "spot")]
    spot_interruptions_per_hour: Option<f64>,
    /// The notice those reclaims give, in seconds (1 to 3600).
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 120,
        requires = "spot_interruptions_per_hour"
    )]
    spot_notice_s: u64,
}

type SpotHosts = Vec<ebb_agent::fleet::SpotHost>;

#[derive(Debug, Subcommand)]
enum TokenCommand {
    /// Make a token, print it once, and store only its hash in the config file.
    New {
        #[arg(long)]
        scope: Scope,
        #[arg(long)]
        config: PathBuf,
        /// A name to tell tokens apart (default: scope and a number).
        #[arg(long)]
        name: Option<String>,
    },
}

const DEFAULT_CONFIG: &str = "/etc/ebb-agent/agent.toml";

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    match Cli::parse().command {
        Command::Serve(flags) => serve(*flags).await,
        Command::Fleet(flags) => fleet(flags).await,
        Command::Token(TokenCommand::New {
            scope,
            config,
            name,
        }) => new_token(scope, &config, name),
        Command::Reclaim(flags) => reclaim(flags).await,
    }
}

/// Exits 2 when the agent refuses (the error names the field), 1 when it cannot be reached.
async fn reclaim(flags: ReclaimFlags) -> anyhow::Result<()> {
    let token = match &flags.token_file {
        Some(path) => Some(
            std::fs::read_to_string(path)
                .with_context(|| format!("--token-file: cannot read {}", path.display()))?
                .trim()
                .to_string(),
        ),
        None => None,
    };
    let trust_pem = match &flags.cert {
        Some(path) => Some(
            std::fs::read(path)
                .with_context(|| format!("--cert: cannot read {}", path.display()))?,
        ),
        None => None,
    };
    let access = ebb_agent::admin::AdminAccess {
        url: flags.url,
        token,
        trust_pem,
    };
    match ebb_agent::admin::reclaim(&access, &flags.lease, flags.notice).await {
        Ok(lease) => {
            println!(
                "{} reclaimed: released at {} (Unix ms); its workload was told to stop",
                lease.id,
                lease.reclaim_deadline_ms.unwrap_or_default()
            );
            Ok(())
        }
        Err(refused @ ebb_agent::admin::AdminError::Refused { .. }) => {
            eprintln!("error: {refused}");
            std::process::exit(2);
        }
        Err(other) => Err(other.into()),
    }
}

async fn serve(flags: ServeFlags) -> anyhow::Result<()> {
    let (file_path, required) = match &flags.config {
        Some(path) => (path.clone(), true),
        None => (PathBuf::from(DEFAULT_CONFIG), false),
    };
    let file = config::read_file(&file_path, required)?;
    let env = config::from_env(|name| std::env::var(name).ok())?;
    let from_flags = Settings {
        listen: flags.listen,
        host_name: flags.host_name,
        sim: flags.sim,
        sim_profile: flags.sim_profile,
        sim_trace: flags.sim_trace,
        nvml_library: flags.nvml_library,
        state_dir: flags.state_dir,
        tls: flags.tls.then_some(true),
        tls_cert: flags.tls_cert,
        tls_key: flags.tls_key,
        allow_plain_http: flags.allow_plain_http.then_some(true),
        sample_interval_ms: flags.sample_interval_ms,
        release_grace_s: flags.release_grace_s,
        lease_retention_h: flags.lease_retention_h,
        spot: flags.spot.then_some(true),
        spot_gpus: flags.spot_gpus.map(|indexes| indexes.0),
        spot_interruptions_per_hour: flags.spot_interruptions_per_hour,
        spot_notice_s: flags.spot_notice_s,
    };
    let settings = file.settings.overridden_by(env).overridden_by(from_flags);
    let config = config::resolve(settings, file.tokens, |path| std::fs::read_to_string(path))?;
    if let Some(warning) = config.exposure_warning() {
        tracing::warn!("{warning}");
    }
    let agent = start_agent(&config).await?;
    // Tests and scripts read this line to learn the address.
    let scheme = if config.tls.is_on() { "https" } else { "http" };
    println!("listening on {scheme}://{}", agent.addr);
    wait_for_shutdown().await;
    agent.stop().await;
    Ok(())
}

async fn start_agent(config: &AgentConfig) -> anyhow::Result<RunningAgent> {
    std::fs::create_dir_all(&config.state_dir).with_context(|| {
        format!(
            "cannot create the state directory {}",
            config.state_dir.display()
        )
    })?;
    let probe: Arc<dyn GpuProbe> = match &config.backend {
        Backend::Simulator { gpus, profile } => Arc::new(Simulator::new(SimConfig {
            host: config.host_name.clone(),
            gpus: gpus.clone(),
            seed: ebb_agent::sim::DEFAULT_SEED,
            profile: profile.clone(),
            startup: std::time::Duration::ZERO,
        })),
        Backend::Nvml { library } => {
            let probe = ebb_agent::nvml::NvmlProbe::open(library.as_deref())
                .context("cannot read GPUs through NVML (use --sim to simulate them)")?;
            // The simulator's count was checked with the config; NVML's is known now.
            config::check_spot_gpus(&config.spot, probe.gpu_count())?;
            Arc::new(probe)
        }
    };
    let auth = Auth::from_entries(&config.tokens).map_err(anyhow::Error::msg)?;
    if auth.is_open() {
        tracing::warn!("no tokens configured: every local request is let in (loopback only)");
    }
    let tls = match &config.tls {
        TlsMode::Off => None,
        TlsMode::SelfSigned => Some(self_signed_tls(config).await?),
        TlsMode::Provided { cert, key } => {
            // Checked before anything listens: a bad file serves nothing.
            let provided = ebb_agent::tls::load_provided(cert, key)
                .context("cannot serve the TLS certificate given by tls_cert and tls_key")?;
            println!(
                "tls: using certificate {} ({} in the chain)",
                cert.display(),
                provided.chain_len
            );
            println!("tls: sha256 fingerprint {}", provided.fingerprint);
            Some(axum_server::tls_rustls::RustlsConfig::from_config(
                provided.server_config,
            ))
        }
    };
    let db = LeaseDb::open(&config.state_dir).await?;
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("cannot listen on {}", config.listen))?;
    let agent = RunningAgent::start(
        AgentParts {
            host: config.host_name.clone(),
            probe,
            sample_interval: config.sample_interval,
            store: db.host(&config.host_name),
            lease_config: LeaseConfig {
                release_grace: config.release_grace,
                log_dir: Some(config.state_dir.join("logs")),
                retention: config.lease_retention,
            },
            auth: Arc::new(auth),
            tls,
            spot: config.spot.clone(),
            interruptions: config.interruptions.clone(),
        },
        listener,
    )
    .await?;
    Ok(agent)
}

/// The self-signed certificate in the state directory, made on first start.
async fn self_signed_tls(
    config: &AgentConfig,
) -> anyhow::Result<axum_server::tls_rustls::RustlsConfig> {
    let mut names = vec![config.host_name.clone(), "localhost".to_string()];
    names.push(config.listen.ip().to_string());
    let files = ebb_agent::tls::load_or_create(&config.state_dir.join("tls"), &names)?;
    let verb = if files.created { "made" } else { "using" };
    println!("tls: {verb} certificate {}", files.cert_path.display());
    println!("tls: sha256 fingerprint {}", files.fingerprint);
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    axum_server::tls_rustls::RustlsConfig::from_pem_file(&files.cert_path, &files.key_path)
        .await
        .context("cannot load the TLS certificate")
}

async fn fleet(flags: FleetFlags) -> anyhow::Result<()> {
    raise_open_file_limit();
    let interruptions = match flags.spot_interruptions_per_hour {
        None => None,
        Some(per_hour) => {
            if !(per_hour > 0.0 && per_hour <= ebb_agent::spot::MAX_INTERRUPTIONS_PER_HOUR) {
                anyhow::bail!(
                    "--spot-interruptions-per-hour: must be more than 0 and at most {} reclaims per spot lease-hour",
                    ebb_agent::spot::MAX_INTERRUPTIONS_PER_HOUR
                );
            }
            if !(1..=3600).contains(&flags.spot_notice_s) {
                anyhow::bail!("--spot-notice-s: must be from 1 to 3600 seconds");
            }
            Some(ebb_agent::spot::Interruptions {
                per_hour,
                notice: Duration::from_secs(flags.spot_notice_s),
                seed: flags.seed,
            })
        }
    };
    let config = FleetConfig {
        hosts: flags.hosts,
        gpus_per_host: flags.gpus_per_host,
        base_port: flags.base_port,
        listen_ip: flags.listen_ip,
        seed: flags.seed,
        profile: LoadProfile::Tidal { period_s: 600.0 },
        sample_interval: Duration::from_millis(flags.sample_interval_ms),
        state_dir: flags.state_dir,
        spot: flags.spot.unwrap_or_default(),
        interruptions,
        ..FleetConfig::default()
    };
    let fleet = Fleet::start(&config)
        .await
        .context("cannot start the virtual fleet")?;
    for host in fleet.hosts() {
        let spot = if host.spot { " spot" } else { "" };
        println!(
            "{} {} {} {}{spot}",
            host.name, host.region, host.model, host.url
        );
    }
    println!("fleet ready: {} hosts", fleet.hosts().len());
    wait_for_shutdown().await;
    fleet.stop().await;
    Ok(())
}

/// Many hosts need many sockets: take the hard limit on open files.
fn raise_open_file_limit() {
    #[cfg(unix)]
    {
        use nix::sys::resource::{Resource, getrlimit, setrlimit};
        if let Ok((_, hard)) = getrlimit(Resource::RLIMIT_NOFILE) {
            let _ = setrlimit(Resource::RLIMIT_NOFILE, hard, hard);
        }
    }
}

fn new_token(scope: Scope, config_path: &Path, name: Option<String>) -> anyhow::Result<()> {
    let existing = config::read_file(config_path, false)?;
    let name = name.unwrap_or_else(|| format!("{}-{}", scope.as_str(), existing.tokens.len() + 1));
    if existing.tokens.iter().any(|token| token.name == name) {
        anyhow::bail!(
            "--name: a token named `{name}` is already in {}",
            config_path.display()
        );
    }
    let (token, sha256) = ebb_agent::auth::new_token().context("no randomness available")?;
    let entry = TokenEntry {
        name,
        scope,
        sha256,
    };
    let block = format!(
        "\n[[tokens]]\nname = {}\nscope = \"{}\"\nsha256 = \"{}\"\n",
        toml_string(&entry.name),
        scope.as_str(),
        entry.sha256
    );
    use std::io::Write;
    if let Some(dir) = config_path
        .parent()
        .filter(|dir| !dir.as_os_str().is_empty())
    {
        std::fs::create_dir_all(dir)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.append(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options
        .open(config_path)
        .and_then(|mut file| file.write_all(block.as_bytes()))
        .with_context(|| format!("cannot write {}", config_path.display()))?;
    eprintln!(
        "stored the hash of token `{}` ({:?} scope) in {}; the token is shown once:",
        entry.name,
        scope,
        config_path.display()
    );
    println!("{token}");
    Ok(())
}

fn toml_string(text: &str) -> String {
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

async fn wait_for_shutdown() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
    tracing::info!("shutting down");
}
