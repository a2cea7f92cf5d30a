// Pure helpers for the Costs view: money from fen, plan names, the FAQ-4 sample
// demand, the recommendation in words, and reading what the cost engine says back.
// No DOM, so they are unit-tested in node.

import type { CatalogProblem, CatalogRow, PlanComparisonView, PlanKind, PlanRow } from "./bindings";
import { t, type MessageKey, type Params } from "./i18n";

/** A message from the catalog, not yet translated. */
export type Phrase = { key: MessageKey; params?: Params };

const MINUS = "\u2212";

/** A whole number with thousands separators: 12900 -> "12,900" (zh-CN writes the same digits). */
export function formatCount(n: number): string {
  if (!Number.isFinite(n)) return t("common.empty");
  const sign = n < 0 ? MINUS : "";
  const digits = String(Math.round(Math.abs(n)));
  return sign + digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

const CURRENCY_SYMBOLS: Readonly<Record<string, string>> = { CNY: "¥" };

/**
 * Integer fen (1/100 of the unit) as money: 123456 -> "¥1,234.56"; negative amounts get a
 * minus sign ("−¥5.00"); a currency without a symbol is written as its code ("USD 1.00").
 * Integer arithmetic only, so no float rounding creeps in.
 */
export function formatMoney(fen: number | null | undefined, currency = "CNY"): string {
  if (fen === null || fen === undefined || !Number.isFinite(fen)) return t("common.empty");
  const whole = Math.trunc(fen);
  const abs = Math.abs(whole);
  const units = Math.floor(abs / 100);
  const cents = abs % 100;
  const code = currency.trim().toUpperCase();
  const symbol = CURRENCY_SYMBOLS[code] ?? (code === "" ? "" : `${code} `);
  const sign = whole < 0 ? MINUS : "";
  return `${sign}${symbol}${formatCount(units)}.${String(cents).padStart(2, "0")}`;
}

/** A saving percentage: 52 -> "52%", 47.18 -> "47.2%", -8.81 -> "−8.8%". */
export function formatPct(pct: number): string {
  if (!Number.isFinite(pct)) return t("common.empty");
  const rounded = Math.round(pct * 10) / 10;
  const abs = Math.abs(rounded);
  const text = Number.isInteger(abs) ? String(abs) : abs.toFixed(1);
  return `${rounded < 0 ? MINUS : ""}${text}%`;
}

/** "1 GPU", "10 GPUs" (zh-CN: "10 块 GPU"). */
export function gpus(n: number): string {
  return t(n === 1 ? "costs.gpus.one" : "costs.gpus.other", { n: formatCount(n) });
}

const PLAN_NAMES: Record<PlanKind, MessageKey> = {
  all_subscribed: "costs.plan.all_subscribed",
  all_hourly: "costs.plan.all_hourly",
  all_on_demand_best_unit: "costs.plan.all_on_demand_best_unit",
  base_hourly: "costs.plan.base_hourly",
  base_daily: "costs.plan.base_daily",
  base_weekly: "costs.plan.base_weekly",
  base_reserved: "costs.plan.base_reserved",
  base_spot: "costs.plan.base_spot",
};

/** The plan's name in the current language. */
export function planName(kind: PlanKind): string {
  return t(PLAN_NAMES[kind]);
}

/** The shape of a demand series to generate: `base` GPUs all along, `peak` in a daily window. */
export type SampleShape = {
  hours: number;
  base: number;
  peak: number;
  /** The window, in hours of the day: from `fromHour` up to (not including) `toHour`. */
  fromHour: number;
  toHour: number;
  /** The window repeats on the first `days` days. */
  days: number;
};

/** The seed's FAQ 4: 10 GPUs all month, 50 from 19:00 to 24:00 on 28 days of a 730-hour month. */
export const FAQ4: SampleShape = { hours: 730, base: 10, peak: 50, fromHour: 19, toHour: 24, days: 28 };

/** A planning CSV (`hour,demand`) for `shape`, with a comment line saying what it is. */
export function sampleDemandCsv(shape: SampleShape = FAQ4): string {
  const comment = t("costs.demand.sampleComment", {
    base: shape.base,
    peak: shape.peak,
    from: `${shape.fromHour}:00`,
    to: `${shape.toHour}:00`,
    days: shape.days,
    hours: shape.hours,
  });
  const lines = [`# ${comment.replace(/\s*\n\s*/g, " ")}`, "hour,demand"];
  for (let hour = 0; hour < shape.hours; hour += 1) {
    const day = Math.floor(hour / 24);
    const hourOfDay = hour % 24;
    const inWindow = day < shape.days && hourOfDay >= shape.fromHour && hourOfDay < shape.toHour;
    lines.push(`${hour},${inWindow ? shape.peak : shape.base}`);
  }
  return lines.join("\n") + "\n";
}

/** Rows of data in a demand CSV: lines that are not blank, not comments and not the header. */
export function demandRowCount(text: string): number {
  let rows = 0;
  let header = false;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    if (!header) {
      header = true;
      continue;
    }
    rows += 1;
  }
  return rows;
}

/** The cost with its period: "¥120,000.00 a month", or over the series' hours. */
export function costForPeriod(fen: number, currency: string, hours: number): string {
  const cost = formatMoney(fen, currency);
  if (hours === 730) return t("costs.period.month", { cost });
  if (hours > 0 && hours % 730 === 0) return t("costs.period.months", { cost, months: formatCount(hours / 730) });
  return t("costs.period.hours", { cost, hours: formatCount(hours) });
}

type Overlay = "hour" | "day" | "week" | "spot" | "reserved" | "best_unit";

const OVERLAY_OF: Record<PlanKind, Overlay | null> = {
  all_subscribed: null,
  all_hourly: "hour",
  all_on_demand_best_unit: "best_unit",
  base_hourly: "hour",
  base_daily: "day",
  base_weekly: "week",
  base_reserved: "reserved",
  base_spot: "spot",
};

const REST_KEYS: Record<Overlay, MessageKey> = {
  hour: "costs.rest.hour",
  day: "costs.rest.day",
  week: "costs.rest.week",
  spot: "costs.rest.spot",
  reserved: "costs.rest.reserved",
  best_unit: "costs.rest.best_unit",
};

const ALL_KEYS: Record<Overlay, MessageKey> = {
  hour: "costs.all.hour",
  day: "costs.all.day",
  week: "costs.all.week",
  spot: "costs.all.spot",
  reserved: "costs.all.reserved",
  best_unit: "costs.all.best_unit",
};

function planOf(view: PlanComparisonView, kind: PlanKind): PlanRow | undefined {
  return view.plans.find((plan) => plan.kind === kind);
}

/** The recommendation in words: a headline with its saving, then the reasons behind it. */
export function recommendationText(view: PlanComparisonView): { headline: string; details: string[] } {
  const rec = view.recommendation;
  const cur = view.currency;
  const period = (fen: number) => costForPeriod(fen, cur, view.hours);
  const overlay = OVERLAY_OF[rec.kind];
  const common = {
    cost: period(rec.cost_fen),
    pct: formatPct(rec.saving_pct),
    peak: gpus(view.peak_gpus),
  };

  let headline: string;
  if (overlay === null || rec.base_gpus >= view.peak_gpus) {
    headline = t("costs.rec.subscribeAll", { cost: period(rec.cost_fen), peak: gpus(view.peak_gpus) });
  } else if (rec.base_gpus === 0) {
    headline = t("costs.rec.none", { ...common, all: t(ALL_KEYS[overlay]) });
  } else {
    headline = t("costs.rec.base", { ...common, base: gpus(rec.base_gpus), rest: t(REST_KEYS[overlay]) });
  }

  const details: string[] = [];
  const hourly = planOf(view, "base_hourly");
  const cheaperUnit = rec.cheaper_overlay?.overlay;
  const cheaper = cheaperUnit === "day" ? "base_daily" : cheaperUnit === "week" ? "base_weekly" : null;
  const cheaperPlan = cheaper ? planOf(view, cheaper) : undefined;
  if (hourly && rec.kind === cheaper) {
    // The day or week overlay won: say what the hourly one would have cost.
    details.push(t("costs.rec.beatsHourly", { base: gpus(rec.hourly_base_gpus), cost: formatMoney(hourly.total_fen, cur) }));
  } else if (hourly && rec.kind !== "base_hourly") {
    details.push(t("costs.rec.hourlyBase", { base: gpus(rec.hourly_base_gpus), cost: period(hourly.total_fen) }));
  }
  if (cheaper && cheaperPlan && rec.kind !== cheaper) {
    details.push(
      t(cheaper === "base_daily" ? "costs.rec.cheaperDay" : "costs.rec.cheaperWeek", {
        base: gpus(cheaperPlan.base_gpus),
        cost: formatMoney(cheaperPlan.total_fen, cur),
        pct: formatPct(cheaperPlan.saving_pct),
      }),
    );
  }
  details.push(t("costs.rec.breakEven", { hours: formatCount(rec.break_even_hours), total: formatCount(view.hours) }));
  return { headline, details };
}

/** Where a catalog problem is: "[[price]] #2 (A100 in cn-north) · hour", or the file as a whole. */
export function problemPlace(problem: CatalogProblem): string {
  const entry = problem.entry?.trim() || t("costs.catalog.wholeFile");
  const field = problem.field?.trim();
  return field ? `${entry} · ${field}` : entry;
}

/** The distinct models of a catalog, in catalog order. */
export function catalogModels(rows: readonly CatalogRow[]): string[] {
  return [...new Set(rows.map((row) => row.model))];
}

/** The regions offering `model`, in catalog order. */
export function catalogRegions(rows: readonly CatalogRow[], model: string): string[] {
  return [...new Set(rows.filter((row) => row.model === model).map((row) => row.region))];
}

/**
 * A model and region to select: the wanted ones where the catalog has them, else the
 * first region of the wanted model, else the catalog's first row; null for an empty catalog.
 */
export function pickPool(
  rows: readonly CatalogRow[],
  wanted: { model: string | null; region: string | null },
): { model: string; region: string } | null {
  const models = catalogModels(rows);
  const model = wanted.model !== null && models.includes(wanted.model) ? wanted.model : models[0];
  if (model === undefined) return null;
  const regions = catalogRegions(rows, model);
  const region = wanted.region !== null && regions.includes(wanted.region) ? wanted.region : regions[0];
  return region === undefined ? null : { model, region };
}

/** Start and end offsets of 1-based `line` in `text`, to select it; null past the end. */
export function lineRange(text: string, line: number): [number, number] | null {
  if (!Number.isInteger(line) || line < 1) return null;
  let start = 0;
  for (let i = 1; i < line; i += 1) {
    const next = text.indexOf("\n", start);
    if (next < 0) return null;
    start = next + 1;
  }
  let end = text.indexOf("\n", start);
  if (end < 0) end = text.length;
  if (end > start && text[end - 1] === "\r") end -= 1;
  return [start, end];
}

/**
 * What a dropped file is for: a `.toml` is a catalog and a `.csv` is demand wherever it
 * lands; any other name goes to the card it was dropped on.
 */
export function fileRole(name: string, droppedOn: "catalog" | "demand"): "catalog" | "demand" {
  const trimmed = name.trim();
  if (/\.toml$/i.test(trimmed)) return "catalog";
  if (/\.csv$/i.test(trimmed)) return "demand";
  return droppedOn;
}

/** The chart width to ask for: the space it has, within the chart renderer's limits. */
export function chartWidth(available: number, fallback = 720): number {
  const width = Number.isFinite(available) && available > 0 ? Math.round(available) : fallback;
  return Math.max(320, Math.min(1600, width));
}
