// Showback in words and rows: a month's spend per team with its pools beneath and the
// team's idle base on its own line, and the months the picker offers. Pure (wording
// through i18n); the Costs view's showback card (views/costs/showback.tsx) shows them.

import type { Showback, ShowbackLine } from "./bindings";
import { t } from "./i18n";

/** One row of the showback table. */
export type ShowbackRow =
  | { kind: "team"; key: string; team: string; line: ShowbackLine }
  | { kind: "pool"; key: string; team: string; pool: string; line: ShowbackLine }
  | { kind: "unpriced"; key: string; team: string; pool: string; problem: string | null }
  | { kind: "idle"; key: string; team: string; line: ShowbackLine };

/** A team's name as shown: the pools with no team under "(no team)". */
export function teamName(team: string): string {
  return team === "" ? t("showback.noTeam") : team;
}

/**
 * The table's rows: each team's line, its pools beneath (an unpriced pool with its
 * problem), then its idle base as a line of its own when it has one.
 */
export function showbackRows(showback: Showback, problemText: (pool: Showback["pools"][number]) => string | null): ShowbackRow[] {
  const rows: ShowbackRow[] = [];
  for (const team of showback.teams) {
    rows.push({ kind: "team", key: `team:${team.team}`, team: team.team, line: team.spend });
    for (const pool of showback.pools.filter((p) => p.team === team.team)) {
      if (pool.spend) rows.push({ kind: "pool", key: `pool:${pool.pool}`, team: team.team, pool: pool.pool, line: pool.spend });
      else rows.push({ kind: "unpriced", key: `pool:${pool.pool}`, team: team.team, pool: pool.pool, problem: problemText(pool) });
    }
    if (team.spend.idle_base_fen !== 0) {
      rows.push({ kind: "idle", key: `idle:${team.team}`, team: team.team, line: idleLine(team.spend) });
    }
  }
  return rows;
}

/** A line holding only `line`'s idle base: the idle row's figures. */
export function idleLine(line: ShowbackLine): ShowbackLine {
  return {
    overlay_fen: 0,
    base_used_fen: 0,
    idle_base_fen: line.idle_base_fen,
    total_fen: line.idle_base_fen,
    gpu_hours: line.idle_base_gpu_hours,
    idle_base_gpu_hours: line.idle_base_gpu_hours,
  };
}

/** `month` (`2026-11`) and the `count - 1` months before it, newest first; [] for a bad name. */
export function monthsUpTo(month: string, count: number): string[] {
  const match = /^(\d{4})-(\d{2})$/.exec(month);
  if (!match) return [];
  let year = Number(match[1]);
  let m = Number(match[2]);
  if (m < 1 || m > 12) return [];
  const months: string[] = [];
  for (let i = 0; i < count; i++) {
    months.push(`${String(year).padStart(4, "0")}-${String(m).padStart(2, "0")}`);
    m -= 1;
    if (m === 0) {
      m = 12;
      year -= 1;
    }
  }
  return months;
}

/** The idle base's part of the total ("12%", "<1%" for a sliver); null when nothing was spent. */
export function idleShare(line: ShowbackLine): string | null {
  if (line.total_fen <= 0) return null;
  const pct = Math.round((line.idle_base_fen * 100) / line.total_fen);
  return pct === 0 && line.idle_base_fen > 0 ? "<1%" : `${pct}%`;
}
