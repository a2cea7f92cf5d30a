import { afterEach, describe, expect, it } from "vitest";
import { setLocale } from "./i18n";
import { fieldOf } from "./ipc";
import { POOL_FIELDS } from "./pool";
import {
  checkSpotMix,
  mixExampleText,
  mixText,
  NO_MIX,
  showsSpot,
  SPOT_FIELDS,
  spotFormValues,
  spotSavingText,
  spotSpendText,
  splitAt,
  splitText,
} from "./spot";

afterEach(() => setLocale("en"));

describe("the spot mix in words", () => {
  it("words a split, a mix, the saving and spot's spend, en and zh-CN", () => {
    expect(splitText({ base: 2, on_demand: 3, spot: 3 })).toBe("2 base, 3 on demand, 3 spot");
    expect(mixText({ on_demand_floor: 2, spot_pct: 50, max_price_fen: 800 })).toBe(
      "on-demand floor 2, 50% of the rest on spot, at most ¥8.00 per GPU-hour",
    );
    expect(mixText(NO_MIX)).toBe("on-demand floor 0, 0% of the rest on spot, at any spot price");
    expect(spotSavingText(1_250)).toBe("spot saves ¥12.50 an hour against the same GPUs on demand");
    expect(spotSavingText(null)).toBeNull();
    expect(spotSavingText(0)).toBeNull();
    expect(spotSpendText({ spot_fen: 12_000, spot_saved_fen: 8_000 })).toBe("¥120.00 on spot, ¥80.00 saved");
    // The saving is net: spot that cost more than on demand reads as a loss, not a negative saving.
    expect(spotSpendText({ spot_fen: 12_000, spot_saved_fen: -1_500 })).toBe("¥120.00 on spot, ¥15.00 more than on demand");
    expect(spotSpendText({ spot_fen: 12_000, spot_saved_fen: 0 })).toBe("¥120.00 on spot, ¥0.00 saved");
    expect(spotSpendText({ spot_fen: 0, spot_saved_fen: 0 })).toBeNull();
    expect(spotSpendText({})).toBeNull();
    setLocale("zh-CN");
    expect(splitText({ base: 2, on_demand: 3, spot: 3 })).toBe("基础量 2，按需 3，抢占式 3");
    expect(spotSavingText(1_250)).toBe("与同样的按需 GPU 相比，抢占式每小时节省 ¥12.50");
    expect(spotSpendText({ spot_fen: 12_000, spot_saved_fen: 8_000 })).toBe("抢占式 ¥120.00，节省 ¥80.00");
    expect(spotSpendText({ spot_fen: 12_000, spot_saved_fen: -1_500 })).toBe("抢占式 ¥120.00，比按需多花 ¥15.00");
  });

  it("says spot on a card only for a pool that may take it or holds some", () => {
    const none = { base: 0, on_demand: 4, spot: 0 };
    expect(showsSpot({ interruptible: false, spot_held: 0, split: none })).toBe(false);
    expect(showsSpot({ interruptible: true, spot_held: 0, split: none })).toBe(true);
    expect(showsSpot({ interruptible: false, spot_held: 1, split: none })).toBe(true);
  });

  it("splits as the console does: base, then the floor, then the share of the rest rounded down", () => {
    const mix = { on_demand_floor: 2, spot_pct: 50 };
    expect(splitAt(10, 2, mix, true)).toEqual({ base: 2, on_demand: 5, spot: 3 });
    expect(splitAt(1, 2, mix, true)).toEqual({ base: 1, on_demand: 0, spot: 0 });
    expect(splitAt(5, 0, mix, true)).toEqual({ base: 0, on_demand: 4, spot: 1 });
    expect(splitAt(10, 2, mix, false)).toEqual({ base: 2, on_demand: 8, spot: 0 });
    expect(splitAt(4, 0, { on_demand_floor: 0, spot_pct: 100 }, true)).toEqual({ base: 0, on_demand: 0, spot: 4 });
  });
});

describe("the mix in the pool form", () => {
  const stored = { on_demand_floor: 1, spot_pct: 60, max_price_fen: 1_250 };

  it("shows a stored mix with its max price in yuan, and sends it back unchanged in fen", () => {
    const values = spotFormValues(stored);
    expect(values).toEqual({ on_demand_floor: "1", spot_pct: "60", max_price_fen: "12.50" });
    expect(checkSpotMix(values, { interruptible: true, max: 8, stored })).toEqual({ ok: true, mix: stored });
    expect(spotFormValues(undefined)).toEqual({ on_demand_floor: "0", spot_pct: "0", max_price_fen: "" });
    expect(checkSpotMix(spotFormValues({ ...stored, max_price_fen: null }), { interruptible: true, max: 8, stored })).toEqual({
      ok: true,
      mix: { ...stored, max_price_fen: null },
    });
    expect(checkSpotMix({ on_demand_floor: "0", spot_pct: "100", max_price_fen: "¥8" }, { interruptible: true, max: 8, stored })).toEqual({
      ok: true,
      mix: { on_demand_floor: 0, spot_pct: 100, max_price_fen: 800 },
    });
  });

  it("puts each problem at its field", () => {
    const bad = checkSpotMix({ on_demand_floor: "9", spot_pct: "101", max_price_fen: "0" }, { interruptible: true, max: 8, stored });
    expect(bad).toEqual({
      ok: false,
      problems: {
        on_demand_floor: { key: "pool.check.floorAboveMax", params: { floor: 9, max: 8 } },
        spot_pct: { key: "pool.check.spotPct" },
        max_price_fen: { key: "pool.check.maxPrice" },
      },
    });
    const typed = checkSpotMix({ on_demand_floor: "x", spot_pct: "-1", max_price_fen: "cheap" }, { interruptible: true, max: null, stored });
    expect(typed.ok).toBe(false);
    if (!typed.ok) expect(Object.keys(typed.problems).sort()).toEqual(["max_price_fen", "on_demand_floor", "spot_pct"]);
  });

  it("turns spot off for a pool that is not interruptible, keeping the floor and price", () => {
    expect(checkSpotMix(spotFormValues(stored), { interruptible: false, max: 8, stored })).toEqual({
      ok: true,
      mix: { on_demand_floor: 1, spot_pct: 0, max_price_fen: 1_250 },
    });
    // What cannot be fixed in a disabled field falls back to what was stored.
    expect(checkSpotMix({ on_demand_floor: "x", spot_pct: "x", max_price_fen: "x" }, { interruptible: false, max: 8, stored })).toEqual({
      ok: true,
      mix: { on_demand_floor: 1, spot_pct: 0, max_price_fen: 1_250 },
    });
  });

  it("gives an example at max while the numbers parse", () => {
    expect(mixExampleText({ on_demand_floor: "2", spot_pct: "50", max_price_fen: "" }, "10", "2")).toBe(
      "At max (10): 2 base, 5 on demand, 3 spot.",
    );
    expect(mixExampleText({ on_demand_floor: "2", spot_pct: "500", max_price_fen: "" }, "10", "2")).toBeNull();
    expect(mixExampleText({ on_demand_floor: "2", spot_pct: "50", max_price_fen: "" }, "", "2")).toBeNull();
  });

  it("maps the console's refusals of the mix to its inputs", () => {
    const fields = [...POOL_FIELDS, ...SPOT_FIELDS];
    const refusal = (field: string) => ({ kind: "invalid_input" as const, field, line: null, message: "x", problem: null });
    expect(fieldOf(refusal("spot_pct"), fields)).toBe("spot_pct");
    expect(fieldOf(refusal("on_demand_floor"), fields)).toBe("on_demand_floor");
    expect(fieldOf(refusal("max_price_fen"), fields)).toBe("max_price_fen");
    expect(fieldOf(refusal("spot.spot_pct"), fields)).toBeNull();
  });
});
