// The rules form's template for a pool bound to a Slurm partition: "Size to the Slurm
// queue", with one number, the minutes a job waits before the pool grows at once
// (rules-template.ts applies it). Applying changes the form like any edit: unsaved until
// saved. Enter in the minutes applies the template (not Save).
//
// Stable selectors: [data-testid="rules-template"] #rules-tpl-wait #rules-tpl-wait-notes
//   #rules-tpl-apply

import { createSignal, Show, type JSX } from "solid-js";
import type { Phrase } from "../../costs";
import { t } from "../../i18n";
import { parseQueueWait, QUEUE_WAIT_DEFAULT, queueWaitProblem } from "../../rules-template";

export function QueueTemplate(props: {
  /** The partition's GPUs per node: what a job that waited N minutes adds at once. */
  gpusPerNode: number;
  /** Applies the template for N minutes to the form. */
  onApply: (minutes: number) => void;
}): JSX.Element {
  const [wait, setWait] = createSignal(String(QUEUE_WAIT_DEFAULT));
  const [problem, setProblem] = createSignal<Phrase | null>(null);
  let input!: HTMLInputElement;

  function apply(): void {
    const minutes = parseQueueWait(wait());
    setProblem(queueWaitProblem(wait()));
    if (minutes === null) {
      input.focus();
      return;
    }
    props.onApply(minutes);
  }

  return (
    <fieldset class="rules-fieldset rules-template" data-testid="rules-template">
      <legend>{t("rules.tpl.title")}</legend>
      <p class="field-hint" id="rules-tpl-hint">
        {t("rules.tpl.hint", { gpus: props.gpusPerNode })}
      </p>
      <div class="rules-template-row">
        <div class="field" data-field="template.wait">
          <label for="rules-tpl-wait">{t("rules.tpl.wait")}</label>
          <input
            id="rules-tpl-wait"
            ref={input}
            type="text"
            inputmode="numeric"
            class="num-input"
            autocomplete="off"
            spellcheck={false}
            aria-describedby="rules-tpl-hint rules-tpl-wait-notes"
            aria-invalid={problem() ? "true" : undefined}
            value={wait()}
            onInput={(event) => {
              setWait(event.currentTarget.value);
              // A message already shown goes once the value is right.
              if (problem()) setProblem(queueWaitProblem(wait()));
            }}
            onKeyDown={(event) => {
              if (event.key !== "Enter" || event.isComposing) return;
              // Enter here applies the template; the editor's Enter would save the rules.
              event.preventDefault();
              event.stopPropagation();
              apply();
            }}
          />
          <div id="rules-tpl-wait-notes" class="field-error-box" data-field="template.wait">
            <Show when={problem()}>
              {(shown) => (
                <p class="field-error" data-severity="client">
                  {t(shown().key, shown().params)}
                </p>
              )}
            </Show>
          </div>
        </div>
        <button type="button" class="btn btn-small" id="rules-tpl-apply" onClick={apply}>
          {t("rules.tpl.apply")}
        </button>
      </div>
    </fieldset>
  );
}
