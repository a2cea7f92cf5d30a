//! A Slurm cluster from the machine's packages (Debian's `slurmctld`, `slurmd`,
//! `slurm-client` and `munge`), made in a temp dir for a test and stopped when dropped:
//! loopback only, its own `munged` and key, its own `slurmctld`, and the `slurmd`s the test
//! (or the code under test) starts, each node on its own port.
//!
//! Needs root (the daemons run as root, `munged` as the package's `munge` user) and no
//! systemd. Everything is synchronous (`std::process`), so sync tests call it as it is and
//! tokio tests may wrap a call in `spawn_blocking`; every command it runs has a time limit.
//!
//! Every Slurm command and daemon finds the cluster through `SLURM_CONF` ([`SlurmCluster::env`]);
//! the harness's own commands also drop any `SLURM_*`/`SBATCH_*`/... variables the test
//! process inherited (a test run inside a Slurm job would otherwise pass them on).
//!
//! Killing `slurmctld` with SIGKILL ([`SlurmCluster::kill_ctld`]) loses what it had not
//! saved yet: a job that ended within the last seconds may come back PENDING on the next
//! start and run again.

use crate::temp::TempDir;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The programs a cluster needs, each in /usr/sbin or /usr/bin.
const PROGRAMS: [&str; 10] = [
    "slurmctld",
    "slurmd",
    "munged",
    "sbatch",
    "squeue",
    "sinfo",
    "scontrol",
    "scancel",
    "munge",
    "unmunge",
];

/// How long a client command (`sbatch`, `sinfo`, ...) may take. Against a controller that is
/// down they give up by themselves after about 10 s (`sinfo` 9 s, `scontrol ping` 10 s),
/// so their own error has time to come through.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(20);
/// How long `munged` and `slurmctld` may take to answer once started.
const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a daemon has between SIGTERM and SIGKILL when the cluster is dropped.
const STOP_GRACE: Duration = Duration::from_secs(3);

/// What a cluster is made of besides the harness's own configuration.
#[derive(Debug, Clone, Default)]
pub struct SlurmSpec {
    /// Lines appended to slurm.conf after the harness's own: `NodeName=...`,
    /// `PartitionName=...`, `ResumeProgram=...`, `TaskProlog=...`. `{dir}` in them is the
    /// cluster's directory. A node without `Port=` gets the harness's `SlurmdPort`: give
    /// each node its own port (from [`SlurmCluster::free_ports`]) to run several.
    pub nodes_and_partitions: String,
    /// gres.conf's whole text (`{dir}` substituted too), e.g. `AutoDetect=off` and
    /// `NodeName=n1 Name=gpu File={dir}/dev/nvidia[0-1]`.
    pub gres_conf: String,
    /// Files written into the directory before start: (relative path, contents with `{dir}`
    /// substituted, executable).
    pub files: Vec<(String, String, bool)>,
    /// How many GPU device files `{dir}/dev/nvidia0..N-1` to make: character devices 195:i
    /// (so Slurm sets `CUDA_VISIBLE_DEVICES`), or plain files where `mknod` fails.
    pub gpu_devices: u32,
}

/// A running cluster: `munged` and `slurmctld` started, no `slurmd` until
/// [`start_slurmd`](Self::start_slurmd). Dropping it cancels the jobs still queued or
/// running (when slurmctld runs: a job's `slurmstepd` outlives its `slurmd`), then stops every `slurmd` (those it started and those whose pid file
/// `{dir}/slurmd-NODE.pid` names a live process of this cluster), `slurmctld` and `munged`:
/// SIGTERM, SIGKILL after 3 s; by pid, never by name.
#[derive(Debug)]
pub struct SlurmCluster {
    conf: PathBuf,
    dir_text: String,
    name: String,
    ctld: Option<Child>,
    ctld_port: u16,
    slurmd_port: u16,
    slurmds: Mutex<Vec<Child>>,
    munged: Option<u32>,
    /// Configuration, state, spools and logs, removed with the cluster.
    dir: TempDir,
}

enum CtldStart {
    /// It exited saying "Address already in use".
    PortLost,
    Failed(String),
}

impl SlurmCluster {
    /// Whether the programs a cluster needs are installed and this process is root, or what
    /// is missing. A test skips (saying why) only with `EBB_SLURM_OPTIONAL=1`, else fails.
    pub fn available() -> Result<(), String> {
        let missing: Vec<&str> = PROGRAMS
            .into_iter()
            .filter(|program| program_path(program).is_none())
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "Slurm is not installed (missing {}; Debian: apt-get install slurmctld slurmd \
                 slurm-client munge)",
                missing.join(", ")
            ));
        }
        if !is_root() {
            return Err("a Slurm test cluster needs root (slurmd, munged as munge)".into());
        }
        Ok(())
    }

    /// Makes the directory, starts `munged` and `slurmctld`, and waits until `sinfo`
    /// answers. `tag` names the test in the directory's name.
    pub fn start(tag: &str, spec: SlurmSpec) -> Result<Self, String> {
        Self::available()?;
        let dir = TempDir::new(&format!("slurm-{tag}"));
        // The directory is for the cluster only: no console.toml in it.
        let _ = std::fs::remove_file(dir.join("console.toml"));
        // munged runs as another user and checks every folder above its socket and key.
        set_mode(dir.path(), 0o755)?;
        for sub in ["log", "state", "spool", "munge", "dev"] {
            std::fs::create_dir_all(dir.join(sub))
                .map_err(|error| format!("cannot create {sub} in the cluster's dir: {error}"))?;
        }
        let dir_text = dir
            .path()
            .to_str()
            .ok_or("the temp dir's path is not UTF-8")?
            .to_string();
        let fill = |text: &str| text.replace("{dir}", &dir_text);
        let nodes_and_partitions = fill(&spec.nodes_and_partitions);
        make_gpu_devices(&dir.join("dev"), spec.gpu_devices)?;
        for (relative, contents, executable) in &spec.files {
            if Path::new(relative).is_absolute() {
                return Err(format!(
                    "{relative}: files are relative to the cluster's dir"
                ));
            }
            let path = dir.join(relative);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|error| format!("cannot create {}: {error}", parent.display()))?;
            }
            write(&path, &fill(contents))?;
            if *executable {
                set_mode(&path, 0o755)?;
            }
        }
        write(&dir.join("gres.conf"), &fill(&spec.gres_conf))?;
        // `CgroupPlugin=disabled` is refused by 22.05 ("cannot create cgroup context").
        write(
            &dir.join("cgroup.conf"),
            "CgroupPlugin=autodetect\nIgnoreSystemd=yes\n",
        )?;
        let mut cluster = Self {
            conf: dir.join("slurm.conf"),
            name: format!("ebbtest{:08x}", random_u32()),
            dir_text,
            ctld: None,
            ctld_port: 0,
            slurmd_port: 0,
            slurmds: Mutex::new(Vec::new()),
            munged: None,
            dir,
        };
        // From here on an error drops `cluster`, which stops whatever was started.
        cluster.start_munged()?;
        // Slurm takes its ports from slurm.conf only (no port 0, no listener handed over):
        // so free ones are learnt by binding them and letting them go, and a slurmctld that
        // then loses its port to another process (it exits with "Address already in use")
        // is started again on others. The one exception here, as for PostgreSQL, to "no
        // port picked and hoped for".
        let mut lost = Vec::new();
        for _ in 0..5 {
            let ports = Self::free_ports(2);
            (cluster.ctld_port, cluster.slurmd_port) = (ports[0], ports[1]);
            let conf = cluster.harness_conf() + &nodes_and_partitions + "\n";
            write(&cluster.conf, &conf)?;
            match cluster.spawn_ctld() {
                Ok(()) => return Ok(cluster),
                Err(CtldStart::PortLost) => lost.push(cluster.ctld_port),
                Err(CtldStart::Failed(error)) => return Err(error),
            }
        }
        Err(format!(
            "slurmctld lost its port to another process five times: {lost:?}"
        ))
    }

    /// The cluster's directory (`{dir}` in the spec).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// slurm.conf: every Slurm command and daemon of this cluster gets `SLURM_CONF=` it.
    pub fn conf(&self) -> &Path {
        &self.conf
    }

    /// What a process needs in its environment to talk to this cluster.
    pub fn env(&self) -> Vec<(String, String)> {
        vec![("SLURM_CONF".into(), self.conf.display().to_string())]
    }

    /// `n` distinct loopback ports, free a moment ago: bound on `127.0.0.1:0` together, then
    /// released, for the `Port=` of the caller's `NodeName` lines. Slurm only takes ports
    /// from its configuration, so these are picked and hoped for: the one exception, as for
    /// PostgreSQL, to handing over bound listeners ([`crate::bound_listener`]).
    pub fn free_ports(n: usize) -> Vec<u16> {
        let listeners: Vec<std::net::TcpListener> = (0..n)
            .map(|_| {
                std::net::TcpListener::bind("127.0.0.1:0")
                    .unwrap_or_else(|error| panic!("no free port on 127.0.0.1: {error}"))
            })
            .collect();
        listeners
            .iter()
            .map(|listener| listener.local_addr().expect("a bound address").port())
            .collect()
    }

    /// `sbatch --parsable ARGS`: the new job's id.
    pub fn sbatch(&self, args: &[&str]) -> Result<String, String> {
        let mut all = vec!["--parsable"];
        all.extend_from_slice(args);
        let out = self.client("sbatch", &all)?;
        parse_job_id(&out).ok_or_else(|| format!("sbatch said no job id: {out:?}"))
    }

    /// `squeue ARGS`: its standard output.
    pub fn squeue(&self, args: &[&str]) -> Result<String, String> {
        self.client("squeue", args)
    }

    /// `sinfo ARGS`: its standard output.
    pub fn sinfo(&self, args: &[&str]) -> Result<String, String> {
        self.client("sinfo", args)
    }

    /// `scontrol ARGS`: its standard output.
    pub fn scontrol(&self, args: &[&str]) -> Result<String, String> {
        self.client("scontrol", args)
    }

    /// A job's `JobState` (`PENDING`, `RUNNING`, `COMPLETED`, `FAILED`, `CANCELLED`, ...)
    /// from `scontrol show job`; an ended job stays visible for an hour (`MinJobAge`, longer
    /// than any suite runs: a job ended early in a slow run is still read, not forgotten).
    pub fn job_state(&self, id: &str) -> Result<String, String> {
        let out = self.scontrol(&["-o", "show", "job", id])?;
        out.split_whitespace()
            .find_map(|field| field.strip_prefix("JobState="))
            .map(str::to_string)
            .ok_or_else(|| format!("no JobState for job {id}: {out:?}"))
    }

    /// A node's state as `sinfo -h -a -N -n NODE -o %T` says it: `idle`, `allocated`,
    /// `mixed`, `drained`, `down*` (`*`: not responding), `idle~` (powered down), ...
    /// (`-a`: nodes in hidden partitions and powered-down cloud nodes too).
    pub fn node_state(&self, node: &str) -> Result<String, String> {
        let out = self.sinfo(&["-h", "-a", "-N", "-n", node, "-o", "%T"])?;
        out.lines()
            .map(str::trim)
            .find(|line| !line.is_empty())
            .map(str::to_string)
            .ok_or_else(|| format!("sinfo knows no node {node}"))
    }

    /// Starts `slurmd -D -N NODE` in its own session (output in `{dir}/log/slurmd-NODE.out`,
    /// Slurm's log in `slurmd-NODE.log`), stopped with the cluster. It returns once the
    /// process is started: wait for [`node_state`](Self::node_state) to say it registered.
    pub fn start_slurmd(&self, node: &str) -> Result<(), String> {
        let spool = self.dir.join("spool").join(node);
        std::fs::create_dir_all(&spool)
            .map_err(|error| format!("cannot create {}: {error}", spool.display()))?;
        let out = append(&self.dir.join("log").join(format!("slurmd-{node}.out")))?;
        let child = self
            .daemon("slurmd", out)?
            .args(["-D", "-N", node])
            .spawn()
            .map_err(|error| format!("cannot start slurmd for {node}: {error}"))?;
        self.slurmds.lock().unwrap().push(child);
        Ok(())
    }

    /// Whether slurmctld has saved its jobs to disk (`StateSaveLocation/job_state`) since
    /// `since`: what a controller killed after that finds again when it starts. Jobs it
    /// took after its last save are lost to a kill, as they are to a crash.
    pub fn jobs_saved_since(&self, since: std::time::SystemTime) -> bool {
        std::fs::metadata(self.dir.join("state").join("job_state"))
            .and_then(|meta| meta.modified())
            .is_ok_and(|saved| saved > since)
    }

    /// SIGKILLs `slurmctld` (a fault for the test to inject); [`start_ctld`](Self::start_ctld)
    /// brings it back. What it had not saved yet is lost (see the module's note).
    pub fn kill_ctld(&mut self) {
        if let Some(mut ctld) = self.ctld.take() {
            let _ = ctld.kill();
            let _ = ctld.wait();
        }
        // A later start must not read a dead pid (perhaps someone else's by then).
        let _ = std::fs::remove_file(self.dir.join("ctld.pid"));
    }

    /// Starts `slurmctld` again on the same port and state directory (it recovers its jobs
    /// and nodes from there) and waits until `sinfo` answers; `Ok` at once if it runs.
    pub fn start_ctld(&mut self) -> Result<(), String> {
        if let Some(ctld) = &mut self.ctld
            && matches!(ctld.try_wait(), Ok(None))
        {
            return Ok(());
        }
        self.spawn_ctld().map_err(|error| match error {
            CtldStart::PortLost => format!(
                "slurmctld cannot start again: its port {} was taken by another process",
                self.ctld_port
            ),
            CtldStart::Failed(error) => error,
        })
    }

    /// The configuration's first part, the harness's own. `cred_expire=10`: a job Slurm
    /// requeues waits 11 s for its begin time rather than 121 s (the product counts such a
    /// job as demand either way).
    fn harness_conf(&self) -> String {
        let dir = &self.dir_text;
        format!(
            "ClusterName={name}\n\
             SlurmctldHost=localhost\n\
             SlurmctldPort={ctld_port}\n\
             SlurmdPort={slurmd_port}\n\
             SlurmUser=root\n\
             SlurmdUser=root\n\
             AuthType=auth/munge\n\
             AuthInfo=socket={dir}/munge/munge.sock,cred_expire=10\n\
             StateSaveLocation={dir}/state\n\
             SlurmdSpoolDir={dir}/spool/%n\n\
             SlurmctldPidFile={dir}/ctld.pid\n\
             SlurmdPidFile={dir}/slurmd-%n.pid\n\
             SlurmctldLogFile={dir}/log/ctld.log\n\
             SlurmdLogFile={dir}/log/slurmd-%n.log\n\
             ProctrackType=proctrack/linuxproc\n\
             TaskPlugin=task/none\n\
             SelectType=select/cons_tres\n\
             SelectTypeParameters=CR_Core\n\
             GresTypes=gpu\n\
             MpiDefault=none\n\
             MailProg=/bin/true\n\
             ReturnToService=2\n\
             SlurmdTimeout=10\n\
             MinJobAge=3600\n",
            name = self.name,
            ctld_port = self.ctld_port,
            slurmd_port = self.slurmd_port,
        )
    }

    /// A fresh 1024-byte key and `munged` as the `munge` user, all in `{dir}/munge`; waits
    /// until a credential made there is decoded there.
    fn start_munged(&mut self) -> Result<(), String> {
        let munge = self.dir.join("munge");
        let key = munge.join("munge.key");
        let mut bytes = vec![0u8; 1024];
        File::open("/dev/urandom")
            .and_then(|mut random| random.read_exact(&mut bytes))
            .map_err(|error| format!("cannot read /dev/urandom: {error}"))?;
        std::fs::write(&key, &bytes).map_err(|error| format!("cannot write the key: {error}"))?;
        set_mode(&key, 0o400)?;
        // munged refuses a socket folder without execute for all, and a key others can read.
        set_mode(&munge, 0o755)?;
        let mut chown = Command::new("chown");
        chown.args(["-R", "munge:munge"]).arg(&munge);
        checked(&mut chown, COMMAND_TIMEOUT)?;
        let socket = munge.join("munge.sock");
        let pid_file = munge.join("munged.pid");
        let out = append(&self.dir.join("log").join("munged.out"))?;
        let mut command = Command::new("setpriv");
        command
            .args(["--reuid=munge", "--regid=munge", "--init-groups"])
            .arg(program_path("munged").ok_or("munged is not installed")?)
            .arg(format!("--socket={}", socket.display()))
            .arg(format!("--key-file={}", key.display()))
            .arg(format!("--pid-file={}", pid_file.display()))
            .arg(format!("--log-file={}", munge.join("munged.log").display()))
            .arg(format!(
                "--seed-file={}",
                munge.join("munge.seed").display()
            ))
            .stdin(Stdio::null())
            .stdout(out.try_clone().map_err(|error| error.to_string())?)
            .stderr(out);
        // munged forks its daemon and exits once that one is ready.
        let status = wait_for(
            command
                .spawn()
                .map_err(|error| format!("cannot start munged: {error}"))?,
            COMMAND_TIMEOUT,
        )
        .map_err(|error| format!("munged: {error}"))?;
        if !status.success() {
            return Err(format!("munged failed ({status}):\n{}", self.munge_logs()));
        }
        let started = Instant::now();
        loop {
            let pid = std::fs::read_to_string(&pid_file)
                .ok()
                .and_then(|text| text.trim().parse::<u32>().ok());
            if let Some(pid) = pid {
                self.munged = Some(pid);
                if munge_works(&socket) {
                    return Ok(());
                }
            }
            if started.elapsed() > READY_TIMEOUT {
                return Err(format!(
                    "munged did not answer within {READY_TIMEOUT:?}:\n{}",
                    self.munge_logs()
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn munge_logs(&self) -> String {
        let read = |path: PathBuf| std::fs::read_to_string(path).unwrap_or_default();
        read(self.dir.join("log").join("munged.out")) + &read(self.dir.join("munge/munged.log"))
    }

    /// Starts `slurmctld -D -i` in its own session and waits until it listens and `sinfo`
    /// answers.
    fn spawn_ctld(&mut self) -> Result<(), CtldStart> {
        let out_path = self.dir.join("log").join("ctld.out");
        let out = append(&out_path).map_err(CtldStart::Failed)?;
        let offset = out.metadata().map(|meta| meta.len()).unwrap_or(0);
        let child = self
            .daemon("slurmctld", out)
            .map_err(CtldStart::Failed)?
            .args(["-D", "-i"])
            .spawn()
            .map_err(|error| CtldStart::Failed(format!("cannot start slurmctld: {error}")))?;
        let pid = child.id();
        let ctld = self.ctld.insert(child);
        let started = Instant::now();
        let exited = loop {
            if !matches!(ctld.try_wait(), Ok(None)) {
                break true;
            }
            // Listening first: sinfo against a controller that is not up retries for 9 s.
            if listening(pid, self.ctld_port) {
                let mut sinfo = command_for(&self.conf, "sinfo");
                sinfo.arg("-h");
                if checked(&mut sinfo, COMMAND_TIMEOUT).is_ok() {
                    return Ok(());
                }
            }
            if started.elapsed() > READY_TIMEOUT {
                break false;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let log = read_from(&out_path, offset);
        if let Some(mut ctld) = self.ctld.take() {
            let _ = ctld.kill();
            let _ = ctld.wait();
        }
        if exited && log.contains("Address already in use") {
            Err(CtldStart::PortLost)
        } else {
            Err(CtldStart::Failed(format!(
                "slurmctld did not answer on port {} within {READY_TIMEOUT:?}{}:\n{log}",
                self.ctld_port,
                if exited { " (it exited)" } else { "" }
            )))
        }
    }

    /// A daemon in a session of its own, in the cluster's dir, output to `out`.
    fn daemon(&self, program: &str, out: File) -> Result<Command, String> {
        let path = program_path(program).ok_or(format!("{program} is not installed"))?;
        let mut command = Command::new("setsid");
        command.arg(path);
        clean_env(&mut command, &self.conf);
        command
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .stdout(out.try_clone().map_err(|error| error.to_string())?)
            .stderr(out);
        Ok(command)
    }

    /// A client command's standard output, or what went wrong.
    fn client(&self, program: &str, args: &[&str]) -> Result<String, String> {
        let mut command = command_for(&self.conf, program);
        command.args(args);
        checked(&mut command, COMMAND_TIMEOUT)
    }

    fn ctld_running(&mut self) -> bool {
        self.ctld
            .as_mut()
            .is_some_and(|ctld| matches!(ctld.try_wait(), Ok(None)))
    }

    /// Cancels every job still queued or running (their `slurmstepd`s outlive a stopped
    /// `slurmd`) and waits up to 3 s for the queue to empty.
    fn cancel_jobs(&self) {
        let queued = || {
            let mut squeue = command_for(&self.conf, "squeue");
            squeue.args(["-h", "-o", "%i"]);
            checked(&mut squeue, Duration::from_secs(5))
                .map(|out| {
                    out.split_whitespace()
                        .map(str::to_string)
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
        };
        let jobs = queued();
        if jobs.is_empty() {
            return;
        }
        let mut scancel = command_for(&self.conf, "scancel");
        scancel.arg("--quiet").args(&jobs);
        let _ = checked(&mut scancel, Duration::from_secs(5));
        let deadline = Instant::now() + STOP_GRACE;
        while Instant::now() < deadline && !queued().is_empty() {
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Live `slurmd`s of this cluster named by `{dir}/slurmd-*.pid`.
    fn slurmds_from_pid_files(&self) -> Vec<u32> {
        std::fs::read_dir(self.dir.path())
            .into_iter()
            .flatten()
            .flatten()
            .filter(|entry| {
                let name = entry.file_name();
                let name = name.to_string_lossy();
                name.starts_with("slurmd-") && name.ends_with(".pid")
            })
            .filter_map(|entry| {
                std::fs::read_to_string(entry.path())
                    .ok()?
                    .trim()
                    .parse()
                    .ok()
            })
            .filter(|&pid| running(pid) && mentions(pid, &self.dir_text))
            .collect()
    }
}

impl Drop for SlurmCluster {
    fn drop(&mut self) {
        if self.ctld_running() {
            self.cancel_jobs();
        }
        let mut children: Vec<Child> = std::mem::take(&mut *self.slurmds.lock().unwrap());
        let ours: Vec<u32> = children.iter().map(Child::id).collect();
        let others: Vec<u32> = self
            .slurmds_from_pid_files()
            .into_iter()
            .filter(|pid| !ours.contains(pid))
            .collect();
        children.extend(self.ctld.take());
        stop(&mut children, &others);
        // munged last: the others may still ask it for a credential on their way out.
        if let Some(pid) = self.munged.take()
            && running(pid)
            && mentions(pid, &self.dir_text)
        {
            stop(&mut [], &[pid]);
        }
    }
}

/// SIGTERM to all, SIGKILL to those still there after [`STOP_GRACE`]; children are reaped.
fn stop(children: &mut [Child], pids: &[u32]) {
    let all: Vec<u32> = children
        .iter()
        .map(Child::id)
        .chain(pids.iter().copied())
        .collect();
    for pid in &all {
        signal(*pid, "TERM");
    }
    let done = |children: &mut [Child]| {
        children
            .iter_mut()
            .all(|child| !matches!(child.try_wait(), Ok(None)))
            && pids.iter().all(|&pid| !running(pid))
    };
    let deadline = Instant::now() + STOP_GRACE;
    while Instant::now() < deadline && !done(children) {
        std::thread::sleep(Duration::from_millis(50));
    }
    for child in children.iter_mut() {
        let _ = child.kill();
        let _ = child.wait();
    }
    for &pid in pids {
        if running(pid) {
            signal(pid, "KILL");
        }
    }
}

fn signal(pid: u32, signal: &str) {
    let mut kill = Command::new("kill");
    kill.arg(format!("-{signal}")).arg(pid.to_string());
    let _ = checked(&mut kill, Duration::from_secs(5));
}

/// Whether `pid` is a live process (not a zombie waiting for a parent that never reaps).
fn running(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // `pid (comm) S ...`: comm may hold spaces and parentheses, the state follows the last ')'.
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.trim_start().chars().next())
        .is_some_and(|state| state != 'Z' && state != 'X')
}

/// Whether `pid`'s command line or environment names `text` (the cluster's dir): a pid file
/// left behind may name a recycled pid by now.
fn mentions(pid: u32, text: &str) -> bool {
    ["cmdline", "environ"].into_iter().any(|file| {
        std::fs::read(format!("/proc/{pid}/{file}")).is_ok_and(|bytes| {
            bytes
                .windows(text.len())
                .any(|window| window == text.as_bytes())
        })
    })
}

/// Whether process `pid` itself listens on TCP `port` (IPv4 or IPv6), read from /proc: no
/// connection made (so the daemon logs none), and another process that took the port is
/// not mistaken for it (`sinfo` would wait 10 s on that one).
fn listening(pid: u32, port: u16) -> bool {
    let suffix = format!(":{port:04X}");
    let inodes: Vec<String> = ["/proc/net/tcp", "/proc/net/tcp6"]
        .into_iter()
        .filter_map(|table| std::fs::read_to_string(table).ok())
        .flat_map(|text| {
            text.lines()
                .skip(1)
                .filter_map(|line| {
                    let fields: Vec<&str> = line.split_whitespace().collect();
                    // sl, local_address, rem_address, st (0A: LISTEN), ..., inode (10th).
                    (fields.len() > 9 && fields[1].ends_with(&suffix) && fields[3] == "0A")
                        .then(|| format!("socket:[{}]", fields[9]))
                })
                .collect::<Vec<_>>()
        })
        .collect();
    !inodes.is_empty()
        && std::fs::read_dir(format!("/proc/{pid}/fd"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|fd| std::fs::read_link(fd.path()).ok())
            .any(|target| {
                inodes
                    .iter()
                    .any(|inode| target.as_os_str() == inode.as_str())
            })
}

/// `munge -n | unmunge` on the cluster's socket.
fn munge_works(socket: &Path) -> bool {
    let socket = format!("--socket={}", socket.display());
    let mut munge = Command::new("munge");
    munge.args(["-n", &socket]);
    let Ok(credential) = run(&mut munge, Duration::from_secs(5), None) else {
        return false;
    };
    if !credential.status.success() {
        return false;
    }
    let mut unmunge = Command::new("unmunge");
    unmunge.arg(&socket);
    run(
        &mut unmunge,
        Duration::from_secs(5),
        Some(credential.stdout),
    )
    .is_ok_and(|output| output.status.success())
}

/// The Slurm program `program` with the cluster's environment.
fn command_for(conf: &Path, program: &str) -> Command {
    let mut command = Command::new(program_path(program).unwrap_or_else(|| program.into()));
    clean_env(&mut command, conf);
    command
}

/// `SLURM_CONF` set, Slurm's input variables inherited by the test dropped, and PATH with
/// /usr/sbin and /usr/bin first.
fn clean_env(command: &mut Command, conf: &Path) {
    const PREFIXES: [&str; 7] = [
        "SLURM_",
        "SBATCH_",
        "SALLOC_",
        "SRUN_",
        "SQUEUE_",
        "SINFO_",
        "SCONTROL_",
    ];
    for (key, _) in std::env::vars_os() {
        let key_text = key.to_string_lossy();
        if PREFIXES.iter().any(|prefix| key_text.starts_with(prefix)) {
            command.env_remove(&key);
        }
    }
    let path = std::env::var("PATH").unwrap_or_default();
    command
        .env("SLURM_CONF", conf)
        .env("PATH", format!("/usr/sbin:/usr/bin:/sbin:/bin:{path}"));
}

fn program_path(program: &str) -> Option<PathBuf> {
    ["/usr/sbin", "/usr/bin"]
        .into_iter()
        .map(|dir| Path::new(dir).join(program))
        .find(|path| path.exists())
}

/// Runs `command` (stdin `input` or nothing) for at most `timeout`, collecting its output;
/// killed when it takes longer.
fn run(command: &mut Command, timeout: Duration, input: Option<Vec<u8>>) -> Result<Output, String> {
    let mut child = command
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| format!("cannot run {command:?}: {error}"))?;
    if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
        std::thread::spawn(move || {
            let _ = std::io::Write::write_all(&mut stdin, &input);
        });
    }
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = reader(child.stdout.take().map(|pipe| Box::new(pipe) as _));
    let stderr = reader(child.stderr.take().map(|pipe| Box::new(pipe) as _));
    let status = wait_for(child, timeout).map_err(|error| format!("{command:?}: {error}"))?;
    Ok(Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    })
}

/// Waits for `child` at most `timeout`, then kills it.
fn wait_for(mut child: Child, timeout: Duration) -> Result<std::process::ExitStatus, String> {
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(status),
            Ok(None) if started.elapsed() < timeout => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("still running after {timeout:?}: killed"));
            }
            Err(error) => return Err(format!("cannot wait: {error}")),
        }
    }
}

/// [`run`], its standard output when it succeeded, else what it said.
fn checked(command: &mut Command, timeout: Duration) -> Result<String, String> {
    let output = run(command, timeout, None)?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        Err(format!(
            "{command:?} failed ({}): {}{}",
            output.status,
            String::from_utf8_lossy(&output.stderr),
            String::from_utf8_lossy(&output.stdout)
        ))
    }
}

/// `--parsable` prints `ID` or `ID;CLUSTER`; a plain `Submitted batch job ID` is read too.
fn parse_job_id(out: &str) -> Option<String> {
    let text = out.trim();
    let id = text
        .strip_prefix("Submitted batch job ")
        .unwrap_or(text)
        .split(';')
        .next()?
        .trim();
    (!id.is_empty() && id.chars().all(|c| c.is_ascii_digit())).then(|| id.to_string())
}

/// `nvidia0..n-1` in `dev`: character devices 195:i, plain files where mknod is refused.
fn make_gpu_devices(dev: &Path, n: u32) -> Result<(), String> {
    for index in 0..n {
        let path = dev.join(format!("nvidia{index}"));
        let mut mknod = Command::new("mknod");
        mknod.arg(&path).args(["c", "195", &index.to_string()]);
        if let Err(error) = checked(&mut mknod, COMMAND_TIMEOUT) {
            eprintln!(
                "SlurmCluster: mknod refused ({}); {} is a plain file (Slurm warns it is not a \
                 device and may not set CUDA_VISIBLE_DEVICES)",
                error.trim(),
                path.display()
            );
            write(&path, "")?;
        }
    }
    Ok(())
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|error| format!("cannot write {}: {error}", path.display()))
}

fn append(path: &Path) -> Result<File, String> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|error| format!("cannot open {}: {error}", path.display()))
}

fn read_from(path: &Path, offset: u64) -> String {
    let mut text = String::new();
    if let Ok(mut file) = File::open(path)
        && file.seek(SeekFrom::Start(offset)).is_ok()
    {
        let _ = file.read_to_string(&mut text);
    }
    text
}

fn set_mode(path: &Path, mode: u32) -> Result<(), String> {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|error| format!("cannot chmod {}: {error}", path.display()))
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|status| {
        status
            .lines()
            .find_map(|line| line.strip_prefix("Uid:"))
            .and_then(|ids| ids.split_whitespace().nth(1))
            == Some("0")
    })
}

/// Enough to tell two clusters apart (their names), not a secret.
fn random_u32() -> u32 {
    let mut bytes = [0u8; 4];
    if File::open("/dev/urandom")
        .and_then(|mut random| random.read_exact(&mut bytes))
        .is_err()
    {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|since| since.subsec_nanos())
            .unwrap_or_default();
        return nanos ^ std::process::id();
    }
    u32::from_le_bytes(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_id_is_read_from_either_form() {
        assert_eq!(parse_job_id("42\n").as_deref(), Some("42"));
        assert_eq!(parse_job_id("42;ebbtest1\n").as_deref(), Some("42"));
        assert_eq!(
            parse_job_id("Submitted batch job 7\n").as_deref(),
            Some("7")
        );
        assert_eq!(parse_job_id("sbatch: error: nope"), None);
        assert_eq!(parse_job_id(""), None);
    }

    #[test]
    fn free_ports_are_distinct() {
        let ports = SlurmCluster::free_ports(8);
        let mut unique = ports.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), 8);
    }

    #[test]
    fn a_command_past_its_time_is_killed() {
        let mut sleep = Command::new("sleep");
        sleep.arg("5");
        let started = Instant::now();
        let error = checked(&mut sleep, Duration::from_millis(200)).unwrap_err();
        assert!(error.contains("killed"), "{error}");
        assert!(started.elapsed() < Duration::from_secs(3));
    }
}
