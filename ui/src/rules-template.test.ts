import { describe, expect, it } from "vitest";
import type { RuleSet } from "./bindings";
import { formFromRules, newSchedule, rulesFromForm, type RulesFormValues } from "./rules";
import { applyQueueTemplate, parseQueueWait, queueWaitProblem } from "./rules-template";

const EMPTY: RuleSet = {
  pool: "train",
  limits: {
    min_gpus: 0,
    max_gpus: 16,
    step: { out_gpus: null, out_pct: null, in_gpus: null, in_pct: null },
    budget: { per_hour_fen: null, per_month_fen: null },
  },
  scale_in: { force: false, release_window_minutes: 5, deadband_gpus: 0, deadband_minutes: 0 },
  metrics: [],
  thresholds: [],
  targets: [],
  schedules: [],
};

/** The template's rows as the file would have them (keys left out). */
function built(values: RulesFormValues): RuleSet {
  const res = rulesFromForm(values, EMPTY);
  if (!res.ok) throw new Error(JSON.stringify(res.problems));
  return res.rules;
}

describe("applyQueueTemplate", () => {
  it("adds the two metrics and the two rules to an empty form", () => {
    const before = formFromRules(EMPTY);
    const after = applyQueueTemplate(before, 5, 8);
    expect(after).not.toBeNull();
    const rules = built(after!);
    expect(rules.metrics).toEqual([
      { name: "slurm_demand_gpus", stale_after_minutes: 2 },
      { name: "slurm_oldest_wait_minutes", stale_after_minutes: 2 },
    ]);
    expect(rules.targets).toEqual([
      {
        name: "size-to-queue",
        metric: { kind: "custom", name: "slurm_demand_gpus" },
        target: 1,
        tolerance: 0,
        scale_in_stabilization_minutes: 5,
        scale_out_sustain_minutes: 5,
        overload_gpus: null,
      },
    ]);
    expect(rules.thresholds).toEqual([
      {
        name: "queue-waited",
        metric: { kind: "custom", name: "slurm_oldest_wait_minutes" },
        comparison: "at_least",
        threshold: 5,
        for_minutes: 1,
        action: { kind: "add_gpus", gpus: 8 },
        cooldown_minutes: 5,
      },
    ]);
    // The form it was given is not changed.
    expect(before.metrics).toEqual([]);
    expect(before.targets).toEqual([]);
    expect(before.thresholds).toEqual([]);
  });

  it("uses N for the scale-out wait, the threshold and the cooldown", () => {
    const rules = built(applyQueueTemplate(formFromRules(EMPTY), 30, 4)!);
    expect(rules.targets[0]?.scale_out_sustain_minutes).toBe(30);
    expect(rules.thresholds[0]?.threshold).toBe(30);
    expect(rules.thresholds[0]?.cooldown_minutes).toBe(30);
    expect(rules.thresholds[0]?.for_minutes).toBe(1);
  });

  it("adds one GPU at once when the node's count is not known", () => {
    for (const gpus of [0, -2, 1.5, Number.NaN]) {
      const rules = built(applyQueueTemplate(formFromRules(EMPTY), 5, gpus)!);
      expect(rules.thresholds[0]?.action).toEqual({ kind: "add_gpus", gpus: 1 });
    }
  });

  it("replaces rows of the same names in place without duplicating them, keeping every other row and the limits", () => {
    const before = formFromRules({
      ...EMPTY,
      limits: { ...EMPTY.limits, min_gpus: 2, max_gpus: 32, budget: { per_hour_fen: 12_000, per_month_fen: null } },
      scale_in: { force: true, release_window_minutes: 7, deadband_gpus: 1, deadband_minutes: 10 },
      metrics: [
        { name: "queue_len", stale_after_minutes: 5 },
        { name: "slurm_demand_gpus", stale_after_minutes: 9 },
      ],
      thresholds: [
        {
          name: "queue-waited",
          metric: { kind: "gpu_util" },
          comparison: "above",
          threshold: 90,
          for_minutes: 3,
          action: { kind: "add_pct", pct: 50 },
          cooldown_minutes: 10,
        },
        {
          name: "hot",
          metric: { kind: "gpu_util" },
          comparison: "above",
          threshold: 95,
          for_minutes: 2,
          action: { kind: "add_gpus", gpus: 2 },
          cooldown_minutes: 5,
        },
      ],
      targets: [
        {
          name: "util-60",
          metric: { kind: "gpu_util" },
          target: 60,
          tolerance: 0.1,
          scale_in_stabilization_minutes: 5,
          scale_out_sustain_minutes: 0,
          overload_gpus: null,
        },
        {
          name: "size-to-queue",
          metric: { kind: "busy_gpus" },
          target: 90,
          tolerance: 0.1,
          scale_in_stabilization_minutes: 10,
          scale_out_sustain_minutes: 0,
          overload_gpus: 4,
        },
      ],
    });
    before.schedules = [newSchedule(1, "Asia/Shanghai")];
    const replacedMetricKey = before.metrics[1]!.key;
    const replacedThresholdKey = before.thresholds[0]!.key;

    const once = applyQueueTemplate(before, 10, 4)!;
    // Applied twice (as an operator trying another N would): still one row per name.
    const after = applyQueueTemplate(once, 10, 4)!;
    expect(after).toEqual(once);

    expect(after.metrics.map((row) => row.name)).toEqual(["queue_len", "slurm_demand_gpus", "slurm_oldest_wait_minutes"]);
    expect(after.metrics[1]).toEqual({ key: replacedMetricKey, name: "slurm_demand_gpus", stale_after_minutes: "2", prometheus: "", source: null });
    expect(after.thresholds.map((row) => row.name)).toEqual(["queue-waited", "hot"]);
    expect(after.thresholds[0]).toMatchObject({
      key: replacedThresholdKey,
      metric: "slurm_oldest_wait_minutes",
      op: "at_least",
      value: "10",
      action_kind: "add_gpus",
      action: "4",
    });
    expect(after.thresholds[1]).toEqual(before.thresholds[1]);
    expect(after.targets.map((row) => row.name)).toEqual(["util-60", "size-to-queue"]);
    expect(after.targets[0]).toEqual(before.targets[0]);
    expect(after.targets[1]).toMatchObject({ metric: "slurm_demand_gpus", target: "1", tolerance: "0", overload_gpus: "" });
    expect(after.schedules).toEqual(before.schedules);
    const rows = ["metrics", "thresholds", "targets", "schedules"];
    const rest = (values: RulesFormValues) => Object.entries(values).filter(([key]) => !rows.includes(key));
    expect(rest(after)).toEqual(rest(before));
    expect(after.min_gpus).toBe("2");
    expect(after.budget_per_hour).toBe("120");
    expect(after.force).toBe(true);
  });

  it("keeps a single row where the form had the same name twice", () => {
    const before = formFromRules({
      ...EMPTY,
      metrics: [
        { name: "slurm_oldest_wait_minutes", stale_after_minutes: 5 },
        { name: "other", stale_after_minutes: 5 },
        { name: "slurm_oldest_wait_minutes", stale_after_minutes: 7 },
      ],
    });
    const after = applyQueueTemplate(before, 5, 1)!;
    expect(after.metrics.map((row) => row.name)).toEqual(["slurm_oldest_wait_minutes", "other", "slurm_demand_gpus"]);
  });

  it("refuses N out of range", () => {
    const form = formFromRules(EMPTY);
    for (const n of [0, -1, 121, 2.5, Number.NaN]) expect(applyQueueTemplate(form, n, 8), String(n)).toBeNull();
    expect(applyQueueTemplate(form, 1, 8)).not.toBeNull();
    expect(applyQueueTemplate(form, 120, 8)).not.toBeNull();
  });
});

describe("the template's N as typed", () => {
  it("takes a whole number of minutes from 1 to 120", () => {
    expect(parseQueueWait("5")).toBe(5);
    expect(parseQueueWait(" 120 ")).toBe(120);
    expect(parseQueueWait("1")).toBe(1);
    expect(queueWaitProblem("5")).toBeNull();
  });

  it("says what is wrong with anything else", () => {
    for (const typed of ["", "0", "121", "2.5", "-3", "five", "1e2"]) {
      expect(parseQueueWait(typed), typed).toBeNull();
      expect(queueWaitProblem(typed), typed).toEqual({ key: "rules.tpl.waitRange", params: { min: 1, max: 120 } });
    }
  });
});
