//! Flaps: an action undone inside the paid unit it bought. A replay counts them per GPU
//! from each GPU's own run ([`crate::replay::sim::flapped_runs`], in
//! [`crate::replay::Replay::flapped`]), which the search reads; the functions here count
//! them from a held count series alone, for a pool released newest first (a layer of the
//! held stack is then one GPU's history). Two ways, per GPU:
//!
//! - a GPU **rented and released** before its first paid unit ended: the scale-out that
//!   rented it is undone (it paid a unit for less than a unit of use);
//! - a GPU **released and rented again** before the unit it had paid for ended: the
//!   scale-in is undone (the time left was paid, and the new rental pays again).
//!
//! A flap is counted once per action (the minute of the undone scale-out or scale-in),
//! however many of its GPUs were undone. What a flap cost is already in the replay's bill
//! (each run pays its own started units); the search prices each one on top
//! ([`super::FLAP_PENALTY_HOURS`]): an order or release undone is churn an operator sees.

/// The minutes (ascending, distinct) of the actions undone inside their paid unit, for a
/// pool that held `initial` GPUs before minute 0 and `held[t]` after minute `t`'s decision,
/// paying per started unit of `unit_minutes`.
pub fn flap_minutes(held: &[u32], initial: u32, unit_minutes: u32) -> Vec<u32> {
    let mut minutes: Vec<u32> = flapped_gpus(held, initial, unit_minutes)
        .into_iter()
        .map(|(minute, _)| minute)
        .collect();
    minutes.dedup();
    minutes
}

/// Each GPU undone inside its paid unit: `(the minute of the action it undid, its layer)`,
/// sorted (see [`flap_minutes`]).
pub fn flapped_gpus(held: &[u32], initial: u32, unit_minutes: u32) -> Vec<(u32, u32)> {
    let unit = unit_minutes.max(1);
    let peak = held.iter().copied().max().unwrap_or(0).max(initial) as usize;
    // Per layer: when its current run began (the GPUs held before minute 0 count from 0,
    // and are not a rental this trace saw) and, once released, until when it was paid.
    let mut run_start = vec![0u32; peak];
    let mut rented_here = vec![false; peak];
    let mut released: Vec<Option<(u32, u32)>> = vec![None; peak];
    let mut out = Vec::new();
    let mut before = initial as usize;
    for (t, &now) in held.iter().enumerate() {
        let (t, now) = (t as u32, now as usize);
        if now > before {
            for layer in before..now {
                if let Some((at, paid_until)) = released[layer].take()
                    && t < paid_until
                {
                    out.push((at, layer as u32));
                }
                run_start[layer] = t;
                rented_here[layer] = true;
            }
        } else if now < before {
            for layer in now..before {
                let start = run_start[layer];
                let held_for = (t - start).max(1);
                if rented_here[layer] && held_for < unit {
                    out.push((start, layer as u32));
                }
                released[layer] = Some((t, start + held_for.div_ceil(unit) * unit));
            }
        }
        before = now;
    }
    // A layer may be undone twice by one action (rented and released in its first unit,
    // then rented again within it): once.
    out.sort_unstable();
    out.dedup();
    out
}

/// Of `flapped` ([`flapped_gpus`]), those of actions in `from..to`: `(actions, GPUs)`.
pub fn count_in(flapped: &[(u32, u32)], from: u32, to: u32) -> (usize, usize) {
    let part = &flapped
        [flapped.partition_point(|&(m, _)| m < from)..flapped.partition_point(|&(m, _)| m < to)];
    let mut actions = 0;
    let mut last = None;
    for &(minute, _) in part {
        if last != Some(minute) {
            actions += 1;
            last = Some(minute);
        }
    }
    (actions, part.len())
}
