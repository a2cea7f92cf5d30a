// The comparison card: what was compared, whether the demand changed since, the
// recommendation in words, the plans as a bar chart (SVG drawn in Rust, redrawn on theme
// changes) and as a table.
//
// Stable selectors (see views/costs.tsx for the whole view's):
//   [data-testid="costs-result"] data-state="idle|pending|ready"  [data-testid="costs-summary"]
//   [data-testid="costs-stale"]  [data-testid="costs-recommendation"] data-kind data-base
//   data-saving-pct data-cheaper-overlay, [data-testid="costs-rec-headline"], [data-testid="costs-rec-details"] li
//   [data-testid="costs-chart"] svg data-theme

import { createMemo, For, Show, type JSX } from "solid-js";
import type { PlanComparisonView } from "../../bindings";
import { formatCount, gpus, recommendationText } from "../../costs";
import { describeError } from "../../format";
import { t } from "../../i18n";
import { PlanTable, SkippedPlans } from "./plan-table";
import { SvgImage } from "../svg-image";
import type { Costs } from "./state";

function Recommendation(props: { view: PlanComparisonView }): JSX.Element {
  const rec = () => props.view.recommendation;
  const words = createMemo(() => recommendationText(props.view));
  return (
    <div
      class="recommendation"
      data-testid="costs-recommendation"
      data-kind={rec().kind}
      data-base={rec().base_gpus}
      data-saving-pct={rec().saving_pct}
      data-cheaper-overlay={rec().cheaper_overlay?.overlay ?? ""}
    >
      <h3>{t("costs.rec.title")}</h3>
      <p class="rec-headline" data-testid="costs-rec-headline" aria-live="polite">
        {words().headline}
      </p>
      <ul class="rec-details" data-testid="costs-rec-details">
        <For each={words().details}>{(detail) => <li>{detail}</li>}</For>
      </ul>
    </div>
  );
}

function Chart(props: { costs: Costs; view: PlanComparisonView }): JSX.Element {
  return (
    <figure class="plan-chart">
      <figcaption>{t("costs.chart.caption", { currency: props.view.currency })}</figcaption>
      <div class="chart-status">
        <Show when={props.costs.chartError() !== null}>
          <p class="alert alert-warn" role="alert">
            {t("costs.chart.error", { message: describeError(props.costs.chartError()) })}
          </p>
        </Show>
      </div>
      <SvgImage svg={props.view.chart_svg} label={t("costs.chart.alt")} testid="costs-chart" theme={props.costs.chartTheme()} />
    </figure>
  );
}

export function CompareResult(props: { costs: Costs }): JSX.Element {
  const costs = props.costs;
  const state = () => (costs.pending() ? "pending" : costs.comparison() ? "ready" : "idle");
  return (
    <section
      ref={(el) => (costs.refs.resultCard = el)}
      class="card costs-result"
      data-testid="costs-result"
      data-state={state()}
      aria-busy={costs.pending()}
      aria-labelledby="costs-result-title"
      hidden={costs.comparison() === null}
    >
      <h2 id="costs-result-title">{t("costs.result.title")}</h2>
      <div class="costs-result-body">
        <Show when={costs.comparison()}>
          {(view) => (
            <>
              <p class="result-summary" data-testid="costs-summary">
                {t("costs.result.summary", {
                  model: view().model,
                  region: view().region,
                  hours: formatCount(view().hours),
                  peak: gpus(view().peak_gpus),
                  work: formatCount(view().used_gpu_hours),
                })}
              </p>
              <Show when={costs.note()}>
                {(note) => (
                  <p class="alert alert-info" role="status">
                    {t(note())}
                  </p>
                )}
              </Show>
              <Show when={costs.stale()}>
                <p class="alert alert-info" data-testid="costs-stale">
                  {t("costs.result.stale")}
                </p>
              </Show>
              <Recommendation view={view()} />
              <Chart costs={costs} view={view()} />
              <PlanTable plans={view().plans} currency={view().currency} />
              <SkippedPlans skipped={view().skipped} />
            </>
          )}
        </Show>
      </div>
    </section>
  );
}
