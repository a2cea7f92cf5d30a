//! What one `NvmlProbe::read` costs on 8 GPUs, through nvml-wrapper and the fake NVML.
//!
//! The fake answers from memory, so this is the probe's own cost (about 14 NVML calls a
//! card through nvml-wrapper, the conversions, the Xid poll), not the driver's: on real
//! hardware each NVML call adds its driver round trip on top.
//!
//! `cargo bench -p ebb-agent --bench nvml_sample`

#[path = "../tests/fake_nvml/fake.rs"]
mod fake;

use ebb_agent::GpuProbe;
use ebb_agent::nvml::NvmlProbe;
use std::time::{Duration, Instant};

const GPUS: u32 = 8;
const WARM_UP_READS: usize = 200;
const MEASURED_READS: usize = 5_000;

fn main() {
    let script: String = (0..GPUS)
        .map(|index| {
            format!(
                "gpu {index} uuid=GPU-{index:08x}-0000-0000-0000-000000000000 \
                 name=NVIDIA H800 mem_total_mib=81920 mem_used_mib=40960 util=63 mem_util=40 \
                 temp=64 power_mw=512000 power_limit_mw=700000 sm_clock=1980 mem_clock=2619 \
                 ecc_corrected=2 ecc_uncorrected=0 retired_sbe=1 retired_dbe=0 \
                 procs=1000:20480,1001:20480 xids=\n"
            )
        })
        .collect();
    let fake = fake::FakeNvml::build("bench-nvml-sample", &script);
    let probe = NvmlProbe::open(Some(fake.library())).expect("the fake NVML opens");
    let first = probe.read(0);
    assert_eq!(first.len(), GPUS as usize);
    assert!(
        first
            .iter()
            .all(|gpu| gpu.healthy && gpu.power_draw_w.is_some() && gpu.xid_errors.is_some()),
        "every fake card reads in full: {first:?}"
    );

    for _ in 0..WARM_UP_READS {
        std::hint::black_box(probe.read(0));
    }
    let mut reads: Vec<Duration> = (0..MEASURED_READS)
        .map(|_| {
            let started = Instant::now();
            std::hint::black_box(probe.read(0));
            started.elapsed()
        })
        .collect();
    reads.sort_unstable();
    let micros = |duration: Duration| duration.as_secs_f64() * 1e6;
    let median = micros(reads[reads.len() / 2]);
    let p99 = micros(reads[reads.len() * 99 / 100]);
    println!(
        "nvml_sample: {GPUS} GPUs, {MEASURED_READS} reads: median {median:.1} us per read \
         ({:.2} us per GPU), p99 {p99:.1} us per read",
        median / f64::from(GPUS)
    );
}
