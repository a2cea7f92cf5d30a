// The custom metrics the saved rules name: each one's last value, how old it is and
// whether it is stale (older than its limit, or never seen), with what that means: a
// stale metric puts the rules on it idle. Rows are reconciled by metric name.
//
// Stable selectors (see views/rules.tsx):
//   [data-testid="rules-metrics"]  tr[data-metric] (data-stale="true|false")
//     td[data-col="value|age|state"]

import { For, Show, type JSX } from "solid-js";
import type { MetricValue } from "../../bindings";
import { t } from "../../i18n";
import { ruleNumber } from "../../reasons";
import { ageText } from "../../rules";

export function MetricsTable(props: { metrics: MetricValue[]; now: number }): JSX.Element {
  return (
    <section class="card rules-metrics" data-testid="rules-metrics" aria-labelledby="rules-metrics-title">
      <h2 id="rules-metrics-title">{t("rules.metrics.title")}</h2>
      <p class="hint section-lead">{t("rules.metrics.staleNote")}</p>
      <Show when={props.metrics.length > 0} fallback={<p class="hint">{t("rules.metrics.none")}</p>}>
        <div class="table-wrap">
          <table class="hosts rules-table">
            <thead>
              <tr>
                <th scope="col">{t("rules.metrics.name")}</th>
                <th scope="col" class="num">
                  {t("rules.metrics.value")}
                </th>
                <th scope="col" class="num">
                  {t("rules.metrics.age")}
                </th>
                <th scope="col">{t("rules.metrics.state")}</th>
              </tr>
            </thead>
            <tbody>
              <For each={props.metrics}>
                {(metric) => (
                  <tr data-metric={metric.name} data-stale={metric.stale ? "true" : "false"} classList={{ stale: metric.stale }}>
                    <th scope="row" class="mono">
                      {metric.name}
                    </th>
                    <td class="num" data-col="value">
                      {metric.value === null ? t("common.empty") : ruleNumber(metric.value)}
                    </td>
                    <td class="num" data-col="age">
                      {ageText(metric.at_ms, props.now)}
                    </td>
                    <td data-col="state">
                      {metric.stale
                        ? t(metric.value === null ? "rules.metrics.never" : "rules.metrics.stale", { limit: metric.stale_after_minutes })
                        : t("rules.metrics.fresh", { limit: metric.stale_after_minutes })}
                    </td>
                  </tr>
                )}
              </For>
            </tbody>
          </table>
        </div>
      </Show>
    </section>
  );
}
