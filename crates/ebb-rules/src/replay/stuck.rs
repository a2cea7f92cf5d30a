//! A queue trace's stuck jobs: GPUs asked for by pending jobs while as many GPUs sat idle
//! in the partition that ran them. More GPUs would not have started such a job (it is held,
//! on a dependency, over a limit, or waits on something else), so it is not demand.
//!
//! The console's own queue leaves them out at the source: it reads each pending job's
//! reason and counts only jobs waiting for nodes (`slurm_pending_gpus`, README "Slurm"). A
//! queue recorded elsewhere has no reasons; with a [`IDLE_COLUMN`] beside its
//! [`PENDING_COLUMN`] the same jobs are told by what the partition did: pending GPUs that
//! the idle GPUs could all have held, minute after minute for [`STUCK_AFTER_MINUTES`] or
//! more (a shorter stretch is Slurm's own scheduling delay: the job starts on those idle
//! GPUs). When fewer GPUs sat idle than were pending, the pending ones count as demand: some
//! wait for nodes, and which cannot be told (nor whether the idle GPUs were scattered over
//! nodes a job needs whole), so the trace errs towards demand, not towards shortfall.
//! [`super::trace::Trace::from_csv`] takes them out of `demand`, `slurm_demand_gpus` and
//! `slurm_pending_gpus` and keeps how many it took each minute; [`sentence`] says so.

use super::trace::Trace;
use crate::suggest::queue::DEMAND_METRIC;

/// The partition's idle GPUs each minute (its GPUs no job held), as recorded.
pub const IDLE_COLUMN: &str = "slurm_idle_gpus";
/// The GPUs pending jobs asked for each minute.
pub const PENDING_COLUMN: &str = "slurm_pending_gpus";
/// Pending GPUs with as many idle for this many minutes in a row are stuck.
pub const STUCK_AFTER_MINUTES: usize = 3;

/// Each minute's stuck GPUs: the pending GPUs, in every stretch of at least
/// [`STUCK_AFTER_MINUTES`] minutes in which some were pending and at least as many idle; 0
/// elsewhere (an empty cell is 0).
pub fn stuck_gpus(pending: &[Option<f64>], idle: &[Option<f64>]) -> Vec<f64> {
    let both: Vec<f64> = pending
        .iter()
        .zip(idle)
        .map(|(pending, idle)| {
            let (pending, idle) = (pending.unwrap_or(0.0), idle.unwrap_or(0.0));
            if pending > 0.0 && idle >= pending {
                pending
            } else {
                0.0
            }
        })
        .collect();
    let mut out = vec![0.0; both.len()];
    let mut start = 0;
    while start < both.len() {
        if both[start] == 0.0 {
            start += 1;
            continue;
        }
        let end = (start..both.len())
            .find(|&t| both[t] == 0.0)
            .unwrap_or(both.len());
        if end - start >= STUCK_AFTER_MINUTES {
            out[start..end].copy_from_slice(&both[start..end]);
        }
        start = end;
    }
    out
}

/// What the trace says of its stuck jobs, as one sentence: how many GPU-minutes pended
/// beside idle GPUs and were taken out of the demand, or, without the idle column, that a
/// job pending for another reason counts as demand.
pub fn sentence(trace: &Trace) -> String {
    if trace.stuck_gpus().is_none() {
        return format!(
            "Without a `{IDLE_COLUMN}` column, a job pending for another reason than nodes (held, on a dependency) counts as demand here; the console's own queue counts only jobs waiting for nodes."
        );
    }
    let Some((gpu_minutes, share_pct)) = taken(trace) else {
        return format!(
            "No job pended for {STUCK_AFTER_MINUTES} minutes or more while the partition had GPUs idle (`{IDLE_COLUMN}`): every GPU asked for is demand."
        );
    };
    format!(
        "{gpu_minutes:.0} GPU-minutes ({share_pct:.1}% of what the queue asked for) pended {STUCK_AFTER_MINUTES} minutes or more while the partition had at least as many GPUs idle (`{IDLE_COLUMN}`): jobs held, on a dependency or over a limit, which more GPUs would not have started. They are taken out of `demand`, `{DEMAND_METRIC}` and `{PENDING_COLUMN}`, as the console does not count them (it reads each job's reason)."
    )
}

/// The stuck jobs taken out of `trace`'s demand: GPU-minutes and their share of what the
/// queue asked for, % (`None` when the trace does not tell them or none was stuck).
pub fn taken(trace: &Trace) -> Option<(f64, f64)> {
    let stuck: f64 = trace.stuck_gpus()?.iter().sum();
    let asked = stuck + trace.demand().iter().sum::<f64>();
    (stuck > 0.0).then(|| (stuck, 100.0 * stuck / asked))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cells(values: &[f64]) -> Vec<Option<f64>> {
        values.iter().map(|&v| Some(v)).collect()
    }

    #[test]
    fn pending_beside_idle_gpus_for_three_minutes_is_stuck_and_a_shorter_wait_is_not() {
        // Minutes 0-1: 4 pending, 8 idle (the scheduler's delay). 3-7: 2 pending, 6 idle
        // (stuck). 9-12: 8 pending, 2 idle (some wait for nodes: all demand). 13: none idle.
        let pending = cells(&[
            4.0, 4.0, 0.0, 2.0, 2.0, 2.0, 2.0, 2.0, 0.0, 8.0, 8.0, 8.0, 8.0, 4.0,
        ]);
        let idle = cells(&[
            8.0, 8.0, 8.0, 6.0, 6.0, 6.0, 6.0, 6.0, 6.0, 2.0, 2.0, 2.0, 2.0, 0.0,
        ]);
        assert_eq!(
            stuck_gpus(&pending, &idle),
            vec![
                0.0, 0.0, 0.0, 2.0, 2.0, 2.0, 2.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
            ]
        );
        // An empty cell is 0: it ends a stretch.
        let pending = vec![Some(3.0), None, Some(3.0), Some(3.0), Some(3.0)];
        let idle = cells(&[5.0, 5.0, 5.0, 5.0, 5.0]);
        assert_eq!(stuck_gpus(&pending, &idle), vec![0.0, 0.0, 3.0, 3.0, 3.0]);
    }
}
