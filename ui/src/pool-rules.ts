// What the Pool view says of a pool's rules: their mode as a state ("rules enforced",
// "rules in shadow: …", "no rules"), the latest decision and its clamps in words, who set
// the count the pool holds (the latest activity entry that moved it: the operator, a rule,
// failover), and why GPUs are kept (a paid-unit hold, with the time it ends). Pure: tested
// in pool-rules.test.ts.

import type { ActivityEntry, Actor, Decision, PoolPhase, PoolRules, RulesMode, WordedClamp as Clamp } from "./bindings";
import { gpus } from "./costs";
import { t, type MessageKey } from "./i18n";
import { formatWhen, phaseText } from "./pool";
import { clockText, ruleDecisionText } from "./reasons";

/** Who set the count the pool holds, and when: the newest entry of the pool that moved it. */
export type CountSetter = { actor: Actor; at_ms: number; to: number };

/** The newest entry (the log is newest first) that moved the pool's desired count. */
export function countSetter(entries: readonly ActivityEntry[]): CountSetter | null {
  const moved = entries.find((e) => e.pool !== "" && e.from !== e.to && e.reason.kind !== "deleted");
  return moved ? { actor: moved.actor, at_ms: moved.at_ms, to: moved.to } : null;
}

const MODE_STATES: Readonly<Record<RulesMode, MessageKey>> = {
  enabled: "pool.rules.state.enabled",
  shadow: "pool.rules.state.shadow",
  disabled: "pool.rules.state.disabled",
};

/** The rules' mode as a data attribute and a state: "enforce", "shadow", "off", or "none". */
export type RulesState = "enforce" | "shadow" | "off" | "none";

export function rulesState(rules: PoolRules | null): RulesState {
  if (!rules) return "none";
  switch (rules.mode) {
    case "enabled":
      return "enforce";
    case "shadow":
      return "shadow";
    case "disabled":
      return "off";
  }
}

/** "Rules enforced (version 3): they set this pool's count and may move it after you do." */
export function rulesStateText(rules: PoolRules | null): string {
  if (!rules) return t("pool.rules.state.none");
  return t(MODE_STATES[rules.mode], { version: rules.version });
}

/** The note by the slider: enforced rules may move the count chosen there. */
export function sliderRulesNote(rules: PoolRules | null): string | null {
  if (!rules) return null;
  switch (rules.mode) {
    case "enabled":
      return t("pool.rules.sliderNote.enabled");
    case "shadow":
      return t("pool.rules.sliderNote.shadow");
    case "disabled":
      return null;
  }
}

/** "10:02: out-at-80 asked for 6" (in shadow mode: "… nothing changed …"). */
export function latestDecisionText(rules: PoolRules, now: number): string | null {
  const decision = rules.last_decision;
  if (!decision) return null;
  return t("pool.rules.latest", { time: formatWhen(decision.at_ms, now), text: ruleDecisionText(decision, rules.mode === "shadow") });
}

/** The paid-unit hold among a decision's clamps (or its held reason), if any. */
export function paidUnitHold(decision: Decision | null): Extract<Clamp, { kind: "paid_unit_hold" }> | null {
  if (!decision) return null;
  const clamps: Clamp[] = [...decision.clamps];
  if (decision.reason.kind === "held" || decision.reason.kind === "bound") clamps.push(decision.reason.clamp);
  for (const clamp of clamps) if (clamp.kind === "paid_unit_hold") return clamp;
  return null;
}

/**
 * Why GPUs are kept: "4 GPUs held until their paid unit ends at 10:45: the rules would go
 * to 2". From the latest decision's paid-unit hold; without one, the pool's count of GPUs
 * kept to their unit's end with no time (the pool view does not carry it).
 */
export function heldText(rules: PoolRules | null, heldToUnitEnd: number): string | null {
  const hold = paidUnitHold(rules?.last_decision ?? null);
  if (hold && hold.to_gpus > hold.from_gpus) {
    return t("pool.rules.heldPaid", { gpus: gpus(hold.to_gpus), time: clockText(hold.next_release_ms), wanted: hold.from_gpus });
  }
  if (heldToUnitEnd > 0) return t("pool.rules.heldUnit", { gpus: gpus(heldToUnitEnd) });
  return null;
}

const SETTERS: Readonly<Record<Actor, MessageKey>> = {
  operator: "pool.setBy.operator",
  rule: "pool.setBy.rule",
  failover: "pool.setBy.failover",
  enforcer: "pool.setBy.enforcer",
  demo: "pool.setBy.demo",
  slurm: "pool.setBy.slurm",
};

/** "6 GPUs, set by a rule at 10:02". */
export function setterText(setter: CountSetter, now: number): string {
  return t(SETTERS[setter.actor], { gpus: gpus(setter.to), time: formatWhen(setter.at_ms, now) });
}

/**
 * The pool's phase in words, naming who set the count it holds: "Holding what you asked
 * for" only when the operator set it; "Holding the count the rules set" when a rule did.
 */
export function phaseWords(phase: PoolPhase, setter: CountSetter | null): string {
  if (phase !== "converged" || setter === null) return phaseText(phase);
  switch (setter.actor) {
    case "operator":
    case "demo":
      return phaseText(phase);
    case "rule":
      return t("pool.phase.convergedRule");
    case "failover":
    case "enforcer":
      return t("pool.phase.convergedAuto");
    case "slurm":
      return t("pool.phase.convergedSlurm");
  }
}
