// History charts of the Fleet view (a host's per-GPU metrics, the fleet heatmap):
// the range choices, the route of a host's detail page, what makes two chart
// requests the same, export file names, and a loader that keeps at most one
// request in flight per chart and only ever shows the answer to the latest one.

import type { ChartMetric, ChartTheme, IpcError, Result } from "./bindings";
import { describeError } from "./format";

export type RangeId = "5m" | "1h" | "24h" | "7d";
export type RangeOption = { id: RangeId; seconds: number };

export const RANGES: Readonly<Record<RangeId, RangeOption>> = {
  "5m": { id: "5m", seconds: 5 * 60 },
  "1h": { id: "1h", seconds: 60 * 60 },
  "24h": { id: "24h", seconds: 24 * 60 * 60 },
  "7d": { id: "7d", seconds: 7 * 24 * 60 * 60 },
};

/** The host detail's range picker. */
export const DETAIL_RANGES: readonly RangeId[] = ["5m", "1h", "24h", "7d"];
/** The heatmap reads minute rollups: five minutes would be a handful of cells. */
export const HEATMAP_RANGES: readonly RangeId[] = ["1h", "24h", "7d"];

export function isRangeId(value: unknown): value is RangeId {
  return typeof value === "string" && Object.prototype.hasOwnProperty.call(RANGES, value);
}

/** Ranges short enough to redraw on every fleet tick (raw samples, seconds apart). */
export function isLiveRange(id: RangeId): boolean {
  return RANGES[id].seconds <= 5 * 60;
}

/** The host detail's charts, in the order shown. */
export const DETAIL_METRICS: readonly ChartMetric[] = ["util", "memory_pct", "temperature", "power"];

/** Minutes east of UTC, as the chart commands want them (JS gives minutes west). */
export function utcOffsetMinutes(date: Date = new Date()): number {
  const offset = -date.getTimezoneOffset();
  return offset === 0 ? 0 : offset; // never -0
}

/** `#/fleet/NAME` for a host's detail. */
export function hostHash(host: string): string {
  return `#/fleet/${encodeURIComponent(host)}`;
}

/** The host a hash opens (`#/fleet/NAME`), or null for anything else. */
export function hostFromHash(hash: string): string | null {
  const m = /^#\/?fleet\/(.+)$/.exec(hash);
  if (!m || m[1] === undefined) return null;
  try {
    const host = decodeURIComponent(m[1]);
    return host.trim() === "" ? null : host;
  } catch {
    return null; // a malformed escape
  }
}

export type HistoryRequest = {
  host: string;
  metric: ChartMetric;
  range: RangeId;
  theme: ChartTheme;
  width: number;
  height: number;
};

export type HeatmapRequest = { range: RangeId; theme: ChartTheme; width: number; height: number };

/** Two requests with one key draw the same chart (bar the passing of time). */
export function historyKey(r: HistoryRequest): string {
  return JSON.stringify([r.host, r.metric, r.range, r.theme, r.width, r.height]);
}

export function heatmapKey(r: HeatmapRequest): string {
  return JSON.stringify(["heatmap", r.range, r.theme, r.width, r.height]);
}

/** Chart width for an element `available` pixels wide (0 before layout). */
export function chartWidth(available: number, fallback = 640): number {
  const width = Number.isFinite(available) && available > 0 ? Math.round(available) : fallback;
  return Math.max(320, Math.min(1600, width));
}

/** The heatmap's height: a readable row per GPU (labels need ~14 px), within bounds. */
export function heatmapHeight(gpus: number): number {
  const chrome = 26 + 30 + 16; // caption, time axis, margins (as the Rust side lays it out)
  return Math.max(220, Math.min(560, chrome + Math.max(0, gpus) * 14));
}

/**
 * Whether a heatmap SVG has any row. Rows exist only for GPUs with minute rollups in
 * the range, and each row is labelled "HOST GPU N"; a fleet younger than a minute
 * has none, and the operator is told so in words instead of an empty grid.
 */
export function heatmapHasRows(svg: string): boolean {
  return /GPU \d+\+?\s*</.test(svg);
}

/** File name (without extension) for an exported chart: letters, digits and dashes. */
export function exportName(...parts: readonly string[]): string {
  const name = ["ebb", ...parts]
    .join("-")
    .replace(/[^A-Za-z0-9_-]+/g, "-")
    .replace(/-{2,}/g, "-")
    .replace(/^-+|-+$/g, "");
  return name.slice(0, 80);
}

export type Outcome = { ok: true; svg: string } | { ok: false; error: string };

/**
 * At most one request in flight per slot (one slot per chart on screen). A request
 * like the one in flight is skipped (the live 5-minute charts ask on every tick); a
 * different one (new range, theme or width) waits and goes next, replacing any other
 * waiting one. An answer is delivered only if nothing different was asked since.
 */
export class LatestLoader<R> {
  private readonly inflight = new Map<string, string>();
  private readonly waiting = new Map<string, R>();
  private readonly latest = new Map<string, string>();
  private disposed = false;

  constructor(
    private readonly fetchChart: (req: R) => Promise<Result<string, IpcError>>,
    private readonly keyOf: (req: R) => string,
    private readonly deliver: (slot: string, req: R, outcome: Outcome) => void,
  ) {}

  request(slot: string, req: R): "started" | "queued" | "skipped" {
    if (this.disposed) return "skipped";
    const key = this.keyOf(req);
    this.latest.set(slot, key);
    const running = this.inflight.get(slot);
    if (running === undefined) {
      this.start(slot, req, key);
      return "started";
    }
    if (running === key) {
      this.waiting.delete(slot);
      return "skipped";
    }
    this.waiting.set(slot, req);
    return "queued";
  }

  isInFlight(slot: string): boolean {
    return this.inflight.has(slot);
  }

  /** Stop delivering (the view is gone). */
  dispose(): void {
    this.disposed = true;
    this.waiting.clear();
  }

  private start(slot: string, req: R, key: string): void {
    this.inflight.set(slot, key);
    void this.run(slot, req, key);
  }

  private async run(slot: string, req: R, key: string): Promise<void> {
    let outcome: Outcome;
    try {
      const res = await this.fetchChart(req);
      outcome = res.status === "ok" ? { ok: true, svg: res.data } : { ok: false, error: describeError(res.error) };
    } catch (err) {
      outcome = { ok: false, error: describeError(err) };
    }
    this.inflight.delete(slot);
    if (this.disposed) return;
    const next = this.waiting.get(slot);
    this.waiting.delete(slot);
    if (this.latest.get(slot) === key) this.deliver(slot, req, outcome);
    if (next !== undefined) this.start(slot, next, this.keyOf(next));
  }
}

/**
 * What a chart card shows: how its latest answer went, the last good SVG (what Export
 * saves, kept dimmed when a redraw fails), the theme and range that SVG was drawn for,
 * and the words of the latest failure.
 */
export type ChartShown = {
  state: "loading" | "ready" | "error";
  svg: string | null;
  theme: ChartTheme | null;
  range: RangeId | null;
  error: string | null;
};

export const CHART_LOADING: ChartShown = { state: "loading", svg: null, theme: null, range: null, error: null };

/** A card after an answer to a request for `theme` and `range`. */
export function showOutcome(previous: ChartShown, outcome: Outcome, theme: ChartTheme, range: RangeId): ChartShown {
  if (outcome.ok) return { state: "ready", svg: outcome.svg, theme, range, error: null };
  return { ...previous, state: "error", error: outcome.error };
}

/** Whether a card shows an old chart dimmed: the latest redraw failed over a good one. */
export function isStale(shown: ChartShown): boolean {
  return shown.state === "error" && shown.svg !== null;
}
