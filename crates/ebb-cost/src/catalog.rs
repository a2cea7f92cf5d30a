//! The price catalog: parse a TOML text, validate every entry, look prices up.
//!
//! The schema and every billing decision are documented in `CATALOG.md` beside this crate.

use crate::money::Money;
use crate::{CostError, HOURS_PER_MONTH, HOURS_PER_YEAR};
use serde::Serialize;
use std::fmt;

/// The currency every catalog is priced in (amounts are in its minor unit, the fen).
pub const CURRENCY: &str = "CNY";

/// The demo catalog: H800, A100, V100 and Ascend 910B in cn-north, cn-east and cn-south.
pub const DEMO_CATALOG: &str = include_str!("../catalogs/demo.toml");

/// The largest price accepted for one unit: ¥1,000,000,000 (keeps every sum in `i64`).
const MAX_PRICE_FEN: i64 = 100_000_000_000;

/// The price fields of an entry, in the order they are documented.
const PRICE_FIELDS: [&str; 7] = [
    "hour",
    "day",
    "week",
    "month",
    "year",
    "spot_hour",
    "reserved_hour",
];
const OTHER_FIELDS: [&str; 5] = [
    "model",
    "region",
    "spot_series",
    "spot_notice_minutes",
    "note",
];

/// A validated catalog: one currency, one entry per GPU model and region.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Catalog {
    /// Always [`CURRENCY`].
    pub currency: String,
    /// A free-text name, e.g. "Demo catalog".
    pub name: Option<String>,
    /// The prices, in file order.
    pub entries: Vec<PriceEntry>,
}

/// The prices of one GPU model in one region. `hour` and `month` are required; a mode whose
/// price is `None` is not offered there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PriceEntry {
    /// GPU model as the operator names it, e.g. "A100" (matched ignoring case, spaces, `-`, `_`).
    pub model: String,
    /// Region, e.g. "cn-north" (the agent fleet's names).
    pub region: String,
    /// On demand, per started hour.
    #[serde(rename = "hour_fen")]
    pub hour: Money,
    /// On demand, per started day (24 hours).
    #[serde(rename = "day_fen")]
    pub day: Option<Money>,
    /// On demand, per started week (168 hours).
    #[serde(rename = "week_fen")]
    pub week: Option<Money>,
    /// Subscription, per GPU per month (730 hours).
    #[serde(rename = "month_fen")]
    pub month: Money,
    /// Subscription, per GPU per year (8,760 hours).
    #[serde(rename = "year_fen")]
    pub year: Option<Money>,
    /// Spot, per started hour: the current price.
    #[serde(rename = "spot_hour_fen")]
    pub spot_hour: Option<Money>,
    /// Spot prices over time, in the demand series' hours; empty when only the current
    /// price is known.
    pub spot_series: Vec<SpotPoint>,
    /// How long before an interruption spot GPUs are warned, if the provider says.
    pub spot_notice_minutes: Option<u32>,
    /// Reserved, per GPU per hour of the reserved window.
    #[serde(rename = "reserved_hour_fen")]
    pub reserved_hour: Option<Money>,
}

/// From `hour` on (in the demand series' clock) the spot price is `price`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SpotPoint {
    /// The first hour this price is in force.
    pub hour: i64,
    /// The spot price per started hour.
    #[serde(rename = "price_fen")]
    pub price: Money,
}

/// A catalog that passed validation, with what looked odd but is allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Validated {
    /// The catalog.
    pub catalog: Catalog,
    /// Allowed but suspicious, e.g. a subscription cheaper per hour than spot.
    pub warnings: Vec<Problem>,
}

/// Why a catalog was refused: every problem found, not just the first.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct InvalidCatalog {
    /// The errors, in file order.
    pub problems: Vec<Problem>,
    /// Warnings found on the way, for a front end that shows everything at once.
    pub warnings: Vec<Problem>,
}

impl fmt::Display for InvalidCatalog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.problems.len();
        write!(
            f,
            "the price catalog has {count} problem{}:",
            if count == 1 { "" } else { "s" }
        )?;
        for problem in &self.problems {
            write!(f, "\n  - {problem}")?;
        }
        Ok(())
    }
}

/// One problem (or warning) in a catalog, with where it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// The `[[price]]` entry, if the problem is in one.
    pub entry: Option<EntryRef>,
    /// The field, e.g. `week` or `spot_series[2].price`.
    pub field: Option<String>,
    /// What is wrong, in words.
    pub message: String,
}

/// Which `[[price]]` entry: its position (from 1) and, where readable, its model and region.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EntryRef {
    /// 1 for the first `[[price]]` in the file.
    pub number: usize,
    /// The entry's model, if it has a readable one.
    pub model: Option<String>,
    /// The entry's region, if it has a readable one.
    pub region: Option<String>,
}

impl fmt::Display for EntryRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[[price]] #{}", self.number)?;
        match (&self.model, &self.region) {
            (Some(model), Some(region)) => write!(f, " ({model} in {region})"),
            (Some(model), None) => write!(f, " ({model})"),
            (None, Some(region)) => write!(f, " (in {region})"),
            (None, None) => Ok(()),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.entry, &self.field) {
            (Some(entry), Some(field)) => write!(f, "{entry}, `{field}`: ")?,
            (Some(entry), None) => write!(f, "{entry}: ")?,
            (None, Some(field)) => write!(f, "`{field}`: ")?,
            (None, None) => {}
        }
        f.write_str(&self.message)
    }
}

impl Catalog {
    /// The embedded demo catalog.
    pub fn demo() -> Catalog {
        parse_catalog(DEMO_CATALOG)
            .expect("the demo catalog is valid (a test checks it)")
            .catalog
    }

    /// The prices of `model` in `region`; model and region match ignoring case, spaces,
    /// `-` and `_` (so the agent's "Ascend910B" finds "Ascend 910B").
    pub fn find(&self, model: &str, region: &str) -> Result<&PriceEntry, CostError> {
        let (model_key, region_key) = (name_key(model), name_key(region));
        self.entries
            .iter()
            .find(|entry| {
                name_key(&entry.model) == model_key && name_key(&entry.region) == region_key
            })
            .ok_or_else(|| CostError::NoPrice {
                model: model.to_string(),
                region: region.to_string(),
                available: self
                    .entries
                    .iter()
                    .map(|entry| format!("{} in {}", entry.model, entry.region))
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }
}

impl PriceEntry {
    /// The spot price in force at `hour` (demand series clock): the last series point at or
    /// before it, else the current `spot_hour`. `None` when spot is not offered.
    pub fn spot_price_at(&self, hour: i64) -> Option<Money> {
        let current = self.spot_hour?;
        let after = self.spot_series.partition_point(|point| point.hour <= hour);
        Some(if after == 0 {
            current
        } else {
            self.spot_series[after - 1].price
        })
    }
}

/// How names are compared: lowercase, without spaces, `-` and `_`.
fn name_key(name: &str) -> String {
    name.chars()
        .filter(|c| !matches!(c, ' ' | '-' | '_'))
        .flat_map(char::to_lowercase)
        .collect()
}

/// Parses and validates a catalog, reporting every problem at once.
pub fn parse_catalog(text: &str) -> Result<Validated, InvalidCatalog> {
    let mut report = Report::default();
    let table = match text.parse::<toml::Table>() {
        Ok(table) => table,
        Err(error) => {
            report.error(
                None,
                None,
                format!("not valid TOML: {}", error.to_string().trim()),
            );
            return Err(report.into_invalid());
        }
    };

    let currency = match table.get("currency") {
        None => {
            report.error(
                None,
                Some("currency"),
                format!("missing: write `currency = \"{CURRENCY}\"`"),
            );
            None
        }
        Some(toml::Value::String(code)) if code == CURRENCY => Some(code.clone()),
        Some(toml::Value::String(code)) => {
            report.error(
                None,
                Some("currency"),
                format!(
                    "`{code}` is not supported: Ebb prices in {CURRENCY} (amounts in fen) for now"
                ),
            );
            None
        }
        Some(other) => {
            report.error(
                None,
                Some("currency"),
                format!(
                    "must be a string such as \"{CURRENCY}\", got {}",
                    other.type_str()
                ),
            );
            None
        }
    };
    let name = match table.get("name") {
        None => None,
        Some(toml::Value::String(name)) => Some(name.clone()),
        Some(other) => {
            report.error(
                None,
                Some("name"),
                format!("must be a string, got {}", other.type_str()),
            );
            None
        }
    };
    for key in table.keys() {
        if !matches!(key.as_str(), "currency" | "name" | "price") {
            report.error(
                None,
                Some(key),
                "unknown top-level key: a catalog has `currency`, `name` and `[[price]]` entries"
                    .to_string(),
            );
        }
    }

    let mut entries = Vec::new();
    match table.get("price") {
        None => report.error(
            None,
            Some("price"),
            "no `[[price]]` entries: a catalog needs at least one".to_string(),
        ),
        Some(toml::Value::Array(items)) => {
            if items.is_empty() {
                report.error(
                    None,
                    Some("price"),
                    "no `[[price]]` entries: a catalog needs at least one".to_string(),
                );
            }
            for (i, item) in items.iter().enumerate() {
                if let Some(entry) = parse_entry(i + 1, item, &mut report) {
                    entries.push(entry);
                }
            }
        }
        Some(other) => report.error(
            None,
            Some("price"),
            format!(
                "must be an array of tables (`[[price]]`), got {}",
                other.type_str()
            ),
        ),
    }

    // Duplicates: the same model and region twice, compared as lookups compare them. Every
    // entry with a readable name counts, even one with other problems.
    let named = std::mem::take(&mut report.named);
    for (i, (number, model, region)) in named.iter().enumerate() {
        let key = (name_key(model), name_key(region));
        if let Some((first, ..)) = named[..i]
            .iter()
            .find(|(_, earlier_model, earlier_region)| {
                (name_key(earlier_model), name_key(earlier_region)) == key
            })
        {
            report.problems.push(Problem {
                entry: Some(EntryRef {
                    number: *number,
                    model: Some(model.clone()),
                    region: Some(region.clone()),
                }),
                field: None,
                message: format!(
                    "duplicate: {model} in {region} is already priced by [[price]] #{first}"
                ),
            });
        }
    }

    if !report.problems.is_empty() {
        return Err(report.into_invalid());
    }
    let Some(currency) = currency else {
        return Err(report.into_invalid());
    };
    Ok(Validated {
        catalog: Catalog {
            currency,
            name,
            entries,
        },
        warnings: report.warnings,
    })
}

#[derive(Default)]
struct Report {
    problems: Vec<Problem>,
    warnings: Vec<Problem>,
    /// The number, model and region of every entry with a readable name.
    named: Vec<(usize, String, String)>,
}

impl Report {
    fn error(&mut self, entry: Option<&EntryRef>, field: Option<&str>, message: String) {
        self.problems.push(Problem {
            entry: entry.cloned(),
            field: field.map(str::to_string),
            message,
        });
    }

    fn warn(&mut self, entry: &EntryRef, field: &str, message: String) {
        self.warnings.push(Problem {
            entry: Some(entry.clone()),
            field: Some(field.to_string()),
            message,
        });
    }

    fn into_invalid(self) -> InvalidCatalog {
        InvalidCatalog {
            problems: self.problems,
            warnings: self.warnings,
        }
    }
}

fn parse_entry(number: usize, item: &toml::Value, report: &mut Report) -> Option<PriceEntry> {
    let Some(table) = item.as_table() else {
        report.error(
            Some(&EntryRef {
                number,
                model: None,
                region: None,
            }),
            None,
            format!("must be a table, got {}", item.type_str()),
        );
        return None;
    };
    let text_of = |key: &str| table.get(key).and_then(toml::Value::as_str).map(str::trim);
    let at = EntryRef {
        number,
        model: text_of("model")
            .filter(|s| !s.is_empty())
            .map(str::to_string),
        region: text_of("region")
            .filter(|s| !s.is_empty())
            .map(str::to_string),
    };
    let before = report.problems.len();

    let mut names = [None, None];
    for (slot, key) in names.iter_mut().zip(["model", "region"]) {
        match table.get(key) {
            None => report.error(Some(&at), Some(key), "missing".to_string()),
            Some(toml::Value::String(text)) if text.trim().is_empty() => {
                report.error(Some(&at), Some(key), "must not be empty".to_string());
            }
            Some(toml::Value::String(text)) => *slot = Some(text.trim().to_string()),
            Some(other) => report.error(
                Some(&at),
                Some(key),
                format!("must be a string, got {}", other.type_str()),
            ),
        }
    }

    for key in table.keys() {
        if !PRICE_FIELDS.contains(&key.as_str()) && !OTHER_FIELDS.contains(&key.as_str()) {
            report.error(
                Some(&at),
                Some(key),
                format!(
                    "unknown mode or field: the modes are {}; the other fields are {}",
                    PRICE_FIELDS.join(", "),
                    OTHER_FIELDS.join(", ")
                ),
            );
        }
    }

    let price = |key: &str, required: bool, report: &mut Report| -> Option<Money> {
        match table.get(key) {
            None if required => {
                report.error(
                    Some(&at),
                    Some(key),
                    "missing: every entry needs an `hour` and a `month` price".to_string(),
                );
                None
            }
            None => None,
            Some(value) => match parse_price(value) {
                Ok(money) => Some(money),
                Err(message) => {
                    report.error(Some(&at), Some(key), message);
                    None
                }
            },
        }
    };
    let hour = price("hour", true, report);
    let day = price("day", false, report);
    let week = price("week", false, report);
    let month = price("month", true, report);
    let year = price("year", false, report);
    let spot_hour = price("spot_hour", false, report);
    let reserved_hour = price("reserved_hour", false, report);

    let spot_notice_minutes = match table.get("spot_notice_minutes") {
        None => None,
        Some(toml::Value::Integer(minutes)) => match u32::try_from(*minutes) {
            Ok(minutes) => Some(minutes),
            Err(_) => {
                report.error(
                    Some(&at),
                    Some("spot_notice_minutes"),
                    format!("must be 0 or more whole minutes, got {minutes}"),
                );
                None
            }
        },
        Some(other) => {
            report.error(
                Some(&at),
                Some("spot_notice_minutes"),
                format!("must be whole minutes, got {}", other.type_str()),
            );
            None
        }
    };
    if let Some(value) = table.get("note")
        && !value.is_str()
    {
        report.error(
            Some(&at),
            Some("note"),
            format!("must be a string, got {}", value.type_str()),
        );
    }

    let spot_series = parse_spot_series(table.get("spot_series"), &at, report);
    if !spot_series.is_empty() && table.get("spot_hour").is_none() {
        report.error(
            Some(&at),
            Some("spot_hour"),
            "missing: a `spot_series` needs the current `spot_hour` too".to_string(),
        );
    }

    if let [Some(model), Some(region)] = &names {
        report.named.push((number, model.clone(), region.clone()));
    }
    if report.problems.len() > before {
        return None;
    }
    let ([Some(model), Some(region)], Some(hour), Some(month)) = (names, hour, month) else {
        return None;
    };
    let entry = PriceEntry {
        model,
        region,
        hour,
        day,
        week,
        month,
        year,
        spot_hour,
        spot_series,
        spot_notice_minutes,
        reserved_hour,
    };
    warn_about(&entry, &at, report);
    Some(entry)
}

fn parse_spot_series(
    value: Option<&toml::Value>,
    at: &EntryRef,
    report: &mut Report,
) -> Vec<SpotPoint> {
    let Some(value) = value else {
        return Vec::new();
    };
    let Some(items) = value.as_array() else {
        report.error(
            Some(at),
            Some("spot_series"),
            format!(
                "must be an array of `{{ hour = H, price = P }}`, got {}",
                value.type_str()
            ),
        );
        return Vec::new();
    };
    let mut points: Vec<SpotPoint> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let field = |key: &str| {
            format!(
                "spot_series[{i}]{}{key}",
                if key.is_empty() { "" } else { "." }
            )
        };
        let Some(point) = item.as_table() else {
            report.error(
                Some(at),
                Some(&field("")),
                format!(
                    "must be `{{ hour = H, price = P }}`, got {}",
                    item.type_str()
                ),
            );
            continue;
        };
        for key in point.keys() {
            if key != "hour" && key != "price" {
                report.error(
                    Some(at),
                    Some(&field(key)),
                    "unknown field: a point has `hour` and `price`".to_string(),
                );
            }
        }
        let hour = match point.get("hour") {
            Some(toml::Value::Integer(hour)) => Some(*hour),
            Some(other) => {
                report.error(
                    Some(at),
                    Some(&field("hour")),
                    format!("must be a whole hour, got {}", other.type_str()),
                );
                None
            }
            None => {
                report.error(Some(at), Some(&field("hour")), "missing".to_string());
                None
            }
        };
        let price = match point.get("price").map(parse_price) {
            Some(Ok(price)) => Some(price),
            Some(Err(message)) => {
                report.error(Some(at), Some(&field("price")), message);
                None
            }
            None => {
                report.error(Some(at), Some(&field("price")), "missing".to_string());
                None
            }
        };
        if let (Some(hour), Some(price)) = (hour, price) {
            if let Some(last) = points.last()
                && hour <= last.hour
            {
                report.error(
                    Some(at),
                    Some(&field("hour")),
                    format!("hours must increase: {hour} comes after {}", last.hour),
                );
            }
            points.push(SpotPoint { hour, price });
        }
    }
    points
}

/// A price in yuan (integer or at most two decimals) to fen.
fn parse_price(value: &toml::Value) -> Result<Money, String> {
    let fen = match value {
        toml::Value::Integer(yuan) => yuan.checked_mul(100),
        toml::Value::Float(yuan) => {
            if !yuan.is_finite() {
                return Err(format!("must be a number of yuan, got {yuan}"));
            }
            let fen = yuan * 100.0;
            if (fen - fen.round()).abs() > 1e-6 {
                return Err(format!(
                    "{yuan} has more than two decimals: prices are in whole fen"
                ));
            }
            // Bounded below before the cast, so it cannot saturate silently.
            (fen.abs() < 1e17).then(|| fen.round() as i64)
        }
        other => {
            return Err(format!(
                "must be a number of yuan such as 12.50, got {}",
                other.type_str()
            ));
        }
    };
    let shown = match value {
        toml::Value::Integer(yuan) => yuan.to_string(),
        toml::Value::Float(yuan) => yuan.to_string(),
        _ => String::new(),
    };
    match fen {
        Some(fen) if fen <= 0 => Err(format!("must be more than zero, got {shown}")),
        Some(fen) if fen <= MAX_PRICE_FEN => Ok(Money::from_fen(fen)),
        _ => Err(format!(
            "{shown} is more than the largest price accepted, {}",
            Money::from_fen(MAX_PRICE_FEN)
        )),
    }
}

/// Allowed but worth a second look.
fn warn_about(entry: &PriceEntry, at: &EntryRef, report: &mut Report) {
    let hour = i128::from(entry.hour.fen());
    let spots = entry
        .spot_hour
        .into_iter()
        .chain(entry.spot_series.iter().map(|point| point.price));
    if let Some(dearest_spot) = spots.max() {
        let spot = i128::from(dearest_spot.fen());
        let subscriptions = [
            ("month", Some(entry.month), HOURS_PER_MONTH),
            ("year", entry.year, HOURS_PER_YEAR),
        ];
        for (field, price, hours) in subscriptions {
            let Some(price) = price else { continue };
            // Exact: price / hours < spot  <=>  price < spot * hours.
            if i128::from(price.fen()) < spot * i128::from(hours) {
                let rate = price.scaled(1, i128::from(hours)).unwrap_or(Money::MAX);
                report.warn(
                    at,
                    field,
                    format!(
                        "a {field} subscription ({rate} an hour) is cheaper per hour than spot ({dearest_spot}): spot would cost more than committing"
                    ),
                );
            }
        }
        if spot > hour {
            report.warn(
                at,
                "spot_hour",
                format!(
                    "spot ({dearest_spot}) is dearer than on demand ({}) at times",
                    entry.hour
                ),
            );
        }
    }
    let week_against = match entry.day {
        Some(day) => (day, 7, "7 days"),
        None => (entry.hour, 168, "168 hours"),
    };
    let unit_checks = [
        ("day", entry.day, (entry.hour, 24, "24 hours")),
        ("week", entry.week, week_against),
        ("year", entry.year, (entry.month, 12, "12 months")),
    ];
    for (field, price, (smaller, count, words)) in unit_checks {
        if let Some(price) = price
            && i128::from(price.fen()) > i128::from(smaller.fen()) * count
        {
            report.warn(
                at,
                field,
                format!("{price} is more than {words} of the smaller unit: it will never be the cheaper choice"),
            );
        }
    }
    if let Some(reserved) = entry.reserved_hour
        && reserved > entry.hour
    {
        report.warn(
            at,
            "reserved_hour",
            format!(
                "a reservation ({reserved} an hour) is dearer than on demand ({})",
                entry.hour
            ),
        );
    }
}
