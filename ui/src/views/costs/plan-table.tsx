// Every plan priced over the demand, as a table (the recommended one marked), and the
// plans that were not evaluated, each with its reason.
//
// Stable selectors (see views/costs.tsx for the whole view's):
//   [data-testid="costs-plans"] tr[data-plan="KIND"] (data-recommended)
//     td[data-col="base|subscription|overlay|total|saving|hours"]
//   [data-testid="costs-skipped"] li[data-plan][data-reason]

import { For, Show, type JSX } from "solid-js";
import type { PlanRow, SkippedPlanRow } from "../../bindings";
import { formatCount, formatMoney, formatPct, planName } from "../../costs";
import { t } from "../../i18n";
import { skipReasonText } from "../../reasons";

function Plan(props: { plan: PlanRow; currency: string }): JSX.Element {
  const saving = () => props.plan.saving_fen;
  return (
    <tr
      data-plan={props.plan.kind}
      data-recommended={props.plan.recommended ? "true" : undefined}
      class={props.plan.recommended ? "recommended" : undefined}
    >
      <th scope="row">
        <span class="plan-name">{planName(props.plan.kind)}</span>
        <Show when={props.plan.recommended}>
          <span class="badge badge-best">{t("costs.recommended")}</span>
        </Show>
      </th>
      <td class="num" data-col="base">
        {formatCount(props.plan.base_gpus)}
      </td>
      <td class="num" data-col="subscription">
        {formatMoney(props.plan.base_fen, props.currency)}
      </td>
      <td class="num" data-col="overlay">
        {formatMoney(props.plan.overlay_fen, props.currency)}
      </td>
      <td class="num total" data-col="total">
        {formatMoney(props.plan.total_fen, props.currency)}
      </td>
      <td class={`num saving ${saving() < 0 ? "dearer" : saving() > 0 ? "cheaper" : ""}`} data-col="saving">
        <span>{formatMoney(saving(), props.currency)}</span>
        <span class="pct">{formatPct(props.plan.saving_pct)}</span>
      </td>
      <td class="num" data-col="hours">
        <span>{formatCount(props.plan.paid_gpu_hours)}</span>
        <Show when={props.plan.idle_paid_gpu_hours > 0}>
          <span class="idle">{t("costs.idle", { hours: formatCount(props.plan.idle_paid_gpu_hours) })}</span>
        </Show>
      </td>
    </tr>
  );
}

export function PlanTable(props: { plans: PlanRow[]; currency: string }): JSX.Element {
  return (
    <div class="table-wrap">
      <table class="hosts plans" data-testid="costs-plans">
        <caption class="visually-hidden">{t("costs.plans.caption")}</caption>
        <thead>
          <tr>
            <th scope="col">{t("costs.col.plan")}</th>
            <th scope="col" class="num">
              {t("costs.col.base")}
            </th>
            <th scope="col" class="num">
              {t("costs.col.subscription")}
            </th>
            <th scope="col" class="num">
              {t("costs.col.overlay")}
            </th>
            <th scope="col" class="num">
              {t("costs.col.total")}
            </th>
            <th scope="col" class="num">
              {t("costs.col.saving")}
            </th>
            <th scope="col" class="num">
              {t("costs.col.hours")}
            </th>
          </tr>
        </thead>
        <tbody>
          <For each={props.plans}>{(plan) => <Plan plan={plan} currency={props.currency} />}</For>
        </tbody>
      </table>
    </div>
  );
}

export function SkippedPlans(props: { skipped: SkippedPlanRow[] }): JSX.Element {
  return (
    <Show when={props.skipped.length > 0}>
      <div class="skipped">
        <h3 id="costs-skipped-title">{t("costs.skipped.title")}</h3>
        <ul data-testid="costs-skipped" aria-labelledby="costs-skipped-title">
          <For each={props.skipped}>
            {(skip) => (
              <li data-plan={skip.kind} data-reason={skip.reason.kind}>
                <span class="plan-name">{planName(skip.kind)}</span>
                <span class="skip-reason">{skipReasonText(skip.reason)}</span>
              </li>
            )}
          </For>
        </ul>
      </div>
    </Show>
  );
}
