// Costs: this month's spend across every pool against the budget (costs/spend.tsx), a
// month's showback per team and pool (costs/showback.tsx), then
// planning: a demand series in (dropped, picked or pasted CSV, or the FAQ-4 sample), every
// billing plan priced over it by the cost engine, the recommendation in words, the plans
// as a bar chart (SVG drawn in Rust, redrawn on theme changes) and a table, and the price
// catalog in use with its import (refused files list every problem in place).
//
// On Solid: the state and what it does are in costs/state.ts (what the operator typed and
// the last comparison's inputs outlive the view there); one card per file in costs/. This
// file mounts them and takes the file drops for the whole view.
//
// Stable selectors (end-to-end tests rely on these):
//   #view-costs                                   the view
//   [data-testid="spend-card"]                    the month's spend across pools (selectors in costs/spend.tsx)
//   [data-testid="showback-card"]                 a month per team and pool (selectors in costs/showback.tsx)
//   [data-testid="costs-demand"]                  the demand card (a drop target for CSV files)
//     [data-testid="costs-dropzone"]              the visible drop zone; data-dragging while a file is over it
//     #costs-demand-file                          <input type=file> for a demand CSV
//     #costs-sample                               "Sample: festival demand" (fills in and compares)
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
//     [data-testid="costs-chart"] svg          the bar chart (inline SVG), data-theme
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
import { fileRole } from "../costs";
import { t } from "../i18n";
import { onThemeChange } from "../theme";
import { Catalog } from "./costs/catalog";
import { CompareResult } from "./costs/compare-result";
import { DemandInput } from "./costs/demand-input";
import { hasFiles } from "./costs/file-picker";
import { ShowbackCard } from "./costs/showback";
import { SpendCard } from "./costs/spend";
import { createCosts } from "./costs/state";
import { mountView } from "./solid";
import type { View } from "./view";

export function costsView(): View {
  const costs = createCosts();

  const { el, dispose } = mountView("costs", { className: "view view-costs", labelledBy: "costs-title" }, () => (
    <>
      <header class="view-header">
        <h1 id="costs-title">{t("costs.title")}</h1>
        <p class="lead">{t("costs.lead")}</p>
      </header>
      <SpendCard />
      <ShowbackCard />
      <DemandInput costs={costs} />
      <CompareResult costs={costs} />
      <Catalog costs={costs} />
    </>
  ));

  // ---------- dropping files, anywhere on the view ----------

  const dropTarget = (ev: DragEvent): "catalog" | "demand" =>
    ev.target instanceof Node && costs.refs.catalogCard?.contains(ev.target) ? "catalog" : "demand";

  el.addEventListener("dragover", (ev) => {
    if (!hasFiles(ev)) return;
    ev.preventDefault();
    if (ev.dataTransfer) ev.dataTransfer.dropEffect = "copy";
    costs.setDragging(dropTarget(ev));
  });
  el.addEventListener("dragleave", (ev) => {
    if (!(ev.relatedTarget instanceof Node) || !el.contains(ev.relatedTarget)) costs.setDragging(null);
  });
  el.addEventListener("drop", (ev) => {
    if (!hasFiles(ev)) return;
    ev.preventDefault();
    costs.setDragging(null);
    const file = ev.dataTransfer?.files[0];
    if (!file) return;
    if (fileRole(file.name, dropTarget(ev)) === "catalog") void costs.loadCatalogFile(file);
    else void costs.loadDemandFile(file);
  });

  // Where the desktop shell takes file drops itself, the page never gets the file: say so
  // rather than do nothing.
  let disposed = false;
  const shellDrops: UnlistenFn[] = [];
  for (const name of ["tauri://drag-drop", "tauri://drag-leave"]) {
    listen(name, () => {
      costs.setDragging(null);
      if (name === "tauri://drag-drop" && el.isConnected) costs.showDemandProblem({ key: "costs.demand.dropBlocked" });
    })
      .then((off) => {
        if (disposed) off();
        else shellDrops.push(off);
      })
      .catch(() => undefined);
  }

  const offTheme = onThemeChange(() => costs.redraw());
  void costs.loadCatalog();

  return {
    el,
    destroy() {
      disposed = true;
      costs.dispose();
      offTheme();
      for (const off of shellDrops) off();
      dispose();
    },
  };
}
