import { describe, expect, it } from "vitest";
import type { IpcError, Result } from "./bindings";
import {
  CHART_LOADING,
  chartWidth,
  DETAIL_RANGES,
  exportName,
  HEATMAP_RANGES,
  heatmapHasRows,
  heatmapHeight,
  heatmapKey,
  historyKey,
  hostFromHash,
  hostHash,
  isLiveRange,
  isRangeId,
  isStale,
  LatestLoader,
  RANGES,
  showOutcome,
  utcOffsetMinutes,
  type HistoryRequest,
  type Outcome,
} from "./history";

describe("ranges", () => {
  it("offers 5 min / 1 h / 24 h / 7 d for a host and 1 h / 24 h / 7 d for the heatmap", () => {
    expect(DETAIL_RANGES.map((id) => RANGES[id].seconds)).toEqual([300, 3600, 86400, 604800]);
    expect(HEATMAP_RANGES).toEqual(["1h", "24h", "7d"]);
  });

  it("redraws only the 5-minute range live", () => {
    expect(DETAIL_RANGES.filter(isLiveRange)).toEqual(["5m"]);
  });

  it("recognizes range ids and nothing else", () => {
    expect(isRangeId("24h")).toBe(true);
    expect(isRangeId("2h")).toBe(false);
    expect(isRangeId("toString")).toBe(false);
    expect(isRangeId(3600)).toBe(false);
  });
});

describe("host routes", () => {
  it("round-trips host names, odd ones too", () => {
    for (const host of ["gpu-a", "rack 7/node#2", "主机一", "a%b"]) {
      expect(hostFromHash(hostHash(host))).toBe(host);
    }
    expect(hostHash("rack 7/node#2")).toBe("#/fleet/rack%207%2Fnode%232");
  });

  it("opens no host for other routes or broken ones", () => {
    expect(hostFromHash("#/fleet")).toBeNull();
    expect(hostFromHash("#/fleet/")).toBeNull();
    expect(hostFromHash("#/settings")).toBeNull();
    expect(hostFromHash("#/fleet/%E0%A4%A")).toBeNull();
    expect(hostFromHash("")).toBeNull();
  });
});

describe("chart request keys", () => {
  const base: HistoryRequest = { host: "a", metric: "util", range: "5m", theme: "light", width: 640, height: 240 };

  it("differ whenever the drawn chart would", () => {
    const keys = new Set([
      historyKey(base),
      historyKey({ ...base, host: "b" }),
      historyKey({ ...base, metric: "power" }),
      historyKey({ ...base, range: "1h" }),
      historyKey({ ...base, theme: "dark" }),
      historyKey({ ...base, width: 641 }),
      historyKey({ ...base, height: 241 }),
      heatmapKey({ range: "5m", theme: "light", width: 640, height: 240 }),
    ]);
    expect(keys.size).toBe(8);
    expect(historyKey({ ...base })).toBe(historyKey(base));
  });

  it("cannot be confused by separators in host names", () => {
    expect(historyKey({ ...base, host: "a,util" })).not.toBe(historyKey({ ...base, host: "a", metric: "util" }));
  });
});

describe("sizes, names and offsets", () => {
  it("clamps chart widths and falls back before layout", () => {
    expect(chartWidth(0)).toBe(640);
    expect(chartWidth(NaN)).toBe(640);
    expect(chartWidth(100)).toBe(320);
    expect(chartWidth(812.6)).toBe(813);
    expect(chartWidth(5000)).toBe(1600);
  });

  it("gives the heatmap a row per GPU within bounds", () => {
    expect(heatmapHeight(0)).toBe(220);
    expect(heatmapHeight(20)).toBe(72 + 280);
    expect(heatmapHeight(10_000)).toBe(560);
  });

  it("builds safe export names", () => {
    expect(exportName("gpu-a", "util", "1h")).toBe("ebb-gpu-a-util-1h");
    expect(exportName("rack 7/node#2", "memory_pct", "5m")).toBe("ebb-rack-7-node-2-memory_pct-5m");
    expect(exportName("主机", "power", "7d")).toBe("ebb-power-7d");
    expect(exportName("x".repeat(200)).length).toBe(80);
  });

  it("says minutes east of UTC", () => {
    const d = new Date();
    expect(utcOffsetMinutes(d)).toBe(-d.getTimezoneOffset() || 0);
    expect(Object.is(utcOffsetMinutes({ getTimezoneOffset: () => 0 } as Date), -0)).toBe(false);
    expect(utcOffsetMinutes({ getTimezoneOffset: () => -480 } as Date)).toBe(480);
  });
});

describe("heatmapHasRows", () => {
  it("sees row labels, not the title", () => {
    expect(heatmapHasRows('<svg><text x="1">GPU utilization</text><text>12:00</text></svg>')).toBe(false);
    expect(heatmapHasRows('<svg><text x="1">gpu-a GPU 0</text></svg>')).toBe(true);
    expect(heatmapHasRows('<svg><text x="1">gpu-a GPU 12+</text></svg>')).toBe(true);
  });
});

type Call = { req: string; resolve: (r: Result<string, IpcError>) => void; reject: (e: unknown) => void };

function harness() {
  const calls: Call[] = [];
  const delivered: [string, string, Outcome][] = [];
  const loader = new LatestLoader<string>(
    (req) => new Promise((resolve, reject) => calls.push({ req, resolve, reject })),
    (req) => req.split("@")[0] ?? req, // "key@tick": the tick is not part of the key
    (slot, req, outcome) => delivered.push([slot, req, outcome]),
  );
  return { calls, delivered, loader };
}

const flush = () => new Promise((r) => setTimeout(r, 0));

describe("LatestLoader", () => {
  it("never overlaps the same chart and skips repeats while one is drawn", async () => {
    const { calls, delivered, loader } = harness();
    expect(loader.request("util", "5m@1")).toBe("started");
    expect(loader.request("util", "5m@2")).toBe("skipped");
    expect(loader.request("power", "5m@2")).toBe("started");
    expect(calls.map((c) => c.req)).toEqual(["5m@1", "5m@2"]);
    calls[0]?.resolve({ status: "ok", data: "<svg/>" });
    await flush();
    expect(delivered).toEqual([["util", "5m@1", { ok: true, svg: "<svg/>" }]]);
    expect(loader.isInFlight("util")).toBe(false);
    expect(loader.request("util", "5m@3")).toBe("started");
  });

  it("runs the latest different request next and drops the outdated answer", async () => {
    const { calls, delivered, loader } = harness();
    loader.request("util", "5m@1");
    expect(loader.request("util", "1h@1")).toBe("queued");
    expect(loader.request("util", "24h@1")).toBe("queued"); // replaces 1h
    calls[0]?.resolve({ status: "ok", data: "<svg>5m</svg>" });
    await flush();
    expect(delivered).toEqual([]); // 5m was superseded
    expect(calls.map((c) => c.req)).toEqual(["5m@1", "24h@1"]);
    calls[1]?.resolve({ status: "ok", data: "<svg>24h</svg>" });
    await flush();
    expect(delivered.map(([, req]) => req)).toEqual(["24h@1"]);
  });

  it("drops a waiting request when the one in flight is wanted again", async () => {
    const { calls, delivered, loader } = harness();
    loader.request("util", "5m@1");
    loader.request("util", "1h@1");
    expect(loader.request("util", "5m@2")).toBe("skipped");
    calls[0]?.resolve({ status: "ok", data: "<svg/>" });
    await flush();
    expect(calls).toHaveLength(1);
    expect(delivered.map(([, req]) => req)).toEqual(["5m@1"]);
  });

  it("delivers failures in words, rejected calls included", async () => {
    const { calls, delivered, loader } = harness();
    loader.request("a", "x");
    loader.request("b", "y");
    calls[0]?.resolve({ status: "error", error: { kind: "not_found", message: "host: no host named x" } as IpcError });
    calls[1]?.reject(new Error("boom"));
    await flush();
    expect(delivered.map(([slot, , o]) => [slot, o.ok])).toEqual([
      ["a", false],
      ["b", false],
    ]);
    const words = delivered.map(([, , o]) => (o.ok ? "" : o.error)).join(" | ");
    expect(words).toContain("no host named x");
    expect(words).toContain("boom");
  });

  it("delivers nothing after dispose", async () => {
    const { calls, delivered, loader } = harness();
    loader.request("a", "x");
    loader.dispose();
    calls[0]?.resolve({ status: "ok", data: "<svg/>" });
    await flush();
    expect(delivered).toEqual([]);
    expect(loader.request("a", "x")).toBe("skipped");
  });
});

describe("showOutcome", () => {
  it("shows a good chart with its theme and range", () => {
    const shown = showOutcome(CHART_LOADING, { ok: true, svg: "<svg/>" }, "dark", "1h");
    expect(shown).toEqual({ state: "ready", svg: "<svg/>", theme: "dark", range: "1h", error: null });
    expect(isStale(shown)).toBe(false);
  });

  it("keeps the last good chart, dimmed, when a redraw fails", () => {
    const good = showOutcome(CHART_LOADING, { ok: true, svg: "<svg/>" }, "light", "5m");
    const failed = showOutcome(good, { ok: false, error: "boom" }, "dark", "1h");
    expect(failed).toEqual({ state: "error", svg: "<svg/>", theme: "light", range: "5m", error: "boom" });
    expect(isStale(failed)).toBe(true);
    const again = showOutcome(failed, { ok: true, svg: "<svg id='2'/>" }, "dark", "1h");
    expect(again.error).toBeNull();
    expect(isStale(again)).toBe(false);
  });

  it("has nothing to dim when the first drawing fails", () => {
    const failed = showOutcome(CHART_LOADING, { ok: false, error: "boom" }, "light", "5m");
    expect(failed.state).toBe("error");
    expect(failed.svg).toBeNull();
    expect(isStale(failed)).toBe(false);
  });
});
