// What the linter (or the form's own check) says about one field of the rules form, right
// under it: an error (the engine's words, in the operator's language, under a lead), a
// warning in words, or a value that is not a number.
//
// Stable selectors: #rules-f-FIELD-notes (under the input #rules-f-FIELD)
//   .field-error[data-severity="error|warning|client"]

import { For, Show, type JSX } from "solid-js";
import type { Phrase } from "../../costs";
import { t } from "../../i18n";
import { ErrorDetail } from "../error-alert";
import { phraseText } from "../../phrase";
import { lintProblemText } from "../../reasons";
import { fieldId, type FieldNotes as Notes } from "../../rules";

export function FieldNotes(props: { field: string; notes: Notes | undefined; problem: Phrase | undefined }): JSX.Element {
  return (
    <div id={`${fieldId(props.field)}-notes`} class="field-error-box" data-field={props.field}>
      <Show when={props.problem}>
        {(problem) => (
          <p class="field-error" data-severity="client">
            {t(problem().key, problem().params)}
          </p>
        )}
      </Show>
      <For each={props.notes?.errors ?? []}>
        {(error) => (
          <p class="field-error" data-severity="error">
            <span class="alert-line">{t("rules.lint.invalid")}</span>
            <ErrorDetail text={phraseText(error.words)} english={false} prefix={false} />
          </p>
        )}
      </For>
      <For each={props.notes?.warnings ?? []}>
        {(warning) => (
          <p class="field-error field-warning" data-severity="warning">
            {lintProblemText(warning.problem)}
          </p>
        )}
      </For>
    </div>
  );
}

/** Whether the field has anything wrong (for aria-invalid). */
export function invalid(notes: Notes | undefined, problem: Phrase | undefined): "true" | undefined {
  return problem || (notes && notes.errors.length > 0) ? "true" : undefined;
}
