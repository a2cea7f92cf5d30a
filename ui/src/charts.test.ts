import { describe, expect, it } from "vitest";
import type { ChartTheme, IpcError, Result } from "./bindings";
import { ChartLoader, FigureRegistry, LIVE_CHART_EVERY, wantsChart, type ChartEntry } from "./charts";

type Call = { host: string; theme: ChartTheme; w: number; h: number; resolve: (r: Result<string, IpcError>) => void; reject: (e: unknown) => void };

function harness(initialTheme: ChartTheme = "light") {
  const calls: Call[] = [];
  let theme = initialTheme;
  const loader = new ChartLoader(
    (host, th, w, h) =>
      new Promise((resolve, reject) => {
        calls.push({ host, theme: th, w, h, resolve, reject });
      }),
    () => theme,
  );
  const updates: [string, ChartEntry][] = [];
  loader.onUpdate((host, entry) => updates.push([host, entry]));
  return { calls, loader, updates, setTheme: (t: ChartTheme) => (theme = t) };
}

const flush = () => new Promise((r) => setTimeout(r, 0));

describe("ChartLoader", () => {
  it("never overlaps requests for one host", async () => {
    const { calls, loader, updates } = harness();
    expect(loader.request({ host: "a", theme: "light", width: 640, height: 240, tick: 1 })).toBe(true);
    expect(loader.request({ host: "a", theme: "light", width: 640, height: 240, tick: 2 })).toBe(false);
    expect(loader.request({ host: "b", theme: "light", width: 500, height: 240, tick: 2 })).toBe(true);
    expect(calls.map((c) => c.host)).toEqual(["a", "b"]);
    expect(loader.isInFlight("a")).toBe(true);

    calls[0]?.resolve({ status: "ok", data: "<svg/>" });
    await flush();
    expect(loader.isInFlight("a")).toBe(false);
    expect(updates).toHaveLength(1);
    expect(loader.get("a")).toEqual({ svg: "<svg/>", error: null, tick: 1, theme: "light" });
    expect(loader.request({ host: "a", theme: "light", width: 640, height: 240, tick: 3 })).toBe(true);
  });

  it("keeps the last good chart and reports errors in words", async () => {
    const { calls, loader } = harness();
    loader.request({ host: "a", theme: "light", width: 640, height: 240, tick: 1 });
    calls[0]?.resolve({ status: "ok", data: "<svg/>" });
    await flush();
    loader.request({ host: "a", theme: "light", width: 640, height: 240, tick: 2 });
    calls[1]?.resolve({ status: "error", error: { kind: "not_found", field: null, line: null, message: "No samples from gpu-a yet", problem: null } });
    await flush();
    const entry = loader.get("a");
    expect(entry?.error).toBe("No samples from gpu-a yet");
    expect(entry?.svg).toBe("<svg/>");
    expect(entry?.tick).toBe(1);

    loader.request({ host: "a", theme: "light", width: 640, height: 240, tick: 3 });
    calls[2]?.reject(new Error("IPC failed"));
    await flush();
    expect(loader.get("a")?.error).toBe("IPC failed");
    expect(loader.isInFlight("a")).toBe(false);
  });

  it("redraws when the theme changed while drawing", async () => {
    const { calls, loader, updates, setTheme } = harness("light");
    loader.request({ host: "a", theme: "light", width: 640, height: 240, tick: 1 });
    setTheme("dark");
    calls[0]?.resolve({ status: "ok", data: "<svg>light</svg>" });
    await flush();
    expect(updates).toHaveLength(0);
    expect(calls[1]).toMatchObject({ host: "a", theme: "dark", w: 640, h: 240 });
    calls[1]?.resolve({ status: "ok", data: "<svg>dark</svg>" });
    await flush();
    expect(loader.get("a")?.theme).toBe("dark");
  });

  it("forgets hosts that left", async () => {
    const { calls, loader } = harness();
    loader.request({ host: "a", theme: "light", width: 1, height: 1, tick: 1 });
    calls[0]?.resolve({ status: "ok", data: "<svg/>" });
    await flush();
    loader.retain(new Set(["b"]));
    expect(loader.get("a")).toBeUndefined();
  });
});

const base = { inDocument: true, hasChart: true, themeChanged: false, seen: true, windowHidden: false, age: LIVE_CHART_EVERY };

describe("which live charts are redrawn", () => {
  it("draws every figure's first chart and a new theme's, seen or not", () => {
    expect(wantsChart({ ...base, hasChart: false, seen: false })).toBe(true);
    expect(wantsChart({ ...base, themeChanged: true, seen: false, windowHidden: true })).toBe(true);
  });

  it("redraws a chart every few rounds only while it is in view in a shown window", () => {
    expect(wantsChart(base)).toBe(true);
    expect(wantsChart({ ...base, seen: false })).toBe(false);
    expect(wantsChart({ ...base, windowHidden: true })).toBe(false);
    expect(wantsChart({ ...base, age: LIVE_CHART_EVERY - 1 })).toBe(false);
    expect(wantsChart({ ...base, age: 120 })).toBe(true);
    // The first chart and a new theme's do not wait.
    expect(wantsChart({ ...base, age: 0, hasChart: false })).toBe(true);
    expect(wantsChart({ ...base, age: 0, themeChanged: true })).toBe(true);
  });

  it("asks nothing for a host with no figure in the document", () => {
    expect(wantsChart({ ...base, inDocument: false, hasChart: false })).toBe(false);
  });

  it("counts every figure as seen where there is no IntersectionObserver", () => {
    const figures = new FigureRegistry();
    expect(figures.isSeen("a")).toBe(true);
    figures.remove("a");
    expect(figures.get("a")).toBeUndefined();
    figures.dispose();
  });
});
