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

#[cfg(test)]
mod tests {
    use crate::pools::PoolError;
    use crate::pools::PoolProblem;
    use crate::registry::HostFieldProblem;
    use ebb_telemetry::client::UrlProblem;
    use ebb_wire::catalog::Words;
    use ebb_wire::ipc::UiLanguage;
    use ebb_wire::phrase::{Arg, Phrase};

    /// Every pool and host field problem, one of each kind, as a refusal reports it.
    fn refusals() -> Vec<Phrase> {
        let text = |s: &str| s.to_string();
        let pool = [
            PoolProblem::NameLength { empty: true },
            PoolProblem::NameLength { empty: false },
            PoolProblem::NamePattern { name: text("a b") },
            PoolProblem::ModelRequired,
            PoolProblem::UnknownModel {
                model: text("Z9"),
                known: vec![text("A100")],
            },
            PoolProblem::NoHostReports {
                model: text("A100"),
            },
            PoolProblem::NoHostIn {
                region: text("mars-1"),
                known: vec![],
            },
            PoolProblem::NoHostIn {
                region: text("mars-1"),
                known: vec![text("cn-east")],
            },
            PoolProblem::RegionLacksModel {
                region: text("cn-east"),
                model: text("A100"),
                have: vec![text("H800")],
            },
            PoolProblem::RegionsRequired,
            PoolProblem::NoPrice {
                model: text("A100"),
                regions: vec![text("cn-east")],
            },
            PoolProblem::MaxTooLarge { max: 20_000 },
            PoolProblem::MinAboveMax { min: 20, max: 8 },
            PoolProblem::BaseAboveMax { base: 20, max: 8 },
            PoolProblem::SpotNeedsInterruptible { field: "spot_pct" },
            PoolProblem::NotOffered {
                field: "overlay",
                model: text("A100"),
                region: text("cn-east"),
                unit: text("week"),
                detail: text("A100 in cn-east has no `week` price"),
            },
            PoolProblem::SpotPctOver { pct: 120 },
            PoolProblem::FloorAboveMax { floor: 9, max: 8 },
            PoolProblem::MaxPriceZero { fen: 0 },
            PoolProblem::NoSpotPrice {
                model: text("A100"),
                regions: vec![text("cn-east")],
            },
            PoolProblem::UnderSpotOffers {
                max_fen: 100,
                cheapest_fen: 600,
                regions: vec![text("cn-east")],
            },
            PoolProblem::NotWhole { field: "max" },
            PoolProblem::NotPercent,
            PoolProblem::NotPrice,
            PoolProblem::NotAChoice {
                field: "term",
                value: text("decade"),
            },
        ];
        let host = [
            HostFieldProblem::NameLength { empty: true },
            HostFieldProblem::NameLength { empty: false },
            HostFieldProblem::NamePattern,
            HostFieldProblem::Url(UrlProblem::Scheme(text("ftp://x"))),
            HostFieldProblem::Url(UrlProblem::NoHost(text("http://"))),
            HostFieldProblem::Url(UrlProblem::Path(text("http://x/y"))),
            HostFieldProblem::Url(UrlProblem::Credentials),
            HostFieldProblem::Url(UrlProblem::BadHost(text("http://[x"))),
            HostFieldProblem::Url(UrlProblem::Port(text("99999"))),
            HostFieldProblem::RegionLength { empty: true },
            HostFieldProblem::RegionLength { empty: false },
            HostFieldProblem::RegionSpaces,
            HostFieldProblem::LabelCount,
            HostFieldProblem::LabelLength { key: text("rack") },
            HostFieldProblem::LabelPair {
                piece: text("rack"),
            },
            HostFieldProblem::LabelKeyEmpty { piece: text("=r7") },
            HostFieldProblem::LabelDuplicate { key: text("rack") },
            HostFieldProblem::FingerprintFormat,
            HostFieldProblem::FingerprintHttps,
        ];
        let named = [
            Phrase::new("hosts.refuse.exists").text("name", "gpu-01"),
            Phrase::new("hosts.refuse.rename"),
            Phrase::new("pool.refuse.budgetZero"),
            Phrase::new("pool.refuse.negative"),
            Phrase::new("pool.refuse.budget")
                .arg("gpus", Arg::Gpus(20))
                .arg("cost", Arg::Money(25_000))
                .arg("cap", Arg::Money(10_000)),
        ];
        pool.into_iter()
            .map(|problem| {
                // As a refusal reports it: its words ride on the error.
                let error = PoolError::from(problem);
                super::Reported::report(&error)
                    .words
                    .expect("a pool problem's refusal is worded")
            })
            .chain(host.into_iter().map(|problem| {
                let error = crate::registry::RegistryError::from(problem);
                super::Reported::report(&error)
                    .words
                    .expect("a host problem's refusal is worded")
            }))
            .chain(named)
            .collect()
    }

    /// The Latin words left in `said` once the arguments' own text is taken out (names the
    /// operator typed, models, units).
    fn english_left(said: &str, phrase: &Phrase, words: &Words) -> Vec<String> {
        let mut rest = said.to_string();
        for arg in &phrase.args {
            rest = rest.replace(&words.arg(&arg.value), " ");
        }
        rest.split(|c: char| !c.is_ascii_alphabetic())
            .filter(|word| word.len() >= 3)
            // Names every language writes so, and the example region (us-east-1).
            .filter(|word| {
                ![
                    "GPU", "GPUs", "URL", "SHA", "http", "https", "key", "value", "east",
                ]
                .contains(word)
            })
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn every_refusal_of_a_pool_or_host_field_reads_in_chinese_without_english() {
        let zh = Words::of(UiLanguage::SimplifiedChinese);
        let en = Words::of(UiLanguage::English);
        let refusals = refusals();
        assert!(refusals.len() > 45, "{}", refusals.len());
        let mut wrong = Vec::new();
        for phrase in &refusals {
            let said = zh.render(phrase);
            let left = english_left(&said, phrase, &zh);
            if said == phrase.key
                || en.render(phrase) == phrase.key
                || !left.is_empty()
                || said.contains('{')
            {
                wrong.push(format!("{}: {said} {left:?}", phrase.key));
            }
        }
        assert!(wrong.is_empty(), "{wrong:#?}");
    }
}
