// The pool chart's scale-out bar, pure: how much of the desired count is ready and how
// much warming, and what the ETA honestly says (measured, overdue, or not measured yet).

import type { ScaleOut } from "./bindings";

export type ScaleOutState =
  | { kind: "none" }
  /** No host asked has a measured delivery time yet. */
  | { kind: "unmeasured"; warming: number }
  /** Due in this many seconds (0: any moment now). */
  | { kind: "eta"; warming: number; seconds: number }
  /** Past the measured time by this many seconds. */
  | { kind: "overdue"; warming: number; seconds: number };

export function scaleOutState(scaleOut: ScaleOut | null, nowMs: number): ScaleOutState {
  if (scaleOut === null || scaleOut.warming === 0) return { kind: "none" };
  const warming = scaleOut.warming;
  if (scaleOut.eta_ms === null) return { kind: "unmeasured", warming };
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
