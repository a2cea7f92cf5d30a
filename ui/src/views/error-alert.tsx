// The one error alert every Solid view shows: role=alert, data-kind for tests, the lead
// and the translated sentence on one line, more on it under: worded here (a host's
// problem), or the shell's English, which outside English is folded under a disclosure so
// the screen reads in the operator's language.

import { Show, type JSX } from "solid-js";
import { alertLine, explainError, type SentenceFor } from "../explain";
import { getLocale, t } from "../i18n";

/** More on an error: `english` when it is the shell's own words rather than worded here. */
export function ErrorDetail(props: { text: string; english: boolean; prefix?: boolean }): JSX.Element {
  const folded = () => props.english && getLocale() !== "en";
  const line = () => (props.prefix === false ? props.text : `${t("error.detail")} ${props.text}`);
  return (
    <Show
      when={folded()}
      fallback={
        <span class="alert-detail" lang={props.english ? "en" : undefined}>
          {line()}
        </span>
      }
    >
      <details class="alert-detail alert-detail-english">
        <summary>{t("error.detailEnglish")}</summary>
        <span lang="en">{props.text}</span>
      </details>
    </Show>
  );
}

export function ErrorAlert(props: {
  /** What failed, already translated ("Could not save the pool."). */
  lead: string;
  error: unknown;
  testid: string;
  sentenceFor?: SentenceFor;
  children?: JSX.Element;
}): JSX.Element {
  const explained = () => explainError(props.error, props.sentenceFor);
  return (
    <div class="alert alert-error" role="alert" data-testid={props.testid} data-kind={explained().kind ?? ""}>
      <span class="alert-line">{alertLine(props.lead, explained())}</span>
      <Show when={explained().detail}>{(detail) => <ErrorDetail text={detail()} english={explained().detailIsEnglish} />}</Show>
      {props.children}
    </div>
  );
}
