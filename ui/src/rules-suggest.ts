// Pure helpers for Suggest as a proposal: the line diff of the rule file being edited
// against the suggested one (shown side by side), each structured note of the suggestion
// in the UI's language, and the sample trace the replay offers (a minute CSV whose comment
// is worded from the catalog). No DOM, so they are tested on their own.

import type { PaidUnit, RuleSet, SuggestNote } from "./bindings";
import { formatMoney } from "./costs";
import { t, type MessageKey } from "./i18n";

/** One row of a side-by-side diff: a line on the left, the right, or both. */
export type DiffRow =
  | { kind: "same"; left: string; right: string; leftLine: number; rightLine: number }
  | { kind: "removed"; left: string; leftLine: number }
  | { kind: "added"; right: string; rightLine: number }
  | { kind: "changed"; left: string; right: string; leftLine: number; rightLine: number };

/** The most lines a diff compares (an LCS table of this square is a few MB at most). */
const MAX_DIFF_LINES = 2000;

function lines(text: string): string[] {
  const out = text.replace(/\r\n/g, "\n").split("\n");
  if (out.length > 0 && out[out.length - 1] === "") out.pop();
  return out.slice(0, MAX_DIFF_LINES);
}

/**
 * The rows of a side-by-side line diff of `before` against `after` (longest common
 * subsequence): unchanged lines pair up; a run of removed lines next to a run of added
 * ones pairs up as changed, line by line, the rest standing alone. Line numbers are 1-based.
 */
export function lineDiff(before: string, after: string): DiffRow[] {
  const a = lines(before);
  const b = lines(after);
  const n = a.length;
  const m = b.length;
  // lcs[i][j]: the common subsequence's length of a[i..] and b[j..].
  const lcs: Uint16Array[] = Array.from({ length: n + 1 }, () => new Uint16Array(m + 1));
  for (let i = n - 1; i >= 0; i -= 1) {
    for (let j = m - 1; j >= 0; j -= 1) {
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const rows: DiffRow[] = [];
  let removed: { text: string; line: number }[] = [];
  let added: { text: string; line: number }[] = [];
  const flush = (): void => {
    const paired = Math.min(removed.length, added.length);
    for (let k = 0; k < paired; k += 1) {
      rows.push({ kind: "changed", left: removed[k]!.text, right: added[k]!.text, leftLine: removed[k]!.line, rightLine: added[k]!.line });
    }
    for (const r of removed.slice(paired)) rows.push({ kind: "removed", left: r.text, leftLine: r.line });
    for (const r of added.slice(paired)) rows.push({ kind: "added", right: r.text, rightLine: r.line });
    removed = [];
    added = [];
  };
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      flush();
      rows.push({ kind: "same", left: a[i]!, right: b[j]!, leftLine: i + 1, rightLine: j + 1 });
      i += 1;
      j += 1;
    } else if (j < m && (i === n || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) {
      added.push({ text: b[j]!, line: j + 1 });
      j += 1;
    } else {
      removed.push({ text: a[i]!, line: i + 1 });
      i += 1;
    }
  }
  flush();
  return rows;
}

/** How many lines a diff adds, removes and changes. */
export function diffCounts(rows: readonly DiffRow[]): { added: number; removed: number; changed: number } {
  const counts = { added: 0, removed: 0, changed: 0 };
  for (const row of rows) if (row.kind !== "same") counts[row.kind] += 1;
  return counts;
}

const UNITS: Readonly<Record<PaidUnit, MessageKey>> = {
  hour: "rules.suggest.unit.hour",
  day: "rules.suggest.unit.day",
  week: "rules.suggest.unit.week",
};

const WEEKDAYS: readonly MessageKey[] = [
  "rules.suggest.weekday.0",
  "rules.suggest.weekday.1",
  "rules.suggest.weekday.2",
  "rules.suggest.weekday.3",
  "rules.suggest.weekday.4",
  "rules.suggest.weekday.5",
  "rules.suggest.weekday.6",
];

function pct(value: number): string {
  return `${Number(value.toFixed(2))}%`;
}

/** The button beside a note on what the limit costs: suggest again at the limit it names. */
export function suggestAgainLabel(allowPct: number): string {
  return t("rules.suggest.again", { limit: pct(allowPct) });
}

/** A suggestion's note in the UI's language, with its numbers. */
export function suggestNoteText(note: SuggestNote): string {
  switch (note.kind) {
    case "trace":
      return t("rules.suggest.note.trace", { minutes: note.minutes, days: (note.minutes / 1440).toFixed(1), peak: note.peak_gpus });
    case "replayed":
      return t(note.within_margin ? "rules.suggest.note.replayed" : "rules.suggest.note.replayedShortest", {
        cost: formatMoney(note.cost_fen),
        ratio: note.oracle_cost_fen > 0 ? (note.cost_fen / note.oracle_cost_fen).toFixed(2) : "1.00",
        oracle: formatMoney(note.oracle_cost_fen),
        shortfall: pct(note.shortfall_pct),
        limit: pct(note.max_shortfall_pct),
        actions: note.actions_per_day.toFixed(1),
        candidates: note.candidates,
      });
    case "over_limit":
      return t("rules.suggest.note.overLimit", { shortfall: pct(note.shortfall_pct), limit: pct(note.max_shortfall_pct) });
    case "stuck_jobs":
      return t("rules.suggest.note.stuckJobs", { gpuMinutes: Math.round(note.gpu_minutes), share: note.share_pct.toFixed(1) });
    case "limit_price":
      return t("rules.suggest.note.limitPrice", {
        limit: pct(note.max_shortfall_pct),
        cost: formatMoney(note.cost_fen),
        ratio: note.oracle_cost_fen > 0 ? (note.cost_fen / note.oracle_cost_fen).toFixed(2) : "1.00",
        oracle: formatMoney(note.oracle_cost_fen),
        shortfall: pct(note.shortfall_pct),
        what: t(note.queue ? "rules.suggest.limitPrice.queue" : "rules.suggest.limitPrice.busy"),
        allow: pct(note.allow_pct),
      });
    case "target":
      return note.target_pct >= 100
        ? t("rules.suggest.note.targetFull")
        : t("rules.suggest.note.target", { pct: note.target_pct, headroom: 100 - note.target_pct });
    case "stabilization":
      return t("rules.suggest.note.stabilization", { minutes: note.minutes });
    case "scale_out_at_once":
      return t("rules.suggest.note.outAtOnce", { warmup: note.warmup_minutes });
    case "scale_out_sustain":
      return t("rules.suggest.note.outSustain", { minutes: note.sustain_minutes, gpus: note.overload_gpus, unit: t(UNITS[note.unit]) });
    case "release_window":
      return note.minutes === 0
        ? t("rules.suggest.note.releaseAtEnd", { unit: t(UNITS[note.unit]) })
        : t("rules.suggest.note.releaseWindow", { minutes: note.minutes, unit: t(UNITS[note.unit]) });
    case "deadband":
      return t("rules.suggest.note.deadband", { gpus: note.gpus, minutes: note.minutes, spare: Math.max(0, note.gpus - 1) });
    case "limits":
      return t("rules.suggest.note.limits", { min: note.min_gpus, max: note.max_gpus });
    case "pre_scale":
      return t("rules.suggest.note.preScale", {
        rise: note.rise_gpus,
        at: note.onset,
        days: note.weekdays === null ? t("rules.suggest.everyDay") : note.weekdays.map((d) => t(WEEKDAYS[d % 7]!)).join(t("common.listSeparator")),
        seen: note.days_seen,
        floor: note.floor_gpus,
      });
    case "pre_scale_left_out":
      return t("rules.suggest.note.preScaleLeftOut", { rise: note.rise_gpus, at: note.onset, seen: note.days_seen });
    case "kept_metrics":
      return t("rules.suggest.note.keptMetrics", { names: note.names.join(t("common.listSeparator")) });
  }
}

/** The shape of the sample trace: a day's base load with a daily peak, minute by minute. */
export type SampleTraceShape = {
  days: number;
  base: number;
  peak: number;
  /** The peak's window, in hours of the day (UTC), from `fromHour` up to `toHour`. */
  fromHour: number;
  toHour: number;
};

/** A sample sized to a pool of `min`..`max` GPUs: base near the bottom, peak near the top. */
export function sampleTraceShape(min: number, max: number): SampleTraceShape {
  const top = Math.max(2, max);
  const base = Math.max(1, Math.min(top - 1, Math.round(Math.max(min, top * 0.25))));
  const peak = Math.max(base + 1, Math.round(top * 0.75));
  return { days: 2, base, peak, fromHour: 19, toHour: 23 };
}

/** A metric column of the sample trace: its value at the base load and at the peak. */
export type SampleMetric = { name: string; base: number; peak: number };

/**
 * The custom metrics `rules` read, each given values that make the sample exercise them:
 * a metric a target rule reads is that target per GPU of demand (5,000 users per GPU:
 * 5,000 × the demand); one only thresholds read runs from under the lowest threshold at
 * the base load (60% of it) to over the highest at the peak (130%). Without them a replay
 * of rules on a custom metric would never see the rules act.
 */
export function sampleMetrics(rules: RuleSet, shape: SampleTraceShape): SampleMetric[] {
  const out: SampleMetric[] = [];
  const named = (name: string): boolean => out.some((metric) => metric.name === name);
  for (const rule of rules.targets) {
    if (rule.metric.kind !== "custom" || named(rule.metric.name)) continue;
    out.push({ name: rule.metric.name, base: shape.base * rule.target, peak: shape.peak * rule.target });
  }
  for (const rule of rules.thresholds) {
    if (rule.metric.kind !== "custom" || named(rule.metric.name)) continue;
    const name = rule.metric.name;
    const values = rules.thresholds.filter((other) => other.metric.kind === "custom" && other.metric.name === name).map((other) => other.threshold);
    const low = Math.min(...values);
    const high = Math.max(...values);
    const base = low > 0 ? low * 0.6 : low - 1;
    const peak = high > 0 ? high * 1.3 : high + 1;
    out.push({ name, base, peak });
  }
  return out;
}

/**
 * A replay trace (`minute,demand[,metric…]`) for `shape`: the base load with a little
 * steady ripple, the peak ramping up over 20 minutes each evening and dropping at its end,
 * and each of `metrics` following the load from its base value to its peak value. Its
 * comment line is worded from the catalog, so a zh-CN file carries no English prose.
 */
export function sampleTraceCsv(shape: SampleTraceShape, metrics: readonly SampleMetric[] = []): string {
  const comment = t("rules.replay.sampleComment", {
    days: shape.days,
    base: shape.base,
    peak: shape.peak,
    from: `${shape.fromHour}:00`,
    to: `${shape.toHour}:00`,
  });
  const header = ["minute", "demand", ...metrics.map((metric) => metric.name)].join(",");
  const out = [`# ${comment.replace(/\s*\n\s*/g, " ")}`, header];
  const ramp = 20;
  for (let minute = 0; minute < shape.days * 1440; minute += 1) {
    const ofDay = minute % 1440;
    const from = shape.fromHour * 60;
    const to = shape.toHour * 60;
    let level = shape.base;
    if (ofDay >= from && ofDay < to) {
      const rise = Math.min(1, (ofDay - from + 1) / ramp);
      level = shape.base + (shape.peak - shape.base) * rise;
    }
    // A ripple of ±5% so the demand is not a flat line, the same each run.
    const ripple = 1 + 0.05 * Math.sin((minute / 37) * Math.PI);
    const share = (level - shape.base) / (shape.peak - shape.base);
    const cells = metrics.map((metric) => (metric.base + (metric.peak - metric.base) * share).toFixed(2));
    out.push([`${minute}`, (level * ripple).toFixed(2), ...cells].join(","));
  }
  return out.join("\n") + "\n";
}
