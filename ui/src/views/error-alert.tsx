// The one error alert every Solid view shows: role=alert, data-kind for tests, the lead
// and the translated sentence on one line, the shell's English detail under it.

import { Show, type JSX } from "solid-js";
import { alertLine, explainError, type SentenceFor } from "../explain";
import { t } from "../i18n";

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
      <Show when={explained().detail}>
        {(detail) => (
          <span class="alert-detail" lang="en">
            {`${t("error.detail")} ${detail()}`}
          </span>
        )}
      </Show>
      {props.children}
    </div>
  );
}
