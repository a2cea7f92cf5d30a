// What the Pool view's Slurm card says of a pool bound to a Slurm partition: who decides
// (the mode), each node's and each job's state in words, waits in minutes, and the count of
// jobs the list leaves out. Slurm's own words (node names, `idle~`, job ids, its reasons)
// are shown as they are, beside ours. Pure: tested in slurm.test.ts.

import type { SlurmJobState, SlurmMode, SlurmNodeState, SlurmPoolView } from "./bindings";
import { formatCount } from "./costs";
import { t, type MessageKey } from "./i18n";

const MODES: Readonly<Record<SlurmMode, MessageKey>> = {
  ebb: "pool.slurm.mode.ebb",
  slurm: "pool.slurm.mode.slurm",
};

/** Who decides how many nodes are up: "Ebb-led: the pool's rules decide, on the queue". */
export function slurmModeText(mode: SlurmMode): string {
  return t(MODES[mode]);
}

const NODE_STATES: Readonly<Record<SlurmNodeState, MessageKey>> = {
  idle: "pool.slurm.node.idle",
  allocated: "pool.slurm.node.allocated",
  draining: "pool.slurm.node.draining",
  drained: "pool.slurm.node.drained",
  parked: "pool.slurm.node.parked",
  powered_down: "pool.slurm.node.powered_down",
  powering_up: "pool.slurm.node.powering_up",
  down: "pool.slurm.node.down",
  other: "pool.slurm.node.other",
};

/** A node's state in words ("Parked, lease kept"); Slurm's own word is shown beside it. */
export function nodeStateText(state: SlurmNodeState): string {
  return t(NODE_STATES[state]);
}

/** The tone a node's state is shown in (a CSS class): going away, broken, or plain. */
export function nodeStateTone(state: SlurmNodeState): "warn" | "bad" | "busy" | "off" | "" {
  switch (state) {
    case "draining":
    case "drained":
    case "parked":
      return "warn";
    case "down":
      return "bad";
    case "allocated":
    case "powering_up":
      return "busy";
    case "powered_down":
      return "off";
    case "idle":
    case "other":
      return "";
  }
}

const JOB_STATES: Readonly<Record<SlurmJobState, MessageKey>> = {
  pending: "pool.slurm.job.pending",
  running: "pool.slurm.job.running",
  completing: "pool.slurm.job.completing",
  configuring: "pool.slurm.job.configuring",
  other: "pool.slurm.job.other",
};

/** A job's state in words ("Pending"). */
export function jobStateText(state: SlurmJobState): string {
  return t(JOB_STATES[state]);
}

/** A wait in whole minutes: "12 min", "< 1 min" under a minute, "—" when there is none. */
export function minutesText(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds) || seconds < 0) return t("common.empty");
  if (seconds < 60) return t("pool.slurm.underAMinute");
  return t("pool.slurm.minutes", { n: formatCount(Math.floor(seconds / 60)) });
}

/** Whether a job waits for GPUs: "Yes" / "No". */
export function yesNoText(yes: boolean): string {
  return t(yes ? "pool.slurm.yes" : "pool.slurm.no");
}

const REASONS: Readonly<Record<string, MessageKey>> = {
  Resources: "pool.slurm.reason.resources",
  Priority: "pool.slurm.reason.priority",
};

/**
 * Slurm's reason for a node or a job as a cell: Slurm's "None" (and no reason) as "—", the
 * common pending reasons in words with Slurm's word after them, any other as Slurm has it.
 */
export function slurmReasonText(reason: string | null | undefined): string {
  const word = (reason ?? "").trim();
  if (word === "" || word === "None" || word === "(null)") return t("common.empty");
  const key = REASONS[word];
  return key ? t(key, { word }) : word;
}

/** Job ids (or any of Slurm's names) as one cell: "1041, 1042", "—" for none. */
export function namesText(names: readonly string[]): string {
  return names.length === 0 ? t("common.empty") : names.join(t("common.listSeparator"));
}

/** "and 12 more" when the view lists fewer jobs than the queue holds; null when it lists them all. */
export function moreJobsText(view: Pick<SlurmPoolView, "jobs" | "jobs_total">): string | null {
  const more = view.jobs_total - view.jobs.length;
  return more > 0 ? t("pool.slurm.jobs.more", { n: formatCount(more) }) : null;
}
