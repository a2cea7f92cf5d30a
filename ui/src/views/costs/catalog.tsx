// The price catalog card: where the prices in use came from, its import (a file, a drop or
// pasted text; a refused file lists every problem in place), its warnings and its prices.
//
// Stable selectors (see views/costs.tsx for the whole view's):
//   [data-testid="costs-catalog"]  [data-testid="catalog-source"] data-source="demo|imported"
//   #catalog-file  #catalog-paste (details) #catalog-text #catalog-import-text
//   [data-testid="catalog-status"]  [data-testid="catalog-problems"] li[data-entry][data-field]
//   [data-testid="catalog-warnings"]  [data-testid="catalog-error"]
//   [data-testid="catalog-table"] tr[data-model][data-region] td[data-col="hour|day|…"]

import { denial } from "../../access";
import { For, Show, type JSX } from "solid-js";
import type { CatalogProblem, CatalogRow, CatalogView } from "../../bindings";
import { formatCount, formatMoney, problemPlace } from "../../costs";
import { t, type MessageKey } from "../../i18n";
import { ErrorAlert } from "../error-alert";
import { FilePicker } from "./file-picker";
import { costsSentence, type CatalogOutcome, type Costs } from "./state";

/** The price columns: the heading, the cell's data-col, and the row's price. */
const PRICE_COLUMNS: readonly { key: MessageKey; col: string; fen: (row: CatalogRow) => number | null }[] = [
  { key: "costs.col.hour", col: "hour", fen: (row) => row.hour_fen },
  { key: "costs.col.day", col: "day", fen: (row) => row.day_fen },
  { key: "costs.col.week", col: "week", fen: (row) => row.week_fen },
  { key: "costs.col.month", col: "month", fen: (row) => row.month_fen },
  { key: "costs.col.year", col: "year", fen: (row) => row.year_fen },
  { key: "costs.col.spot", col: "spot", fen: (row) => row.spot_hour_fen },
  { key: "costs.col.reserved", col: "reserved", fen: (row) => row.reserved_hour_fen },
];

const PASTE_PLACEHOLDER = 'currency = "CNY"\n\n[[price]]\nmodel = "A100"\nregion = "cn-north"\nhour = 12.50\nmonth = 5000';

function PriceCell(props: { col: string; fen: number | null; currency: string }): JSX.Element {
  return (
    <Show
      when={props.fen !== null}
      fallback={
        <td class="num not-offered" data-col={props.col} title={t("costs.catalog.notOffered")}>
          <span aria-hidden="true">{t("common.empty")}</span>
          <span class="visually-hidden">{t("costs.catalog.notOffered")}</span>
        </td>
      }
    >
      <td class="num" data-col={props.col}>
        {formatMoney(props.fen, props.currency)}
      </td>
    </Show>
  );
}

function ProblemList(props: { problems: readonly CatalogProblem[] }): JSX.Element {
  return (
    <ul class="problem-list">
      <For each={props.problems}>
        {(p) => (
          <li data-entry={p.entry ?? ""} data-field={p.field ?? ""}>
            <code class="problem-place">{problemPlace(p)}</code>
            <span class="problem-message" lang="en">
              {p.message}
            </span>
          </li>
        )}
      </For>
    </ul>
  );
}

function Head(props: { catalog: CatalogView | null }): JSX.Element {
  return (
    <div class="catalog-head">
      <h2 id="costs-catalog-title">{t("costs.catalog.title")}</h2>
      <Show when={props.catalog}>
        {(catalog) => (
          <>
            <span
              class={`badge ${catalog().source === "imported" ? "badge-imported" : "badge-soft"}`}
              data-testid="catalog-source"
              data-source={catalog().source}
              title={catalog().source === "demo" ? t("costs.catalog.sourceDemoHint") : undefined}
            >
              {t(catalog().source === "imported" ? "costs.catalog.imported" : "costs.catalog.demo")}
            </span>
            {/* The built-in catalog's own name is its file's English: the badge names it. */}
            <Show when={catalog().source === "imported" && catalog().name}>
              {(name) => (
                <span class="catalog-name" data-testid="catalog-name">
                  {name()}
                </span>
              )}
            </Show>
            <span class="catalog-currency">{t("costs.catalog.currency", { currency: catalog().currency })}</span>
          </>
        )}
      </Show>
    </div>
  );
}

/** A refused import: every problem, each with its entry and field. */
function Refused(props: { outcome: Extract<CatalogOutcome, { kind: "refused" }> }): JSX.Element {
  const count = () => props.outcome.problems.length;
  return (
    <div class="alert alert-error catalog-problems" role="alert" data-testid="catalog-problems" data-count={count()}>
      <p class="alert-line">
        {count() === 1
          ? t("costs.catalog.refusedOne", { name: props.outcome.name })
          : t("costs.catalog.refusedMany", { name: props.outcome.name, count: formatCount(count()) })}
      </p>
      <ProblemList problems={props.outcome.problems} />
      <Show when={props.outcome.warnings.length > 0}>
        <p class="alert-line">{t("costs.catalog.refusedWarnings")}</p>
        <ProblemList problems={props.outcome.warnings} />
      </Show>
    </div>
  );
}

function Prices(props: { catalog: CatalogView }): JSX.Element {
  return (
    <Show when={props.catalog.rows.length > 0} fallback={<p class="hint">{t("costs.catalog.empty")}</p>}>
      <div class="table-wrap">
        <table class="hosts prices" data-testid="catalog-table">
          <caption class="visually-hidden">{t("costs.catalog.caption", { currency: props.catalog.currency })}</caption>
          <thead>
            <tr>
              <th scope="col">{t("costs.col.model")}</th>
              <th scope="col">{t("costs.col.region")}</th>
              <For each={PRICE_COLUMNS}>
                {(column) => (
                  <th scope="col" class="num">
                    {t(column.key)}
                  </th>
                )}
              </For>
            </tr>
          </thead>
          <tbody>
            <For each={props.catalog.rows}>
              {(row) => (
                <tr data-model={row.model} data-region={row.region}>
                  <th scope="row">{row.model}</th>
                  <td data-col="region">{row.region}</td>
                  <For each={PRICE_COLUMNS}>
                    {(column) => <PriceCell col={column.col} fen={column.fen(row)} currency={props.catalog.currency} />}
                  </For>
                </tr>
              )}
            </For>
          </tbody>
        </table>
      </div>
    </Show>
  );
}

export function Catalog(props: { costs: Costs }): JSX.Element {
  const costs = props.costs;
  let pasted!: HTMLTextAreaElement;
  const acceptedText = (): string | null => {
    const outcome = costs.catalogOutcome();
    return outcome?.kind === "accepted"
      ? t("costs.catalog.accepted", { name: outcome.name, rows: formatCount(outcome.rows) })
      : null;
  };
  const refused = () => {
    const outcome = costs.catalogOutcome();
    return outcome?.kind === "refused" ? outcome : null;
  };
  return (
    <section
      ref={(el) => (costs.refs.catalogCard = el)}
      class="card costs-catalog"
      classList={{ "drag-over": costs.dragging() === "catalog" }}
      data-testid="costs-catalog"
      aria-labelledby="costs-catalog-title"
      aria-busy={costs.importing()}
    >
      <Head catalog={costs.catalog()} />
      <p class="hint section-lead">{t("costs.catalog.lead")}</p>
      <div class="catalog-actions">
        <FilePicker
          id="catalog-file"
          accept=".toml,application/toml,text/plain"
          label={t("costs.catalog.import")}
          disabled={costs.importing() || denial("catalog") !== null}
          onFile={(file) => void costs.loadCatalogFile(file)}
        />
        <span class="hint">{denial("catalog") ?? t("costs.catalog.dropHint")}</span>
      </div>
      <details class="catalog-paste" id="catalog-paste">
        <summary>{t("costs.catalog.paste")}</summary>
        <div class="field">
          <label for="catalog-text">{t("costs.catalog.pasteLabel")}</label>
          <textarea
            ref={pasted}
            id="catalog-text"
            class="mono"
            rows={8}
            spellcheck={false}
            autocomplete="off"
            placeholder={PASTE_PLACEHOLDER}
          />
        </div>
        <div class="form-actions">
          <button
            type="button"
            id="catalog-import-text"
            class="btn"
            disabled={costs.importing() || denial("catalog") !== null}
            title={denial("catalog") ?? undefined}
            onClick={() => void costs.importCatalog(pasted.value, t("costs.catalog.pasted"))}
          >
            {costs.importing() ? t("costs.catalog.importing") : t("costs.catalog.importText")}
          </button>
        </div>
      </details>
      <p class="catalog-status" role="status" data-testid="catalog-status">
        {acceptedText()}
      </p>
      <div class="catalog-error-box">
        <Show when={costs.catalogError()} keyed>
          {(problem) =>
            problem.kind === "read" ? (
              <p class="alert alert-error" role="alert" data-testid="catalog-error">
                {t(problem.problem.key, problem.problem.params)}
              </p>
            ) : (
              <ErrorAlert lead={t(problem.lead)} error={problem.error} testid="catalog-error" sentenceFor={costsSentence}>
                <Show when={problem.retry}>
                  <button type="button" class="btn btn-small" onClick={() => void costs.loadCatalog()}>
                    {t("hosts.retry")}
                  </button>
                </Show>
              </ErrorAlert>
            )
          }
        </Show>
      </div>
      <div class="catalog-outcome">
        <Show when={refused()}>{(outcome) => <Refused outcome={outcome()} />}</Show>
      </div>
      <div class="catalog-warnings-box">
        <Show when={(costs.catalog()?.warnings.length ?? 0) > 0}>
          <div class="alert alert-warn" data-testid="catalog-warnings" data-count={costs.catalog()?.warnings.length ?? 0}>
            <p class="alert-line">{t("costs.catalog.warnings")}</p>
            <ProblemList problems={costs.catalog()?.warnings ?? []} />
          </div>
        </Show>
      </div>
      <div class="catalog-table-box">
        <Show
          when={costs.catalog()}
          fallback={
            <Show when={costs.catalogLoadError() === null}>
              <p class="loading">{t("costs.catalog.loading")}</p>
            </Show>
          }
        >
          {(catalog) => <Prices catalog={catalog()} />}
        </Show>
      </div>
    </section>
  );
}
