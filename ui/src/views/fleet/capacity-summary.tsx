// The Fleet's capacity summary, first on the page: one row per catalog model × region
// with the GPUs in total, free, leased by our pools, leased by others and offline, and
// the catalog's on-demand price per GPU-hour. Counted by capacity.ts from the snapshot's
// GPUs and the console's capacity facts; rows are keyed by model and region, so a tick
// changes their numbers in place.

import { createMemo, For, Show, type JSX } from "solid-js";
import { capacityRows, totals, type CapacityRow, type Counts } from "../../capacity";
import { formatCount, formatMoney } from "../../costs";
import { capacity, fleet } from "../../fleet-store";
import { t, type MessageKey } from "../../i18n";
import { regionLabel } from "./host-table";

const COUNTS: readonly { key: keyof Counts; label: MessageKey }[] = [
  { key: "total", label: "fleet.capacity.total" },
  { key: "free", label: "fleet.capacity.free" },
  { key: "ours", label: "fleet.capacity.ours" },
  { key: "others", label: "fleet.capacity.others" },
  { key: "offline", label: "fleet.capacity.offline" },
];

function CountCells(props: { counts: Counts }): JSX.Element {
  return (
    <For each={COUNTS}>
      {(column) => (
        <td class={`num count-${column.key}`} data-count={column.key} classList={{ zero: props.counts[column.key] === 0 }}>
          {formatCount(props.counts[column.key])}
        </td>
      )}
    </For>
  );
}

export function CapacitySummary(): JSX.Element {
  // Rows wait for the capacity facts (the catalog's model names and prices, which pools
  // hold each lease): drawn before them, each row showed the hosts' raw model names and
  // every lease as someone else's for a second. Drawn without them once they failed.
  const factsIn = () => capacity.facts !== null || capacity.error !== null;
  const all = createMemo(() => (factsIn() ? capacityRows(fleet.snapshot?.hosts ?? [], capacity.facts) : []));
  // Keyed by model × region: a row keeps its element while its counts move.
  const keys = createMemo(() => all().map((row) => `${row.model}\u0000${row.region}`));
  const row = (key: string): CapacityRow | undefined => all().find((r) => `${r.model}\u0000${r.region}` === key);
  const sum = createMemo(() => totals(all()));
  const currency = () => capacity.facts?.currency ?? "CNY";

  return (
    <section class="capacity card" data-testid="capacity-summary" aria-labelledby="capacity-title">
      <h2 id="capacity-title">{t("fleet.capacity.title")}</h2>
      <p class="section-lead lead">{t("fleet.capacity.lead")}</p>
      <Show when={capacity.error !== null}>
        <p class="alert alert-warn" role="status" data-testid="capacity-facts-error">
          {t("fleet.capacity.factsError")}
        </p>
      </Show>
      <Show
        when={all().length > 0}
        fallback={
          <Show
            when={factsIn()}
            fallback={
              <div class="capacity-pending" data-testid="capacity-pending" aria-hidden="true">
                <span class="skeleton-bar skeleton-line" />
                <span class="skeleton-bar skeleton-line" />
              </div>
            }
          >
            <p class="hint" data-testid="capacity-empty">
              {t("fleet.capacity.empty")}
            </p>
          </Show>
        }
      >
        <div class="table-wrap">
          <table class="capacity-table">
            <caption class="visually-hidden">{t("fleet.capacity.caption")}</caption>
            <thead>
              <tr>
                <th scope="col">{t("fleet.capacity.model")}</th>
                <th scope="col">{t("fleet.capacity.region")}</th>
                <For each={COUNTS}>
                  {(column) => (
                    <th scope="col" class="num">
                      {t(column.label)}
                    </th>
                  )}
                </For>
                <th scope="col" class="num">
                  {t("fleet.capacity.price")}
                </th>
              </tr>
            </thead>
            <tbody>
              <For each={keys()}>
                {(key) => {
                  const current = () => row(key);
                  return (
                    <Show when={current()}>
                      {(r) => (
                        <tr data-model={r().model} data-region={r().region}>
                          <th scope="row">
                            <span class="capacity-model">{r().model}</span>
                            <Show when={r().reported.some((name) => name !== r().model)}>
                              <span class="capacity-reported">
                                {t("fleet.capacity.reported", { names: r().reported.join(t("common.listSeparator")) })}
                              </span>
                            </Show>
                          </th>
                          <td>{regionLabel(r().region)}</td>
                          <CountCells counts={r()} />
                          <td class="num" data-testid="capacity-price">
                            {r().hourFen !== null ? (
                              formatMoney(r().hourFen, currency())
                            ) : (
                              <span class="muted">{r().priced ? t("common.empty") : t("fleet.capacity.unpriced")}</span>
                            )}
                          </td>
                        </tr>
                      )}
                    </Show>
                  );
                }}
              </For>
            </tbody>
            <tfoot>
              <tr data-total="">
                <th scope="row" colSpan={2}>
                  {t("fleet.capacity.all")}
                </th>
                <CountCells counts={sum()} />
                <td />
              </tr>
            </tfoot>
          </table>
        </div>
      </Show>
    </section>
  );
}
