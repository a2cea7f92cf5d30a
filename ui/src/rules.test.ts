import { afterEach, describe, expect, it } from "vitest";
import type { LintReport, RuleSet } from "./bindings";
import { setLocale } from "./i18n";
import {
  ageText,
  fieldId,
  formField,
  formFromRules,
  metricName,
  metricRef,
  newThreshold,
  notesByField,
  parseWhole,
  parseYuan,
  placeText,
  rulesFromForm,
  yuanText,
} from "./rules";

afterEach(() => setLocale("en"));

const RULES: RuleSet = {
  pool: "inference",
  limits: {
    min_gpus: 1,
    max_gpus: 8,
    step: { out_gpus: 4, out_pct: 100, in_gpus: null, in_pct: null },
    budget: { per_hour_fen: 12_000, per_month_fen: null },
  },
  scale_in: { force: false, release_window_minutes: 5, deadband_gpus: 1, deadband_minutes: 10 },
  metrics: [{ name: "queue_len", stale_after_minutes: 2 }],
  thresholds: [
    {
      name: "queue-high",
      metric: { kind: "custom", name: "queue_len" },
      comparison: "above",
      threshold: 10,
      for_minutes: 2,
      action: { kind: "add_pct", pct: 50 },
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
  ],
  schedules: [],
};

describe("the rules form", () => {
  it("reads a rule set into text fields and gives the same rule set back", () => {
    const values = formFromRules(RULES);
    expect(values.budget_per_hour).toBe("120");
    expect(values.in_gpus).toBe("");
    expect(values.thresholds[0]).toMatchObject({ metric: "queue_len", op: "above", action_kind: "add_pct", action: "50" });
    const back = rulesFromForm(values, RULES);
    expect(back).toEqual({ ok: true, rules: RULES });
  });

  it("names each field that is not a number as the rule file does, and leaves the rest to the linter", () => {
    const values = formFromRules(RULES);
    values.min_gpus = "one";
    values.budget_per_month = "9.999";
    values.thresholds[0]!.value = "";
    values.thresholds.push({ ...newThreshold(2), action_kind: "set", action: "2.5" });
    values.targets[0]!.overload_gpus = "-1";
    const back = rulesFromForm(values, RULES);
    expect(back.ok).toBe(false);
    if (back.ok) return;
    expect(Object.keys(back.problems).sort()).toEqual([
      "limits.budget_per_month",
      "limits.min_gpus",
      "target[0].overload_gpus",
      "threshold[0].value",
      "threshold[1].action",
    ]);
    expect(back.problems["limits.budget_per_month"]).toEqual({ key: "rules.form.yuan" });
    // Max below min is the linter's to say, not the form's.
    const swapped = formFromRules(RULES);
    swapped.max_gpus = "0";
    expect(rulesFromForm(swapped, RULES).ok).toBe(true);
  });

  it("reads metrics, money and counts", () => {
    expect(metricRef(" busy_gpus ")).toEqual({ kind: "busy_gpus" });
    expect(metricRef("users")).toEqual({ kind: "custom", name: "users" });
    expect(metricName({ kind: "custom", name: "users" })).toBe("users");
    expect(metricName({ kind: "mem_util" })).toBe("mem_util");
    expect(parseYuan("99.5")).toBe(9950);
    expect(parseYuan("120")).toBe(12_000);
    expect(parseYuan("0.07")).toBe(7);
    expect(parseYuan("1.234")).toBeNull();
    expect(parseYuan("-3")).toBeNull();
    expect(yuanText(9950)).toBe("99.50");
    expect(yuanText(null)).toBe("");
    expect(parseWhole("12")).toBe(12);
    expect(parseWhole("1.5")).toBeNull();
    expect(parseWhole("")).toBeNull();
  });
});

describe("where a lint problem goes", () => {
  it("maps the field a problem names to the form's field, or to none", () => {
    expect(formField("threshold[0].action")).toBe("threshold[0].action");
    expect(formField("threshold[3]")).toBe("threshold[3].name");
    expect(formField("target[1].target")).toBe("target[1].target");
    expect(formField("target[1].unknown")).toBe("target[1].name");
    expect(formField("limits")).toBe("limits.max_gpus");
    expect(formField("limits.min_gpus")).toBe("limits.min_gpus");
    expect(formField("limits.step")).toBe("limits.step.out_gpus");
    expect(formField("limits.step.in_pct")).toBe("limits.step.in_pct");
    expect(formField("limits.budget_per_hour")).toBe("limits.budget_per_hour");
    expect(formField("scale_in.deadband_minutes")).toBe("scale_in.deadband_minutes");
    expect(formField("scale_in")).toBe("scale_in.release_window_minutes");
    expect(formField("schedule[0].cron")).toBeNull();
    expect(formField("metric[0].name")).toBeNull();
    expect(formField("pool")).toBeNull();
    expect(fieldId("threshold[0].action")).toBe("rules-f-threshold-0-action");
    expect(fieldId("limits.step.out_gpus")).toBe("rules-f-limits-step-out_gpus");
  });

  it("groups errors and warnings by field", () => {
    const report: LintReport = {
      file: "inference.toml",
      valid: true,
      errors: [],
      warnings: [
        {
          rule: "out",
          field: "threshold[0].cooldown_minutes",
          line: 12,
          problem: { kind: "cooldown_shorter_than_warmup", cooldown_minutes: 2, warmup_minutes: 5 },
        },
        { rule: null, field: "schedule[0]", line: 20, problem: { kind: "over_budget", gpus: 8, budget_gpus: 4 } },
      ],
    };
    const notes = notesByField(report);
    expect([...notes.keys()]).toEqual(["threshold[0].cooldown_minutes"]);
    expect(notes.get("threshold[0].cooldown_minutes")?.warnings).toHaveLength(1);
    expect(notesByField(null).size).toBe(0);
  });

  it("says where in the file and how old, in both languages", () => {
    expect(placeText(12, "threshold[0].action")).toBe("line 12, threshold[0].action");
    expect(placeText(null, "pool")).toBe("pool");
    expect(ageText(1_000_000 - 12_000, 1_000_000)).toBe("12 s");
    expect(ageText(1_000_000 - 185_000, 1_000_000)).toBe("3 min");
    expect(ageText(null, 0)).toBe("—");
    setLocale("zh-CN");
    expect(placeText(12, "threshold[0].action")).toBe("第 12 行，threshold[0].action");
    expect(ageText(0, 7_200_000)).toBe("2 小时");
  });
});
