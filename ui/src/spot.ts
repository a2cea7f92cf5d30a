// A pool's spot mix in words, and the pool form's side of it. Pure (wording through i18n);
// the Pool view's card, slider preview, spend and form show what these return.
//
// The mix (`SpotMix`, crates/ebb-wire/src/pools.rs): above the subscribed base, the first
// `on_demand_floor` GPUs are on demand, and `spot_pct` percent of the rest go on spot,
// rounded down; `max_price_fen` is the most a spot GPU-hour may cost (null: any price). The
// console splits every count (`PoolView.split`, `ScalePreview.split`, and the form's
// example: `preview_mix`) and checks the form's mix (`check_pool`); nothing here restates
// either.

import type { GpuSplit, MixExample, SpendView, SpotMix } from "./bindings";
import { formatCount, formatMoney } from "./costs";
import { t } from "./i18n";
import { yuanInput } from "./pool";

/** "2 base, 3 on demand, 3 spot". */
export function splitText(split: GpuSplit): string {
  return t("pool.spot.split", { base: formatCount(split.base), onDemand: formatCount(split.on_demand), spot: formatCount(split.spot) });
}

/** The mix in one line: "on-demand floor 2, 50% of the rest on spot, at most ¥8.00 per GPU-hour". */
export function mixText(mix: SpotMix): string {
  const floor = t("pool.spot.mixFloor", { floor: formatCount(mix.on_demand_floor), pct: mix.spot_pct });
  if (mix.max_price_fen === null) return t("pool.spot.mixAnyPrice", { mix: floor });
  return t("pool.spot.mixMaxPrice", { mix: floor, price: formatMoney(mix.max_price_fen) });
}

/** Whether a pool's card says anything of spot: it may take spot, or holds some. */
export function showsSpot(pool: { interruptible: boolean; spot_held: number; split: GpuSplit }): boolean {
  return pool.interruptible || pool.spot_held > 0 || pool.split.spot > 0;
}

/** What spot saves an hour, or null when spot has no price there (or saves nothing). */
export function spotSavingText(fen: number | null): string | null {
  if (fen === null || !(fen > 0)) return null;
  return t("pool.spot.saving", { money: formatMoney(fen) });
}

/**
 * Spot's part of a month's spend: "¥120.00 on spot, ¥80.00 saved"; null when the pool had no spot.
 * The saving is net (spot's reclaims and their on-demand replacements counted), so it may be
 * negative: then it reads as a loss, "¥120.00 on spot, ¥15.00 more than on demand", never as a
 * negative saving.
 */
export function spotSpendText(spend: Pick<SpendView, "spot_fen" | "spot_saved_fen">): string | null {
  const spot = spend.spot_fen ?? 0;
  const saved = spend.spot_saved_fen ?? 0;
  if (spot === 0 && saved === 0) return null;
  if (saved < 0) return t("spend.spot.loss", { spot: formatMoney(spot), more: formatMoney(-saved) });
  return t("spend.spot.text", { spot: formatMoney(spot), saved: formatMoney(saved) });
}

// ---------- the form ----------

/** The mix's fields as the form holds them; the max price is typed in yuan per GPU-hour and sent in fen. */
export type SpotFormValues = { on_demand_floor: string; spot_pct: string; max_price_fen: string };

export type SpotField = keyof SpotFormValues;

export const SPOT_FIELDS: readonly SpotField[] = ["on_demand_floor", "spot_pct", "max_price_fen"];

/** A stored mix as the form's text; a new pool's is empty (the console reads empty as its default mix). */
export function spotFormValues(mix: SpotMix | null): SpotFormValues {
  if (mix === null) return { on_demand_floor: "", spot_pct: "", max_price_fen: "" };
  return {
    on_demand_floor: String(mix.on_demand_floor),
    spot_pct: String(mix.spot_pct),
    max_price_fen: mix.max_price_fen === null ? "" : yuanInput(mix.max_price_fen),
  };
}

/** The form's example: "At max (8): 2 base, 3 on demand, 3 spot", from the console's split. */
export function mixExampleText(example: MixExample): string {
  return t("pool.spot.example", { max: formatCount(example.max), split: splitText(example.split) });
}
