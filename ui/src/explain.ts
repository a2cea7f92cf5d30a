// The one error explainer every view uses: an IPC error (or anything thrown) becomes the
// sentence that helps (in the operator's language) and the English detail the shell sent.

import type { IpcError, IpcErrorKind } from "./bindings";
import { describeError } from "./format";
import { t, type MessageKey } from "./i18n";
import { ipcError } from "./ipc";

export interface Explained {
  /** The translated sentence, or null when the view has none for this error. */
  readonly sentence: string | null;
  /** The shell's own words (English), or null when there are none. */
  readonly detail: string | null;
  /** The error's kind, when it came from the shell. */
  readonly kind: IpcErrorKind | null;
  /** The error as the shell sent it (its `field`, its `line`), when it did. */
  readonly error: IpcError | null;
}

/** Which sentence a view gives an error from the shell (null: none, show the detail). */
export type SentenceFor = (error: IpcError) => MessageKey | null;

/** Explains a failure: `sentenceFor` picks the view's sentence for a shell error. */
export function explainError(err: unknown, sentenceFor?: SentenceFor): Explained {
  const error = ipcError(err);
  if (!error) return { sentence: describeError(err), detail: null, kind: null, error: null };
  const key = sentenceFor?.(error) ?? null;
  const sentence = key ? t(key) : null;
  const message = error.message.trim();
  // With neither a sentence nor a message, the kind is all there is to show.
  const detail = message !== "" ? message : sentence ? null : error.kind;
  return { sentence, detail, kind: error.kind, error };
}

/** The alert's first line: what failed (the lead), then why, when a sentence says it. */
export function alertLine(lead: string, explained: Explained): string {
  return explained.sentence ? `${lead} ${explained.sentence}` : lead;
}
