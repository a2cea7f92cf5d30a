// The rules form's template for a pool bound to a Slurm partition, "Size to the Slurm
// queue": one GPU per GPU the partition's jobs ask for or hold (a target rule on
// `slurm_demand_gpus`, which waits N minutes before it rents so that a shorter blip rents
// nothing), and a node's GPUs at once when a job has waited N minutes (a threshold rule on
// `slurm_oldest_wait_minutes`). Applying it is an edit of the form's values like any other:
// the rows it names are added or replaced by name, everything else stays. No DOM, so it is
// unit-tested in node.

import type { Phrase } from "./costs";
import { parseWhole, rowKey, type MetricRow, type RulesFormValues, type TargetRow, type ThresholdRow } from "./rules";

/** The metrics the console stores from the partition's queue, as the template uses them. */
export const QUEUE_DEMAND_METRIC = "slurm_demand_gpus";
export const QUEUE_WAIT_METRIC = "slurm_oldest_wait_minutes";
/** The rules the template writes, by the names it replaces. */
export const QUEUE_TARGET_RULE = "size-to-queue";
export const QUEUE_THRESHOLD_RULE = "queue-waited";

/** N, the minutes a job waits before the template's rules act at once. */
export const QUEUE_WAIT_MIN = 1;
export const QUEUE_WAIT_MAX = 120;
export const QUEUE_WAIT_DEFAULT = 5;

/** The console stores the queue each second: a value older than this means it stopped. */
const STALE_AFTER_MINUTES = 2;

function inRange(n: number): boolean {
  return Number.isInteger(n) && n >= QUEUE_WAIT_MIN && n <= QUEUE_WAIT_MAX;
}

/** N as typed, when it is a whole number of minutes in range; else null. */
export function parseQueueWait(value: string): number | null {
  const n = parseWhole(value);
  return n !== null && inRange(n) ? n : null;
}

/** What is wrong with N as typed, or null when it is fine. */
export function queueWaitProblem(value: string): Phrase | null {
  return parseQueueWait(value) === null
    ? { key: "rules.tpl.waitRange", params: { min: QUEUE_WAIT_MIN, max: QUEUE_WAIT_MAX } }
    : null;
}

/** A node's GPUs as the threshold's step: the partition's count, 1 when it is not known. */
function nodeGpus(gpusPerNode: number): number {
  return Number.isSafeInteger(gpusPerNode) && gpusPerNode > 0 ? gpusPerNode : 1;
}

/**
 * `rows` with `row` in place of the first row of its name (keeping that row's key, so the
 * form keeps its inputs) and without any other row of that name; `row` appended with a
 * new key when none has it.
 */
function putByName<R extends { key: number; name: string }>(rows: readonly R[], row: Omit<R, "key">): R[] {
  const out: R[] = [];
  let placed = false;
  for (const old of rows) {
    if (old.name.trim() !== row.name) {
      out.push({ ...old });
    } else if (!placed) {
      out.push({ ...row, key: old.key } as R);
      placed = true;
    }
  }
  if (!placed) out.push({ ...row, key: rowKey() } as R);
  return out;
}

/**
 * The form's values with the template applied for N minutes (`n`, 1 to 120) and a node of
 * `gpusPerNode` GPUs: the metrics `slurm_demand_gpus` and `slurm_oldest_wait_minutes`, the
 * target rule `size-to-queue` and the threshold rule `queue-waited`, each added or put in
 * place of the row of its name. The limits, scale-in, schedules and every other row stay.
 * Null (nothing applied) when `n` is out of range. `values` is not changed.
 */
export function applyQueueTemplate(values: RulesFormValues, n: number, gpusPerNode: number): RulesFormValues | null {
  if (!inRange(n)) return null;
  const minutes = String(n);
  const demand: Omit<MetricRow, "key"> = { name: QUEUE_DEMAND_METRIC, stale_after_minutes: String(STALE_AFTER_MINUTES), prometheus: "", source: null };
  const wait: Omit<MetricRow, "key"> = { name: QUEUE_WAIT_METRIC, stale_after_minutes: String(STALE_AFTER_MINUTES), prometheus: "", source: null };
  const target: Omit<TargetRow, "key"> = {
    name: QUEUE_TARGET_RULE,
    metric: QUEUE_DEMAND_METRIC,
    // One GPU per GPU asked for or held.
    target: "1",
    tolerance: "0",
    scale_in_stabilization_minutes: "5",
    // A queue blip shorter than N minutes rents nothing.
    scale_out_sustain_minutes: minutes,
    overload_gpus: "",
  };
  const threshold: Omit<ThresholdRow, "key"> = {
    name: QUEUE_THRESHOLD_RULE,
    metric: QUEUE_WAIT_METRIC,
    op: "at_least",
    value: minutes,
    for_minutes: "1",
    action_kind: "add_gpus",
    action: String(nodeGpus(gpusPerNode)),
    cooldown_minutes: minutes,
  };
  return {
    ...values,
    metrics: putByName(putByName(values.metrics, demand), wait),
    targets: putByName(values.targets, target),
    thresholds: putByName(values.thresholds, threshold),
    schedules: values.schedules.map((row) => ({ ...row })),
  };
}
