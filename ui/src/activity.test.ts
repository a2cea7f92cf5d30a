import { afterEach, describe, expect, it } from "vitest";
import { ALL_KINDS, changeCellText, DEFAULT_FILTER, hasOutcome, isNoOp, noOpsText, summarize, type ActivityRow } from "./activity";
import type { ActivityEntry, Decision, WordedChangeReason as ChangeReason, WordedClamp as Clamp } from "./bindings";
import { unworded, type Unworded } from "./fixtures/worded";
import { setLocale } from "./i18n";
import { changeReasonText, ruleDecisionText } from "./reasons";

afterEach(() => setLocale("en"));

const MIN = 60_000;
const T0 = new Date(2026, 0, 5, 10, 2, 0).getTime();

function decision(current: number, desired: number, reason: Unworded<Decision["reason"]>, clamps: Unworded<Clamp>[] = []): Decision {
  const words = { words: { key: "unworded", args: [] } };
  return {
    at_ms: T0,
    current_gpus: current,
    rules: [],
    recommended_gpus: desired,
    clamps: clamps.map((c) => ({ ...c, ...words }) as Clamp),
    desired_gpus: desired,
    cost_delta_per_hour_fen: 0,
    reason: { ...reason, ...words } as Decision["reason"],
  };
}

const deadband: Clamp = unworded({ kind: "deadband", from_gpus: 5, to_gpus: 6, surplus_gpus: 1, deadband_gpus: 2, window_minutes: 10 } as const);
const heldByDeadband = decision(6, 6, { kind: "held", rule: "in-at-30", clamp: deadband });

let nextId = 1;
function entry(over: Partial<ActivityEntry> & { reason: ChangeReason }): ActivityEntry {
  return {
    id: nextId++,
    at_ms: T0,
    pool: "inference",
    actor: "rule",
    from: 6,
    to: 6,
    delta_per_hour_fen: 0,
    delta_per_month_fen: 0,
    results: [],
    outcome: "done",
    finished_at_ms: T0,
    ...over,
  };
}

const noop = (at_ms: number, to = 6, pool = "inference"): ActivityEntry =>
  entry({ at_ms, from: to, to, pool, reason: { kind: "rule_decision", decision: heldByDeadband, shadow: false } });

describe("no-op decisions", () => {
  it("are rule decisions that left the count where it was", () => {
    expect(isNoOp(noop(T0))).toBe(true);
    const moved = entry({ from: 2, to: 6, reason: { kind: "rule_decision", decision: decision(2, 6, { kind: "rule", rule: "out", from_gpus: 2, to_gpus: 6 }), shadow: false } });
    expect(isNoOp(moved)).toBe(false);
    expect(isNoOp(entry({ actor: "operator", reason: { kind: "settings_changed", min: 0, max: 8, range_moved: false } }))).toBe(false);
  });

  it("get no outcome word and no cost, and their count is not written as a move", () => {
    const e = noop(T0);
    expect(hasOutcome(e)).toBe(false);
    expect(changeCellText(e)).toBe("stays at 6");
    expect(changeCellText(e)).not.toContain("→");
    const moved = entry({ from: 2, to: 6, actor: "operator", reason: { kind: "slider" } });
    expect(hasOutcome(moved)).toBe(true);
    expect(changeCellText(moved)).toBe("2 → 6");
    expect(changeCellText(entry({ pool: "", actor: "operator", reason: { kind: "host_removed", host: "a" } }))).toBe("—");
  });
});

describe("summarize", () => {
  const log: ActivityEntry[] = [
    noop(T0 + 7 * MIN),
    noop(T0 + 5 * MIN),
    noop(T0 + 2 * MIN),
    noop(T0),
    entry({ actor: "operator", pool: "", reason: { kind: "host_added", host: "gpu-a", region: "cn-east" } }),
    noop(T0 - MIN),
    entry({ actor: "failover", from: 6, to: 6, reason: { kind: "failover", host: "gpu-a", gpus: 2, grace_s: 30 } }),
  ];

  it("makes consecutive no-ops at one count one row, keyed by the oldest, with its span", () => {
    const rows = summarize(log, ALL_KINDS);
    expect(rows.map((r) => r.kind)).toEqual(["noops", "entry", "entry", "entry"]);
    const run = rows[0] as Extract<ActivityRow, { kind: "noops" }>;
    expect(run.entries).toHaveLength(4);
    expect(run.key).toBe(`n${log[3]!.id}`);
    expect(run.first_ms).toBe(T0);
    expect(run.last_ms).toBe(T0 + 7 * MIN);
    expect(noOpsText(run)).toBe("stays at 6 GPUs: 4 decisions with no change, 10:02–10:09");
    // A lone no-op stays a row of its own.
    expect(rows[2]).toMatchObject({ kind: "entry", entry: { id: log[5]!.id } });
  });

  it("keeps the run's key when a newer no-op joins it", () => {
    const before = summarize(log.slice(1), ALL_KINDS)[0]!;
    const after = summarize(log, ALL_KINDS)[0]!;
    expect(after.key).toBe(before.key);
  });

  it("splits runs at another count or another pool", () => {
    const rows = summarize([noop(T0 + 2 * MIN, 6), noop(T0 + MIN, 6), noop(T0, 4), noop(T0 - MIN, 4, "batch")], ALL_KINDS);
    expect(rows.map((r) => r.kind)).toEqual(["noops", "entry", "entry"]);
  });

  it("filters by kind: no-ops hidden by default, the operator's and failover's on their boxes", () => {
    expect(summarize(log, DEFAULT_FILTER).map((r) => (r.kind === "entry" ? r.entry.actor : "run"))).toEqual(["operator", "failover"]);
    expect(summarize(log, { ...DEFAULT_FILTER, operator: false }).map((r) => r.kind === "entry" && r.entry.actor)).toEqual(["failover"]);
    expect(summarize(log, { ...DEFAULT_FILTER, automatic: false }).map((r) => r.kind === "entry" && r.entry.actor)).toEqual(["operator"]);
  });

  it("shows Slurm's power saving with failover and the enforcer, never as a no-op", () => {
    const parked = entry({ actor: "slurm", reason: { kind: "slurm", partition: "batch", nodes: "gpu1", gpus: 2, step: { step: "parked", until_ms: T0 } } });
    expect(isNoOp(parked)).toBe(false);
    expect(summarize([parked], DEFAULT_FILTER)).toHaveLength(1);
    expect(summarize([parked], { ...DEFAULT_FILTER, automatic: false })).toEqual([]);
    expect(changeCellText(parked)).toBe("stays at 6");
  });
});

describe("a rule decision in words", () => {
  it("says what was wanted and what was kept when a limit held it, never an arrow", () => {
    const text = ruleDecisionText(heldByDeadband, false);
    expect(text).toBe("in-at-30 wanted 5, kept 6: deadband (1 surplus over 10 min, 2 needed)");
    expect(text).not.toContain("→");
  });

  it("does not read a cooldown before a rule fired as a move", () => {
    const until = new Date(2026, 0, 5, 4, 39).getTime();
    const cooling: Clamp = unworded({ kind: "cooldown", rule: "festival-peak", from_gpus: 6, to_gpus: 2, until_ms: until } as const);
    const text = ruleDecisionText(decision(2, 2, { kind: "held", rule: "festival-peak", clamp: cooling }), false);
    expect(text).toBe("festival-peak wanted 6, kept 2: cooling down until 04:39");
  });

  it("names the rule and what it asked for once, the counts being in the Change cell", () => {
    const out = decision(2, 6, { kind: "rule", rule: "festival-peak", from_gpus: 2, to_gpus: 6 });
    expect(changeReasonText({ kind: "rule_decision", decision: out, shadow: false })).toBe("festival-peak asked for 6");
    const capped = {
      ...decision(2, 4, { kind: "rule", rule: "out", from_gpus: 2, to_gpus: 4 }, [{ kind: "step_cap", from_gpus: 8, to_gpus: 4, step_gpus: 2 }]),
      recommended_gpus: 8,
    };
    expect(ruleDecisionText(capped, false)).toBe("out asked for 8, limited to 4: the step cap of 2");
  });

  it("says in shadow mode that nothing changed", () => {
    const out = decision(2, 6, { kind: "rule", rule: "out", from_gpus: 2, to_gpus: 6 });
    expect(ruleDecisionText(out, true)).toBe("shadow mode, nothing changed: out asked for 6");
    const e = entry({ from: 2, to: 2, reason: { kind: "rule_decision", decision: out, shadow: true } });
    expect(changeCellText(e)).toBe("stays at 2 (rules would set 6)");
  });

  it("reads in Chinese with no English but the rule's name", () => {
    setLocale("zh-CN");
    const text = ruleDecisionText(heldByDeadband, false);
    expect(text).toBe("in-at-30 想要 5，保持 6：死区（10 分钟内多余 1 块，需 2 块）");
    expect(changeCellText(noop(T0))).toBe("保持 6");
  });
});
