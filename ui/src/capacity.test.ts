import { describe, expect, it } from "vitest";
import type { FleetCapacity, Gpu, Health, HostStatus } from "./bindings";
import {
  capacityRows,
  filterChoices,
  filterHosts,
  heatLevel,
  holderOf,
  hostShare,
  NO_FILTER,
  ourLeases,
  pageOf,
  totals,
} from "./capacity";

const A100 = "NVIDIA A100-SXM4-80GB";
const V100 = "Tesla V100-SXM2-32GB";

function gpu(index: number, model: string, lease: string | null = null, healthy = true): Gpu {
  return {
    index,
    uuid: `GPU-${index}`,
    model,
    memory_total_mib: 81920,
    healthy,
    health_reason: null,
    lease_id: lease,
    memory_used_mib: 1024,
    gpu_util_pct: 50,
    memory_util_pct: 40,
    temperature_c: 50,
    power_draw_w: 200,
    power_limit_w: 400,
    sm_clock_mhz: 1200,
    memory_clock_mhz: 1593,
    processes: [],
    ecc_corrected: 0,
    ecc_uncorrected: 0,
    retired_pages: 0,
    xid_errors: 0,
  };
}

function host(name: string, region: string, health: Health, gpus: Gpu[]): HostStatus {
  return {
    name,
    url: `http://${name}`,
    region,
    health,
    gpu_count: gpus.length,
    models: [...new Set(gpus.map((g) => g.model))],
    mean_util_pct: null,
    last_error: null,
    gpus,
  };
}

const capacity: FleetCapacity = {
  currency: "CNY",
  models: [
    { gpu_model: A100, catalog_model: "A100" },
    { gpu_model: V100, catalog_model: "V100" },
    { gpu_model: "Mystery X1", catalog_model: null },
  ],
  prices: [
    { model: "A100", region: "cn-east", hour_fen: 1800 },
    { model: "A100", region: "cn-south", hour_fen: 1700 },
    { model: "V100", region: "cn-east", hour_fen: 600 },
  ],
  leases: [
    { lease_id: "lease-1", host: "east-1", pool: "inference" },
    { lease_id: "lease-2", host: "east-1", pool: "training" },
    { lease_id: "lease-3", host: "south-1", pool: "inference" },
  ],
};

const fleet: [HostStatus, HostStatus, HostStatus, HostStatus, HostStatus] = [
  host("east-1", "cn-east", "online", [gpu(0, A100, "lease-1"), gpu(1, A100, "lease-2"), gpu(2, A100, "lease-x"), gpu(3, A100)]),
  host("east-2", "cn-east", "degraded", [gpu(0, V100), gpu(1, V100, null, false)]),
  host("south-1", "cn-south", "offline", [gpu(0, A100, "lease-3"), gpu(1, A100)]),
  host("south-2", "cn-south", "online", [gpu(0, "Mystery X1")]),
  host("new", "cn-south", "unknown", []),
];

describe("holderOf", () => {
  const ours = ourLeases(capacity);
  it("tells free, ours (with the pool), someone else's and offline apart", () => {
    const [east1, east2, south1] = fleet;
    const at = (h: HostStatus, i: number): Gpu => h.gpus[i] as Gpu;
    expect(holderOf(east1, at(east1, 0), ours)).toEqual({ kind: "ours", pool: "inference", leaseId: "lease-1" });
    expect(holderOf(east1, at(east1, 2), ours)).toEqual({ kind: "others", leaseId: "lease-x" });
    expect(holderOf(east1, at(east1, 3), ours)).toEqual({ kind: "free" });
    expect(holderOf(east2, at(east2, 1), ours)).toEqual({ kind: "offline" });
    // A host that does not answer: its GPUs are offline, even one of our leases.
    expect(holderOf(south1, at(south1, 0), ours)).toEqual({ kind: "offline" });
  });
});

describe("capacityRows", () => {
  it("counts by catalog model × region and carries the catalog's price", () => {
    const rows = capacityRows(fleet, capacity);
    expect(rows.map((r) => [r.model, r.region, r.total, r.free, r.ours, r.others, r.offline, r.hourFen])).toEqual([
      ["A100", "cn-east", 4, 1, 2, 1, 0, 1800],
      ["A100", "cn-south", 2, 0, 0, 0, 2, 1700],
      ["Mystery X1", "cn-south", 1, 1, 0, 0, 0, null],
      ["V100", "cn-east", 2, 1, 0, 0, 1, 600],
    ]);
    expect(rows[0]?.reported).toEqual([A100]);
    expect(rows.find((r) => r.model === "Mystery X1")?.priced).toBe(false);
    expect(totals(rows)).toEqual({ total: 9, free: 3, ours: 2, others: 1, offline: 3 });
  });

  it("stands on reported names before the catalog facts arrive", () => {
    const rows = capacityRows(fleet.slice(0, 1), null);
    expect(rows.map((r) => [r.model, r.total, r.ours, r.others, r.hourFen])).toEqual([[A100, 4, 0, 3, null]]);
  });
});

describe("hostShare", () => {
  it("says what each pool holds on the host", () => {
    const share = hostShare(fleet[0], capacity);
    expect(share).toMatchObject({ total: 4, free: 1, ours: 2, others: 1, offline: 0, models: ["A100"] });
    expect(share.pools).toEqual([
      { pool: "inference", gpus: 1 },
      { pool: "training", gpus: 1 },
    ]);
  });
});

describe("filters and pages", () => {
  it("searches names and filters by region, catalog model and health", () => {
    const names = (hosts: HostStatus[]) => hosts.map((h) => h.name);
    expect(names(filterHosts(fleet, { ...NO_FILTER, query: "EAST" }, capacity))).toEqual(["east-1", "east-2"]);
    expect(names(filterHosts(fleet, { ...NO_FILTER, region: "cn-south" }, capacity))).toEqual(["south-1", "south-2", "new"]);
    expect(names(filterHosts(fleet, { ...NO_FILTER, model: "A100" }, capacity))).toEqual(["east-1", "south-1"]);
    expect(names(filterHosts(fleet, { ...NO_FILTER, health: "offline" }, capacity))).toEqual(["south-1"]);
    expect(names(filterHosts(fleet, { query: "1", region: "cn-east", model: "A100", health: "online" }, capacity))).toEqual([
      "east-1",
    ]);
    expect(filterChoices(fleet, capacity)).toEqual({ regions: ["cn-east", "cn-south"], models: ["A100", "Mystery X1", "V100"] });
  });

  it("pages 200 hosts and clamps the page", () => {
    const items = Array.from({ length: 200 }, (_, i) => i);
    const third = pageOf(items, 2, 24);
    expect([third.first, third.last, third.pages, third.items.length]).toEqual([49, 72, 9, 24]);
    const last = pageOf(items, 99, 24);
    expect([last.page, last.first, last.last, last.items.length]).toEqual([8, 193, 200, 8]);
    expect(pageOf([], 3, 24)).toMatchObject({ page: 0, pages: 1, first: 0, last: 0, total: 0 });
  });

  it("steps utilization into ten heat levels", () => {
    expect([0, 9.9, 10, 55, 99.9, 100, 140].map(heatLevel)).toEqual([0, 0, 1, 5, 9, 9, 9]);
    expect(heatLevel(null)).toBeNull();
  });
});
