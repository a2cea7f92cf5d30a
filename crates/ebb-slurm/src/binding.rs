//! Which Slurm partition each Ebb pool is bound to, and which agent GPUs each Slurm node
//! is: the console's `slurm.toml`, read and checked.
//!
//! A Slurm node is a fixed group of GPUs on one agent host: node `k` of a host entry takes
//! the GPU indexes `first_gpu + k * gpus_per_node` up to (not including)
//! `first_gpu + (k + 1) * gpus_per_node`. Every error names its field
//! (`partition[1].hosts[0].nodes`, 0-based), so the operator knows what to fix.

use std::collections::HashMap;
use std::ops::RangeInclusive;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::drain::DisruptionBudget;
use crate::hostlist;

/// The argv a node's lease workload runs when `slurmd` is not given. `-b` reports the node
/// as booted when slurmd starts: the host did not reboot, but to Slurm's power saving the
/// node has just come up (without it a resumed node is not taken as resumed).
pub const DEFAULT_SLURMD: [&str; 5] = ["/usr/sbin/slurmd", "-D", "-b", "-N", "{node}"];

/// Why `slurm.toml` was refused: the field (`partition[0].gpus_per_node`, or `slurm.toml`
/// for a syntax error) and the problem.
#[derive(Debug, Clone, PartialEq, Eq, Error, Serialize, Deserialize)]
#[error("{field}: {problem}")]
pub struct BindingError {
    /// Where: `partition[1].hosts[0].nodes` (0-based), or `slurm.toml`.
    pub field: String,
    /// What is wrong, in English.
    pub problem: String,
}

/// Who decides when a bound partition's nodes come and go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Ebb's rules decide, on the queue's metrics.
    Ebb,
    /// Slurm's power saving decides, through `ebb slurm resume|suspend`.
    Slurm,
}

/// A partition's disruption budget as written: GPUs given back per window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BudgetSpec {
    /// At most this many GPUs per window.
    pub gpus: Option<u32>,
    /// At most this percentage (0 to 100) of the pool's GPUs per window.
    pub percent: Option<u32>,
    /// The window the limits count over, at least 1.
    pub window_minutes: u32,
}

/// One Slurm node: a fixed group of GPUs on one agent host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeSlot {
    /// The Slurm node name.
    pub name: String,
    /// The Ebb host (the agent's registry name).
    pub host: String,
    /// The agent's GPU indexes, ascending.
    pub gpu_indexes: Vec<u32>,
    /// Where slurmctld reaches its slurmd (slurm.conf's `NodeHostname`).
    pub slurmd_host: String,
    /// slurmd's `Port`; `None` for Slurm's default.
    pub port: Option<u16>,
}

/// One partition bound to one pool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionBinding {
    /// The Slurm partition.
    pub name: String,
    /// The Ebb pool id.
    pub pool: String,
    /// Who decides when its nodes come and go.
    pub mode: Mode,
    /// The GPUs of every node, 1 to 64.
    pub gpus_per_node: u32,
    /// The argv the agent runs as a node's lease workload; `{node}` stands for the node.
    /// A file always names one; empty (set in code, for the demo's simulated partition)
    /// runs none.
    pub slurmd: Vec<String>,
    /// How long a drain may keep paid GPUs before its jobs are requeued; 0 for ever.
    pub drain_max_minutes: u32,
    /// The fewest nodes the pool keeps.
    pub min_nodes: u32,
    /// The most nodes the pool takes, at most the partition's node count.
    pub max_nodes: u32,
    /// For the generated slurm.conf lines.
    pub cpus_per_node: u32,
    /// For the generated slurm.conf lines.
    pub real_memory_mb: u32,
    /// `None` for no limit.
    pub budget: Option<BudgetSpec>,
    /// In file order: host entries in order, each entry's nodes in hostlist order.
    pub nodes: Vec<NodeSlot>,
}

impl PartitionBinding {
    /// The argv that runs `node`'s slurmd: `{node}` replaced in every element.
    pub fn slurmd_argv(&self, node: &str) -> Vec<String> {
        self.slurmd
            .iter()
            .map(|arg| arg.replace("{node}", node))
            .collect()
    }

    /// The node on `host` whose GPUs are exactly `gpu_indexes`, in any order.
    pub fn node_at(&self, host: &str, gpu_indexes: &[u32]) -> Option<&NodeSlot> {
        let mut wanted = gpu_indexes.to_vec();
        wanted.sort_unstable();
        self.nodes
            .iter()
            .find(|node| node.host == host && node.gpu_indexes == wanted)
    }

    /// The node names, in file order.
    pub fn node_names(&self) -> Vec<String> {
        self.nodes.iter().map(|node| node.name.clone()).collect()
    }

    /// The nodes as one compressed hostlist (`gpu[1-4]`).
    pub fn hostlist(&self) -> String {
        hostlist::compress(&self.node_names())
    }

    /// The disruption budget for one scale-in decision. Without a budget the counts are
    /// unlimited; a quiet window the caller found still holds either way.
    pub fn budget(&self, released_in_window: u32, pool_gpus: u32, quiet: bool) -> DisruptionBudget {
        let spec = self.budget;
        DisruptionBudget {
            max_gpus_per_window: spec.and_then(|spec| spec.gpus),
            max_pct_per_window: spec.and_then(|spec| spec.percent),
            window_ms: spec.map_or(0, |spec| i64::from(spec.window_minutes) * 60_000),
            released_in_window,
            pool_gpus,
            quiet,
        }
    }

    /// The drain's cost cap in milliseconds; `None` when drains may wait for ever.
    pub fn drain_cap_ms(&self) -> Option<i64> {
        (self.drain_max_minutes > 0).then(|| i64::from(self.drain_max_minutes) * 60_000)
    }
}

/// Every partition bound to a pool.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Binding {
    /// In file order.
    pub partitions: Vec<PartitionBinding>,
}

impl Binding {
    /// No partition bound (no `slurm.toml`).
    pub fn empty() -> Binding {
        Binding::default()
    }

    /// Reads and checks `slurm.toml`; the first problem found is the error.
    pub fn parse(text: &str) -> Result<Binding, BindingError> {
        let file: RawFile = toml::from_str(text).map_err(|error| {
            let message = error.message().trim().to_string();
            let problem = match error.span() {
                Some(span) => format!("line {}: {message}", line_of(text, span.start)),
                None => message,
            };
            fail("slurm.toml", problem)
        })?;
        let mut seen = Seen::default();
        let mut partitions = Vec::new();
        for (i, raw) in file.partition.into_iter().enumerate() {
            partitions.push(raw.check(&format!("partition[{i}]"), &mut seen)?);
        }
        Ok(Binding { partitions })
    }

    /// The partition `pool` is bound to.
    pub fn of_pool(&self, pool: &str) -> Option<&PartitionBinding> {
        self.partitions.iter().find(|p| p.pool == pool)
    }

    /// The partition named `name`.
    pub fn of_partition(&self, name: &str) -> Option<&PartitionBinding> {
        self.partitions.iter().find(|p| p.name == name)
    }

    /// The node named `name`, with its partition.
    pub fn node(&self, name: &str) -> Option<(&PartitionBinding, &NodeSlot)> {
        self.partitions.iter().find_map(|partition| {
            let node = partition.nodes.iter().find(|node| node.name == name)?;
            Some((partition, node))
        })
    }
}

fn fail(field: impl Into<String>, problem: impl Into<String>) -> BindingError {
    BindingError {
        field: field.into(),
        problem: problem.into(),
    }
}

/// `Ok` when `holds`, else the problem at `field`.
fn ensure(holds: bool, field: &str, problem: impl FnOnce() -> String) -> Result<(), BindingError> {
    if holds {
        Ok(())
    } else {
        Err(fail(field, problem()))
    }
}

/// The 1-based line of byte `at`.
fn line_of(text: &str, at: usize) -> usize {
    1 + text.as_bytes()[..at.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
}

const ANY: RangeInclusive<i64> = 0..=u32::MAX as i64;
const POSITIVE: RangeInclusive<i64> = 1..=u32::MAX as i64;

/// A whole number in `range`, or `default` when absent (`None`: required).
fn number(
    value: Option<i64>,
    field: &str,
    default: Option<u32>,
    range: RangeInclusive<i64>,
) -> Result<u32, BindingError> {
    let Some(value) = value else {
        return default.ok_or_else(|| fail(field, "required"));
    };
    let (low, high) = (range.start(), range.end());
    ensure(range.contains(&value), field, || {
        if *high == i64::from(u32::MAX) {
            format!("must be at least {low}, not {value}")
        } else {
            format!("must be {low} to {high}, not {value}")
        }
    })?;
    Ok(value as u32)
}

/// A number in `range` when present.
fn optional(
    value: Option<i64>,
    field: &str,
    range: RangeInclusive<i64>,
) -> Result<Option<u32>, BindingError> {
    value
        .map(|value| number(Some(value), field, None, range))
        .transpose()
}

/// A required name: present, nonempty, without whitespace or commas.
fn name(value: Option<String>, field: &str) -> Result<String, BindingError> {
    let value = value.ok_or_else(|| fail(field, "required"))?;
    ensure(!value.is_empty(), field, || "must not be empty".into())?;
    let clean = !value.contains(|c: char| c.is_whitespace() || c == ',');
    ensure(clean, field, || {
        format!("{value:?} has whitespace or a comma")
    })?;
    Ok(value)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    partition: Vec<RawPartition>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPartition {
    name: Option<String>,
    pool: Option<String>,
    mode: Option<String>,
    gpus_per_node: Option<i64>,
    slurmd: Option<Vec<String>>,
    drain_max_minutes: Option<i64>,
    min_nodes: Option<i64>,
    max_nodes: Option<i64>,
    cpus_per_node: Option<i64>,
    real_memory_mb: Option<i64>,
    budget: Option<RawBudget>,
    #[serde(default)]
    hosts: Vec<RawHost>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBudget {
    gpus: Option<i64>,
    percent: Option<i64>,
    window_minutes: Option<i64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHost {
    host: Option<String>,
    nodes: Option<String>,
    first_gpu: Option<i64>,
    slurmd_host: Option<String>,
    port: Option<i64>,
}

/// What earlier partitions and host entries took, and who took it.
#[derive(Default)]
struct Seen {
    /// Partition name → its field (`partition[0]`).
    partitions: HashMap<String, String>,
    /// Pool → its partition.
    pools: HashMap<String, String>,
    /// Node name → its partition.
    nodes: HashMap<String, String>,
    /// Per Ebb host: GPU ranges `[start, end)` and the entry's field.
    gpus: HashMap<String, Vec<(u64, u64, String)>>,
    /// Per slurmd host: port ranges `[first, last]` and the entry's field.
    ports: HashMap<String, Vec<(u32, u32, String)>>,
}

impl RawPartition {
    fn check(self, at: &str, seen: &mut Seen) -> Result<PartitionBinding, BindingError> {
        let field = |key: &str| format!("{at}.{key}");
        let num = |value, key, default, range| number(value, &field(key), default, range);
        let name = name(self.name, &field("name"))?;
        let other = seen.partitions.insert(name.clone(), at.to_string());
        ensure(other.is_none(), &field("name"), || {
            format!("partition {name} is also {}", other.unwrap_or_default())
        })?;
        let pool = self.pool.ok_or_else(|| fail(field("pool"), "required"))?;
        ensure(!pool.is_empty(), &field("pool"), || {
            "must not be empty".into()
        })?;
        let other = seen.pools.insert(pool.clone(), name.clone());
        ensure(other.is_none(), &field("pool"), || {
            format!(
                "pool {pool} is already bound to partition {}",
                other.unwrap_or_default()
            )
        })?;
        let mode = match self.mode.as_deref() {
            Some("ebb") => Mode::Ebb,
            Some("slurm") => Mode::Slurm,
            None => return Err(fail(field("mode"), "required")),
            Some(other) => {
                let problem = format!("{other:?} is neither \"ebb\" nor \"slurm\"");
                return Err(fail(field("mode"), problem));
            }
        };
        let gpus_per_node = num(self.gpus_per_node, "gpus_per_node", None, 1..=64)?;
        let slurmd = self
            .slurmd
            .unwrap_or_else(|| DEFAULT_SLURMD.map(String::from).to_vec());
        let names_node = slurmd.iter().any(|arg| arg.contains("{node}"));
        ensure(names_node, &field("slurmd"), || {
            "no element contains {node}".into()
        })?;
        let drain_max_minutes = num(self.drain_max_minutes, "drain_max_minutes", Some(60), ANY)?;
        let cpus_per_node = num(self.cpus_per_node, "cpus_per_node", Some(1), POSITIVE)?;
        let real_memory_mb = num(self.real_memory_mb, "real_memory_mb", Some(1000), POSITIVE)?;
        let budget = match self.budget {
            None => None,
            Some(raw) => raw.check(&field("budget"))?,
        };
        ensure(!self.hosts.is_empty(), &field("hosts"), || {
            "at least one host entry is required".into()
        })?;
        let mut nodes = Vec::new();
        for (j, host) in self.hosts.into_iter().enumerate() {
            nodes.extend(host.check(&format!("{at}.hosts[{j}]"), &name, gpus_per_node, seen)?);
        }
        let count = nodes.len() as u32;
        let min_nodes = num(self.min_nodes, "min_nodes", Some(0), ANY)?;
        let max_nodes = num(self.max_nodes, "max_nodes", Some(count), ANY)?;
        ensure(max_nodes <= count, &field("max_nodes"), || {
            format!("{max_nodes} is more than the partition's {count} nodes")
        })?;
        ensure(min_nodes <= max_nodes, &field("min_nodes"), || {
            format!("{min_nodes} is more than max_nodes ({max_nodes})")
        })?;
        Ok(PartitionBinding {
            name,
            pool,
            mode,
            gpus_per_node,
            slurmd,
            drain_max_minutes,
            min_nodes,
            max_nodes,
            cpus_per_node,
            real_memory_mb,
            budget,
            nodes,
        })
    }
}

impl RawBudget {
    /// `None` when it limits nothing (neither `gpus` nor `percent`).
    fn check(self, at: &str) -> Result<Option<BudgetSpec>, BindingError> {
        let field = |key: &str| format!("{at}.{key}");
        let gpus = optional(self.gpus, &field("gpus"), ANY)?;
        let percent = optional(self.percent, &field("percent"), 0..=100)?;
        let limits = gpus.is_some() || percent.is_some();
        let default = (!limits).then_some(1);
        let window_minutes = number(
            self.window_minutes,
            &field("window_minutes"),
            default,
            POSITIVE,
        )?;
        Ok(limits.then_some(BudgetSpec {
            gpus,
            percent,
            window_minutes,
        }))
    }
}

impl RawHost {
    fn check(
        self,
        at: &str,
        partition: &str,
        gpus_per_node: u32,
        seen: &mut Seen,
    ) -> Result<Vec<NodeSlot>, BindingError> {
        let field = |key: &str| format!("{at}.{key}");
        let host = name(self.host, &field("host"))?;
        let spec = self.nodes.ok_or_else(|| fail(field("nodes"), "required"))?;
        let names = hostlist::expand(&spec).map_err(|e| fail(field("nodes"), e.to_string()))?;
        ensure(!names.is_empty(), &field("nodes"), || {
            "names no node".into()
        })?;
        for node in &names {
            let clean = node
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
            ensure(clean, &field("nodes"), || {
                format!("node {node:?} has a character other than letters, digits, '-', '_', '.'")
            })?;
            let other = seen.nodes.insert(node.clone(), partition.to_string());
            ensure(other.is_none(), &field("nodes"), || {
                format!(
                    "node {node} is also in partition {}",
                    other.unwrap_or_default()
                )
            })?;
        }
        let count = names.len() as u32;
        let first_gpu = number(self.first_gpu, &field("first_gpu"), Some(0), ANY)?;
        let start = u64::from(first_gpu);
        let end = start + u64::from(count * gpus_per_node);
        ensure(end <= u64::from(u32::MAX), &field("first_gpu"), || {
            format!("GPU indexes up to {} are past {}", end - 1, u32::MAX - 1)
        })?;
        let taken = seen.gpus.entry(host.clone()).or_default();
        let other = taken.iter().find(|(s, e, _)| start < *e && *s < end);
        ensure(other.is_none(), &field("first_gpu"), || {
            let other = &other.unwrap().2;
            format!(
                "GPUs {start}-{} of host {host} are also in {other}",
                end - 1
            )
        })?;
        taken.push((start, end, at.to_string()));
        let slurmd_host = match self.slurmd_host {
            None => host.clone(),
            Some(value) => name(Some(value), &field("slurmd_host"))?,
        };
        ensure(self.port.is_some() || count == 1, &field("port"), || {
            format!("required for {count} nodes on one host: each slurmd needs its own port")
        })?;
        let port = optional(self.port, &field("port"), 1..=65_535)?;
        if let Some(first) = port {
            let last = first + count - 1;
            ensure(last <= u32::from(u16::MAX), &field("port"), || {
                format!("{count} nodes from port {first} pass 65535")
            })?;
            let taken = seen.ports.entry(slurmd_host.clone()).or_default();
            let other = taken.iter().find(|(s, e, _)| first <= *e && *s <= last);
            ensure(other.is_none(), &field("port"), || {
                let other = &other.unwrap().2;
                format!("ports {first}-{last} on {slurmd_host} are also used by {other}")
            })?;
            taken.push((first, last, at.to_string()));
        }
        let slot = |(k, name): (usize, String)| {
            let from = first_gpu + k as u32 * gpus_per_node;
            NodeSlot {
                name,
                host: host.clone(),
                gpu_indexes: (from..from + gpus_per_node).collect(),
                slurmd_host: slurmd_host.clone(),
                port: port.map(|port| (port + k as u32) as u16),
            }
        };
        Ok(names.into_iter().enumerate().map(slot).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FULL: &str = r#"
[[partition]]
name = "gpu"
pool = "train"
mode = "ebb"
gpus_per_node = 2
slurmd = ["/opt/slurm/sbin/slurmd", "-D", "-N", "{node}", "-f", "/etc/slurm/{node}.conf"]
drain_max_minutes = 30
min_nodes = 1
max_nodes = 3
cpus_per_node = 2
real_memory_mb = 4000

[partition.budget]
gpus = 2
percent = 25
window_minutes = 10

[[partition.hosts]]
host = "gpu-a1"
nodes = "gpu[1-2]"
slurmd_host = "localhost"
port = 17001

[[partition.hosts]]
host = "gpu-a2"
nodes = "gpu3"
first_gpu = 4

[[partition]]
name = "burst"
pool = "infer"
mode = "slurm"
gpus_per_node = 1

[[partition.hosts]]
host = "gpu-a1"
nodes = "burst[1-2]"
first_gpu = 4
port = 17101
"#;

    fn full() -> Binding {
        Binding::parse(FULL).unwrap()
    }

    #[test]
    fn parses_the_full_example() {
        let binding = full();
        let gpu = binding.of_pool("train").unwrap();
        assert_eq!((gpu.name.as_str(), gpu.mode), ("gpu", Mode::Ebb));
        assert_eq!((gpu.min_nodes, gpu.max_nodes), (1, 3));
        assert_eq!((gpu.cpus_per_node, gpu.real_memory_mb), (2, 4000));
        let budget = BudgetSpec {
            gpus: Some(2),
            percent: Some(25),
            window_minutes: 10,
        };
        assert_eq!(gpu.budget, Some(budget));
        let node = NodeSlot {
            name: "gpu2".into(),
            host: "gpu-a1".into(),
            gpu_indexes: vec![2, 3],
            slurmd_host: "localhost".into(),
            port: Some(17002),
        };
        assert_eq!(gpu.nodes[1], node);
        assert_eq!(gpu.nodes[2].gpu_indexes, [4, 5]);
        assert_eq!(
            (gpu.nodes[2].slurmd_host.as_str(), gpu.nodes[2].port),
            ("gpu-a2", None)
        );
        assert_eq!(gpu.hostlist(), "gpu[1-3]");
        assert_eq!(gpu.drain_cap_ms(), Some(30 * 60_000));
        let budget = gpu.budget(1, 8, false);
        assert_eq!(
            (budget.window_ms, budget.allowance_gpus()),
            (600_000, Some(1))
        );

        let burst = binding.of_partition("burst").unwrap();
        assert_eq!(burst.mode, Mode::Slurm);
        assert_eq!(burst.slurmd, DEFAULT_SLURMD);
        assert_eq!((burst.drain_max_minutes, burst.max_nodes), (60, 2));
        assert_eq!((burst.cpus_per_node, burst.real_memory_mb), (1, 1000));
        let budget = burst.budget(5, 2, true);
        assert_eq!((budget.allowance_gpus(), budget.quiet), (None, true));
        assert_eq!(burst.node_names(), ["burst1", "burst2"]);
        let (partition, node) = binding.node("burst2").unwrap();
        assert_eq!(
            (partition.pool.as_str(), node.gpu_indexes.as_slice()),
            ("infer", &[5][..])
        );
        assert_eq!(node.port, Some(17102));
        assert!(binding.node("gpu9").is_none());
        assert_eq!(Binding::parse("").unwrap(), Binding::empty());
        let no_cap = FULL.replace("drain_max_minutes = 30", "drain_max_minutes = 0");
        assert_eq!(
            Binding::parse(&no_cap).unwrap().partitions[0].drain_cap_ms(),
            None
        );
    }

    #[test]
    fn node_at_matches_host_and_gpus_in_any_order() {
        let binding = full();
        let gpu = binding.of_pool("train").unwrap();
        assert_eq!(gpu.node_at("gpu-a1", &[3, 2]).unwrap().name, "gpu2");
        assert_eq!(gpu.node_at("gpu-a2", &[4, 5]).unwrap().name, "gpu3");
        assert!(gpu.node_at("gpu-a2", &[2, 3]).is_none());
        assert!(gpu.node_at("gpu-a1", &[2]).is_none());
    }

    #[test]
    fn slurmd_argv_replaces_every_node() {
        let binding = full();
        let argv = binding.of_pool("train").unwrap().slurmd_argv("gpu2");
        assert_eq!(
            argv,
            [
                "/opt/slurm/sbin/slurmd",
                "-D",
                "-N",
                "gpu2",
                "-f",
                "/etc/slurm/gpu2.conf"
            ]
        );
        let argv = binding.of_pool("infer").unwrap().slurmd_argv("burst1");
        assert_eq!(argv, ["/usr/sbin/slurmd", "-D", "-b", "-N", "burst1"]);
    }

    /// The field and problem `text` is refused with.
    fn refused(text: &str) -> (String, String) {
        let error = Binding::parse(text).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!("{}: {}", error.field, error.problem)
        );
        (error.field, error.problem)
    }

    const HOST: &str = "host = \"a\"\nnodes = \"gpu[1-2]\"\nport = 17001";

    /// A partition `gpu` with `keys` (`gpus_per_node = 1` unless given) and one host entry
    /// `host` (`HOST` when empty).
    fn file(keys: &str, host: &str) -> String {
        let gpus = if keys.contains("gpus_per_node") {
            ""
        } else {
            "gpus_per_node = 1\n"
        };
        let host = if host.is_empty() { HOST } else { host };
        let head = "[[partition]]\nname = \"gpu\"\npool = \"train\"\nmode = \"ebb\"";
        format!("{head}\n{gpus}{keys}\n[[partition.hosts]]\n{host}\n")
    }

    /// A second partition `name` for pool `pool`, with `host_keys` in its one host entry.
    fn second(name: &str, pool: &str, host_keys: &str) -> String {
        let head = format!("[[partition]]\nname = \"{name}\"\npool = \"{pool}\"\nmode = \"slurm\"");
        format!(
            "{}{head}\ngpus_per_node = 1\n[[partition.hosts]]\n{host_keys}\n",
            file("", "")
        )
    }

    #[test]
    fn a_syntax_error_or_unknown_key_names_the_file_and_line() {
        let (field, problem) = refused("[[partition]]\nname = \"gpu\nmode = 1");
        assert_eq!(field, "slurm.toml");
        assert!(problem.starts_with("line 2: "), "{problem}");
        let (field, problem) = refused(&file("colour = 1", ""));
        assert_eq!(field, "slurm.toml");
        assert!(
            problem.starts_with("line 6: ") && problem.contains("colour"),
            "{problem}"
        );
    }

    /// Each case `input => field: problem` is refused with `prefix` + `field: problem`.
    fn each_refused(cases: &[&str], prefix: &str, text: impl Fn(&str) -> String) {
        for case in cases {
            let (input, expected) = case.split_once(" => ").unwrap();
            let error = Binding::parse(&text(input)).unwrap_err();
            assert_eq!(error.to_string(), format!("{prefix}{expected}"), "{input}");
        }
    }

    #[test]
    fn each_partition_problem_names_its_field() {
        let whole = [
            "pool = \"p\" => name: required",
            "name = \"g pu\" => name: \"g pu\" has whitespace or a comma",
            "name = \"g,pu\" => name: \"g,pu\" has whitespace or a comma",
            "name = \"gpu\" => pool: required",
            "name = \"gpu\"\npool = \"\" => pool: must not be empty",
            "name = \"gpu\"\npool = \"p\" => mode: required",
            "name = \"gpu\"\npool = \"p\"\nmode = \"auto\" => mode: \"auto\" is neither \"ebb\" \
                nor \"slurm\"",
            "name = \"gpu\"\npool = \"p\"\nmode = \"ebb\" => gpus_per_node: required",
            "name = \"gpu\"\npool = \"p\"\nmode = \"ebb\"\ngpus_per_node = 1 => hosts: at least \
                one host entry is required",
        ];
        each_refused(&whole, "partition[0].", |keys| {
            format!("[[partition]]\n{keys}")
        });
        let keys = [
            "gpus_per_node = 0 => gpus_per_node: must be 1 to 64, not 0",
            "gpus_per_node = 65 => gpus_per_node: must be 1 to 64, not 65",
            "slurmd = [\"slurmd\", \"-D\"] => slurmd: no element contains {node}",
            "drain_max_minutes = -1 => drain_max_minutes: must be at least 0, not -1",
            "cpus_per_node = 0 => cpus_per_node: must be at least 1, not 0",
            "real_memory_mb = 0 => real_memory_mb: must be at least 1, not 0",
            "max_nodes = 3 => max_nodes: 3 is more than the partition's 2 nodes",
            "min_nodes = 2\nmax_nodes = 1 => min_nodes: 2 is more than max_nodes (1)",
            "[partition.budget]\ngpus = 2 => budget.window_minutes: required",
            "[partition.budget]\ngpus = 2\nwindow_minutes = 0 => budget.window_minutes: must be \
                at least 1, not 0",
            "[partition.budget]\npercent = 101\nwindow_minutes = 5 => budget.percent: must be 0 \
                to 100, not 101",
            "[partition.budget]\ngpus = -1\nwindow_minutes = 5 => budget.gpus: must be at least \
                0, not -1",
        ];
        each_refused(&keys, "partition[0].", |keys| file(keys, ""));
    }

    #[test]
    fn each_host_problem_names_its_field() {
        let hosts = [
            "nodes = \"x1\" => host: required",
            "host = \"a\" => nodes: required",
            "host = \"a\"\nnodes = \"gpu[1-\" => nodes: column 4: unbalanced bracket",
            "host = \"a\"\nnodes = \" \" => nodes: names no node",
            "host = \"a\"\nnodes = \"gpu$1\" => nodes: node \"gpu$1\" has a character other than \
                letters, digits, '-', '_', '.'",
            "host = \"a\"\nnodes = \"gpu[1,1]\" => nodes: node gpu1 is also in partition gpu",
            "host = \"a\"\nnodes = \"gpu1\"\nslurmd_host = \"\" => slurmd_host: must not be empty",
            "host = \"a\"\nnodes = \"gpu[1-2]\" => port: required for 2 nodes on one host: each \
                slurmd needs its own port",
            "host = \"a\"\nnodes = \"gpu1\"\nport = 0 => port: must be 1 to 65535, not 0",
            "host = \"a\"\nnodes = \"gpu[1-2]\"\nport = 65535 => port: 2 nodes from port 65535 \
                pass 65535",
            "host = \"a\"\nnodes = \"gpu1\"\nfirst_gpu = 4294967295 => first_gpu: GPU indexes up \
                to 4294967295 are past 4294967294",
        ];
        each_refused(&hosts, "partition[0].hosts[0].", |host| file("", host));
    }

    #[test]
    fn names_pools_nodes_gpus_and_ports_are_taken_once_across_the_file() {
        let cases = [
            "gpu|p2|host = \"b\"\nnodes = \"x1\" => name: partition gpu is also partition[0]",
            "burst|train|host = \"b\"\nnodes = \"x1\" => pool: pool train is already bound to \
                partition gpu",
            "burst|p2|host = \"b\"\nnodes = \"gpu[2-3]\"\nport = 1 => hosts[0].nodes: node gpu2 \
                is also in partition gpu",
            "burst|p2|host = \"a\"\nnodes = \"x1\"\nfirst_gpu = 1 => hosts[0].first_gpu: GPUs \
                1-1 of host a are also in partition[0].hosts[0]",
            "burst|p2|host = \"b\"\nnodes = \"x1\"\nslurmd_host = \"a\"\nport = 17002 => \
                hosts[0].port: ports 17002-17002 on a are also used by partition[0].hosts[0]",
        ];
        each_refused(&cases, "partition[1].", |case| {
            let mut parts = case.splitn(3, '|');
            let (name, pool) = (parts.next().unwrap(), parts.next().unwrap());
            second(name, pool, parts.next().unwrap())
        });
    }

    #[test]
    fn a_budget_without_limits_is_none_and_ranges_may_touch() {
        let parsed = Binding::parse(&file("[partition.budget]\nwindow_minutes = 5", "")).unwrap();
        assert_eq!(parsed.partitions[0].budget, None);
        let text = second("burst", "p2", "host = \"a\"\nnodes = \"x1\"\nfirst_gpu = 2");
        let binding = Binding::parse(&text).unwrap();
        assert_eq!(binding.node("x1").unwrap().1.gpu_indexes, [2]);
    }
}
