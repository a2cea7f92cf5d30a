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

impl Reported for ChartError {
    fn report(&self) -> IpcError {
        match self {
            ChartError::Invalid { field, .. } => IpcError::invalid(field, self.to_string()),
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
            CostError::Invalid { field, line, .. } => {
                IpcError::invalid(field, self.to_string()).at_line(line.unwrap_or(0))
            }
            CostError::Compare(_) => kind(IpcErrorKind::InvalidInput, self),
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
                    words: first.map(|problem| problem.words.clone()),
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
            PromqlTestError::Query(_) => IpcError::invalid("prometheus", self.to_string()),
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
            ReplayError::Cost(_) | ReplayError::Chart(_) => kind(IpcErrorKind::InvalidInput, self),
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
            | SlurmOpError::NotBound(_) => IpcError::invalid("slurm.toml", self.to_string()),
            // Slurm's own commands failed: not the operator's input.
            SlurmOpError::Slurm(_) => internal(self),
        }
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
