import { afterEach, describe, expect, it } from "vitest";
import type { FieldPath, LintReport, RuleSet } from "./bindings";
import { setLocale } from "./i18n";
import {
  ageText,
  fieldId,
  formField,
  formFromRules,
  metricName,
  metricRef,
  newMetric,
  newSchedule,
  newThreshold,
  notesByField,
  parseLocalDateTime,
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

/** RULES with a schedule of each kind and a second custom metric. */
const SCHEDULED: RuleSet = {
  ...RULES,
  metrics: [...RULES.metrics, { name: "users", stale_after_minutes: 10 }],
  schedules: [
    {
      name: "evening",
      when: { kind: "cron", cron: "0 20 * * 1-5", duration_minutes: 240 },
      time_zone: "Asia/Shanghai",
      bound: "floor",
      gpus: 4,
    },
    {
      name: "festival-peak",
      when: { kind: "window", start: "2025-10-01T08:00:00", end: "2025-10-08T00:00:00" },
      time_zone: "UTC",
      bound: "exact",
      gpus: 8,
    },
  ],
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

  it("gives schedules of both kinds and custom metrics back as they were", () => {
    const values = formFromRules(SCHEDULED);
    expect(values.metrics.map(({ name, stale_after_minutes }) => [name, stale_after_minutes])).toEqual([
      ["queue_len", "2"],
      ["users", "10"],
    ]);
    expect(values.schedules[0]).toMatchObject({ kind: "cron", cron: "0 20 * * 1-5", duration_minutes: "240", start: "", bound: "floor", gpus: "4" });
    expect(values.schedules[1]).toMatchObject({ kind: "window", cron: "", start: "2025-10-01T08:00:00", end: "2025-10-08T00:00:00", bound: "exact" });
    expect(rulesFromForm(values, SCHEDULED)).toEqual({ ok: true, rules: SCHEDULED });
    // What the form holds wins over the base: rows removed are gone, not kept from the file.
    values.metrics.pop();
    values.schedules.shift();
    const back = rulesFromForm(values, SCHEDULED);
    expect(back.ok && back.rules.metrics.map((m) => m.name)).toEqual(["queue_len"]);
    expect(back.ok && back.rules.schedules.map((s) => s.name)).toEqual(["festival-peak"]);
  });

  it("keeps the disruption budget and quiet windows it has no inputs for", () => {
    const budgeted: RuleSet = {
      ...RULES,
      scale_in: {
        ...RULES.scale_in,
        budget_gpus: 2,
        budget_pct: 20,
        budget_window_minutes: 10,
        quiet: [{ cron: "0 9 * * 1-5", duration_minutes: 480, time_zone: "Asia/Shanghai" }],
      },
    };
    const values = formFromRules(budgeted);
    values.deadband_gpus = "3";
    const back = rulesFromForm(values, budgeted);
    expect(back).toEqual({ ok: true, rules: { ...budgeted, scale_in: { ...budgeted.scale_in, deadband_gpus: 3 } } });
  });

  it("keeps what was typed for the other kind, and writes only the chosen one", () => {
    const values = formFromRules(SCHEDULED);
    const row = values.schedules[0]!;
    row.kind = "window";
    row.start = "2025-12-31 20:00";
    row.end = "2026-01-01T02:00:00";
    const back = rulesFromForm(values, SCHEDULED);
    expect(back.ok && back.rules.schedules[0]!.when).toEqual({ kind: "window", start: "2025-12-31T20:00:00", end: "2026-01-01T02:00:00" });
    row.kind = "cron";
    const again = rulesFromForm(values, SCHEDULED);
    expect(again.ok && again.rules.schedules[0]!.when).toEqual({ kind: "cron", cron: "0 20 * * 1-5", duration_minutes: 240 });
  });

  it("starts new rows as something that lints", () => {
    const schedule = newSchedule(3, "Europe/Berlin");
    expect(schedule).toMatchObject({ name: "schedule-3", kind: "cron", cron: "0 20 * * *", duration_minutes: "240", time_zone: "Europe/Berlin", bound: "floor", gpus: "4" });
    expect(newSchedule(1).time_zone).not.toBe("");
    expect(newMetric(2)).toMatchObject({ name: "metric_2", stale_after_minutes: "5" });
    const values = formFromRules(RULES);
    values.schedules.push(schedule);
    values.metrics.push(newMetric(2));
    const back = rulesFromForm(values, RULES);
    expect(back.ok && back.rules.schedules).toEqual([
      { name: "schedule-3", when: { kind: "cron", cron: "0 20 * * *", duration_minutes: 240 }, time_zone: "Europe/Berlin", bound: "floor", gpus: 4 },
    ]);
    expect(back.ok && back.rules.metrics[1]).toEqual({ name: "metric_2", stale_after_minutes: 5 });
  });

  it("names a schedule's or metric's field that is not a number or a date-time as the rule file does", () => {
    const values = formFromRules(SCHEDULED);
    values.schedules[0]!.gpus = "four";
    values.schedules[0]!.duration_minutes = "4h";
    values.schedules[1]!.bound = "ceiling";
    values.schedules[1]!.gpus = "-2";
    values.schedules[1]!.start = "2025-02-30T08:00:00";
    values.schedules[1]!.end = "2025-10-08T00:00:00\nfloor = 99";
    values.metrics[1]!.stale_after_minutes = "";
    const back = rulesFromForm(values, SCHEDULED);
    expect(back.ok).toBe(false);
    if (back.ok) return;
    // Each under its own form field (a schedule's count at its gpus input).
    expect(Object.keys(back.problems).sort()).toEqual([
      "metric[1].stale_after_minutes",
      "schedule[0].duration_minutes",
      "schedule[0].gpus",
      "schedule[1].end",
      "schedule[1].gpus",
      "schedule[1].start",
    ]);
    expect(back.problems["schedule[1].start"]).toEqual({ key: "rules.form.datetime" });
    expect(back.problems["schedule[0].gpus"]).toEqual({ key: "rules.form.whole" });
    // A window's fields are not read for a cron schedule, nor a cron's for a window.
    const cron = formFromRules(SCHEDULED);
    cron.schedules[0]!.start = "soon";
    cron.schedules[1]!.duration_minutes = "long";
    expect(rulesFromForm(cron, SCHEDULED).ok).toBe(true);
  });

  it("reads local date-times as the file writes them", () => {
    expect(parseLocalDateTime("2025-10-01T08:00:00")).toBe("2025-10-01T08:00:00");
    expect(parseLocalDateTime(" 2025-10-01T08:00 ")).toBe("2025-10-01T08:00:00");
    expect(parseLocalDateTime("2024-02-29 23:59:59")).toBe("2024-02-29T23:59:59");
    expect(parseLocalDateTime("2025-02-29T00:00:00")).toBeNull();
    expect(parseLocalDateTime("2025-10-01T24:00:00")).toBeNull();
    expect(parseLocalDateTime("2025-10-01T08:00:00+08:00")).toBeNull();
    expect(parseLocalDateTime("2025-10-01")).toBeNull();
    expect(parseLocalDateTime("")).toBeNull();
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
  const at = (section: FieldPath["section"], row: number | null, key: string | null): FieldPath => ({ section, row, key });

  it("maps the place a problem names (read in Rust) to the form's field, or to none", () => {
    expect(formField(at("threshold", 0, "action"))).toBe("threshold[0].action");
    expect(formField(at("threshold", 3, null))).toBe("threshold[3].name");
    expect(formField(at("target", 1, "target"))).toBe("target[1].target");
    expect(formField(at("target", 1, "unknown"))).toBe("target[1].name");
    expect(formField(at("limits", null, null))).toBe("limits.max_gpus");
    expect(formField(at("limits", null, "min_gpus"))).toBe("limits.min_gpus");
    expect(formField(at("step", null, null))).toBe("limits.step.out_gpus");
    expect(formField(at("step", null, "in_pct"))).toBe("limits.step.in_pct");
    expect(formField(at("limits", null, "budget_per_hour"))).toBe("limits.budget_per_hour");
    expect(formField(at("scale_in", null, "deadband_minutes"))).toBe("scale_in.deadband_minutes");
    expect(formField(at("scale_in", null, null))).toBe("scale_in.release_window_minutes");
    expect(formField(at("scale_in", null, "budget_pct"))).toBeNull();
    expect(formField(at("scale_in", null, "budget_window_minutes"))).toBeNull();
    expect(formField(at("quiet", 0, "cron"))).toBeNull();
    expect(formField(at("quiet", null, null))).toBeNull();
    expect(formField(at("schedule", 0, "cron"))).toBe("schedule[0].cron");
    expect(formField(at("schedule", 2, "time_zone"))).toBe("schedule[2].time_zone");
    expect(formField(at("schedule", 1, "start"))).toBe("schedule[1].start");
    expect(formField(at("schedule", 0, "floor"))).toBe("schedule[0].gpus");
    expect(formField(at("schedule", 0, "ceiling"))).toBe("schedule[0].gpus");
    expect(formField(at("schedule", 0, "exact"))).toBe("schedule[0].gpus");
    expect(formField(at("schedule", 1, null))).toBe("schedule[1].name");
    expect(formField(at("metric", 0, "name"))).toBe("metric[0].name");
    expect(formField(at("metric", 1, "stale_after_minutes"))).toBe("metric[1].stale_after_minutes");
    expect(formField(at("metric", 1, null))).toBe("metric[1].name");
    expect(formField(at("other", null, null))).toBeNull();
    expect(formField(at("pool", null, null))).toBeNull();
    expect(fieldId("threshold[0].action")).toBe("rules-f-threshold-0-action");
    expect(fieldId("limits.step.out_gpus")).toBe("rules-f-limits-step-out_gpus");
    expect(fieldId("schedule[0].gpus")).toBe("rules-f-schedule-0-gpus");
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
          path: { section: "threshold", row: 0, key: "cooldown_minutes" },
          line: 12,
          problem: { kind: "cooldown_shorter_than_warmup", cooldown_minutes: 2, warmup_minutes: 5 },
        },
        {
          rule: "evening",
          field: "schedule[0].floor",
          path: { section: "schedule", row: 0, key: "floor" },
          line: 20,
          problem: { kind: "schedule_fights_limits", bound: "floor", gpus: 12, min_gpus: 0, max_gpus: 8 },
        },
        { rule: null, field: "pool", path: { section: "pool", row: null, key: null }, line: 1, problem: { kind: "over_budget", gpus: 8, budget_gpus: 4 } },
      ],
    };
    const notes = notesByField(report);
    expect([...notes.keys()]).toEqual(["threshold[0].cooldown_minutes", "schedule[0].gpus"]);
    expect(notes.get("threshold[0].cooldown_minutes")?.warnings).toHaveLength(1);
    expect(notes.get("schedule[0].gpus")?.warnings).toHaveLength(1);
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

describe("a metric read from Prometheus", () => {
  it("keeps its query and settings through the form, and a cleared query makes it pushed", () => {
    const source = { query: 'sum(up{pool="{pool}"})', timeout_s: 9, fallback: 4, fallback_after: 2 };
    const rules: RuleSet = { ...RULES, metrics: [{ name: "rps", stale_after_minutes: 3, prometheus: source }] };
    const values = formFromRules(rules);
    const row = values.metrics[0]!;
    expect(row.prometheus).toBe(source.query);
    const back = rulesFromForm(values, rules);
    expect(back.ok && back.rules.metrics[0]!.prometheus).toEqual(source);
    row.prometheus = "  ";
    const pushed = rulesFromForm(values, rules);
    expect(pushed.ok && "prometheus" in pushed.rules.metrics[0]!).toBe(false);
    row.prometheus = "max(x)";
    row.source = null;
    const fresh = rulesFromForm(values, rules);
    expect(fresh.ok && fresh.rules.metrics[0]!.prometheus).toEqual({ query: "max(x)", timeout_s: 5, fallback: null, fallback_after: 3 });
  });
});
