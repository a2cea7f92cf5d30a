// Pure capacity helpers for the Fleet view: who holds each GPU (free, one of our pools,
// someone else, or offline), the summary by catalog model × region, each host's share,
// and the chart grid's search, filters and pages. No DOM: unit-tested in node.
//
// The model names come mapped from Rust (`FleetCapacity.models`, by
// `ebb_plan::placement::model_matches`): this file never matches names itself.

import type { FleetCapacity, Gpu, Health, HostStatus } from "./bindings";

/** Where one GPU stands. */
export type GpuHolder =
  | { kind: "free" }
  | { kind: "ours"; pool: string; leaseId: string }
  | { kind: "others"; leaseId: string }
  | { kind: "offline" };

/** Our leases by id → the pool holding each. */
export function ourLeases(capacity: FleetCapacity | null): Map<string, string> {
  return new Map((capacity?.leases ?? []).map((l) => [l.lease_id, l.pool]));
}

/** A host that does not answer now (or never has) has its GPUs offline. */
export function hostAnswers(health: Health): boolean {
  return health === "online" || health === "degraded";
}

export function holderOf(host: HostStatus, gpu: Gpu, ours: ReadonlyMap<string, string>): GpuHolder {
  if (!hostAnswers(host.health) || !gpu.healthy) return { kind: "offline" };
  if (gpu.lease_id === null) return { kind: "free" };
  const pool = ours.get(gpu.lease_id);
  return pool === undefined ? { kind: "others", leaseId: gpu.lease_id } : { kind: "ours", pool, leaseId: gpu.lease_id };
}

/** The catalog's name for a reported model (`NVIDIA A100-SXM4-80GB` → `A100`), else the name as reported. */
export function modelName(reported: string, capacity: FleetCapacity | null): string {
  return capacity?.models.find((m) => m.gpu_model === reported)?.catalog_model ?? reported;
}

/** Whether the catalog prices a reported model at all. */
export function isPriced(reported: string, capacity: FleetCapacity | null): boolean {
  return (capacity?.models.find((m) => m.gpu_model === reported)?.catalog_model ?? null) !== null;
}

export type Counts = { total: number; free: number; ours: number; others: number; offline: number };

const zero = (): Counts => ({ total: 0, free: 0, ours: 0, others: 0, offline: 0 });

function count(into: Counts, holder: GpuHolder): void {
  into.total += 1;
  into[holder.kind] += 1;
}

export type CapacityRow = Counts & {
  /** The catalog's model name, or the reported one when the catalog has none. */
  model: string;
  region: string;
  /** Whether the catalog prices the model. */
  priced: boolean;
  /** The catalog's on-demand price per GPU-hour there, fen; null when none. */
  hourFen: number | null;
  /** The names hosts reported for it, sorted. */
  reported: string[];
};

/** The capacity summary: one row per catalog model × region, sorted by model then region. */
export function capacityRows(hosts: readonly HostStatus[], capacity: FleetCapacity | null): CapacityRow[] {
  const ours = ourLeases(capacity);
  const rows = new Map<string, CapacityRow>();
  for (const host of hosts) {
    for (const gpu of host.gpus) {
      const model = modelName(gpu.model, capacity);
      const key = `${model}\u0000${host.region}`;
      let row = rows.get(key);
      if (row === undefined) {
        const priced = isPriced(gpu.model, capacity);
        const price = priced ? capacity?.prices.find((p) => p.model === model && p.region === host.region) : undefined;
        row = { ...zero(), model, region: host.region, priced, hourFen: price?.hour_fen ?? null, reported: [] };
        rows.set(key, row);
      }
      if (!row.reported.includes(gpu.model)) row.reported = [...row.reported, gpu.model].sort();
      count(row, holderOf(host, gpu, ours));
    }
  }
  const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return [...rows.values()].sort((a, b) => byText(a.model, b.model) || byText(a.region, b.region));
}

/** The totals over summary rows. */
export function totals(rows: readonly Counts[]): Counts {
  const sum = zero();
  for (const row of rows) {
    sum.total += row.total;
    sum.free += row.free;
    sum.ours += row.ours;
    sum.others += row.others;
    sum.offline += row.offline;
  }
  return sum;
}

export type HostShare = Counts & {
  /** The host's models under the catalog's names, first-seen order. */
  models: string[];
  /** Our pools on the host and how many of its GPUs each holds, by pool name. */
  pools: { pool: string; gpus: number }[];
};

/** One host's GPUs: counts, models and which of our pools hold what. */
export function hostShare(host: HostStatus, capacity: FleetCapacity | null): HostShare {
  const ours = ourLeases(capacity);
  const share: HostShare = { ...zero(), models: [], pools: [] };
  for (const gpu of host.gpus) {
    const model = modelName(gpu.model, capacity);
    if (!share.models.includes(model)) share.models.push(model);
    const holder = holderOf(host, gpu, ours);
    count(share, holder);
    if (holder.kind === "ours") {
      const entry = share.pools.find((p) => p.pool === holder.pool);
      if (entry) entry.gpus += 1;
      else share.pools.push({ pool: holder.pool, gpus: 1 });
    }
  }
  share.pools.sort((a, b) => (a.pool < b.pool ? -1 : a.pool > b.pool ? 1 : 0));
  return share;
}

export type HostFilter = {
  /** Part of the host's name, any case; blank matches all. */
  query: string;
  /** "" for every region. */
  region: string;
  /** A catalog model name, "" for every model. */
  model: string;
  /** "" for any health. */
  health: Health | "";
};

export const NO_FILTER: HostFilter = { query: "", region: "", model: "", health: "" };

export function matchesFilter(host: HostStatus, filter: HostFilter, capacity: FleetCapacity | null): boolean {
  const query = filter.query.trim().toLowerCase();
  if (query !== "" && !host.name.toLowerCase().includes(query)) return false;
  if (filter.region !== "" && host.region !== filter.region) return false;
  if (filter.health !== "" && host.health !== filter.health) return false;
  if (filter.model !== "") {
    const models = host.gpus.length > 0 ? host.gpus.map((g) => g.model) : host.models;
    if (!models.some((m) => modelName(m, capacity) === filter.model)) return false;
  }
  return true;
}

export function filterHosts(
  hosts: readonly HostStatus[],
  filter: HostFilter,
  capacity: FleetCapacity | null,
): HostStatus[] {
  return hosts.filter((host) => matchesFilter(host, filter, capacity));
}

/** The choices the filters offer: regions and catalog models seen, sorted. */
export function filterChoices(
  hosts: readonly HostStatus[],
  capacity: FleetCapacity | null,
): { regions: string[]; models: string[] } {
  const regions = new Set<string>();
  const models = new Set<string>();
  for (const host of hosts) {
    if (host.region !== "") regions.add(host.region);
    for (const m of host.gpus.length > 0 ? host.gpus.map((g) => g.model) : host.models) models.add(modelName(m, capacity));
  }
  return { regions: [...regions].sort(), models: [...models].sort() };
}

export type Page<T> = { items: T[]; page: number; pages: number; first: number; last: number; total: number };

/** Page `page` (0-based, clamped) of `items`, `size` a page; `first`/`last` are 1-based (0 when empty). */
export function pageOf<T>(items: readonly T[], page: number, size: number): Page<T> {
  const total = items.length;
  const pages = Math.max(1, Math.ceil(total / Math.max(1, size)));
  const at = Math.min(Math.max(0, Math.floor(page)), pages - 1);
  const slice = items.slice(at * size, at * size + size);
  return { items: slice, page: at, pages, first: total === 0 ? 0 : at * size + 1, last: at * size + slice.length, total };
}

/** A heat level 0..9 for a utilization, the live grid's and the legend's colour step; null for no reading. */
export function heatLevel(pct: number | null | undefined): number | null {
  if (pct === null || pct === undefined || !Number.isFinite(pct)) return null;
  return Math.min(9, Math.max(0, Math.floor(pct / 10)));
}
