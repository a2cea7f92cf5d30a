// Live fleet state, shared by every Fleet view instance (views are rebuilt when
// the language changes; the subscription and the charts outlive them).

import { commands, events, type FleetSnapshot } from "./bindings";
import { ChartLoader } from "./charts";
import { newerSnapshot } from "./format";
import { getEffectiveTheme } from "./theme";

export type FleetState = {
  snapshot: FleetSnapshot | null;
  /** The first fleetSnapshot() call failed (raw error, described by the view). */
  snapshotError: unknown;
  /** Subscribing to fleet-tick failed. */
  listenError: unknown;
  loading: boolean;
};

const state: FleetState = { snapshot: null, snapshotError: null, listenError: null, loading: true };
const listeners = new Set<() => void>();
let started = false;

export const charts = new ChartLoader(
  (host, theme, w, h) => commands.utilizationChart(host, theme, w, h),
  getEffectiveTheme,
);

function emit(): void {
  for (const fn of [...listeners]) fn();
}

function accept(snapshot: FleetSnapshot): void {
  state.snapshot = newerSnapshot(state.snapshot, snapshot);
  state.snapshotError = null;
  state.loading = false;
  charts.retain(new Set(state.snapshot.hosts.map((h) => h.name)));
  emit();
}

export function fleetState(): Readonly<FleetState> {
  return state;
}

/** Called on every new snapshot or error. Returns the unsubscribe function. */
export function onFleetChange(fn: () => void): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

/** Load the snapshot, then follow fleet-tick events. Safe to call more than once. */
export async function startFleet(): Promise<void> {
  if (started) return;
  started = true;
  try {
    accept(await commands.fleetSnapshot());
  } catch (err) {
    state.snapshotError = err;
    state.loading = false;
    emit();
  }
  try {
    await events.fleetTick.listen((event) => accept(event.payload));
  } catch (err) {
    state.listenError = err;
    emit();
  }
}
