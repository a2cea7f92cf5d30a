//! The planning input: GPUs needed each hour, from a CSV `hour,demand` or `minute,demand`.

use crate::CostError;
use ebb_wire::catalog::Words;
use ebb_wire::ipc::UiLanguage;
use ebb_wire::phrase::Phrase;
use serde::Serialize;
use std::fmt;

/// The longest series accepted: ten years of hours.
pub const MAX_HOURS: usize = 10 * 8_760;
/// The most GPUs one hour may need.
pub const MAX_GPUS: u32 = 1_000_000;

/// How fine the source rows were.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Resolution {
    /// `hour,demand`.
    Hour,
    /// `minute,demand`: each hour took its highest minute.
    Minute,
}

/// Whole GPUs needed in each hour, from `first_hour` on, with no gaps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DemandSeries {
    first_hour: i64,
    gpus: Vec<u32>,
    resolution: Resolution,
}

/// A row or cell of a demand CSV that could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error, Serialize)]
pub struct DemandError {
    /// 1-based line in the file.
    pub line: usize,
    /// 1-based column, when one cell is at fault.
    pub column: Option<usize>,
    /// That column's header name.
    pub column_name: Option<String>,
    /// What is wrong, in English (`words` in the English catalog).
    pub message: String,
    /// What is wrong, in the operator's words (`costs.refuse.demand.*`, or a replay
    /// trace's `replay.refuse.trace.*`).
    pub words: Phrase,
}

impl DemandError {
    /// The problem `words` at `line` (and `column`, 1-based, named `column_name` in the
    /// header); its English `message` is those words in the English catalog, so a sentence
    /// is written once.
    pub fn new(
        line: usize,
        column: Option<usize>,
        column_name: Option<String>,
        words: Phrase,
    ) -> DemandError {
        DemandError {
            line,
            column,
            column_name,
            message: Words::of(UiLanguage::English).render(&words),
            words,
        }
    }
}

/// `n` as a phrase's whole number.
fn int(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl fmt::Display for DemandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}", self.line)?;
        if let Some(column) = self.column {
            write!(f, ", column {column}")?;
        }
        if let Some(name) = &self.column_name {
            write!(f, " (`{name}`)")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl DemandSeries {
    /// A series from GPUs per hour, the first at `first_hour`.
    pub fn from_hourly(
        first_hour: i64,
        gpus_per_hour: Vec<u32>,
    ) -> Result<DemandSeries, CostError> {
        if gpus_per_hour.is_empty() {
            return Err(CostError::EmptyDemand);
        }
        if gpus_per_hour.len() > MAX_HOURS {
            return Err(CostError::DemandTooLong {
                hours: gpus_per_hour.len(),
            });
        }
        if let Some(&gpus) = gpus_per_hour.iter().find(|&&gpus| gpus > MAX_GPUS) {
            return Err(CostError::DemandTooLarge { gpus });
        }
        Ok(DemandSeries {
            first_hour,
            gpus: gpus_per_hour,
            resolution: Resolution::Hour,
        })
    }

    /// Parses `hour,demand` or `minute,demand` (a header, then one row per hour or minute;
    /// extra columns are ignored). Demand may be fractional: an hour needs `ceil(demand)`
    /// GPUs. A minute file gives each hour its highest minute. Rows must be in time order,
    /// each hour or minute once; a missing one needs no GPU. Blank lines and lines starting
    /// with `#` are skipped, and so is a byte order mark (spreadsheets write one).
    pub fn from_csv(text: &str) -> Result<DemandSeries, DemandError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(i, line)| (i + 1, line.trim()))
            .filter(|(_, line)| !line.is_empty() && !line.starts_with('#'));
        let Some((header_line, header)) = lines.next() else {
            return Err(DemandError::new(
                1,
                None,
                None,
                Phrase::new("costs.refuse.demand.empty")
                    .text("hour", "hour,demand")
                    .text("minute", "minute,demand"),
            ));
        };
        let names: Vec<String> = header
            .split(',')
            .map(|cell| cell.trim().to_ascii_lowercase())
            .collect();
        let resolution = match names[0].as_str() {
            "hour" => Resolution::Hour,
            "minute" => Resolution::Minute,
            other => {
                return Err(DemandError::new(
                    header_line,
                    Some(1),
                    Some(other.to_string()),
                    Phrase::new("costs.refuse.demand.firstColumn")
                        .text("hour", "hour")
                        .text("minute", "minute"),
                ));
            }
        };
        let Some(demand_column) = names.iter().position(|name| name == "demand") else {
            return Err(DemandError::new(
                header_line,
                None,
                None,
                Phrase::new("costs.refuse.demand.noDemand")
                    .text("column", "demand")
                    .text("header", header),
            ));
        };
        let (per_hour, index_key) = match resolution {
            Resolution::Hour => (1, "costs.refuse.demand.index.hour"),
            Resolution::Minute => (60, "costs.refuse.demand.index.minute"),
        };
        let index_name = Phrase::new(index_key);

        let mut first_hour: Option<i64> = None;
        let mut last_index: Option<i64> = None;
        let mut gpus: Vec<u32> = Vec::new();
        for (line, row) in lines {
            let cells: Vec<&str> = row.split(',').map(str::trim).collect();
            let cell_error = |column: usize, words: Phrase| {
                DemandError::new(line, Some(column + 1), Some(names[column].clone()), words)
            };
            if cells.len() != names.len() {
                return Err(DemandError::new(
                    line,
                    None,
                    None,
                    Phrase::new("costs.refuse.demand.cells")
                        .int("cells", int(cells.len()))
                        .int("columns", int(names.len())),
                ));
            }
            let index: i64 = cells[0]
                .parse()
                .ok()
                .filter(|index| *index >= 0)
                .ok_or_else(|| {
                    cell_error(
                        0,
                        Phrase::new("costs.refuse.demand.notIndex")
                            .text("value", cells[0])
                            .phrase("index", index_name.clone()),
                    )
                })?;
            if let Some(last) = last_index
                && index <= last
            {
                return Err(cell_error(
                    0,
                    Phrase::new("costs.refuse.demand.order")
                        .phrase("index", index_name.clone())
                        .int("at", index)
                        .int("last", last),
                ));
            }
            last_index = Some(index);

            let text = cells[demand_column];
            let demand: f64 = text
                .parse()
                .ok()
                .filter(|demand: &f64| demand.is_finite())
                .ok_or_else(|| {
                    cell_error(
                        demand_column,
                        Phrase::new("costs.refuse.demand.notGpus").text("value", text),
                    )
                })?;
            if demand < 0.0 {
                return Err(cell_error(
                    demand_column,
                    Phrase::new("costs.refuse.demand.negative").text("value", text),
                ));
            }
            if demand > f64::from(MAX_GPUS) {
                return Err(cell_error(
                    demand_column,
                    Phrase::new("costs.refuse.demand.tooMany")
                        .text("value", text)
                        .int("most", MAX_GPUS),
                ));
            }
            let needed = gpus_needed(demand);

            let hour = index / per_hour;
            let first = *first_hour.get_or_insert(hour);
            let offset = usize::try_from(hour - first).unwrap_or(usize::MAX);
            if offset >= MAX_HOURS {
                return Err(cell_error(
                    0,
                    Phrase::new("costs.refuse.demand.tooLong").int("most", int(MAX_HOURS)),
                ));
            }
            if offset >= gpus.len() {
                gpus.resize(offset + 1, 0);
            }
            gpus[offset] = gpus[offset].max(needed);
        }
        let Some(first_hour) = first_hour else {
            return Err(DemandError::new(
                header_line,
                None,
                None,
                Phrase::new("costs.refuse.demand.noRows"),
            ));
        };
        Ok(DemandSeries {
            first_hour,
            gpus,
            resolution,
        })
    }

    /// The hour of the first point, in the file's clock.
    pub fn first_hour(&self) -> i64 {
        self.first_hour
    }

    /// How many hours the series spans (`H`).
    pub fn hours(&self) -> usize {
        self.gpus.len()
    }

    /// GPUs needed in each hour.
    pub fn gpus(&self) -> &[u32] {
        &self.gpus
    }

    /// Whether the source was hourly or by the minute.
    pub fn resolution(&self) -> Resolution {
        self.resolution
    }

    /// The most GPUs any hour needs.
    pub fn peak_gpus(&self) -> u32 {
        self.gpus.iter().copied().max().unwrap_or(0)
    }

    /// GPU-hours of work: the sum over hours of GPUs needed.
    pub fn used_gpu_hours(&self) -> u64 {
        self.gpus.iter().map(|&gpus| u64::from(gpus)).sum()
    }
}

/// Whole GPUs for a (possibly fractional) demand: `ceil`, forgiving float noise such as
/// `3.0000000001`.
fn gpus_needed(demand: f64) -> u32 {
    let nearest = demand.round();
    let whole = if (demand - nearest).abs() < 1e-9 {
        nearest
    } else {
        demand.ceil()
    };
    // 0 <= whole <= MAX_GPUS, checked by the caller.
    whole as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hourly_rows_with_gaps_fractions_and_extra_columns() {
        let csv = "# a comment\nhour, demand, users\n10,2,100\n11,2.3,120\n\n14,0.0000000001,1\n15,4.0000000001,9\n";
        let series = DemandSeries::from_csv(csv).unwrap();
        assert_eq!(series.first_hour(), 10);
        assert_eq!(series.gpus(), &[2, 3, 0, 0, 0, 4]);
        assert_eq!(series.resolution(), Resolution::Hour);
        assert_eq!(series.peak_gpus(), 4);
        assert_eq!(series.used_gpu_hours(), 9);
    }

    #[test]
    fn each_hour_takes_its_highest_minute() {
        let csv = "minute,demand\n0,1\n30,5.5\n59,2\n60,1\n179,3\n";
        let series = DemandSeries::from_csv(csv).unwrap();
        assert_eq!(series.first_hour(), 0);
        assert_eq!(series.gpus(), &[6, 1, 3]);
        assert_eq!(series.resolution(), Resolution::Minute);
    }

    #[test]
    fn errors_name_the_line_and_column() {
        let cases = [
            ("", "line 1: empty"),
            (
                "time,demand\n",
                "line 1, column 1 (`time`): the first column must be",
            ),
            ("hour,gpus\n0,1\n", "line 1: no `demand` column"),
            ("hour,demand\n", "line 1: no rows after the header"),
            (
                "hour,demand\n0,1\nx,2\n",
                "line 3, column 1 (`hour`): `x` is not a whole hour",
            ),
            (
                "hour,demand\n0,1\n-1,2\n",
                "line 3, column 1 (`hour`): `-1` is not a whole hour",
            ),
            (
                "hour,demand\n0,1\n1,lots\n",
                "line 3, column 2 (`demand`): `lots` is not a number",
            ),
            (
                "hour,demand\n0,1\n1,-2\n",
                "line 3, column 2 (`demand`): -2 is negative",
            ),
            (
                "hour,demand\n0,NaN\n",
                "line 2, column 2 (`demand`): `NaN` is not a number",
            ),
            (
                "hour,demand\n0,2000000\n",
                "line 2, column 2 (`demand`): 2000000 is more than",
            ),
            (
                "hour,demand\n\n5,1\n5,2\n",
                "line 4, column 1 (`hour`): hour 5 comes after 5",
            ),
            (
                "minute,demand\n9,1\n3,2\n",
                "line 3, column 1 (`minute`): minute 3 comes after 9",
            ),
            (
                "hour,demand,users\n0,1\n",
                "line 2: 2 cells, the header has 3",
            ),
            (
                "hour,demand\n0,1\n1,2,7\n",
                "line 3: 3 cells, the header has 2",
            ),
            (
                "hour,demand\n0,1\n87600,1\n",
                "line 3, column 1 (`hour`): the series would be longer",
            ),
        ];
        for (csv, expected) in cases {
            let error = DemandSeries::from_csv(csv).unwrap_err().to_string();
            assert!(error.starts_with(expected), "{csv:?}: {error}");
        }
    }

    #[test]
    fn from_hourly_refuses_empty_long_and_huge_series() {
        assert!(matches!(
            DemandSeries::from_hourly(0, vec![]),
            Err(CostError::EmptyDemand)
        ));
        assert!(matches!(
            DemandSeries::from_hourly(0, vec![0; MAX_HOURS + 1]),
            Err(CostError::DemandTooLong { .. })
        ));
        assert!(matches!(
            DemandSeries::from_hourly(0, vec![MAX_GPUS + 1]),
            Err(CostError::DemandTooLarge { .. })
        ));
        assert!(DemandSeries::from_hourly(0, vec![0; MAX_HOURS]).is_ok());
    }
}
