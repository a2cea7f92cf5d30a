// This month's spend across every pool: month to date, the projection and the run rate
// against an optional monthly budget (set or cleared here, logged in Activity), one row per
// pool with its share, spot's part of it (what spot cost and saved, for a pool that had any)
// and since when its base is counted (a pool made this month pays its
// base pro rata from then: the rule is stated under the table), and a CSV export.
//
// The summary is a store reconciled by pool name, re-read when a pool changes or the log
// grows (a budget set) and every 15 s as money accrues, so a refresh changes the figures in
// place and never the budget input under the focus.
//
// Stable selectors:
//   [data-testid="spend-card"]                   data-state="loading|ready|error", data-budget-state
//   [data-testid="spend-mtd"] [data-testid="spend-projected"] [data-testid="spend-rate"] [data-testid="spend-hours"]
//   [data-testid="spend-card"] data-reads (summaries shown so far)
//   [data-testid="spend-budget-text"]            where the month stands against the budget
//   #spend-budget #spend-budget-set #spend-budget-clear   [data-testid="spend-budget-error"]
//   [data-testid="spend-table"] tr[data-pool]    cells td[data-col="pool|model|gpus|base|from|mtd|projected|rate|spot|share"]
//   #spend-export  [data-testid="spend-export-status"] data-path  [data-testid="spend-error"]

import { denial } from "../../access";
import { createSignal, For, onCleanup, Show, type JSX } from "solid-js";
import { createStore, reconcile } from "solid-js/store";
import { commands, type SpendSummary } from "../../bindings";
import { formatCount, formatMoney } from "../../costs";
import { t } from "../../i18n";
import { priceProblemText } from "../../reasons";
import { call, fieldOf, ipcError } from "../../ipc";
import { formatGpuHours, parseYuan, perHour, termText, yuanInput } from "../../pool";
import { baseFromText, budgetText, meterPct, shareText } from "../../spend";
import { spotSpendText } from "../../spot";
import { createUnsaved } from "../../unsaved";
import { DiscardQuestion } from "../discard-question";
import { ErrorAlert } from "../error-alert";
import { activityAppended, every, poolsChanged, useLive } from "../../live";

/** Month to date accrues with time alone: read again this often between changes. */
const ACCRUES_MS = 15_000;

export function SpendCard(): JSX.Element {
  const [state, setState] = createStore<{ summary: SpendSummary | null }>({ summary: null });
  const [loadError, setLoadError] = createSignal<unknown>(null);
  const [budgetProblem, setBudgetProblem] = createSignal<string | null>(null);
  const [budgetError, setBudgetError] = createSignal<unknown>(null);
  const [busy, setBusy] = createSignal(false);
  /** Summaries shown so far (the card's data-reads: a test waits for the next). */
  const [reads, setReads] = createSignal(0);
  const [exported, setExported] = createSignal<{ path: string | null } | null>(null);
  const [exportError, setExportError] = createSignal<unknown>(null);
  let budgetInput!: HTMLInputElement;
  let typedBudget = false;
  let disposed = false;
  /** The budget as stored, in the input's words: a typed other value is unsaved (unsaved.ts). */
  const storedBudget = (): string => {
    const fen = state.summary?.budget_fen ?? null;
    return fen === null ? "" : yuanInput(fen);
  };
  const { asking, gate } = createUnsaved({
    dirty: () => typedBudget && budgetInput.value.trim() !== storedBudget().trim(),
    busy,
  });

  /** What the input last showed of the stored budget. */
  let followed = "";
  /**
   * The summary; the input follows the budget until it is changed by anything but this
   * (typed in, or emptied without an input event: a WebDriver clear blurs the field, and a
   * refresh landing before the next keys must not put the old budget back under them).
   * `settled`: the budget was just saved from the input, which follows it again.
   */
  function show(summary: SpendSummary, settled = false): void {
    setState("summary", reconcile(summary, { key: "pool", merge: true }));
    setReads((n) => n + 1);
    const untouched = !typedBudget && document.activeElement !== budgetInput && budgetInput.value === followed;
    if (settled || untouched) {
      followed = summary.budget_fen === null ? "" : yuanInput(summary.budget_fen);
      budgetInput.value = followed;
    }
  }

  async function refresh(): Promise<void> {
    const res = await call(() => commands.spendSummary());
    if (disposed) return;
    if (res.status === "ok") {
      show(res.data);
      setLoadError(null);
    } else setLoadError(res.error);
  }

  async function setBudget(clear: boolean): Promise<void> {
    if (busy()) return;
    setBudgetProblem(null);
    setBudgetError(null);
    let fen: number | null = null;
    if (!clear) {
      fen = parseYuan(budgetInput.value);
      if (fen === null || fen <= 0) {
        setBudgetProblem(t("spend.budget.invalid"));
        budgetInput.focus();
        return;
      }
    }
    setBusy(true);
    const res = await call(() => commands.setBudget(fen));
    setBusy(false);
    if (disposed) return;
    if (res.status === "ok") {
      typedBudget = false;
      show(res.data, true);
      return;
    }
    const error = ipcError(res.error);
    if (error?.kind === "invalid_input" && fieldOf(error, ["budget_fen"] as const)) setBudgetProblem(t("spend.budget.invalid"));
    else setBudgetError(res.error);
    budgetInput.focus();
  }

  async function exportCsv(): Promise<void> {
    setExportError(null);
    setExported(null);
    const res = await call(() => commands.exportSpendCsv());
    if (disposed) return;
    if (res.status === "ok") setExported({ path: res.data });
    else setExportError(res.error);
  }

  useLive(refresh, [poolsChanged(), activityAppended(), every(ACCRUES_MS)]);
  onCleanup(() => (disposed = true));

  const summary = () => state.summary;
  const dataState = () => (summary() ? "ready" : loadError() !== null ? "error" : "loading");

  return (
    <section
      class="card costs-spend"
      data-testid="spend-card"
      data-state={dataState()}
      data-budget-state={summary()?.budget_state}
      data-reads={reads()}
      aria-labelledby="spend-title"
    >
      <h2 id="spend-title">{summary() ? t("spend.title", { month: summary()!.month }) : t("spend.titleNone")}</h2>
      <p class="hint">{t("spend.lead")}</p>
      <Show when={loadError() !== null}>
        <ErrorAlert lead={t("spend.loadError")} error={loadError()} testid="spend-error" />
      </Show>
      <Show when={summary()}>
        {(s) => (
          <>
            <dl class="pool-stats pool-spend-stats spend-stats">
              <div class="pool-stat pool-stat-main">
                <dt>{t("spend.mtd")}</dt>
                <dd data-testid="spend-mtd">{formatMoney(s().month_to_date_fen)}</dd>
              </div>
              <div class="pool-stat">
                <dt>{t("spend.projected")}</dt>
                <dd data-testid="spend-projected">{formatMoney(s().projected_month_fen)}</dd>
              </div>
              <div class="pool-stat">
                <dt>{t("spend.rate")}</dt>
                <dd data-testid="spend-rate">{perHour(s().run_rate_per_hour_fen)}</dd>
              </div>
              <div class="pool-stat">
                <dt>{t("spend.hours")}</dt>
                <dd data-testid="spend-hours">{formatGpuHours(s().gpu_hours)}</dd>
              </div>
            </dl>
            <Show when={s().budget_fen !== null}>
              <div
                class={`budget-meter budget-${s().budget_state}`}
                role="img"
                aria-label={budgetText(s())}
                data-testid="spend-meter"
              >
                <span class="budget-projected" style={{ width: `${meterPct(s().projected_month_fen, s().budget_fen ?? 0)}%` }} />
                <span class="budget-spent" style={{ width: `${meterPct(s().month_to_date_fen, s().budget_fen ?? 0)}%` }} />
              </div>
            </Show>
            <p class={`budget-text budget-text-${s().budget_state}`} data-testid="spend-budget-text" aria-live="polite">
              {budgetText(s())}
            </p>
          </>
        )}
      </Show>
      <form
        class="budget-form"
        novalidate
        onSubmit={(event) => {
          event.preventDefault();
          void setBudget(false);
        }}
      >
        <div class="field">
          <label for="spend-budget">{t("spend.budget.label")}</label>
          <div class="budget-row">
            <input
              ref={budgetInput}
              id="spend-budget"
              type="text"
              class="num-input"
              inputmode="decimal"
              autocomplete="off"
              spellcheck={false}
              placeholder={t("spend.budget.placeholder")}
              aria-describedby="spend-budget-hint"
              aria-invalid={budgetProblem() !== null ? "true" : undefined}
              onInput={() => {
                typedBudget = true;
                setBudgetProblem(null);
              }}
            />
            <button type="submit" id="spend-budget-set" class="btn" disabled={busy() || denial("budget") !== null} title={denial("budget") ?? undefined}>
              {t("spend.budget.set")}
            </button>
            <Show when={summary()?.budget_fen !== null && summary()?.budget_fen !== undefined}>
              <button
                type="button"
                id="spend-budget-clear"
                class="btn btn-quiet"
                disabled={busy() || denial("budget") !== null}
                title={denial("budget") ?? undefined}
                onClick={() => void setBudget(true)}
              >
                {t("spend.budget.clear")}
              </button>
            </Show>
          </div>
          <p class="field-hint" id="spend-budget-hint">
            {t("spend.budget.hint")}
          </p>
          <Show when={asking()}>
            <DiscardQuestion id="spend-budget" onDiscard={() => gate.discard()} onKeep={() => gate.keep()} />
          </Show>
          <div class="field-error-box">
            <Show when={budgetProblem()}>
              {(problem) => (
                <p class="field-error" role="alert" data-testid="spend-budget-error">
                  <span class="alert-line">{problem()}</span>
                </p>
              )}
            </Show>
          </div>
        </div>
        <Show when={budgetError() !== null}>
          <ErrorAlert lead={t("spend.budget.error")} error={budgetError()} testid="spend-budget-error" />
        </Show>
      </form>
      <Show when={summary()}>
        {(s) => (
          <Show when={s().pools.length > 0} fallback={<p class="hint" data-testid="spend-empty">{t("spend.noPools")}</p>}>
            <div class="table-wrap">
              <table class="hosts spend-table" data-testid="spend-table">
                <caption class="visually-hidden">{t("spend.caption")}</caption>
                <thead>
                  <tr>
                    <th scope="col">{t("spend.col.pool")}</th>
                    <th scope="col">{t("spend.col.model")}</th>
                    <th scope="col" class="num">{t("spend.col.gpus")}</th>
                    <th scope="col">{t("spend.col.base")}</th>
                    <th scope="col">{t("spend.col.from")}</th>
                    <th scope="col" class="num">{t("spend.col.mtd")}</th>
                    <th scope="col" class="num">{t("spend.col.projected")}</th>
                    <th scope="col" class="num">{t("spend.col.rate")}</th>
                    <th scope="col" class="num">{t("spend.col.spot")}</th>
                    <th scope="col" class="num">{t("spend.col.share")}</th>
                  </tr>
                </thead>
                <tbody>
                  <For each={s().pools}>
                    {(row) => (
                      <tr data-pool={row.pool}>
                        <td data-col="pool">{row.pool}</td>
                        <td data-col="model">{row.model}</td>
                        <td data-col="gpus" class="num">{formatCount(row.actual_gpus)}</td>
                        <td data-col="base">
                          {row.base_gpus > 0 ? t("spend.base.count", { n: formatCount(row.base_gpus), term: termText(row.term) }) : t("common.empty")}
                        </td>
                        <td data-col="from">{baseFromText(row, s().month)}</td>
                        <Show
                          when={row.spend}
                          fallback={
                            <td data-col="mtd" colspan={5} class="spend-problem">
                              {t("spend.unpriced", { message: row.spend_problem ? priceProblemText(row.spend_problem) : "" })}
                            </td>
                          }
                        >
                          {(spend) => (
                            <>
                              <td data-col="mtd" class="num">{formatMoney(spend().month_to_date_fen)}</td>
                              <td data-col="projected" class="num">{formatMoney(spend().projected_month_fen)}</td>
                              <td data-col="rate" class="num">{perHour(spend().run_rate_per_hour_fen)}</td>
                              <td data-col="spot" class="num" data-spot-fen={spend().spot_fen ?? 0} data-saved-fen={spend().spot_saved_fen ?? 0}>
                                {spotSpendText(spend()) ?? t("common.empty")}
                              </td>
                              <td data-col="share" class="num">{shareText(row, s())}</td>
                            </>
                          )}
                        </Show>
                      </tr>
                    )}
                  </For>
                </tbody>
              </table>
            </div>
            <p class="hint spend-rule" data-testid="spend-rule">
              {t("spend.rule")}
            </p>
          </Show>
        )}
      </Show>
      <div class="form-actions spend-actions">
        <button type="button" id="spend-export" class="btn" disabled={summary() === null} onClick={() => void exportCsv()}>
          {t("spend.export")}
        </button>
        <p class="export-status" role="status" data-testid="spend-export-status" data-path={exported()?.path ?? undefined}>
          {exported() === null ? "" : exported()!.path === null ? t("spend.exportCancelled") : t("spend.exported", { path: exported()!.path! })}
        </p>
      </div>
      <Show when={exportError() !== null}>
        <ErrorAlert lead={t("spend.exportError")} error={exportError()} testid="spend-error" />
      </Show>
    </section>
  );
}
