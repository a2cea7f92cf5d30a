//! `GET /metrics`: the agent's readings in Prometheus text format. Pure: values in, text out.
//! A reading the card cannot give is left out, never written as 0.

use ebb_wire::agent::{GpuList, Lease, LeaseState};
use std::collections::HashMap;
use std::fmt::Write as _;

/// Renders every series for one host: the gauges, the Xid counter, and which pool holds each
/// leased GPU.
pub fn render(
    list: &GpuList,
    backend: &str,
    holders: &HashMap<String, String>,
    leases: &[Lease],
) -> String {
    let host = escape(&list.host);
    let mut out = String::with_capacity(256 + list.gpus.len() * 1024);
    let _ = writeln!(
        out,
        "# HELP ebb_agent_info The agent's version and GPU backend."
    );
    let _ = writeln!(out, "# TYPE ebb_agent_info gauge");
    let _ = writeln!(
        out,
        "ebb_agent_info{{host=\"{host}\",version=\"{}\",backend=\"{}\"}} 1",
        env!("CARGO_PKG_VERSION"),
        escape(backend)
    );
    type Reading = fn(&ebb_wire::agent::Gpu) -> Option<f64>;
    let gauges: [(&str, &str, Reading); 12] = [
        (
            "ebb_gpu_healthy",
            "1 when the GPU answers, 0 when it is lost.",
            |gpu| Some(f64::from(u8::from(gpu.healthy))),
        ),
        ("ebb_gpu_utilization_percent", "GPU utilization.", |gpu| {
            gpu.gpu_util_pct.map(f64::from)
        }),
        (
            "ebb_gpu_memory_utilization_percent",
            "Memory controller utilization.",
            |gpu| gpu.memory_util_pct.map(f64::from),
        ),
        ("ebb_gpu_memory_used_bytes", "GPU memory in use.", |gpu| {
            gpu.memory_used_mib.map(|mib| f64::from(mib) * 1_048_576.0)
        }),
        ("ebb_gpu_memory_total_bytes", "GPU memory in all.", |gpu| {
            gpu.memory_total_mib.map(|mib| f64::from(mib) * 1_048_576.0)
        }),
        ("ebb_gpu_temperature_celsius", "GPU temperature.", |gpu| {
            gpu.temperature_c.map(f64::from)
        }),
        ("ebb_gpu_power_draw_watts", "Power draw.", |gpu| {
            gpu.power_draw_w.map(f64::from)
        }),
        ("ebb_gpu_power_limit_watts", "Power limit.", |gpu| {
            gpu.power_limit_w.map(f64::from)
        }),
        ("ebb_gpu_sm_clock_hertz", "SM clock.", |gpu| {
            gpu.sm_clock_mhz.map(|mhz| f64::from(mhz) * 1e6)
        }),
        (
            "ebb_gpu_ecc_corrected_errors",
            "Volatile corrected ECC errors.",
            |gpu| gpu.ecc_corrected.map(|n| n as f64),
        ),
        (
            "ebb_gpu_ecc_uncorrected_errors",
            "Volatile uncorrected ECC errors.",
            |gpu| gpu.ecc_uncorrected.map(|n| n as f64),
        ),
        ("ebb_gpu_retired_pages", "Memory pages retired.", |gpu| {
            gpu.retired_pages.map(f64::from)
        }),
    ];
    for (name, help, read) in gauges {
        let _ = writeln!(out, "# HELP {name} {help}");
        let _ = writeln!(out, "# TYPE {name} gauge");
        for gpu in &list.gpus {
            if let Some(value) = read(gpu) {
                let _ = writeln!(out, "{name}{{{}}} {value}", gpu_labels(&host, gpu));
            }
        }
    }
    let _ = writeln!(out, "# HELP ebb_gpu_leased 1 when a lease holds the GPU.");
    let _ = writeln!(out, "# TYPE ebb_gpu_leased gauge");
    for gpu in &list.gpus {
        let leased = u8::from(holders.contains_key(&gpu.uuid));
        let _ = writeln!(out, "ebb_gpu_leased{{{}}} {leased}", gpu_labels(&host, gpu));
    }
    let _ = writeln!(
        out,
        "# HELP ebb_gpu_spot 1 when the host offers the GPU as spot (its owner may reclaim a lease on it)."
    );
    let _ = writeln!(out, "# TYPE ebb_gpu_spot gauge");
    for gpu in &list.gpus {
        let spot = u8::from(gpu.spot);
        let _ = writeln!(out, "ebb_gpu_spot{{{}}} {spot}", gpu_labels(&host, gpu));
    }
    let _ = writeln!(
        out,
        "# HELP ebb_gpu_xid_errors_total Xid error events seen since the agent started."
    );
    let _ = writeln!(out, "# TYPE ebb_gpu_xid_errors_total counter");
    for gpu in &list.gpus {
        if let Some(count) = gpu.xid_errors {
            let _ = writeln!(
                out,
                "ebb_gpu_xid_errors_total{{{}}} {count}",
                gpu_labels(&host, gpu)
            );
        }
    }
    // One series per held GPU naming its lease and the console's pool, so PromQL can join
    // any GPU reading to its pool (`* on (instance, uuid) group_left (pool)`).
    let _ = writeln!(
        out,
        "# HELP ebb_gpu_lease_info The lease holding the GPU and the console pool it belongs to."
    );
    let _ = writeln!(out, "# TYPE ebb_gpu_lease_info gauge");
    for gpu in &list.gpus {
        let Some(lease_id) = holders.get(&gpu.uuid) else {
            continue;
        };
        let pool = leases
            .iter()
            .find(|lease| &lease.id == lease_id)
            .map_or("", |lease| lease.pool_id.as_str());
        let _ = writeln!(
            out,
            "ebb_gpu_lease_info{{{},lease_id=\"{}\",pool=\"{}\"}} 1",
            gpu_labels(&host, gpu),
            escape(lease_id),
            escape(pool)
        );
    }
    let _ = writeln!(
        out,
        "# HELP ebb_leases Leases by state; released counts those kept, released within the retention (lease_retention_h)."
    );
    let _ = writeln!(out, "# TYPE ebb_leases gauge");
    for (state, label) in [
        (LeaseState::Active, "active"),
        (LeaseState::Releasing, "releasing"),
        (LeaseState::Released, "released"),
    ] {
        let count = leases.iter().filter(|lease| lease.state == state).count();
        let _ = writeln!(
            out,
            "ebb_leases{{host=\"{host}\",state=\"{label}\"}} {count}"
        );
    }
    out
}

fn gpu_labels(host: &str, gpu: &ebb_wire::agent::Gpu) -> String {
    format!(
        "host=\"{host}\",index=\"{}\",uuid=\"{}\",model=\"{}\"",
        gpu.index,
        escape(&gpu.uuid),
        escape(&gpu.model)
    )
}

/// Escapes a label value: backslash, double quote and newline.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use ebb_wire::agent::Gpu;

    #[test]
    fn a_memory_total_not_read_is_left_out_not_written_as_zero() {
        let gpu = |index: u32, memory_total_mib: Option<u32>| Gpu {
            index,
            uuid: format!("GPU-{index}"),
            model: "A100".into(),
            memory_total_mib,
            healthy: true,
            ..Gpu::default()
        };
        let list = GpuList {
            host: "h".into(),
            sampled_at_ms: 0,
            gpus: vec![gpu(0, Some(1024)), gpu(1, None)],
        };
        let text = render(&list, "nvml", &HashMap::new(), &[]);
        let totals: Vec<&str> = text
            .lines()
            .filter(|line| line.starts_with("ebb_gpu_memory_total_bytes{"))
            .collect();
        assert_eq!(
            totals,
            [
                "ebb_gpu_memory_total_bytes{host=\"h\",index=\"0\",uuid=\"GPU-0\",model=\"A100\"} 1073741824"
            ]
        );
    }
}
