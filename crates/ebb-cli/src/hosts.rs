//! `ebb hosts ...` and `ebb daemon`: the registry and collection without a window.

use anyhow::Context;
use clap::Subcommand;
use ebb_core::console::{Console, ConsoleOptions, Role, TokenStore};
use ebb_core::election::Leadership;
use ebb_core::registry::HostEntry;
use ebb_telemetry::collect::CollectorConfig;
use ebb_wire::ipc::HostRemoval;
use ebb_wire::ipc::{Health, HostStatus};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, Clone, Subcommand)]
pub enum HostsCommand {
    /// Register a GPU host's agent.
    Add {
        /// The name the host goes by in Ebb (pools, charts, activity), e.g. gpu-07.
        name: String,
        /// The agent's address, e.g. https://gpu-07:7070
        url: String,
        /// The region the host is in, e.g. cn-north (pools rent in regions).
        #[arg(long)]
        region: String,
        /// A file holding the agent's token; Ebb keeps the token in its token store
        /// (--token-store), never in the database.
        #[arg(long, value_name = "FILE")]
        token_file: Option<PathBuf>,
        /// SHA-256 fingerprint of the agent's certificate, to pin.
        #[arg(long, value_name = "SHA256")]
        fingerprint: Option<String>,
        /// A label, KEY=VALUE; repeat for more.
        #[arg(long = "label", value_name = "KEY=VALUE", value_parser = parse_label)]
        labels: Vec<(String, String)>,
    },
    /// Every registered host with its health.
    List,
    /// Try a host's agent and say exactly what fails.
    Test {
        /// The host's registered name.
        name: String,
    },
    /// Keep a registered host's token in this machine's token store: for a console that
    /// shares its database (--database) with the one that added the host.
    Token {
        /// The host's registered name.
        name: String,
        /// A file holding the agent's token.
        #[arg(long, value_name = "FILE")]
        token_file: PathBuf,
    },
    /// Forget a host and its token (refused while pools hold GPUs there, unless --release).
    Remove {
        /// The host's registered name.
        name: String,
        /// Where pools hold GPUs on the host, release them first: each pool takes its GPUs
        /// elsewhere, then the enforcer (the app or `ebb daemon`) removes the host.
        #[arg(long, conflicts_with = "forget")]
        release: bool,
        /// For a host that went silent and was written off (its pools' GPUs replaced
        /// elsewhere), which a release can never finish: record its leases as ended and
        /// forget it. If the machine comes back, its agent still holds those GPUs: stop its
        /// agent or free them there.
        #[arg(long)]
        forget: bool,
    },
}

fn parse_label(text: &str) -> Result<(String, String), String> {
    let (key, value) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}` is not KEY=VALUE"))?;
    Ok((key.trim().to_string(), value.trim().to_string()))
}

/// Runs the command through a console that views (it never collects nor enforces): the
/// same role checks and logging as the app's.
pub async fn run(
    command: HostsCommand,
    data_dir: &Path,
    store: TokenStore,
    json: bool,
) -> anyhow::Result<()> {
    let console = crate::pools::open(data_dir, store, false).await?;
    let result = run_with(&console, command, json).await;
    console.shutdown().await;
    result
}

async fn run_with(console: &Console, command: HostsCommand, json: bool) -> anyhow::Result<()> {
    let registry = console.registry();
    match command {
        HostsCommand::Add {
            name,
            url,
            region,
            token_file,
            fingerprint,
            labels,
        } => {
            let token = token_file
                .map(|path| {
                    std::fs::read_to_string(&path)
                        .with_context(|| format!("--token-file: cannot read {}", path.display()))
                })
                .transpose()?;
            let spec = HostEntry {
                name,
                url,
                region,
                labels: labels.into_iter().collect::<BTreeMap<_, _>>(),
                fingerprint,
                has_token: false,
                draining: false,
            };
            let added = console.add_host(&spec, token.as_deref()).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&added)?);
            } else {
                let where_token = if added.has_token {
                    format!("; its token is in {}", registry.vault().describe())
                } else {
                    String::new()
                };
                println!(
                    "added {} ({}, {}){where_token}",
                    added.name, added.url, added.region
                );
            }
        }
        HostsCommand::List => {
            let statuses = console.health_now().await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&statuses)?);
            } else {
                print!("{}", host_table(&statuses));
            }
        }
        HostsCommand::Token { name, token_file } => {
            let token = std::fs::read_to_string(&token_file)
                .with_context(|| format!("--token-file: cannot read {}", token_file.display()))?;
            if token.trim().is_empty() {
                anyhow::bail!("--token-file: {} is empty", token_file.display());
            }
            let current = registry.get(&name).await?;
            console.update_host(&name, &current, Some(&token)).await?;
            println!("{name}: its token is in {}", registry.vault().describe());
        }
        HostsCommand::Test { name } => {
            let spec = registry.get(&name).await?;
            let token = registry.token(&spec).await?;
            match Console::test_host(&spec, token.as_deref(), CollectorConfig::default()).await {
                Ok(health) => {
                    if json {
                        println!("{}", serde_json::to_string_pretty(&health)?);
                    } else {
                        println!(
                            "{name}: ok — agent {} on host {} ({} backend)",
                            health.agent_version, health.host, health.backend
                        );
                    }
                }
                Err(error) => anyhow::bail!("{name}: {error}"),
            }
        }
        HostsCommand::Remove {
            name, forget: true, ..
        } => {
            let leases = console.forget_host(&name).await?;
            if json {
                println!(
                    "{}",
                    serde_json::json!({ "forgotten": name, "leases": leases })
                );
            } else {
                println!(
                    "forgot {name} and its {}; if it comes back, its agent still holds those GPUs",
                    ebb_wire::rules::counted(
                        leases as u64,
                        "written-off lease",
                        "written-off leases"
                    )
                );
            }
        }
        HostsCommand::Remove { name, release, .. } => {
            let removal = console.remove_host(&name, release).await?;
            if json {
                println!("{}", serde_json::to_string_pretty(&removal)?);
            } else {
                match removal {
                    HostRemoval::Removed => println!("removed {name}"),
                    HostRemoval::Draining { pools } => {
                        let held: Vec<String> = pools
                            .iter()
                            .map(|held| {
                                let gpus = ebb_wire::rules::counted(held.gpus, "GPU", "GPUs");
                                format!("{} ({gpus})", held.pool)
                            })
                            .collect();
                        println!(
                            "{name}: releasing the GPUs held there by {}; each pool takes its GPUs elsewhere, then the enforcer (the app or `ebb daemon`) removes the host",
                            held.join(", ")
                        );
                    }
                }
            }
        }
    }
    Ok(())
}

fn host_table(statuses: &[HostStatus]) -> String {
    use std::fmt::Write as _;
    let mut out = format!(
        "{:<20} {:<12} {:<9} {:>5} {:>6}  {}\n",
        "NAME", "REGION", "HEALTH", "GPUS", "UTIL", "URL / REASON"
    );
    for host in statuses {
        let health = match host.health {
            Health::Online => "online",
            Health::Degraded => "degraded",
            Health::Offline => "offline",
            Health::Unknown => "unknown",
        };
        let util = host
            .mean_util_pct
            .map_or_else(|| "—".to_string(), |pct| format!("{pct:.0}%"));
        let detail = host
            .last_error
            .as_ref()
            .map_or_else(|| host.url.clone(), ToString::to_string);
        let _ = writeln!(
            out,
            "{:<20} {:<12} {:<9} {:>5} {:>6}  {}",
            host.name, host.region, health, host.gpu_count, util, detail
        );
    }
    out
}

/// `ebb daemon`: collects from the registry until stopped. While another process
/// collects from the same data directory, it says so and waits to take over.
pub async fn daemon(
    data_dir: &Path,
    store: TokenStore,
    metrics_listen: Option<std::net::SocketAddr>,
    metrics: Option<String>,
) -> anyhow::Result<()> {
    raise_open_file_limit();
    loop {
        let console = Console::open(ConsoleOptions {
            token_store: store,
            // No window draws live charts here.
            history_points: 1,
            enforcer: crate::pools::enforcer_config()?,
            metrics_listen,
            metrics: metrics.clone(),
            // On Prometheus, only whether each host is up (nothing here draws GPUs).
            fleet_detail: false,
            ..ConsoleOptions::new(data_dir)
        })
        .await?;
        if console.role() == Role::Collector {
            let hosts = console.registry().list().await?.len();
            println!(
                "collecting from {hosts} hosts into {}; readings from {}",
                data_dir.display(),
                console.metrics_source().describe()
            );
            if let Some(addr) = console.metrics_api_addr() {
                println!("custom metrics: POST http://{addr}/v1/metrics");
            }
            let mut snapshots = console.subscribe();
            let mut leadership = console.leadership();
            if let Some(leadership) = &mut leadership {
                say_leadership(&leadership.borrow_and_update());
            }
            let mut last: Vec<(String, Health)> = Vec::new();
            loop {
                tokio::select! {
                    _ = wait_for_shutdown() => break,
                    Some(()) = async {
                        match &mut leadership {
                            Some(watch) => watch.changed().await.ok(),
                            None => std::future::pending().await,
                        }
                    } => {
                        if let Some(watch) = &mut leadership {
                            say_leadership(&watch.borrow_and_update());
                        }
                    }
                    changed = snapshots.changed() => {
                        if changed.is_err() {
                            break;
                        }
                        let now: Vec<(String, Health)> = snapshots
                            .borrow_and_update()
                            .hosts
                            .iter()
                            .map(|host| (host.name.clone(), host.health))
                            .collect();
                        for (name, health) in &now {
                            if !last.contains(&(name.clone(), *health)) {
                                println!("{name}: {health:?}");
                            }
                        }
                        last = now;
                    }
                }
            }
            console.shutdown().await;
            return Ok(());
        }
        println!(
            "another Ebb process already collects from {}; watching as a viewer and taking over when it stops",
            data_dir.display()
        );
        console.shutdown().await;
        drop(console);
        tokio::select! {
            _ = wait_for_shutdown() => return Ok(()),
            _ = tokio::time::sleep(Duration::from_secs(5)) => {}
        }
    }
}

/// One line each time this console starts or stops enforcing (consoles sharing a database
/// elect one enforcer).
fn say_leadership(leadership: &Leadership) {
    match leadership {
        Leadership::Sole => println!("enforcing the pools"),
        Leadership::Leader { term, .. } => {
            println!("enforcing the pools: elected, term {}", term.term);
        }
        Leadership::Follower => println!("viewing: another console enforces the pools"),
    }
}

/// A socket per host: take the hard limit on open files.
fn raise_open_file_limit() {
    #[cfg(unix)]
    {
        use nix::sys::resource::{Resource, getrlimit, setrlimit};
        if let Ok((_, hard)) = getrlimit(Resource::RLIMIT_NOFILE) {
            let _ = setrlimit(Resource::RLIMIT_NOFILE, hard, hard);
        }
    }
}

async fn wait_for_shutdown() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
