//! The pool form as typed, read: counts and the max spot price from their text, the choices
//! from their wire names, then the store's own checks ([`super::validate::check`]), so the
//! form asks the console (`check_pool`) instead of keeping a copy of the rules. Pure.

use super::validate::{HostFacts, PoolProblem, check};
use ebb_cost::Catalog;
use ebb_wire::phrase::FieldProblem;
use ebb_wire::pools::{MixExample, PoolCheck, PoolForm, PoolInput, SpotMix};

/// Every problem reading the form finds (at most one a field), else the pool to check.
pub fn read_form(form: &PoolForm) -> Result<PoolInput, Vec<PoolProblem>> {
    let mut problems = Vec::new();
    let mut count = |field: &'static str, text: &str| {
        let n = whole(text);
        if n.is_none() {
            problems.push(PoolProblem::NotWhole { field });
        }
        n
    };
    let (min, max, base) = (
        count("min", &form.min),
        count("max", &form.max),
        count("base_gpus", &form.base_gpus),
    );
    let term = choice("term", &form.term, &mut problems);
    let overlay = choice("overlay", &form.overlay, &mut problems);
    let placement = choice("placement", &form.placement, &mut problems);
    let stored = form.stored_spot.unwrap_or_default();
    let spot = read_mix(form, stored, &mut problems);
    match (min, max, base, term, overlay, placement, spot) {
        (
            Some(min),
            Some(max),
            Some(base_gpus),
            Some(term),
            Some(overlay),
            Some(placement),
            Some(spot),
        ) if problems.is_empty() => Ok(PoolInput {
            name: form.name.clone(),
            model: form.model.clone(),
            regions: form.regions.clone(),
            min,
            max,
            base_gpus,
            term,
            overlay,
            placement,
            interruptible: form.interruptible,
            release_at_unit_end: form.release_at_unit_end,
            spot,
        }),
        _ => Err(problems),
    }
}

/// The mix's fields: the pool's only while it is interruptible. Otherwise spot is off (a
/// share of 0) and the floor and max price stay as stored unless what was typed reads.
fn read_mix(form: &PoolForm, stored: SpotMix, problems: &mut Vec<PoolProblem>) -> Option<SpotMix> {
    let (floor, pct) = floor_and_pct(form);
    let price_text = form.max_price.trim();
    let price = if price_text.is_empty() {
        Some(None)
    } else {
        parse_yuan(price_text).filter(|fen| *fen > 0).map(Some)
    };
    if !form.interruptible {
        return Some(SpotMix {
            on_demand_floor: floor.unwrap_or(stored.on_demand_floor),
            spot_pct: 0,
            max_price_fen: price.unwrap_or(stored.max_price_fen),
        });
    }
    if floor.is_none() {
        problems.push(PoolProblem::NotWhole {
            field: "on_demand_floor",
        });
    }
    if pct.is_none() {
        problems.push(PoolProblem::NotPercent);
    }
    if price.is_none() {
        problems.push(PoolProblem::NotPrice);
    }
    Some(SpotMix {
        on_demand_floor: floor?,
        spot_pct: pct?,
        max_price_fen: price?,
    })
}

/// The console's answer on the form: what reading it finds, else the store's first
/// problem, else the pool to send.
pub fn check_form(form: &PoolForm, hosts: &[HostFacts], catalog: &Catalog) -> PoolCheck {
    let problems = match read_form(form) {
        Ok(input) => match check(&input, hosts, catalog) {
            Ok(_) => {
                return PoolCheck {
                    problems: Vec::new(),
                    input: Some(input),
                };
            }
            Err(problem) => vec![problem],
        },
        Err(problems) => problems,
    };
    PoolCheck {
        problems: problems
            .iter()
            .map(|p| FieldProblem::new(p.field(), p.phrase()))
            .collect(),
        input: None,
    }
}

/// The form's example of the mix being typed: how the pool's max splits under it (the
/// reconciler's own split); `None` until the numbers read.
pub fn mix_example(form: &PoolForm) -> Option<MixExample> {
    let max = whole(&form.max)?;
    let base = whole(&form.base_gpus)?;
    let (floor, pct) = floor_and_pct(form);
    let mix = SpotMix {
        on_demand_floor: floor?,
        spot_pct: pct?,
        max_price_fen: None,
    };
    Some(MixExample {
        max,
        split: ebb_reconcile::spot::split(max, base, &mix, true),
    })
}

/// The mix's floor and share as typed; left empty, the default mix's (a new pool's form
/// starts empty).
fn floor_and_pct(form: &PoolForm) -> (Option<u32>, Option<u32>) {
    let default = SpotMix::default();
    let or_default = |text: &str, value: u32| {
        if text.trim().is_empty() {
            Some(value)
        } else {
            whole(text)
        }
    };
    (
        or_default(&form.on_demand_floor, default.on_demand_floor),
        or_default(&form.spot_pct, default.spot_pct)
            .filter(|pct| *pct <= ebb_reconcile::spot::MAX_SPOT_PCT),
    )
}

/// A count as typed: digits only (spaces around allowed), at most `u32::MAX`.
fn whole(text: &str) -> Option<u32> {
    let text = text.trim();
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

fn choice<T: serde::de::DeserializeOwned>(
    field: &'static str,
    text: &str,
    problems: &mut Vec<PoolProblem>,
) -> Option<T> {
    let value = text.trim();
    let read = serde_json::from_value(serde_json::Value::String(value.to_string())).ok();
    if read.is_none() {
        problems.push(PoolProblem::NotAChoice {
            field,
            value: value.to_string(),
        });
    }
    read
}

/// Yuan as typed (`500`, `12.5`, `¥1,000.00`) in fen.
pub fn parse_yuan(text: &str) -> Option<i64> {
    let text = text.trim();
    let text = text
        .strip_prefix('¥')
        .unwrap_or(text)
        .trim()
        .replace(',', "");
    let (units, cents) = text.split_once('.').unwrap_or((&text, ""));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(units) || (text.contains('.') && (!digits(cents) || cents.len() > 2)) {
        return None;
    }
    let units: i64 = units.parse().ok()?;
    let cents: i64 = if cents.is_empty() {
        0
    } else {
        format!("{cents:0<2}").parse().ok()?
    };
    units.checked_mul(100)?.checked_add(cents)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts() -> Vec<HostFacts> {
        vec![HostFacts {
            name: "a".into(),
            region: "cn-north".into(),
            models: vec!["NVIDIA A100-SXM4-80GB".into()],
        }]
    }

    fn typed() -> PoolForm {
        PoolForm {
            name: " inference ".into(),
            model: "A100".into(),
            regions: vec!["cn-north".into()],
            min: "0".into(),
            max: "8".into(),
            base_gpus: "2".into(),
            term: "month".into(),
            overlay: "hour".into(),
            placement: "pack".into(),
            interruptible: false,
            release_at_unit_end: true,
            on_demand_floor: String::new(),
            spot_pct: String::new(),
            max_price: String::new(),
            stored_spot: None,
        }
    }

    fn keys(check: &PoolCheck) -> Vec<(&str, &str)> {
        check
            .problems
            .iter()
            .map(|p| (p.field.as_str(), p.words.key.as_str()))
            .collect()
    }

    #[test]
    fn the_form_reads_as_the_pool_a_save_would_accept() {
        let catalog = Catalog::demo();
        let good = check_form(&typed(), &hosts(), &catalog);
        assert_eq!(keys(&good), []);
        let input = good.input.unwrap();
        assert_eq!((input.min, input.max, input.base_gpus), (0, 8, 2));
        assert_eq!(
            input.spot,
            SpotMix::default(),
            "empty mix fields: the default mix"
        );
        assert_eq!(input.term, ebb_wire::plan::Term::Month);
    }

    #[test]
    fn every_field_that_does_not_read_is_named_then_the_store_s_first_problem() {
        let catalog = Catalog::demo();
        let unread = PoolForm {
            min: "x".into(),
            base_gpus: "-1".into(),
            overlay: "sometimes".into(),
            interruptible: true,
            on_demand_floor: "1.5".into(),
            spot_pct: "101".into(),
            max_price: "0".into(),
            ..typed()
        };
        assert_eq!(
            keys(&check_form(&unread, &hosts(), &catalog)),
            [
                ("min", "pool.check.whole"),
                ("base_gpus", "pool.check.whole"),
                ("overlay", "pool.check.choose"),
                ("on_demand_floor", "pool.check.whole"),
                ("spot_pct", "pool.check.spotPct"),
                ("max_price_fen", "pool.check.maxPrice"),
            ]
        );
        let above = PoolForm {
            min: "9".into(),
            ..typed()
        };
        let answer = check_form(&above, &hosts(), &catalog);
        assert_eq!(keys(&answer), [("min", "pool.check.minAboveMax")]);
        assert_eq!(
            answer.problems[0].words,
            ebb_wire::phrase::Phrase::new("pool.check.minAboveMax")
                .int("min", 9)
                .int("max", 8)
        );
        let spot = PoolForm {
            overlay: "spot".into(),
            ..typed()
        };
        assert_eq!(
            keys(&check_form(&spot, &hosts(), &catalog)),
            [("overlay", "pool.check.spotNeedsInterruptible")]
        );
        let nowhere = PoolForm {
            regions: vec!["mars".into()],
            ..typed()
        };
        assert_eq!(
            keys(&check_form(&nowhere, &hosts(), &catalog)),
            [("regions", "pool.check.noHostIn")]
        );
    }

    #[test]
    fn a_pool_that_is_not_interruptible_keeps_its_stored_floor_and_price_and_takes_no_spot() {
        let stored = SpotMix {
            on_demand_floor: 1,
            spot_pct: 60,
            max_price_fen: Some(1_250),
        };
        let off = PoolForm {
            on_demand_floor: "x".into(),
            spot_pct: "x".into(),
            max_price: "x".into(),
            stored_spot: Some(stored),
            ..typed()
        };
        let input = read_form(&off).unwrap();
        assert_eq!(
            input.spot,
            SpotMix {
                spot_pct: 0,
                ..stored
            }
        );
        let priced = PoolForm {
            interruptible: true,
            on_demand_floor: "0".into(),
            spot_pct: "100".into(),
            max_price: "¥1,000.5".into(),
            ..typed()
        };
        assert_eq!(
            read_form(&priced).unwrap().spot,
            SpotMix {
                on_demand_floor: 0,
                spot_pct: 100,
                max_price_fen: Some(100_050),
            }
        );
        for (text, fen) in [
            ("500", Some(50_000)),
            ("12.5", Some(1_250)),
            ("0.07", Some(7)),
        ] {
            assert_eq!(parse_yuan(text), fen, "{text}");
        }
        for text in ["12.345", "-1", "", "1.", "¥"] {
            assert_eq!(parse_yuan(text), None, "{text}");
        }
    }

    #[test]
    fn the_example_is_the_reconciler_s_split_at_max() {
        let mix = PoolForm {
            max: "10".into(),
            base_gpus: "2".into(),
            on_demand_floor: "2".into(),
            spot_pct: "50".into(),
            ..typed()
        };
        let example = mix_example(&mix).unwrap();
        assert_eq!(example.max, 10);
        assert_eq!(
            (
                example.split.base,
                example.split.on_demand,
                example.split.spot
            ),
            (2, 5, 3)
        );
        let over = PoolForm {
            spot_pct: "500".into(),
            ..mix.clone()
        };
        assert_eq!(mix_example(&over), None);
        let unread = PoolForm {
            max: String::new(),
            ..mix
        };
        assert_eq!(mix_example(&unread), None);
    }
}
