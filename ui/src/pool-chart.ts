// The pool chart's scale-out bar, pure: how much of the desired count is ready and how
// much warming, and what the ETA honestly says (measured, overdue, or not measured yet).

import type { DecisionMark, ScaleOut } from "./bindings";
import type { MessageKey } from "./i18n";

export type ScaleOutState =
  | { kind: "none" }
  /** No host asked has a measured delivery time yet. */
  | { kind: "unmeasured"; warming: number }
  /** Granted GPUs whose workload is coming up (no host's delivery left to wait for). */
  | { kind: "starting"; warming: number; starting: number }
  /** Due in this many seconds (0: any moment now). */
  | { kind: "eta"; warming: number; seconds: number }
  /** Past the measured time by this many seconds. */
  | { kind: "overdue"; warming: number; seconds: number };

export function scaleOutState(scaleOut: ScaleOut | null, nowMs: number): ScaleOutState {
  if (scaleOut === null || scaleOut.warming === 0) return { kind: "none" };
  const warming = scaleOut.warming;
  if (scaleOut.eta_ms === null) {
    const measured = scaleOut.hosts.every((host) => host.delivery_ms !== null);
    const starting = scaleOut.starting ?? 0;
    return starting > 0 && measured ? { kind: "starting", warming, starting } : { kind: "unmeasured", warming };
  }
  const left = Math.round((scaleOut.eta_ms - nowMs) / 1000);
  return left >= 0 ? { kind: "eta", warming, seconds: left } : { kind: "overdue", warming, seconds: -left };
}

/** The bar's parts as percentages of the larger of desired and ready + warming. */
export function barShares(desired: number, ready: number, warming: number): { ready: number; warming: number } {
  const whole = Math.max(desired, ready + warming, 1);
  const pct = (n: number) => Math.round((Math.max(0, n) / whole) * 1000) / 10;
  return { ready: pct(ready), warming: pct(warming) };
}

/** "45 s", "3 min 5 s", "2 h 10 min" (units from i18n). */
export function shortDuration(seconds: number, units: { s: string; min: string; h: string }): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} ${units.s}`;
  if (s < 3600) return s % 60 === 0 ? `${s / 60} ${units.min}` : `${Math.floor(s / 60)} ${units.min} ${s % 60} ${units.s}`;
  const m = Math.floor(s / 60) % 60;
  return m === 0 ? `${Math.floor(s / 3600)} ${units.h}` : `${Math.floor(s / 3600)} ${units.h} ${m} ${units.min}`;
}

/** Which way a rule decision moved the pool; `held` when a clamp kept the count. */
export type MarkKind = "out" | "in" | "held";

export function markKind(mark: Pick<DecisionMark, "from" | "to" | "held">): MarkKind {
  if (mark.held || mark.from === mark.to) return "held";
  return mark.to > mark.from ? "out" : "in";
}

const MARK_LABELS: Readonly<Record<MarkKind, { real: MessageKey; shadow: MessageKey }>> = {
  out: { real: "pool.chart.mark.out", shadow: "pool.chart.mark.shadowOut" },
  in: { real: "pool.chart.mark.in", shadow: "pool.chart.mark.shadowIn" },
  held: { real: "pool.chart.mark.held", shadow: "pool.chart.mark.shadowHeld" },
};

/** The words naming a decision mark (its button's label; params: time, from, to). */
export function markLabelKey(mark: Pick<DecisionMark, "from" | "to" | "held" | "shadow">): MessageKey {
  const labels = MARK_LABELS[markKind(mark)];
  return mark.shadow ? labels.shadow : labels.real;
}

/** Where a mark sits over the image, as CSS percentages kept inside it. */
export function markPlace(mark: Pick<DecisionMark, "x_pct" | "y_pct">): { left: string; top: string } {
  const pct = (v: number) => `${Math.min(100, Math.max(0, Number.isFinite(v) ? v : 0))}%`;
  return { left: pct(mark.x_pct), top: pct(mark.y_pct) };
}

/** Which way a mark's tooltip opens so it stays over the chart: rightward from a mark in
 * the left half, leftward from one in the right half. */
export function tipSide(xPct: number): "right" | "left" {
  return xPct < 50 ? "right" : "left";
}
