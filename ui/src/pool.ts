// Pure helpers for the Pool and Activity views: phases, actors and outcomes in words,
// signed money, what the slider's preview plans in words, the pool form's fields (its
// checks are the store's own: the shell's `check_pool`), and the "latest answer only"
// request gate the slider uses. No DOM, so they are unit-tested in node.

import type {
  Actor,
  HostFree,
  HostMove,
  HostResult,
  ModelOffer,
  Outcome,
  OverlayMode,
  PlacementPolicy,
  PoolHostView,
  PoolLeaseState,
  PoolPhase,
  RegionOffer,
  ReleasedLease,
  ScalePreview,
  Term,
} from "./bindings";
import { formatCount, formatMoney } from "./costs";
import { t, type MessageKey } from "./i18n";
import { confirmationText, hostProblemText, priceProblemText, releaseWarningText } from "./reasons";
import { valuesDiffer } from "./unsaved";

const PHASE_KEYS: Record<PoolPhase, MessageKey> = {
  converged: "pool.phase.converged",
  scaling_out: "pool.phase.scaling_out",
  scaling_in: "pool.phase.scaling_in",
  blocked: "pool.phase.blocked",
  not_enforced: "pool.phase.not_enforced",
};

/** The phase in words; a phase this UI does not know is shown as it came. */
export function phaseText(phase: string): string {
  const key = (PHASE_KEYS as Record<string, MessageKey | undefined>)[phase];
  return key ? t(key) : phase;
}

const ACTOR_KEYS: Record<Actor, MessageKey> = {
  operator: "activity.actor.operator",
  failover: "activity.actor.failover",
  rule: "activity.actor.rule",
  enforcer: "activity.actor.enforcer",
  demo: "activity.actor.demo",
  slurm: "activity.actor.slurm",
};

export function actorText(actor: string): string {
  const key = (ACTOR_KEYS as Record<string, MessageKey | undefined>)[actor];
  return key ? t(key) : actor;
}

const OUTCOME_KEYS: Record<Outcome, MessageKey> = {
  in_progress: "activity.outcome.in_progress",
  done: "activity.outcome.done",
  partial: "activity.outcome.partial",
  superseded: "activity.outcome.superseded",
};

export function outcomeText(outcome: string): string {
  const key = (OUTCOME_KEYS as Record<string, MessageKey | undefined>)[outcome];
  return key ? t(key) : outcome;
}

const LEASE_STATE_KEYS: Readonly<Record<PoolLeaseState, MessageKey>> = {
  active: "pool.lease.active",
  releasing: "pool.lease.releasing",
  unreachable: "pool.lease.unreachable",
  lost: "pool.lease.lost",
  reclaimed: "pool.lease.reclaimed",
};

export function leaseStateText(state: PoolLeaseState): string {
  return t(LEASE_STATE_KEYS[state]);
}

const TERM_KEYS: Record<Term, MessageKey> = { month: "pool.term.month", year: "pool.term.year" };
const OVERLAY_KEYS: Record<OverlayMode, MessageKey> = {
  hour: "pool.overlay.hour",
  day: "pool.overlay.day",
  week: "pool.overlay.week",
  spot: "pool.overlay.spot",
};
const PLACEMENT_KEYS: Record<PlacementPolicy, MessageKey> = { pack: "pool.placement.pack", spread: "pool.placement.spread" };

export function termText(term: Term): string {
  return t(TERM_KEYS[term]);
}

export function overlayText(overlay: OverlayMode): string {
  return t(OVERLAY_KEYS[overlay]);
}

export function placementText(placement: PlacementPolicy): string {
  return t(PLACEMENT_KEYS[placement]);
}

/** The tone of a cost change: dearer, cheaper, or none (a CSS class). */
export function costTone(deltaFen: number | null | undefined): "dearer" | "cheaper" | "" {
  if (deltaFen === null || deltaFen === undefined || !Number.isFinite(deltaFen)) return "";
  return deltaFen > 0 ? "dearer" : deltaFen < 0 ? "cheaper" : "";
}

/** The alert tone a committed change's outcome is shown in. */
export function outcomeTone(outcome: Outcome): "alert-ok" | "alert-warn" | "alert-info" {
  return outcome === "partial" ? "alert-warn" : outcome === "superseded" ? "alert-info" : "alert-ok";
}

/** The numbers under the slider: every count for a small range, else both ends and the middle. */
export function scaleMarks(min: number, max: number): number[] {
  if (max < min) return [min];
  if (max - min <= 16) return Array.from({ length: max - min + 1 }, (_, i) => min + i);
  return [min, Math.round((min + max) / 2), max];
}

/** A host's part in the pool in words: "2 of 3 granted", "releasing 1", "settled". */
export function hostProgressText(host: Pick<PoolHostView, "leased" | "pending" | "releasing">): string {
  const goal = host.leased + host.pending;
  if (host.pending > 0) return t("pool.progress", { leased: formatCount(host.leased), goal: formatCount(goal) });
  if (host.releasing > 0) return t("pool.progressReleasing", { n: formatCount(host.releasing) });
  return t("pool.progressDone");
}

/** The pool to show: the one chosen while it still exists, else the first; null with none. */
export function keepSelection(names: readonly string[], chosen: string | null): string | null {
  return chosen !== null && names.includes(chosen) ? chosen : (names[0] ?? null);
}

/**
 * The regions the form offers: those the hosts are in, then any the pool names that no
 * host is in any more (so they can still be unticked).
 */
export function regionChoices(
  offered: readonly RegionOffer[],
  named: readonly string[],
  model: ModelOffer | null = null,
): RegionOffer[] {
  // A region none of whose hosts has the chosen model is no choice for it (a pool there
  // could never hold a GPU); before the hosts report, every region is offered.
  const hasModel = (r: RegionOffer) => model === null || model.regions.length === 0 || model.regions.includes(r.region);
  const keep = new Set(named);
  const shown = offered.filter((r) => hasModel(r) || keep.has(r.region));
  const known = new Set(offered.map((r) => r.region));
  const gone = [...new Set(named)].filter((r) => !known.has(r)).map((region) => ({ region, hosts: 0, gpu_models: [] as string[] }));
  return [...shown, ...gone];
}

/** One choice of the pool form's model select. */
export type ModelChoice = {
  /** What the pool names: the catalog's model (`A100`). */
  value: string;
  /** The choice in words: the name, what the hosts report, where. */
  label: string;
  /** Unpriced models cannot be chosen (a pool needs a price); they are shown so the operator sees why. */
  disabled: boolean;
};

/**
 * The pool form's model choices, from the shell's offers: the catalog's names, each with
 * what the hosts report that it matches ("A100 — NVIDIA A100-SXM4-80GB · 3 hosts: cn-east,
 * cn-north"); priced models no host reports; reported ones the catalog does not price
 * (disabled). A pool's own model the offers lack (editing) is kept as the first choice.
 */
export function modelChoices(offers: readonly ModelOffer[], current: string): ModelChoice[] {
  const choices: ModelChoice[] = offers.map((offer) => ({
    value: offer.model,
    label: modelOfferText(offer),
    disabled: !offer.priced,
  }));
  const wanted = current.trim();
  if (wanted !== "" && !offers.some((o) => o.priced && o.model === wanted)) {
    choices.unshift({ value: wanted, label: t("pool.model.current", { model: wanted }), disabled: false });
  }
  return choices;
}

function modelOfferText(offer: ModelOffer): string {
  if (!offer.priced) return t("pool.model.unpriced", { model: offer.model });
  if (offer.hosts === 0) return t("pool.model.noHost", { model: offer.model });
  const reported = offer.reported.filter((name) => name !== offer.model);
  return reported.length > 0 ? t("pool.model.reported", { model: offer.model, reported: reported.join(t("common.listSeparator")) }) : offer.model;
}

/** Where the chosen model is: "2 host(s): cn-east, cn-south"; null when no host reports it. */
export function modelWhereText(offers: readonly ModelOffer[], model: string): string | null {
  const offer = offers.find((o) => o.model === model && o.hosts > 0);
  if (!offer) return null;
  return t(offer.hosts === 1 ? "pool.model.where.one" : "pool.model.where", { hosts: formatCount(offer.hosts), regions: offer.regions.join(t("common.listSeparator")) });
}

/** The model a new pool starts on: the first priced one some host reports, else none. */
export function defaultModel(offers: readonly ModelOffer[]): string {
  return offers.find((o) => o.priced && o.hosts > 0)?.model ?? "";
}

/** Whether the form holds something other than what it opened with. */
export function formIsDirty(values: PoolFormValues, initial: PoolFormValues): boolean {
  return valuesDiffer(values, initial);
}

/** Money with its sign always written: "+¥25.00", "−¥5.00", "¥0.00"; null -> "—". */
export function signedMoney(fen: number | null | undefined, currency = "CNY"): string {
  if (fen === null || fen === undefined || !Number.isFinite(fen)) return t("common.empty");
  const text = formatMoney(fen, currency);
  return fen > 0 ? `+${text}` : text;
}

/** "{cost}/h" in the current language. */
export function perHour(fen: number | null | undefined): string {
  return t("pool.perHour", { cost: formatMoney(fen) });
}

/** "{cost}/month" in the current language. */
export function perMonth(fen: number | null | undefined): string {
  return t("pool.perMonth", { cost: formatMoney(fen) });
}

/** "+¥25.00/h" (signed). */
export function signedPerHour(fen: number | null | undefined): string {
  return t("pool.perHour", { cost: signedMoney(fen) });
}

/** "+¥18,250.00/month" (signed). */
export function signedPerMonth(fen: number | null | undefined): string {
  return t("pool.perMonth", { cost: signedMoney(fen) });
}

function joinList(items: readonly string[]): string {
  return items.join(t("common.listSeparator"));
}

function total(moves: readonly { count: number }[]): number {
  return moves.reduce((sum, m) => sum + m.count, 0);
}

/** "Rent 6: 4 on cn-east-001, 2 on cn-south-002" / "Rent 2 on cn-east-001"; null when nothing is rented. */
export function rentText(moves: readonly HostMove[]): string | null {
  const used = moves.filter((m) => m.count > 0);
  if (used.length === 0) return null;
  const n = formatCount(total(used));
  const only = used.length === 1 ? used[0] : undefined;
  if (only) return t("pool.plan.rentOne", { n, host: only.host });
  return t("pool.plan.rent", {
    n,
    where: joinList(used.map((m) => t("pool.plan.on", { n: formatCount(m.count), host: m.host }))),
  });
}

/** "Release 3 from cn-east-001" / "Release 3: 2 from a, 1 from b"; null when nothing is released. */
export function releaseText(moves: readonly HostMove[]): string | null {
  const used = moves.filter((m) => m.count > 0);
  if (used.length === 0) return null;
  const n = formatCount(total(used));
  const only = used.length === 1 ? used[0] : undefined;
  if (only) return t("pool.plan.releaseOne", { n, host: only.host });
  return t("pool.plan.release", {
    n,
    where: joinList(used.map((m) => t("pool.plan.from", { n: formatCount(m.count), host: m.host }))),
  });
}

/**
 * What letting go would do, in words: the headline (rent, release or no change) and the
 * notes under it (held to unit end, short, cost problem).
 */
export function planWords(preview: ScalePreview): { headline: string; notes: string[] } {
  const parts = [rentText(preview.rent), releaseText(preview.release)].filter((x): x is string => x !== null);
  let headline: string;
  if (parts.length > 0) headline = parts.join(t("pool.plan.then"));
  else if (preview.to === preview.from) headline = t("pool.plan.none", { n: formatCount(preview.to) });
  else if (preview.to > preview.from) headline = t("pool.plan.rentNowhere", { n: formatCount(preview.to - preview.from) });
  else headline = t("pool.plan.releaseHeld", { n: formatCount(preview.from - preview.to) });
  const notes: string[] = [];
  if (preview.held_to_unit_end > 0) notes.push(t("pool.plan.held", { n: formatCount(preview.held_to_unit_end) }));
  if (preview.short > 0) notes.push(t("pool.plan.short", { n: formatCount(preview.short) }));
  if (preview.cost_problem) notes.push(t("pool.plan.costProblem", { message: priceProblemText(preview.cost_problem) }));
  return { headline, notes };
}

/** Why a change asks first, in words ("" when the preview gives no reason). */
export function confirmReasonText(preview: Pick<ScalePreview, "confirmation_reason">): string {
  return preview.confirmation_reason ? confirmationText(preview.confirmation_reason) : "";
}

/** "6 free: 4 on cn-east-001, 2 on cn-south-002" / "None free now". */
export function freeText(freeNow: number, byHost: readonly HostFree[]): string {
  const hosts = byHost.filter((f) => f.free > 0);
  if (freeNow <= 0 || hosts.length === 0) return t("pool.free.none");
  return t("pool.free.some", {
    n: formatCount(freeNow),
    where: joinList(hosts.map((f) => t("pool.plan.on", { n: formatCount(f.free), host: f.host }))),
  });
}

/** One host's part in a change: "cn-east-001: 2 granted, 1 failed (no free GPU)". */
export function hostResultText(result: HostResult): string {
  const parts: string[] = [];
  if (result.granted > 0) parts.push(t("activity.result.granted", { n: formatCount(result.granted) }));
  if (result.released > 0) parts.push(t("activity.result.released", { n: formatCount(result.released) }));
  if (result.failed > 0) parts.push(t("activity.result.failed", { n: formatCount(result.failed) }));
  if (parts.length === 0) parts.push(t("activity.result.nothing"));
  const text = t("activity.result.line", { host: result.host, parts: joinList(parts) });
  return result.error ? t("activity.result.error", { text, error: hostProblemText(result.error) }) : text;
}

/** GPU indexes of a lease: [0, 1] -> "0, 1". */
/** Leases in a steady order: by host, then by their lowest GPU index, then by id (sorts in place). */
export function sortLeases<L extends { host: string; gpu_indexes: readonly number[]; lease_id: string }>(leases: L[]): L[] {
  const first = (l: L) => (l.gpu_indexes.length === 0 ? Number.MAX_SAFE_INTEGER : Math.min(...l.gpu_indexes));
  return leases.sort(
    (a, b) => a.host.localeCompare(b.host, "en") || first(a) - first(b) || a.lease_id.localeCompare(b.lease_id, "en"),
  );
}

export function indexesText(indexes: readonly number[]): string {
  return indexes.length === 0 ? t("common.empty") : indexes.map(String).join(", ");
}

function pad(n: number): string {
  return String(n).padStart(2, "0");
}

/** Local time: "14:03:09" on the day of `nowMs`, else "2026-12-01 14:03". */
export function formatWhen(ms: number | null | undefined, nowMs: number): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return t("common.empty");
  const at = new Date(ms);
  const now = new Date(nowMs);
  const clock = `${pad(at.getHours())}:${pad(at.getMinutes())}`;
  const sameDay = at.getFullYear() === now.getFullYear() && at.getMonth() === now.getMonth() && at.getDate() === now.getDate();
  if (sameDay) return `${clock}:${pad(at.getSeconds())}`;
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())} ${clock}`;
}

/** Local date and time, always with the date: "2026-12-05 09:04:07" (a log read days later). */
export function formatDateTime(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return t("common.empty");
  const at = new Date(ms);
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())} ${pad(at.getHours())}:${pad(at.getMinutes())}:${pad(at.getSeconds())}`;
}

/** GPU-hours with one decimal below 100, whole above: 3.25 -> "3.3", 1234.4 -> "1,234". */
export function formatGpuHours(hours: number): string {
  if (!Number.isFinite(hours)) return t("common.empty");
  if (Math.abs(hours) >= 100) return formatCount(hours);
  return (Math.round(hours * 10) / 10).toFixed(1);
}

/**
 * The count a number field means, or null: whole numbers only, clamped into [min, max]
 * (the slider cannot leave the pool's range either).
 */
export function parseCount(text: string, min: number, max: number): number | null {
  const trimmed = text.trim();
  if (!/^\d+$/.test(trimmed)) return null;
  const n = Number(trimmed);
  if (!Number.isSafeInteger(n)) return null;
  return Math.max(min, Math.min(max, n));
}

// ---------- the form ----------

export type PoolField =
  | "name"
  | "model"
  | "regions"
  | "min"
  | "max"
  | "base_gpus"
  | "term"
  | "overlay"
  | "placement"
  | "interruptible"
  | "release_at_unit_end";

export const POOL_FIELDS: readonly PoolField[] = [
  "name",
  "model",
  "regions",
  "min",
  "max",
  "base_gpus",
  "term",
  "overlay",
  "placement",
  "interruptible",
  "release_at_unit_end",
];

/** What the operator typed, as strings and booleans. */
export type PoolFormValues = {
  name: string;
  model: string;
  regions: readonly string[];
  min: string;
  max: string;
  base_gpus: string;
  term: string;
  overlay: string;
  placement: string;
  interruptible: boolean;
  release_at_unit_end: boolean;
};

/** ¥ amount typed by the operator ("500", "12.5", "1,000.00") as fen, or null. */
export function parseYuan(text: string): number | null {
  const trimmed = text.trim().replace(/^¥\s*/, "").replace(/,/g, "");
  const match = /^(\d+)(?:\.(\d{1,2}))?$/.exec(trimmed);
  if (!match) return null;
  const units = Number(match[1]);
  const cents = Number((match[2] ?? "").padEnd(2, "0"));
  const fen = units * 100 + cents;
  return Number.isSafeInteger(fen) ? fen : null;
}

/** Fen as a plain yuan figure for an input: 50000 -> "500", 1250 -> "12.50". */
export function yuanInput(fen: number): string {
  const units = Math.trunc(fen / 100);
  const cents = Math.abs(fen % 100);
  return cents === 0 ? String(units) : `${units}.${String(cents).padStart(2, "0")}`;
}

// ---------- the slider's request gate ----------

/**
 * One request in flight at a time; while one runs, only the latest value asked for waits
 * (older ones are dropped), and an answer is handed on only when it is for the latest
 * value asked for. `fetch` never rejects (fold errors into its result).
 */
export class LatestOnly<V, R> {
  private running = false;
  private waiting: { value: V } | null = null;
  private latest: { value: V } | null = null;
  private closed = false;

  constructor(
    private readonly fetch: (value: V) => Promise<R>,
    private readonly deliver: (value: V, result: R) => void,
  ) {}

  /** Ask for `value`; returns when this call's work (and any it queued) is done. */
  async ask(value: V): Promise<void> {
    this.latest = { value };
    if (this.running) {
      this.waiting = { value };
      return;
    }
    this.running = true;
    try {
      let next: { value: V } | null = { value };
      while (next && !this.closed) {
        this.waiting = null;
        const asked = next.value;
        const result = await this.fetch(asked);
        if (!this.closed && this.latest && Object.is(this.latest.value, asked)) this.deliver(asked, result);
        next = this.waiting;
      }
    } finally {
      this.running = false;
    }
  }

  /** Forget what was asked: a late answer is not handed on. */
  reset(): void {
    this.latest = null;
    this.waiting = null;
  }

  /** Nothing more is handed on. */
  close(): void {
    this.closed = true;
    this.reset();
  }

  get busy(): boolean {
    return this.running;
  }
}

/** How close to its unit's end a lease may go without paying another (placement's margin). */
const UNIT_END_MARGIN_MS = 60_000;

/** A lease the preview would give back, in words: where, how busy, and what is paid. */
export function releasedLeaseWords(
  lease: ReleasedLease,
  nowMs: number,
): { gpu: string; lease: string; util: string; paid: string; marks: string[]; tone: "busy" | "idle" | "" } {
  const util =
    lease.util_pct === null
      ? t("pool.release.unknown")
      : t(lease.busy ? "pool.release.busy" : "pool.release.idle", { pct: `${Math.round(lease.util_pct)}%` });
  const time = formatWhen(lease.paid_until_ms, nowMs);
  let paid: string;
  if (lease.kept_to_unit_end) paid = t("pool.release.kept", { time });
  else if (lease.paid_until_ms - nowMs > UNIT_END_MARGIN_MS) paid = t("pool.release.now", { time });
  else paid = t("pool.release.nowDue");
  return {
    gpu: t("pool.release.gpu", { host: lease.host, indexes: indexesText(lease.gpu_indexes) }),
    lease: t("pool.release.lease", { id: lease.lease_id }),
    util,
    paid,
    // Why this one goes: the operator's choice, and a workload that saved its state.
    marks: [...(lease.chosen ? [t("pool.release.chosen")] : []), ...(lease.safe ? [t("pool.release.safe")] : [])],
    tone: lease.util_pct === null ? "" : lease.busy ? "busy" : "idle",
  };
}

/**
 * The warnings over the list of GPUs to release: what they stop (busy GPUs, their grace),
 * and the saving of waiting: the earliest end of a paid unit among those released now,
 * when one is more than a minute away ("Keep until 14:00: already paid").
 */
export function releaseWarnings(preview: Pick<ScalePreview, "released" | "release_warning">, nowMs: number): string[] {
  const out: string[] = [];
  if (preview.release_warning) out.push(releaseWarningText(preview.release_warning));
  const paid = preview.released
    .filter((l) => !l.kept_to_unit_end && l.paid_until_ms - nowMs > UNIT_END_MARGIN_MS)
    .map((l) => l.paid_until_ms);
  if (paid.length > 0) out.push(t("pool.release.alreadyPaid", { time: formatWhen(Math.min(...paid), nowMs) }));
  return out;
}
