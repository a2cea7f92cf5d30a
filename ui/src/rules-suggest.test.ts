import type { Comparison, RuleSet, ThresholdRule } from "./bindings";
import { afterEach, describe, expect, it } from "vitest";
import type { SuggestNote } from "./bindings";
import { catalogs, setLocale } from "./i18n";
import { metricChoices, metricChoiceText } from "./rules";
import { diffCounts, lineDiff, sampleMetrics, sampleTraceCsv, sampleTraceShape, suggestAgainLabel, suggestNoteText } from "./rules-suggest";

afterEach(() => setLocale("en"));

describe("lineDiff", () => {
  it("pairs unchanged lines and a changed run line by line", () => {
    const rows = lineDiff("a\nb\nc\nd\n", "a\nB\nc\nd\ne\n");
    expect(rows.map((r) => r.kind)).toEqual(["same", "changed", "same", "same", "added"]);
    expect(rows[1]).toEqual({ kind: "changed", left: "b", right: "B", leftLine: 2, rightLine: 2 });
    expect(rows[4]).toEqual({ kind: "added", right: "e", rightLine: 5 });
    expect(diffCounts(rows)).toEqual({ added: 1, removed: 0, changed: 1 });
  });

  it("shows removed lines on the left alone", () => {
    const rows = lineDiff("[limits]\nmin_gpus = 1\n[[threshold]]\nname = \"out\"\n", "[limits]\nmin_gpus = 1\n");
    expect(rows.map((r) => r.kind)).toEqual(["same", "same", "removed", "removed"]);
    expect(diffCounts(rows)).toEqual({ added: 0, removed: 2, changed: 0 });
  });

  it("finds nothing between equal files, whatever their line endings", () => {
    const rows = lineDiff("x = 1\r\ny = 2\r\n", "x = 1\ny = 2\n");
    expect(diffCounts(rows)).toEqual({ added: 0, removed: 0, changed: 0 });
    expect(rows).toHaveLength(2);
  });

  it("keeps every line of both sides, in order", () => {
    const before = "a\nb\nc\nd\ne\nf";
    const after = "b\nx\nd\ny\nf\ng";
    const rows = lineDiff(before, after);
    const left = rows.flatMap((r) => (r.kind === "added" ? [] : [r.left]));
    const right = rows.flatMap((r) => (r.kind === "removed" ? [] : [r.right]));
    expect(left.join("\n")).toBe(before);
    expect(right.join("\n")).toBe(after);
  });
});

const NOTES: SuggestNote[] = [
  { kind: "trace", minutes: 2880, peak_gpus: 12 },
  { kind: "replayed", cost_fen: 123_456, oracle_cost_fen: 100_000, shortfall_pct: 0.25, max_shortfall_pct: 1, actions_per_day: 3.5, candidates: 41, within_margin: true },
  { kind: "replayed", cost_fen: 57_600, oracle_cost_fen: 38_400, shortfall_pct: 3.17, max_shortfall_pct: 1, actions_per_day: 4.4, candidates: 28, within_margin: false },
  { kind: "over_limit", shortfall_pct: 1.5, max_shortfall_pct: 1 },
  { kind: "target", target_pct: 94 },
  { kind: "target", target_pct: 100 },
  { kind: "stabilization", minutes: 30 },
  { kind: "scale_out_at_once", warmup_minutes: 5 },
  { kind: "scale_out_sustain", sustain_minutes: 3, overload_gpus: 2, unit: "hour" },
  { kind: "release_window", minutes: 30, unit: "day" },
  { kind: "release_window", minutes: 0, unit: "hour" },
  { kind: "deadband", gpus: 2, minutes: 30 },
  { kind: "limits", min_gpus: 1, max_gpus: 8 },
  { kind: "pre_scale", onset: "19:00", rise_gpus: 8, floor_gpus: 10, days_seen: 5, weekdays: [1, 5] },
  { kind: "pre_scale", onset: "08:30", rise_gpus: 4, floor_gpus: 6, days_seen: 3, weekdays: null },
  { kind: "pre_scale_left_out", onset: "19:00", rise_gpus: 8, days_seen: 2 },
  { kind: "kept_metrics", names: ["queue_len", "users"] },
  { kind: "limit_price", cost_fen: 770_000, oracle_cost_fen: 780_000, shortfall_pct: 3.15, max_shortfall_pct: 1, allow_pct: 6.4, queue: true },
  { kind: "stuck_jobs", gpu_minutes: 960, share_pct: 43.2 },
  { kind: "limit_price", cost_fen: 90_000, oracle_cost_fen: 100_000, shortfall_pct: 2.5, max_shortfall_pct: 1, allow_pct: 5, queue: false },
];

describe("suggestNoteText", () => {
  it("says a busy_gpus target as a percentage of each GPU, not a GPU count", () => {
    expect(suggestNoteText({ kind: "target", target_pct: 94 })).toContain("94% of each GPU");
    expect(suggestNoteText({ kind: "target", target_pct: 94 })).toContain("6% headroom");
    setLocale("zh-CN");
    expect(suggestNoteText({ kind: "target", target_pct: 94 })).toContain("每块 GPU 以 94% 计");
  });

  it("words every note with its numbers, in Chinese without English prose", () => {
    for (const note of NOTES) {
      setLocale("en");
      const en = suggestNoteText(note);
      expect(en, note.kind).not.toMatch(/\{\w+\}/);
      setLocale("zh-CN");
      const zh = suggestNoteText(note);
      expect(zh, note.kind).not.toMatch(/\{\w+\}/);
      // Letters left are identifiers and units only: metric names, UTC, GPU, the money sign.
      const words = zh.replace(/queue_len|users|UTC|GPU|¥/g, "").match(/[A-Za-z]{2,}/g);
      expect(words, `${note.kind}: ${zh}`).toBeNull();
    }
    setLocale("en");
    expect(suggestNoteText(NOTES[1]!)).toContain("1.23× the oracle's");
    expect(suggestNoteText(NOTES[1]!)).toContain("kept within half the limit");
    expect(suggestNoteText(NOTES[2]!)).toContain("none kept within half the limit, and these fell shortest");
    expect(suggestNoteText(NOTES[13]!)).toContain("Mon, Fri");
    expect(suggestNoteText(NOTES[14]!)).toContain("every day");
    expect(suggestNoteText(NOTES[16]!)).toContain("queue_len, users");
    // What the limit costs: its price beside the oracle's, what the shortfall is, the limit that allows it.
    expect(suggestNoteText(NOTES[17]!)).toContain("What the 1% limit costs");
    expect(suggestNoteText(NOTES[17]!)).toContain("0.99× the oracle's");
    expect(suggestNoteText(NOTES[17]!)).toContain("jobs waiting for their nodes");
    expect(suggestNoteText(NOTES[17]!)).toContain("a limit of 6.4%");
    expect(suggestNoteText(NOTES[19]!)).toContain("GPUs ordered for it");
    expect(suggestNoteText(NOTES[18]!)).toContain("960 GPU-minutes (43.2% of what the queue asked for)");
    expect(suggestNoteText(NOTES[10]!)).toContain("only as the hour it has paid for ends");
    // The button beside it names the same limit, worded the same.
    expect(suggestAgainLabel(6.4)).toBe("Suggest with a 6.4% limit");
  });
});

describe("the sample trace", () => {
  it("is a minute trace with a daily peak, sized to the pool", () => {
    const shape = sampleTraceShape(1, 8);
    expect(shape.base).toBeGreaterThanOrEqual(1);
    expect(shape.peak).toBeGreaterThan(shape.base);
    expect(shape.peak).toBeLessThanOrEqual(8);
    const csv = sampleTraceCsv(shape);
    const rows = csv.trim().split("\n");
    expect(rows[0]!.startsWith("# ")).toBe(true);
    expect(rows[1]).toBe("minute,demand");
    expect(rows).toHaveLength(2 + shape.days * 1440);
    const demand = rows.slice(2).map((row) => Number(row.split(",")[1]));
    expect(Math.max(...demand)).toBeGreaterThan(shape.peak * 0.9);
    expect(Math.min(...demand)).toBeLessThan(shape.base * 1.1);
    // Rows are minutes 0, 1, 2, … in order.
    expect(rows.slice(2, 5).map((row) => row.split(",")[0])).toEqual(["0", "1", "2"]);
  });

  it("carries a column for each custom metric the rules read, crossing their thresholds at the peak", () => {
    const shape = sampleTraceShape(0, 8);
    const rule = (name: string, metric: string, comparison: Comparison, threshold: number): ThresholdRule => ({
      name,
      metric: { kind: "custom", name: metric },
      comparison,
      threshold,
      for_minutes: 1,
      action: { kind: "set", gpus: 2 } as ThresholdRule["action"],
      cooldown_minutes: 0,
    });
    const rules = {
      thresholds: [rule("festival-peak", "users", "above", 100000), rule("back-to-normal", "users", "below", 50000)],
      targets: [
        {
          name: "per-job",
          metric: { kind: "custom", name: "queue" },
          target: 2,
          tolerance: 0,
          scale_in_stabilization_minutes: 0,
          scale_out_sustain_minutes: 0,
          overload_gpus: null,
        },
      ],
    } as unknown as RuleSet;
    const metrics = sampleMetrics(rules, shape);
    expect(metrics.map((metric) => metric.name)).toEqual(["queue", "users"]);
    const csv = sampleTraceCsv(shape, metrics).trim().split("\n");
    expect(csv[1]).toBe("minute,demand,queue,users");
    const users = csv.slice(2).map((row) => Number(row.split(",")[3]));
    expect(Math.max(...users)).toBeGreaterThan(100000);
    expect(Math.min(...users)).toBeLessThan(50000);
    // A target's metric is the target per GPU of demand (without the ripple).
    const queue = csv.slice(2).map((row) => Number(row.split(",")[2]));
    expect(Math.max(...queue)).toBeCloseTo(shape.peak * 2, 5);
    expect(Math.min(...queue)).toBeCloseTo(shape.base * 2, 5);
  });

  it("has a comment in the UI's language: no English prose in zh-CN", () => {
    setLocale("zh-CN");
    const comment = sampleTraceCsv(sampleTraceShape(0, 4)).split("\n")[0]!;
    expect(comment).toMatch(/[\u4e00-\u9fff]/);
    expect(comment.replace(/GPU/g, "").match(/[A-Za-z]{2,}/g)).toBeNull();
  });
});

describe("the metric select", () => {
  it("offers the built-in metrics, the declared ones and an undeclared one the file names", () => {
    expect(metricChoices([], "gpu_util").map((c) => c.name)).toEqual(["gpu_util", "mem_util", "busy_gpus"]);
    const choices = metricChoices([" queue_len ", "", "gpu_util"], "typo");
    expect(choices.map((c) => [c.name, c.kind])).toEqual([
      ["gpu_util", "builtin"],
      ["mem_util", "builtin"],
      ["busy_gpus", "builtin"],
      ["queue_len", "custom"],
      ["typo", "unknown"],
    ]);
    expect(metricChoiceText({ name: "busy_gpus", kind: "builtin" })).toBe(catalogs.en["rules.f.metricWord.busy_gpus"]);
    expect(metricChoiceText({ name: "typo", kind: "unknown" })).toContain("typo");
  });
});
