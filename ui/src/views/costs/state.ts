// The Costs view's state and what it does: the demand on screen, the model and region, the
// comparison (only the latest request's answer is shown), and the catalog in use with its
// import. The cards (demand-input.tsx, compare-result.tsx, catalog.tsx) read it and call it.
//
// What the operator typed and the last comparison's inputs are signals of this module, not
// of one view: they survive leaving the view and a language change (which rebuilds it).

import { batch, createSignal } from "solid-js";
import { commands, type CatalogProblem, type CatalogView, type ChartTheme, type PlanComparisonView } from "../../bindings";
import {
  catalogModels,
  catalogRegions,
  chartWidth,
  demandRowCount,
  formatCount,
  lineRange,
  pickPool,
  sampleDemandCsv,
  type Phrase,
} from "../../costs";
import type { SentenceFor } from "../../explain";
import { t, type MessageKey } from "../../i18n";
import { call, fieldOf, ipcError } from "../../ipc";
import { getEffectiveTheme } from "../../theme";
import { readFile } from "./file-picker";

/** Files larger than this are refused before reading (a year of minutes is about 8 MB). */
const MAX_DEMAND_MB = 32;
const MAX_CATALOG_MB = 4;

export type CompareInput = { csv: string; model: string; region: string; interruptible: boolean };

export type CatalogOutcome =
  | { kind: "accepted"; name: string; rows: number }
  | { kind: "refused"; name: string; problems: CatalogProblem[]; warnings: CatalogProblem[] };

/** Why Compare did nothing (the view's own check) or what the shell said. */
export type CompareError = { kind: "client"; key: MessageKey } | { kind: "shell"; error: unknown };

/** Why the catalog could not be had: the shell's error, or a file that could not be read. */
export type CatalogError = { kind: "shell"; lead: MessageKey; error: unknown; retry: boolean } | { kind: "read"; problem: Phrase };

// ---------- what outlives one view ----------

const [demandText, setDemandText] = createSignal("");
/** What the demand status says (not an error: an unreadable file is not remembered). */
const [demandNote, setDemandNote] = createSignal<Phrase | null>(null);
const [model, setModel] = createSignal<string | null>(null);
const [region, setRegion] = createSignal<string | null>(null);
const [interruptible, setInterruptible] = createSignal(false);
const [compared, setCompared] = createSignal<CompareInput | null>(null);
const [catalogOutcome, setCatalogOutcome] = createSignal<CatalogOutcome | null>(null);

// ---------- errors ----------

const DEMAND_FIELDS = ["demand", "model"] as const;

const FIELD_SENTENCES: Record<(typeof DEMAND_FIELDS)[number], MessageKey> = {
  demand: "costs.error.demand",
  model: "costs.error.pool",
};

/** The Costs view's sentence for a shell error: by its kind and the field it names. */
export const costsSentence: SentenceFor = (e) => {
  if (e.kind === "invalid_input") {
    const field = fieldOf(e, DEMAND_FIELDS);
    return field ? FIELD_SENTENCES[field] : null;
  }
  if (e.kind === "invalid_catalog") return "costs.error.catalog";
  if (e.kind === "io") return "costs.error.io";
  return null;
};

/** The demand line a compare error names (its `line`, on the `demand` field), if any. */
export function demandErrorLine(err: unknown): number | null {
  const error = ipcError(err);
  return fieldOf(error, ["demand"]) ? (error?.line ?? null) : null;
}

/** Elements the state needs to measure or focus; the cards fill them in. */
export type CostsRefs = {
  demandCard?: HTMLElement;
  resultCard?: HTMLElement;
  catalogCard?: HTMLElement;
  demandText?: HTMLTextAreaElement;
  model?: HTMLSelectElement;
  compareButton?: HTMLButtonElement;
  compareError?: HTMLElement;
};

export function createCosts() {
  const refs: CostsRefs = {};
  const [catalog, setCatalog] = createSignal<CatalogView | null>(null);
  const [catalogLoadError, setCatalogLoadError] = createSignal<unknown>(null);
  const [catalogError, setCatalogError] = createSignal<CatalogError | null>(null);
  const [importing, setImporting] = createSignal(false);
  const [comparison, setComparison] = createSignal<PlanComparisonView | null>(null);
  const [chartTheme, setChartTheme] = createSignal<ChartTheme | null>(null);
  /** A redraw (new theme) failed: the comparison stays, with this said over its chart. */
  const [chartError, setChartError] = createSignal<unknown>(null);
  const [note, setNote] = createSignal<MessageKey | null>(null);
  const [pending, setPending] = createSignal(false);
  const [compareError, setCompareError] = createSignal<CompareError | null>(null);
  /** An unreadable file: said at once, in an alert, and not remembered. */
  const [demandProblem, setDemandProblem] = createSignal<Phrase | null>(null);
  const [dragging, setDragging] = createSignal<"catalog" | "demand" | null>(null);
  let compareSeq = 0;
  let disposed = false;

  /** The comparison on screen is for another demand than the one typed now. */
  const stale = (): boolean => {
    const last = compared();
    return last !== null && last.csv !== demandText();
  };

  const models = (): string[] => catalogModels(catalog()?.rows ?? []);
  const regions = (): string[] => {
    const chosen = model();
    return chosen === null ? [] : catalogRegions(catalog()?.rows ?? [], chosen);
  };

  // ---------- demand ----------

  function showDemandNote(phrase: Phrase | null): void {
    batch(() => {
      setDemandNote(phrase);
      setDemandProblem(null);
    });
  }

  function showDemandProblem(phrase: Phrase): void {
    batch(() => {
      setDemandNote(null);
      setDemandProblem(phrase);
    });
  }

  function typed(text: string): void {
    batch(() => {
      setDemandText(text);
      showDemandNote(null);
    });
  }

  function setDemand(text: string, phrase: Phrase): void {
    batch(() => {
      setDemandText(text);
      showDemandNote(phrase);
      setCompareError(null);
    });
  }

  async function loadDemandFile(file: File): Promise<void> {
    const read = await readFile(file, MAX_DEMAND_MB);
    if (disposed) return;
    if (!read.ok) {
      showDemandProblem(read.problem);
      return;
    }
    const rows = demandRowCount(read.text);
    const rowsText = t(rows === 1 ? "costs.rows.one" : "costs.rows.other", { n: formatCount(rows) });
    setDemand(read.text, { key: "costs.demand.loaded", params: { name: file.name, rows: rowsText } });
    refs.compareButton?.focus();
  }

  async function useSample(): Promise<void> {
    const csv = sampleDemandCsv();
    setDemand(csv, { key: "costs.demand.sampleLoaded", params: { rows: formatCount(demandRowCount(csv)) } });
    // The sample's figures are the seed's FAQ 4, priced as A100 in cn-north.
    const rows = catalog()?.rows;
    if (rows) selectPool(pickPool(rows, { model: "A100", region: "cn-north" }));
    await compare(null, { focusError: false });
  }

  function goToLine(line: number): void {
    const textarea = refs.demandText;
    if (!textarea) return;
    const range = lineRange(textarea.value, line);
    textarea.focus();
    if (range) textarea.setSelectionRange(range[0], range[1]);
  }

  // ---------- model and region ----------

  function selectPool(pool: { model: string; region: string } | null): void {
    batch(() => {
      setModel(pool?.model ?? null);
      setRegion(pool?.region ?? null);
    });
  }

  function chooseModel(chosen: string): void {
    const rows = catalog()?.rows;
    if (!rows) return;
    selectPool(pickPool(rows, { model: chosen, region: region() }));
    poolChanged();
  }

  function chooseRegion(chosen: string): void {
    setRegion(chosen || null);
    poolChanged();
  }

  function chooseInterruptible(allowed: boolean): void {
    setInterruptible(allowed);
    poolChanged();
  }

  /** With a comparison on screen, a new model, region or spot choice is priced at once. */
  function poolChanged(): void {
    if (comparison() && demandText().trim() !== "") void compare(null, { focusError: false });
  }

  // ---------- comparing ----------

  function showInputProblem(key: MessageKey, focus: HTMLElement | undefined): void {
    setCompareError({ kind: "client", key });
    focus?.focus();
  }

  function availableWidth(): number {
    const card = comparison() === null ? refs.demandCard : refs.resultCard;
    // The card's padding (20 px a side) is not the chart's.
    return chartWidth((card?.clientWidth ?? 0) - 40);
  }

  /**
   * Prices `input` (or what is on screen now) and shows it. Only the latest request's
   * answer is shown. `redraw` keeps the current result on screen if it fails (a theme
   * change or new prices), rather than replacing it with an error.
   */
  async function compare(
    input: CompareInput | null,
    opts: { focusError: boolean; redraw?: boolean; note?: MessageKey },
  ): Promise<void> {
    let request = input;
    if (request === null) {
      const csv = demandText();
      const chosenModel = model();
      const chosenRegion = region();
      if (csv.trim() === "") return showInputProblem("costs.demand.empty", refs.demandText);
      if (!chosenModel || !chosenRegion) return showInputProblem("costs.noPool", refs.model);
      request = { csv, model: chosenModel, region: chosenRegion, interruptible: interruptible() };
    }
    const asked = request;
    const seq = ++compareSeq;
    const theme: ChartTheme = getEffectiveTheme();
    const width = availableWidth();
    setPending(true);
    const res = await call(() => commands.costPlan(
        { demand_csv: asked.csv, model: asked.model, region: asked.region, interruptible: asked.interruptible, term: null },
        theme,
        width,
      ));
    if (disposed || seq !== compareSeq) return;
    if (res.status === "ok") {
      batch(() => {
        setPending(false);
        setComparison(res.data);
        setChartTheme(theme);
        setChartError(null);
        setCompared(asked);
        setNote(opts.note ?? null);
        if (!opts.redraw) setCompareError(null);
      });
      return;
    }
    setPending(false);
    if (opts.redraw && comparison()) {
      setChartError(res.error);
      return;
    }
    setCompareError({ kind: "shell", error: res.error });
    if (opts.focusError) refs.compareError?.querySelector<HTMLButtonElement>('button[data-action="go-to-line"]')?.focus();
  }

  /** Compares what is on screen (the form's submit, Ctrl+Enter). */
  function compareNow(): void {
    void compare(null, { focusError: true });
  }

  /** The theme changed: the comparison on screen, drawn again. */
  function redraw(): void {
    const last = compared();
    if (last && comparison()) void compare(last, { focusError: false, redraw: true });
  }

  // ---------- catalog ----------

  /** The catalog in use changed (or came): new selects, and new prices for what is shown. */
  function acceptCatalog(next: CatalogView, repriceShown: boolean): void {
    batch(() => {
      setCatalog(next);
      setCatalogLoadError(null);
      setCatalogError(null);
      selectPool(pickPool(next.rows, { model: model(), region: region() }));
    });
    const last = compared();
    const chosenModel = model();
    const chosenRegion = region();
    if (repriceShown && last && chosenModel && chosenRegion) {
      void compare(
        { ...last, model: chosenModel, region: chosenRegion },
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
      const last = compared();
      if (last && !comparison()) void compare(last, { focusError: false });
    } else {
      batch(() => {
        setCatalogLoadError(res.error);
        setCatalogError({ kind: "shell", lead: "costs.catalog.loadError", error: res.error, retry: true });
      });
    }
  }

  async function importCatalog(text: string, name: string): Promise<void> {
    if (importing()) return;
    batch(() => {
      setImporting(true);
      setCatalogError(null);
    });
    const res = await call(() => commands.catalogImport(text));
    if (disposed) return;
    setImporting(false);
    if (res.status !== "ok") {
      setCatalogError({ kind: "shell", lead: "costs.catalog.importError", error: res.error, retry: false });
      return;
    }
    const outcome = res.data;
    setCatalogOutcome(
      outcome.accepted
        ? { kind: "accepted", name, rows: outcome.catalog.rows.length }
        : { kind: "refused", name, problems: outcome.problems, warnings: outcome.warnings },
    );
    acceptCatalog(outcome.catalog, outcome.accepted);
  }

  async function loadCatalogFile(file: File): Promise<void> {
    const read = await readFile(file, MAX_CATALOG_MB);
    if (disposed) return;
    if (!read.ok) {
      setCatalogError({ kind: "read", problem: read.problem });
      return;
    }
    await importCatalog(read.text, file.name);
  }

  return {
    refs,
    // what the operator chose (remembered)
    demandText,
    demandNote,
    demandProblem,
    model,
    region,
    interruptible,
    models,
    regions,
    // the comparison
    comparison,
    chartTheme,
    chartError,
    note,
    pending,
    stale,
    compareError,
    // the catalog
    catalog,
    catalogLoadError,
    catalogError,
    catalogOutcome,
    importing,
    dragging,
    // what the cards do
    typed,
    showDemandProblem,
    loadDemandFile,
    useSample,
    goToLine,
    chooseModel,
    chooseRegion,
    chooseInterruptible,
    compareNow,
    redraw,
    loadCatalog,
    importCatalog,
    loadCatalogFile,
    setDragging,
    dispose(): void {
      disposed = true;
    },
  };
}

export type Costs = ReturnType<typeof createCosts>;
