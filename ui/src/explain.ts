// The one error explainer every view uses: an IPC error (or anything thrown) becomes the
// sentence that helps, in the operator's language: the view's own sentence for the error
// when it has one, else its kind's, with the field it names. A host's failure is worded
// whole from its structured problem; any other English the shell sent is kept as detail.

import type { IpcError, IpcErrorKind } from "./bindings";
import { describeError } from "./format";
import { t, type MessageKey } from "./i18n";
import { ipcError } from "./ipc";
import { phraseText } from "./phrase";
import { hostProblemText } from "./reasons";

export interface Explained {
  /** The translated sentence, or null when there is none (a thrown error with no words). */
  readonly sentence: string | null;
  /** More on what failed: a host's problem in the operator's language, or the shell's
   * English words; null when there is nothing more. */
  readonly detail: string | null;
  /** Whether `detail` is the shell's English (shown as such), not worded here. */
  readonly detailIsEnglish: boolean;
  /** The error's kind, when it came from the shell. */
  readonly kind: IpcErrorKind | null;
  /** The error as the shell sent it (its `field`, its `line`), when it did. */
  readonly error: IpcError | null;
}

/** Which sentence a view gives an error from the shell (null: the kind's own). */
export type SentenceFor = (error: IpcError) => MessageKey | null;

/** Every kind of shell error in words: a view without its own sentence says this one. */
export const ERROR_KINDS: Readonly<Record<IpcErrorKind, MessageKey>> = {
  invalid_input: "error.kind.invalid_input",
  invalid_catalog: "error.kind.invalid_catalog",
  not_found: "error.kind.not_found",
  io: "error.kind.io",
  token_store: "error.kind.token_store",
  bad_url: "error.kind.bad_url",
  dns: "error.kind.dns",
  refused: "error.kind.refused",
  timeout: "error.kind.timeout",
  tls: "error.kind.tls",
  connect: "error.kind.connect",
  unauthorized: "error.kind.unauthorized",
  forbidden: "error.kind.forbidden",
  status: "error.kind.status",
  refused_request: "error.kind.refused_request",
  decode: "error.kind.decode",
  incompatible: "error.kind.incompatible",
  host_holds_gpus: "error.kind.host_holds_gpus",
  unacknowledged_warnings: "error.kind.unacknowledged_warnings",
  conflict: "error.kind.conflict",
  metrics_unavailable: "error.kind.metrics_unavailable",
  role_required: "error.kind.role_required",
  internal: "error.kind.internal",
};

/** The fields the shell names that an operator knows by a word; others are shown as named. */
const FIELD_WORDS: Readonly<Record<string, MessageKey | undefined>> = {
  name: "error.field.name",
  url: "error.field.url",
  region: "error.field.region",
  regions: "error.field.regions",
  labels: "error.field.labels",
  token: "error.field.token",
  fingerprint: "error.field.fingerprint",
  model: "error.field.model",
  pool: "error.field.pool",
  min: "error.field.min",
  max: "error.field.max",
  base_gpus: "error.field.base_gpus",
  term: "error.field.term",
  overlay: "error.field.overlay",
  on_demand_floor: "error.field.on_demand_floor",
  spot_pct: "error.field.spot_pct",
  max_price_fen: "error.field.max_price_fen",
  to: "error.field.to",
  from: "error.field.from",
  release: "error.field.release",
  budget: "error.field.budget",
  budget_fen: "error.field.budget",
  confirm_above_gpus: "error.field.confirm_above_gpus",
  confirm_above_per_hour_fen: "error.field.confirm_above_per_hour_fen",
  demand: "error.field.demand",
  rules: "error.field.rules",
  trace: "error.field.trace",
};

/** A field the shell names, in the operator's words ("名称"), or as named (`limits.max_gpus`). */
export function fieldText(field: string): string {
  const key = FIELD_WORDS[field];
  return key ? t(key) : field;
}

/** The kind's sentence, with the field (and line) it names. */
export function kindText(error: IpcError): string {
  const sentence = t(ERROR_KINDS[error.kind]);
  if (error.field && error.line !== null) return t("error.fieldLine", { sentence, field: fieldText(error.field), line: error.line });
  if (error.field) return t("error.fieldNamed", { sentence, field: fieldText(error.field) });
  if (error.line !== null) return t("error.lineNamed", { sentence, line: error.line });
  return sentence;
}

/** Explains a failure: `sentenceFor` picks the view's sentence for a shell error. */
export function explainError(err: unknown, sentenceFor?: SentenceFor): Explained {
  const error = ipcError(err);
  if (!error) return { sentence: describeError(err), detail: null, detailIsEnglish: false, kind: null, error: null };
  const key = sentenceFor?.(error) ?? null;
  const sentence = key ? t(key) : kindText(error);
  if (error.problem) {
    return { sentence, detail: hostProblemText(error.problem), detailIsEnglish: false, kind: error.kind, error };
  }
  // A refusal Rust words (a field's problem, a name taken) is said in the operator's words.
  if (error.words) {
    return { sentence, detail: phraseText(error.words), detailIsEnglish: false, kind: error.kind, error };
  }
  const message = error.message.trim();
  return { sentence, detail: message !== "" ? message : null, detailIsEnglish: message !== "", kind: error.kind, error };
}

/** The alert's first line: what failed (the lead), then why, when a sentence says it. */
export function alertLine(lead: string, explained: Explained): string {
  return explained.sentence ? `${lead} ${explained.sentence}` : lead;
}
