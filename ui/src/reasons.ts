// The structured reasons the shell sends (why a pool changed, why a host failed, why a
// slider move asks first, why a pool is not where it should be, where tokens are kept)
// in the operator's language. The English wording matches the Rust `Display` of each,
// which logs and the CLI use. Each switch is exhaustive over the generated union, so a
// reason added in Rust is a type error here until it is worded.

import type { ChangeReason, ConfirmationReason, HostProblem, PoolNote, ReleaseWarning, SkipReason, TokenStoreKind } from "./bindings";
import { formatMoney } from "./costs";
import { t, type MessageKey } from "./i18n";

function list(items: readonly string[]): string {
  return items.join(t("common.listSeparator"));
}

function never(value: never): string {
  return String((value as { kind?: unknown }).kind ?? value);
}

/** One line of the activity log: why the pool changed. */
export function changeReasonText(reason: ChangeReason): string {
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
      return t("reason.change.failover", { host: reason.host, gpus: reason.gpus, grace: reason.grace_s });
    case "host_back":
      return t("reason.change.hostBack", { host: reason.host, leases: reason.leases });
    case "host_added":
      return t("reason.change.hostAdded", { host: reason.host, region: reason.region });
    case "host_removed":
      return t("reason.change.hostRemoved", { host: reason.host });
    case "host_draining":
      return t("reason.change.hostDraining", { host: reason.host, gpus: reason.gpus });
    case "confirm_limits_changed":
      return t("reason.change.confirmLimits", { gpus: reason.above_gpus, cost: formatMoney(reason.above_per_hour_fen) });
    case "budget_changed":
      return reason.budget_fen === null
        ? t("reason.change.budgetCleared")
        : t("reason.change.budgetSet", { budget: formatMoney(reason.budget_fen) });
    case "note":
      // Rows written before reasons had a kind: their words, as stored.
      return reason.text;
    default:
      return never(reason);
  }
}

const AGENT_KINDS: Readonly<Record<string, MessageKey | undefined>> = {
  not_enough_free: "reason.agent.not_enough_free",
  gpu_not_free: "reason.agent.gpu_not_free",
  idempotency_key_reused: "reason.agent.idempotency_key_reused",
  not_found: "reason.agent.not_found",
  invalid_request: "reason.agent.invalid_request",
  forbidden: "reason.agent.forbidden",
  internal: "reason.agent.internal",
};

/** Why a host could not be used, or a call to it failed. */
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
      const known = AGENT_KINDS[problem.agent_kind];
      const message = known ? t(known) : problem.message;
      return t("reason.host.refused_request", { url: problem.url, status: problem.status, message });
    }
    case "decode":
      return t("reason.host.decode", { url: problem.url, reason: problem.reason });
    case "incompatible":
      return t("reason.host.incompatible", { url: problem.url, found: problem.found, expected: problem.expected });
    case "gpus_not_answering":
      return t("reason.host.gpus_not_answering", { gpus: problem.gpus });
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
      return t("reason.confirm.gpus", { change: reason.change, limit: reason.limit });
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
      return t("reason.note.lost", { gpus: note.gpus });
    case "held_to_unit_end":
      return t("reason.note.held", { gpus: note.gpus });
    default:
      return never(note);
  }
}

/** A pool's notes as one line ("…; …"), or null when it has none. */
export function poolNotesText(notes: readonly PoolNote[]): string | null {
  return notes.length === 0 ? null : notes.map(poolNoteText).join(t("reason.notesSeparator"));
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
      return t("hosts.tokenStore.noKeychain", { reason: store.reason });
    default:
      return never(store);
  }
}
