// How a view stays current: it refreshes when the shell says what it shows changed
// (`pools-changed`, `activity-appended`, `fleet-tick`), not on a timer. The one timer left
// is `every`, for what moves with time alone (a minute's rollup, money accruing, another
// program's queue); `grep setInterval` finds it here only.
//
// A view's refresh is coalesced: at most one runs at a time, and any number of requests
// while it runs make exactly one more run after it, so a burst of events is one or two
// refreshes, never a storm.

import { onCleanup, onMount } from "solid-js";
import { events } from "./bindings";
import type { View } from "./views/view";

/** Something that says when to refresh: calls `fire` on news, answers its unsubscribe. */
export type Trigger = (fire: () => void) => () => void;

/** A view's refresh, following its triggers once started (see the module comment). */
export class Live {
  private running: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  private offs: (() => void)[] | null = null;
  private stopped = false;

  constructor(
    private readonly run: () => Promise<void>,
    private readonly triggers: readonly Trigger[] = [],
  ) {}

  /**
   * Refreshes now, or once more after the refresh in flight; resolves when a refresh begun
   * after this request has ended. Does nothing once stopped.
   */
  request(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.queued !== null) return this.queued;
    if (this.running === null) return this.start();
    this.queued = this.running.then(() => {
      this.queued = null;
      return this.stopped ? undefined : this.start();
    });
    return this.queued;
  }

  /** Follows the triggers (once; again after `stop` it does not). */
  follow(): void {
    if (this.stopped || this.offs !== null) return;
    this.offs = this.triggers.map((trigger) => trigger(() => void this.request()));
  }

  /** No more refreshes: the triggers are let go; one in flight ends as it may. */
  stop(): void {
    this.stopped = true;
    for (const off of this.offs ?? []) off();
    this.offs = [];
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  private start(): Promise<void> {
    let ran: Promise<void>;
    try {
      ran = this.run();
    } catch (err) {
      ran = Promise.reject(err);
    }
    ran = ran.catch((err: unknown) => console.warn("a view's refresh failed", err));
    this.running = ran.finally(() => {
      this.running = null;
    });
    return this.running;
  }
}

/**
 * In a component: `run` now (on mount) and on each trigger until the component goes.
 * Answers the `Live`, whose `request` a write's handler calls to show its result.
 */
export function useLive(run: () => Promise<void>, triggers: readonly Trigger[]): Live {
  const live = new Live(run, triggers);
  onMount(() => {
    live.follow();
    void live.request();
  });
  onCleanup(() => live.stop());
  return live;
}

/**
 * A view (`mountView`'s element and dispose) following `live` from when it is in the
 * document until it is thrown away; `gone` runs first on destroy (the view's own flag).
 */
export function liveView(mounted: { el: HTMLElement; dispose: () => void }, live: Live | readonly Live[], gone?: () => void): View {
  const all = Array.isArray(live) ? live : [live as Live];
  return {
    el: mounted.el,
    mounted() {
      for (const one of all) one.follow();
    },
    destroy() {
      gone?.();
      for (const one of all) one.stop();
      mounted.dispose();
    },
  };
}

/** Time passing by itself: fires every `ms`. */
export function every(ms: number): Trigger {
  return (fire) => {
    const timer = window.setInterval(fire, ms);
    return () => window.clearInterval(timer);
  };
}

/** `trigger`, passed on only while `wanted()` says so. */
export function when(trigger: Trigger, wanted: () => boolean): Trigger {
  return (fire) => trigger(() => wanted() && fire());
}

/** `pools-changed` for the pools `concerns` accepts (`null`: any pool may have changed). */
export function poolsChanged(concerns: (pools: readonly string[] | null) => boolean = () => true): Trigger {
  return (fire) => subscribe(heard.pools, (pools) => concerns(pools) && fire());
}

/** `pools-changed` for one pool (the one `pool` names now; none: nothing). */
export function poolChanged(pool: () => string | null): Trigger {
  return poolsChanged((pools) => {
    const name = pool();
    return name !== null && (pools === null || pools.includes(name));
  });
}

/** `activity-appended`: the activity log grew. */
export function activityAppended(): Trigger {
  return (fire) => subscribe(heard.activity, () => fire());
}

// One listener per event for the whole UI, started with the first trigger: a view that
// subscribes later is in the set at once, with no window where an event is missed.
const heard = {
  pools: new Set<(pools: readonly string[] | null) => void>(),
  activity: new Set<(newest: number) => void>(),
};
let listening = false;

function subscribe<T>(set: Set<(value: T) => void>, fn: (value: T) => void): () => void {
  listen();
  set.add(fn);
  return () => set.delete(fn);
}

function listen(): void {
  if (listening) return;
  listening = true;
  const failed = (err: unknown): void => console.warn("cannot follow the shell's changes", err);
  events.poolsChanged.listen((event) => {
    for (const fn of [...heard.pools]) fn(event.payload.pools);
  }).catch(failed);
  events.activityAppended.listen((event) => {
    for (const fn of [...heard.activity]) fn(event.payload.newest);
  }).catch(failed);
}
