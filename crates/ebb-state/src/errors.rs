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
            MetricsError::Invalid { field, problem } => IpcError {
                words: Some(metrics_refusal(field, problem)),
                ..IpcError::invalid(field, self.to_string())
            },
            other => IpcError::new(
                IpcErrorKind::Internal,
                format!("the metrics store failed: {other}"),
            ),
        }
    }
}

/// A metrics query's refusal in the operator's words, by the field it names (the store
/// words its refusals in English only): a chart's range or its number of points. Any other
/// field is a retention setting, named as written, with the store's English as the detail.
fn metrics_refusal(field: &str, problem: &str) -> Phrase {
    use ebb_telemetry::metrics_store::MAX_POINTS_LIMIT;
    match field {
        "from_ms" => Phrase::new("chart.refuse.rangeStart"),
        "to_ms" => Phrase::new("chart.refuse.rangeOrder"),
        "max_points" | "columns" => {
            Phrase::new("chart.refuse.points").int("most", MAX_POINTS_LIMIT)
        }
        setting => Phrase::new("metrics.refuse.setting")
            .text("setting", setting)
            .text("detail", problem),
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

/// The `*.refuse.*` keys named (as `Phrase::new("KEY")`) in `sources` that no phrase in
/// `read` uses: a refusal its crate's test does not read. Empty when every one is read.
#[doc(hidden)]
pub fn unread_refusals(sources: &[&str], read: &[Phrase]) -> Vec<String> {
    let read: Vec<&str> = read.iter().flat_map(Phrase::keys).collect();
    sources
        .iter()
        .flat_map(|source| source.split("Phrase::new(\"").skip(1))
        .filter_map(|rest| rest.split('"').next())
        .filter(|key| key.contains(".refuse.") && !read.contains(key))
        .map(str::to_string)
        .collect()
}

/// The refusals among `phrases` that do not read whole in both languages: a key (its own or
/// an argument's) the English catalog lacks, a `{placeholder}` left, or, in Simplified
/// Chinese, an English word left once the arguments' own text (names the operator typed,
/// models, what another program said) is taken out. What the tests of every crate's
/// refusals check; empty when all read.
#[doc(hidden)]
pub fn not_in_chinese(phrases: &[Phrase]) -> Vec<String> {
    use ebb_wire::catalog::Words;
    use ebb_wire::ipc::UiLanguage;
    let zh = Words::of(UiLanguage::SimplifiedChinese);
    let en = Words::of(UiLanguage::English);
    let mut wrong = Vec::new();
    for phrase in phrases {
        let said = zh.render(phrase);
        let english = en.render(phrase);
        let left = english_left(&said, phrase, &zh);
        let missing: Vec<&str> = phrase
            .keys()
            .into_iter()
            .filter(|key| en.text(key, &[]) == *key)
            .collect();
        if said == phrase.key
            || !missing.is_empty()
            || !left.is_empty()
            || said.contains('{')
            || english.contains('{')
        {
            wrong.push(format!(
                "{}: {said} {left:?} (missing {missing:?})",
                phrase.key
            ));
        }
    }
    wrong
}

/// The Latin words left in `said` once the arguments' own text is taken out (names the
/// operator typed, models, units).
fn english_left(said: &str, phrase: &Phrase, words: &ebb_wire::catalog::Words) -> Vec<String> {
    // The longest first: an argument may hold another's text (a detail naming the file).
    let mut args: Vec<String> = phrase
        .args
        .iter()
        .map(|arg| words.arg(&arg.value))
        .collect();
    args.sort_by_key(|text| std::cmp::Reverse(text.len()));
    let mut rest = said.to_string();
    for arg in &args {
        rest = rest.replace(arg.as_str(), " ");
    }
    rest.split(|c: char| !c.is_ascii_alphabetic())
        .filter(|word| word.len() >= 3)
        // Names every language writes so (formats and programs among them), and the
        // example region (us-east-1).
        .filter(|word| {
            ![
                "GPU", "GPUs", "URL", "SHA", "http", "https", "key", "value", "east", "CSV", "SVG",
                "Slurm",
            ]
            .contains(word)
        })
        .map(str::to_string)
        .collect()
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

    #[test]
    fn every_refusal_of_a_pool_or_host_field_reads_in_chinese_without_english() {
        let refusals = refusals();
        assert!(refusals.len() > 45, "{}", refusals.len());
        let wrong = super::not_in_chinese(&refusals);
        assert!(wrong.is_empty(), "{wrong:#?}");
    }

    /// The words of `error`'s refusal, as the UI gets them.
    fn words(error: &impl super::Reported) -> Phrase {
        error.report().words.expect("a refusal is worded")
    }

    /// Every other refusal of the console's state, one of each: teams and their quotas, a
    /// pool's count and the leases chosen to release, pushed metrics and rules, a host that
    /// cannot be forgotten yet, a metrics query; each as its path words it where that is
    /// pure, else with the arguments it gives.
    fn state_refusals() -> Vec<Phrase> {
        use crate::pools::check_release_choice;
        use ebb_reconcile::reconcile::PoolStatus;
        use ebb_telemetry::metrics_store::MetricsError;
        let invalid = |field, problem: &str| MetricsError::Invalid {
            field,
            problem: problem.to_string(),
        };
        let release = |ids: &[&str]| {
            let ids: Vec<String> = ids.iter().map(|id| id.to_string()).collect();
            words(&check_release_choice(&PoolStatus::default(), 0, &ids).unwrap_err())
        };
        vec![
            words(&crate::pools::rules::check_metric_name("Bad Name").unwrap_err()),
            words(&invalid("from_ms", "must not be negative, got -1")),
            words(&invalid("to_ms", "must not be before from_ms (5), got 1")),
            words(&invalid(
                "max_points",
                "must be between 1 and 100000, got 0",
            )),
            words(&invalid("columns", "must be between 1 and 100000, got 0")),
            words(&invalid(
                "raw_keep_ms",
                "must be at least one minute (60000)",
            )),
            release(&["l-7"]),
            words(&PoolError::Exists("web".to_string())),
            Phrase::new("pool.refuse.outsideRange")
                .int("count", 11)
                .int("min", 2)
                .int("max", 10),
            Phrase::new("pool.refuse.notFound").text("name", "web"),
            Phrase::new("pool.refuse.releaseTwice").text("lease", "l-7"),
            Phrase::new("pool.refuse.releaseTooMany")
                .phrase(
                    "chosen",
                    Phrase::new("pool.refuse.leases.other").int("n", 3),
                )
                .int("to", 6)
                .int("have", 8)
                .int("gives", 2),
            Phrase::new("pool.refuse.releaseTooMany")
                .phrase("chosen", Phrase::new("pool.refuse.leases.one").int("n", 1))
                .int("to", 3)
                .int("have", 3)
                .int("gives", 0),
            Phrase::new("pool.refuse.releaseUnwritable").text("detail", "key must be a string"),
            Phrase::new("spend.refuse.overflow"),
            Phrase::new("team.refuse.name")
                .text("name", "ml team")
                .int("max", 64),
            Phrase::new("team.refuse.spendZero"),
            Phrase::new("team.refuse.modelRequired"),
            Phrase::new("team.refuse.notFound").text("team", "ml"),
            Phrase::new("team.refuse.quotaBelow")
                .int("quota", 4)
                .text("model", "A100")
                .int("holds", 6)
                .text("team", "ml"),
            Phrase::new("team.refuse.moveOver")
                .text("team", "ml")
                .int("quota", 6)
                .text("model", "A100")
                .int("others", 4)
                .text("pool", "web")
                .int("desired", 3)
                .int("total", 7),
            Phrase::new("team.refuse.scaleOver")
                .text("team", "ml")
                .int("quota", 6)
                .text("model", "A100")
                .int("others", 4)
                .text("pool", "web")
                .int("room", 2),
            Phrase::new("team.refuse.spendOver")
                .text("team", "ml")
                .money("quota", 5_000_000)
                .text("pool", "web")
                .arg("ceiling", Arg::Gpus(3)),
            Phrase::new("rules.refuse.noRules").text("pool", "web"),
            Phrase::new("rules.refuse.metricValue"),
            Phrase::new("rules.refuse.metricTime"),
            Phrase::new("rules.refuse.decisionUnwritable").text("detail", "key must be a string"),
            Phrase::new("hosts.refuse.notWrittenOff").text("name", "gpu-01"),
            Phrase::new("hosts.refuse.invalid"),
        ]
    }

    #[test]
    fn every_other_refusal_of_the_state_reads_in_chinese_without_english() {
        let refusals = state_refusals();
        let wrong = super::not_in_chinese(&refusals);
        assert!(wrong.is_empty(), "{wrong:#?}");
        // Each refusal the state's sources word is one of those read here.
        let read: Vec<Phrase> = refusals.into_iter().chain(self::refusals()).collect();
        let sources = [
            include_str!("pools.rs"),
            include_str!("pools/teams.rs"),
            include_str!("pools/view.rs"),
            include_str!("pools/store.rs"),
            include_str!("pools/rules.rs"),
            include_str!("registry.rs"),
            include_str!("errors.rs"),
        ];
        let unread = super::unread_refusals(&sources, &read);
        assert!(unread.is_empty(), "refusals no test reads: {unread:?}");
    }

    #[test]
    fn a_refusal_s_english_is_its_words_in_the_english_catalog() {
        let error = crate::pools::refused(
            "to",
            Phrase::new("team.refuse.scaleOver")
                .text("team", "research")
                .int("quota", 6)
                .text("model", "A100")
                .int("others", 4)
                .text("pool", "web")
                .int("room", 2),
        );
        assert_eq!(
            error.to_string(),
            "to: team research's quota of 6 A100 GPUs: its other pools ask for 4 now, so web may have 2 at most; look again"
        );
        let report = super::Reported::report(&error);
        assert_eq!(report.field.as_deref(), Some("to"));
        assert_eq!(
            Words::of(UiLanguage::SimplifiedChinese).render(&report.words.unwrap()),
            "团队 research 的 A100 配额为 6 块 GPU：其他资源池当前已请求 4 块，因此 web 最多只能有 2 块；请重新查看。"
        );
    }
}
