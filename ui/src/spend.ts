// Spend across the pools in words: where the month stands against the budget, each pool's
// share, and since when its base is counted. Pure (wording through i18n); the Costs view's
// spend card (views/costs/spend.tsx) shows them.

import type { PoolSpend, SpendSummary } from "./bindings";
import { formatMoney } from "./costs";
import { t } from "./i18n";
import { formatDateTime } from "./pool";

/** The first instant (UTC ms) of a month named `2026-12`; null for anything else. */
export function monthStartMs(month: string): number | null {
  const match = /^(\d{4})-(\d{2})$/.exec(month);
  if (!match) return null;
  const m = Number(match[2]);
  if (m < 1 || m > 12) return null;
  return Date.UTC(Number(match[1]), m - 1, 1);
}

/** Where the month stands against the budget, in one sentence. */
export function budgetText(summary: SpendSummary): string {
  const budget = summary.budget_fen;
  if (budget === null) return t("spend.budget.none");
  const params = { budget: formatMoney(budget), projected: formatMoney(summary.projected_month_fen), spent: formatMoney(summary.month_to_date_fen) };
  switch (summary.budget_state) {
    case "no_budget":
      return t("spend.budget.none");
    case "within":
      return t("spend.budget.within", { ...params, pct: budgetPct(summary.projected_month_fen, budget) });
    case "projected_over":
      return t("spend.budget.projectedOver", { ...params, over: formatMoney(summary.projected_month_fen - budget) });
    case "over":
      return t("spend.budget.over", { ...params, over: formatMoney(summary.month_to_date_fen - budget) });
    default:
      return never(summary.budget_state);
  }
}

function never(value: never): string {
  return String(value);
}

/** `part` as a whole percentage of `whole` ("62%"); "—" without a whole. */
export function budgetPct(part: number, whole: number): string {
  if (!(whole > 0) || !Number.isFinite(part)) return t("common.empty");
  return `${Math.round((part * 100) / whole)}%`;
}

/** How far a bar of `part` out of `whole` reaches, 0 to 100 (a bar never overflows its track). */
export function meterPct(part: number, whole: number): number {
  if (!(whole > 0) || !Number.isFinite(part) || part <= 0) return 0;
  return Math.min(100, (part * 100) / whole);
}

/**
 * Since when a pool's base is counted this month: "whole month" for a pool older than the
 * month, the date of its creation for one made in it (paid pro rata from then), "—" for no
 * base or no price.
 */
export function baseFromText(row: PoolSpend, month: string): string {
  const spend = row.spend;
  if (spend === null || row.base_gpus === 0) return t("common.empty");
  const start = monthStartMs(month);
  if (start !== null && spend.base_from_ms <= start) return t("spend.base.wholeMonth");
  return t("spend.base.from", { when: formatDateTime(spend.base_from_ms) });
}

/** A pool's share of the month to date across all pools ("40%"); "—" when nothing is spent. */
export function shareText(row: PoolSpend, summary: SpendSummary): string {
  if (row.spend === null || summary.month_to_date_fen <= 0) return t("common.empty");
  return budgetPct(row.spend.month_to_date_fen, summary.month_to_date_fen);
}
