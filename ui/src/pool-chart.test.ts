import { describe, expect, it } from "vitest";
import type { ScaleOut } from "./bindings";
import { barShares, markKind, markLabelKey, markPlace, scaleOutState, shortDuration, tipSide } from "./pool-chart";

const out = (warming: number, eta_ms: number | null): ScaleOut => ({ warming, eta_ms, hosts: [] });

describe("scaleOutState", () => {
  it("says nothing when nothing warms", () => {
    expect(scaleOutState(null, 0)).toEqual({ kind: "none" });
    expect(scaleOutState(out(0, 5), 0)).toEqual({ kind: "none" });
  });
  it("says when a host was never measured", () => {
    expect(scaleOutState(out(3, null), 0)).toEqual({ kind: "unmeasured", warming: 3 });
  });
  it("says granted GPUs are starting up when no request is left to wait for", () => {
    expect(scaleOutState({ ...out(2, null), starting: 2 }, 0)).toEqual({ kind: "starting", warming: 2, starting: 2 });
    const unmeasured = { host: "h", warming: 1, asked_at_ms: 0, delivery_ms: null, samples: 0, eta_ms: null };
    expect(scaleOutState({ warming: 3, starting: 2, eta_ms: null, hosts: [unmeasured] }, 0)).toEqual({ kind: "unmeasured", warming: 3 });
  });
  it("counts down to the measured ETA, then overdue", () => {
    expect(scaleOutState(out(2, 31_000), 1_000)).toEqual({ kind: "eta", warming: 2, seconds: 30 });
    expect(scaleOutState(out(2, 1_000), 1_000)).toEqual({ kind: "eta", warming: 2, seconds: 0 });
    expect(scaleOutState(out(2, 1_000), 11_000)).toEqual({ kind: "overdue", warming: 2, seconds: 10 });
  });
});

describe("barShares", () => {
  it("shares the desired count", () => {
    expect(barShares(6, 2, 4)).toEqual({ ready: 33.3, warming: 66.7 });
    expect(barShares(4, 4, 0)).toEqual({ ready: 100, warming: 0 });
    expect(barShares(0, 0, 0)).toEqual({ ready: 0, warming: 0 });
    expect(barShares(2, 3, 1)).toEqual({ ready: 75, warming: 25 });
  });
});

describe("shortDuration", () => {
  const u = { s: "s", min: "min", h: "h" };
  it("reads at a glance", () => {
    expect(shortDuration(45, u)).toBe("45 s");
    expect(shortDuration(185, u)).toBe("3 min 5 s");
    expect(shortDuration(120, u)).toBe("2 min");
    expect(shortDuration(7800, u)).toBe("2 h 10 min");
    expect(shortDuration(-3, u)).toBe("0 s");
  });
});

describe("decision marks", () => {
  const mark = (from: number, to: number, held = false, shadow = false) => ({ from, to, held, shadow });
  it("say which way the rules moved the pool, or that a clamp held it", () => {
    expect(markKind(mark(2, 6))).toBe("out");
    expect(markKind(mark(6, 4))).toBe("in");
    expect(markKind(mark(6, 6, true))).toBe("held");
    expect(markKind(mark(6, 6))).toBe("held");
  });
  it("are named as changes or, in shadow mode, as what would have been", () => {
    expect(markLabelKey(mark(2, 6))).toBe("pool.chart.mark.out");
    expect(markLabelKey(mark(6, 4))).toBe("pool.chart.mark.in");
    expect(markLabelKey(mark(6, 6, true))).toBe("pool.chart.mark.held");
    expect(markLabelKey(mark(2, 6, false, true))).toBe("pool.chart.mark.shadowOut");
    expect(markLabelKey(mark(6, 4, false, true))).toBe("pool.chart.mark.shadowIn");
    expect(markLabelKey(mark(6, 6, true, true))).toBe("pool.chart.mark.shadowHeld");
  });
  it("sit where the chart drew them, never outside the image", () => {
    expect(markPlace({ x_pct: 12.5, y_pct: 80 })).toEqual({ left: "12.5%", top: "80%" });
    expect(markPlace({ x_pct: -3, y_pct: 140 })).toEqual({ left: "0%", top: "100%" });
    expect(markPlace({ x_pct: Number.NaN, y_pct: 50 })).toEqual({ left: "0%", top: "50%" });
  });
  it("open their tooltip toward the middle of the chart", () => {
    expect(tipSide(10)).toBe("right");
    expect(tipSide(90)).toBe("left");
  });
});
