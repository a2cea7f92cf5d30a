import { afterEach, describe, expect, it } from "vitest";
import type { ActivityEntry, Decision, PoolRules, WordedChangeReason as ChangeReason } from "./bindings";
import { unworded } from "./fixtures/worded";
import { setLocale } from "./i18n";
import { countSetter, heldText, latestDecisionText, phaseWords, rulesState, rulesStateText, setterText, sliderRulesNote } from "./pool-rules";

afterEach(() => setLocale("en"));

const T0 = new Date(2026, 0, 5, 10, 2, 0).getTime();

function entry(actor: ActivityEntry["actor"], from: number, to: number, reason: ChangeReason, id: number): ActivityEntry {
  return { id, at_ms: T0 + id, pool: "inference", actor, from, to, reason, delta_per_hour_fen: 0, delta_per_month_fen: 0, results: [], outcome: "done", finished_at_ms: null };
}

function rules(mode: PoolRules["mode"], last_decision: Decision | null = null): PoolRules {
  return {
    pool: "inference",
    version: 3,
    mode,
    source: "",
    rules: {} as PoolRules["rules"],
    updated_at_ms: T0,
    warnings: [],
    last_decision,
    metrics: [],
  };
}

const holdUntil = new Date(2026, 0, 5, 10, 45).getTime();
const held: Decision = {
  at_ms: T0,
  current_gpus: 6,
  rules: [],
  recommended_gpus: 2,
  clamps: [],
  desired_gpus: 6,
  cost_delta_per_hour_fen: 0,
  reason: unworded({
    kind: "held",
    rule: "in-at-30",
    clamp: unworded({ kind: "paid_unit_hold", from_gpus: 2, to_gpus: 6, next_release_ms: holdUntil } as const),
  } as const),
};

describe("who set the count", () => {
  const noop = (id: number): ActivityEntry => entry("rule", 6, 6, { kind: "rule_decision", decision: held, shadow: false }, id);
  it("is the newest entry that moved it, past the no-op decisions", () => {
    const log = [noop(5), noop(4), entry("rule", 2, 6, { kind: "rule_decision", decision: held, shadow: false }, 3), entry("operator", 0, 2, { kind: "slider" }, 2)];
    expect(countSetter(log)).toEqual({ actor: "rule", at_ms: T0 + 3, to: 6 });
    expect(countSetter([noop(1)])).toBeNull();
  });

  it("is named in the phase: only the operator's count is 'what you asked for'", () => {
    expect(phaseWords("converged", { actor: "operator", at_ms: T0, to: 2 })).toBe("Holding what you asked for");
    expect(phaseWords("converged", { actor: "rule", at_ms: T0, to: 6 })).toBe("Holding the count the rules set");
    expect(phaseWords("converged", null)).toBe("Holding what you asked for");
    expect(phaseWords("scaling_out", { actor: "rule", at_ms: T0, to: 6 })).toBe("Renting GPUs");
    expect(setterText({ actor: "rule", at_ms: T0, to: 6 }, T0)).toBe("6 GPUs, set by a rule at 10:02:00");
    expect(phaseWords("converged", { actor: "slurm", at_ms: T0, to: 4 })).toBe("Holding the count Slurm set");
    expect(setterText({ actor: "slurm", at_ms: T0, to: 4 }, T0)).toBe("4 GPUs, set by Slurm at 10:02:00");
    setLocale("zh-CN");
    expect(setterText({ actor: "slurm", at_ms: T0, to: 4 }, T0)).toBe("4 块 GPU，由 Slurm 于 10:02:00 设定");
  });
});

describe("the rules' state", () => {
  it("says the mode, and in shadow that the count stays", () => {
    expect(rulesState(null)).toBe("none");
    expect(rulesState(rules("enabled"))).toBe("enforce");
    expect(rulesState(rules("shadow"))).toBe("shadow");
    expect(rulesState(rules("disabled"))).toBe("off");
    expect(rulesStateText(rules("shadow"))).toBe("Rules in shadow (version 3): they log what they would do; the count stays where it is.");
    expect(sliderRulesNote(rules("enabled"))).toBe("Rules are enforced on this pool: they may move the count after you set it.");
    expect(sliderRulesNote(rules("disabled"))).toBeNull();
    expect(sliderRulesNote(null)).toBeNull();
  });

  it("words the latest decision and why GPUs are held", () => {
    const r = rules("enabled", held);
    expect(latestDecisionText(r, T0)).toBe(
      "Latest decision, 10:02:00: in-at-30 wanted 2, kept 6: held until its paid unit ends at 10:45",
    );
    expect(heldText(r, 0)).toBe("6 GPUs held until their paid unit ends at 10:45: the rules would go to 2.");
    expect(heldText(rules("enabled"), 1)).toBe("1 GPU held until their paid unit ends.");
    expect(heldText(null, 0)).toBeNull();
  });

  it("reads in Chinese", () => {
    setLocale("zh-CN");
    expect(rulesStateText(rules("shadow"))).toBe("规则处于影子模式（版本 3）：只记录将会执行的操作；数量保持不变。");
    expect(heldText(rules("enabled", held), 0)).toBe("6 块 GPU 保留至已付费时段于 10:45 结束：规则本会调整到 2。");
  });
});
