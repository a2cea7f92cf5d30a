// Costs: a demand series in (dropped, picked or pasted CSV, or the FAQ-4 sample), every
// billing plan priced over it by the cost engine, the recommendation in words, the plans
// as a bar chart (SVG drawn in Rust, redrawn on theme changes) and a table, and the price
// catalog in use with its import (refused files list every problem in place).
//
// What the operator typed and the last comparison's inputs live in `memory`, outside
// the view, so they survive leaving the view and a language change (which rebuilds it).
//
// Stable selectors (end-to-end tests rely on these):
//   #view-costs                                   the view
//   [data-testid="costs-demand"]                  the demand card (a drop target for CSV files)
//     [data-testid="costs-dropzone"]              the visible drop zone; data-dragging while a file is over it
//     #costs-demand-file                          <input type=file> for a demand CSV
//     #costs-sample                               "Sample: FAQ-4 festival demand" (fills in and compares)
//     #costs-demand-text                          the CSV text (textarea)
//     [data-testid="costs-demand-status"]         role=status: "Loaded faq4.csv: 730 rows."
//     #costs-model #costs-region                  selects, filled from the catalog
//     #costs-interruptible                        checkbox: spot allowed
//     #costs-compare                              Compare
//     [data-testid="costs-error"]                 role=alert: why the comparison failed; data-kind
//       button[data-action="go-to-line"]          selects the line a demand error names
//   [data-testid="costs-result"]                  the comparison card; data-state="idle|pending|ready"
//     [data-testid="costs-summary"]               model, region, hours, peak, GPU-hours of work
//     [data-testid="costs-stale"]                 shown when the demand changed since
//     [data-testid="costs-recommendation"]        data-kind, data-base, data-saving-pct, data-cheaper-overlay
//       [data-testid="costs-rec-headline"]        the recommendation in words
//       [data-testid="costs-rec-details"] li      break-even, hourly base, cheaper overlay
//     img[data-testid="costs-chart"]              the bar chart (data:image/svg+xml), data-theme
//     [data-testid="costs-plans"]                 the plans table: tr[data-plan="KIND"] (data-recommended),
//                                                   cells td[data-col="base|subscription|overlay|total|saving|hours"]
//     [data-testid="costs-skipped"] li[data-plan] plans not evaluated, with the reason
//   [data-testid="costs-catalog"]                 the catalog card (a drop target for .toml files)
//     [data-testid="catalog-source"]              data-source="demo|imported"
//     #catalog-file                               <input type=file> "Import catalog…"
//     #catalog-paste (details) #catalog-text #catalog-import-text
//     [data-testid="catalog-status"]              role=status: "Imported …"
//     [data-testid="catalog-problems"]            role=alert: a refused import; li[data-entry][data-field] each
//     [data-testid="catalog-warnings"]            warnings of the catalog in use
//     [data-testid="catalog-error"]               role=alert: loading or importing failed
//     [data-testid="catalog-table"]               tr[data-model][data-region], td[data-col="hour|day|…"]

import { listen, type UnlistenFn } from "@tauri-apps/api/event";
import {
  commands,
  type CatalogImport,
  type CatalogProblem,
  type CatalogView,
  type ChartTheme,
  type PlanComparisonView,
  type PlanRow,
} from "../bindings";
import {
  catalogModels,
  catalogRegions,
  chartWidth,
  demandRowCount,
  fileRole,
  formatCount,
  formatMoney,
  formatPct,
  gpus,
  lineRange,
  pickPool,
  planName,
  problemPlace,
  recommendationText,
  sampleDemandCsv,
  type Phrase,
} from "../costs";
import { h, replaceChildren } from "../dom";
import { describeError, svgDataUrl } from "../format";
import { t, type MessageKey } from "../i18n";
import { call, ipcError } from "../ipc";
import { skipReasonText } from "../reasons";
import { getEffectiveTheme, onThemeChange } from "../theme";
import type { View } from "./view";

/** Files larger than this are refused before reading (a year of minutes is about 8 MB). */
const MAX_DEMAND_MB = 32;
const MAX_CATALOG_MB = 4;

const PRICE_COLUMNS: readonly MessageKey[] = [
  "costs.col.hour",
  "costs.col.day",
  "costs.col.week",
  "costs.col.month",
  "costs.col.year",
  "costs.col.spot",
  "costs.col.reserved",
];

type CompareInput = { csv: string; model: string; region: string; interruptible: boolean };

type CatalogOutcome =
  | { kind: "accepted"; name: string; rows: number }
  | { kind: "refused"; name: string; problems: CatalogProblem[]; warnings: CatalogProblem[] };

/** What outlives one view instance. */
const memory: {
  demandText: string;
  demandNote: Phrase | null;
  model: string | null;
  region: string | null;
  interruptible: boolean;
  compared: CompareInput | null;
  catalogOutcome: CatalogOutcome | null;
} = {
  demandText: "",
  demandNote: null,
  model: null,
  region: null,
  interruptible: false,
  compared: null,
  catalogOutcome: null,
};

/**
 * A failure in words: what the operator can do about it (translated, when the kind says
 * more than `lead` does), and the English detail beneath it.
 */
function explain(err: unknown): { sentence: string | null; detail: string | null; kind: string | null } {
  const ipc = ipcError(err);
  if (!ipc) return { sentence: describeError(err), detail: null, kind: null };
  const message = ipc.message.trim();
  let key: MessageKey | null = null;
  if (ipc.kind === "invalid_input" && ipc.field === "demand") key = "costs.error.demand";
  else if (ipc.kind === "invalid_input" && ipc.field === "model") key = "costs.error.pool";
  else if (ipc.kind === "invalid_catalog") key = "costs.error.catalog";
  else if (ipc.kind === "io") key = "costs.error.io";
  return { sentence: key ? t(key) : null, detail: message === "" ? null : message, kind: ipc.kind };
}

/** An alert for a failure: the lead, the sentence that helps, the English detail. */
function failureAlert(lead: MessageKey, err: unknown, testid: string, extra?: HTMLElement | null): HTMLElement {
  const explained = explain(err);
  return h(
    "div",
    { class: "alert alert-error", role: "alert", "data-testid": testid, "data-kind": explained.kind ?? "" },
    h("span", { class: "alert-line" }, explained.sentence ? `${t(lead)} ${explained.sentence}` : t(lead)),
    explained.detail ? h("span", { class: "alert-detail", lang: "en" }, `${t("costs.detail")} ${explained.detail}`) : null,
    extra ?? null,
  );
}

function phrase(p: Phrase): string {
  return t(p.key, p.params);
}

function sizeMb(bytes: number): string {
  return (bytes / (1024 * 1024)).toFixed(1);
}

/** A file's text, or a phrase saying why it could not be had. */
async function readFile(file: File, maxMb: number): Promise<{ ok: true; text: string } | { ok: false; problem: Phrase }> {
  if (file.size > maxMb * 1024 * 1024) {
    return { ok: false, problem: { key: "costs.demand.tooBig", params: { name: file.name, size: sizeMb(file.size), max: maxMb } } };
  }
  try {
    return { ok: true, text: await file.text() };
  } catch (err) {
    return { ok: false, problem: { key: "costs.demand.readError", params: { name: file.name, message: describeError(err) } } };
  }
}

function hasFiles(ev: DragEvent): boolean {
  return Array.from(ev.dataTransfer?.types ?? []).includes("Files");
}

/** A labelled <input type=file> that looks like a button and is focusable as one. */
function filePicker(id: string, accept: string, label: string, onFile: (file: File) => void): HTMLElement {
  const input = h("input", {
    type: "file",
    id,
    class: "file-input",
    accept,
    on: {
      change: () => {
        const file = input.files?.[0];
        // Cleared so that picking the same file again (after editing it) reads it again.
        input.value = "";
        if (file) onFile(file);
      },
    },
  });
  return h("label", { class: "btn file-btn", for: id }, input, h("span", null, label));
}

function priceCell(col: string, fen: number | null, currency: string): HTMLElement {
  if (fen === null) {
    return h(
      "td",
      { class: "num not-offered", "data-col": col, title: t("costs.catalog.notOffered") },
      h("span", { "aria-hidden": "true" }, t("common.empty")),
      h("span", { class: "visually-hidden" }, t("costs.catalog.notOffered")),
    );
  }
  return h("td", { class: "num", "data-col": col }, formatMoney(fen, currency));
}

export function costsView(): View {
  let catalog: CatalogView | null = null;
  let catalogLoadError: unknown = null;
  let comparison: PlanComparisonView | null = null;
  let compareSeq = 0;
  let importing = false;
  let disposed = false;
  let stale = false;

  // ---------- demand ----------

  const demandText = h("textarea", {
    id: "costs-demand-text",
    class: "mono",
    rows: 8,
    spellcheck: "false",
    autocomplete: "off",
    placeholder: "hour,demand\n0,10\n1,10\n…",
    "aria-describedby": "costs-demand-text-hint",
    value: memory.demandText,
  });
  const demandStatus = h("p", { class: "demand-status", role: "status", "data-testid": "costs-demand-status" });
  const sampleButton = h(
    "button",
    { type: "button", id: "costs-sample", class: "btn", "aria-describedby": "costs-sample-hint", on: { click: () => void useSample() } },
    t("costs.demand.sample"),
  );
  const dropzone = h(
    "div",
    { class: "dropzone", "data-testid": "costs-dropzone" },
    h("span", { class: "dropzone-icon", "aria-hidden": "true" }),
    h("span", { class: "dropzone-text" }, t("costs.demand.drop")),
    h("span", { class: "dropzone-or" }, t("costs.demand.or")),
    h(
      "span",
      { class: "btn-row" },
      filePicker("costs-demand-file", ".csv,text/csv,text/plain", t("costs.demand.choose"), (file) => void loadDemandFile(file)),
      sampleButton,
    ),
    h("span", { class: "field-hint", id: "costs-sample-hint" }, t("costs.demand.sampleHint")),
  );
  const modelSelect = h("select", { id: "costs-model", on: { change: () => onModelChange() } });
  const regionSelect = h("select", { id: "costs-region", on: { change: () => onPoolChange() } });
  const interruptible = h("input", {
    type: "checkbox",
    id: "costs-interruptible",
    checked: memory.interruptible,
    "aria-describedby": "costs-interruptible-hint",
    on: { change: () => onPoolChange() },
  });
  const compareButton = h("button", { type: "submit", id: "costs-compare", class: "btn btn-primary" }, t("costs.compare"));
  const compareError = h("div", { class: "costs-error-box" });

  const demandCard = h(
    "form",
    {
      class: "card costs-demand",
      "data-testid": "costs-demand",
      "aria-labelledby": "costs-demand-title",
      novalidate: true,
      on: {
        submit: (ev) => {
          ev.preventDefault();
          void compare(null, { focusError: true });
        },
      },
    },
    h("h2", { id: "costs-demand-title" }, t("costs.demand.title")),
    h("p", { class: "hint section-lead" }, t("costs.demand.lead")),
    dropzone,
    h(
      "div",
      { class: "field demand-field" },
      h("label", { for: "costs-demand-text" }, t("costs.demand.text")),
      demandText,
      h("p", { class: "field-hint", id: "costs-demand-text-hint" }, t("costs.demand.textHint")),
      demandStatus,
    ),
    h(
      "div",
      { class: "pool-row" },
      h("div", { class: "field" }, h("label", { for: "costs-model" }, t("costs.model")), modelSelect),
      h("div", { class: "field" }, h("label", { for: "costs-region" }, t("costs.region")), regionSelect),
      h(
        "div",
        { class: "field field-check" },
        h("label", { class: "check", for: "costs-interruptible" }, interruptible, t("costs.interruptible")),
        h("p", { class: "field-hint", id: "costs-interruptible-hint" }, t("costs.interruptibleHint")),
      ),
      h("div", { class: "compare-action" }, compareButton),
    ),
    compareError,
  );

  // ---------- result ----------

  const resultBody = h("div", { class: "costs-result-body" });
  const resultCard = h(
    "section",
    { class: "card costs-result", "data-testid": "costs-result", "data-state": "idle", "aria-labelledby": "costs-result-title", hidden: true },
    h("h2", { id: "costs-result-title" }, t("costs.result.title")),
    resultBody,
  );
  const chartImg = h("img", {
    "data-testid": "costs-chart",
    alt: t("costs.chart.alt"),
    decoding: "async",
  });
  const chartStatus = h("div", { class: "chart-status" });

  // ---------- catalog ----------

  const catalogHead = h("div", { class: "catalog-head" });
  const catalogStatus = h("p", { class: "catalog-status", role: "status", "data-testid": "catalog-status" });
  const catalogOutcomeBox = h("div", { class: "catalog-outcome" });
  const catalogWarnings = h("div", { class: "catalog-warnings-box" });
  const catalogError = h("div", { class: "catalog-error-box" });
  const catalogTableBox = h("div", { class: "catalog-table-box" });
  const catalogText = h("textarea", {
    id: "catalog-text",
    class: "mono",
    rows: 8,
    spellcheck: "false",
    autocomplete: "off",
    placeholder: 'currency = "CNY"\n\n[[price]]\nmodel = "A100"\nregion = "cn-north"\nhour = 12.50\nmonth = 5000',
  });
  const importTextButton = h(
    "button",
    { type: "button", id: "catalog-import-text", class: "btn", on: { click: () => void importCatalog(catalogText.value, t("costs.catalog.pasted")) } },
    t("costs.catalog.importText"),
  );
  const catalogPicker = filePicker("catalog-file", ".toml,application/toml,text/plain", t("costs.catalog.import"), (file) =>
    void loadCatalogFile(file),
  );
  const catalogCard = h(
    "section",
    { class: "card costs-catalog", "data-testid": "costs-catalog", "aria-labelledby": "costs-catalog-title" },
    catalogHead,
    h("p", { class: "hint section-lead" }, t("costs.catalog.lead")),
    h(
      "div",
      { class: "catalog-actions" },
      catalogPicker,
      h("span", { class: "hint" }, t("costs.catalog.dropHint")),
    ),
    h(
      "details",
      { class: "catalog-paste", id: "catalog-paste" },
      h("summary", null, t("costs.catalog.paste")),
      h(
        "div",
        { class: "field" },
        h("label", { for: "catalog-text" }, t("costs.catalog.pasteLabel")),
        catalogText,
      ),
      h("div", { class: "form-actions" }, importTextButton),
    ),
    catalogStatus,
    catalogError,
    catalogOutcomeBox,
    catalogWarnings,
    catalogTableBox,
  );

  const el = h(
    "section",
    { class: "view view-costs", id: "view-costs", "data-view": "costs", "aria-labelledby": "costs-title" },
    h("header", { class: "view-header" }, h("h1", { id: "costs-title" }, t("costs.title")), h("p", { class: "lead" }, t("costs.lead"))),
    demandCard,
    resultCard,
    catalogCard,
  );

  // ---------- demand input ----------

  function setDemandNote(note: Phrase | null, isError = false): void {
    memory.demandNote = isError ? null : note;
    demandStatus.classList.toggle("is-error", isError);
    // An unreadable file is an error: said at once, in an alert.
    demandStatus.setAttribute("role", isError ? "alert" : "status");
    replaceChildren(demandStatus, note ? phrase(note) : null);
  }

  function setDemand(text: string, note: Phrase): void {
    demandText.value = text;
    memory.demandText = text;
    setDemandNote(note);
    markStale();
    clearCompareError();
  }

  async function loadDemandFile(file: File): Promise<void> {
    const read = await readFile(file, MAX_DEMAND_MB);
    if (disposed) return;
    if (!read.ok) {
      setDemandNote(read.problem, true);
      return;
    }
    const rows = demandRowCount(read.text);
    const rowsText = t(rows === 1 ? "costs.rows.one" : "costs.rows.other", { n: formatCount(rows) });
    setDemand(read.text, { key: "costs.demand.loaded", params: { name: file.name, rows: rowsText } });
    compareButton.focus();
  }

  async function useSample(): Promise<void> {
    const csv = sampleDemandCsv();
    setDemand(csv, { key: "costs.demand.sampleLoaded", params: { rows: formatCount(demandRowCount(csv)) } });
    // The sample's figures are the seed's FAQ 4, priced as A100 in cn-north.
    if (catalog) selectPool(pickPool(catalog.rows, { model: "A100", region: "cn-north" }));
    await compare(null, { focusError: false });
  }

  demandText.addEventListener("input", () => {
    memory.demandText = demandText.value;
    setDemandNote(null);
    markStale();
  });
  demandText.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) {
      ev.preventDefault();
      void compare(null, { focusError: true });
    }
  });

  // ---------- dropping files ----------

  function dropTarget(ev: DragEvent): "catalog" | "demand" {
    return ev.target instanceof Node && catalogCard.contains(ev.target) ? "catalog" : "demand";
  }

  function showDragging(target: "catalog" | "demand" | null): void {
    dropzone.toggleAttribute("data-dragging", target === "demand");
    demandCard.classList.toggle("drag-over", target === "demand");
    catalogCard.classList.toggle("drag-over", target === "catalog");
  }

  el.addEventListener("dragover", (ev) => {
    if (!hasFiles(ev)) return;
    ev.preventDefault();
    if (ev.dataTransfer) ev.dataTransfer.dropEffect = "copy";
    showDragging(dropTarget(ev));
  });
  el.addEventListener("dragleave", (ev) => {
    if (!(ev.relatedTarget instanceof Node) || !el.contains(ev.relatedTarget)) showDragging(null);
  });
  el.addEventListener("drop", (ev) => {
    if (!hasFiles(ev)) return;
    ev.preventDefault();
    showDragging(null);
    const file = ev.dataTransfer?.files[0];
    if (!file) return;
    if (fileRole(file.name, dropTarget(ev)) === "catalog") void loadCatalogFile(file);
    else void loadDemandFile(file);
  });

  // Where the desktop shell takes file drops itself, the page never gets the file: say so
  // rather than do nothing.
  const shellDrops: UnlistenFn[] = [];
  for (const name of ["tauri://drag-drop", "tauri://drag-leave"]) {
    listen(name, () => {
      showDragging(null);
      if (name === "tauri://drag-drop" && el.isConnected) setDemandNote({ key: "costs.demand.dropBlocked" }, true);
    })
      .then((off) => {
        if (disposed) off();
        else shellDrops.push(off);
      })
      .catch(() => undefined);
  }

  // ---------- model and region ----------

  function fillSelect(select: HTMLSelectElement, values: readonly string[], selected: string | null): void {
    replaceChildren(
      select,
      values.map((v) => h("option", { value: v }, v)),
    );
    select.disabled = values.length === 0;
    if (selected !== null && values.includes(selected)) select.value = selected;
  }

  function selectPool(pool: { model: string; region: string } | null): void {
    const rows = catalog?.rows ?? [];
    fillSelect(modelSelect, catalogModels(rows), pool?.model ?? null);
    fillSelect(regionSelect, pool ? catalogRegions(rows, pool.model) : [], pool?.region ?? null);
    memory.model = pool?.model ?? null;
    memory.region = pool?.region ?? null;
  }

  function onModelChange(): void {
    if (!catalog) return;
    selectPool(pickPool(catalog.rows, { model: modelSelect.value, region: memory.region }));
    onPoolChange();
  }

  function onPoolChange(): void {
    memory.model = modelSelect.value || null;
    memory.region = regionSelect.value || null;
    memory.interruptible = interruptible.checked;
    // With a comparison on screen, a new model, region or spot choice is priced at once.
    if (comparison && demandText.value.trim() !== "") void compare(null, { focusError: false });
  }

  // ---------- comparing ----------

  function clearCompareError(): void {
    replaceChildren(compareError);
  }

  function markStale(): void {
    const changed = memory.compared !== null && memory.compared.csv !== demandText.value;
    if (changed !== stale) {
      stale = changed;
      renderResult();
    }
  }

  function showCompareError(err: unknown): void {
    const ipc = ipcError(err);
    const line = ipc?.field === "demand" ? ipc.line : null;
    replaceChildren(
      compareError,
      failureAlert(
        "costs.error.compare",
        err,
        "costs-error",
        line !== null
          ? h(
              "button",
              { type: "button", class: "btn btn-small", "data-action": "go-to-line", on: { click: () => goToLine(line) } },
              t("costs.goToLine", { line }),
            )
          : null,
      ),
    );
  }

  function showInputProblem(key: MessageKey, focus: HTMLElement): void {
    replaceChildren(
      compareError,
      h("p", { class: "alert alert-error", role: "alert", "data-testid": "costs-error", "data-kind": "client" }, t(key)),
    );
    focus.focus();
  }

  function goToLine(line: number): void {
    const range = lineRange(demandText.value, line);
    demandText.focus();
    if (range) demandText.setSelectionRange(range[0], range[1]);
  }

  function setPending(pending: boolean): void {
    compareButton.disabled = pending;
    replaceChildren(compareButton, t(pending ? "costs.comparing" : "costs.compare"));
    resultCard.setAttribute("aria-busy", String(pending));
    if (pending) resultCard.dataset.state = "pending";
    else resultCard.dataset.state = comparison ? "ready" : "idle";
  }

  function availableWidth(): number {
    const card = resultCard.hidden ? demandCard : resultCard;
    // The card's padding (20 px a side) is not the chart's.
    return chartWidth(card.clientWidth - 40);
  }

  /**
   * Prices `input` (or what is on screen now) and shows it. Only the latest request's
   * answer is shown. `redraw` keeps the current result on screen if it fails (a theme
   * change or new prices), rather than replacing it with an error.
   */
  async function compare(input: CompareInput | null, opts: { focusError: boolean; redraw?: boolean; note?: MessageKey }): Promise<void> {
    let request = input;
    if (request === null) {
      const csv = demandText.value;
      if (csv.trim() === "") {
        showInputProblem("costs.demand.empty", demandText);
        return;
      }
      if (!modelSelect.value || !regionSelect.value) {
        showInputProblem("costs.noPool", modelSelect);
        return;
      }
      request = { csv, model: modelSelect.value, region: regionSelect.value, interruptible: interruptible.checked };
    }
    const seq = ++compareSeq;
    const theme: ChartTheme = getEffectiveTheme();
    const width = availableWidth();
    setPending(true);
    const res = await call(() => commands.costPlan(request.csv, request.model, request.region, request.interruptible, theme, width));
    if (disposed || seq !== compareSeq) return;
    setPending(false);
    if (res.status === "ok") {
      comparison = res.data;
      memory.compared = request;
      stale = request.csv !== demandText.value;
      if (!opts.redraw) clearCompareError();
      renderResult(opts.note ?? null);
      chartImg.dataset.theme = theme;
      return;
    }
    if (opts.redraw && comparison) {
      replaceChildren(
        chartStatus,
        h("p", { class: "alert alert-warn", role: "alert" }, t("costs.chart.error", { message: describeError(res.error) })),
      );
      return;
    }
    showCompareError(res.error);
    if (opts.focusError) {
      const line = compareError.querySelector<HTMLButtonElement>('button[data-action="go-to-line"]');
      if (line) line.focus();
    }
  }

  function planRow(plan: PlanRow, currency: string): HTMLTableRowElement {
    const saving = plan.saving_fen;
    return h(
      "tr",
      { "data-plan": plan.kind, "data-recommended": plan.recommended ? "true" : null, class: plan.recommended ? "recommended" : null },
      h(
        "th",
        { scope: "row" },
        h("span", { class: "plan-name" }, planName(plan.kind)),
        plan.recommended ? h("span", { class: "badge badge-best" }, t("costs.recommended")) : null,
      ),
      h("td", { class: "num", "data-col": "base" }, formatCount(plan.base_gpus)),
      h("td", { class: "num", "data-col": "subscription" }, formatMoney(plan.base_fen, currency)),
      h("td", { class: "num", "data-col": "overlay" }, formatMoney(plan.overlay_fen, currency)),
      h("td", { class: "num total", "data-col": "total" }, formatMoney(plan.total_fen, currency)),
      h(
        "td",
        { class: `num saving ${saving < 0 ? "dearer" : saving > 0 ? "cheaper" : ""}`, "data-col": "saving" },
        h("span", null, formatMoney(saving, currency)),
        h("span", { class: "pct" }, formatPct(plan.saving_pct)),
      ),
      h(
        "td",
        { class: "num", "data-col": "hours" },
        h("span", null, formatCount(plan.paid_gpu_hours)),
        plan.idle_paid_gpu_hours > 0
          ? h("span", { class: "idle" }, t("costs.idle", { hours: formatCount(plan.idle_paid_gpu_hours) }))
          : null,
      ),
    );
  }

  function renderResult(note: MessageKey | null = null): void {
    const view = comparison;
    resultCard.hidden = view === null;
    if (!view) {
      replaceChildren(resultBody);
      return;
    }
    resultCard.dataset.state = "ready";
    const rec = view.recommendation;
    const words = recommendationText(view);
    const url = svgDataUrl(view.chart_svg);
    if (chartImg.getAttribute("src") !== url) chartImg.src = url;
    replaceChildren(chartStatus);
    replaceChildren(
      resultBody,
      h(
        "p",
        { class: "result-summary", "data-testid": "costs-summary" },
        t("costs.result.summary", {
          model: view.model,
          region: view.region,
          hours: formatCount(view.hours),
          peak: gpus(view.peak_gpus),
          work: formatCount(view.used_gpu_hours),
        }),
      ),
      note ? h("p", { class: "alert alert-info", role: "status" }, t(note)) : null,
      stale ? h("p", { class: "alert alert-info", "data-testid": "costs-stale" }, t("costs.result.stale")) : null,
      h(
        "div",
        {
          class: "recommendation",
          "data-testid": "costs-recommendation",
          "data-kind": rec.kind,
          "data-base": rec.base_gpus,
          "data-saving-pct": rec.saving_pct,
          "data-cheaper-overlay": rec.cheaper_overlay ?? "",
        },
        h("h3", null, t("costs.rec.title")),
        h("p", { class: "rec-headline", "data-testid": "costs-rec-headline", "aria-live": "polite" }, words.headline),
        h(
          "ul",
          { class: "rec-details", "data-testid": "costs-rec-details" },
          words.details.map((d) => h("li", null, d)),
        ),
      ),
      h(
        "figure",
        { class: "plan-chart" },
        h("figcaption", null, t("costs.chart.caption", { currency: view.currency })),
        chartStatus,
        chartImg,
      ),
      h(
        "div",
        { class: "table-wrap" },
        h(
          "table",
          { class: "hosts plans", "data-testid": "costs-plans" },
          h("caption", { class: "visually-hidden" }, t("costs.plans.caption")),
          h(
            "thead",
            null,
            h(
              "tr",
              null,
              h("th", { scope: "col" }, t("costs.col.plan")),
              h("th", { scope: "col", class: "num" }, t("costs.col.base")),
              h("th", { scope: "col", class: "num" }, t("costs.col.subscription")),
              h("th", { scope: "col", class: "num" }, t("costs.col.overlay")),
              h("th", { scope: "col", class: "num" }, t("costs.col.total")),
              h("th", { scope: "col", class: "num" }, t("costs.col.saving")),
              h("th", { scope: "col", class: "num" }, t("costs.col.hours")),
            ),
          ),
          h("tbody", null, view.plans.map((plan) => planRow(plan, view.currency))),
        ),
      ),
      view.skipped.length > 0
        ? h(
            "div",
            { class: "skipped" },
            h("h3", { id: "costs-skipped-title" }, t("costs.skipped.title")),
            h(
              "ul",
              { "data-testid": "costs-skipped", "aria-labelledby": "costs-skipped-title" },
              view.skipped.map((skip) => {
                return h(
                  "li",
                  { "data-plan": skip.kind, "data-reason": skip.reason.kind },
                  h("span", { class: "plan-name" }, planName(skip.kind)),
                  h("span", { class: "skip-reason" }, skipReasonText(skip.reason)),
                );
              }),
            ),
          )
        : null,
    );
  }

  // ---------- catalog ----------

  function renderCatalogHead(): void {
    const source = catalog?.source ?? "";
    replaceChildren(
      catalogHead,
      h("h2", { id: "costs-catalog-title" }, t("costs.catalog.title")),
      catalog
        ? h(
            "span",
            {
              class: `badge ${source === "imported" ? "badge-imported" : "badge-soft"}`,
              "data-testid": "catalog-source",
              "data-source": source,
              title: source === "demo" ? t("costs.catalog.sourceDemoHint") : null,
            },
            t(source === "imported" ? "costs.catalog.imported" : "costs.catalog.demo"),
          )
        : null,
      catalog?.name ? h("span", { class: "catalog-name", "data-testid": "catalog-name" }, catalog.name) : null,
      catalog ? h("span", { class: "catalog-currency" }, t("costs.catalog.currency", { currency: catalog.currency })) : null,
    );
  }

  function problemList(problems: readonly CatalogProblem[]): HTMLElement {
    return h(
      "ul",
      { class: "problem-list" },
      problems.map((p) =>
        h(
          "li",
          { "data-entry": p.entry ?? "", "data-field": p.field ?? "" },
          h("code", { class: "problem-place" }, problemPlace(p)),
          h("span", { class: "problem-message", lang: "en" }, p.message),
        ),
      ),
    );
  }

  function renderCatalogOutcome(): void {
    const outcome = memory.catalogOutcome;
    if (outcome?.kind === "accepted") {
      replaceChildren(catalogStatus, t("costs.catalog.accepted", { name: outcome.name, rows: formatCount(outcome.rows) }));
      replaceChildren(catalogOutcomeBox);
    } else if (outcome?.kind === "refused") {
      replaceChildren(catalogStatus);
      const count = outcome.problems.length;
      replaceChildren(
        catalogOutcomeBox,
        h(
          "div",
          { class: "alert alert-error catalog-problems", role: "alert", "data-testid": "catalog-problems", "data-count": count },
          h(
            "p",
            { class: "alert-line" },
            count === 1
              ? t("costs.catalog.refusedOne", { name: outcome.name })
              : t("costs.catalog.refusedMany", { name: outcome.name, count: formatCount(count) }),
          ),
          problemList(outcome.problems),
          outcome.warnings.length > 0 ? h("p", { class: "alert-line" }, t("costs.catalog.refusedWarnings")) : null,
          outcome.warnings.length > 0 ? problemList(outcome.warnings) : null,
        ),
      );
    } else {
      replaceChildren(catalogStatus);
      replaceChildren(catalogOutcomeBox);
    }
  }

  function renderCatalog(): void {
    renderCatalogHead();
    if (catalogLoadError !== null) {
      replaceChildren(
        catalogError,
        failureAlert(
          "costs.catalog.loadError",
          catalogLoadError,
          "catalog-error",
          h("button", { type: "button", class: "btn btn-small", on: { click: () => void loadCatalog() } }, t("hosts.retry")),
        ),
      );
    } else {
      replaceChildren(catalogError);
    }
    if (!catalog) {
      replaceChildren(catalogWarnings);
      replaceChildren(catalogTableBox, catalogLoadError === null ? h("p", { class: "loading" }, t("costs.catalog.loading")) : null);
      return;
    }
    replaceChildren(
      catalogWarnings,
      catalog.warnings.length > 0
        ? h(
            "div",
            { class: "alert alert-warn", "data-testid": "catalog-warnings", "data-count": catalog.warnings.length },
            h("p", { class: "alert-line" }, t("costs.catalog.warnings")),
            problemList(catalog.warnings),
          )
        : null,
    );
    const currency = catalog.currency;
    if (catalog.rows.length === 0) {
      replaceChildren(catalogTableBox, h("p", { class: "hint" }, t("costs.catalog.empty")));
      return;
    }
    replaceChildren(
      catalogTableBox,
      h(
        "div",
        { class: "table-wrap" },
        h(
          "table",
          { class: "hosts prices", "data-testid": "catalog-table" },
          h("caption", { class: "visually-hidden" }, t("costs.catalog.caption", { currency })),
          h(
            "thead",
            null,
            h(
              "tr",
              null,
              h("th", { scope: "col" }, t("costs.col.model")),
              h("th", { scope: "col" }, t("costs.col.region")),
              PRICE_COLUMNS.map((key) => h("th", { scope: "col", class: "num" }, t(key))),
            ),
          ),
          h(
            "tbody",
            null,
            catalog.rows.map((row) =>
              h(
                "tr",
                { "data-model": row.model, "data-region": row.region },
                h("th", { scope: "row" }, row.model),
                h("td", { "data-col": "region" }, row.region),
                priceCell("hour", row.hour_fen, currency),
                priceCell("day", row.day_fen, currency),
                priceCell("week", row.week_fen, currency),
                priceCell("month", row.month_fen, currency),
                priceCell("year", row.year_fen, currency),
                priceCell("spot", row.spot_hour_fen, currency),
                priceCell("reserved", row.reserved_hour_fen, currency),
              ),
            ),
          ),
        ),
      ),
    );
  }

  /** The catalog in use changed (or came): new selects, and new prices for what is shown. */
  function acceptCatalog(next: CatalogView, repriceShown: boolean): void {
    catalog = next;
    catalogLoadError = null;
    selectPool(pickPool(next.rows, { model: memory.model, region: memory.region }));
    renderCatalog();
    if (repriceShown && memory.compared && memory.model && memory.region) {
      void compare(
        { ...memory.compared, model: memory.model, region: memory.region },
        { focusError: false, redraw: true, note: "costs.result.repriced" },
      );
    }
  }

  async function loadCatalog(): Promise<void> {
    const res = await call(() => commands.catalogShow());
    if (disposed) return;
    if (res.status === "ok") {
      acceptCatalog(res.data, false);
      // Back on the view (or in another language): the last comparison, drawn again.
      if (memory.compared && !comparison) void compare(memory.compared, { focusError: false });
    } else {
      catalogLoadError = res.error;
      renderCatalog();
    }
  }

  function setImporting(busy: boolean): void {
    importing = busy;
    importTextButton.disabled = busy;
    catalogCard.setAttribute("aria-busy", String(busy));
    const input = catalogPicker.querySelector("input");
    if (input) input.disabled = busy;
    replaceChildren(importTextButton, t(busy ? "costs.catalog.importing" : "costs.catalog.importText"));
  }

  async function importCatalog(text: string, name: string): Promise<void> {
    if (importing) return;
    setImporting(true);
    replaceChildren(catalogError);
    const res = await call(() => commands.catalogImport(text));
    if (disposed) return;
    setImporting(false);
    if (res.status !== "ok") {
      replaceChildren(catalogError, failureAlert("costs.catalog.importError", res.error, "catalog-error"));
      return;
    }
    const outcome: CatalogImport = res.data;
    memory.catalogOutcome = outcome.accepted
      ? { kind: "accepted", name, rows: outcome.catalog.rows.length }
      : { kind: "refused", name, problems: outcome.problems, warnings: outcome.warnings };
    renderCatalogOutcome();
    acceptCatalog(outcome.catalog, outcome.accepted);
  }

  async function loadCatalogFile(file: File): Promise<void> {
    const read = await readFile(file, MAX_CATALOG_MB);
    if (disposed) return;
    if (!read.ok) {
      replaceChildren(
        catalogError,
        h("p", { class: "alert alert-error", role: "alert", "data-testid": "catalog-error" }, phrase(read.problem)),
      );
      return;
    }
    await importCatalog(read.text, file.name);
  }

  // ---------- start ----------

  if (memory.demandNote) setDemandNote(memory.demandNote);
  renderCatalog();
  renderCatalogOutcome();
  renderResult();
  void loadCatalog();

  const offTheme = onThemeChange(() => {
    if (memory.compared && comparison) void compare(memory.compared, { focusError: false, redraw: true });
  });

  return {
    el,
    destroy() {
      disposed = true;
      offTheme();
      for (const off of shellDrops) off();
    },
  };
}
