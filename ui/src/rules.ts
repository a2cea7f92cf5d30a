// Pure helpers for the Rules view: the editor's form as text fields and back to a RuleSet
// (the TOML file stays the one source of truth: the form's RuleSet is written as a file by
// the shell; every part of it but the file's `pool` is in the form: limits, scale-in,
// custom metrics, threshold and target rules, schedules), which form field a lint problem
// names (`threshold[0].action` → that row's action, `schedule[1].floor` → that schedule's
// GPUs), the problems and warnings grouped by field, and a metric's age. No DOM, so they
// are unit-tested in node.

import type {
  Action,
  BoundKind,
  Comparison,
  FieldPath,
  LintReport,
  MetricRef,
  PathedProblem,
  PathedWarning,
  PromSource,
  RuleSet,
  RulesMode,
  ScheduleWhen,
} from "./bindings";
import type { Phrase } from "./costs";
import { t, type MessageKey } from "./i18n";

export const BUILTIN_METRICS = ["gpu_util", "mem_util", "busy_gpus"] as const;

/** A metric as a rule file names it. */
export function metricName(metric: MetricRef): string {
  return metric.kind === "custom" ? metric.name : metric.kind;
}

/** A metric the rules form offers: built in, declared by the file's `[[metric]]`, or named
 * by a rule but declared nowhere (kept so the select shows what the file says). */
export type MetricChoice = { name: string; kind: "builtin" | "custom" | "unknown" };

/** The metrics a rule's select offers: the built-in ones, the declared ones, and `current`
 * when it is neither (the linter names that problem at the field). */
export function metricChoices(declared: readonly string[], current: string): MetricChoice[] {
  const out: MetricChoice[] = BUILTIN_METRICS.map((name) => ({ name, kind: "builtin" as const }));
  for (const raw of declared) {
    const name = raw.trim();
    if (name !== "" && !out.some((c) => c.name === name)) out.push({ name, kind: "custom" });
  }
  const named = current.trim();
  if (named !== "" && !out.some((c) => c.name === named)) out.push({ name: named, kind: "unknown" });
  return out;
}

const BUILTIN_WORDS: Readonly<Record<(typeof BUILTIN_METRICS)[number], MessageKey>> = {
  gpu_util: "rules.f.metricWord.gpu_util",
  mem_util: "rules.f.metricWord.mem_util",
  busy_gpus: "rules.f.metricWord.busy_gpus",
};

/** A metric choice in words: what a built-in one measures, a custom or undeclared one by name. */
export function metricChoiceText(choice: MetricChoice): string {
  switch (choice.kind) {
    case "builtin":
      return t(BUILTIN_WORDS[choice.name as (typeof BUILTIN_METRICS)[number]]);
    case "custom":
      return t("rules.f.metricCustom", { name: choice.name });
    case "unknown":
      return t("rules.f.metricUnknown", { name: choice.name });
  }
}

/** A name typed in the form as a metric: a built-in one, else a custom one by that name. */
export function metricRef(name: string): MetricRef {
  const trimmed = name.trim();
  switch (trimmed) {
    case "gpu_util":
    case "mem_util":
    case "busy_gpus":
      return { kind: trimmed };
    default:
      return { kind: "custom", name: trimmed };
  }
}

export type ActionKind = Action["kind"];
export const ACTION_KINDS: readonly ActionKind[] = ["add_gpus", "add_pct", "remove_gpus", "remove_pct", "set"];
export const COMPARISONS: readonly Comparison[] = ["above", "at_least", "below", "at_most"];
export const RULES_MODES: readonly RulesMode[] = ["enabled", "shadow", "disabled"];
export type ScheduleKind = ScheduleWhen["kind"];
export const SCHEDULE_KINDS: readonly ScheduleKind[] = ["cron", "window"];
export const BOUNDS: readonly BoundKind[] = ["floor", "ceiling", "exact"];

function actionAmount(action: Action): number {
  switch (action.kind) {
    case "add_pct":
    case "remove_pct":
      return action.pct;
    default:
      return action.gpus;
  }
}

function makeAction(kind: ActionKind, amount: number): Action {
  switch (kind) {
    case "add_pct":
    case "remove_pct":
      return { kind, pct: amount };
    default:
      return { kind, gpus: amount };
  }
}

/** A threshold rule as the form holds it: text fields, a stable key per row. */
export type ThresholdRow = {
  key: number;
  name: string;
  metric: string;
  op: Comparison;
  value: string;
  for_minutes: string;
  action_kind: ActionKind;
  action: string;
  cooldown_minutes: string;
};

/** A target rule as the form holds it. */
export type TargetRow = {
  key: number;
  name: string;
  metric: string;
  target: string;
  tolerance: string;
  scale_in_stabilization_minutes: string;
  scale_out_sustain_minutes: string;
  overload_gpus: string;
};

/** A custom metric as the form holds it. */
export type MetricRow = {
  key: number;
  name: string;
  stale_after_minutes: string;
  /** The PromQL query it is read from; empty: pushed. */
  prometheus: string;
  /** The file's other Prometheus settings (timeout, fallback), kept as they were. */
  source: PromSource | null;
};

/** A query's settings when the form gives a metric its first query: the Rust defaults. */
const NEW_PROM_SOURCE: Omit<PromSource, "query"> = { timeout_s: 5, fallback: null, fallback_after: 3 };

/**
 * A schedule as the form holds it: both kinds' fields, so switching the kind and back
 * keeps what was typed; only the chosen kind's are written.
 */
export type ScheduleRow = {
  key: number;
  name: string;
  kind: ScheduleKind;
  cron: string;
  duration_minutes: string;
  /** Local date-times, `YYYY-MM-DDTHH:MM:SS`. */
  start: string;
  end: string;
  time_zone: string;
  bound: BoundKind;
  gpus: string;
};

/** The form's values: every limit, the scale-in settings, the metrics, rules and schedules, as typed. */
export type RulesFormValues = {
  min_gpus: string;
  max_gpus: string;
  out_gpus: string;
  out_pct: string;
  in_gpus: string;
  in_pct: string;
  /** Yuan, as typed ("120", "99.50"); empty for none. */
  budget_per_hour: string;
  budget_per_month: string;
  force: boolean;
  release_window_minutes: string;
  deadband_gpus: string;
  deadband_minutes: string;
  metrics: MetricRow[];
  thresholds: ThresholdRow[];
  targets: TargetRow[];
  schedules: ScheduleRow[];
};

let nextKey = 1;

/** A key for a new row (rows are reconciled by it, so an edited row keeps its inputs). */
export function rowKey(): number {
  return nextKey++;
}

const text = (n: number | null | undefined): string => (n === null || n === undefined ? "" : String(n));

/** Fen as yuan text: 12000 → "120", 9950 → "99.50". */
export function yuanText(fen: number | null): string {
  if (fen === null) return "";
  const whole = Math.trunc(fen / 100);
  const cents = Math.abs(fen % 100);
  return cents === 0 ? String(whole) : `${whole}.${String(cents).padStart(2, "0")}`;
}

export function formFromRules(rules: RuleSet): RulesFormValues {
  const { limits, scale_in: scaleIn } = rules;
  return {
    min_gpus: text(limits.min_gpus),
    max_gpus: text(limits.max_gpus),
    out_gpus: text(limits.step.out_gpus),
    out_pct: text(limits.step.out_pct),
    in_gpus: text(limits.step.in_gpus),
    in_pct: text(limits.step.in_pct),
    budget_per_hour: yuanText(limits.budget.per_hour_fen),
    budget_per_month: yuanText(limits.budget.per_month_fen),
    force: scaleIn.force,
    release_window_minutes: text(scaleIn.release_window_minutes),
    deadband_gpus: text(scaleIn.deadband_gpus),
    deadband_minutes: text(scaleIn.deadband_minutes),
    metrics: rules.metrics.map((metric) => ({
      key: rowKey(),
      name: metric.name,
      stale_after_minutes: text(metric.stale_after_minutes),
      prometheus: metric.prometheus?.query ?? "",
      source: metric.prometheus ?? null,
    })),
    thresholds: rules.thresholds.map((rule) => ({
      key: rowKey(),
      name: rule.name,
      metric: metricName(rule.metric),
      op: rule.comparison,
      value: text(rule.threshold),
      for_minutes: text(rule.for_minutes),
      action_kind: rule.action.kind,
      action: text(actionAmount(rule.action)),
      cooldown_minutes: text(rule.cooldown_minutes),
    })),
    targets: rules.targets.map((rule) => ({
      key: rowKey(),
      name: rule.name,
      metric: metricName(rule.metric),
      target: text(rule.target),
      tolerance: text(rule.tolerance),
      scale_in_stabilization_minutes: text(rule.scale_in_stabilization_minutes),
      scale_out_sustain_minutes: text(rule.scale_out_sustain_minutes),
      overload_gpus: text(rule.overload_gpus),
    })),
    schedules: rules.schedules.map((schedule) => ({
      key: rowKey(),
      name: schedule.name,
      kind: schedule.when.kind,
      cron: schedule.when.kind === "cron" ? schedule.when.cron : "",
      duration_minutes: schedule.when.kind === "cron" ? text(schedule.when.duration_minutes) : "",
      start: schedule.when.kind === "window" ? schedule.when.start : "",
      end: schedule.when.kind === "window" ? schedule.when.end : "",
      time_zone: schedule.time_zone,
      bound: schedule.bound,
      gpus: text(schedule.gpus),
    })),
  };
}

/** The zone a new schedule starts in: the browser's, else the product's home zone. */
export function defaultTimeZone(): string {
  try {
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (zone) return zone;
  } catch {
    // No Intl time zones here: the fallback below.
  }
  return "Asia/Shanghai";
}

/** A new custom metric row: a name to replace, stale after 5 minutes without a value. */
export function newMetric(n: number): MetricRow {
  return { key: rowKey(), name: `metric_${n}`, stale_after_minutes: "5", prometheus: "", source: null };
}

/** A new schedule row: at least 4 GPUs from 20:00 for 4 hours every day, in the browser's zone. */
export function newSchedule(n: number, timeZone: string = defaultTimeZone()): ScheduleRow {
  return {
    key: rowKey(),
    name: `schedule-${n}`,
    kind: "cron",
    cron: "0 20 * * *",
    duration_minutes: "240",
    start: "",
    end: "",
    time_zone: timeZone,
    bound: "floor",
    gpus: "4",
  };
}

/** A new threshold row: scale out by 1 when GPU utilization is at least 80% for 3 minutes. */
export function newThreshold(n: number): ThresholdRow {
  return {
    key: rowKey(),
    name: `rule-${n}`,
    metric: "gpu_util",
    op: "at_least",
    value: "80",
    for_minutes: "3",
    action_kind: "add_gpus",
    action: "1",
    cooldown_minutes: "5",
  };
}

/** A new target row: keep GPU utilization near 60% with HPA's defaults. */
export function newTarget(n: number): TargetRow {
  return {
    key: rowKey(),
    name: `target-${n}`,
    metric: "gpu_util",
    target: "60",
    tolerance: "0.1",
    scale_in_stabilization_minutes: "5",
    scale_out_sustain_minutes: "0",
    overload_gpus: "",
  };
}

/** A whole number ≥ 0, or null. */
export function parseWhole(value: string): number | null {
  const trimmed = value.trim();
  if (!/^\d+$/.test(trimmed)) return null;
  const n = Number(trimmed);
  return Number.isSafeInteger(n) && n <= 0xffff_ffff ? n : null;
}

/** A finite number, or null. */
export function parseNumber(value: string): number | null {
  const trimmed = value.trim();
  if (!/^-?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/.test(trimmed)) return null;
  const n = Number(trimmed);
  return Number.isFinite(n) ? n : null;
}

/** Yuan with at most two decimals as whole fen ("99.5" → 9950), or null. String arithmetic: no float drift. */
export function parseYuan(value: string): number | null {
  const match = /^(\d+)(?:\.(\d{1,2}))?$/.exec(value.trim());
  if (!match) return null;
  const fen = Number(match[1]) * 100 + Number((match[2] ?? "").padEnd(2, "0"));
  return Number.isSafeInteger(fen) ? fen : null;
}

/**
 * A local date-time as a rule file writes it (`2025-10-01T08:00:00`), or null. Minutes
 * without seconds (what a datetime-local input gives) and a space for the `T` are taken;
 * the date must exist.
 */
export function parseLocalDateTime(value: string): string | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2}))?$/.exec(value.trim());
  if (!match) return null;
  const [year, month, day, hour, minute, second] = match.slice(1).map((part) => Number(part ?? "0")) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const date = new Date(Date.UTC(year, month - 1, day));
  const exists = date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
  if (!exists || hour > 23 || minute > 59 || second > 59) return null;
  const two = (n: number): string => String(n).padStart(2, "0");
  return `${match[1]}-${match[2]}-${match[3]}T${two(hour)}:${two(minute)}:${two(second)}`;
}

export type FormProblems = Record<string, Phrase>;

/**
 * The form's values as a RuleSet, over `base` (what the form does not show stays: the
 * file's `pool`, the disruption budget and quiet windows of `scale_in`), or the fields that are not numbers (or, for a window, not a local
 * date-time), keyed by the form field (`limits.min_gpus`, `threshold[0].value`,
 * `metric[0].stale_after_minutes`, `schedule[0].gpus`). Everything else is the linter's to
 * judge.
 */
export function rulesFromForm(values: RulesFormValues, base: RuleSet): { ok: true; rules: RuleSet } | { ok: false; problems: FormProblems } {
  const problems: FormProblems = {};
  const whole = (field: string, value: string): number => {
    const n = parseWhole(value);
    if (n === null) problems[field] = { key: "rules.form.whole" };
    return n ?? 0;
  };
  const optionalWhole = (field: string, value: string): number | null => (value.trim() === "" ? null : whole(field, value));
  const number = (field: string, value: string): number => {
    const n = parseNumber(value);
    if (n === null) problems[field] = { key: "rules.form.number" };
    return n ?? 0;
  };
  const optionalNumber = (field: string, value: string): number | null => (value.trim() === "" ? null : number(field, value));
  const yuan = (field: string, value: string): number | null => {
    if (value.trim() === "") return null;
    const fen = parseYuan(value);
    if (fen === null) problems[field] = { key: "rules.form.yuan" };
    return fen;
  };
  const rules: RuleSet = {
    ...base,
    limits: {
      min_gpus: whole("limits.min_gpus", values.min_gpus),
      max_gpus: whole("limits.max_gpus", values.max_gpus),
      step: {
        out_gpus: optionalWhole("limits.step.out_gpus", values.out_gpus),
        out_pct: optionalNumber("limits.step.out_pct", values.out_pct),
        in_gpus: optionalWhole("limits.step.in_gpus", values.in_gpus),
        in_pct: optionalNumber("limits.step.in_pct", values.in_pct),
      },
      budget: {
        per_hour_fen: yuan("limits.budget_per_hour", values.budget_per_hour),
        per_month_fen: yuan("limits.budget_per_month", values.budget_per_month),
      },
    },
    scale_in: {
      // The disruption budget and quiet windows have no inputs here (the TOML tab has
      // them): kept from the base.
      ...base.scale_in,
      force: values.force,
      release_window_minutes: whole("scale_in.release_window_minutes", values.release_window_minutes),
      deadband_gpus: whole("scale_in.deadband_gpus", values.deadband_gpus),
      deadband_minutes: whole("scale_in.deadband_minutes", values.deadband_minutes),
    },
    metrics: values.metrics.map((row, i) => ({
      name: row.name.trim(),
      stale_after_minutes: whole(`metric[${i}].stale_after_minutes`, row.stale_after_minutes),
      // A pushed metric's shape as before: no `prometheus` key at all.
      ...(row.prometheus.trim() === "" ? {} : { prometheus: { ...(row.source ?? NEW_PROM_SOURCE), query: row.prometheus.trim() } }),
    })),
    thresholds: values.thresholds.map((row, i) => {
      const at = (key: string): string => `threshold[${i}].${key}`;
      const amount = row.action_kind.endsWith("_pct") ? number(at("action"), row.action) : whole(at("action"), row.action);
      return {
        name: row.name.trim(),
        metric: metricRef(row.metric),
        comparison: row.op,
        threshold: number(at("value"), row.value),
        for_minutes: whole(at("for_minutes"), row.for_minutes),
        action: makeAction(row.action_kind, amount),
        cooldown_minutes: whole(at("cooldown_minutes"), row.cooldown_minutes),
      };
    }),
    targets: values.targets.map((row, i) => {
      const at = (key: string): string => `target[${i}].${key}`;
      return {
        name: row.name.trim(),
        metric: metricRef(row.metric),
        target: number(at("target"), row.target),
        tolerance: number(at("tolerance"), row.tolerance),
        scale_in_stabilization_minutes: whole(at("scale_in_stabilization_minutes"), row.scale_in_stabilization_minutes),
        scale_out_sustain_minutes: whole(at("scale_out_sustain_minutes"), row.scale_out_sustain_minutes),
        overload_gpus: optionalWhole(at("overload_gpus"), row.overload_gpus),
      };
    }),
    schedules: values.schedules.map((row, i) => {
      const at = (key: string): string => `schedule[${i}].${key}`;
      // The file writes a window's times unquoted (TOML's local date-time), so nothing
      // else may reach it.
      const localDateTime = (field: string, value: string): string => {
        const parsed = parseLocalDateTime(value);
        if (parsed === null) problems[field] = { key: "rules.form.datetime" };
        return parsed ?? "";
      };
      const when: ScheduleWhen =
        row.kind === "cron"
          ? { kind: "cron", cron: row.cron.trim(), duration_minutes: whole(at("duration_minutes"), row.duration_minutes) }
          : { kind: "window", start: localDateTime(at("start"), row.start), end: localDateTime(at("end"), row.end) };
      return {
        name: row.name.trim(),
        when,
        time_zone: row.time_zone.trim(),
        bound: row.bound,
        gpus: whole(at("gpus"), row.gpus),
      };
    }),
  };
  return Object.keys(problems).length === 0 ? { ok: true, rules } : { ok: false, problems };
}

const LIMIT_KEYS = ["min_gpus", "max_gpus", "budget_per_hour", "budget_per_month"];
const STEP_KEYS = ["out_gpus", "out_pct", "in_gpus", "in_pct"];
const SCALE_IN_KEYS = ["force", "release_window_minutes", "deadband_gpus", "deadband_minutes"];
type RowKind = "metric" | "threshold" | "target" | "schedule";
const ROW_KEYS: Readonly<Record<RowKind, readonly string[]>> = {
  metric: ["name", "stale_after_minutes"],
  threshold: ["name", "metric", "op", "value", "for_minutes", "action", "cooldown_minutes"],
  target: ["name", "metric", "target", "tolerance", "scale_in_stabilization_minutes", "scale_out_sustain_minutes", "overload_gpus"],
  schedule: ["name", "kind", "cron", "duration_minutes", "start", "end", "time_zone", "bound", "gpus"],
};

/**
 * The form field a linter's problem is about, from its place (`path`, read in Rust from the
 * field the linter names), or null when the form has none (the file's `pool`, the disruption
 * budget and quiet windows: the TOML tab shows them). A table or a row named whole goes to
 * its first field: `limits` → `limits.max_gpus`, `threshold[1]` → `threshold[1].name`; a
 * schedule's count, which the file names by its bound (`schedule[0].floor`), to
 * `schedule[0].gpus`.
 */
export function formField(path: FieldPath): string | null {
  const key = path.key ?? "";
  switch (path.section) {
    case "limits":
      return `limits.${LIMIT_KEYS.includes(key) ? key : "max_gpus"}`;
    case "step":
      return `limits.step.${STEP_KEYS.includes(key) ? key : "out_gpus"}`;
    case "scale_in":
      return key.startsWith("budget_") ? null : `scale_in.${SCALE_IN_KEYS.includes(key) ? key : "release_window_minutes"}`;
    case "metric":
    case "threshold":
    case "target":
    case "schedule": {
      if (path.row === null) return null;
      const named = path.section === "schedule" && (BOUNDS as readonly string[]).includes(key) ? "gpus" : key;
      return `${path.section}[${path.row}].${ROW_KEYS[path.section].includes(named) ? named : "name"}`;
    }
    case "pool":
    case "file":
    case "quiet":
    case "other":
      return null;
  }
}

/** The id of a form field's input: `threshold[0].action` → `rules-f-threshold-0-action`. */
export function fieldId(field: string): string {
  return `rules-f-${field.replace(/\[(\d+)\]/g, "-$1").replace(/\./g, "-")}`;
}

/** What the linter said about one form field. */
export type FieldNotes = { errors: PathedProblem[]; warnings: PathedWarning[] };

/** The report's errors and warnings by the form field they name (those with none are left out). */
export function notesByField(report: LintReport | null): Map<string, FieldNotes> {
  const out = new Map<string, FieldNotes>();
  if (!report) return out;
  const at = (path: FieldPath): FieldNotes | null => {
    const key = formField(path);
    if (key === null) return null;
    let notes = out.get(key);
    if (!notes) {
      notes = { errors: [], warnings: [] };
      out.set(key, notes);
    }
    return notes;
  };
  for (const error of report.errors) at(error.path)?.errors.push(error);
  for (const warning of report.warnings) at(warning.path)?.warnings.push(warning);
  return out;
}

/** A problem's place in the file: "line 12, threshold[0].action" (or the field alone). */
export function placeText(line: number | null, field: string): string {
  return line === null ? field : t("rules.lint.place", { line, field });
}

/** How old a metric's last value is: "12 s", "3 min", "2 h"; "—" when none came. */
export function ageText(atMs: number | null, nowMs: number): string {
  if (atMs === null) return t("common.empty");
  const seconds = Math.max(0, Math.round((nowMs - atMs) / 1000));
  if (seconds < 60) return t("rules.age.s", { n: seconds });
  if (seconds < 3600) return t("rules.age.min", { n: Math.floor(seconds / 60) });
  return t("rules.age.h", { n: Math.floor(seconds / 3600) });
}

/** A starting rule file for a pool without rules: its range, and nothing that acts yet. */
export function starterRules(pool: string, min: number, max: number): string {
  return `pool = "${pool}"\n\n[limits]\nmin_gpus = ${min}\nmax_gpus = ${max}\n`;
}
