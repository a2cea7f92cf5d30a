import { describe, expect, it, vi } from "vitest";
import { createRoot } from "solid-js";

// The shell is mocked: its two change events sent by hand.
const shell = vi.hoisted(() => ({
  pools: null as ((event: { payload: { pools: string[] | null } }) => void) | null,
  activity: null as ((event: { payload: { newest: number } }) => void) | null,
}));
vi.mock("./bindings", () => ({
  events: {
    poolsChanged: {
      listen: async (fn: (event: { payload: { pools: string[] | null } }) => void) => {
        shell.pools = fn;
        return () => {};
      },
    },
    activityAppended: {
      listen: async (fn: (event: { payload: { newest: number } }) => void) => {
        shell.activity = fn;
        return () => {};
      },
    },
  },
}));

const { Live, liveView, poolChanged, activityAppended, useLive } = await import("./live");

/** A refresh that waits until released, counting its runs. */
function gated(): { run: () => Promise<void>; runs: () => number; inFlight: () => number; release: () => void } {
  let runs = 0;
  let inFlight = 0;
  let waiting: (() => void)[] = [];
  return {
    run: async () => {
      runs += 1;
      inFlight += 1;
      await new Promise<void>((resolve) => waiting.push(resolve));
      inFlight -= 1;
    },
    runs: () => runs,
    inFlight: () => inFlight,
    release: () => {
      const now = waiting;
      waiting = [];
      for (const resolve of now) resolve();
    },
  };
}

/** Lets every pending promise callback run. */
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

/** A trigger fired by hand, which says whether it is subscribed. */
function manual(): { trigger: (fire: () => void) => () => void; fire: () => void; subscribed: () => boolean } {
  let fire: (() => void) | null = null;
  return {
    trigger: (f) => {
      fire = f;
      return () => {
        fire = null;
      };
    },
    fire: () => fire?.(),
    subscribed: () => fire !== null,
  };
}

describe("a live view's refresh", () => {
  it("runs one at a time, and requests made while one runs make exactly one more", async () => {
    const refresh = gated();
    const live = new Live(refresh.run);
    const first = live.request();
    const during = [live.request(), live.request(), live.request()];
    expect(refresh.runs()).toBe(1);
    refresh.release();
    await first;
    await settle();
    expect(refresh.runs()).toBe(2);
    expect(refresh.inFlight()).toBe(1);
    // All three waited for the same second run.
    expect(during[0]).toBe(during[2]);
    refresh.release();
    await Promise.all(during);
    await settle();
    expect(refresh.runs()).toBe(2);
    expect(refresh.inFlight()).toBe(0);
  });

  it("follows its triggers only while it lives, and a burst of events is at most two refreshes", async () => {
    const refresh = gated();
    const news = manual();
    const live = new Live(refresh.run, [news.trigger]);
    const el = {} as HTMLElement;
    let disposed = false;
    let gone = false;
    const view = liveView({ el, dispose: () => (disposed = true) }, live, () => (gone = true));
    expect(news.subscribed()).toBe(false);
    view.mounted?.();
    expect(news.subscribed()).toBe(true);
    for (let i = 0; i < 10; i += 1) news.fire();
    refresh.release();
    await settle();
    refresh.release();
    await settle();
    expect(refresh.runs()).toBe(2);
    view.destroy?.();
    expect(news.subscribed()).toBe(false);
    expect(disposed && gone).toBe(true);
    news.fire();
    await live.request();
    expect(refresh.runs()).toBe(2);
  });

  it("in a component: refreshes on mount and lets go of the shell's events on cleanup", async () => {
    let runs = 0;
    let pool: string | null = "burst";
    const dispose = createRoot((dispose) => {
      useLive(async () => void (runs += 1), [poolChanged(() => pool), activityAppended()]);
      return dispose;
    });
    await settle();
    expect(runs).toBe(1);
    shell.pools?.({ payload: { pools: ["other"] } });
    await settle();
    expect(runs).toBe(1);
    shell.pools?.({ payload: { pools: ["burst", "other"] } });
    await settle();
    expect(runs).toBe(2);
    shell.pools?.({ payload: { pools: null } });
    await settle();
    expect(runs).toBe(3);
    pool = null;
    shell.pools?.({ payload: { pools: null } });
    shell.activity?.({ payload: { newest: 9 } });
    await settle();
    expect(runs).toBe(4);
    dispose();
    shell.activity?.({ payload: { newest: 10 } });
    shell.pools?.({ payload: { pools: null } });
    await settle();
    expect(runs).toBe(4);
  });
});
