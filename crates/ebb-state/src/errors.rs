//! Every error of the console's state as the fronts report it, mapped once: its kind
//! ([`IpcErrorKind`]), the field it names and the line, as an [`IpcError`]. The console
//! (`ebb-core`) maps its own errors with the same [`Reported`] trait; the desktop shell
//! converts each with `IpcError::from`, and the CLI's exit code reads the same kind.

use crate::access::{AdminError, RoleRequired};
use crate::pools::PoolError;
use crate::registry::RegistryError;
use ebb_telemetry::metrics_store::MetricsError;
use ebb_wire::ipc::{IpcError, IpcErrorKind};
use ebb_wire::phrase::Phrase;

/// An error as every front reports it. Pure: no logging here.
pub trait Reported {
    fn report(&self) -> IpcError;
}

pub fn kind(kind: IpcErrorKind, error: &impl std::fmt::Display) -> IpcError {
    IpcError::new(kind, error.to_string())
}

pub fn internal(error: &impl std::fmt::Display) -> IpcError {
    kind(IpcErrorKind::Internal, error)
}

/// The database refused for want of a privilege (a role's grants or row-level security).
pub fn refused_by_database(error: &impl std::fmt::Display) -> IpcError {
    IpcError::new(
        IpcErrorKind::RoleRequired,
        format!("the database refused it for your role: {error}"),
    )
}

impl Reported for RoleRequired {
    /// `field` names the role it needs.
    fn report(&self) -> IpcError {
        IpcError {
            field: Some(self.needs.name().to_string()),
            ..kind(IpcErrorKind::RoleRequired, self)
        }
    }
}

impl Reported for MetricsError {
    fn report(&self) -> IpcError {
        match self {
            MetricsError::Invalid { field, .. } => IpcError::invalid(field, self.to_string()),
            other => IpcError::new(
                IpcErrorKind::Internal,
                format!("the metrics store failed: {other}"),
            ),
        }
    }
}

impl Reported for RegistryError {
    fn report(&self) -> IpcError {
        match self {
            RegistryError::Invalid { field, words, .. } => IpcError {
                words: words.as_deref().cloned(),
                ..IpcError::invalid(field, self.to_string())
            },
            RegistryError::NotFound(_) => kind(IpcErrorKind::NotFound, self),
            RegistryError::Vault(_) => kind(IpcErrorKind::TokenStore, self),
            RegistryError::RoleRequired(refused) => refused.report(),
            RegistryError::Sql(sql) if crate::access::is_refused(sql) => refused_by_database(self),
            RegistryError::HoldsGpus { .. } => IpcError {
                field: Some("name".into()),
                ..kind(IpcErrorKind::HostHoldsGpus, self)
            },
            RegistryError::Open { .. } | RegistryError::Sql(_) => internal(self),
        }
    }
}

impl Reported for PoolError {
    fn report(&self) -> IpcError {
        match self {
            PoolError::Invalid { field, words, .. } => IpcError {
                words: words.as_deref().cloned(),
                ..IpcError::invalid(field, self.to_string())
            },
            PoolError::Exists(name) => IpcError {
                words: Some(Phrase::new("pool.refuse.exists").text("name", name)),
                ..IpcError::invalid("name", self.to_string())
            },
            PoolError::NotFound(_) => kind(IpcErrorKind::NotFound, self),
            PoolError::Moved { .. } => IpcError {
                field: Some("from".to_string()),
                ..kind(IpcErrorKind::Conflict, self)
            },
            PoolError::RoleRequired(refused) => refused.report(),
            PoolError::Db(sql) if crate::access::is_refused(sql) => refused_by_database(self),
            PoolError::Registry(error) => error.report(),
            PoolError::Db(_) | PoolError::Slurm(_) => internal(self),
        }
    }
}

impl Reported for AdminError {
    fn report(&self) -> IpcError {
        match self {
            AdminError::Invalid { field, .. } => IpcError::invalid(field, self.to_string()),
            AdminError::NotShared => kind(IpcErrorKind::InvalidInput, self),
            AdminError::Privilege(_) => kind(IpcErrorKind::RoleRequired, self),
            AdminError::Db(sql) if crate::access::is_refused(sql) => refused_by_database(self),
            AdminError::Db(_) => internal(self),
        }
    }
}

impl Reported for sqlx::Error {
    fn report(&self) -> IpcError {
        if crate::access::is_refused(self) {
            refused_by_database(self)
        } else {
            internal(self)
        }
    }
}

/// The IPC error for `error`, logged when it is internal (a bug or a broken database):
/// what each `From` for [`IpcError`] runs.
pub fn into_ipc(error: &impl Reported) -> IpcError {
    let report = error.report();
    if report.kind == IpcErrorKind::Internal {
        tracing::error!(error = %report.message, "console failure");
    }
    report
}

impl From<RoleRequired> for IpcError {
    fn from(error: RoleRequired) -> Self {
        into_ipc(&error)
    }
}

impl From<RegistryError> for IpcError {
    fn from(error: RegistryError) -> Self {
        into_ipc(&error)
    }
}

impl From<PoolError> for IpcError {
    fn from(error: PoolError) -> Self {
        into_ipc(&error)
    }
}

impl From<AdminError> for IpcError {
    fn from(error: AdminError) -> Self {
        into_ipc(&error)
    }
}
