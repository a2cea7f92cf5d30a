//! The NVML probe through the real nvml-wrapper code path, against a fake
//! `libnvidia-ml.so.1` built from `tests/fake_nvml/fake_nvml.c` and scripted per test.
//! Linux only: the fake is an ELF shared library built with the system C compiler.
#![cfg(target_os = "linux")]

#[path = "../fake_nvml/fake.rs"]
mod fake;

use ebb_agent::GpuProbe;
use ebb_agent::nvml::{NvmlProbe, NvmlProbeError};
use ebb_wire::agent::{Gpu, GpuProcess};
use fake::FakeNvml;
use std::path::Path;

fn open(name: &str, script: &str) -> NvmlProbe {
    let fake = FakeNvml::build(name, script);
    NvmlProbe::open(Some(fake.library())).unwrap()
}

fn open_error(name: &str, script: &str) -> NvmlProbeError {
    let fake = FakeNvml::build(name, script);
    NvmlProbe::open(Some(fake.library())).unwrap_err()
}

/// Everything a fully supported card reports, as the first script below gives it.
fn a100(index: u32, uuid: &str) -> Gpu {
    Gpu {
        index,
        uuid: uuid.to_string(),
        model: "NVIDIA A100-SXM4-80GB".to_string(),
        memory_total_mib: Some(81_920),
        healthy: true,
        health_reason: None,
        lease_id: None,
        memory_used_mib: Some(2_048),
        gpu_util_pct: Some(37.0),
        memory_util_pct: Some(12.0),
        temperature_c: Some(51.0),
        power_draw_w: Some(123.456),
        power_limit_w: Some(400.0),
        sm_clock_mhz: Some(1_410),
        memory_clock_mhz: Some(1_593),
        processes: Some(vec![
            GpuProcess {
                pid: 4242,
                name: Some("proc-4242".to_string()),
                used_memory_mib: Some(1_024),
            },
            GpuProcess {
                pid: 4243,
                name: Some("proc-4243".to_string()),
                used_memory_mib: None,
            },
        ]),
        ecc_corrected: Some(3),
        ecc_uncorrected: Some(1),
        retired_pages: Some(3),
        xid_errors: Some(2),
        spot: false,
    }
}

const A100_READINGS: &str = "name=NVIDIA A100-SXM4-80GB mem_total_mib=81920 \
    mem_used_mib=2048 util=37 mem_util=12 temp=51 power_mw=123456 power_limit_mw=400000 \
    sm_clock=1410 mem_clock=1593 ecc_corrected=3 ecc_uncorrected=1 retired_sbe=1 \
    retired_dbe=2 procs=4242:1024,4243:na xids=79,48";

#[test]
fn nvml_reports_exactly_what_the_cards_say() {
    // `static_once`: the fake answers UUID, name and power limit once per card, so a
    // second read that asked again would lose them.
    let script = format!(
        "# two cards, everything supported\nstatic_once\n\
         gpu 0 uuid=GPU-aaaaaaaa-0000-0000-0000-000000000000 {A100_READINGS}\n\
         gpu 1 uuid=GPU-bbbbbbbb-0000-0000-0000-000000000000 {A100_READINGS}\n"
    );
    let probe = open("exact", &script);
    assert_eq!(probe.backend(), "nvml");
    let expected = vec![
        a100(0, "GPU-aaaaaaaa-0000-0000-0000-000000000000"),
        a100(1, "GPU-bbbbbbbb-0000-0000-0000-000000000000"),
    ];
    assert_eq!(probe.read(1_000), expected);
    // Xid events are counted once, not again on every read.
    assert_eq!(probe.read(2_000), expected);
}

#[test]
fn nvml_readings_a_card_cannot_give_are_none_not_zero() {
    let script = "gpu 0 uuid=GPU-cccc name=Tesla V100-SXM2-32GB mem_total_mib=32768 \
        mem_used_mib=100 util=5 mem_util=1 temp=err:999 power_mw=not_supported \
        power_limit_mw=300000 sm_clock=1530 mem_clock=877 ecc_corrected=0 ecc_uncorrected=0 \
        retired_sbe=0 retired_dbe=0 procs= xids=\n";
    let probe = open("not-supported", script);
    let expected = Gpu {
        index: 0,
        uuid: "GPU-cccc".to_string(),
        model: "Tesla V100-SXM2-32GB".to_string(),
        memory_total_mib: Some(32_768),
        healthy: true,
        memory_used_mib: Some(100),
        gpu_util_pct: Some(5.0),
        memory_util_pct: Some(1.0),
        temperature_c: None,
        power_draw_w: None,
        power_limit_w: Some(300.0),
        sm_clock_mhz: Some(1_530),
        memory_clock_mhz: Some(877),
        processes: Some(Vec::new()),
        ecc_corrected: Some(0),
        ecc_uncorrected: Some(0),
        retired_pages: Some(0),
        xid_errors: Some(0),
        spot: false,
        ..Gpu::default()
    };
    assert_eq!(probe.read(0), vec![expected]);
}

#[test]
fn nvml_a_card_that_supports_almost_nothing_reads_as_unknowns() {
    // Only the UUID: every other key left out is NOT_SUPPORTED in the fake.
    let probe = open("bare", "gpu 0 uuid=GPU-dddd\n");
    let expected = Gpu {
        index: 0,
        uuid: "GPU-dddd".to_string(),
        model: "unknown".to_string(),
        memory_total_mib: None,
        healthy: true,
        ..Gpu::default()
    };
    assert_eq!(probe.read(0), vec![expected]);
}

#[test]
fn nvml_a_lost_card_is_unhealthy_and_the_others_read_on() {
    let script = format!(
        "gpu 0 uuid=GPU-lost-at-open {A100_READINGS} lost=open\n\
         gpu 1 uuid=GPU-lost-already {A100_READINGS} lost=yes\n\
         gpu 2 uuid=GPU-lost-later {A100_READINGS} lost_after_reads=1\n\
         gpu 3 uuid=GPU-fine {A100_READINGS}\n"
    );
    let probe = open("lost", &script);
    let unknown_and_lost = |index: u32| Gpu {
        index,
        uuid: format!("unknown-gpu-{index}"),
        model: "unknown".to_string(),
        healthy: false,
        ..Gpu::default()
    };

    let first = probe.read(0);
    assert_eq!(first.len(), 4);
    for gpu in &first[..2] {
        let reason = gpu.health_reason.as_deref().unwrap();
        assert!(reason.contains("fallen off the bus"), "{reason}");
        assert_eq!(
            Gpu {
                health_reason: None,
                ..gpu.clone()
            },
            unknown_and_lost(gpu.index)
        );
    }
    assert_eq!(first[2], a100(2, "GPU-lost-later"));
    assert_eq!(first[3], a100(3, "GPU-fine"));

    let second = probe.read(1_000);
    assert_eq!(second[..2], first[..2]);
    let lost_later = &second[2];
    assert!(!lost_later.healthy);
    let reason = lost_later.health_reason.as_deref().unwrap();
    assert!(reason.contains("GPU is lost"), "{reason}");
    // Static facts stay; every dynamic reading is gone.
    assert_eq!(
        *lost_later,
        Gpu {
            index: 2,
            uuid: "GPU-lost-later".to_string(),
            model: "NVIDIA A100-SXM4-80GB".to_string(),
            memory_total_mib: Some(81_920),
            power_limit_w: Some(400.0),
            healthy: false,
            health_reason: Some(reason.to_string()),
            ..Gpu::default()
        }
    );
    assert_eq!(second[3], a100(3, "GPU-fine"));
}

#[test]
fn nvml_a_missing_library_asks_whether_the_driver_is_installed() {
    let missing = Path::new("/nonexistent/ebb/libnvidia-ml.so.1");
    let error = NvmlProbe::open(Some(missing)).unwrap_err();
    assert!(
        matches!(error, NvmlProbeError::LibraryNotFound { .. }),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(
        message.starts_with("NVML library not found at /nonexistent/ebb/libnvidia-ml.so.1"),
        "{message}"
    );
    assert!(
        message.ends_with("is the NVIDIA driver installed?"),
        "{message}"
    );
}

#[test]
fn nvml_default_library_opens_or_says_why() {
    // On a host without the NVIDIA driver (CI, this workspace's machines) opening fails
    // with a clear error; on a GPU host it opens and sees real cards. Never a panic.
    match NvmlProbe::open(None) {
        Err(error) => {
            let message = error.to_string();
            assert!(message.contains("libnvidia-ml.so.1"), "{message}");
        }
        Ok(probe) => {
            let gpus = probe.read(0);
            assert!(!gpus.is_empty());
            assert!(
                gpus.iter()
                    .all(|gpu| gpu.uuid.starts_with("GPU-") || !gpu.healthy)
            );
        }
    }
}

#[test]
fn nvml_a_driver_that_is_not_loaded_is_named() {
    let error = open_error("driver-not-loaded", "init=err:9\ngpu 0 uuid=GPU-eeee\n");
    assert!(
        matches!(error, NvmlProbeError::DriverNotLoaded { .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains("modprobe nvidia"), "{error}");
}

#[test]
fn nvml_a_host_without_gpus_is_an_error() {
    let error = open_error("no-gpus", "driver=550.54.15\n");
    assert!(matches!(error, NvmlProbeError::NoGpus { .. }), "{error:?}");
    assert!(error.to_string().contains("nvidia-smi -L"), "{error}");
}
