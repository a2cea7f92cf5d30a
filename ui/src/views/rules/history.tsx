// The last few different decisions on the pool's rules, newest first: the console keeps
// only the latest, so the view keeps those it has seen (rules-store.ts), one entry for a
// run of the same decision (the same reason and counts), with when it was last made.
//
// Stable selectors (see views/rules.tsx):
//   [data-testid="rules-history"] (data-count)
//   li[data-testid="rules-history-item"] (data-state="steady|change", data-desired)

import { For, Show, type JSX } from "solid-js";
import { t } from "../../i18n";
import { formatWhen } from "../../pool";
import { decisionText } from "../../reasons";
import { DECISIONS_KEPT, type SeenDecision } from "../../rules-store";

export function RecentDecisions(props: { history: readonly SeenDecision[]; now: number }): JSX.Element {
  return (
    <section class="card rules-history" data-testid="rules-history" data-count={props.history.length} aria-labelledby="rules-history-title">
      <h2 id="rules-history-title">{t("rules.history.title")}</h2>
      <p class="hint">{t("rules.history.lead", { n: DECISIONS_KEPT })}</p>
      <Show when={props.history.length > 0} fallback={<p class="hint">{t("rules.history.none")}</p>}>
        <ol class="rules-decision-list">
          <For each={props.history}>
            {(seen) => {
              const d = seen.decision;
              const change = d.desired_gpus !== d.current_gpus;
              return (
                <li data-testid="rules-history-item" data-state={change ? "change" : "steady"} data-desired={d.desired_gpus}>
                  <span>{decisionText(d)}</span>{" "}
                  <span class="hint">
                    {change
                      ? t("rules.decision.moves", { from: d.current_gpus, to: d.desired_gpus, when: formatWhen(d.at_ms, props.now) })
                      : t("rules.decision.holds", { gpus: d.current_gpus, when: formatWhen(d.at_ms, props.now) })}
                    <Show when={seen.lastAt > d.at_ms}>{` · ${t("rules.history.since", { when: formatWhen(seen.lastAt, props.now) })}`}</Show>
                  </span>
                </li>
              );
            }}
          </For>
        </ol>
      </Show>
    </section>
  );
}
