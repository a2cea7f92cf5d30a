//! `ebb`: the console core without a window. Flags and glue.

use anyhow::Context;
use clap::{Parser, Subcommand};
use ebb_core::client::{AgentClient, ClientConfig};
use std::fmt::Write as _;

#[derive(Debug, Parser)]
#[command(
    name = "ebb",
    version,
    about = "Ebb, the elastic GPU console, on the command line"
)]
struct Cli {
    /// Print JSON instead of a table.
    #[arg(long, global = true)]
    json: bool,
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
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
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
            gpu.memory_total_mib
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
                memory_total_mib: 32_768,
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
    }
}
