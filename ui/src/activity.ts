// The Activity log in words and in rows: which entries a filter shows, runs of rule
// decisions that changed nothing summarized into one row, and the wording of a change
// that is unambiguous about whether the count moved ("2 → 6" only when it did; "stays
// at 6" with "wanted 5, kept 6: deadband" when a limit held it). Pure: tested in
// activity.test.ts.

import type { ActivityEntry } from "./bindings";
import { formatCount, gpus } from "./costs";
import { t } from "./i18n";
import { clockText } from "./reasons";

/** Which entries the log shows: by who made them, and whether no-op decisions show. */
export type ActivityFilter = {
  /** The operator's changes: the slider, the CLI, settings, hosts, budget, rules saved. */
  operator: boolean;
  /** Rule decisions that changed the count (or would have, in shadow mode). */
  rule: boolean;
  /** Failover, the enforcer and Slurm's power saving (a Slurm-led pool's nodes). */
  automatic: boolean;
  /** Rule decisions that left the count where it was. */
  noOps: boolean;
};

export const ALL_KINDS: ActivityFilter = { operator: true, rule: true, automatic: true, noOps: true };
/** What the log shows at first: everything but the decisions that changed nothing. */
export const DEFAULT_FILTER: ActivityFilter = { operator: true, rule: true, automatic: true, noOps: false };

/** A rule decision that left the count as it was (whatever it said about why). */
export function isNoOp(entry: Pick<ActivityEntry, "pool" | "from" | "to" | "reason">): boolean {
  return entry.pool !== "" && entry.reason.kind === "rule_decision" && entry.from === entry.to;
}

/** Whether `filter` shows `entry`. */
export function shows(entry: ActivityEntry, filter: ActivityFilter): boolean {
  if (isNoOp(entry)) return filter.noOps;
  switch (entry.actor) {
    case "operator":
    case "demo":
      return filter.operator;
    case "rule":
      return filter.rule;
    case "failover":
    case "enforcer":
    case "slurm":
      return filter.automatic;
    default:
      // An actor a newer console logged: shown, whatever is ticked.
      return true;
  }
}

/** One row of the log: an entry, or a run of no-op decisions at one count. */
export type ActivityRow =
  | { key: string; kind: "entry"; entry: ActivityEntry }
  | {
      key: string;
      kind: "noops";
      pool: string;
      /** The count the pool stayed at. */
      gpus: number;
      /** Newest first, as the log. */
      entries: ActivityEntry[];
      first_ms: number;
      last_ms: number;
    };

/**
 * The rows of a log (newest first) under `filter`: consecutive no-op decisions of one pool
 * at one count become one row (two or more; a lone one stays an entry). A run's key is its
 * oldest entry's, so a newer no-op joining it keeps the row.
 */
export function summarize(entries: readonly ActivityEntry[], filter: ActivityFilter): ActivityRow[] {
  const rows: ActivityRow[] = [];
  let run: ActivityEntry[] = [];
  const flush = (): void => {
    if (run.length === 1) {
      const only = run[0]!;
      rows.push({ key: `e${only.id}`, kind: "entry", entry: only });
    } else if (run.length > 1) {
      const oldest = run[run.length - 1]!;
      rows.push({
        key: `n${oldest.id}`,
        kind: "noops",
        pool: oldest.pool,
        gpus: oldest.to,
        entries: run,
        first_ms: oldest.at_ms,
        last_ms: run[0]!.at_ms,
      });
    }
    run = [];
  };
  for (const entry of entries) {
    if (!shows(entry, filter)) continue;
    if (isNoOp(entry)) {
      const head = run[0];
      if (head && (head.pool !== entry.pool || head.to !== entry.to)) flush();
      run.push(entry);
      continue;
    }
    flush();
    rows.push({ key: `e${entry.id}`, kind: "entry", entry });
  }
  flush();
  return rows;
}

/** "stays at 6 GPUs: 14 decisions with no change, 10:02–10:09". */
export function noOpsText(row: Extract<ActivityRow, { kind: "noops" }>): string {
  return t("activity.noops.summary", {
    gpus: gpus(row.gpus),
    count: formatCount(row.entries.length),
    from: clockText(row.first_ms),
    to: clockText(row.last_ms),
  });
}

/** The Change cell: "2 → 6" when the count moved, "stays at 6" when it did not, "—" console-wide. */
export function changeCellText(entry: Pick<ActivityEntry, "pool" | "from" | "to" | "reason">): string {
  if (entry.pool === "") return t("common.empty");
  if (entry.from !== entry.to) return t("activity.change", { from: formatCount(entry.from), to: formatCount(entry.to) });
  const reason = entry.reason;
  if (reason.kind === "rule_decision" && reason.shadow && reason.decision.desired_gpus !== reason.decision.current_gpus) {
    return t("activity.change.wouldBe", { n: formatCount(entry.to), to: formatCount(reason.decision.desired_gpus) });
  }
  return t("activity.change.stays", { n: formatCount(entry.to) });
}

/** Whether the entry gets an outcome word: a no-op decision changed nothing to be done. */
export function hasOutcome(entry: Pick<ActivityEntry, "pool" | "from" | "to" | "reason">): boolean {
  return !isNoOp(entry);
}
