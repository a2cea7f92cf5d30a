//! The rule model: one pool's rules as a TOML file, parsed and validated into a [`RuleSet`]
//! (the wire shape [`ebb_wire::rules::RuleSet`] plus what deciding needs precompiled: cron
//! expressions, time zones, windows in epoch milliseconds, each rule's staleness limit).
//! Every problem names its line, its field and what is wrong.
//!
//! # The file
//!
//! ```toml
//! pool = "inference"                 # optional: which pool these rules are for
//!
//! [limits]
//! min_gpus = 2                       # default 0
//! max_gpus = 80                      # required
//! step = { out_gpus = 4, out_pct = 100, in_pct = 50 }   # optional, per direction: the
//!                                    # larger of the count and the share ("×2 or +4")
//! budget_per_hour = 500              # optional, yuan (catalog currency), ≤ 2 decimals
//! budget_per_month = 250000          # optional, yuan, 730 hours
//!
//! [scale_in]
//! force = false                      # default: release a GPU only near the end of its
//! release_window_minutes = 5         # paid unit (hour/day/week), its own
//! deadband_gpus = 2                  # release only when ≥ 2 GPUs are surplus …
//! deadband_minutes = 10              # … over the whole of the last 10 minutes
//! budget_gpus = 2                    # disruption budget: at most 2 GPUs released …
//! budget_pct = 20                    # … and at most 20% (rounded down, at least 1) of the
//!                                    # highest count held over the window: the smaller
//! budget_window_minutes = 10         # … per 10 minutes (required with a budget, 1..=1440)
//!
//! [[scale_in.quiet]]                 # while on, no busy GPU is released (idle ones may be)
//! cron = "0 9 * * 1-5"               # croner: 5 or 6 fields, local to time_zone
//! duration_minutes = 480
//! time_zone = "Asia/Shanghai"        # IANA, required
//!
//! [[metric]]                         # a custom metric rules may name
//! name = "users"
//! stale_after_minutes = 5            # older than this: rules on it do nothing
//! # Pushed (`ebb metric push`, `POST /v1/metrics`), or read from Prometheus (console.toml's
//! # `prometheus = "http://HOST:9090"`) every few seconds:
//! # prometheus = 'sum(rate(requests_total{pool="{pool}"}[1m]))'   # one number; {pool}
//! # timeout_s = 5                    # 1..=60
//! # fallback = 8                     # read after fallback_after failures in a row (KEDA);
//! # fallback_after = 3               # left out: the metric goes stale
//!
//! [[threshold]]
//! name = "hot"
//! metric = "gpu_util"                # gpu_util | mem_util | busy_gpus | a [[metric]]
//! op = ">="                          # > >= < <=
//! value = 80
//! for_minutes = 3                    # default 1
//! action = "+20%"                    # +N  +N%  -N  -N%  "set N"
//! cooldown_minutes = 5               # default 0
//!
//! [[target]]
//! name = "size-to-demand"
//! metric = "busy_gpus"
//! target = 100                       # busy_gpus: % of each GPU (≤ 100); gpu_util and
//!                                    # mem_util: the mean %; custom: value per GPU
//! tolerance = 0.1                    # HPA default
//! scale_in_stabilization_minutes = 5 # HPA default
//! scale_out_sustain_minutes = 3      # default 0 (HPA): out only after 3 minutes …
//! overload_gpus = 2                  # … unless short by ≥ 2 GPUs: then at once
//!
//! [[schedule]]
//! name = "festival"
//! start = 2025-11-08T00:00:00        # a one-off window (local time) …
//! end = 2025-11-12T00:00:00
//! # cron = "0 19 * * *"              # … or a cron expression (croner: 5 or 6 fields)
//! # duration_minutes = 300           #     with how long each occurrence lasts
//! time_zone = "Asia/Shanghai"        # IANA, required
//! floor = 70                         # exactly one of floor, ceiling, exact
//! ```
//!
//! HPA's defaults, for target tracking: tolerance 0.1 (no change while the metric is within
//! 10% of the target), a 5-minute scale-in stabilization window (a scale-in goes only to
//! the highest count recommended over the window), scale-out at once; HPA's default step
//! policy (out: the larger of ×2 and +4, in: 100%) is the pool's `step`, written out in
//! `examples/hpa.toml`.

use chrono::{NaiveDate, NaiveDateTime, NaiveTime, TimeZone};
use chrono_tz::Tz;
use croner::Cron;
use ebb_wire::phrase::{Arg, Phrase};
use ebb_wire::rules as spec;
use serde::Deserialize;
use std::fmt;
use std::ops::Range;

/// What the pool pays, for the budget, the cost delta and the paid unit: its plan, where
/// its base is priced, the GPUs it holds by region and where the next would go (one price
/// function for every figure: [`ebb_cost::PricedPool`]).
pub use ebb_cost::PricedPool as Pricing;

pub use spec::{
    Action, BoundKind, Comparison, CustomMetric, Limits, MetricRef, PROM_FALLBACK_AFTER,
    PROM_TIMEOUT_S, PromSource, QuietWindow, ScaleIn, ScheduleWhen, StepCap,
};

/// The most GPUs a limit or an action may name (ebb-cost's demand limit).
pub const MAX_GPUS: u32 = ebb_cost::MAX_GPUS;

/// A validated rule set, ready to decide with.
#[derive(Debug, Clone)]
pub struct RuleSet {
    spec: spec::RuleSet,
    pub(crate) schedules: Vec<CompiledSchedule>,
    pub(crate) quiet: QuietWindows,
    /// Per threshold rule, then per target rule: the metric's staleness limit in ms
    /// (custom metrics only).
    pub(crate) threshold_stale_ms: Vec<Option<i64>>,
    pub(crate) target_stale_ms: Vec<Option<i64>>,
}

#[derive(Debug, Clone)]
pub(crate) struct CompiledSchedule {
    pub(crate) tz: Tz,
    pub(crate) when: CompiledWhen,
    /// The last cron occurrence found and the next after it: for any instant between the
    /// two the previous occurrence is the first, so a replay asking each minute finds it
    /// once an occurrence, not once a minute (croner's search back over days is most of a
    /// scheduled replay's time otherwise).
    pub(crate) last_found: Occurrences,
}

/// A cron's previous occurrence and the next after it, `[previous, next)` (epoch ms).
#[derive(Debug, Default)]
pub(crate) struct Occurrences(std::sync::Mutex<Option<(i64, i64)>>);

impl Clone for Occurrences {
    fn clone(&self) -> Occurrences {
        Occurrences(std::sync::Mutex::new(self.get()))
    }
}

impl Occurrences {
    fn get(&self) -> Option<(i64, i64)> {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn set(&self, found: (i64, i64)) {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(found);
    }
}

#[derive(Debug, Clone)]
pub(crate) enum CompiledWhen {
    Cron { cron: Box<Cron>, duration_ms: i64 },
    Window { start_ms: i64, end_ms: i64 },
}

impl CompiledSchedule {
    /// When the occurrence in force at `now_ms` ends, or `None` when none is.
    pub(crate) fn active_until(&self, now_ms: i64) -> Option<i64> {
        match &self.when {
            CompiledWhen::Window { start_ms, end_ms } => {
                (*start_ms <= now_ms && now_ms < *end_ms).then_some(*end_ms)
            }
            CompiledWhen::Cron { cron, duration_ms } => {
                let previous = match self.last_found.get() {
                    Some((previous, next)) if previous <= now_ms && now_ms < next => previous,
                    _ => {
                        let now = self.tz.timestamp_millis_opt(now_ms).single()?;
                        let previous = cron.find_previous_occurrence(&now, true).ok()?;
                        if let Ok(next) = cron.find_next_occurrence(&now, false) {
                            self.last_found
                                .set((previous.timestamp_millis(), next.timestamp_millis()));
                        }
                        previous.timestamp_millis()
                    }
                };
                let end = previous + duration_ms;
                (now_ms < end).then_some(end)
            }
        }
    }
}

/// A pool's quiet windows (`[[scale_in.quiet]]`), compiled: while one is on, no busy GPU
/// is released. Pure: the instant is a parameter.
#[derive(Debug, Clone, Default)]
pub struct QuietWindows(Vec<CompiledSchedule>);

impl QuietWindows {
    /// Validates and compiles windows that arrive as data, naming each problem's field under
    /// `field`, the list's name (`scale_in.quiet` gives `scale_in.quiet[0].time_zone`): a
    /// cron expression croner does not read or that never occurs, a zone that is not IANA,
    /// a duration of 0.
    pub fn from_spec(windows: &[QuietWindow], field: &str) -> Result<QuietWindows, RuleError> {
        let mut problems = Problems::default();
        match compile_quiet(windows, field, &mut problems) {
            Some(quiet) if problems.0.is_empty() => Ok(quiet),
            _ => Err(RuleError {
                problems: problems.into_problems(None),
            }),
        }
    }

    /// When the quiet in force at `now_ms` ends (the latest end of the windows on), or
    /// `None` when none is on. An occurrence covers `[start, start + duration)`.
    pub fn on_until(&self, now_ms: i64) -> Option<i64> {
        self.0.iter().filter_map(|w| w.active_until(now_ms)).max()
    }

    /// Whether a window is on at `now_ms`.
    pub fn is_on(&self, now_ms: i64) -> bool {
        self.on_until(now_ms).is_some()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl RuleSet {
    /// The rules as data (what crosses IPC and `--json`).
    pub fn spec(&self) -> &spec::RuleSet {
        &self.spec
    }

    /// The quiet windows of `[scale_in]`, compiled.
    pub fn quiet_windows(&self) -> &QuietWindows {
        &self.quiet
    }

    /// Validates rules that arrive as data (IPC), naming each problem's field as the file
    /// would (`threshold[0].action`); there are no lines.
    pub fn from_spec(rules: spec::RuleSet) -> Result<RuleSet, RuleError> {
        let mut problems = Problems::default();
        validate(&rules, &mut problems);
        let compiled = compile(rules, &mut problems);
        match compiled {
            Some(set) if problems.0.is_empty() => Ok(set),
            _ => Err(RuleError {
                problems: problems.into_problems(None),
            }),
        }
    }

    /// The limits' budget as the largest count it pays for under `pricing` (`None`: no
    /// budget). Without a price a budget allows no growth: `Some(current)`.
    pub fn budget_gpus(&self, pricing: Option<&Pricing>, current_gpus: u32) -> Option<u32> {
        let budget = self.spec.limits.budget;
        if budget.per_hour_fen.is_none() && budget.per_month_fen.is_none() {
            return None;
        }
        let Some(pricing) = pricing else {
            return Some(current_gpus);
        };
        let fits = |gpus: u32| match pricing.run_rate(gpus) {
            Ok(rate) => {
                budget
                    .per_hour_fen
                    .is_none_or(|cap| rate.total.per_hour.fen() <= cap)
                    && budget
                        .per_month_fen
                        .is_none_or(|cap| rate.total.per_month.fen() <= cap)
            }
            Err(_) => false,
        };
        // The run rate grows with the count: the largest count that fits, by bisection.
        let (mut low, mut high) = (0u32, self.spec.limits.max_gpus);
        if !fits(0) {
            return Some(0);
        }
        while low < high {
            let mid = low + (high - low).div_ceil(2);
            if fits(mid) {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        Some(low)
    }
}

/// Why a rule file (or rule set) was refused: every problem, each with its line (in a file)
/// and field.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct RuleError {
    /// At least one.
    pub problems: Vec<spec::RuleProblem>,
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, problem) in self.problems.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{problem}")?;
        }
        Ok(())
    }
}

/// Parses and validates one pool's rule file.
pub fn parse(text: &str) -> Result<RuleSet, RuleError> {
    let located = Locator::new(text);
    let file: File = match toml::from_str(text) {
        Ok(file) => file,
        Err(error) => {
            let span = error.span();
            let field = span
                .as_ref()
                .and_then(|span| located.path_at(span.start))
                .unwrap_or_default();
            let line = span.map(|span| line_of(text, span.start));
            // The TOML reader's own words (an unknown key, a type, a bracket): they stay
            // English, as the reader writes them, inside a sentence each language words.
            return Err(RuleError {
                problems: vec![spec::RuleProblem::new(
                    line,
                    field,
                    Phrase::new("rules.error.syntax").text("detail", error.message().trim()),
                )],
            });
        }
    };
    let mut problems = Problems::default();
    let rules = file.into_spec(&mut problems);
    validate(&rules, &mut problems);
    let compiled = compile(rules, &mut problems);
    match compiled {
        Some(set) if problems.0.is_empty() => Ok(set),
        _ => Err(RuleError {
            problems: problems.into_problems(Some((&located, text))),
        }),
    }
}

/// What a new version of a rule set changed, by name: the rules (thresholds, targets,
/// schedules) added, removed and changed, and the sections `limits`, `scale_in` and
/// `metrics` where they changed (listed as changed). For the activity log's "what changed".
pub fn diff(old: &spec::RuleSet, new: &spec::RuleSet) -> (Vec<String>, Vec<String>, Vec<String>) {
    fn named<'a, T: PartialEq>(
        old: &'a [T],
        new: &'a [T],
        name: impl Fn(&T) -> &str,
        out: &mut (Vec<String>, Vec<String>, Vec<String>),
    ) {
        for rule in new {
            match old.iter().find(|had| name(had) == name(rule)) {
                None => out.0.push(name(rule).to_string()),
                Some(had) if had != rule => out.2.push(name(rule).to_string()),
                Some(_) => {}
            }
        }
        for had in old {
            if !new.iter().any(|rule| name(rule) == name(had)) {
                out.1.push(name(had).to_string());
            }
        }
    }
    let mut out = (Vec::new(), Vec::new(), Vec::new());
    named(
        &old.thresholds,
        &new.thresholds,
        |r| r.name.as_str(),
        &mut out,
    );
    named(&old.targets, &new.targets, |r| r.name.as_str(), &mut out);
    named(
        &old.schedules,
        &new.schedules,
        |r| r.name.as_str(),
        &mut out,
    );
    if old.limits != new.limits {
        out.2.push("limits".into());
    }
    if old.scale_in != new.scale_in {
        out.2.push("scale_in".into());
    }
    if old.metrics != new.metrics {
        out.2.push("metrics".into());
    }
    out
}

/// The line (from 1) of a field in a rule file (`threshold[1].action`), for warnings about
/// a parsed file.
pub fn line_of_field(text: &str, field: &str) -> Option<u32> {
    let located = Locator::new(text);
    located.span_of(field).map(|span| line_of(text, span.start))
}

fn line_of(text: &str, offset: usize) -> u32 {
    let upto = &text[..offset.min(text.len())];
    u32::try_from(upto.bytes().filter(|b| *b == b'\n').count() + 1).unwrap_or(u32::MAX)
}

// ---------------------------------------------------------------------------------------
// Locating fields: a second, spanned parse of the same text.

struct Locator<'a> {
    root: Option<toml::de::DeTable<'a>>,
}

impl<'a> Locator<'a> {
    fn new(text: &'a str) -> Locator<'a> {
        Locator {
            root: toml::de::DeTable::parse(text).ok().map(|t| t.into_inner()),
        }
    }

    /// The span of `threshold[1].action` (or of the nearest part of it that exists).
    fn span_of(&self, field: &str) -> Option<Range<usize>> {
        let root = self.root.as_ref()?;
        let mut table = root;
        let mut best: Option<Range<usize>> = None;
        for part in field.split('.') {
            let (key, index) = match part.split_once('[') {
                Some((key, rest)) => (key, rest.trim_end_matches(']').parse::<usize>().ok()),
                None => (part, None),
            };
            let Some((found_key, value)) = table.iter().find(|(k, _)| k.get_ref() == key) else {
                return best;
            };
            best = Some(found_key.span());
            let mut value = value;
            if let Some(index) = index {
                let toml::de::DeValue::Array(items) = value.get_ref() else {
                    return best;
                };
                let Some(item) = items.get(index) else {
                    return best;
                };
                best = Some(item.span());
                value = item;
            }
            match value.get_ref() {
                toml::de::DeValue::Table(inner) => table = inner,
                _ => return best,
            }
        }
        best
    }

    /// The dotted path of the deepest key whose key or value spans `offset`.
    fn path_at(&self, offset: usize) -> Option<String> {
        fn walk(
            table: &toml::de::DeTable<'_>,
            offset: usize,
            prefix: &str,
            best: &mut Option<String>,
        ) {
            for (key, value) in table.iter() {
                let name = if prefix.is_empty() {
                    key.get_ref().to_string()
                } else {
                    format!("{prefix}.{}", key.get_ref())
                };
                let hit = key.span().contains(&offset) || value.span().contains(&offset);
                match value.get_ref() {
                    toml::de::DeValue::Table(inner) => {
                        if hit {
                            *best = Some(name.clone());
                        }
                        walk(inner, offset, &name, best);
                    }
                    toml::de::DeValue::Array(items) => {
                        for (i, item) in items.iter().enumerate() {
                            let indexed = format!("{name}[{i}]");
                            if item.span().contains(&offset) {
                                *best = Some(indexed.clone());
                            }
                            if let toml::de::DeValue::Table(inner) = item.get_ref() {
                                walk(inner, offset, &indexed, best);
                            }
                        }
                        if hit && best.is_none() {
                            *best = Some(name);
                        }
                    }
                    _ => {
                        if hit {
                            *best = Some(name);
                        }
                    }
                }
            }
        }
        let mut best = None;
        walk(self.root.as_ref()?, offset, "", &mut best);
        best
    }
}

// ---------------------------------------------------------------------------------------
// Problems, by field.

/// Each problem's field and its words (a `rules.error.*` phrase: the UI says it in the
/// operator's language, the CLI and logs in English).
#[derive(Default)]
struct Problems(Vec<(String, Phrase)>);

impl Problems {
    fn add(&mut self, field: impl Into<String>, words: Phrase) {
        self.0.push((field.into(), words));
    }

    fn into_problems(self, source: Option<(&Locator<'_>, &str)>) -> Vec<spec::RuleProblem> {
        self.0
            .into_iter()
            .map(|(field, words)| {
                let line = source.and_then(|(located, text)| {
                    located
                        .span_of(&field)
                        .map(|span| line_of(text, span.start))
                });
                spec::RuleProblem::new(line, field, words)
            })
            .collect()
    }
}

// ---------------------------------------------------------------------------------------
// The file as written.

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    pool: Option<String>,
    limits: Option<FileLimits>,
    #[serde(default)]
    scale_in: FileScaleIn,
    #[serde(default)]
    metric: Vec<FileMetric>,
    #[serde(default)]
    threshold: Vec<FileThreshold>,
    #[serde(default)]
    target: Vec<FileTarget>,
    #[serde(default)]
    schedule: Vec<FileSchedule>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileLimits {
    #[serde(default)]
    min_gpus: u32,
    max_gpus: u32,
    #[serde(default)]
    step: StepCap,
    budget_per_hour: Option<toml::Value>,
    budget_per_month: Option<toml::Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct FileScaleIn {
    force: bool,
    release_window_minutes: u32,
    deadband_gpus: u32,
    deadband_minutes: u32,
    budget_gpus: Option<u32>,
    budget_pct: Option<u32>,
    budget_window_minutes: Option<u32>,
    quiet: Vec<FileQuiet>,
}

impl Default for FileScaleIn {
    fn default() -> FileScaleIn {
        let defaults = ScaleIn::default();
        FileScaleIn {
            force: defaults.force,
            release_window_minutes: defaults.release_window_minutes,
            deadband_gpus: defaults.deadband_gpus,
            deadband_minutes: defaults.deadband_minutes,
            budget_gpus: defaults.budget_gpus,
            budget_pct: defaults.budget_pct,
            budget_window_minutes: defaults.budget_window_minutes,
            quiet: Vec::new(),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileQuiet {
    cron: String,
    duration_minutes: u32,
    time_zone: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileMetric {
    name: String,
    stale_after_minutes: u32,
    #[serde(default)]
    prometheus: Option<String>,
    #[serde(default)]
    timeout_s: Option<u32>,
    #[serde(default)]
    fallback: Option<f64>,
    #[serde(default)]
    fallback_after: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileThreshold {
    name: String,
    metric: String,
    op: String,
    value: f64,
    #[serde(default = "one")]
    for_minutes: u32,
    action: String,
    #[serde(default)]
    cooldown_minutes: u32,
}

fn one() -> u32 {
    1
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileTarget {
    name: String,
    metric: String,
    target: f64,
    #[serde(default = "hpa_tolerance")]
    tolerance: f64,
    #[serde(default = "hpa_stabilization")]
    scale_in_stabilization_minutes: u32,
    #[serde(default)]
    scale_out_sustain_minutes: u32,
    overload_gpus: Option<u32>,
}

/// HPA's tolerance.
pub const HPA_TOLERANCE: f64 = 0.1;
/// HPA's scale-in stabilization window, minutes.
pub const HPA_SCALE_IN_STABILIZATION_MINUTES: u32 = 5;

fn hpa_tolerance() -> f64 {
    HPA_TOLERANCE
}

fn hpa_stabilization() -> u32 {
    HPA_SCALE_IN_STABILIZATION_MINUTES
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSchedule {
    name: String,
    cron: Option<String>,
    duration_minutes: Option<u32>,
    start: Option<toml::value::Datetime>,
    end: Option<toml::value::Datetime>,
    time_zone: String,
    floor: Option<u32>,
    ceiling: Option<u32>,
    exact: Option<u32>,
}

impl File {
    #[allow(
        clippy::too_many_lines,
        reason = "one conversion per rule kind's fields"
    )]
    fn into_spec(self, problems: &mut Problems) -> spec::RuleSet {
        let limits = match self.limits {
            None => {
                problems.add("limits", Phrase::new("rules.error.noLimits"));
                Limits::default()
            }
            Some(limits) => Limits {
                min_gpus: limits.min_gpus,
                max_gpus: limits.max_gpus,
                step: limits.step,
                budget: spec::Budget {
                    per_hour_fen: limits
                        .budget_per_hour
                        .as_ref()
                        .and_then(|v| yuan_to_fen(v, "limits.budget_per_hour", problems)),
                    per_month_fen: limits
                        .budget_per_month
                        .as_ref()
                        .and_then(|v| yuan_to_fen(v, "limits.budget_per_month", problems)),
                },
            },
        };
        let custom_names: Vec<&str> = self.metric.iter().map(|m| m.name.as_str()).collect();
        let metric_ref = |name: &str| match name {
            "gpu_util" => Some(MetricRef::GpuUtil),
            "mem_util" => Some(MetricRef::MemUtil),
            "busy_gpus" => Some(MetricRef::BusyGpus),
            other if custom_names.contains(&other) => Some(MetricRef::Custom {
                name: other.to_string(),
            }),
            _ => None,
        };
        let unknown_metric = |name: &str| {
            if custom_names.is_empty() {
                Phrase::new("rules.error.unknownMetricNone").text("name", name)
            } else {
                Phrase::new("rules.error.unknownMetric")
                    .text("name", name)
                    .text("declared", custom_names.join(", "))
            }
        };
        let mut thresholds = Vec::new();
        for (i, rule) in self.threshold.into_iter().enumerate() {
            let at = |field: &str| format!("threshold[{i}].{field}");
            let metric = metric_ref(&rule.metric).unwrap_or_else(|| {
                problems.add(at("metric"), unknown_metric(&rule.metric));
                MetricRef::GpuUtil
            });
            let comparison = match rule.op.trim() {
                ">" => Comparison::Above,
                ">=" => Comparison::AtLeast,
                "<" => Comparison::Below,
                "<=" => Comparison::AtMost,
                other => {
                    problems.add(
                        at("op"),
                        Phrase::new("rules.error.notComparison").text("op", other),
                    );
                    Comparison::AtLeast
                }
            };
            let action = parse_action(&rule.action).unwrap_or_else(|message| {
                problems.add(at("action"), message);
                Action::AddGpus { gpus: 1 }
            });
            thresholds.push(spec::ThresholdRule {
                name: rule.name,
                metric,
                comparison,
                threshold: rule.value,
                for_minutes: rule.for_minutes,
                action,
                cooldown_minutes: rule.cooldown_minutes,
            });
        }
        let mut targets = Vec::new();
        for (i, rule) in self.target.into_iter().enumerate() {
            let metric = metric_ref(&rule.metric).unwrap_or_else(|| {
                problems.add(format!("target[{i}].metric"), unknown_metric(&rule.metric));
                MetricRef::BusyGpus
            });
            targets.push(spec::TargetRule {
                name: rule.name,
                metric,
                target: rule.target,
                tolerance: rule.tolerance,
                scale_in_stabilization_minutes: rule.scale_in_stabilization_minutes,
                scale_out_sustain_minutes: rule.scale_out_sustain_minutes,
                overload_gpus: rule.overload_gpus,
            });
        }
        let mut schedules = Vec::new();
        for (i, schedule) in self.schedule.into_iter().enumerate() {
            let at = |field: &str| format!("schedule[{i}].{field}");
            let when = match (schedule.cron, schedule.start, schedule.end) {
                (Some(cron), None, None) => {
                    let duration_minutes = schedule.duration_minutes.unwrap_or_else(|| {
                        problems.add(
                            at("duration_minutes"),
                            Phrase::new("rules.error.cronNeedsDuration"),
                        );
                        1
                    });
                    ScheduleWhen::Cron {
                        cron,
                        duration_minutes,
                    }
                }
                (None, Some(start), Some(end)) => {
                    if schedule.duration_minutes.is_some() {
                        problems.add(
                            at("duration_minutes"),
                            Phrase::new("rules.error.durationOnlyCron"),
                        );
                    }
                    ScheduleWhen::Window {
                        start: local_datetime(&start, &at("start"), problems),
                        end: local_datetime(&end, &at("end"), problems),
                    }
                }
                (None, Some(_), None) => {
                    problems.add(at("end"), Phrase::new("rules.error.windowNeedsBoth"));
                    ScheduleWhen::Window {
                        start: String::new(),
                        end: String::new(),
                    }
                }
                (None, None, Some(_)) => {
                    problems.add(at("start"), Phrase::new("rules.error.windowNeedsBoth"));
                    ScheduleWhen::Window {
                        start: String::new(),
                        end: String::new(),
                    }
                }
                (Some(_), _, _) => {
                    problems.add(at("cron"), Phrase::new("rules.error.cronOrWindow"));
                    ScheduleWhen::Window {
                        start: String::new(),
                        end: String::new(),
                    }
                }
                (None, None, None) => {
                    problems.add(format!("schedule[{i}]"), Phrase::new("rules.error.noWhen"));
                    ScheduleWhen::Window {
                        start: String::new(),
                        end: String::new(),
                    }
                }
            };
            let (bound, gpus) = match (schedule.floor, schedule.ceiling, schedule.exact) {
                (Some(gpus), None, None) => (BoundKind::Floor, gpus),
                (None, Some(gpus), None) => (BoundKind::Ceiling, gpus),
                (None, None, Some(gpus)) => (BoundKind::Exact, gpus),
                _ => {
                    problems.add(
                        format!("schedule[{i}]"),
                        Phrase::new("rules.error.oneBound"),
                    );
                    (BoundKind::Floor, 0)
                }
            };
            schedules.push(spec::Schedule {
                name: schedule.name,
                when,
                time_zone: schedule.time_zone,
                bound,
                gpus,
            });
        }
        spec::RuleSet {
            pool: self.pool,
            limits,
            scale_in: ScaleIn {
                force: self.scale_in.force,
                release_window_minutes: self.scale_in.release_window_minutes,
                deadband_gpus: self.scale_in.deadband_gpus,
                deadband_minutes: self.scale_in.deadband_minutes,
                budget_gpus: self.scale_in.budget_gpus,
                budget_pct: self.scale_in.budget_pct,
                budget_window_minutes: self.scale_in.budget_window_minutes,
                quiet: self
                    .scale_in
                    .quiet
                    .into_iter()
                    .map(|q| QuietWindow {
                        cron: q.cron,
                        duration_minutes: q.duration_minutes,
                        time_zone: q.time_zone,
                    })
                    .collect(),
            },
            metrics: self
                .metric
                .into_iter()
                .map(|m| {
                    // The PromQL settings without a query are kept, so lint names them.
                    let settings =
                        m.timeout_s.is_some() || m.fallback.is_some() || m.fallback_after.is_some();
                    let prometheus = (m.prometheus.is_some() || settings).then(|| PromSource {
                        query: m.prometheus.unwrap_or_default(),
                        timeout_s: m.timeout_s.unwrap_or(PROM_TIMEOUT_S),
                        fallback: m.fallback,
                        fallback_after: m.fallback_after.unwrap_or(PROM_FALLBACK_AFTER),
                    });
                    CustomMetric {
                        name: m.name,
                        stale_after_minutes: m.stale_after_minutes,
                        prometheus,
                    }
                })
                .collect(),
            thresholds,
            targets,
            schedules,
        }
    }
}

/// `+N`, `+N%`, `-N`, `-N%`, `set N`; `Err` says what is wrong with it.
pub fn parse_action(text: &str) -> Result<Action, Phrase> {
    let text = text.trim();
    let says = |key: &str| Phrase::new(key).text("action", text);
    let bad = || says("rules.error.notAction");
    if let Some(rest) = text.strip_prefix("set") {
        let gpus = rest.trim().parse::<u32>().map_err(|_| bad())?;
        return Ok(Action::Set { gpus });
    }
    let (out, rest) = match text.as_bytes().first() {
        Some(b'+') => (true, &text[1..]),
        Some(b'-') => (false, &text[1..]),
        _ => return Err(bad()),
    };
    let rest = rest.trim();
    if let Some(pct) = rest.strip_suffix('%') {
        let pct = pct.trim().parse::<f64>().map_err(|_| bad())?;
        if !(pct.is_finite() && pct > 0.0) {
            return Err(says("rules.error.actionShareZero"));
        }
        if !out && pct > 100.0 {
            return Err(says("rules.error.actionReleaseOver"));
        }
        if out && pct > 1_000.0 {
            return Err(says("rules.error.actionGrowOver"));
        }
        return Ok(if out {
            Action::AddPct { pct }
        } else {
            Action::RemovePct { pct }
        });
    }
    let gpus = rest.parse::<u32>().map_err(|_| bad())?;
    if gpus == 0 {
        return Err(says("rules.error.actionNothing"));
    }
    Ok(if out {
        Action::AddGpus { gpus }
    } else {
        Action::RemoveGpus { gpus }
    })
}

/// A price in yuan (integer, or at most two decimals) to fen, as the catalog reads prices.
fn yuan_to_fen(value: &toml::Value, field: &str, problems: &mut Problems) -> Option<i64> {
    let fen = match value {
        toml::Value::Integer(yuan) => yuan.checked_mul(100),
        toml::Value::Float(yuan) if yuan.is_finite() => {
            let fen = yuan * 100.0;
            if (fen - fen.round()).abs() > 1e-6 {
                // As written: a rule's number (two places) would hide the third decimal.
                problems.add(
                    field,
                    Phrase::new("rules.error.wholeFen").text("amount", yuan.to_string()),
                );
                return None;
            }
            (fen.abs() < 1e15).then(|| fen.round() as i64)
        }
        other => {
            let kind = match other {
                toml::Value::String(_) => "rules.error.kind.string",
                toml::Value::Boolean(_) => "rules.error.kind.boolean",
                toml::Value::Datetime(_) => "rules.error.kind.datetime",
                toml::Value::Array(_) => "rules.error.kind.array",
                toml::Value::Table(_) => "rules.error.kind.table",
                // A whole number is read above: a number here is a float that is not finite.
                toml::Value::Integer(_) | toml::Value::Float(_) => "rules.error.kind.float",
            };
            problems.add(
                field,
                Phrase::new("rules.error.notYuan").phrase("kind", Phrase::new(kind)),
            );
            return None;
        }
    };
    match fen {
        Some(fen) if fen > 0 => Some(fen),
        Some(_) => {
            problems.add(field, Phrase::new("rules.error.moreThanZero"));
            None
        }
        None => {
            problems.add(field, Phrase::new("rules.error.tooLarge"));
            None
        }
    }
}

fn local_datetime(value: &toml::value::Datetime, field: &str, problems: &mut Problems) -> String {
    if value.offset.is_some() {
        problems.add(field, Phrase::new("rules.error.offset"));
    }
    let Some(date) = value.date else {
        problems.add(field, Phrase::new("rules.error.needsDate"));
        return String::new();
    };
    let time = value.time.unwrap_or(toml::value::Time {
        hour: 0,
        minute: 0,
        second: 0,
        nanosecond: 0,
    });
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        date.year, date.month, date.day, time.hour, time.minute, time.second
    )
}

// ---------------------------------------------------------------------------------------
// Validation of the rules as data (shared by files and IPC).

#[allow(
    clippy::too_many_lines,
    reason = "one check per rule field, each naming its field"
)]
fn validate(rules: &spec::RuleSet, problems: &mut Problems) {
    let limits = &rules.limits;
    if limits.max_gpus == 0 {
        problems.add("limits.max_gpus", Phrase::new("rules.error.atLeastOne"));
    }
    if limits.max_gpus > MAX_GPUS {
        problems.add(
            "limits.max_gpus",
            Phrase::new("rules.error.overAccepted")
                .int("value", limits.max_gpus)
                .int("accepted", MAX_GPUS),
        );
    }
    if limits.min_gpus > limits.max_gpus {
        problems.add(
            "limits.min_gpus",
            Phrase::new("rules.error.moreThanMax")
                .int("value", limits.min_gpus)
                .int("max", limits.max_gpus),
        );
    }
    let step = &limits.step;
    for (field, gpus) in [("out_gpus", step.out_gpus), ("in_gpus", step.in_gpus)] {
        if gpus == Some(0) {
            problems.add(
                format!("limits.step.{field}"),
                Phrase::new("rules.error.stepZero"),
            );
        }
    }
    for (field, pct) in [("out_pct", step.out_pct), ("in_pct", step.in_pct)] {
        if let Some(pct) = pct
            && !(pct.is_finite() && pct > 0.0)
        {
            problems.add(
                format!("limits.step.{field}"),
                Phrase::new("rules.error.stepShare"),
            );
        }
    }
    if let Some(pct) = step.in_pct
        && pct > 100.0
    {
        problems.add("limits.step.in_pct", Phrase::new("rules.error.atMost100"));
    }
    for (field, fen) in [
        ("budget_per_hour", limits.budget.per_hour_fen),
        ("budget_per_month", limits.budget.per_month_fen),
    ] {
        if let Some(fen) = fen
            && fen <= 0
        {
            problems.add(
                format!("limits.{field}"),
                Phrase::new("rules.error.moreThanZero"),
            );
        }
    }
    let scale_in = &rules.scale_in;
    if scale_in.deadband_minutes > 7 * 1_440 {
        problems.add(
            "scale_in.deadband_minutes",
            Phrase::new("rules.error.atMostWeek"),
        );
    }
    if scale_in.budget_gpus == Some(0) {
        problems.add(
            "scale_in.budget_gpus",
            Phrase::new("rules.error.budgetGpusZero"),
        );
    }
    if let Some(pct) = scale_in.budget_pct
        && !(1..=100).contains(&pct)
    {
        problems.add(
            "scale_in.budget_pct",
            Phrase::new("rules.error.budgetPct").int("pct", pct),
        );
    }
    let has_budget = scale_in.budget_gpus.is_some() || scale_in.budget_pct.is_some();
    match scale_in.budget_window_minutes {
        None if has_budget => problems.add(
            "scale_in.budget_window_minutes",
            Phrase::new("rules.error.budgetNeedsWindow"),
        ),
        Some(_) if !has_budget => problems.add(
            "scale_in.budget_window_minutes",
            Phrase::new("rules.error.windowWithoutBudget"),
        ),
        Some(minutes) if !(1..=1_440).contains(&minutes) => problems.add(
            "scale_in.budget_window_minutes",
            Phrase::new("rules.error.budgetWindowRange").int("minutes", minutes),
        ),
        _ => {}
    }

    let mut names: Vec<(String, String)> = Vec::new();
    let mut unique = |name: &str, field: String, problems: &mut Problems| {
        if name.trim().is_empty() {
            problems.add(field, Phrase::new("rules.error.needsName"));
        } else if let Some((_, first)) = names.iter().find(|(n, _)| *n == name) {
            problems.add(
                field,
                Phrase::new("rules.error.nameTaken")
                    .text("name", name)
                    .text("first", first.as_str()),
            );
        } else {
            names.push((
                name.to_string(),
                field.trim_end_matches(".name").to_string(),
            ));
        }
    };
    for (i, metric) in rules.metrics.iter().enumerate() {
        let field = format!("metric[{i}].name");
        if matches!(metric.name.as_str(), "gpu_util" | "mem_util" | "busy_gpus") {
            problems.add(
                field,
                Phrase::new("rules.error.builtInMetric").text("name", metric.name.as_str()),
            );
        } else if metric.name.trim().is_empty() {
            problems.add(field, Phrase::new("rules.error.metricNeedsName"));
        } else if rules.metrics[..i].iter().any(|m| m.name == metric.name) {
            problems.add(
                field,
                Phrase::new("rules.error.declaredTwice").text("name", metric.name.as_str()),
            );
        }
        if metric.stale_after_minutes == 0 {
            problems.add(
                format!("metric[{i}].stale_after_minutes"),
                Phrase::new("rules.error.atLeastOneMinute"),
            );
        }
        if let Some(source) = &metric.prometheus {
            let at = |field: &str| format!("metric[{i}].{field}");
            if let Err(problem) = crate::promql::check_words(&source.query) {
                problems.add(at("prometheus"), problem);
            }
            if !(1..=60).contains(&source.timeout_s) {
                problems.add(
                    at("timeout_s"),
                    Phrase::new("rules.error.timeoutRange").int("seconds", source.timeout_s),
                );
            }
            if source.fallback_after == 0 {
                problems.add(
                    at("fallback_after"),
                    Phrase::new("rules.error.atLeastOneFailure"),
                );
            }
            if let Some(fallback) = source.fallback
                && !fallback.is_finite()
            {
                problems.add(at("fallback"), Phrase::new("rules.error.notNumber"));
            }
        }
    }
    let declared = |metric: &MetricRef| match metric {
        MetricRef::Custom { name } => rules.metrics.iter().any(|m| &m.name == name),
        _ => true,
    };
    for (i, rule) in rules.thresholds.iter().enumerate() {
        let at = |field: &str| format!("threshold[{i}].{field}");
        unique(&rule.name, at("name"), problems);
        if !declared(&rule.metric) {
            problems.add(at("metric"), undeclared(&rule.metric));
        }
        if !rule.threshold.is_finite() {
            problems.add(at("value"), Phrase::new("rules.error.notNumber"));
        } else if rule.threshold < 0.0 && !matches!(rule.metric, MetricRef::Custom { .. }) {
            problems.add(at("value"), Phrase::new("rules.error.negative"));
        }
        if rule.for_minutes == 0 {
            problems.add(at("for_minutes"), Phrase::new("rules.error.forAtLeastOne"));
        }
        if rule.for_minutes > 1_440 {
            problems.add(at("for_minutes"), Phrase::new("rules.error.atMostDay"));
        }
        if let Err(message) = check_action(&rule.action, limits) {
            problems.add(at("action"), message);
        }
    }
    for (i, rule) in rules.targets.iter().enumerate() {
        let at = |field: &str| format!("target[{i}].{field}");
        unique(&rule.name, at("name"), problems);
        if !declared(&rule.metric) {
            problems.add(at("metric"), undeclared(&rule.metric));
        }
        if !(rule.target.is_finite() && rule.target > 0.0) {
            problems.add(at("target"), Phrase::new("rules.error.targetPositive"));
        } else if !matches!(rule.metric, MetricRef::Custom { .. }) && rule.target > 100.0 {
            problems.add(
                at("target"),
                Phrase::new("rules.error.busierThan100").number("value", rule.target),
            );
        }
        if !(rule.tolerance.is_finite() && (0.0..1.0).contains(&rule.tolerance)) {
            problems.add(at("tolerance"), Phrase::new("rules.error.tolerance"));
        }
        if rule.scale_in_stabilization_minutes > 1_440 {
            problems.add(
                at("scale_in_stabilization_minutes"),
                Phrase::new("rules.error.atMostDay"),
            );
        }
        if rule.scale_out_sustain_minutes > 1_440 {
            problems.add(
                at("scale_out_sustain_minutes"),
                Phrase::new("rules.error.atMostDay"),
            );
        }
        if rule.overload_gpus == Some(0) {
            problems.add(at("overload_gpus"), Phrase::new("rules.error.overloadZero"));
        }
    }
    for (i, schedule) in rules.schedules.iter().enumerate() {
        let at = |field: &str| format!("schedule[{i}].{field}");
        unique(&schedule.name, at("name"), problems);
        if schedule.gpus > MAX_GPUS {
            // Named as the file names the count.
            problems.add(at(schedule.bound.key()), gpus_over_accepted(schedule.gpus));
        }
        if let ScheduleWhen::Cron {
            duration_minutes, ..
        } = &schedule.when
            && *duration_minutes == 0
        {
            problems.add(
                at("duration_minutes"),
                Phrase::new("rules.error.atLeastOne"),
            );
        }
    }
}

/// A rule names a custom metric no `[[metric]]` table declares.
fn undeclared(metric: &MetricRef) -> Phrase {
    Phrase::new("rules.error.undeclaredMetric").text("metric", metric.to_string())
}

/// A GPU count past what is accepted.
fn gpus_over_accepted(gpus: u32) -> Phrase {
    Phrase::new("rules.error.gpusOverAccepted")
        .arg("gpus", Arg::Gpus(gpus))
        .int("accepted", MAX_GPUS)
}

fn check_action(action: &Action, limits: &Limits) -> Result<(), Phrase> {
    match *action {
        Action::AddGpus { gpus } | Action::RemoveGpus { gpus } if gpus == 0 => {
            Err(Phrase::new("rules.error.doesNothing"))
        }
        Action::AddGpus { gpus } | Action::RemoveGpus { gpus } | Action::Set { gpus }
            if gpus > MAX_GPUS =>
        {
            Err(gpus_over_accepted(gpus))
        }
        Action::AddPct { pct } | Action::RemovePct { pct } if !(pct.is_finite() && pct > 0.0) => {
            Err(Phrase::new("rules.error.shareZero"))
        }
        Action::RemovePct { pct } if pct > 100.0 => Err(Phrase::new("rules.error.releaseOver")),
        _ => {
            let _ = limits;
            Ok(())
        }
    }
}

/// The precompiled parts: schedules (cron, zone, window), staleness per rule.
fn compile(rules: spec::RuleSet, problems: &mut Problems) -> Option<RuleSet> {
    let mut schedules = Vec::with_capacity(rules.schedules.len());
    for (i, schedule) in rules.schedules.iter().enumerate() {
        let at = |field: &str| format!("schedule[{i}].{field}");
        let Some(tz) = zone(&schedule.time_zone, &at("time_zone"), problems) else {
            continue;
        };
        let when = match &schedule.when {
            ScheduleWhen::Cron {
                cron,
                duration_minutes,
            } => match cron_when(cron, *duration_minutes, tz, &at("cron"), problems) {
                Some(when) => when,
                None => continue,
            },
            ScheduleWhen::Window { start, end } => {
                if start.is_empty() || end.is_empty() {
                    continue;
                }
                let (Some(start_ms), Some(end_ms)) = (
                    instant(start, tz, &at("start"), problems),
                    instant(end, tz, &at("end"), problems),
                ) else {
                    continue;
                };
                if end_ms <= start_ms {
                    problems.add(
                        at("end"),
                        Phrase::new("rules.error.endBeforeStart")
                            .text("end", end.as_str())
                            .text("start", start.as_str()),
                    );
                    continue;
                }
                CompiledWhen::Window { start_ms, end_ms }
            }
        };
        schedules.push(CompiledSchedule {
            tz,
            when,
            last_found: Occurrences::default(),
        });
    }
    let quiet = compile_quiet(&rules.scale_in.quiet, "scale_in.quiet", problems);
    let stale_ms = |metric: &MetricRef| match metric {
        MetricRef::Custom { name } => rules
            .metrics
            .iter()
            .find(|m| &m.name == name)
            .map(|m| i64::from(m.stale_after_minutes) * 60_000),
        _ => None,
    };
    let threshold_stale_ms = rules
        .thresholds
        .iter()
        .map(|r| stale_ms(&r.metric))
        .collect();
    let target_stale_ms = rules.targets.iter().map(|r| stale_ms(&r.metric)).collect();
    let quiet = quiet?;
    (schedules.len() == rules.schedules.len()).then_some(RuleSet {
        spec: rules,
        schedules,
        quiet,
        threshold_stale_ms,
        target_stale_ms,
    })
}

/// An IANA time zone, or a problem on `field`.
fn zone(time_zone: &str, field: &str, problems: &mut Problems) -> Option<Tz> {
    match time_zone.parse::<Tz>() {
        Ok(tz) => Some(tz),
        Err(_) => {
            problems.add(
                field,
                Phrase::new("rules.error.timeZone").text("zone", time_zone),
            );
            None
        }
    }
}

/// A cron expression in `tz` with each occurrence's length, or a problem on `field`.
fn cron_when(
    cron: &str,
    duration_minutes: u32,
    tz: Tz,
    field: &str,
    problems: &mut Problems,
) -> Option<CompiledWhen> {
    match cron.parse::<Cron>() {
        // One that matches no date (the 31st of February) would be searched for, and not
        // found, at every decision: seconds each in a replay's minute loop.
        Ok(parsed) if never_occurs(&parsed, tz) => {
            problems.add(
                field,
                Phrase::new("rules.error.cronNever").text("cron", cron),
            );
            None
        }
        Ok(parsed) => Some(CompiledWhen::Cron {
            cron: Box::new(parsed),
            duration_ms: i64::from(duration_minutes) * 60_000,
        }),
        Err(error) => {
            // croner's own words on what it could not read stay English (`detail`).
            problems.add(
                field,
                Phrase::new("rules.error.cronInvalid")
                    .text("cron", cron)
                    .text("detail", error.to_string()),
            );
            None
        }
    }
}

/// Quiet windows compiled, each problem named under `field` (`scale_in.quiet[0].cron`);
/// `None` when any is wrong.
fn compile_quiet(
    windows: &[QuietWindow],
    field: &str,
    problems: &mut Problems,
) -> Option<QuietWindows> {
    let mut compiled = Vec::with_capacity(windows.len());
    for (i, window) in windows.iter().enumerate() {
        let at = |key: &str| format!("{field}[{i}].{key}");
        if window.duration_minutes == 0 {
            problems.add(
                at("duration_minutes"),
                Phrase::new("rules.error.atLeastOne"),
            );
        }
        let tz = zone(&window.time_zone, &at("time_zone"), problems);
        let when = tz.and_then(|tz| {
            cron_when(
                &window.cron,
                window.duration_minutes,
                tz,
                &at("cron"),
                problems,
            )
        });
        if let (Some(tz), Some(when)) = (tz, when)
            && window.duration_minutes > 0
        {
            compiled.push(CompiledSchedule {
                tz,
                when,
                last_found: Occurrences::default(),
            });
        }
    }
    (compiled.len() == windows.len()).then_some(QuietWindows(compiled))
}

/// Whether `cron` matches no instant from 2000 on (croner gives up after its search limit).
fn never_occurs(cron: &Cron, tz: Tz) -> bool {
    tz.timestamp_millis_opt(946_684_800_000)
        .single()
        .is_none_or(|from| cron.find_next_occurrence(&from, true).is_err())
}

/// A local `YYYY-MM-DDTHH:MM:SS` in `tz` as epoch ms (the earlier of two in a DST fold).
fn instant(local: &str, tz: Tz, field: &str, problems: &mut Problems) -> Option<i64> {
    let naive = NaiveDateTime::parse_from_str(local, "%Y-%m-%dT%H:%M:%S")
        .ok()
        .or_else(|| {
            NaiveDate::parse_from_str(local, "%Y-%m-%d")
                .ok()
                .map(|d| d.and_time(NaiveTime::MIN))
        });
    let Some(naive) = naive else {
        problems.add(
            field,
            Phrase::new("rules.error.notDateTime").text("value", local),
        );
        return None;
    };
    match tz.from_local_datetime(&naive).earliest() {
        Some(at) => Some(at.timestamp_millis()),
        None => {
            problems.add(
                field,
                Phrase::new("rules.error.daylightGap")
                    .text("time", local)
                    .text("zone", tz.name()),
            );
            None
        }
    }
}
