// Fleet: hosts grouped by region with health and mean utilization, one live
// per-GPU utilization chart per host (SVG drawn in Rust, re-requested on every
// tick and on theme changes) and the fleet heatmap. A host's name opens its detail
// page, #/fleet/HOST (views/fleet-history.ts), in place of the list.
//
// Stable selectors (end-to-end tests rely on these; the heatmap's and the host
// detail's are listed in views/fleet-history.ts):
//   #view-fleet                                  the view; data-tick (latest sample round), data-mode="list|detail"
//   [data-testid="fleet-status"]                 the summary line
//   [data-testid="viewer-notice"]                another process collects
//   [data-testid="empty-state"]                  no host registered
//   [data-testid="hosts-table"] tr[data-host]    one row per host, per region section [data-region]
//     a[data-testid="host-link"]                 the host's name: opens its detail
//     [data-health]                              online | degraded | offline | unknown
//     [data-testid="host-reason"]                why it is not online
//   figure.host-chart[data-host] img[data-testid="util-chart"]   the live 2-minute charts

import { appInfoState, onAppInfo } from "../app-info";
import type { HostStatus } from "../bindings";
import { hostFromHash, hostHash } from "../history";
import { h, replaceChildren } from "../dom";
import { charts, fleetState, onFleetChange } from "../fleet-store";
import {
  describeError,
  formatModels,
  formatPercent,
  groupByRegion,
  healthClass,
  healthKey,
  summarize,
} from "../format";
import { t } from "../i18n";
import { hostProblemText } from "../reasons";
import { getEffectiveTheme, onThemeChange } from "../theme";
import { heatmapCard, hostDetail, type HostDetail } from "./fleet-history";
import type { View } from "./view";

export const CHART_HEIGHT = 240;
export const CHART_FALLBACK_WIDTH = 640;

type FigureParts = {
  figure: HTMLElement;
  caption: HTMLElement;
  img: HTMLImageElement;
  status: HTMLElement;
};

function regionLabel(region: string): string {
  return region.trim() === "" ? t("fleet.regionNone") : region;
}

function healthCell(host: HostStatus): HTMLElement {
  return h(
    "span",
    { class: `health ${healthClass(host.health)}`, "data-health": host.health },
    h("span", { class: "dot", "aria-hidden": "true" }),
    t(healthKey(host.health)),
  );
}

function hostRow(host: HostStatus): HTMLTableRowElement {
  return h(
    "tr",
    { "data-host": host.name },
    h(
      "th",
      { scope: "row" },
      h(
        "a",
        {
          class: "host-name host-link",
          href: hostHash(host.name),
          "data-testid": "host-link",
          title: t("fleet.openHost", { host: host.name }),
        },
        host.name,
      ),
      host.url ? h("span", { class: "host-url" }, host.url) : null,
      host.last_error && host.health !== "online"
        ? h(
            "span",
            { class: host.health === "degraded" ? "host-error host-error-degraded" : "host-error", "data-testid": "host-reason" },
            t(host.health === "degraded" ? "fleet.degradedReason" : "fleet.lastError", { message: hostProblemText(host.last_error) }),
          )
        : null,
    ),
    h("td", null, regionLabel(host.region)),
    h("td", null, healthCell(host)),
    h("td", { class: "num" }, String(host.gpu_count)),
    h("td", null, formatModels(host.models)),
    h(
      "td",
      { class: "num util" },
      h("span", { class: "util-value" }, formatPercent(host.mean_util_pct)),
      host.mean_util_pct === null ? null : utilBar(host.mean_util_pct),
    ),
  );
}

// Brings a host's row up to date without replacing its link.
function patchRow(row: HTMLTableRowElement, host: HostStatus): void {
  const fresh = hostRow(host);
  const [head, ...cells] = [...row.children];
  const [freshHead, ...freshCells] = [...fresh.children];
  if (!head || !freshHead || cells.length !== freshCells.length) {
    row.replaceWith(fresh);
    return;
  }
  for (const child of [...head.children]) {
    if (!(child instanceof HTMLAnchorElement)) child.remove();
  }
  for (const child of [...freshHead.children]) {
    if (!(child instanceof HTMLAnchorElement)) head.append(child);
  }
  cells.forEach((cell, i) => {
    const next = freshCells[i];
    if (next) cell.replaceWith(next);
  });
}

function utilBar(pct: number): HTMLElement {
  return h("meter", {
    class: "util-bar",
    min: 0,
    max: 100,
    value: String(Math.max(0, Math.min(100, pct))),
    "aria-hidden": "true",
  });
}

function regionTable(region: string, hosts: readonly HostStatus[], index: number): HTMLElement {
  const headingId = `fleet-region-${index}`;
  return h(
    "section",
    { class: "region", "data-region": region, "aria-labelledby": headingId },
    h(
      "h2",
      { id: headingId, class: "region-title" },
      regionLabel(region),
      h("span", { class: "count", "aria-hidden": "true" }, String(hosts.length)),
    ),
    h(
      "div",
      { class: "table-wrap" },
      h(
        "table",
        { class: "hosts", "data-testid": "hosts-table" },
        h("caption", { class: "visually-hidden" }, t("fleet.regionHosts", { region: regionLabel(region) })),
        h(
          "thead",
          null,
          h(
            "tr",
            null,
            h("th", { scope: "col" }, t("fleet.col.name")),
            h("th", { scope: "col" }, t("fleet.col.region")),
            h("th", { scope: "col" }, t("fleet.col.health")),
            h("th", { scope: "col", class: "num" }, t("fleet.col.gpus")),
            h("th", { scope: "col" }, t("fleet.col.models")),
            h("th", { scope: "col", class: "num" }, t("fleet.col.util")),
          ),
        ),
        h("tbody", null, hosts.map(hostRow)),
      ),
    ),
  );
}

export function fleetView(): View {
  const alerts = h("div", { class: "alerts" });
  const viewerNotice = h("p", { class: "alert alert-info", "data-testid": "viewer-notice" }, t("fleet.viewerNotice"));
  const renderViewerNotice = (): void => {
    viewerNotice.hidden = appInfoState().info?.collecting !== false;
  };
  const status = h("p", { class: "fleet-status", "data-testid": "fleet-status" });
  const hostsBox = h("div", { class: "fleet-hosts" });
  const chartGrid = h("div", { class: "chart-grid" });
  const chartsSection = h(
    "section",
    { class: "fleet-charts", "aria-labelledby": "fleet-charts-title" },
    h("h2", { id: "fleet-charts-title" }, t("fleet.chartsTitle")),
    chartGrid,
  );
  const heatmap = heatmapCard();
  const detailBox = h("div", { class: "fleet-detail-box" });
  const listBox = h(
    "div",
    { class: "fleet-list" },
    h(
      "header",
      { class: "view-header" },
      h("h1", { id: "fleet-title" }, t("fleet.title")),
      h("p", { class: "lead" }, t("fleet.lead")),
      status,
    ),
    viewerNotice,
    alerts,
    chartsSection,
    hostsBox,
    heatmap.el,
  );
  const el = h(
    "section",
    { class: "view view-fleet", id: "view-fleet", "data-view": "fleet", "aria-labelledby": "fleet-title" },
    listBox,
    detailBox,
  );
  let detail: HostDetail | null = null;
  let detailHost: string | null = null;

  /** Show the list or a host's detail, as the hash says. */
  function route(): void {
    const wanted = hostFromHash(location.hash);
    if (wanted === detailHost) return;
    const leaving = detailHost;
    detail?.destroy();
    detail = null;
    detailHost = wanted;
    if (wanted !== null) {
      detail = hostDetail(wanted, () => {
        location.hash = "#/fleet";
      });
      replaceChildren(detailBox, detail.el);
      listBox.hidden = true;
      el.dataset.mode = "detail";
      if (el.isConnected) detail.mounted();
    } else {
      replaceChildren(detailBox);
      listBox.hidden = false;
      el.dataset.mode = "list";
      requestCharts();
      heatmap.refresh();
      if (leaving !== null) {
        // Back where the operator left: the host's link.
        const link = [...el.querySelectorAll<HTMLAnchorElement>('a[data-testid="host-link"]')].find(
          (a) => a.textContent === leaving,
        );
        link?.focus();
      }
    }
  }

  const figures = new Map<string, FigureParts>();
  let hostsKey = "";
  let hostsShape = "";

  function makeFigure(host: HostStatus): FigureParts {
    const caption = h("figcaption", null);
    const img = h("img", {
      "data-testid": "util-chart",
      alt: t("fleet.chartAlt", { host: host.name }),
      width: CHART_FALLBACK_WIDTH,
      height: CHART_HEIGHT,
      decoding: "async",
      hidden: true,
    });
    const status = h("div", { class: "chart-status" });
    const figure = h("figure", { class: "host-chart", "data-host": host.name, "data-state": "loading" }, caption, status, img);
    return { figure, caption, img, status };
  }

  function paintFigure(host: string): void {
    const parts = figures.get(host);
    if (!parts) return;
    const entry = charts.get(host);
    if (!entry) {
      parts.figure.dataset.state = "loading";
      replaceChildren(parts.status, h("p", { class: "chart-loading" }, t("fleet.chartLoading")));
      return;
    }
    if (entry.url !== null) {
      if (parts.img.getAttribute("src") !== entry.url) parts.img.src = entry.url;
      parts.img.hidden = false;
      parts.figure.dataset.chartTick = String(entry.tick);
      parts.figure.dataset.chartTheme = entry.theme;
    }
    parts.img.classList.toggle("stale", entry.error !== null);
    parts.figure.dataset.state = entry.error !== null ? "error" : "ready";
    if (entry.error !== null) {
      replaceChildren(
        parts.status,
        h("p", { class: "alert alert-error", role: "alert" }, t("fleet.chartError", { host, message: entry.error })),
      );
    } else {
      replaceChildren(parts.status);
    }
  }

  function syncFigures(hosts: readonly HostStatus[]): void {
    const wanted = new Set(hosts.map((x) => x.name));
    for (const [name, parts] of figures) {
      if (!wanted.has(name)) {
        parts.figure.remove();
        figures.delete(name);
      }
    }
    for (const host of hosts) {
      let parts = figures.get(host.name);
      if (!parts) {
        parts = makeFigure(host);
        figures.set(host.name, parts);
        paintFigure(host.name);
      }
      replaceChildren(parts.caption, t("fleet.chartCaption", { host: host.name, region: regionLabel(host.region) }));
      chartGrid.appendChild(parts.figure); // keeps the order of `hosts`
    }
  }

  function requestCharts(): void {
    const snap = fleetState().snapshot;
    if (!snap || !el.isConnected || listBox.hidden) return;
    const theme = getEffectiveTheme();
    for (const host of snap.hosts) {
      const parts = figures.get(host.name);
      if (!parts) continue;
      const width = Math.round(parts.figure.clientWidth) || CHART_FALLBACK_WIDTH;
      charts.request({ host: host.name, theme, width, height: CHART_HEIGHT, tick: snap.tick });
    }
  }

  function render(): void {
    const state = fleetState();
    const snap = state.snapshot;

    const alertItems: HTMLElement[] = [];
    const snapshotMessage = state.snapshotError !== null ? describeError(state.snapshotError) : null;
    const listenMessage = state.listenError !== null ? describeError(state.listenError) : null;
    if (snapshotMessage !== null) {
      alertItems.push(h("p", { class: "alert alert-error", role: "alert" }, t("fleet.snapshotError", { message: snapshotMessage })));
    }
    // The same cause (e.g. no desktop shell at all) is said once.
    if (listenMessage !== null && listenMessage !== snapshotMessage) {
      alertItems.push(h("p", { class: "alert alert-warn", role: "alert" }, t("fleet.listenError", { message: listenMessage })));
    }
    replaceChildren(alerts, alertItems);

    if (!snap) {
      delete el.dataset.tick;
      replaceChildren(status);
      replaceChildren(hostsBox, state.loading ? h("p", { class: "loading" }, t("fleet.loading")) : null);
      chartsSection.hidden = true;
      heatmap.el.hidden = true;
      return;
    }

    el.dataset.tick = String(snap.tick);
    const sum = summarize(snap.hosts);
    replaceChildren(
      status,
      sum.hosts > 0 ? h("span", null, t("fleet.summary", sum)) : null,
      sum.degraded > 0 ? h("span", { class: "summary-degraded" }, t("fleet.summaryDegraded", sum)) : null,
      h("span", { class: "tick" }, t("fleet.sampleRound", { tick: snap.tick })),
    );

    if (snap.hosts.length === 0) {
      hostsKey = "";
      hostsShape = "";
      replaceChildren(
        hostsBox,
        h(
          "div",
          { class: "empty-state", "data-testid": "empty-state" },
          h("h2", null, t("fleet.emptyTitle")),
          h("p", null, t("fleet.emptyBody")),
          h("p", null, h("a", { class: "btn btn-primary", href: "#/settings", "data-testid": "empty-add-host" }, t("fleet.emptyAction"))),
        ),
      );
      syncFigures([]);
      chartsSection.hidden = true;
      heatmap.el.hidden = true;
      return;
    }

    const groups = groupByRegion(snap.hosts);
    const key = JSON.stringify(groups);
    if (key !== hostsKey) {
      hostsKey = key;
      // Same hosts in the same places: the rows are patched in place, so a link being
      // clicked or holding the focus stays the same element. Otherwise rebuilt.
      const shape = JSON.stringify(groups.map((g) => [g.region, g.hosts.map((x) => x.name)]));
      if (shape === hostsShape) {
        const rows = new Map(
          [...hostsBox.querySelectorAll<HTMLTableRowElement>("tr[data-host]")].map((r) => [r.dataset.host, r]),
        );
        for (const host of snap.hosts) {
          const row = rows.get(host.name);
          if (row) patchRow(row, host);
        }
      } else {
        hostsShape = shape;
        replaceChildren(hostsBox, groups.map((g, i) => regionTable(g.region, g.hosts, i)));
      }
    }
    chartsSection.hidden = false;
    if (heatmap.el.hidden) {
      heatmap.el.hidden = false;
      heatmap.refresh();
    }
    syncFigures(groups.flatMap((g) => g.hosts));
    requestCharts();
  }

  const unsubscribe = [
    onFleetChange(render),
    charts.onUpdate((host) => paintFigure(host)),
    onThemeChange(() => requestCharts()),
    onAppInfo(renderViewerNotice),
  ];
  window.addEventListener("hashchange", route);

  renderViewerNotice();
  heatmap.el.hidden = true;
  render();
  el.dataset.mode = "list";
  route();

  return {
    el,
    mounted() {
      // Sizes are known only once we are in the document.
      requestCharts();
      heatmap.refresh();
      detail?.mounted();
    },
    destroy() {
      for (const off of unsubscribe) off();
      window.removeEventListener("hashchange", route);
      heatmap.destroy();
      detail?.destroy();
    },
  };
}
