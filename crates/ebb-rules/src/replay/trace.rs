//! A replay trace: CSV `minute,demand[,metric columns]`, one row per minute from 0.

use ebb_wire::phrase::Phrase;
use ebb_wire::replay::UnreadMetric;
use ebb_wire::rules::MetricRef;

/// The longest trace accepted: a year of minutes (a replay keeps a few numbers per minute).
pub const MAX_MINUTES: usize = 366 * 1440;
/// The largest demand accepted in one minute, in GPUs.
pub const MAX_DEMAND_GPUS: f64 = 1_000_000.0;

/// A Slurm partition's queue, as the console stores it each second as a bound pool's
/// metrics: GPUs of pending jobs, GPUs allocated, the two together, pending jobs, and the
/// oldest pending job's wait in minutes; and, in a queue recorded elsewhere, the
/// partition's idle GPUs ([`super::stuck`]). Counts and minutes, so a cell of one of these
/// columns below 0 is refused.
pub const QUEUE_COLUMNS: [&str; 6] = [
    "slurm_pending_gpus",
    "slurm_allocated_gpus",
    "slurm_demand_gpus",
    "slurm_pending_jobs",
    "slurm_oldest_wait_minutes",
    super::stuck::IDLE_COLUMN,
];

/// The spot market's columns: the spot price in force each minute, yuan per GPU-hour like
/// the catalog (a cell on every row, 0 or more), and how many of the pool's spot GPUs are
/// taken back that minute (a whole number, 0 or more; an empty cell is 0). Replay reads
/// them; rules never see them as metrics.
pub const SPOT_COLUMNS: [&str; 2] = ["spot_price", "interrupted"];

/// A trace: the busy work in GPUs each minute, and the other metric columns.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    demand: Vec<f64>,
    /// `mem_pct`, when the header has it.
    mem_pct: Option<Vec<Option<f64>>>,
    /// `spot_price` in fen per GPU-hour, when the header has it.
    spot_price_fen: Option<Vec<i64>>,
    /// `interrupted`, when the header has it.
    interrupted: Option<Vec<u32>>,
    columns: Vec<Column>,
    /// The stuck GPUs taken out of the demand each minute ([`super::stuck`]), when the
    /// trace has the columns that tell them.
    stuck: Option<Vec<f64>>,
}

/// One extra metric column (`users`, `latency_ms`, …): a value per minute, `None` where the
/// cell was empty (the metric was not reported that minute).
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// The header's name for it (trimmed, as written).
    pub name: String,
    /// One per minute.
    pub values: Vec<Option<f64>>,
}

/// A line or cell of a trace that could not be read: the same shape (line, column, its
/// header name, what is wrong) as a demand CSV's, so it is that type. Its words are
/// `replay.refuse.trace.*`, or the demand CSV's `costs.refuse.demand.*` where the sentence
/// is the same.
pub type TraceError = ebb_cost::DemandError;

/// `n` as a phrase's whole number.
fn int(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl Trace {
    /// A trace of demand alone (generated families, tests). Each value must be finite and
    /// at least 0; `None` otherwise, or when empty or longer than [`MAX_MINUTES`].
    pub fn from_demand(demand: Vec<f64>) -> Option<Trace> {
        let valid = |gpus: &f64| gpus.is_finite() && (0.0..=MAX_DEMAND_GPUS).contains(gpus);
        (!demand.is_empty() && demand.len() <= MAX_MINUTES && demand.iter().all(valid)).then_some(
            Trace {
                demand,
                mem_pct: None,
                spot_price_fen: None,
                interrupted: None,
                columns: Vec::new(),
                stuck: None,
            },
        )
    }

    /// This trace with the spot columns (in place of any it had): a price in fen per
    /// GPU-hour each minute (each ≥ 0) and the spot GPUs taken back each minute. `None`
    /// when a series given is not one per minute or a price is below 0.
    pub fn with_spot(
        mut self,
        spot_price_fen: Option<Vec<i64>>,
        interrupted: Option<Vec<u32>>,
    ) -> Option<Trace> {
        let minutes = self.minutes();
        if spot_price_fen
            .as_ref()
            .is_some_and(|prices| prices.len() != minutes || prices.iter().any(|&fen| fen < 0))
            || interrupted
                .as_ref()
                .is_some_and(|counts| counts.len() != minutes)
        {
            return None;
        }
        self.spot_price_fen = spot_price_fen;
        self.interrupted = interrupted;
        Some(self)
    }

    /// Parses the CSV: a header whose first two columns are `minute,demand` (any others are
    /// metrics by name; `mem_pct` is the pool's memory utilization), then one row per
    /// minute, consecutive from 0. Demand is in GPUs, ≥ 0, may be fractional; a metric cell
    /// may be empty (not reported), and one of the [`QUEUE_COLUMNS`] is ≥ 0. The
    /// [`SPOT_COLUMNS`] are the spot market's, not metrics: `spot_price` in yuan per
    /// GPU-hour on every row (rounded to the fen), `interrupted` a whole count. Blank lines
    /// and lines starting with `#` are skipped, and so is a byte order mark (spreadsheets
    /// write one).
    #[allow(
        clippy::too_many_lines,
        reason = "the CSV's columns read and checked cell by cell"
    )]
    pub fn from_csv(text: &str) -> Result<Trace, TraceError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(i, line)| (i + 1, line.trim()))
            .filter(|(_, line)| !line.is_empty() && !line.starts_with('#'));
        let Some((header_line, header)) = lines.next() else {
            return Err(TraceError::new(
                1,
                None,
                None,
                Phrase::new("replay.refuse.trace.empty").text("header", "minute,demand[,metric…]"),
            ));
        };
        let names: Vec<String> = header
            .split(',')
            .map(|cell| cell.trim().to_string())
            .collect();
        let header_error = |column: usize, words: Phrase| {
            TraceError::new(
                header_line,
                Some(column + 1),
                names.get(column).cloned(),
                words,
            )
        };
        for (column, expected) in ["minute", "demand"].into_iter().enumerate() {
            match names.get(column) {
                Some(name) if name.eq_ignore_ascii_case(expected) => {}
                _ => {
                    return Err(header_error(
                        column.min(names.len() - 1),
                        Phrase::new("replay.refuse.trace.header")
                            .text("start", "minute,demand")
                            .text("header", header),
                    ));
                }
            }
        }
        for (column, name) in names.iter().enumerate().skip(2) {
            if name.is_empty() {
                return Err(header_error(
                    column,
                    Phrase::new("replay.refuse.trace.unnamed"),
                ));
            }
            if names[..column]
                .iter()
                .any(|earlier| earlier.eq_ignore_ascii_case(name))
            {
                return Err(header_error(
                    column,
                    Phrase::new("replay.refuse.trace.twice").text("name", name),
                ));
            }
        }
        let mem_column = names
            .iter()
            .skip(2)
            .position(|name| name.eq_ignore_ascii_case("mem_pct"))
            .map(|i| i + 2);
        let named = |wanted: &str| {
            names
                .iter()
                .skip(2)
                .position(|name| name.eq_ignore_ascii_case(wanted))
                .map(|i| i + 2)
        };
        let spot_column = named(SPOT_COLUMNS[0]);
        let interrupted_column = named(SPOT_COLUMNS[1]);
        let mut spot_price_fen = spot_column.map(|_| Vec::new());
        let mut interrupted = interrupted_column.map(|_| Vec::new());

        let mut demand = Vec::new();
        let mut metrics: Vec<Vec<Option<f64>>> = vec![Vec::new(); names.len() - 2];
        for (line, row) in lines {
            let cells: Vec<&str> = row.split(',').map(str::trim).collect();
            let cell_error = |column: usize, words: Phrase| {
                TraceError::new(line, Some(column + 1), names.get(column).cloned(), words)
            };
            if cells.len() != names.len() {
                return Err(TraceError::new(
                    line,
                    None,
                    None,
                    Phrase::new("replay.refuse.trace.cells")
                        .int("cells", int(cells.len()))
                        .int("columns", int(names.len())),
                ));
            }
            let expected = demand.len();
            match cells[0].parse::<u64>() {
                Ok(minute) if minute == expected as u64 => {}
                Ok(minute) => {
                    return Err(cell_error(
                        0,
                        Phrase::new("replay.refuse.trace.order")
                            .int("at", i64::try_from(minute).unwrap_or(i64::MAX))
                            .int("expected", int(expected)),
                    ));
                }
                Err(_) => {
                    return Err(cell_error(
                        0,
                        Phrase::new("replay.refuse.trace.notMinute").text("value", cells[0]),
                    ));
                }
            }
            if expected >= MAX_MINUTES {
                return Err(cell_error(
                    0,
                    Phrase::new("replay.refuse.trace.tooLong").int("most", int(MAX_MINUTES)),
                ));
            }
            match cells[1].parse::<f64>() {
                Ok(gpus) if gpus.is_finite() && (0.0..=MAX_DEMAND_GPUS).contains(&gpus) => {
                    demand.push(gpus);
                }
                Ok(_) => {
                    return Err(cell_error(
                        1,
                        Phrase::new("replay.refuse.trace.demandRange")
                            .text("value", cells[1])
                            .int("most", MAX_DEMAND_GPUS as i64),
                    ));
                }
                Err(_) => {
                    return Err(cell_error(
                        1,
                        Phrase::new("costs.refuse.demand.notGpus").text("value", cells[1]),
                    ));
                }
            }
            for (i, cell) in cells.iter().enumerate().skip(2) {
                if Some(i) == spot_column {
                    let fen = match parse_yuan_fen(cell) {
                        Ok(fen) => fen,
                        Err(words) => return Err(cell_error(i, words)),
                    };
                    if let Some(prices) = spot_price_fen.as_mut() {
                        prices.push(fen);
                    }
                    metrics[i - 2].push(None);
                    continue;
                }
                if Some(i) == interrupted_column {
                    let count = if cell.is_empty() {
                        0
                    } else {
                        cell.parse::<u32>().map_err(|_| {
                            cell_error(
                                i,
                                Phrase::new("replay.refuse.trace.interrupted")
                                    .text("value", *cell)
                                    .text("column", SPOT_COLUMNS[1]),
                            )
                        })?
                    };
                    if let Some(counts) = interrupted.as_mut() {
                        counts.push(count);
                    }
                    metrics[i - 2].push(None);
                    continue;
                }
                let value = if cell.is_empty() {
                    None
                } else {
                    match cell.parse::<f64>() {
                        Ok(value)
                            if value.is_finite()
                                && value < 0.0
                                && QUEUE_COLUMNS.contains(&names[i].as_str()) =>
                        {
                            return Err(cell_error(
                                i,
                                Phrase::new("replay.refuse.trace.queueNegative")
                                    .text("value", *cell)
                                    .text("column", &names[i]),
                            ));
                        }
                        Ok(value) if value.is_finite() => Some(value),
                        _ => {
                            return Err(cell_error(
                                i,
                                Phrase::new("replay.refuse.trace.notNumber").text("value", *cell),
                            ));
                        }
                    }
                };
                metrics[i - 2].push(value);
            }
        }
        if demand.is_empty() {
            return Err(TraceError::new(
                header_line,
                None,
                None,
                Phrase::new("costs.refuse.demand.noRows"),
            ));
        }
        let mut mem_pct = None;
        let mut columns = Vec::new();
        for (i, values) in metrics.into_iter().enumerate() {
            if Some(i + 2) == mem_column {
                mem_pct = Some(values);
            } else if Some(i + 2) == spot_column || Some(i + 2) == interrupted_column {
                // Read above into their own series.
            } else {
                columns.push(Column {
                    name: names[i + 2].clone(),
                    values,
                });
            }
        }
        Ok(Trace {
            demand,
            mem_pct,
            spot_price_fen,
            interrupted,
            columns,
            stuck: None,
        }
        .without_stuck_jobs())
    }

    /// With `slurm_pending_gpus` and `slurm_idle_gpus`: the stuck jobs' GPUs
    /// ([`super::stuck::stuck_gpus`]) taken out of `demand`, `slurm_demand_gpus` and
    /// `slurm_pending_gpus` (none below 0), and kept.
    fn without_stuck_jobs(mut self) -> Trace {
        use super::stuck::{IDLE_COLUMN, PENDING_COLUMN, stuck_gpus};
        use crate::suggest::queue::DEMAND_METRIC;
        let (Some(pending), Some(idle)) = (self.column(PENDING_COLUMN), self.column(IDLE_COLUMN))
        else {
            return self;
        };
        let stuck = stuck_gpus(&pending.values, &idle.values);
        for (gpus, taken) in self.demand.iter_mut().zip(&stuck) {
            *gpus = (*gpus - taken).max(0.0);
        }
        for column in &mut self.columns {
            if column.name == PENDING_COLUMN || column.name == DEMAND_METRIC {
                for (cell, taken) in column.values.iter_mut().zip(&stuck) {
                    if let Some(gpus) = cell {
                        *gpus = (*gpus - taken).max(0.0);
                    }
                }
            }
        }
        self.stuck = Some(stuck);
        self
    }

    /// The stuck GPUs taken out of the demand each minute, when the trace tells them (its
    /// `slurm_pending_gpus` and `slurm_idle_gpus` columns).
    pub fn stuck_gpus(&self) -> Option<&[f64]> {
        self.stuck.as_deref()
    }

    /// Minutes in the trace (at least 1).
    pub fn minutes(&self) -> usize {
        self.demand.len()
    }

    /// The busy work each minute, in GPUs.
    pub fn demand(&self) -> &[f64] {
        &self.demand
    }

    /// The `mem_pct` column, when there is one.
    pub fn mem_pct(&self) -> Option<&[Option<f64>]> {
        self.mem_pct.as_deref()
    }

    /// The `spot_price` column in fen per GPU-hour, when there is one.
    pub fn spot_price_fen(&self) -> Option<&[i64]> {
        self.spot_price_fen.as_deref()
    }

    /// The `interrupted` column, when there is one.
    pub fn interrupted(&self) -> Option<&[u32]> {
        self.interrupted.as_deref()
    }

    /// The other metric columns, in the header's order.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// The metrics `rules` read that this trace has no column for (a custom metric's, or
    /// `mem_pct` for `mem_util`), each with the rules reading it: those rules never act in
    /// a replay of it, which the replay's reader must hear before its figures.
    pub fn unread_metrics(&self, rules: &ebb_wire::rules::RuleSet) -> Vec<UnreadMetric> {
        let read = rules
            .thresholds
            .iter()
            .map(|rule| (&rule.name, &rule.metric))
            .chain(rules.targets.iter().map(|rule| (&rule.name, &rule.metric)));
        let mut unread: Vec<UnreadMetric> = Vec::new();
        for (rule, metric) in read {
            let column = match metric {
                MetricRef::Custom { name } if self.column(name).is_none() => name.as_str(),
                MetricRef::MemUtil if self.mem_pct.is_none() => "mem_pct",
                _ => continue,
            };
            match unread.iter_mut().find(|seen| seen.column == column) {
                Some(seen) => seen.rules.push(rule.clone()),
                None => unread.push(UnreadMetric {
                    column: column.to_string(),
                    rules: vec![rule.clone()],
                }),
            }
        }
        unread
    }

    /// The metric column named `name` (as the header wrote it), if any.
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|column| column.name == name)
    }

    /// This trace with a metric column `name` (in place of one of that name); `None` when
    /// `values` is not one per minute.
    pub fn with_column(mut self, name: &str, values: Vec<Option<f64>>) -> Option<Trace> {
        if values.len() != self.minutes() {
            return None;
        }
        let column = Column {
            name: name.to_string(),
            values,
        };
        match self.columns.iter_mut().find(|c| c.name == name) {
            Some(old) => *old = column,
            None => self.columns.push(column),
        }
        Some(self)
    }

    /// The largest demand, rounded up to whole GPUs.
    pub fn peak_gpus(&self) -> u32 {
        whole_gpus(self.demand.iter().copied().fold(0.0, f64::max))
    }

    /// The first minutes only (for an in-sample half); `None` when `minutes` is 0.
    pub fn head(&self, minutes: usize) -> Option<Trace> {
        self.slice(0, minutes)
    }

    /// The minutes from `start` on (renumbered from 0); `None` when none are left.
    pub fn tail(&self, start: usize) -> Option<Trace> {
        self.slice(start, self.minutes())
    }

    fn slice(&self, start: usize, end: usize) -> Option<Trace> {
        let end = end.min(self.minutes());
        (start < end).then(|| Trace {
            demand: self.demand[start..end].to_vec(),
            mem_pct: self
                .mem_pct
                .as_ref()
                .map(|values| values[start..end].to_vec()),
            spot_price_fen: self
                .spot_price_fen
                .as_ref()
                .map(|values| values[start..end].to_vec()),
            interrupted: self
                .interrupted
                .as_ref()
                .map(|values| values[start..end].to_vec()),
            columns: self
                .columns
                .iter()
                .map(|column| Column {
                    name: column.name.clone(),
                    values: column.values[start..end].to_vec(),
                })
                .collect(),
            stuck: self
                .stuck
                .as_ref()
                .map(|values| values[start..end].to_vec()),
        })
    }
}

/// A `spot_price` cell, yuan per GPU-hour (`4.5`, `4.375`), into fen, half a fen rounded
/// up; the words name what is wrong.
fn parse_yuan_fen(cell: &str) -> Result<i64, Phrase> {
    if cell.is_empty() {
        return Err(Phrase::new("replay.refuse.trace.spotGap").text("column", SPOT_COLUMNS[0]));
    }
    let not_a_price = || Phrase::new("replay.refuse.trace.spotPrice").text("value", cell);
    let (negative, digits) = match cell.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, cell.strip_prefix('+').unwrap_or(cell)),
    };
    let (whole, decimals) = digits.split_once('.').unwrap_or((digits, ""));
    let all_digits = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
    if (whole.is_empty() && decimals.is_empty()) || !all_digits(whole) || !all_digits(decimals) {
        return Err(not_a_price());
    }
    if negative && (whole.bytes().chain(decimals.bytes())).any(|b| b != b'0') {
        return Err(Phrase::new("replay.refuse.trace.spotNegative")
            .text("value", cell)
            .text("column", SPOT_COLUMNS[0]));
    }
    let whole: i64 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| not_a_price())?
    };
    let digit = |i: usize| i64::from(decimals.as_bytes().get(i).map_or(0, |b| b - b'0'));
    let round_up = i64::from(digit(2) >= 5);
    whole
        .checked_mul(100)
        .and_then(|fen| fen.checked_add(digit(0) * 10 + digit(1) + round_up))
        .ok_or_else(not_a_price)
}

/// Demand in whole GPUs: rounded up, with a little slack so that float noise (3.0000000001)
/// does not cost a GPU.
pub fn whole_gpus(demand: f64) -> u32 {
    let rounded = (demand - 1e-9).ceil();
    if rounded <= 0.0 {
        0
    } else {
        rounded.min(f64::from(u32::MAX)) as u32
    }
}
