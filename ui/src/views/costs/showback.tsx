// Showback: a month's spend per team, each team's pools beneath it and its idle base (the
// subscribed base paid for and not held) on a line of its own, then the total, which is
// the spend card's month to date for this month. A month picker goes back a year; this
// month is re-read when a pool changes or the log grows and every 15 s as money accrues;
// a month that is over never moves.
//
// Stable selectors:
//   [data-testid="showback-card"]                data-state="loading|ready|error", data-month
//   #showback-month                              the month picker (select of YYYY-MM)
//   [data-testid="showback-table"] tr[data-row="team|pool|unpriced|idle"][data-team][data-pool]
//     cells td[data-col="name|hours|overlay|used|idle|total"]
//   [data-testid="showback-total"]               the total row
//   [data-testid="showback-error"]

import { createSignal, For, Match, onCleanup, Show, Switch, type JSX } from "solid-js";
import { commands, type Showback, type ShowbackLine } from "../../bindings";
import { formatMoney } from "../../costs";
import { t } from "../../i18n";
import { call } from "../../ipc";
import { formatGpuHours } from "../../pool";
import { priceProblemText } from "../../reasons";
import { idleShare, monthsUpTo, showbackRows, teamName } from "../../showback";
import { ErrorAlert } from "../error-alert";
import { activityAppended, every, poolsChanged, useLive } from "../../live";

/** This month accrues with time alone: read again this often between changes. */
const ACCRUES_MS = 15_000;
/** How far back the picker goes: this month and the eleven before it. */
const MONTHS = 12;

function Amounts(props: { line: ShowbackLine }): JSX.Element {
  return (
    <>
      <td data-col="hours" class="num">{formatGpuHours(props.line.gpu_hours)}</td>
      <td data-col="overlay" class="num">{formatMoney(props.line.overlay_fen)}</td>
      <td data-col="used" class="num">{formatMoney(props.line.base_used_fen)}</td>
      <td data-col="idle" class="num">{formatMoney(props.line.idle_base_fen)}</td>
      <td data-col="total" class="num">{formatMoney(props.line.total_fen)}</td>
    </>
  );
}

export function ShowbackCard(): JSX.Element {
  const [showback, setShowback] = createSignal<Showback | null>(null);
  const [current, setCurrent] = createSignal<string | null>(null);
  const [month, setMonth] = createSignal<string | null>(null);
  const [loadError, setLoadError] = createSignal<unknown>(null);
  let disposed = false;
  let asked = 0;

  async function load(): Promise<void> {
    const ask = ++asked;
    const res = await call(() => commands.spendShowback(month()));
    if (disposed || ask !== asked) return;
    if (res.status === "ok") {
      setShowback(res.data);
      if (month() === null) setCurrent(res.data.month);
      setLoadError(null);
    } else setLoadError(res.error);
  }

  useLive(async () => {
    if (showback()?.complete !== true) await load();
  }, [poolsChanged(), activityAppended(), every(ACCRUES_MS)]);
  onCleanup(() => (disposed = true));

  const months = () => monthsUpTo(current() ?? "", MONTHS);
  const rows = () => {
    const s = showback();
    return s ? showbackRows(s, (pool) => (pool.spend_problem ? priceProblemText(pool.spend_problem) : null)) : [];
  };
  const dataState = () => (showback() ? "ready" : loadError() !== null ? "error" : "loading");

  return (
    <section class="card costs-showback" data-testid="showback-card" data-state={dataState()} data-month={showback()?.month} aria-labelledby="showback-title">
      <div class="showback-head">
        <h2 id="showback-title">{t("showback.title")}</h2>
        <div class="showback-month">
          <label for="showback-month">{t("showback.month")}</label>
          <select
            id="showback-month"
            disabled={months().length === 0}
            onChange={(event) => {
              const chosen = event.currentTarget.value;
              setMonth(chosen === current() ? null : chosen);
              void load();
            }}
          >
            <For each={months()}>
              {(m) => (
                <option value={m} selected={m === (month() ?? current())}>
                  {m === current() ? t("showback.thisMonth", { month: m }) : m}
                </option>
              )}
            </For>
          </select>
        </div>
      </div>
      <p class="hint">{t("showback.lead")}</p>
      <Show when={loadError() !== null}>
        <ErrorAlert lead={t("showback.loadError")} error={loadError()} testid="showback-error" />
      </Show>
      <Show when={showback()}>
        {(s) => (
          <Show when={s().pools.length > 0} fallback={<p class="hint" data-testid="showback-empty">{t("spend.noPools")}</p>}>
            <div class="table-wrap">
              <table class="hosts showback-table" data-testid="showback-table">
                <caption class="visually-hidden">{t("showback.caption", { month: s().month })}</caption>
                <thead>
                  <tr>
                    <th scope="col">{t("showback.col.name")}</th>
                    <th scope="col" class="num">{t("showback.col.hours")}</th>
                    <th scope="col" class="num">{t("showback.col.overlay")}</th>
                    <th scope="col" class="num">{t("showback.col.used")}</th>
                    <th scope="col" class="num">{t("showback.col.idle")}</th>
                    <th scope="col" class="num">{t("showback.col.total")}</th>
                  </tr>
                </thead>
                <tbody>
                  <For each={rows()}>
                    {(row) => (
                      <Switch>
                        <Match when={row.kind === "team" && row}>
                          {(r) => (
                            <tr class="showback-team" data-row="team" data-team={r().team}>
                              <th scope="rowgroup" data-col="name">{teamName(r().team)}</th>
                              <Amounts line={r().line} />
                            </tr>
                          )}
                        </Match>
                        <Match when={row.kind === "pool" && row}>
                          {(r) => (
                            <tr class="showback-pool" data-row="pool" data-team={r().team} data-pool={r().pool}>
                              <td data-col="name">{r().pool}</td>
                              <Amounts line={r().line} />
                            </tr>
                          )}
                        </Match>
                        <Match when={row.kind === "unpriced" && row}>
                          {(r) => (
                            <tr class="showback-pool" data-row="unpriced" data-team={r().team} data-pool={r().pool}>
                              <td data-col="name">{r().pool}</td>
                              <td colspan={5} class="spend-problem">
                                {t("spend.unpriced", { message: r().problem ?? "" })}
                              </td>
                            </tr>
                          )}
                        </Match>
                        <Match when={row.kind === "idle" && row}>
                          {(r) => (
                            <tr class="showback-idle" data-row="idle" data-team={r().team}>
                              <td data-col="name">{t("showback.idleLine")}</td>
                              <td data-col="hours" class="num">{formatGpuHours(r().line.gpu_hours)}</td>
                              <td class="num" colspan={2} />
                              <td data-col="idle" class="num">{formatMoney(r().line.idle_base_fen)}</td>
                              <td class="num" />
                            </tr>
                          )}
                        </Match>
                      </Switch>
                    )}
                  </For>
                </tbody>
                <tfoot>
                  <tr class="showback-total" data-testid="showback-total">
                    <th scope="row" data-col="name">{t("showback.total")}</th>
                    <Amounts line={s().total} />
                  </tr>
                </tfoot>
              </table>
            </div>
            <p class="hint showback-rule" data-testid="showback-rule">
              {idleShare(s().total) !== null && s().total.idle_base_fen > 0
                ? t("showback.idleShare", { share: idleShare(s().total)!, hours: formatGpuHours(s().total.idle_base_gpu_hours) })
                : ""}{" "}
              {s().complete ? t("showback.complete") : t("showback.running")} {t("showback.rule")}
            </p>
          </Show>
        )}
      </Show>
    </section>
  );
}
