//! The Slurm configuration for a [`Binding`]: the lines to add to `slurm.conf`, the whole
//! `gres.conf`, and the task prolog that gives each job the machine's GPU indexes.
//!
//! Several Slurm nodes may share one machine, and Slurm sets a job's
//! `CUDA_VISIBLE_DEVICES` to indexes within its node's gres list (a job holding node
//! `gpu2`'s two GPUs sees `0,1`), which on the machine are another node's GPUs. The task
//! prolog maps them back (`2,3`).

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::binding::{Binding, Mode, NodeSlot};

/// Where the generated slurm.conf lines say to put the task prolog.
pub const TASK_PROLOG_PATH: &str = "/etc/slurm/ebb-task-prolog.sh";

/// What the generated files depend on beyond the binding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfOptions {
    /// Where the GPU device files are: `/dev` on a real host.
    pub dev_dir: String,
}

/// The generated configuration, each file's text ending in a newline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfFiles {
    /// Lines to add to `slurm.conf`: `GresTypes`, guidance as comments, the nodes and the
    /// partitions.
    pub slurm_conf: String,
    /// The whole `gres.conf`.
    pub gres_conf: String,
    /// A POSIX sh script for slurm.conf's `TaskProlog` (at [`TASK_PROLOG_PATH`]).
    pub task_prolog: String,
}

/// The Slurm configuration for `binding`, nodes and partitions in the binding's order.
pub fn render(binding: &Binding, options: &ConfOptions) -> ConfFiles {
    let mut slurm = String::from("GresTypes=gpu\n");
    let _ = writeln!(
        slurm,
        "# Save Ebb's task prolog as {TASK_PROLOG_PATH} (executable), and set:\n\
         # TaskProlog={TASK_PROLOG_PATH}"
    );
    let powered: Vec<&str> = binding
        .partitions
        .iter()
        .filter(|p| p.mode == Mode::Slurm)
        .map(|p| p.name.as_str())
        .collect();
    if !powered.is_empty() {
        let _ = writeln!(
            slurm,
            "# Slurm's power saving starts and stops the nodes of {} through Ebb. Set:\n\
             # ResumeProgram=<a script running: ebb slurm resume \"$1\">\n\
             # SuspendProgram=<a script running: ebb slurm suspend \"$1\">\n\
             # ResumeFailProgram=<a script running: ebb slurm suspend \"$1\">\n\
             # SuspendTime=<seconds a node stays idle before its GPUs go back, e.g. 600>\n\
             # ResumeTimeout=<seconds a node may take to start, GPUs and slurmd, e.g. 900>",
            powered.join(", ")
        );
    }
    let mut gres = String::from("AutoDetect=off\n");
    let dev_dir = options.dev_dir.trim_end_matches('/');
    for partition in &binding.partitions {
        for node in &partition.nodes {
            let _ = write!(
                slurm,
                "NodeName={} NodeHostname={}",
                node.name, node.slurmd_host
            );
            if let Some(port) = node.port {
                let _ = write!(slurm, " Port={port}");
            }
            let _ = write!(
                slurm,
                " CPUs={} RealMemory={} Gres=gpu:{}",
                partition.cpus_per_node,
                partition.real_memory_mb,
                node.gpu_indexes.len()
            );
            if partition.mode == Mode::Slurm {
                slurm.push_str(" State=CLOUD");
            }
            slurm.push('\n');
            let _ = writeln!(
                gres,
                "NodeName={} Name=gpu File={dev_dir}/nvidia{}",
                node.name,
                index_set(&sorted(node))
            );
        }
    }
    for partition in &binding.partitions {
        let _ = writeln!(
            slurm,
            "PartitionName={} Nodes={} MaxTime=INFINITE State=UP",
            partition.name,
            partition.hostlist()
        );
    }
    ConfFiles {
        slurm_conf: slurm,
        gres_conf: gres,
        task_prolog: task_prolog(binding),
    }
}

/// The node's GPU indexes in the order Slurm numbers them: ascending, as gres.conf lists them.
fn sorted(node: &NodeSlot) -> Vec<u32> {
    let mut indexes = node.gpu_indexes.clone();
    indexes.sort_unstable();
    indexes
}

/// `3`, `[0-1]` when consecutive, else `[0,2]`.
fn index_set(indexes: &[u32]) -> String {
    match indexes {
        [one] => one.to_string(),
        [first, .., last] if indexes.windows(2).all(|pair| pair[1] == pair[0] + 1) => {
            format!("[{first}-{last}]")
        }
        _ => {
            let listed: Vec<String> = indexes.iter().map(u32::to_string).collect();
            format!("[{}]", listed.join(","))
        }
    }
}

/// The TaskProlog script: for the job's node, each index in `CUDA_VISIBLE_DEVICES` taken
/// as a position in the node's GPUs. Node names are checked by the binding (letters,
/// digits, `-`, `_`, `.`), so they are safe inside the quoted patterns.
fn task_prolog(binding: &Binding) -> String {
    let mut script = format!(
        "#!/bin/sh\n\
         # Ebb's task prolog (slurm.conf: TaskProlog={TASK_PROLOG_PATH}).\n\
         # Several Slurm nodes share one machine, and Slurm numbers a job's GPUs within its\n\
         # node; this maps CUDA_VISIBLE_DEVICES to the machine's GPU indexes.\n\
         case \"$SLURMD_NODENAME\" in\n"
    );
    for node in binding.partitions.iter().flat_map(|p| &p.nodes) {
        let map: Vec<String> = sorted(node).iter().map(u32::to_string).collect();
        let _ = writeln!(script, "\"{}\") map=\"{}\" ;;", node.name, map.join(" "));
    }
    script.push_str(
        "*) exit 0 ;;\n\
         esac\n\
         set -f\n\
         IFS=', '\n\
         out=''\n\
         for i in $CUDA_VISIBLE_DEVICES; do\n\
         \x20   case \"$i\" in\n\
         \x20   '' | *[!0-9]*) exit 0 ;;\n\
         \x20   esac\n\
         \x20   n=0\n\
         \x20   gpu=''\n\
         \x20   for g in $map; do\n\
         \x20       if [ \"$n\" -eq \"$i\" ]; then gpu=$g; fi\n\
         \x20       n=$((n + 1))\n\
         \x20   done\n\
         \x20   [ -n \"$gpu\" ] || exit 0\n\
         \x20   out=\"${out:+$out,}$gpu\"\n\
         done\n\
         [ -n \"$out\" ] && echo \"export CUDA_VISIBLE_DEVICES=$out\"\n\
         exit 0\n",
    );
    script
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO_HOSTS: &str = r#"
[[partition]]
name = "gpu"
pool = "train"
mode = "ebb"
gpus_per_node = 2
cpus_per_node = 2
[[partition.hosts]]
host = "gpu-a1"
nodes = "gpu[1-2]"
slurmd_host = "localhost"
port = 17001

[[partition]]
name = "burst"
pool = "infer"
mode = "slurm"
gpus_per_node = 1
[[partition.hosts]]
host = "gpu-a2"
nodes = "burst1"
first_gpu = 3
"#;

    fn files() -> ConfFiles {
        let binding = Binding::parse(TWO_HOSTS).unwrap();
        render(
            &binding,
            &ConfOptions {
                dev_dir: "/dev/".into(),
            },
        )
    }

    #[test]
    fn renders_slurm_conf() {
        assert_eq!(
            files().slurm_conf,
            r#"GresTypes=gpu
# Save Ebb's task prolog as /etc/slurm/ebb-task-prolog.sh (executable), and set:
# TaskProlog=/etc/slurm/ebb-task-prolog.sh
# Slurm's power saving starts and stops the nodes of burst through Ebb. Set:
# ResumeProgram=<a script running: ebb slurm resume "$1">
# SuspendProgram=<a script running: ebb slurm suspend "$1">
# ResumeFailProgram=<a script running: ebb slurm suspend "$1">
# SuspendTime=<seconds a node stays idle before its GPUs go back, e.g. 600>
# ResumeTimeout=<seconds a node may take to start, GPUs and slurmd, e.g. 900>
NodeName=gpu1 NodeHostname=localhost Port=17001 CPUs=2 RealMemory=1000 Gres=gpu:2
NodeName=gpu2 NodeHostname=localhost Port=17002 CPUs=2 RealMemory=1000 Gres=gpu:2
NodeName=burst1 NodeHostname=gpu-a2 CPUs=1 RealMemory=1000 Gres=gpu:1 State=CLOUD
PartitionName=gpu Nodes=gpu[1-2] MaxTime=INFINITE State=UP
PartitionName=burst Nodes=burst1 MaxTime=INFINITE State=UP
"#
        );
    }

    #[test]
    fn renders_gres_conf() {
        assert_eq!(
            files().gres_conf,
            "AutoDetect=off\n\
             NodeName=gpu1 Name=gpu File=/dev/nvidia[0-1]\n\
             NodeName=gpu2 Name=gpu File=/dev/nvidia[2-3]\n\
             NodeName=burst1 Name=gpu File=/dev/nvidia3\n"
        );
        assert_eq!(index_set(&[0, 2]), "[0,2]");
        assert_eq!(index_set(&[4, 5, 6]), "[4-6]");
    }

    #[test]
    fn only_ebb_partitions_need_no_power_saving_lines() {
        let binding = Binding::parse(
            TWO_HOSTS
                .split("\n[[partition]]\nname = \"burst\"")
                .next()
                .unwrap(),
        )
        .unwrap();
        let conf = render(
            &binding,
            &ConfOptions {
                dev_dir: "/dev".into(),
            },
        )
        .slurm_conf;
        assert!(
            !conf.contains("ResumeProgram") && !conf.contains("CLOUD"),
            "{conf}"
        );
        assert!(conf.contains("# TaskProlog="), "{conf}");
    }

    /// What the task prolog prints for `node` and `visible` (tests only: runs /bin/sh).
    fn prolog_output(node: &str, visible: &str) -> String {
        let output = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(files().task_prolog)
            .env_clear()
            .env("SLURMD_NODENAME", node)
            .env("CUDA_VISIBLE_DEVICES", visible)
            .output()
            .unwrap();
        assert!(output.status.success());
        String::from_utf8(output.stdout).unwrap()
    }

    #[test]
    fn the_task_prolog_maps_a_nodes_gpus_to_the_machines() {
        assert!(files().task_prolog.starts_with("#!/bin/sh\n"));
        assert!(files().task_prolog.contains("\"gpu2\") map=\"2 3\" ;;\n"));
        assert_eq!(
            prolog_output("gpu2", "0,1"),
            "export CUDA_VISIBLE_DEVICES=2,3\n"
        );
        assert_eq!(
            prolog_output("gpu2", "1"),
            "export CUDA_VISIBLE_DEVICES=3\n"
        );
        assert_eq!(
            prolog_output("gpu1", "1,0"),
            "export CUDA_VISIBLE_DEVICES=1,0\n"
        );
        assert_eq!(
            prolog_output("burst1", "0"),
            "export CUDA_VISIBLE_DEVICES=3\n"
        );
        assert_eq!(prolog_output("login1", "0,1"), "");
        assert_eq!(prolog_output("gpu2", ""), "");
        assert_eq!(prolog_output("gpu2", "0,2"), "");
        assert_eq!(prolog_output("gpu2", "NoDevFiles"), "");
        assert_eq!(prolog_output("gpu2", "*"), "");
    }
}
