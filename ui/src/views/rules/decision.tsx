// The enforcer's latest decision on the pool's rules, in words: why (the structured
// reason), the count it holds or moves to, the cost of the move, each clamp that changed
// the count and what every rule said. Updated in place each refresh (the view's store is
// reconciled), so nothing here is rebuilt while it is read.
//
// Stable selectors (see views/rules.tsx):
//   [data-testid="rules-decision"] (data-state="none|steady|change", data-desired)
//   [data-testid="rules-decision-reason"] [data-testid="rules-decision-counts"]
//   li[data-testid="rules-decision-clamp"]  li[data-testid="rules-decision-rule"][data-rule]

import { For, Show, type JSX } from "solid-js";
import type { Decision, RulesMode } from "../../bindings";
import { t } from "../../i18n";
import { formatWhen, signedPerHour } from "../../pool";
import { clampText, decisionReasonText, ruleStatusText } from "../../reasons";

export function LatestDecision(props: { decision: Decision | null; mode: RulesMode | null; now: number }): JSX.Element {
  const state = (): "none" | "steady" | "change" => {
    const d = props.decision;
    if (!d) return "none";
    return d.desired_gpus === d.current_gpus ? "steady" : "change";
  };
  return (
    <section
      class="card rules-decision"
      data-testid="rules-decision"
      data-state={state()}
      data-desired={props.decision?.desired_gpus}
      aria-labelledby="rules-decision-title"
    >
      <h2 id="rules-decision-title">{t("rules.decision.title")}</h2>
      <Show
        when={props.decision}
        fallback={<p class="hint">{t(props.mode === "disabled" ? "rules.decision.disabled" : "rules.decision.none")}</p>}
      >
        {(d) => (
          <>
            <p class="rules-decision-reason" data-testid="rules-decision-reason">
              <Show when={props.mode === "shadow"}>
                <span class="badge badge-soft">{t("rules.decision.shadow")}</span>{" "}
              </Show>
              {decisionReasonText(d().reason)}
            </p>
            <p class="hint" data-testid="rules-decision-counts">
              {state() === "change"
                ? t("rules.decision.moves", { from: d().current_gpus, to: d().desired_gpus, when: formatWhen(d().at_ms, props.now) })
                : t("rules.decision.holds", { gpus: d().current_gpus, when: formatWhen(d().at_ms, props.now) })}
              <Show when={state() === "change" && d().cost_delta_per_hour_fen !== null}>
                {" "}
                {t("rules.decision.cost", { delta: signedPerHour(d().cost_delta_per_hour_fen) })}
              </Show>
            </p>
            <Show when={d().clamps.length > 0}>
              <h3>{t("rules.decision.clamps")}</h3>
              <ul class="rules-decision-list">
                <For each={d().clamps}>{(clamp) => <li data-testid="rules-decision-clamp">{clampText(clamp)}</li>}</For>
              </ul>
            </Show>
            <Show when={d().rules.length > 0}>
              <h3>{t("rules.decision.rules")}</h3>
              <ul class="rules-decision-list">
                <For each={d().rules}>
                  {(outcome) => (
                    <li data-testid="rules-decision-rule" data-rule={outcome.rule}>
                      <span class="rule-name mono">{outcome.rule}</span>{" "}
                      <span class="rule-status">{ruleStatusText(outcome.status)}</span>
                      <Show when={outcome.recommended_gpus !== null}>
                        <span class="hint">{` ${t("rules.decision.recommends", { gpus: outcome.recommended_gpus ?? 0 })}`}</span>
                      </Show>
                    </li>
                  )}
                </For>
              </ul>
            </Show>
          </>
        )}
      </Show>
    </section>
  );
}
