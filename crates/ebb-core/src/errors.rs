//! Every console error as the fronts report it, mapped once (the state's own in
//! `ebb_state::errors`, with the [`Reported`] trait): its kind ([`IpcErrorKind`]),
//! the field it names and the line, as an [`IpcError`]. The desktop shell returns that
//! (each error converts with `?`), and the CLI's exit code reads the same kind
//! ([`report_in_chain`], [`IpcErrorKind::refuses_input`]). An error is logged where its
//! kind is `Internal` (a bug or a broken database), once, as it is converted.

use crate::access::{AdminError, RoleRequired};
use crate::catalog_store::CatalogStoreError;
use crate::console::ConsoleError;
use crate::console_charts::ChartError;
use crate::console_costs::CostError;
use crate::console_rules::{PromqlTestError, RulesError};
use crate::console_slurm::SlurmOpError;
use crate::pools::PoolError;
use crate::registry::RegistryError;
use crate::rules_replay::ReplayError;
pub use ebb_state::errors::Reported;
use ebb_state::errors::{internal, kind};
use ebb_telemetry::metrics_store::MetricsError;
use ebb_wire::ipc::{IpcError, IpcErrorKind};
use ebb_wire::phrase::Phrase;

impl Reported for ChartError {
    fn report(&self) -> IpcError {
        match self {
            ChartError::Invalid { field, words, .. } => IpcError {
                words: Some(words.as_ref().clone()),
                ..IpcError::invalid(field, self.to_string())
            },
            ChartError::NoHost(_) => IpcError {
                field: Some("host".into()),
                ..kind(IpcErrorKind::NotFound, self)
            },
            ChartError::Metrics(error) => error.report(),
            ChartError::MetricsUnavailable(_) => kind(IpcErrorKind::MetricsUnavailable, self),
            ChartError::Pool(error) => error.report(),
            ChartError::Write { .. } => kind(IpcErrorKind::Io, self),
            ChartError::Raster(_) => internal(self),
        }
    }
}

impl Reported for CostError {
    fn report(&self) -> IpcError {
        match self {
            CostError::Catalog(CatalogStoreError::Invalid { .. }) => {
                kind(IpcErrorKind::InvalidCatalog, self)
            }
            CostError::Catalog(_) => kind(IpcErrorKind::Io, self),
            CostError::Invalid {
                field, line, words, ..
            } => IpcError {
                words: Some(words.as_ref().clone()),
                ..IpcError::invalid(field, self.to_string())
            }
            .at_line(line.unwrap_or(0)),
            CostError::Compare { words, .. } => IpcError {
                words: Some(words.as_ref().clone()),
                ..kind(IpcErrorKind::InvalidInput, self)
            },
            CostError::RoleRequired(refused) => refused.report(),
        }
    }
}

impl Reported for ConsoleError {
    fn report(&self) -> IpcError {
        match self {
            ConsoleError::Registry(error) => error.report(),
            ConsoleError::Agent(problem) => IpcError::of_host(problem.clone()),
            ConsoleError::Metrics(error) => error.report(),
            ConsoleError::MetricsUnavailable(_) => kind(IpcErrorKind::MetricsUnavailable, self),
            ConsoleError::DataDir { .. } => kind(IpcErrorKind::Io, self),
        }
    }
}

impl Reported for RulesError {
    fn report(&self) -> IpcError {
        match self {
            RulesError::Invalid(_) => {
                let first = self.first_problem();
                let (field, line) = first.map_or(("rules", None), |problem| {
                    (problem.field.as_str(), problem.line)
                });
                IpcError {
                    line,
                    // The problem its field and line name, in the operator's words.
                    words: Some(first.map_or_else(
                        || Phrase::new("rules.refuse.invalid"),
                        |problem| problem.words.clone(),
                    )),
                    ..IpcError::invalid(field, self.to_string())
                }
            }
            RulesError::Unacknowledged(_) => kind(IpcErrorKind::UnacknowledgedWarnings, self),
            RulesError::Pool(error) => error.report(),
        }
    }
}

impl Reported for PromqlTestError {
    fn report(&self) -> IpcError {
        match self {
            // What is wrong with the query: the query check's English or what Prometheus
            // answered, as the detail of a sentence each language words.
            PromqlTestError::Query(detail) => IpcError {
                words: Some(Phrase::new("rules.refuse.promqlQuery").text("detail", detail)),
                ..IpcError::invalid("prometheus", self.to_string())
            },
            PromqlTestError::NoServer | PromqlTestError::Unavailable(_) => {
                kind(IpcErrorKind::MetricsUnavailable, self)
            }
            PromqlTestError::Pool(error) => error.report(),
        }
    }
}

impl Reported for ReplayError {
    fn report(&self) -> IpcError {
        match self {
            ReplayError::Invalid {
                field,
                line,
                message,
                words,
            } => IpcError {
                line: *line,
                words: words.clone(),
                ..IpcError::invalid(field, format!("{field}: {message}"))
            },
            ReplayError::Pool(error) => error.report(),
            ReplayError::Cost(error) => IpcError {
                words: Some(crate::console_costs::cost_words(error)),
                ..kind(IpcErrorKind::InvalidInput, self)
            },
            ReplayError::Chart(error) => IpcError {
                words: Some(crate::console_charts::draw_words(error)),
                ..kind(IpcErrorKind::InvalidInput, self)
            },
            ReplayError::Task(_) => internal(self),
        }
    }
}

impl Reported for SlurmOpError {
    fn report(&self) -> IpcError {
        match self {
            SlurmOpError::Pools(error) => error.report(),
            SlurmOpError::NoPool(_) => kind(IpcErrorKind::NotFound, self),
            SlurmOpError::NoBinding
            | SlurmOpError::Binding(_)
            | SlurmOpError::Hostlist(_)
            | SlurmOpError::NotBound(_) => IpcError {
                words: Some(slurm_refusal(self)),
                ..IpcError::invalid("slurm.toml", self.to_string())
            },
            // Slurm's own commands failed: not the operator's input.
            SlurmOpError::Slurm(_) => internal(self),
        }
    }
}

/// A Slurm binding's refusal in the operator's words. What the binding file's reader or a
/// hostlist's parser says (their English, of the file or of Slurm's syntax) is the detail.
fn slurm_refusal(error: &SlurmOpError) -> Phrase {
    let file = crate::slurm::binder::BINDING_FILE;
    match error {
        SlurmOpError::Binding(detail) => Phrase::new("slurm.refuse.binding")
            .text("file", file)
            .text("detail", detail),
        SlurmOpError::Hostlist(detail) => {
            Phrase::new("slurm.refuse.hostlist").text("detail", detail)
        }
        SlurmOpError::NotBound(nodes) => Phrase::new("slurm.refuse.notBound")
            .text("nodes", nodes)
            .text("file", file),
        _ => Phrase::new("slurm.refuse.noBinding").text("file", file),
    }
}

/// Converts each of the console's own errors into the IPC error (`?` in the desktop shell),
/// logging the internal ones (the state's errors convert in `ebb_state::errors`).
macro_rules! into_ipc {
    ($($error:ty),* $(,)?) => {$(
        impl From<$error> for IpcError {
            fn from(error: $error) -> Self {
                ebb_state::errors::into_ipc(&error)
            }
        }
    )*};
}

into_ipc!(
    ChartError,
    CostError,
    ConsoleError,
    RulesError,
    PromqlTestError,
    ReplayError,
    SlurmOpError,
);

/// The report of the first error in `chain` (an error and its causes) that the console
/// knows; `None` when none is one of its.
pub fn report_in_chain<'a>(
    chain: impl IntoIterator<Item = &'a (dyn std::error::Error + 'static)>,
) -> Option<IpcError> {
    chain.into_iter().find_map(|cause| {
        macro_rules! first {
            ($($error:ty),*) => {$(
                if let Some(error) = cause.downcast_ref::<$error>() {
                    return Some(error.report());
                }
            )*};
        }
        first!(
            RoleRequired,
            MetricsError,
            ChartError,
            CostError,
            RegistryError,
            ConsoleError,
            PoolError,
            RulesError,
            PromqlTestError,
            ReplayError,
            SlurmOpError,
            AdminError,
            sqlx::Error
        );
        None
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::console_charts::{draw_words, export_file_name};
    use crate::console_costs::cost_words;
    use crate::rules_replay::{history_trace, trace_from_csv};
    use ebb_charts::chart::ChartError as DrawError;
    use ebb_wire::ipc::ExportFormat;

    /// The words of `error`'s refusal, as the UI gets them.
    fn words(error: &impl Reported) -> Phrase {
        error.report().words.expect("a refusal is worded")
    }

    /// Every refusal of the console's own, one of each: a chart's, a plan comparison's, a
    /// replay's, a PromQL test's, a Slurm binding's and a showback's; each as its path words
    /// it where that is pure, else with the arguments it gives.
    fn refusals() -> Vec<Phrase> {
        let text = |s: &str| s.to_string();
        let mut out = vec![
            words(&export_file_name("../ ..", ExportFormat::Svg).unwrap_err()),
            words(&trace_from_csv("minute,demand\n0,1\n1,x\n").unwrap_err()),
            words(&trace_from_csv("minute\n").unwrap_err()),
            words(&trace_from_csv("minute,demand\n").unwrap_err()),
            words(&history_trace(&[]).unwrap_err()),
            words(&PromqlTestError::Query(text(
                "`up`: the answer is 2 series",
            ))),
            words(&SlurmOpError::NoBinding),
            words(&SlurmOpError::Binding(text(
                "slurm.toml: expected `=` at line 3",
            ))),
            words(&SlurmOpError::Hostlist(text("gpu[1-"))),
            words(&SlurmOpError::NotBound(text("gpu9"))),
            words(&ReplayError::Cost(ebb_cost::CostError::EmptyDemand)),
            words(&ReplayError::Chart(DrawError::Window)),
            words(&RulesError::Invalid(ebb_wire::rules::LintReport {
                file: text("web.toml"),
                valid: false,
                errors: Vec::new(),
                warnings: Vec::new(),
            })),
            Phrase::new("chart.refuse.range")
                .int("days", 400)
                .int("seconds", 0),
            Phrase::new("chart.refuse.notSvg"),
            Phrase::new("chart.refuse.noSize"),
            Phrase::new("chart.refuse.read").text("detail", "database is locked"),
            Phrase::new("replay.refuse.shortHistory")
                .phrase("minutes", Phrase::new("replay.minutes.one").int("n", 1))
                .int("least", 30)
                .text("columns", "minute,demand"),
            Phrase::new("replay.refuse.unusableHistory"),
            Phrase::new("replay.refuse.noPrice")
                .text("model", "A100")
                .text("regions", "cn-east, cn-north"),
            Phrase::new("replay.refuse.maxShortfall").text("value", "100.5"),
            Phrase::new("rules.refuse.invalid"),
            Phrase::new("showback.refuse.month").text("month", "2026-13"),
            Phrase::new("showback.refuse.notBegun").text("month", "2099-01"),
            Phrase::new("spend.refuse.overflow"),
        ];
        out.extend(
            [
                DrawError::Size {
                    field: "width_px",
                    value: 9,
                },
                DrawError::Size {
                    field: "height_px",
                    value: 9,
                },
                DrawError::Window,
                DrawError::Range {
                    from_ms: 5,
                    to_ms: 1,
                },
                DrawError::Offset(2000),
                DrawError::Draw(text("the backend failed")),
            ]
            .iter()
            .map(draw_words),
        );
        out.extend(
            [
                ebb_cost::CostError::NoPrice {
                    model: text("A100"),
                    region: text("cn-east"),
                    available: text("H800 in cn-north"),
                },
                ebb_cost::CostError::NotOffered {
                    model: text("A100"),
                    region: text("cn-east"),
                    field: "week",
                },
                ebb_cost::CostError::EmptyDemand,
                ebb_cost::CostError::DemandTooLong { hours: 100_000 },
                ebb_cost::CostError::DemandTooLarge { gpus: 2_000_000 },
                ebb_cost::CostError::Overflow,
            ]
            .iter()
            .map(cost_words),
        );
        out
    }

    #[test]
    fn every_refusal_of_the_console_reads_in_chinese_without_english() {
        let refusals = refusals();
        let wrong = ebb_state::errors::not_in_chinese(&refusals);
        assert!(wrong.is_empty(), "{wrong:#?}");
        // Each refusal these sources word is one of those read here.
        let sources = [
            include_str!("console_charts.rs"),
            include_str!("console_costs.rs"),
            include_str!("console_showback.rs"),
            include_str!("rules/rules_replay.rs"),
            include_str!("errors.rs"),
        ];
        let unread = ebb_state::errors::unread_refusals(&sources, &refusals);
        assert!(unread.is_empty(), "refusals no test reads: {unread:?}");
    }

    #[test]
    fn a_refusal_keeps_its_english_for_the_cli_and_its_words_for_the_ui() {
        let error = history_trace(&[]).unwrap_err();
        let report = error.report();
        assert_eq!(
            report.message,
            "trace: the pool has recorded 0 minutes of history and a replay needs at least 30: let it run longer, or give a trace (CSV minute,demand)"
        );
        assert_eq!(
            ebb_wire::catalog::Words::of(ebb_wire::ipc::UiLanguage::SimplifiedChinese)
                .render(&report.words.unwrap()),
            "该资源池只记录了 0 分钟的历史，回放至少需要 30 分钟：请让它再运行一段时间，或提供需求轨迹文件（CSV：minute,demand）。"
        );
    }
}
