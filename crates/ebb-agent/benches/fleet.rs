//! The virtual fleet at scale: `cargo bench -p ebb-agent --bench fleet`
//!
//! Starts `ebb-agent fleet` (the release binary) with 1,250 hosts x 8 GPUs sampling at
//! 1 Hz and reports its CPU (cores) and RSS over `EBB_BENCH_SECONDS` (default 300).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn proc_stat(pid: u32) -> (f64, u64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap()
        .split_whitespace()
        .collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    let rss_pages: u64 = fields[21].parse().unwrap();
    (ticks / 100.0, rss_pages * 4096)
}

fn main() {
    let seconds: u64 = std::env::var("EBB_BENCH_SECONDS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(300);
    let mut child = Command::new(env!("CARGO_BIN_EXE_ebb-agent"))
        .args([
            "fleet",
            "--hosts",
            "1250",
            "--gpus-per-host",
            "8",
            "--base-port",
            "30000",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let started = Instant::now();
    loop {
        let mut line = String::new();
        assert!(
            std::io::BufRead::read_line(&mut out, &mut line).unwrap() > 0,
            "fleet exited"
        );
        if line.starts_with("fleet ready") {
            break;
        }
    }
    println!("fleet of 1250 x 8 ready in {:?}", started.elapsed());
    let (cpu_start, _) = proc_stat(pid);
    let window = Instant::now();
    let mut max_rss = 0;
    while window.elapsed() < Duration::from_secs(seconds) {
        std::thread::sleep(Duration::from_secs(1));
        max_rss = max_rss.max(proc_stat(pid).1);
    }
    let (cpu_end, rss_end) = proc_stat(pid);
    println!(
        "over {seconds} s: CPU {:.3} cores, RSS {:.1} MiB at the end, {:.1} MiB at most",
        (cpu_end - cpu_start) / window.elapsed().as_secs_f64(),
        rss_end as f64 / 1_048_576.0,
        max_rss as f64 / 1_048_576.0
    );
    let _ = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
    let _ = child.wait();
}
