//! What the daemon benches share: a process's CPU and RSS, their knobs, the virtual fleet
//! and its hosts registered.

use ebb_core::db::ConsoleDb;
use ebb_core::registry::{HostEntry, Registry};
use ebb_core::vault::MemoryVault;
use std::io::BufRead;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

/// A process's CPU time in seconds and its RSS in bytes, from `/proc/PID/stat`.
pub fn proc_stat(pid: u32) -> (f64, u64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap()
        .split_whitespace()
        .collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    (ticks / 100.0, fields[21].parse::<u64>().unwrap() * 4096)
}

/// A whole number from the environment, else `default`.
pub fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(default)
}

/// A fleet's host: name, region, URL.
pub type FleetHost = (String, String, String);

/// `ebb-agent fleet` with `hosts` hosts × 8 GPUs on free ports, once it serves them all.
pub fn start_fleet(agent: &Path, hosts: u64) -> (Child, Vec<FleetHost>) {
    let mut fleet = Command::new(agent)
        .args([
            "fleet",
            "--hosts",
            &hosts.to_string(),
            "--gpus-per-host",
            "8",
            // Free ports: fixed ones collide with whatever else listens on this machine.
            "--base-port",
            "0",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut urls = Vec::new();
    for line in std::io::BufReader::new(fleet.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        if line.starts_with("fleet ready") {
            break;
        }
        let parts: Vec<&str> = line.split_whitespace().collect();
        urls.push((
            parts[0].to_string(),
            parts[1].to_string(),
            parts[3].to_string(),
        ));
    }
    assert_eq!(
        urls.len() as u64,
        hosts,
        "the fleet stopped before serving every host"
    );
    (fleet, urls)
}

/// Every host of the fleet in `data_dir`'s registry.
pub async fn register(data_dir: &Path, hosts: &[FleetHost]) -> Registry {
    let registry = Registry::new(
        ConsoleDb::open(data_dir).await.unwrap(),
        Arc::new(MemoryVault::default()),
    );
    for (name, region, url) in hosts {
        let spec = HostEntry {
            name: name.clone(),
            url: url.clone(),
            region: region.clone(),
            labels: Default::default(),
            fingerprint: None,
            has_token: false,
            draining: false,
        };
        registry.add(&spec, None).await.unwrap();
    }
    registry
}
