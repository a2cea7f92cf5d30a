// The structured reasons the shell sends (why a pool changed, why a host failed, why a
// slider move asks first, why a pool is not where it should be, where tokens are kept)
// in the operator's language. A reason Rust words (a rule's state, a clamp, a decision's
// reason, the spot changes: crates/ebb-wire/src/words.rs, which the notifications render
// too) carries its words, a phrase rendered here as it came; the rest are still worded
// here. The English wording matches the Rust `Display` of each, which logs and the CLI
// use. Each switch is exhaustive over the generated union, so a reason added in Rust is a
// type error here until it is worded.

import type {
  Decision,
  AgentErrorKind,
  BoundKind,
  Comparison,
  ConfirmationReason,
  HostProblem,
  LintProblem,
  NodeProblem,
  PoolNote,
  PriceProblem,
  ReleaseWarning,
  RulesMode,
  SkipReason,
  TokenStoreKind,
  AccessRole,
  AccessAction,
  WordedChangeReason,
  WordedClamp,
  WordedDecisionReason,
  WordedRuleStatus,
} from "./bindings";
import { formatCount, formatMoney, gpus as gpusText } from "./costs";
import { getLocale, t, type MessageKey } from "./i18n";
import { clockText, phraseText, ruleNumber } from "./phrase";

export { clockText, ruleNumber };

function list(items: readonly string[]): string {
  return items.join(t("common.listSeparator"));
}

function never(value: never): string {
  const tagged = value as { kind?: unknown; step?: unknown };
  return String(tagged.kind ?? tagged.step ?? value);
}

const ROLE_WORDS: Readonly<Record<AccessRole, MessageKey>> = {
  viewer: "access.role.viewer",
  operator: "access.role.operator",
  admin: "access.role.admin",
  enforcer: "access.role.enforcer",
};

const ACCESS_ACTION_WORDS: Readonly<Record<AccessAction, MessageKey>> = {
  scale: "access.action.scale",
  edit_rules: "access.action.edit_rules",
  push_metrics: "access.action.push_metrics",
  enable_rules: "access.action.enable_rules",
  hosts: "access.action.hosts",
  pools: "access.action.pools",
  catalog: "access.action.catalog",
  budget: "access.action.budget",
  teams: "access.action.teams",
  roles: "access.action.roles",
};

/** An Ebb role in words: "operator". */
export function roleText(role: AccessRole): string {
  return t(ROLE_WORDS[role]);
}

/** What a role may or may not do, in words: "scale pools". */
export function accessActionText(action: AccessAction): string {
  return t(ACCESS_ACTION_WORDS[action]);
}

/** One line of the activity log: why the pool changed. */
export function changeReasonText(reason: WordedChangeReason): string {
  switch (reason.kind) {
    case "created":
      return t("reason.change.created", { model: reason.model, regions: list(reason.regions), min: reason.min, max: reason.max });
    case "settings_changed":
      return reason.range_moved
        ? t("reason.change.settingsRange", { min: reason.min, max: reason.max })
        : t("reason.change.settings");
    case "deleted":
      return t("reason.change.deleted");
    case "release_now":
      return t("reason.change.releaseNow");
    case "slider":
      return t("reason.change.slider");
    case "cli":
      return t("reason.change.cli");
    case "failover":
      return t("reason.change.failover", { host: reason.host, gpus: gpusText(reason.gpus), grace: reason.grace_s });
    case "reclaimed":
    case "ready":
    case "spot_paused":
    case "spot_resumed":
      // Worded in Rust (the notifications say the spot ones too).
      return reason.words ? phraseText(reason.words) : reason.kind;
    case "host_back":
      return t(reason.leases === 1 ? "reason.change.hostBack.one" : "reason.change.hostBack", { host: reason.host, leases: reason.leases });
    case "upkeep":
      return t("reason.change.upkeep", { rented: reason.rented, released: reason.released });
    case "host_added":
      return t("reason.change.hostAdded", { host: reason.host, region: reason.region });
    case "host_removed":
      return t("reason.change.hostRemoved", { host: reason.host });
    case "host_forgotten":
      return t(reason.leases === 1 ? "reason.change.hostForgotten.one" : "reason.change.hostForgotten", { host: reason.host, leases: reason.leases });
    case "host_draining":
      return t("reason.change.hostDraining", { host: reason.host, gpus: gpusText(reason.gpus) });
    case "confirm_limits_changed":
      return t("reason.change.confirmLimits", { gpus: gpusText(reason.above_gpus), cost: formatMoney(reason.above_per_hour_fen) });
    case "budget_changed":
      return reason.budget_fen === null
        ? t("reason.change.budgetCleared")
        : t("reason.change.budgetSet", { budget: formatMoney(reason.budget_fen) });
    case "rules_saved": {
      const parts = [t("reason.change.rulesSaved", { version: reason.version, mode: rulesModeText(reason.mode) })];
      if (reason.added.length > 0) parts.push(t("reason.change.rulesAdded", { names: list(reason.added) }));
      if (reason.removed.length > 0) parts.push(t("reason.change.rulesRemoved", { names: list(reason.removed) }));
      if (reason.changed.length > 0) parts.push(t("reason.change.rulesChanged", { names: list(reason.changed) }));
      if (reason.warnings > 0) parts.push(t(reason.warnings === 1 ? "reason.change.rulesWarnings.one" : "reason.change.rulesWarnings", { warnings: reason.warnings }));
      return parts.join(t("reason.notesSeparator"));
    }
    case "rules_mode":
      return t("reason.change.rulesMode", { version: reason.version, mode: rulesModeText(reason.mode) });
    case "rule_decision":
      return ruleDecisionText(reason.decision, reason.shadow);
    case "budget_override":
      return t("reason.change.budgetOverride", { perHour: formatMoney(reason.per_hour_fen), cap: formatMoney(reason.cap_fen) });
    case "slurm":
      return slurmStepText(reason);
    case "team_changed":
      return reason.spend_per_month_fen === null
        ? t("reason.change.teamNoSpend", { team: reason.team })
        : t("reason.change.teamSpend", { team: reason.team, money: formatMoney(reason.spend_per_month_fen) });
    case "team_quota":
      return reason.gpus === null
        ? t("reason.change.teamQuotaCleared", { team: reason.team, model: reason.model })
        : t("reason.change.teamQuota", { team: reason.team, model: reason.model, gpus: gpusText(reason.gpus) });
    case "pool_team":
      return reason.team === ""
        ? t("reason.change.poolNoTeam", { pool: reason.pool })
        : t("reason.change.poolTeam", { pool: reason.pool, team: reason.team });
    case "role_granted":
      return t("reason.change.roleGranted", { user: reason.user, role: roleText(reason.role) });
    case "refused":
      return t("reason.change.refused", { action: accessActionText(reason.action), role: roleText(reason.needs) });
    case "quota_clamp":
      return t("reason.change.quotaClamp", {
        asked: gpusText(reason.asked),
        team: reason.team,
        quota: reason.quota_gpus,
        model: reason.model,
      });
    case "spend_quota_clamp":
      return t("reason.change.spendQuotaClamp", { asked: gpusText(reason.asked), team: reason.team, money: formatMoney(reason.per_month_fen) });
    case "note":
      // Rows written before reasons had a kind: their words, as stored.
      return reason.text;
    default:
      return never(reason);
  }
}

/**
 * What a Slurm-bound pool did to its nodes: "Slurm gpu: gpu[1-2] resumed (4 GPUs leased)".
 * The partition, the hostlist, job ids and a problem Slurm or an agent gave stay as they are.
 */
function slurmStepText(reason: Extract<WordedChangeReason, { kind: "slurm" }>): string {
  const where = { partition: reason.partition, nodes: reason.nodes };
  const step = reason.step;
  switch (step.step) {
    case "resumed":
      return t("reason.change.slurm.resumed", { ...where, gpus: gpusText(reason.gpus) });
    case "drained":
      return t("reason.change.slurm.drained", { ...where, gpus: gpusText(reason.gpus) });
    case "undrained":
      return t("reason.change.slurm.undrained", where);
    case "released":
      return t("reason.change.slurm.released", { ...where, gpus: gpusText(reason.gpus) });
    case "parked":
      return t("reason.change.slurm.parked", { ...where, gpus: gpusText(reason.gpus), time: clockText(step.until_ms) });
    case "requeued":
      return t(step.jobs.length === 1 ? "reason.change.slurm.requeued.one" : "reason.change.slurm.requeued", {
        ...where,
        jobs: formatCount(step.jobs.length),
      });
    case "cancelled":
      return t(step.jobs.length === 1 ? "reason.change.slurm.cancelled.one" : "reason.change.slurm.cancelled", {
        ...where,
        jobs: formatCount(step.jobs.length),
      });
    case "cannot_serve":
      return t("reason.change.slurm.cannotServe", { ...where, problem: nodeProblemText(step.problem) });
    case "returned":
      return t("reason.change.slurm.returned", { ...where, reason: step.slurm_reason });
    case "replaced":
      return t("reason.change.slurm.replaced", { ...where, reason: step.slurm_reason });
    case "unheld":
      return t(step.jobs.length === 1 ? "reason.change.slurm.unheld.one" : "reason.change.slurm.unheld", {
        ...where,
        jobs: formatCount(step.jobs.length),
      });
    default:
      return never(step);
  }
}

// Every kind an agent refuses with, worded; a kind added in Rust is a type error here until
// it is. `unknown` (a newer agent's kind) has no words of ours: its message is shown.
const AGENT_KINDS: Readonly<Record<Exclude<AgentErrorKind, "unknown">, MessageKey>> = {
  invalid_request: "reason.agent.invalid_request",
  malformed_json: "reason.agent.malformed_json",
  body_too_large: "reason.agent.body_too_large",
  unsupported_media_type: "reason.agent.unsupported_media_type",
  unauthorized: "reason.agent.unauthorized",
  forbidden: "reason.agent.forbidden",
  not_found: "reason.agent.not_found",
  method_not_allowed: "reason.agent.method_not_allowed",
  not_enough_free: "reason.agent.not_enough_free",
  gpu_not_free: "reason.agent.gpu_not_free",
  stale_term: "reason.agent.stale_term",
  idempotency_key_reused: "reason.agent.idempotency_key_reused",
  internal: "reason.agent.internal",
};

/** What an agent's refusal says: its kind in words, or its own message for a kind we do not know. */
export function agentRefusalText(kind: AgentErrorKind, message: string): string {
  return kind === "unknown" ? message : t(AGENT_KINDS[kind]);
}

/** Why a host could not be used, or a call to it failed. */
/** Why a Slurm node could not be leased, in the operator's language. */
export function nodeProblemText(problem: NodeProblem): string {
  switch (problem.kind) {
    case "host_not_registered":
      return t("reason.node.host_not_registered", { host: problem.host });
    case "host_silent":
      return t("reason.node.host_silent", { host: problem.host });
    case "no_such_gpu":
      return t("reason.node.no_such_gpu", { host: problem.host, index: String(problem.index) });
    case "gpu_leased":
      return t("reason.node.gpu_leased", { host: problem.host, index: String(problem.index) });
    case "gpu_unhealthy":
      return t("reason.node.gpu_unhealthy", { host: problem.host, index: String(problem.index) });
    case "refused":
      return hostProblemText(problem.problem);
    case "said":
      return problem.words;
  }
}

export function hostProblemText(problem: HostProblem): string {
  switch (problem.kind) {
    case "bad_url":
      return t("reason.host.bad_url", { url: problem.url, reason: problem.reason });
    case "dns":
      return t("reason.host.dns", { url: problem.url });
    case "refused":
      return t("reason.host.refused", { url: problem.url });
    case "timeout":
      return t("reason.host.timeout", { url: problem.url, ms: problem.timeout_ms });
    case "tls":
      return t("reason.host.tls", { url: problem.url, reason: problem.reason });
    case "connect":
      return t("reason.host.connect", { url: problem.url, reason: problem.reason });
    case "unauthorized":
      return t("reason.host.unauthorized", { url: problem.url });
    case "forbidden":
      return t("reason.host.forbidden", { url: problem.url });
    case "status":
      return t("reason.host.status", { url: problem.url, status: problem.status });
    case "refused_request": {
      // The agent's kind is stable and worded here; its message (English) only where the
      // kind is one this console does not know.
      const message = agentRefusalText(problem.agent_kind, problem.message);
      return t("reason.host.refused_request", { url: problem.url, status: problem.status, message });
    }
    case "decode":
      return t("reason.host.decode", { url: problem.url, reason: problem.reason });
    case "incompatible":
      return t("reason.host.incompatible", { url: problem.url, found: problem.found, expected: problem.expected });
    case "gpus_not_answering":
      return t("reason.host.gpus_not_answering", { gpus: gpusText(problem.gpus) });
    case "slow":
      return t("reason.host.slow", { ms: problem.latency_ms });
    default:
      return never(problem);
  }
}

/** Why a slider move asks for confirmation ("changes the pool by 3 GPUs (more than 2)"). */
export function confirmationText(reason: ConfirmationReason): string {
  switch (reason.kind) {
    case "gpus":
      return t("reason.confirm.gpus", { change: gpusText(reason.change), limit: reason.limit });
    case "cost_per_hour":
      return t("reason.confirm.cost", { delta: formatMoney(reason.delta_fen), limit: formatMoney(reason.limit_fen) });
    default:
      return never(reason);
  }
}

/** What a scale-in would stop ("2 of these 3 GPUs run jobs at 55–89%: they get SIGTERM with a 30 s grace"). */
export function releaseWarningText(warning: ReleaseWarning): string {
  switch (warning.kind) {
    case "busy_gpus": {
      const range =
        warning.min_util_pct === warning.max_util_pct ? `${warning.min_util_pct}%` : `${warning.min_util_pct}–${warning.max_util_pct}%`;
      const words = { busy: warning.busy, of: warning.of, range, grace: warning.grace_s };
      if (warning.of === 1) return t("reason.release.busy_one", words);
      if (warning.busy === warning.of) return t("reason.release.busy_all", words);
      return t("reason.release.busy_gpus", words);
    }
    default:
      return never(warning.kind);
  }
}

/** One reason a pool is not where it should be. */
export function poolNoteText(note: PoolNote): string {
  switch (note.kind) {
    case "not_enforced":
      return t("reason.note.not_enforced");
    case "short":
      return t("reason.note.short", { gpus: note.gpus, model: note.model, regions: list(note.regions) });
    case "host_failing":
      return t("reason.note.host_failing", { host: note.host, problem: hostProblemText(note.problem) });
    case "lost":
      return t("reason.note.lost", { gpus: gpusText(note.gpus) });
    case "held_to_unit_end":
      return t("reason.note.held", { gpus: gpusText(note.gpus) });
    case "spot_paused":
      return t("reason.note.spotPaused", { region: note.region, time: clockText(note.until_ms) });
    case "spot_not_taken":
      switch (note.why) {
        case "not_interruptible":
          return t("reason.note.spotNotTaken.notInterruptible", { gpus: gpusText(note.gpus) });
        case "paused":
          return t("reason.note.spotNotTaken.paused", { gpus: gpusText(note.gpus) });
        case "over_max_price":
          return t("reason.note.spotNotTaken.overMaxPrice", { gpus: gpusText(note.gpus) });
        default:
          return never(note.why);
      }
    default:
      return never(note);
  }
}

/** A pool's notes as one line ("…; …"), or null when it has none. */
export function poolNotesText(notes: readonly PoolNote[]): string | null {
  return notes.length === 0 ? null : notes.map(poolNoteText).join(t("reason.notesSeparator"));
}

/** Why a pool, its spend or a slider move could not be priced. */
export function priceProblemText(problem: PriceProblem): string {
  switch (problem.kind) {
    case "no_price":
      return t("reason.price.no_price", { model: problem.model, regions: list(problem.regions) });
    case "not_offered":
      return t("reason.price.not_offered", { model: problem.model, region: problem.region, field: problem.field });
    case "no_region":
      return t("reason.price.no_region");
    case "too_large":
      return t("reason.price.too_large");
    default:
      return never(problem);
  }
}

/** Why the comparison could not price a plan. */
export function skipReasonText(reason: SkipReason): string {
  switch (reason.kind) {
    case "not_interruptible":
      return t("costs.skip.notInterruptible");
    case "not_offered":
      return t("costs.skip.notOffered", { model: reason.model, region: reason.region, field: reason.field });
    default:
      return never(reason);
  }
}

/** The English detail a token store's words leave out outside English (the keychain's reason). */
export function tokenStoreDetail(store: TokenStoreKind): string | null {
  return store.kind === "no_keychain" && getLocale() !== "en" ? store.reason : null;
}

/** The agent's backend in words: "simulated GPUs", "NVML (real GPUs)"; another as it came. */
export function backendText(backend: string): string {
  switch (backend) {
    case "simulator":
      return t("hosts.backend.simulator");
    case "nvml":
      return t("hosts.backend.nvml");
    default:
      return backend;
  }
}

/** Where host tokens are kept, in words. */
export function tokenStoreText(store: TokenStoreKind): string {
  switch (store.kind) {
    case "keychain":
      return t("hosts.tokenStore.keychain");
    case "memory":
      return t("hosts.tokenStore.memory");
    case "file":
      return t("hosts.tokenStore.file", { path: store.path });
    case "no_keychain":
      // The keychain library's reason is English: outside English it is shown apart
      // (tokenStoreDetail), folded as other English detail is.
      return getLocale() === "en" ? t("hosts.tokenStore.noKeychain", { reason: store.reason }) : t("hosts.tokenStore.noKeychainShort");
    default:
      return never(store);
  }
}

// ---------- rules: modes, decisions, clamps, each rule's state, lint warnings ----------

const RULES_MODES: Readonly<Record<RulesMode, MessageKey>> = {
  enabled: "reason.rules.mode.enabled",
  disabled: "reason.rules.mode.disabled",
  shadow: "reason.rules.mode.shadow",
};

/** "enabled", "disabled", "shadow". */
export function rulesModeText(mode: RulesMode): string {
  return t(RULES_MODES[mode]);
}

const BOUNDS: Readonly<Record<BoundKind, MessageKey>> = {
  floor: "reason.rules.bound.floor",
  ceiling: "reason.rules.bound.ceiling",
  exact: "reason.rules.bound.exact",
};

/** A schedule's bound and count: "at least 4". */
function boundText(bound: BoundKind, gpus: number): string {
  return t(BOUNDS[bound], { gpus });
}

const COMPARISONS: Readonly<Record<Comparison, string>> = { above: ">", at_least: ">=", below: "<", at_most: "<=" };

/** The operator as a rule file writes it: ">=". */
export function comparisonSymbol(comparison: Comparison): string {
  return COMPARISONS[comparison];
}

/** One rule's state at a decision: "gpu_util >= 80 for 2 of 3 minutes" (Rust's words). */
export function ruleStatusText(status: WordedRuleStatus): string {
  return phraseText(status.words);
}

/** A clamp that changed the count: "step cap of 2: 2 → 4" (Rust's words). */
export function clampText(clamp: WordedClamp): string {
  return phraseText(clamp.words);
}

/** Why a decision is what it is: "out-at-80: 4 → 6", "no rule asks for a change" (Rust's words). */
export function decisionReasonText(reason: WordedDecisionReason): string {
  return phraseText(reason.words);
}

const FORCE_PAYS_AGAIN = {
  hour: "reason.rules.lint.forceReleasePaysAgain.hour",
  day: "reason.rules.lint.forceReleasePaysAgain.day",
  week: "reason.rules.lint.forceReleasePaysAgain.week",
} as const;

/** The paid unit a count of hours is, for the words that name it. */
function paidUnit(hours: number): "hour" | "day" | "week" {
  return hours >= 168 ? "week" : hours >= 24 ? "day" : "hour";
}

/** What a lint warning found: "the cooldown (3 min) is shorter than the warmup (5 min): …". */
export function lintProblemText(problem: LintProblem): string {
  switch (problem.kind) {
    case "flapping":
      return t("reason.rules.lint.flapping", {
        gpus: problem.at_gpus,
        from: ruleNumber(problem.from_value),
        after: ruleNumber(problem.after_value),
        other: problem.other_rule,
        threshold: ruleNumber(problem.other_threshold),
      });
    case "cooldown_shorter_than_warmup":
      return t("reason.rules.lint.cooldownShorterThanWarmup", { cooldown: problem.cooldown_minutes, warmup: problem.warmup_minutes });
    case "bands_overlap":
      return t("reason.rules.lint.bandsOverlap", {
        other: problem.other_rule,
        out: ruleNumber(problem.out_threshold),
        in: ruleNumber(problem.in_threshold),
      });
    case "unreachable":
      return t("reason.rules.lint.unreachable", {
        metric: problem.metric,
        op: comparisonSymbol(problem.comparison),
        threshold: ruleNumber(problem.threshold),
      });
    case "schedule_fights_limits":
      return t("reason.rules.lint.scheduleFightsLimits", {
        bound: boundText(problem.bound, problem.gpus),
        min: problem.min_gpus,
        max: problem.max_gpus,
      });
    case "over_budget":
      return t("reason.rules.lint.overBudget", { gpus: problem.gpus, budget: problem.budget_gpus });
    case "set_outside_limits":
      return t("reason.rules.lint.setOutsideLimits", { gpus: problem.gpus, min: problem.min_gpus, max: problem.max_gpus });
    case "target_unreachable":
      return t("reason.rules.lint.targetUnreachable", { peak: ruleNumber(problem.peak_value), needed: problem.needed_gpus, max: problem.max_gpus });
    case "force_release_pays_again":
      return t(FORCE_PAYS_AGAIN[paidUnit(problem.unit_hours)]);
    default:
      return never(problem);
  }
}

// ---------- a rule decision as the activity log and the pool chart word it ----------

/**
 * A clamp as the cause of a count, without its numbers (the sentence around it has them):
 * "deadband (1 surplus over 10 min, 2 needed)", "cooling down until 04:39". `rule` is the
 * rule the decision is about: its own cooldown does not name it twice.
 */
export function clampCause(clamp: WordedClamp, rule: string | null = null): string {
  switch (clamp.kind) {
    case "schedule":
      return t("activity.clamp.schedule", { schedule: clamp.schedule, bound: t(boundKey(clamp.bound), { gpus: clamp.to_gpus }) });
    case "min":
      return t("activity.clamp.min");
    case "max":
      return t("activity.clamp.max");
    case "step_cap":
      return t("activity.clamp.stepCap", { step: clamp.step_gpus });
    case "budget":
      return t("activity.clamp.budget");
    case "cooldown":
      return clamp.rule === rule
        ? t("activity.clamp.ownCooldown", { time: clockText(clamp.until_ms) })
        : t("activity.clamp.cooldown", { rule: clamp.rule, time: clockText(clamp.until_ms) });
    case "stabilization":
      return t("activity.clamp.stabilization", { rule: clamp.rule, window: clamp.window_minutes });
    case "paid_unit_hold":
      return t("activity.clamp.paidUnitHold", { time: clockText(clamp.next_release_ms) });
    case "deadband":
      return t("activity.clamp.deadband", { surplus: clamp.surplus_gpus, window: clamp.window_minutes, needed: clamp.deadband_gpus });
    case "disruption_budget":
      return t("activity.clamp.disruptionBudget", { allowance: clamp.allowance_gpus, window: clamp.window_minutes });
    case "quiet_window":
      return t("activity.clamp.quietWindow", { time: clockText(clamp.until_ms), busy: clamp.busy_gpus });
    default:
      return clampText(clamp);
  }
}

function boundKey(bound: "floor" | "ceiling" | "exact"): "reason.rules.bound.floor" | "reason.rules.bound.ceiling" | "reason.rules.bound.exact" {
  return bound === "floor" ? "reason.rules.bound.floor" : bound === "ceiling" ? "reason.rules.bound.ceiling" : "reason.rules.bound.exact";
}

/**
 * Why a rule decision is what it is, with no count repeated from the Change cell and no
 * arrow for a count that did not move: "out-at-80 asked for 6", "in-at-30 wanted 5, kept
 * 6: deadband (…)", "festival-peak wanted 6, kept 2: cooling down until 04:39".
 */
export function decisionText(decision: Decision): string {
  const reason = decision.reason;
  switch (reason.kind) {
    case "rule": {
      // The rules' own recommendation, before the clamps cut it to what was set.
      const wanted = decision.clamps.length > 0 ? decision.recommended_gpus : reason.to_gpus;
      if (decision.desired_gpus === wanted) {
        return t("activity.why.rule", { rule: reason.rule, wanted: formatCount(wanted) });
      }
      return t("activity.why.ruleLimited", {
        rule: reason.rule,
        wanted: formatCount(wanted),
        kept: formatCount(decision.desired_gpus),
        causes: decision.clamps.map((c) => clampCause(c, reason.rule)).join(t("reason.notesSeparator")),
      });
    }
    case "held":
      return t("activity.why.held", {
        rule: reason.rule,
        wanted: formatCount(reason.clamp.from_gpus),
        kept: formatCount(reason.clamp.to_gpus),
        cause: clampCause(reason.clamp, reason.rule),
      });
    case "bound":
      return t("activity.why.bound", { cause: clampCause(reason.clamp) });
    case "waiting":
    case "steady":
      return decisionReasonText(reason);
    default:
      return decisionReasonText(reason);
  }
}

/** A rule decision's reason as the log shows it; in shadow mode, says nothing changed. */
export function ruleDecisionText(decision: Decision, shadow: boolean): string {
  const text = decisionText(decision);
  return shadow ? t("activity.why.shadow", { text }) : text;
}
