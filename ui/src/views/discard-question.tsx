// The question a changed form asks when Cancel, Escape or leaving the view would throw its
// changes away: "Discard your changes?" with Discard and Keep editing. Keep editing has the
// focus (the safe answer); Escape again answers it too. When to ask is unsaved.ts's rule.
//
// Stable selectors: [data-testid="discard-question"] #ID-discard-yes #ID-discard-no

import { onMount, type JSX } from "solid-js";
import { t } from "../i18n";

export function DiscardQuestion(props: {
  /** Prefix of the buttons' ids (`pool-f`, `host`). */
  id: string;
  onDiscard: () => void;
  onKeep: () => void;
}): JSX.Element {
  let keep!: HTMLButtonElement;
  onMount(() => keep.focus());
  return (
    <div
      class="discard-question alert alert-warn"
      role="alertdialog"
      aria-labelledby={`${props.id}-discard-title`}
      data-testid="discard-question"
      onKeyDown={(event) => {
        if (event.key !== "Escape") return;
        // Answered here: the form's own Escape must not ask again.
        event.preventDefault();
        event.stopPropagation();
        props.onKeep();
      }}
    >
      <span class="alert-line" id={`${props.id}-discard-title`}>
        {t("form.discard.question")}
      </span>
      <span class="discard-actions">
        <button type="button" class="btn btn-small btn-danger" id={`${props.id}-discard-yes`} onClick={() => props.onDiscard()}>
          {t("form.discard.yes")}
        </button>
        <button type="button" class="btn btn-small" id={`${props.id}-discard-no`} ref={keep} onClick={() => props.onKeep()}>
          {t("form.discard.no")}
        </button>
      </span>
    </div>
  );
}
