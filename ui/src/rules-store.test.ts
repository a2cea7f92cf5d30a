import { afterEach, describe, expect, it } from "vitest";
import type { Decision } from "./bindings";
import { reasonOf, unworded } from "./fixtures/worded";
import {
  chooseTrace,
  DECISIONS_KEPT,
  decisionsOf,
  draftOf,
  dropDraft,
  keepDraft,
  keepTrace,
  noteDecision,
  resetRulesStore,
  traceOf,
  withDecision,
} from "./rules-store";
import { decisionText } from "./reasons";

afterEach(() => resetRulesStore());

function decision(at_ms: number, current: number, desired: number): Decision {
  return {
    at_ms,
    current_gpus: current,
    rules: [],
    recommended_gpus: desired,
    clamps: [],
    desired_gpus: desired,
    cost_delta_per_hour_fen: null,
    reason: desired === current ? reasonOf("steady") : unworded({ kind: "rule", rule: "out", from_gpus: current, to_gpus: desired } as const),
  };
}

describe("drafts", () => {
  it("keep an unsaved file per pool until it equals its baseline again", () => {
    keepDraft("a", "edited", "saved");
    keepDraft("b", "other", "saved-b");
    expect(draftOf("a")).toEqual({ source: "edited", baseline: "saved" });
    expect(draftOf("b")?.source).toBe("other");
    keepDraft("a", "saved", "saved");
    expect(draftOf("a")).toBeNull();
    dropDraft("b");
    expect(draftOf("b")).toBeNull();
  });
});

describe("traces", () => {
  it("stay loaded per pool, with whether the replay uses them", () => {
    const trace = { name: "t.csv", text: "minute,demand\n0,1\n", minutes: 1, sample: false };
    keepTrace("a", trace, true);
    expect(traceOf("a")).toEqual({ trace, chosen: true });
    chooseTrace("a", false);
    expect(traceOf("a")?.chosen).toBe(false);
    expect(traceOf("b")).toBeNull();
    chooseTrace("b", true);
    expect(traceOf("b")).toBeNull();
  });
});

describe("the decisions seen", () => {
  it("keep one entry for a run of the same decision, moving its last time on", () => {
    let history = withDecision([], decision(1_000, 2, 2));
    history = withDecision(history, decision(2_000, 2, 2));
    expect(history).toHaveLength(1);
    expect(history[0]!.decision.at_ms).toBe(1_000);
    expect(history[0]!.lastAt).toBe(2_000);
    history = withDecision(history, decision(3_000, 2, 4));
    expect(history.map((h) => h.decision.desired_gpus)).toEqual([4, 2]);
  });

  it("never list two lines that read alike: a clamp's time moving on is the same line, a decision seen before moves up", () => {
    const held = (at_ms: number, until_ms: number): Decision => ({
      ...decision(at_ms, 6, 6),
      recommended_gpus: 2,
      clamps: [unworded({ kind: "paid_unit_hold", from_gpus: 2, to_gpus: 6, next_release_ms: until_ms } as const)],
      reason: unworded({
        kind: "held",
        rule: "back-to-normal",
        clamp: unworded({ kind: "paid_unit_hold", from_gpus: 2, to_gpus: 6, next_release_ms: until_ms } as const),
      } as const),
    });
    // The hold's time in words is to the minute: 12:00:00 and 12:00:30 read alike.
    const noon = new Date(2026, 11, 6, 12, 0, 0).getTime();
    let history = withDecision([], held(1_000, noon));
    history = withDecision(history, decision(2_000, 6, 6));
    history = withDecision(history, held(3_000, noon + 30_000));
    history = withDecision(history, decision(4_000, 6, 6));
    history = withDecision(history, held(5_000, noon + 30_000));
    expect(history).toHaveLength(2);
    expect(history.map((h) => h.decision.reason.kind)).toEqual(["held", "steady"]);
    expect(history[0]!.decision.at_ms).toBe(5_000);
    const lines = history.map((h) => decisionText(h.decision));
    expect(new Set(lines).size).toBe(lines.length);
    expect(lines[0]).toContain("back-to-normal wanted 2, kept 6");
  });

  it("keep the newest few, newest first, and ignore an older one", () => {
    let history = withDecision([], decision(0, 1, 1));
    for (let i = 1; i <= 10; i += 1) history = withDecision(history, decision(i * 1_000, i, i + 1));
    expect(history).toHaveLength(DECISIONS_KEPT);
    expect(history[0]!.decision.at_ms).toBe(10_000);
    expect(withDecision(history, decision(500, 7, 9))).toEqual(history);
  });

  it("are kept per pool across calls", () => {
    noteDecision("a", decision(1_000, 1, 2));
    noteDecision("a", null);
    noteDecision("b", decision(1_000, 3, 3));
    expect(decisionsOf("a")).toHaveLength(1);
    expect(decisionsOf("b")[0]!.decision.current_gpus).toBe(3);
    expect(decisionsOf("c")).toEqual([]);
  });
});
