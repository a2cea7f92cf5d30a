import { afterEach, describe, expect, it } from "vitest";
import type { FleetSnapshot, HostStatus } from "./bindings";
import {
  describeError,
  formatMemoryGib,
  formatModels,
  formatPercent,
  groupByRegion,
  healthClass,
  healthKey,
  newerSnapshot,
  nextIndex,
  orDash,
  summarize,
} from "./format";
import { setLocale } from "./i18n";

function host(name: string, region: string, extra: Partial<HostStatus> = {}): HostStatus {
  return {
    name,
    url: `http://127.0.0.1/${name}`,
    region,
    health: "online",
    gpu_count: 8,
    models: ["H800"],
    gpus: [],
    mean_util_pct: 50,
    last_error: null,
    ...extra,
  };
}

afterEach(() => setLocale("en"));

describe("formatMemoryGib", () => {
  it("shows a total the agent could not read as a dash, never 0", () => {
    expect(formatMemoryGib(40960, 81920)).toBe("40.0 / 80.0");
    expect(formatMemoryGib(40960, null)).toBe("40.0 / —");
    expect(formatMemoryGib(null, 81920)).toBe("—");
  });
});

describe("formatPercent", () => {
  it("rounds to whole percent", () => {
    expect(formatPercent(42.4)).toBe("42%");
    expect(formatPercent(42.5)).toBe("43%");
    expect(formatPercent(0)).toBe("0%");
    expect(formatPercent(100)).toBe("100%");
  });
  it("shows a dash for missing values", () => {
    expect(formatPercent(null)).toBe("—");
    expect(formatPercent(undefined)).toBe("—");
    expect(formatPercent(Number.NaN)).toBe("—");
  });
  it("orDash", () => {
    expect(orDash(null)).toBe("—");
    expect(orDash("")).toBe("—");
    expect(orDash(0)).toBe("0");
    expect(orDash("x")).toBe("x");
  });
});

describe("formatModels", () => {
  it("de-duplicates and joins per locale", () => {
    expect(formatModels(["H800", "A100", "H800"])).toBe("H800, A100");
    setLocale("zh-CN");
    expect(formatModels(["H800", "A100"])).toBe("H800、A100");
  });
  it("shows a dash when empty", () => {
    expect(formatModels([])).toBe("—");
    expect(formatModels([" "])).toBe("—");
  });
});

describe("health", () => {
  it("maps known values and falls back to unknown", () => {
    expect(healthKey("online")).toBe("health.online");
    expect(healthKey("offline")).toBe("health.offline");
    expect(healthKey("degraded")).toBe("health.degraded");
    expect(healthKey("unknown")).toBe("health.unknown");
    expect(healthClass("offline")).toBe("health-offline");
    expect(healthClass("unknown")).toBe("health-unknown");
  });
});

describe("groupByRegion", () => {
  it("sorts regions and hosts, no-region last", () => {
    const groups = groupByRegion([host("b", "us-west"), host("z", ""), host("a", "us-west"), host("c", "eu-central")]);
    expect(groups.map((g) => g.region)).toEqual(["eu-central", "us-west", ""]);
    expect(groups[1]?.hosts.map((h) => h.name)).toEqual(["a", "b"]);
  });
  it("handles an empty fleet", () => {
    expect(groupByRegion([])).toEqual([]);
  });
});

describe("summarize", () => {
  it("counts hosts, GPUs, online and degraded hosts", () => {
    expect(
      summarize([
        host("a", "r", { gpu_count: 4 }),
        host("b", "r", { health: "offline", gpu_count: 2 }),
        host("c", "r", { health: "degraded", gpu_count: 1 }),
      ]),
    ).toEqual({ hosts: 3, gpus: 7, online: 1, degraded: 1 });
  });
});

describe("newerSnapshot", () => {
  const snap = (tick: number): FleetSnapshot => ({ tick, hosts: [] });
  it("keeps the newer tick", () => {
    expect(newerSnapshot(null, snap(3)).tick).toBe(3);
    expect(newerSnapshot(snap(5), snap(4)).tick).toBe(5);
    expect(newerSnapshot(snap(5), snap(6)).tick).toBe(6);
    expect(newerSnapshot(snap(5), snap(5)).tick).toBe(5);
  });
});

describe("describeError", () => {
  it("reads IpcError, strings and Errors", () => {
    expect(describeError({ kind: "unknown_host", message: "No host named gpu-x" })).toBe("No host named gpu-x");
    expect(describeError({ kind: "io", message: "" })).toBe("io");
    expect(describeError("agent timed out")).toBe("agent timed out");
    expect(describeError(new Error("boom"))).toBe("boom");
  });
  it("says a refusal Rust worded in the operator's language, not its English", () => {
    const refused = {
      kind: "invalid_input",
      field: "range_s",
      line: null,
      message: "range_s: The chart's range must be from 1 second to 400 days, got 0 seconds.",
      problem: null,
      words: { key: "chart.refuse.range", args: [{ name: "days", value: { kind: "int", value: 400 } }, { name: "seconds", value: { kind: "int", value: 0 } }] },
    };
    expect(describeError(refused)).toBe("The chart's range must be from 1 second to 400 days, got 0 seconds.");
    setLocale("zh-CN");
    expect(describeError(refused)).toBe("图表的时间范围必须在 1 秒到 400 天之间，收到的是 0 秒。");
    expect(describeError({ ...refused, words: null })).toBe(refused.message);
  });
  it("explains a missing desktop shell", () => {
    const err = new TypeError("Cannot read properties of undefined (reading 'invoke') at window.__TAURI_INTERNALS__");
    expect(describeError(err)).toMatch(/desktop shell/);
  });
  it("never returns an empty string", () => {
    for (const e of [null, undefined, 42, {}, "", new Error("")]) expect(describeError(e).length).toBeGreaterThan(0);
  });
});

describe("nextIndex", () => {
  it("moves and wraps", () => {
    expect(nextIndex(0, "ArrowDown", 6)).toBe(1);
    expect(nextIndex(5, "ArrowDown", 6)).toBe(0);
    expect(nextIndex(0, "ArrowUp", 6)).toBe(5);
    expect(nextIndex(3, "Home", 6)).toBe(0);
    expect(nextIndex(3, "End", 6)).toBe(5);
    expect(nextIndex(3, "Enter", 6)).toBeNull();
    expect(nextIndex(0, "ArrowDown", 0)).toBeNull();
  });
});
