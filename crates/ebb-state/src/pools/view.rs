//! The views built from the store: a pool with its spend, the slider's preview.
//!
//! [`priced_pool`] is the one price function for every figure (previews, spend, budgets,
//! the rules' cost deltas): the base at the pool's cheapest priced region, each GPU held at
//! its host's region (oldest first), the next GPUs where placement would put them; spot
//! leases are priced apart, at their region's spot price. [`scale_preview`] is the slider's
//! answer: the cost before and after, which leases would go (in placement's release order,
//! each named with its host, GPUs, utilization and paid unit), what releasing them would stop
//! (`ReleaseWarning::BusyGpus`, with the grace their agents give) and whether to ask first;
//! [`check_release_choice`] checks the leases the operator ticked (held by the pool, once
//! each, no more than the change gives back).

use super::*;
use ebb_wire::phrase::Phrase;
use ebb_wire::reasons::{DEFAULT_RELEASE_GRACE_S, PriceProblem, ReleaseWarning};

/// A pool with what the enforcer last saw and its spend.
pub fn pool_view(
    pool: &Pool,
    status: Option<(PoolStatus, i64)>,
    spans: &[RegionSpan],
    catalog: &Catalog,
    now: i64,
) -> PoolView {
    let checked_at_ms = status.as_ref().map(|(_, at)| *at);
    let status = status.map(|(status, _)| status).unwrap_or_default();
    let enforced = checked_at_ms.is_some_and(|at| now - at <= ENFORCER_STALE_MS);
    let converged = status.actual == pool.desired && status.pending == 0;
    let (phase, notes) = if !enforced {
        (PoolPhase::NotEnforced, vec![PoolNote::NotEnforced])
    } else if converged && status.held_to_unit_end == 0 {
        // Converged, but spot paused is still worth saying: new GPUs go on demand.
        let paused = status
            .notes
            .iter()
            .filter(|note| matches!(note, PoolNote::SpotPaused { .. }))
            .cloned()
            .collect();
        (PoolPhase::Converged, paused)
    } else if status.actual + status.pending < pool.desired
        && (status.short > 0 || status.hosts.iter().any(|h| h.failed > 0))
    {
        (PoolPhase::Blocked, status.notes.clone())
    } else if status.actual + status.pending < pool.desired {
        (PoolPhase::ScalingOut, status.notes.clone())
    } else {
        (PoolPhase::ScalingIn, status.notes.clone())
    };
    let (spend, spend_problem) = spend_view(pool, &status, spans, catalog, now);
    let split = pool.split(pool.desired, spot_open(pool, &status));
    PoolView {
        id: pool.id.clone(),
        name: pool.name.clone(),
        model: pool.model.clone(),
        regions: pool.regions.clone(),
        min: pool.min,
        max: pool.max,
        desired: pool.desired,
        base_gpus: pool.base_gpus,
        term: pool.term,
        overlay: pool.overlay,
        placement: pool.placement,
        interruptible: pool.interruptible,
        release_at_unit_end: pool.release_at_unit_end,
        spot: pool.spot,
        split,
        spot_held: status.spot,
        actual: status.actual,
        starting: status.starting,
        pending: status.pending,
        releasing: status.releasing,
        lost: status.lost,
        held_to_unit_end: status.held_to_unit_end,
        phase,
        notes,
        checked_at_ms,
        hosts: status.hosts,
        leases: status.leases,
        spend,
        spend_problem,
    }
}

/// The regions where the enforcer last found spot paused for the pool (its notes).
pub fn spot_paused(status: &PoolStatus) -> Vec<String> {
    status
        .notes
        .iter()
        .filter_map(|note| match note {
            PoolNote::SpotPaused { region, .. } => Some(region.clone()),
            _ => None,
        })
        .collect()
}

/// Whether any of the pool's regions may take spot now (not all paused).
fn spot_open(pool: &Pool, status: &PoolStatus) -> bool {
    let paused = spot_paused(status);
    pool.regions.iter().any(|region| !paused.contains(region))
}

/// The catalog entry that prices a pool: its cheapest priced region (by the overlay's hour).
pub(super) fn price_entry<'c>(
    pool: &Pool,
    catalog: &'c Catalog,
) -> Result<&'c ebb_cost::PriceEntry, PriceProblem> {
    if pool.regions.is_empty() {
        return Err(PriceProblem::NoRegion);
    }
    let mut best: Option<(&ebb_cost::PriceEntry, i64)> = None;
    for region in &pool.regions {
        // `find` fails only when the catalog has no entry there.
        if let Ok(entry) = catalog.find(&pool.model, region) {
            let hour = pool
                .overlay
                .price(entry)
                .map(|m| m.fen())
                .unwrap_or(i64::MAX);
            if best.is_none_or(|(_, b)| hour < b) {
                best = Some((entry, hour));
            }
        }
    }
    best.map(|(entry, _)| entry)
        .ok_or_else(|| PriceProblem::NoPrice {
            model: pool.model.clone(),
            regions: pool.regions.clone(),
        })
}

/// A lease's life and the region of its host (`None`: the host is gone from the registry;
/// then it is priced where the base is).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionSpan {
    pub span: LeaseSpan,
    pub region: Option<String>,
    /// It held spot GPUs: priced at spot.
    pub spot: bool,
    /// The lease's host and id (`None` where not known).
    pub lease: Option<(String, String)>,
}

/// The pool as it is priced now: one price function for every figure (previews, spend,
/// budgets, the rules' cost deltas). The base at [`price_entry`]; the GPUs held (active,
/// oldest first) at their hosts' regions; the next GPUs where placement would put them
/// among the hosts with free GPUs, in its order (without a status or a free GPU: where the
/// base is).
pub fn priced_pool(
    pool: &Pool,
    status: Option<&PoolStatus>,
    catalog: &Catalog,
) -> Result<ebb_cost::PricedPool, PriceProblem> {
    let base = price_entry(pool, catalog)?;
    let entry = |region: &str| catalog.find(&pool.model, region).unwrap_or(base);
    let mut held: Vec<(ebb_cost::PriceEntry, u32)> = Vec::new();
    let mut more: Vec<(ebb_cost::PriceEntry, u32)> = Vec::new();
    let mut next = base;
    if let Some(status) = status {
        // Spot leases are priced apart (`spot_month_spend`, the preview's spot share).
        let active = status
            .leases
            .iter()
            .filter(|l| l.state == PoolLeaseState::Active && !l.spot);
        held = held_by_region(active, &entry);
        // Where placement would put every GPU up to the pool's max, in its order.
        let prices = pool.hourly_prices(catalog);
        let candidates = rent_candidates(status, &prices);
        let held_gpus: u32 = held.iter().map(|(_, n)| n).sum();
        let placed = placement::place(
            pool.max.saturating_sub(held_gpus).max(1),
            &candidates,
            pool.placement,
        );
        for &(i, count) in &placed.takes {
            more.push((entry(candidates[i].region).clone(), count));
        }
        if let Some(&(i, _)) = placed.takes.last() {
            next = entry(candidates[i].region);
        }
    }
    Ok(ebb_cost::PricedPool {
        plan: pool.plan(),
        base: base.clone(),
        held,
        more,
        next: next.clone(),
    })
}

/// Leases' GPUs oldest first, a run of one region as one entry: what the base covers first
/// and a release keeps longest.
fn held_by_region<'l>(
    leases: impl Iterator<Item = &'l PoolLeaseView>,
    entry: &dyn Fn(&str) -> &'l ebb_cost::PriceEntry,
) -> Vec<(ebb_cost::PriceEntry, u32)> {
    let mut leases: Vec<&PoolLeaseView> = leases.collect();
    leases.sort_by_key(|l| (l.granted_at_ms, l.lease_id.clone()));
    let mut held: Vec<(ebb_cost::PriceEntry, u32)> = Vec::new();
    for lease in leases {
        let gpus = u32::try_from(lease.gpu_uuids.len().max(1)).unwrap_or(u32::MAX);
        let at = entry(&lease.region);
        match held.last_mut() {
            Some((last, count)) if last.region == at.region => *count += gpus,
            _ => held.push((at.clone(), gpus)),
        }
    }
    held
}

/// The hosts with free GPUs, as placement weighs them for a rent.
fn rent_candidates<'s>(
    status: &'s PoolStatus,
    prices: &BTreeMap<String, i64>,
) -> Vec<placement::Candidate<'s>> {
    rent_candidates_in(status, &status.free, prices)
}

/// [`rent_candidates`] over `free` (the free on-demand GPUs, or the free spot ones).
fn rent_candidates_in<'s>(
    status: &'s PoolStatus,
    free: &'s [ebb_wire::pools::HostFree],
    prices: &BTreeMap<String, i64>,
) -> Vec<placement::Candidate<'s>> {
    free.iter()
        .map(|free| placement::Candidate {
            host: &free.host,
            region: &free.region,
            free: free.free,
            held: status
                .hosts
                .iter()
                .find(|h| h.host == free.host)
                .map_or(0, |h| h.leased + h.pending),
            price_fen: prices.get(&free.region).copied(),
        })
        .collect()
}

/// A pricing failure as the pool views carry it.
fn price_problem(error: ebb_cost::CostError) -> PriceProblem {
    use ebb_cost::CostError;
    match error {
        CostError::NoPrice { model, region, .. } => PriceProblem::NoPrice {
            model,
            regions: vec![region],
        },
        CostError::NotOffered {
            model,
            region,
            field,
        } => PriceProblem::NotOffered {
            model,
            region,
            field: field.to_string(),
        },
        // The demand errors belong to plan comparisons, never to a pool's own figures.
        CostError::Overflow
        | CostError::EmptyDemand
        | CostError::DemandTooLong { .. }
        | CostError::DemandTooLarge { .. } => PriceProblem::TooLarge,
    }
}

pub(super) fn spend_view(
    pool: &Pool,
    status: &PoolStatus,
    spans: &[RegionSpan],
    catalog: &Catalog,
    now: i64,
) -> (Option<SpendView>, Option<PriceProblem>) {
    let (month, start, end) = utc_month(now);
    let window = ebb_cost::SpendWindow {
        month_start_ms: start,
        month_end_ms: end,
        now_ms: now,
        base_from_ms: pool.created_at_ms,
    };
    let spend = month_spend(pool, status, spans, catalog, window).and_then(|(spend, spot)| {
        Ok((
            spend,
            spot,
            spot_saved(pool, status, spans, catalog, window)?,
        ))
    });
    match spend {
        Ok((spend, spot, saved)) => (
            Some(SpendView {
                month,
                base_from_ms: window.base_start_ms(),
                month_to_date_fen: spend.month_to_date.fen() + spot.month_to_date.fen(),
                projected_month_fen: spend.projected_month.fen() + spot.projected_month.fen(),
                run_rate_per_hour_fen: spend.run_rate_per_hour.fen() + spot.run_rate_per_hour.fen(),
                gpu_hours: spend.gpu_hours + spot.gpu_hours,
                spot_fen: spot.month_to_date.fen(),
                spot_saved_fen: saved.fen(),
            }),
            None,
        ),
        Err(problem) => (None, Some(problem)),
    }
}

/// A pool's spend over `window` (its `base_from_ms` the pool's creation): the on-demand
/// GPUs through [`priced_pool`] and `ebb_cost::placed_month_spend`, each lease at its
/// host's region, and the spot GPUs apart (`ebb_cost::spot_month_spend`). The one pricing
/// of a month, for the pool view's spend and for showback.
pub fn month_spend(
    pool: &Pool,
    status: &PoolStatus,
    spans: &[RegionSpan],
    catalog: &Catalog,
    window: ebb_cost::SpendWindow,
) -> Result<(ebb_cost::Spend, ebb_cost::SpotSpend), PriceProblem> {
    let on_demand_now = status.actual.saturating_sub(status.spot);
    with_priced_spans(
        pool,
        status,
        spans,
        catalog,
        |priced, on_demand, spot, spot_now| {
            Ok((
                ebb_cost::placed_month_spend(priced, on_demand, window, on_demand_now)?,
                ebb_cost::spot_month_spend(spot, window, spot_now)?,
            ))
        },
    )
}

/// What spot saved the pool over `window`, net (`ebb_cost::PricedPool::spot_net_saving`):
/// its leases all on demand, spot's included, less what it paid for on demand and spot,
/// each reclaim's replacement counted. Negative when spot cost more.
fn spot_saved(
    pool: &Pool,
    status: &PoolStatus,
    spans: &[RegionSpan],
    catalog: &Catalog,
    window: ebb_cost::SpendWindow,
) -> Result<ebb_cost::Money, PriceProblem> {
    // A GPU its owner is taking back ends at the notice's deadline: so known, its
    // replacement (granted in the notice) reads as the same GPU of an all-on-demand pool,
    // not as one more that saving would be counted on until the deadline passes.
    let ending: Vec<RegionSpan> = spans
        .iter()
        .map(|region_span| {
            let deadline = region_span.lease.as_ref().and_then(|(host, id)| {
                status
                    .leases
                    .iter()
                    .find(|lease| &lease.host == host && &lease.lease_id == id)
                    .and_then(|lease| lease.reclaim_deadline_ms)
            });
            let mut span = region_span.clone();
            if span.span.end_ms.is_none()
                && let Some(deadline) = deadline
            {
                span.span.end_ms = Some(deadline.max(span.span.start_ms));
            }
            span
        })
        .collect();
    with_priced_spans(
        pool,
        status,
        &ending,
        catalog,
        |priced, on_demand, spot, _| priced.spot_net_saving(on_demand, spot, window),
    )
}

/// A lease span and the entry that prices it.
type PricedSpan<'e> = (LeaseSpan, &'e ebb_cost::PriceEntry);

/// `price` over the pool as priced now ([`priced_pool`]), its on-demand spans and its spot
/// spans (apart: spot is never on the base and pays spot's started hours), each at its
/// host's region (a host gone: where the base is), and an entry for each spot GPU held now.
fn with_priced_spans<T>(
    pool: &Pool,
    status: &PoolStatus,
    spans: &[RegionSpan],
    catalog: &Catalog,
    price: impl FnOnce(
        &ebb_cost::PricedPool,
        &[PricedSpan<'_>],
        &[PricedSpan<'_>],
        &[&ebb_cost::PriceEntry],
    ) -> Result<T, ebb_cost::CostError>,
) -> Result<T, PriceProblem> {
    let priced = priced_pool(pool, Some(status), catalog)?;
    let entry_of = |region: Option<&str>| {
        region
            .and_then(|region| catalog.find(&pool.model, region).ok())
            .unwrap_or(&priced.base)
    };
    let (spot_spans, spans): (Vec<&RegionSpan>, Vec<&RegionSpan>) =
        spans.iter().partition(|s| s.spot);
    let spans: Vec<PricedSpan<'_>> = spans
        .iter()
        .map(|s| (s.span, entry_of(s.region.as_deref())))
        .collect();
    let spot_spans: Vec<PricedSpan<'_>> = spot_spans
        .iter()
        .map(|s| (s.span, entry_of(s.region.as_deref())))
        .collect();
    let spot_now: Vec<&ebb_cost::PriceEntry> = status
        .leases
        .iter()
        .filter(|l| l.state == PoolLeaseState::Active && l.spot)
        .flat_map(|l| std::iter::repeat_n(entry_of(Some(&l.region)), l.gpu_uuids.len().max(1)))
        .collect();
    price(&priced, &spans, &spot_spans, &spot_now).map_err(price_problem)
}

/// What moving the slider to `to` would do: cost before and after, where GPUs would be
/// rented or released, what is free now, and whether to ask first.
#[allow(
    clippy::too_many_lines,
    reason = "the slider's preview: cost, placement and notes; to be split"
)]
pub fn scale_preview(
    pool: &Pool,
    status: &PoolStatus,
    to: u32,
    release_first: &[String],
    catalog: &Catalog,
    confirm: ConfirmPolicy,
    now: i64,
) -> ScalePreview {
    let from = pool.desired;
    let have = status.actual + status.pending;
    let prices = pool.hourly_prices(catalog);
    let mut rent = Vec::new();
    let mut release = Vec::new();
    let mut short = 0;
    let mut held_to_unit_end = 0;
    let mut released = Vec::new();
    let mut grace_s = DEFAULT_RELEASE_GRACE_S;
    // When GPUs are given back: the active leases kept.
    let mut kept: Option<Vec<&PoolLeaseView>> = None;
    // Spot as the planner takes it: the new count's share where spot GPUs are free, on
    // demand for the rest; on scale-in, spot above the share goes first.
    let spot_prices = pool.spot_prices(catalog);
    let open = spot_open(pool, status) && !spot_prices.is_empty();
    let spot_wanted = pool.split(to, open).spot;
    let mut spot_to = status.spot;
    let mut on_demand_rent: Vec<HostMove> = Vec::new();
    if to > have {
        let need = to - have;
        let spot_need = need.min(spot_wanted.saturating_sub(status.spot));
        let spot_candidates = rent_candidates_in(status, &status.free_spot, &spot_prices);
        let on_spot = placement::place(spot_need, &spot_candidates, pool.placement);
        let candidates = rent_candidates(status, &prices);
        let on_demand = placement::place(
            need - spot_need + on_spot.short,
            &candidates,
            pool.placement,
        );
        short = on_demand.short;
        spot_to += spot_need - on_spot.short;
        let moves = |placed: &placement::Placement, candidates: &[placement::Candidate<'_>]| {
            placed
                .takes
                .iter()
                .map(|&(i, count)| HostMove {
                    host: candidates[i].host.to_string(),
                    region: candidates[i].region.to_string(),
                    count,
                })
                .collect::<Vec<_>>()
        };
        on_demand_rent = moves(&on_demand, &candidates);
        rent = moves(&on_spot, &spot_candidates);
        rent.extend(on_demand_rent.iter().cloned());
    } else if to < have {
        let active: Vec<&PoolLeaseView> = status
            .leases
            .iter()
            .filter(|l| l.state == PoolLeaseState::Active)
            .collect();
        let held: Vec<placement::Held> = active
            .iter()
            .map(|lease| placement::Held {
                lease_id: lease.lease_id.clone(),
                host: lease.host.clone(),
                region: lease.region.clone(),
                util_pct: lease.util_pct,
                price_fen: prices.get(&lease.region).copied(),
                granted_at_ms: lease.granted_at_ms,
                paid_until_ms: placement::paid_until(lease.granted_at_ms, pool.unit_ms(), now),
                safe: lease.checkpoint_at_ms.is_some(),
                chosen: release_first.contains(&lease.lease_id),
            })
            .collect();
        let excess = (have - to).min(status.actual);
        let mut from_spot = excess.min(status.spot.saturating_sub(spot_wanted));
        let from_on_demand = (excess - from_spot).min(status.actual - status.spot);
        from_spot = excess - from_on_demand;
        spot_to = status.spot.saturating_sub(from_spot);
        let at_unit_end = pool.release_at_unit_end && !pool.force_release;
        let mut chosen = placement::Release::default();
        for (spot, count) in [(true, from_spot), (false, from_on_demand)] {
            let kind: Vec<usize> = (0..active.len())
                .filter(|&i| active[i].spot == spot)
                .collect();
            let subset: Vec<placement::Held> = kind.iter().map(|&i| held[i].clone()).collect();
            let part = placement::choose_release(count, &subset, now, at_unit_end);
            chosen.now.extend(part.now.iter().map(|&k| kind[k]));
            chosen.kept.extend(part.kept.iter().map(|&k| kind[k]));
            chosen.deferred += part.deferred;
            chosen.next_due_ms = match (chosen.next_due_ms, part.next_due_ms) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        held_to_unit_end = chosen.deferred;
        kept = Some(
            (0..active.len())
                .filter(|i| !chosen.now.contains(i))
                .map(|i| active[i])
                .collect(),
        );
        released = released_leases(&active, &held, &chosen);
        grace_s = release_grace_s(&active, &released);
        let mut by_host: BTreeMap<(String, String), u32> = BTreeMap::new();
        for i in chosen.now {
            *by_host
                .entry((held[i].host.clone(), held[i].region.clone()))
                .or_default() += 1;
        }
        release = by_host
            .into_iter()
            .map(|((host, region), count)| HostMove {
                host,
                region,
                count,
            })
            .collect();
    }
    let (mut before, mut after, mut problem) = ((0, 0), (0, 0), None);
    // Spot GPUs priced at the cheapest spot the pool may take; the rest through the
    // on-demand pricing.
    let spot_price = spot_prices.values().min().copied();
    let priced = priced_pool(pool, Some(status), catalog).and_then(|priced| {
        // After: the GPUs kept (oldest first), then those rented where they would go.
        let entry = |region: &str| catalog.find(&pool.model, region).unwrap_or(&priced.base);
        let mut held_after: Vec<(ebb_cost::PriceEntry, u32)>;
        if let Some(kept) = &kept {
            held_after = held_by_region(kept.iter().copied().filter(|l| !l.spot), &entry);
        } else {
            held_after = priced.held.clone();
            for take in &on_demand_rent {
                held_after.push((entry(&take.region).clone(), take.count));
            }
        }
        let after_pool = ebb_cost::PricedPool {
            held: held_after,
            more: Vec::new(),
            ..priced.clone()
        };
        ebb_cost::placed_preview(
            &priced.base,
            &priced.plan,
            &priced.at(from.saturating_sub(status.spot)),
            &after_pool.at(to.saturating_sub(spot_to)),
        )
        .map_err(price_problem)
    });
    let spot_hour = spot_price.unwrap_or(0);
    let spot_cost = |count: u32| {
        let hour = i64::from(count) * spot_hour;
        (hour, hour * 730)
    };
    let spot_saving_per_hour_fen = spot_price.and_then(|spot| {
        let on_demand = prices.values().min()?;
        Some(i64::from(spot_to) * (on_demand - spot))
    });
    match priced {
        Ok(preview) => {
            before = (
                preview.before.total.per_hour.fen() + spot_cost(status.spot).0,
                preview.before.total.per_month.fen() + spot_cost(status.spot).1,
            );
            after = (
                preview.after.total.per_hour.fen() + spot_cost(spot_to).0,
                preview.after.total.per_month.fen() + spot_cost(spot_to).1,
            );
        }
        Err(error) => problem = Some(error),
    }
    let delta_hour = after.0 - before.0;
    let change = to.abs_diff(from);
    let confirmation_reason = if change > confirm.above_gpus {
        Some(ConfirmationReason::Gpus {
            change,
            limit: confirm.above_gpus,
        })
    } else if delta_hour.abs() > confirm.above_per_hour_fen {
        Some(ConfirmationReason::CostPerHour {
            delta_fen: delta_hour.abs(),
            limit_fen: confirm.above_per_hour_fen,
        })
    } else {
        None
    };
    ScalePreview {
        pool: pool.name.clone(),
        from,
        to,
        per_hour_before_fen: before.0,
        per_hour_after_fen: after.0,
        per_month_before_fen: before.1,
        per_month_after_fen: after.1,
        delta_per_hour_fen: delta_hour,
        delta_per_month_fen: after.1 - before.1,
        free_now: status.free.iter().map(|f| f.free).sum(),
        free_by_host: status.free.clone(),
        rent,
        release,
        held_to_unit_end,
        short,
        needs_confirmation: confirmation_reason.is_some(),
        confirmation_reason,
        cost_problem: problem,
        release_warning: release_warning(&released, grace_s),
        released,
        split: {
            let base = pool.split(to, open).base;
            GpuSplit {
                base,
                on_demand: to - base - spot_to.min(to - base),
                spot: spot_to,
            }
        },
        spot_saving_per_hour_fen: spot_saving_per_hour_fen.filter(|_| spot_to > 0),
    }
}

/// Whether the operator's choice of leases to give back fits the change to `to`: each one a
/// lease the pool holds, none twice, and no more than the change gives back.
pub fn check_release_choice(
    status: &PoolStatus,
    to: u32,
    release: &[String],
) -> Result<(), PoolError> {
    if release.is_empty() {
        return Ok(());
    }
    let mut seen = std::collections::BTreeSet::new();
    for id in release {
        if !seen.insert(id.as_str()) {
            return Err(refused(
                "release",
                Phrase::new("pool.refuse.releaseTwice").text("lease", id),
            ));
        }
        let held = status
            .leases
            .iter()
            .any(|l| &l.lease_id == id && l.state == PoolLeaseState::Active);
        if !held {
            return Err(refused(
                "release",
                Phrase::new("pool.refuse.releaseNotHeld").text("lease", id),
            ));
        }
    }
    let have = status.actual + status.pending;
    let gives_back = have.saturating_sub(to).min(status.actual);
    let chosen = u32::try_from(release.len()).unwrap_or(u32::MAX);
    if chosen > gives_back {
        return Err(refused(
            "release",
            Phrase::new("pool.refuse.releaseTooMany")
                .phrase(
                    "chosen",
                    Phrase::new(if chosen == 1 {
                        "pool.refuse.leases.one"
                    } else {
                        "pool.refuse.leases.other"
                    })
                    .int("n", chosen),
                )
                .int("to", to)
                .int("have", have)
                .int("gives", gives_back),
        ));
    }
    Ok(())
}

/// The chosen leases, those released now first, then those kept to their unit's end.
fn released_leases(
    active: &[&PoolLeaseView],
    held: &[placement::Held],
    chosen: &placement::Release,
) -> Vec<ebb_wire::pools::ReleasedLease> {
    let now = chosen.now.iter().map(|&i| (i, false));
    let kept = chosen.kept.iter().map(|&i| (i, true));
    now.chain(kept)
        .map(|(i, kept_to_unit_end)| ebb_wire::pools::ReleasedLease {
            lease_id: active[i].lease_id.clone(),
            host: active[i].host.clone(),
            region: active[i].region.clone(),
            gpu_indexes: active[i].gpu_indexes.clone(),
            util_pct: active[i].util_pct,
            busy: active[i]
                .util_pct
                .is_some_and(|pct| pct >= placement::IDLE_PCT),
            paid_until_ms: held[i].paid_until_ms,
            kept_to_unit_end,
            safe: held[i].safe,
            chosen: held[i].chosen,
        })
        .collect()
}

/// The SIGTERM grace the busy leases released now get: the longest their agents report,
/// or the agent's documented default where none says.
fn release_grace_s(active: &[&PoolLeaseView], released: &[ebb_wire::pools::ReleasedLease]) -> u32 {
    released
        .iter()
        .filter(|l| l.busy && !l.kept_to_unit_end)
        .filter_map(|l| {
            active
                .iter()
                .find(|a| a.lease_id == l.lease_id)
                .and_then(|a| a.release_grace_s)
        })
        .max()
        .unwrap_or(DEFAULT_RELEASE_GRACE_S)
}

/// What releasing the leases released now would stop: the busy ones, their utilization's
/// range and the grace their workloads get; `None` when none of them is busy.
pub fn release_warning(
    released: &[ebb_wire::pools::ReleasedLease],
    grace_s: u32,
) -> Option<ReleaseWarning> {
    let now: Vec<_> = released.iter().filter(|l| !l.kept_to_unit_end).collect();
    let busy: Vec<f32> = now
        .iter()
        .filter(|l| l.busy)
        .filter_map(|l| l.util_pct)
        .collect();
    if busy.is_empty() {
        return None;
    }
    let gpus = |leases: &[&ebb_wire::pools::ReleasedLease]| -> u32 {
        leases
            .iter()
            .map(|l| l.gpu_indexes.len().max(1) as u32)
            .sum()
    };
    let busy_leases: Vec<_> = now.iter().copied().filter(|l| l.busy).collect();
    let low = busy.iter().copied().fold(f32::INFINITY, f32::min);
    let high = busy.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    Some(ReleaseWarning::BusyGpus {
        busy: gpus(&busy_leases),
        of: gpus(&now),
        min_util_pct: low.round().clamp(0.0, 100.0) as u32,
        max_util_pct: high.round().clamp(0.0, 100.0) as u32,
        grace_s,
    })
}

/// Spend across the pools (each with the view it was shown in), this month, against the
/// budget. A pool that cannot be priced is listed with its problem and left out of the sums.
pub fn spend_summary(
    month: String,
    pools: &[(Pool, PoolView)],
    budget_fen: Option<i64>,
) -> Result<SpendSummary, PoolError> {
    let overflow = || refused("spend", Phrase::new("spend.refuse.overflow"));
    let (mut to_date, mut projected, mut rate, mut gpu_hours) = (0i64, 0i64, 0i64, 0f64);
    let mut rows = Vec::with_capacity(pools.len());
    for (pool, view) in pools {
        if let Some(spend) = &view.spend {
            to_date = to_date
                .checked_add(spend.month_to_date_fen)
                .ok_or_else(overflow)?;
            projected = projected
                .checked_add(spend.projected_month_fen)
                .ok_or_else(overflow)?;
            rate = rate
                .checked_add(spend.run_rate_per_hour_fen)
                .ok_or_else(overflow)?;
            gpu_hours += spend.gpu_hours;
        }
        rows.push(PoolSpend {
            pool: pool.name.clone(),
            model: pool.model.clone(),
            actual_gpus: view.actual,
            base_gpus: pool.base_gpus,
            term: pool.term,
            overlay: pool.overlay,
            created_at_ms: pool.created_at_ms,
            spend: view.spend.clone(),
            spend_problem: view.spend_problem.clone(),
        });
    }
    rows.sort_by(|a, b| a.pool.cmp(&b.pool));
    let budget_state = match budget_fen {
        None => BudgetState::NoBudget,
        Some(budget) if to_date > budget => BudgetState::Over,
        Some(budget) if projected > budget => BudgetState::ProjectedOver,
        Some(_) => BudgetState::Within,
    };
    Ok(SpendSummary {
        month,
        month_to_date_fen: to_date,
        projected_month_fen: projected,
        run_rate_per_hour_fen: rate,
        gpu_hours,
        budget_fen,
        budget_state,
        pools: rows,
    })
}

/// An amount in a CSV: yuan with two decimals (`-12.05`), so a spreadsheet sums it.
pub fn csv_amount(fen: i64) -> String {
    let sign = if fen < 0 { "-" } else { "" };
    let fen = fen.unsigned_abs();
    format!("{sign}{}.{:02}", fen / 100, fen % 100)
}

/// A text field in a CSV, quoted when it holds a comma, a quote or a line break.
pub fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// The spend summary as CSV: a header, one line per pool, then the total (amounts in yuan
/// with two decimals, so a spreadsheet sums them; times in UTC).
pub fn spend_csv(summary: &SpendSummary) -> String {
    let (amount, field) = (csv_amount, csv_field);
    let mut out = String::from(
        "month,pool,model,gpus_now,base_gpus,term,overlay,base_from_utc,month_to_date_cny,projected_month_cny,run_rate_per_hour_cny,gpu_hours,spot_cny,spot_saved_cny,problem\n",
    );
    for row in &summary.pools {
        let spend = row.spend.as_ref();
        let cells = [
            field(&summary.month),
            field(&row.pool),
            field(&row.model),
            row.actual_gpus.to_string(),
            row.base_gpus.to_string(),
            row.term.to_string(),
            row.overlay.to_string(),
            spend.map_or_else(String::new, |s| {
                ebb_charts::calendar::utc_time(s.base_from_ms)
            }),
            spend.map_or_else(String::new, |s| amount(s.month_to_date_fen)),
            spend.map_or_else(String::new, |s| amount(s.projected_month_fen)),
            spend.map_or_else(String::new, |s| amount(s.run_rate_per_hour_fen)),
            spend.map_or_else(String::new, |s| format!("{:.2}", s.gpu_hours)),
            spend.map_or_else(String::new, |s| amount(s.spot_fen)),
            spend.map_or_else(String::new, |s| amount(s.spot_saved_fen)),
            field(
                &row.spend_problem
                    .as_ref()
                    .map(ToString::to_string)
                    .unwrap_or_default(),
            ),
        ];
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    let total = [
        field(&summary.month),
        "total".to_string(),
        String::new(),
        summary
            .pools
            .iter()
            .map(|p| p.actual_gpus)
            .sum::<u32>()
            .to_string(),
        summary
            .pools
            .iter()
            .map(|p| p.base_gpus)
            .sum::<u32>()
            .to_string(),
        String::new(),
        String::new(),
        String::new(),
        amount(summary.month_to_date_fen),
        amount(summary.projected_month_fen),
        amount(summary.run_rate_per_hour_fen),
        format!("{:.2}", summary.gpu_hours),
        amount(
            summary
                .pools
                .iter()
                .filter_map(|p| p.spend.as_ref())
                .map(|s| s.spot_fen)
                .sum(),
        ),
        amount(
            summary
                .pools
                .iter()
                .filter_map(|p| p.spend.as_ref())
                .map(|s| s.spot_saved_fen)
                .sum(),
        ),
        summary
            .budget_fen
            .map_or_else(String::new, |b| format!("budget {}", amount(b))),
    ];
    out.push_str(&total.join(","));
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ebb_wire::pools::ReleasedLease;

    fn lease(id: &str, util: Option<f32>, kept: bool) -> ReleasedLease {
        ReleasedLease {
            lease_id: id.into(),
            host: "h1".into(),
            region: "cn-east".into(),
            gpu_indexes: vec![0],
            util_pct: util,
            busy: util.is_some_and(|pct| pct >= placement::IDLE_PCT),
            paid_until_ms: 3_600_000,
            kept_to_unit_end: kept,
            safe: false,
            chosen: false,
        }
    }

    fn held(id: &str, util: f32, grace: Option<u32>) -> PoolLeaseView {
        PoolLeaseView {
            lease_id: id.into(),
            host: "h1".into(),
            region: "cn-east".into(),
            gpu_uuids: vec![format!("GPU-{id}")],
            gpu_indexes: vec![0],
            fencing_token: 1,
            granted_at_ms: 0,
            state: PoolLeaseState::Active,
            util_pct: Some(util),
            checkpoint_at_ms: None,
            release_grace_s: grace,
            reclaim_deadline_ms: None,
            spot: false,
            starting: false,
        }
    }

    #[test]
    fn the_operators_choice_must_be_held_once_and_fit_the_change() {
        let status = PoolStatus {
            actual: 3,
            leases: vec![
                held("a", 0.0, None),
                held("b", 0.0, None),
                held("c", 0.0, None),
            ],
            ..PoolStatus::default()
        };
        let ids = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(check_release_choice(&status, 1, &ids(&["a", "b"])).is_ok());
        assert!(check_release_choice(&status, 1, &ids(&["c"])).is_ok());
        assert!(check_release_choice(&status, 3, &[]).is_ok());
        let problem = |to, list: &[&str]| match check_release_choice(&status, to, &ids(list)) {
            Err(PoolError::Invalid { field, problem, .. }) => format!("{field}: {problem}"),
            other => panic!("{other:?}"),
        };
        assert_eq!(problem(1, &["a", "a"]), "release: lease a is named twice");
        assert_eq!(
            problem(1, &["z"]),
            "release: lease z is not one this pool holds now"
        );
        assert_eq!(
            problem(2, &["a", "b"]),
            "release: 2 leases chosen, but going to 2 from 3 held gives back 1"
        );
        assert_eq!(
            problem(3, &["a"]),
            "release: 1 lease chosen, but going to 3 from 3 held gives back 0"
        );
    }

    #[test]
    fn the_warning_says_the_grace_the_agents_report() {
        let active = [held("a", 80.0, Some(120)), held("b", 60.0, None)];
        let refs: Vec<&PoolLeaseView> = active.iter().collect();
        let released = [lease("a", Some(80.0), false), lease("b", Some(60.0), false)];
        assert_eq!(release_grace_s(&refs, &released), 120);
        assert_eq!(
            release_grace_s(&refs, &released[1..]),
            DEFAULT_RELEASE_GRACE_S
        );
    }

    #[test]
    fn busy_gpus_are_counted_with_their_range_and_grace() {
        let released = [
            lease("a", Some(55.2), false),
            lease("b", Some(1.0), false),
            lease("c", Some(88.6), false),
        ];
        assert_eq!(
            release_warning(&released, 30),
            Some(ReleaseWarning::BusyGpus {
                busy: 2,
                of: 3,
                min_util_pct: 55,
                max_util_pct: 89,
                grace_s: 30,
            })
        );
    }

    #[test]
    fn idle_unknown_and_kept_leases_warn_of_nothing() {
        let released = [
            lease("a", Some(2.0), false),
            lease("b", None, false),
            lease("c", Some(90.0), true),
        ];
        assert_eq!(release_warning(&released, 30), None);
    }

    #[test]
    fn the_preview_names_each_lease_released_now_before_those_kept() {
        let active = [
            PoolLeaseView {
                lease_id: "busy".into(),
                host: "h1".into(),
                region: "cn-east".into(),
                gpu_uuids: vec!["GPU-1".into()],
                gpu_indexes: vec![3],
                fencing_token: 1,
                granted_at_ms: 0,
                state: PoolLeaseState::Active,
                util_pct: Some(70.0),
                checkpoint_at_ms: None,
                release_grace_s: None,
                reclaim_deadline_ms: None,
                spot: false,
                starting: false,
            },
            PoolLeaseView {
                lease_id: "idle".into(),
                host: "h2".into(),
                region: "cn-east".into(),
                gpu_uuids: vec!["GPU-2".into()],
                gpu_indexes: vec![0],
                fencing_token: 1,
                granted_at_ms: 0,
                state: PoolLeaseState::Active,
                util_pct: Some(0.0),
                checkpoint_at_ms: None,
                release_grace_s: None,
                reclaim_deadline_ms: None,
                spot: false,
                starting: false,
            },
        ];
        let refs: Vec<&PoolLeaseView> = active.iter().collect();
        let held: Vec<placement::Held> = active
            .iter()
            .map(|l| placement::Held {
                lease_id: l.lease_id.clone(),
                host: l.host.clone(),
                region: l.region.clone(),
                util_pct: l.util_pct,
                price_fen: None,
                granted_at_ms: 0,
                paid_until_ms: 3_600_000,
                safe: false,
                chosen: false,
            })
            .collect();
        let chosen = placement::Release {
            now: vec![0],
            deferred: 1,
            next_due_ms: Some(3_540_000),
            kept: vec![1],
        };
        let released = released_leases(&refs, &held, &chosen);
        let names: Vec<(&str, &str, &[u32], bool, bool)> = released
            .iter()
            .map(|l| {
                (
                    l.lease_id.as_str(),
                    l.host.as_str(),
                    l.gpu_indexes.as_slice(),
                    l.busy,
                    l.kept_to_unit_end,
                )
            })
            .collect();
        assert_eq!(
            names,
            vec![
                ("busy", "h1", &[3][..], true, false),
                ("idle", "h2", &[0][..], false, true),
            ]
        );
    }
}
