import { afterEach, describe, expect, it } from "vitest";
import { setLocale } from "./i18n";
import { fieldOf } from "./ipc";
import { POOL_FIELDS } from "./pool";
import { mixExampleText, mixText, showsSpot, SPOT_FIELDS, spotFormValues, spotSavingText, spotSpendText, splitText } from "./spot";

afterEach(() => setLocale("en"));

describe("the spot mix in words", () => {
  it("words a split, a mix, the saving and spot's spend, en and zh-CN", () => {
    expect(splitText({ base: 2, on_demand: 3, spot: 3 })).toBe("2 base, 3 on demand, 3 spot");
    expect(mixText({ on_demand_floor: 2, spot_pct: 50, max_price_fen: 800 })).toBe(
      "on-demand floor 2, 50% of the rest on spot, at most ¥8.00 per GPU-hour",
    );
    expect(mixText({ on_demand_floor: 0, spot_pct: 0, max_price_fen: null })).toBe("on-demand floor 0, 0% of the rest on spot, at any spot price");
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

});

describe("the mix in the pool form", () => {
  const stored = { on_demand_floor: 1, spot_pct: 60, max_price_fen: 1_250 };

  it("shows a stored mix with its max price in yuan; a new pool's fields start empty (the console's default)", () => {
    expect(spotFormValues(stored)).toEqual({ on_demand_floor: "1", spot_pct: "60", max_price_fen: "12.50" });
    expect(spotFormValues({ ...stored, max_price_fen: null })).toEqual({ on_demand_floor: "1", spot_pct: "60", max_price_fen: "" });
    expect(spotFormValues(null)).toEqual({ on_demand_floor: "", spot_pct: "", max_price_fen: "" });
  });

  it("words the console's example of the mix at max", () => {
    expect(mixExampleText({ max: 10, split: { base: 2, on_demand: 5, spot: 3 } })).toBe("At max (10): 2 base, 5 on demand, 3 spot.");
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
