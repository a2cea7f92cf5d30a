import { describe, expect, it, vi } from "vitest";
import type { FleetSnapshot, HostStatus } from "./bindings";

// The shell is mocked: the first snapshot, then ticks sent by hand.
const shell = vi.hoisted(() => ({
  first: null as FleetSnapshot | null,
  tick: null as ((event: { payload: FleetSnapshot }) => void) | null,
}));
vi.mock("./bindings", () => ({
  commands: {
    fleetSnapshot: async () => shell.first,
    utilizationChart: async () => ({ status: "ok", data: "<svg/>" }),
    fleetCapacity: async () => ({ status: "ok", data: { currency: "CNY", models: [], prices: [], leases: [] } }),
  },
  events: {
    fleetTick: {
      listen: async (fn: (event: { payload: FleetSnapshot }) => void) => {
        shell.tick = fn;
        return () => {};
      },
    },
  },
}));

const { fleet, fleetState, onFleetChange, startFleet } = await import("./fleet-store");

function host(name: string, util: number | null, region = "r1"): HostStatus {
  return { name, url: `http://${name}`, region, health: "online", gpu_count: 2, models: ["A100"], mean_util_pct: util, last_error: null, gpus: [] };
}

describe("the fleet store", () => {
  it("updates each host in place across ticks, keyed by name", async () => {
    shell.first = { tick: 1, hosts: [host("a", 10), host("b", 20)] };
    let changes = 0;
    onFleetChange(() => (changes += 1));
    await startFleet();
    const a = fleet.snapshot?.hosts[0];
    const b = fleet.snapshot?.hosts[1];
    expect(a?.mean_util_pct).toBe(10);

    shell.tick?.({ payload: { tick: 2, hosts: [host("a", 55), host("b", 20)] } });
    expect(fleet.snapshot?.tick).toBe(2);
    // The same objects, with the new values: a component keyed on a host keeps its elements.
    expect(fleet.snapshot?.hosts[0]).toBe(a);
    expect(fleet.snapshot?.hosts[1]).toBe(b);
    expect(a?.mean_util_pct).toBe(55);

    // A host added before the others: each of them is still its own object.
    shell.tick?.({ payload: { tick: 3, hosts: [host("0", null), host("a", 1), host("b", 25)] } });
    expect(fleet.snapshot?.hosts.map((x) => x.name)).toEqual(["0", "a", "b"]);
    expect(fleet.snapshot?.hosts[1]).toBe(a);
    expect(fleet.snapshot?.hosts[2]).toBe(b);
    expect(b?.mean_util_pct).toBe(25);

    // One removed: the survivor too.
    shell.tick?.({ payload: { tick: 4, hosts: [host("b", 30)] } });
    expect(fleet.snapshot?.hosts[0]).toBe(b);
    expect(b?.mean_util_pct).toBe(30);
    expect(changes).toBe(4);
  });

  it("keeps the plain state for plain code, and drops an older snapshot", () => {
    shell.tick?.({ payload: { tick: 2, hosts: [] } });
    expect(fleetState().snapshot?.tick).toBe(4);
    expect(fleet.snapshot?.tick).toBe(4);
    expect(fleet.snapshot?.hosts.length).toBe(1);
  });
});
