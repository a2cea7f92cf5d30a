// Pure helpers for turning backend data into words. No DOM, so they are unit-tested in node.

import type { FleetSnapshot, Health, HostStatus, Phrase } from "./bindings";
import { t, type MessageKey } from "./i18n";
import { phraseText } from "./phrase";

/** 42.4 -> "42%", null / NaN -> "—". */
export function formatPercent(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return t("common.empty");
  return `${Math.round(value)}%`;
}

/** Any missing value shows as "—". */
export function orDash(value: string | number | null | undefined): string {
  if (value === null || value === undefined || value === "") return t("common.empty");
  return String(value);
}

/** MiB as GiB to one place: 40960 -> "40.0"; null -> "—". */
function gib(mib: number | null): string {
  return mib === null ? t("common.empty") : (mib / 1024).toFixed(1);
}

/**
 * A card's memory in use of its total, in GiB: "40.0 / 80.0". A total the agent could not
 * read shows as "—" ("40.0 / —"), never as 0; nothing in use read is "—" alone.
 */
export function formatMemoryGib(usedMib: number | null, totalMib: number | null): string {
  if (usedMib === null) return t("common.empty");
  return `${gib(usedMib)} / ${gib(totalMib)}`;
}

/** Models of a host, de-duplicated in first-seen order, joined the locale's way. */
export function formatModels(models: readonly string[]): string {
  const unique = [...new Set(models.map((m) => m.trim()).filter((m) => m !== ""))];
  return unique.length === 0 ? t("common.empty") : unique.join(t("common.listSeparator"));
}

const HEALTH_KEYS: Readonly<Record<Health, MessageKey>> = {
  online: "health.online",
  offline: "health.offline",
  degraded: "health.degraded",
  unknown: "health.unknown",
};

/** Catalog key for a health value. */
export function healthKey(health: Health): MessageKey {
  return HEALTH_KEYS[health];
}

/** CSS modifier for the health dot. */
export function healthClass(health: Health): string {
  return `health-${health}`;
}

export type RegionGroup = { region: string; hosts: HostStatus[] };

/** Hosts grouped by region; regions and hosts sorted by name, "" (no region) last. */
export function groupByRegion(hosts: readonly HostStatus[]): RegionGroup[] {
  const groups = new Map<string, HostStatus[]>();
  for (const host of hosts) {
    const region = host.region.trim();
    const list = groups.get(region);
    if (list) list.push(host);
    else groups.set(region, [host]);
  }
  const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return [...groups.entries()]
    .sort(([a], [b]) => (a === "" ? 1 : b === "" ? -1 : byName(a, b)))
    .map(([region, list]) => ({ region, hosts: [...list].sort((x, y) => byName(x.name, y.name)) }));
}

export type FleetSummary = { hosts: number; gpus: number; online: number; degraded: number };

export function summarize(hosts: readonly HostStatus[]): FleetSummary {
  let gpus = 0;
  let online = 0;
  let degraded = 0;
  for (const host of hosts) {
    gpus += host.gpu_count;
    if (host.health === "online") online += 1;
    if (host.health === "degraded") degraded += 1;
  }
  return { hosts: hosts.length, gpus, online, degraded };
}

/**
 * The snapshot to keep when `incoming` arrives. Ticks only go up, so an answer
 * to fleetSnapshot() that lands after a newer fleet-tick event is dropped.
 */
export function newerSnapshot(current: FleetSnapshot | null, incoming: FleetSnapshot): FleetSnapshot {
  if (current && incoming.tick < current.tick) return current;
  return incoming;
}

/** True in a page that was opened outside the Tauri webview (no IPC bridge). */
function shellMissing(): boolean {
  return typeof window !== "undefined" && !("__TAURI_INTERNALS__" in window);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null;
}

/** A phrase the shell sent (a key and its arguments), as far as a glance can tell. */
function isPhrase(v: unknown): v is Phrase {
  return isRecord(v) && typeof v.key === "string" && Array.isArray(v.args);
}

/**
 * Words for anything the IPC layer can hand back: an IpcError {kind, message, words} (its
 * words in the operator's language when Rust worded the refusal, else its English),
 * a plain string, an Error (e.g. no Tauri runtime at all), or something else.
 */
export function describeError(err: unknown): string {
  if (typeof err === "string") return err.trim() || t("error.unknown");
  if (err instanceof Error) {
    if (/__TAURI_INTERNALS__|__TAURI__|transformCallback/.test(err.message) || (err instanceof TypeError && shellMissing())) {
      return t("error.noShell");
    }
    return err.message || t("error.unknown");
  }
  if (isRecord(err)) {
    if (isPhrase(err.words)) return phraseText(err.words);
    const message = typeof err.message === "string" ? err.message.trim() : "";
    const kind = typeof err.kind === "string" ? err.kind.trim() : "";
    if (message) return message;
    if (kind) return kind;
  }
  return t("error.unknown");
}

/** Arrow-key movement in a vertical list of `count` items (wraps around). */
export function nextIndex(current: number, key: string, count: number): number | null {
  if (count <= 0) return null;
  switch (key) {
    case "ArrowDown":
      return (current + 1) % count;
    case "ArrowUp":
      return (current - 1 + count) % count;
    case "Home":
      return 0;
    case "End":
      return count - 1;
    default:
      return null;
  }
}
