// The pool's rules as the Pool view shows them: their mode as a state (enforced, shadow,
// off, none), the latest decision with its clamps in words, who set the count the pool
// holds, and why GPUs are kept (a paid-unit hold and when it ends). The Rules view edits
// them; this card only says what they do to this pool.
//
// Stable selectors (end-to-end tests rely on these):
//   [data-testid="pool-rules"]           data-mode="enforce|shadow|off|none" (absent while loading)
//     [data-testid="pool-rules-state"]   the mode in words
//     [data-testid="pool-rules-latest"]  the latest decision in words
//     [data-testid="pool-set-by"]        who set the count, and when
//     [data-testid="pool-rules-held"]    why GPUs are kept

import { Show, type JSX } from "solid-js";
import type { PoolRules } from "../../bindings";
import { t } from "../../i18n";
import { heldText, latestDecisionText, rulesState, rulesStateText, setterText, type CountSetter } from "../../pool-rules";

export function RulesCard(props: {
  /** undefined while loading; null when the pool has no rules. */
  rules: PoolRules | null | undefined;
  setter: CountSetter | null;
  heldToUnitEnd: number;
  failed: boolean;
  now: number;
}): JSX.Element {
  const loaded = (): PoolRules | null => props.rules ?? null;
  return (
    <section
      class="card pool-rules"
      data-testid="pool-rules"
      data-mode={props.rules === undefined ? undefined : rulesState(loaded())}
      aria-labelledby="pool-rules-title"
    >
      <h2 id="pool-rules-title">{t("pool.rules.title")}</h2>
      <Show
        when={props.rules !== undefined}
        fallback={<p class="loading">{props.failed ? t("pool.rules.loadError") : t("common.loading")}</p>}
      >
        <p class={`pool-rules-state rules-${rulesState(loaded())}`} data-testid="pool-rules-state">
          {rulesStateText(loaded())}
        </p>
        <Show when={loaded()}>
          {(rules) => (
            <p class="pool-rules-latest" data-testid="pool-rules-latest">
              {latestDecisionText(rules(), props.now) ?? t("pool.rules.noDecision")}
            </p>
          )}
        </Show>
      </Show>
      <Show when={props.setter}>
        {(setter) => (
          <p class="hint" data-testid="pool-set-by" data-actor={setter().actor}>
            {setterText(setter(), props.now)}
          </p>
        )}
      </Show>
      <Show when={heldText(loaded(), props.heldToUnitEnd)}>
        {(text) => (
          <p class="pool-rules-held" data-testid="pool-rules-held">
            {text()}
          </p>
        )}
      </Show>
      <p class="pool-rules-link">
        <a href="#/rules" class="btn btn-small btn-quiet">
          {t("pool.rules.open")}
        </a>
      </p>
    </section>
  );
}
