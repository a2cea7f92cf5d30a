// Live fleet state, shared by every Fleet view instance (views are rebuilt when
// the language changes; the subscription and the charts outlive them).
//
// Two ways to read it: `fleetState()` + `onFleetChange()` for plain code (a live.ts
// `Trigger`: a view refreshing on each tick follows it as it follows the shell's other
// events), and `fleet` / `chartEntries`, Solid stores for components. The snapshot store is reconciled by host
// name, so a tick updates each host's fields in place and a component keyed on a host
// (its row, its link, its chart) is never replaced while the fleet ticks.

import { batch } from "solid-js";
import { createStore, reconcile } from "solid-js/store";
import { commands, events, type FleetCapacity, type FleetSnapshot } from "./bindings";
import { ChartLoader, type ChartEntry } from "./charts";
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

const [liveFleet, setLiveFleet] = createStore<FleetState>({ ...state });
const [liveCharts, setLiveCharts] = createStore<Record<string, ChartEntry | undefined>>({});

/** The fleet as a Solid store: hosts reconciled by name, so ticks update them in place. */
export const fleet: Readonly<FleetState> = liveFleet;

const [liveCapacity, setLiveCapacity] = createStore<{ facts: FleetCapacity | null; error: unknown }>({
  facts: null,
  error: null,
});

/**
 * The capacity facts beside the snapshot (catalog models and prices, which of our pools
 * holds each lease), asked again with every tick, one request in flight; leases reconciled
 * by id. `null` until the first answer.
 */
export const capacity: Readonly<{ facts: FleetCapacity | null; error: unknown }> = liveCapacity;

let capacityInFlight = false;

async function refreshCapacity(): Promise<void> {
  if (capacityInFlight) return;
  capacityInFlight = true;
  try {
    const answer = await commands.fleetCapacity();
    if (answer.status === "ok") {
      batch(() => {
        setLiveCapacity("facts", reconcile(answer.data, { key: "lease_id" }));
        setLiveCapacity("error", null);
      });
    } else {
      setLiveCapacity("error", answer.error);
    }
  } catch (err) {
    setLiveCapacity("error", err);
  } finally {
    capacityInFlight = false;
  }
}

/** Each host's latest live chart as a Solid store (absent until its first chart). */
export const chartEntries: Readonly<Record<string, ChartEntry | undefined>> = liveCharts;

export const charts = new ChartLoader(
  (host, theme, w, h) => commands.utilizationChart(host, theme, w, h),
  getEffectiveTheme,
);
charts.onUpdate((host, entry) => setLiveCharts(host, entry));

function emit(): void {
  // The store first: a listener finds the components already up to date.
  batch(() => {
    // A copy: the store keeps (and later reconciles into) the objects it is given.
    const snapshot = state.snapshot === null ? null : structuredClone(state.snapshot);
    setLiveFleet("snapshot", snapshot === null ? null : reconcile(snapshot, { key: "name" }));
    setLiveFleet({ snapshotError: state.snapshotError, listenError: state.listenError, loading: state.loading });
  });
  for (const fn of [...listeners]) fn();
}

function accept(snapshot: FleetSnapshot): void {
  state.snapshot = newerSnapshot(state.snapshot, snapshot);
  state.snapshotError = null;
  state.loading = false;
  const names = new Set(state.snapshot.hosts.map((h) => h.name));
  charts.retain(names);
  for (const host of Object.keys(liveCharts)) if (!names.has(host)) setLiveCharts(host, undefined);
  emit();
  void refreshCapacity();
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
