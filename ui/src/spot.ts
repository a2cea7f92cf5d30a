// A pool's spot mix in words, and the pool form's side of it. Pure (wording through i18n);
// the Pool view's card, slider preview, spend and form show what these return.
//
// The mix (`SpotMix`, crates/ebb-wire/src/pools.rs): above the subscribed base, the first
// `on_demand_floor` GPUs are on demand, and `spot_pct` percent of the rest go on spot,
// rounded down; `max_price_fen` is the most a spot GPU-hour may cost (null: any price). The
// console splits the counts it sends (`PoolView.split`, `ScalePreview.split`); `splitAt` is
// only the form's example of what a mix being typed would do at the pool's max.

import type { GpuSplit, SpendView, SpotMix } from "./bindings";
import { formatCount, formatMoney } from "./costs";
import { t } from "./i18n";
import { parseYuan, yuanInput, type Phrase } from "./pool";

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

/** The split of `desired` GPUs under a mix (the form's example; the console splits the real counts). */
export function splitAt(desired: number, baseGpus: number, mix: Pick<SpotMix, "on_demand_floor" | "spot_pct">, spotAllowed: boolean): GpuSplit {
  const base = Math.min(desired, baseGpus);
  const rest = desired - base;
  const floor = Math.min(rest, mix.on_demand_floor);
  const share = rest - floor;
  const spot = spotAllowed ? Math.floor((share * Math.min(mix.spot_pct, 100)) / 100) : 0;
  return { base, on_demand: floor + share - spot, spot };
}

// ---------- the form ----------

/** The mix's fields as the form holds them; the max price is typed in yuan per GPU-hour and sent in fen. */
export type SpotFormValues = { on_demand_floor: string; spot_pct: string; max_price_fen: string };

export type SpotField = keyof SpotFormValues;

export const SPOT_FIELDS: readonly SpotField[] = ["on_demand_floor", "spot_pct", "max_price_fen"];

/** The default mix (the Rust `SpotMix::default()`): no floor, no spot, any price. */
export const NO_MIX: SpotMix = { on_demand_floor: 0, spot_pct: 0, max_price_fen: null };

/** A stored mix as the form's text. */
export function spotFormValues(mix: SpotMix | undefined): SpotFormValues {
  const m = mix ?? NO_MIX;
  return {
    on_demand_floor: String(m.on_demand_floor),
    spot_pct: String(m.spot_pct),
    max_price_fen: m.max_price_fen === null ? "" : yuanInput(m.max_price_fen),
  };
}

function whole(text: string): number | null {
  const trimmed = text.trim();
  if (!/^\d+$/.test(trimmed)) return null;
  const n = Number(trimmed);
  return Number.isSafeInteger(n) && n <= 0xffff_ffff ? n : null;
}

/**
 * The mix the form sends, or its problems (a mirror of the store's checks; the console stays
 * the judge). The fields are the pool's only while it is interruptible: otherwise they are
 * disabled, spot is off (a share of 0) and the floor and max price stay as `stored` had them
 * unless what was typed is valid.
 */
export function checkSpotMix(
  values: SpotFormValues,
  opts: { interruptible: boolean; max: number | null; stored: SpotMix },
): { ok: true; mix: SpotMix } | { ok: false; problems: Partial<Record<SpotField, Phrase>> } {
  const floor = whole(values.on_demand_floor);
  const pct = whole(values.spot_pct);
  const priceText = values.max_price_fen.trim();
  const price = priceText === "" ? null : parseYuan(priceText);
  const priceOk = priceText === "" || (price !== null && price > 0);
  if (!opts.interruptible) {
    return {
      ok: true,
      mix: {
        on_demand_floor: floor ?? opts.stored.on_demand_floor,
        spot_pct: 0,
        max_price_fen: priceOk ? price : opts.stored.max_price_fen,
      },
    };
  }
  const problems: Partial<Record<SpotField, Phrase>> = {};
  if (floor === null) problems.on_demand_floor = { key: "pool.check.whole" };
  else if (opts.max !== null && floor > opts.max) problems.on_demand_floor = { key: "pool.check.floorAboveMax", params: { floor, max: opts.max } };
  if (pct === null || pct > 100) problems.spot_pct = { key: "pool.check.spotPct" };
  if (!priceOk) problems.max_price_fen = { key: "pool.check.maxPrice" };
  if (floor === null || pct === null || Object.keys(problems).length > 0) return { ok: false, problems };
  return { ok: true, mix: { on_demand_floor: floor, spot_pct: pct, max_price_fen: price } };
}

/** The form's example: what the typed mix does at the pool's max; null until the numbers parse. */
export function mixExampleText(values: SpotFormValues, max: string, base: string): string | null {
  const m = whole(max);
  const b = whole(base);
  const floor = whole(values.on_demand_floor);
  const pct = whole(values.spot_pct);
  if (m === null || b === null || floor === null || pct === null || pct > 100) return null;
  return t("pool.spot.example", { max: formatCount(m), split: splitText(splitAt(m, b, { on_demand_floor: floor, spot_pct: pct }, true)) });
}
