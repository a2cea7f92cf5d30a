// The enforcer's latest decision on the pool's rules, in words: why (the structured
// reason, worded as Activity words it: a held decision reads "wanted 2, kept 6", not as a
// move), the count it holds or moves to, the cost of the move, each clamp that changed
// the count (what was asked for and what was kept) and what every rule said: its reading
// is the last minute's mean, so a custom metric's latest reading stands beside it. Updated in place each refresh (the view's store is
// reconciled), so nothing here is rebuilt while it is read.
//
// Stable selectors (see views/rules.tsx):
//   [data-testid="rules-decision"] (data-state="none|steady|change", data-desired)
//   [data-testid="rules-decision-reason"] [data-testid="rules-decision-counts"]
//   li[data-testid="rules-decision-clamp"]  li[data-testid="rules-decision-rule"][data-rule]

import { For, Show, type JSX } from "solid-js";
import type { Decision, MetricValue, RulesMode, WordedRuleStatus as RuleStatus } from "../../bindings";
import { t } from "../../i18n";
import { formatWhen, signedPerHour } from "../../pool";
import { clampCause, decisionText, ruleNumber, ruleStatusText } from "../../reasons";

/** The metric a rule's status read, where it read one. */
function statusMetric(status: RuleStatus): string | null {
  return "metric" in status && status.kind !== "no_data" && status.kind !== "stale" ? status.metric : null;
}

export function LatestDecision(props: {
  decision: Decision | null;
  mode: RulesMode | null;
  /** The custom metrics' latest readings, put beside a rule's mean. */
  metrics: readonly MetricValue[];
  now: number;
}): JSX.Element {
  const latest = (status: RuleStatus): MetricValue | null => {
    const name = statusMetric(status);
    const found = name === null ? undefined : props.metrics.find((m) => m.name === name);
    return found && found.value !== null && found.at_ms !== null ? found : null;
  };
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
              {decisionText(d())}
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
                <For each={d().clamps}>
                  {(clamp) => (
                    <li data-testid="rules-decision-clamp">
                      {t("rules.decision.clamp", {
                        cause: clampCause(clamp, d().reason.kind === "held" || d().reason.kind === "rule" ? (d().reason as { rule: string }).rule : null),
                        from: clamp.from_gpus,
                        to: clamp.to_gpus,
                      })}
                    </li>
                  )}
                </For>
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
                      <Show when={latest(outcome.status)}>
                        {(m) => (
                          <span class="hint" data-testid="rules-decision-latest">
                            {" · "}
                            {t("rules.decision.latest", { value: ruleNumber(m().value ?? 0), time: formatWhen(m().at_ms, props.now) })}
                          </span>
                        )}
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
