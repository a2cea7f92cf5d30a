//! `ebb`: the console core without a window. Flags and glue; [`main`] parses [`Cli`] and
//! hands it to [`run`]. A library so that tests can walk the argument tree
//! (`Cli::command()`), and so that `ebb-desktop` is `ebb` when run under that name (the
//! app's package installs `/usr/bin/ebb` as a link to it, carrying the core once).
//!
//! Exit codes ([`exit_code`]): 0 done; 1 failed (an agent, the data directory, a pool moved
//! by another change first, an audit chain that does not verify); 2 usage or input refused,
//! nothing changed (a field, a file, a value, or the operator's role, naming the role it
//! needs). Every command takes `--json`, whose figures carry their unit in their names
//! (`_fen`, `_gpus`, `_hours`, `_pct`), and `--data-dir`.

mod access;
mod costs;
pub mod errors;
mod hosts;
mod metrics;
mod pool_rules;
mod pools;
mod replay;
mod rules;
mod slurm;
mod suggest;
mod when;

use anyhow::Context;
use clap::{Parser, Subcommand};
use ebb_cost::{OverlayMode, PlanOptions, PoolPlan, Term};
use ebb_telemetry::client::{AgentClient, ClientConfig};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// What `ebb` exits with, as `--help` says it.
pub const EXIT_CODES: &str = "Exit codes: 0 done; 1 failed (an agent, the data directory, the database); \
2 usage or invalid input (a flag, a file, a name or a value refused; nothing was changed).";

/// The heading the flags every subcommand takes stand under, after the subcommand's own.
const GLOBAL: &str = "Global options";

/// `ebb`'s arguments, global flags and every subcommand.
#[derive(Debug, Parser)]
#[command(
    name = "ebb",
    version,
    about = "Ebb, the elastic GPU console, on the command line",
    after_help = EXIT_CODES
)]
pub struct Cli {
    /// Print JSON instead of a table.
    #[arg(long, global = true, help_heading = GLOBAL)]
    json: bool,
    /// Print times in UTC instead of the local time zone (RFC 3339 either way; --json keeps
    /// epoch milliseconds).
    #[arg(long, global = true, help_heading = GLOBAL)]
    utc: bool,
    /// The directory where Ebb keeps everything: hosts, pools, leases' history, activity,
    /// metrics, the active price catalog, host tokens with the file store.
    ///
    /// The desktop app keeps the same things in the same directory, so the two see one
    /// fleet. Defaults to the OS app-data folder, e.g. ~/.local/share/dev.ebb.console.
    #[arg(
        long,
        global = true,
        env = "EBB_DATA_DIR",
        value_name = "DIR",
        help_heading = GLOBAL
    )]
    data_dir: Option<PathBuf>,
    /// Where host tokens go: keychain or file.
    ///
    /// `keychain`: the OS keychain. `file`: a 0600 file in the data directory, for machines
    /// without a keychain.
    #[arg(
        long,
        global = true,
        env = "EBB_TOKEN_STORE",
        default_value = "keychain",
        value_name = "STORE",
        help_heading = GLOBAL
    )]
    token_store: ebb_core::console::TokenStore,
    /// Where the console's state lives: `sqlite` (console.db in the data directory) or a
    /// PostgreSQL URL shared with other consoles (postgres://user@host/ebb).
    ///
    /// Consoles sharing a database see one fleet and elect one enforcer. Without this flag,
    /// the data directory's console.toml (`database = "postgres://..."`) decides, else
    /// console.db.
    #[arg(
        long,
        global = true,
        env = "EBB_DATABASE",
        value_name = "URL",
        help_heading = GLOBAL
    )]
    database: Option<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Ask an agent whether it is up and which API it speaks.
    Health {
        /// The agent's base URL, e.g. http://127.0.0.1:7070
        url: String,
    },
    /// Show every GPU of an agent with its latest readings.
    Gpus {
        /// The agent's base URL, e.g. http://127.0.0.1:7070
        url: String,
    },
    /// The price catalog: import, show, export.
    #[command(subcommand)]
    Catalog(CatalogCommand),
    /// Costs: plan comparison over a demand history, the slider's preview, showback.
    #[command(subcommand)]
    Cost(CostCommand),
    /// The host registry: add, list (with health), test, remove.
    #[command(subcommand)]
    Hosts(hosts::HostsCommand),
    /// Collect from every registered host and enforce every pool (and its rules) without a
    /// window, until stopped.
    Daemon {
        /// Where to serve POST /v1/metrics (custom metrics for the rules, with a token from
        /// `ebb metric token new`); `off` to not serve it.
        #[arg(long, value_name = "ADDR", default_value = ebb_core::console::DEFAULT_METRICS_LISTEN, env = "EBB_METRICS_LISTEN")]
        metrics_listen: String,
        /// Read readings from Prometheus instead of polling the agents:
        /// `prometheus+http://HOST:9090` (as `metrics` in the data directory's console.toml).
        #[arg(long, value_name = "URL", env = "EBB_METRICS")]
        metrics: Option<String>,
    },
    /// Pools: create, list, show, scale (the slider on the command line), delete.
    #[command(subcommand)]
    Pool(pools::PoolCommand),
    /// Every change to the pools and why, newest first.
    Activity {
        /// Only this pool's changes.
        #[arg(long, value_name = "NAME")]
        pool: Option<String>,
        /// At most this many entries.
        #[arg(long, value_name = "N", default_value_t = 50)]
        limit: u32,
        /// Only what the rules did and why (decisions, held changes, rule edits).
        #[arg(long)]
        rules: bool,
    },
    /// Replay a rule file against a demand trace before enabling it: cost, shortfall,
    /// actions, beside the baselines asked for.
    Replay(replay::ReplayArgs),
    /// Rules: lint and suggest rule files; set, show, enable, disable or shadow a pool's.
    #[command(subcommand)]
    Rules(rules::RulesCommand),
    /// Custom metrics for the rules: push a value, make a token for POST /v1/metrics.
    #[command(subcommand)]
    Metric(pool_rules::MetricCommand),
    /// Pools bound to Slurm partitions (slurm.toml): Slurm's ResumeProgram and
    /// SuspendProgram, the partitions' status, the Slurm configuration they imply.
    #[command(subcommand)]
    Slurm(slurm::SlurmCommand),
    /// Who this console acts as: the operator and their role.
    Whoami,
    /// Roles on a shared PostgreSQL database: set them up, grant them.
    #[command(subcommand)]
    Admin(access::AdminCommand),
    /// Teams: their quotas (GPUs per model, spend per month) and pools.
    #[command(subcommand)]
    Team(access::TeamCommand),
    /// The tamper-evident audit log: verify its hash chain, export it.
    #[command(subcommand)]
    Audit(access::AuditCommand),
    /// Shell completions for bash, zsh, fish, elvish or powershell, on standard output
    /// (e.g. `ebb completions bash > /etc/bash_completion.d/ebb`).
    Completions {
        /// The shell.
        #[arg(value_name = "SHELL")]
        shell: clap_complete::Shell,
    },
    /// Man pages: `ebb(1)` and one per subcommand (`ebb-pool(1)`, ...), written into DIR.
    Man {
        /// Where to write them (made when missing).
        #[arg(value_name = "DIR")]
        dir: PathBuf,
    },
    /// A host's stored readings over a past window (what `ebb daemon` or the app collected).
    Metrics {
        /// The host's registered name.
        name: String,
        /// One GPU's index; all GPUs when left out.
        #[arg(long, value_name = "INDEX")]
        gpu: Option<u32>,
        /// How far back: 90s, 5m, 1h, 24h, 7d.
        #[arg(long, value_name = "DURATION", value_parser = metrics::parse_duration)]
        since: std::time::Duration,
        /// util, memory, memory_pct, temperature or power.
        #[arg(long, default_value = "util", value_parser = metrics::parse_metric)]
        metric: ebb_wire::ipc::ChartMetric,
        /// At most this many points per GPU (min/avg/max of each bucket).
        #[arg(long, value_name = "N", default_value_t = 60)]
        points: u32,
    },
}

#[derive(Debug, Subcommand)]
enum CatalogCommand {
    /// Validate a price catalog (TOML) and make it the active one; an invalid file changes
    /// nothing and every problem is listed.
    Import {
        /// The catalog file; the schema is crates/ebb-cost/CATALOG.md.
        file: PathBuf,
    },
    /// Show the active price catalog (the demo one until one is imported).
    Show,
    /// Write the active catalog's TOML to FILE, or to standard output.
    Export {
        /// Where to write it.
        file: Option<PathBuf>,
    },
}

/// The pool a cost is for.
#[derive(Debug, clap::Args)]
struct PoolArgs {
    /// GPU model, as the catalog names it, e.g. A100.
    #[arg(long)]
    model: String,
    /// Region, e.g. cn-north.
    #[arg(long)]
    region: String,
    /// A catalog file to use instead of the active one.
    #[arg(long, value_name = "FILE")]
    catalog: Option<PathBuf>,
    /// The base's subscription term: month or year.
    #[arg(long, default_value = "month")]
    term: Term,
}

#[derive(Debug, Subcommand)]
enum CostCommand {
    /// Compare billing plans over a demand history and recommend the base to subscribe.
    Plan {
        /// CSV `hour,demand` or `minute,demand` (GPUs needed; each hour takes its highest minute).
        #[arg(long, value_name = "FILE")]
        demand: PathBuf,
        #[command(flatten)]
        pool: PoolArgs,
        /// The work tolerates interruption: also evaluate a spot overlay.
        #[arg(long)]
        interruptible: bool,
    },
    /// What a change of the pool from one GPU count to another does to its cost.
    Preview {
        #[command(flatten)]
        pool: PoolArgs,
        /// GPUs held now.
        #[arg(long, value_name = "GPUS")]
        from: u32,
        /// GPUs after the change.
        #[arg(long, value_name = "GPUS")]
        to: u32,
        /// GPUs on subscription.
        #[arg(long, value_name = "GPUS", default_value_t = 0)]
        base: u32,
        /// How GPUs above the base are paid: hour, day, week or spot.
        #[arg(long, default_value = "hour")]
        overlay: OverlayMode,
    },
    /// A month's spend per team and per pool: the overlay, the subscribed base the pools'
    /// GPUs used, and the base left idle.
    ///
    /// A month that is over is billed to its end; this month to now. The pools are today's,
    /// each at its current plan and the active catalog.
    Showback {
        /// The calendar month (UTC) as YYYY-MM, e.g. 2026-11; this month by default.
        #[arg(long, value_name = "YYYY-MM")]
        month: Option<String>,
        /// Print CSV (amounts in yuan, two decimals) instead of a table.
        #[arg(long, conflicts_with = "json")]
        csv: bool,
    },
}

/// The whole `ebb` program: parses the process's arguments, runs them on a one-thread
/// runtime, prints an error in words and returns the exit code ([`exit_code`]). The `ebb`
/// binary's `main`, and `ebb-desktop`'s when it runs as `ebb`.
pub fn main() -> ExitCode {
    // What the core says (a host that cannot be reached, a pass that failed) goes to
    // standard error: warnings by default, `RUST_LOG=info` or `debug` for more.
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("Error: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("Error: {}", errors::words(&error));
            ExitCode::from(exit_code(&error))
        }
    }
}

/// Runs one parsed command line; an error is led by the storage problem behind it, if
/// any (a full disk, `console.db` locked by another process).
pub async fn run(cli: Cli) -> anyhow::Result<()> {
    let data_dir = cli
        .data_dir
        .clone()
        .or_else(|| costs::default_data_dir().ok());
    run_command(cli)
        .await
        .map_err(|error| errors::explain(error, data_dir.as_deref()))
}

async fn run_command(cli: Cli) -> anyhow::Result<()> {
    when::set_utc(cli.utc);
    if let Some(database) = &cli.database {
        ebb_core::db::Location::choose_for_process(database).map_err(anyhow::Error::msg)?;
    }
    let data_dir = || match &cli.data_dir {
        Some(dir) => Ok(dir.clone()),
        None => costs::default_data_dir(),
    };
    match &cli.command {
        Command::Health { url } => {
            let health = AgentClient::new(url, ClientConfig::default())?
                .health()
                .await
                .with_context(|| format!("health check of {url} failed"))?;
            if cli.json {
                println!("{}", serde_json::to_string_pretty(&health)?);
            } else {
                println!(
                    "{} is up: agent {} (API v{}, {} backend)",
                    health.host, health.agent_version, health.api_version, health.backend
                );
            }
        }
        Command::Gpus { url } => {
            let list = AgentClient::new(url, ClientConfig::default())?
                .gpus()
                .await
                .with_context(|| format!("cannot read the GPUs of {url}"))?;
            if cli.json {
                println!("{}", serde_json::to_string_pretty(&list)?);
            } else {
                print!("{}", gpu_table(&list));
            }
        }
        Command::Catalog(command) => catalog(command, &data_dir()?, cli.json)?,
        Command::Cost(CostCommand::Showback { month, csv }) => {
            let console = pools::open(&data_dir()?, cli.token_store, false).await?;
            let showback = console.showback(month.as_deref()).await;
            console.shutdown().await;
            let showback = showback?;
            if *csv {
                print!("{}", ebb_core::console_showback::showback_csv(&showback));
            } else if cli.json {
                println!("{}", serde_json::to_string_pretty(&showback)?);
            } else {
                print!("{}", costs::showback_text(&showback));
            }
        }
        Command::Cost(command) => cost(command, &data_dir()?, cli.json)?,
        Command::Hosts(command) => {
            hosts::run(command.clone(), &data_dir()?, cli.token_store, cli.json).await?;
        }
        Command::Daemon {
            metrics_listen,
            metrics,
        } => {
            let listen = match metrics_listen.trim() {
                "off" => None,
                text => Some(text.parse().map_err(|_| {
                    anyhow::anyhow!("--metrics-listen: `{text}` is not an address like 127.0.0.1:7171 (or `off`)")
                })?),
            };
            hosts::daemon(&data_dir()?, cli.token_store, listen, metrics.clone()).await?;
        }
        Command::Pool(command) => {
            pools::run(command.clone(), &data_dir()?, cli.token_store, cli.json).await?;
        }
        Command::Slurm(command) => {
            slurm::run(command.clone(), &data_dir()?, cli.token_store, cli.json).await?;
        }
        Command::Activity { pool, limit, rules } => {
            pools::activity(
                &data_dir()?,
                cli.token_store,
                pool.as_deref(),
                (*limit).clamp(1, 10_000),
                *rules,
                cli.json,
            )
            .await?;
        }
        Command::Completions { shell } => {
            use clap::CommandFactory;
            let mut command = Cli::command();
            let mut script = Vec::new();
            clap_complete::generate(*shell, &mut command, "ebb", &mut script);
            // A reader that stops early (`| head`) is not an error.
            match std::io::Write::write_all(&mut std::io::stdout(), &script) {
                Err(error) if error.kind() != std::io::ErrorKind::BrokenPipe => {
                    return Err(error.into());
                }
                _ => {}
            }
        }
        Command::Man { dir } => {
            let written = man_pages(dir)?;
            if !cli.json {
                println!("{written} man pages in {}", dir.display());
            }
        }
        Command::Whoami => access::whoami(&data_dir()?, cli.token_store, cli.json).await?,
        Command::Admin(command) => {
            access::admin(command, &data_dir()?, cli.token_store, cli.json).await?
        }
        Command::Team(command) => {
            access::team(command, &data_dir()?, cli.token_store, cli.json).await?;
        }
        Command::Audit(command) => {
            if !access::audit(command, &data_dir()?, cli.token_store, cli.json).await? {
                std::process::exit(1);
            }
        }
        Command::Metric(command) => {
            pool_rules::metric(command, &data_dir()?, cli.token_store, cli.json).await?;
        }
        Command::Replay(args) => replay::run(args, &data_dir()?, cli.json)?,
        Command::Rules(rules::RulesCommand::Suggest(args)) => {
            suggest::run(args, &data_dir()?, cli.json)?;
        }
        Command::Rules(command) if command.on_pool().is_some() => {
            let on_pool = command.on_pool().expect("checked");
            let code = pool_rules::run(&on_pool, &data_dir()?, cli.token_store, cli.json).await?;
            if code != 0 {
                std::process::exit(code);
            }
        }
        Command::Rules(command) => {
            let code = rules::run(command, &data_dir()?, cli.json).await?;
            if code != 0 {
                std::process::exit(code);
            }
        }
        Command::Metrics {
            name,
            gpu,
            since,
            metric,
            points,
        } => metrics::run(&data_dir()?, name, *gpu, *since, *metric, *points, cli.json).await?,
    }
    Ok(())
}

/// Writes `ebb.1` and a page per subcommand (`ebb-pool.1`, `ebb-pool-scale.1`, ...) into
/// `dir`; answers how many.
pub fn man_pages(dir: &Path) -> anyhow::Result<usize> {
    use clap::CommandFactory;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot make {}", dir.display()))?;
    fn write(
        command: clap::Command,
        name: String,
        dir: &Path,
        count: &mut usize,
    ) -> anyhow::Result<()> {
        let command = command.name(name.clone());
        let mut page = Vec::new();
        clap_mangen::Man::new(command.clone()).render(&mut page)?;
        let path = dir.join(format!("{name}.1"));
        std::fs::write(&path, page).with_context(|| format!("cannot write {}", path.display()))?;
        *count += 1;
        for sub in command.get_subcommands() {
            if sub.is_hide_set() || sub.get_name() == "help" {
                continue;
            }
            write(
                sub.clone(),
                format!("{name}-{}", sub.get_name()),
                dir,
                count,
            )?;
        }
        Ok(())
    }
    let mut count = 0;
    let mut command = Cli::command();
    command.build();
    write(command, "ebb".into(), dir, &mut count)?;
    Ok(count)
}

/// Whether the operator's role refused it: the console's check, or the database's own
/// refusal (grants, row-level security), or `ebb admin`'s.
/// The exit code for an error: 2 for input refused (a field, a file, a value, the
/// operator's role), 1 else, read from the kind every front reports it as.
pub fn exit_code(error: &anyhow::Error) -> u8 {
    let refused = ebb_core::errors::report_in_chain(error.chain())
        .is_some_and(|report| report.kind.refuses_input());
    if refused { 2 } else { 1 }
}

fn catalog(command: &CatalogCommand, data_dir: &Path, json: bool) -> anyhow::Result<()> {
    match command {
        CatalogCommand::Import { file } => {
            let (validated, target) = costs::import(data_dir, file)?;
            if json {
                let value = serde_json::json!({
                    "imported": file,
                    "path": target,
                    "entries": validated.catalog.entries.len(),
                    "warnings": validated.warnings,
                });
                println!("{}", serde_json::to_string_pretty(&value)?);
            } else {
                println!(
                    "Imported {} prices from {} into {}",
                    validated.catalog.entries.len(),
                    file.display(),
                    target.display()
                );
                print!("{}", costs::warnings_text(&validated.warnings));
            }
        }
        CatalogCommand::Show => {
            let active = costs::ActiveCatalog::load(data_dir, None)?;
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&costs::catalog_json(&active))?
                );
            } else {
                print!("{}", costs::catalog_table(&active));
            }
        }
        CatalogCommand::Export { file } => {
            let active = costs::ActiveCatalog::load(data_dir, None)?;
            match file {
                Some(file) => std::fs::write(file, &active.text)
                    .with_context(|| format!("cannot write {}", file.display()))?,
                None => print!("{}", active.text),
            }
        }
    }
    Ok(())
}

fn cost(command: &CostCommand, data_dir: &Path, json: bool) -> anyhow::Result<()> {
    match command {
        CostCommand::Plan {
            demand,
            pool,
            interruptible,
        } => {
            let active = costs::ActiveCatalog::load(data_dir, pool.catalog.as_deref())?;
            let entry = active.catalog.find(&pool.model, &pool.region)?;
            let series = costs::read_demand(demand)?;
            let options = PlanOptions {
                term: pool.term,
                interruptible: *interruptible,
            };
            // The Costs view's comparison, without its chart.
            let view = ebb_core::console_costs::plan_view(&active, entry, &series, &options, None)?;
            if json {
                let value = costs::plan_json(entry, &active, demand, &series, &view);
                println!("{}", serde_json::to_string_pretty(&value)?);
            } else {
                print!("{}", costs::plan_text(&active, &view));
            }
        }
        CostCommand::Preview {
            pool,
            from,
            to,
            base,
            overlay,
        } => {
            let active = costs::ActiveCatalog::load(data_dir, pool.catalog.as_deref())?;
            let entry = active.catalog.find(&pool.model, &pool.region)?;
            let plan = PoolPlan {
                base_gpus: *base,
                term: pool.term,
                overlay: *overlay,
            };
            let preview = ebb_cost::preview(entry, &plan, *from, *to)?;
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&costs::preview_json(entry, &active, &preview))?
                );
            } else {
                print!("{}", costs::preview_text(entry, &active, &preview));
            }
        }
        // Needs the console: `run_command` answers it.
        CostCommand::Showback { .. } => unreachable!("showback opens the console"),
    }
    Ok(())
}

fn gpu_table(list: &ebb_wire::agent::GpuList) -> String {
    fn or_dash<T: std::fmt::Display>(value: Option<T>, unit: &str) -> String {
        value.map_or_else(|| "—".to_string(), |value| format!("{value}{unit}"))
    }
    let mut out = format!(
        "{:<5} {:<24} {:>7} {:>17} {:>6} {:>7}\n",
        "GPU", "MODEL", "UTIL", "MEMORY", "TEMP", "POWER"
    );
    for gpu in &list.gpus {
        let memory = format!(
            "{}/{} MiB",
            or_dash(gpu.memory_used_mib, ""),
            or_dash(gpu.memory_total_mib, "")
        );
        let _ = writeln!(
            out,
            "{:<5} {:<24} {:>7} {:>17} {:>6} {:>7}",
            gpu.index,
            gpu.model,
            or_dash(gpu.gpu_util_pct.map(|pct| format!("{pct:.0}")), "%"),
            memory,
            or_dash(gpu.temperature_c, "°C"),
            or_dash(gpu.power_draw_w, " W"),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ebb_wire::agent::{Gpu, GpuList};

    #[test]
    fn missing_readings_show_as_a_dash_not_zero() {
        let list = GpuList {
            host: "h".into(),
            sampled_at_ms: 0,
            gpus: vec![Gpu {
                index: 3,
                uuid: "GPU-x".into(),
                model: "Tesla V100-SXM2-32GB".into(),
                memory_total_mib: Some(32_768),
                memory_used_mib: Some(1024),
                gpu_util_pct: Some(57.4),
                memory_util_pct: None,
                temperature_c: None,
                power_draw_w: None,
                power_limit_w: None,
                ..Default::default()
            }],
        };
        let table = gpu_table(&list);
        let row = table.lines().nth(1).unwrap();
        assert!(row.contains("57%"), "{row}");
        assert!(row.contains("1024/32768 MiB"), "{row}");
        assert!(row.contains('—'), "{row}");
        assert!(!row.contains(" 0 W"), "{row}");
        let unread = GpuList {
            gpus: vec![Gpu {
                memory_total_mib: None,
                ..list.gpus[0].clone()
            }],
            ..list
        };
        let table = gpu_table(&unread);
        let row = table.lines().nth(1).unwrap();
        assert!(row.contains("1024/— MiB"), "{row}");
    }
}
