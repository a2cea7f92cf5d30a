// The Fleet view's history: the fleet heatmap card (GPU × time, refreshed each
// minute) and a host's detail page (#/fleet/HOST: per-GPU utilization, memory,
// temperature and power over 5 min / 1 h / 24 h / 7 d, live for 5 min), each chart
// exportable as SVG or PNG. Charts are SVG drawn in Rust, re-requested on theme
// changes; at most one request per chart is in flight (LatestLoader).
//
// Stable selectors (end-to-end tests rely on these; see also views/fleet.ts):
//   [data-testid="fleet-heatmap"]                the heatmap card; data-state="loading|ready|empty|error", data-range
//     #heatmap-range-1h|24h|7d                   range radios
//     img[data-testid="heatmap-chart"]           the heatmap (data:image/svg+xml), data-theme
//     [data-testid="heatmap-empty"]              "fills in as minutes of history are collected"
//   #fleet-detail                                the host detail; data-host, data-range
//     #fleet-back                                back to the fleet (Escape does the same)
//     #detail-title                              the host's name (focused on open)
//     #detail-range-5m|1h|24h|7d                 range radios
//     [data-testid="detail-unknown"]             role=alert: no such host
//     figure.history-chart[data-chart="util|memory_pct|temperature|power"]
//                                                data-state="loading|ready|error", data-range, data-theme
//       img[data-testid="history-chart"]         the chart (data:image/svg+xml)
//   any chart figure above (heatmap included):
//     button[data-action="export-svg"|"export-png"]
//     [data-testid="export-status"]              role=status: "Saved to PATH" (data-path) or "Saving…"
//     [data-testid="chart-error"]                role=alert: drawing or exporting failed

import { commands, type ChartMetric, type ChartTheme, type ExportFormat } from "../bindings";
import { h, replaceChildren } from "../dom";
import { fleetState, onFleetChange } from "../fleet-store";
import { describeError, healthClass, healthKey } from "../format";
import {
  chartWidth,
  DETAIL_METRICS,
  DETAIL_RANGES,
  exportName,
  HEATMAP_RANGES,
  heatmapHasRows,
  heatmapHeight,
  heatmapKey,
  historyKey,
  isLiveRange,
  LatestLoader,
  RANGES,
  utcOffsetMinutes,
  type HeatmapRequest,
  type HistoryRequest,
  type Outcome,
  type RangeId,
} from "../history";
import { svgDataUrl } from "../format";
import { t, type MessageKey } from "../i18n";
import { hostProblemText } from "../reasons";
import { getEffectiveTheme, onThemeChange } from "../theme";

/** The export formats the shell writes, as the buttons name them (typed over ExportFormat: none is missing). */
const EXPORT_LABELS: Readonly<Record<ExportFormat, string>> = { svg: "SVG", png: "PNG" };

export const DETAIL_CHART_HEIGHT = 260;
const MINUTE_MS = 60_000;

/** The operator's choices outlive a view rebuilt for a language change. */
const memory: { detailRange: RangeId; heatmapRange: RangeId } = { detailRange: "5m", heatmapRange: "1h" };

const METRIC_KEYS: Record<ChartMetric, MessageKey> = {
  util: "fleet.metric.util",
  memory_used: "fleet.metric.memory_used",
  memory_pct: "fleet.metric.memory_pct",
  temperature: "fleet.metric.temperature",
  power: "fleet.metric.power",
};

function rangeShort(id: RangeId): string {
  return t(`fleet.range.${id}` as MessageKey);
}

function rangeLong(id: RangeId): string {
  return t(`fleet.rangeLong.${id}` as MessageKey);
}

function rangePicker(name: string, ids: readonly RangeId[], selected: RangeId, onChange: (id: RangeId) => void): HTMLElement {
  return h(
    "fieldset",
    { class: "choice-group range-picker", "data-testid": `${name}-range` },
    h("legend", null, t("fleet.range.legend")),
    h(
      "div",
      { class: "choices" },
      ids.map((id) => {
        const inputId = `${name}-range-${id}`;
        return h(
          "label",
          { class: "choice", for: inputId },
          h("input", {
            type: "radio",
            id: inputId,
            name: `${name}-range`,
            value: id,
            checked: id === selected,
            on: { change: () => onChange(id) },
          }),
          h("span", null, rangeShort(id)),
        );
      }),
    ),
  );
}

/** One chart on screen: caption, image, export buttons, and its messages. */
type ChartFigure = {
  figure: HTMLElement;
  img: HTMLImageElement;
  /** Last good SVG (what Export saves). */
  svg: string | null;
  show(outcome: Outcome, theme: ChartTheme, range: RangeId): void;
  setAlt(alt: string): void;
};

function chartFigure(opts: {
  className: string;
  attrs: Record<string, string>;
  caption: string;
  alt: string;
  imgTestId: string;
  height: number;
  exportName: () => string;
  /** Words for a drawing failure. */
  errorWords: (message: string) => string;
}): ChartFigure {
  const img = h("img", {
    "data-testid": opts.imgTestId,
    alt: opts.alt,
    width: 640,
    height: opts.height,
    decoding: "async",
    hidden: true,
  });
  const drawError = h("div", { class: "chart-alert" });
  const exportError = h("div", { class: "chart-alert" });
  const exportStatus = h("p", { class: "export-status", role: "status", "data-testid": "export-status" });
  const loading = h("p", { class: "chart-loading" }, t("fleet.chartLoading"));
  const buttons = (Object.keys(EXPORT_LABELS) as ExportFormat[]).map((format) =>
    h(
      "button",
      {
        type: "button",
        class: "btn btn-small btn-quiet",
        "data-action": `export-${format}`,
        "aria-label": t("fleet.export.label", { chart: opts.caption, format: EXPORT_LABELS[format] }),
        disabled: true,
        on: { click: () => void exportAs(format) },
      },
      t(format === "svg" ? "fleet.export.svg" : "fleet.export.png"),
    ),
  );
  const figure = h(
    "figure",
    { class: `chart-card ${opts.className}`, "data-state": "loading", ...opts.attrs },
    h(
      "figcaption",
      null,
      h("span", { class: "chart-title" }, opts.caption),
      h("span", { class: "chart-actions" }, buttons),
    ),
    loading,
    img,
    drawError,
    exportStatus,
    exportError,
  );

  const parts: ChartFigure = {
    figure,
    img,
    svg: null,
    setAlt(alt) {
      img.alt = alt;
    },
    show(outcome, theme, range) {
      loading.remove();
      if (outcome.ok) {
        parts.svg = outcome.svg;
        const url = svgDataUrl(outcome.svg);
        if (img.getAttribute("src") !== url) img.src = url;
        img.hidden = false;
        img.classList.remove("stale");
        figure.dataset.state = "ready";
        figure.dataset.theme = theme;
        figure.dataset.range = range;
        replaceChildren(drawError);
      } else {
        img.classList.toggle("stale", parts.svg !== null);
        figure.dataset.state = "error";
        replaceChildren(
          drawError,
          h("p", { class: "alert alert-error", role: "alert", "data-testid": "chart-error" }, opts.errorWords(outcome.error)),
        );
      }
      for (const b of buttons) b.disabled = parts.svg === null;
    },
  };

  async function exportAs(format: ExportFormat): Promise<void> {
    const svg = parts.svg;
    if (svg === null) return;
    for (const b of buttons) b.disabled = true;
    replaceChildren(exportError);
    delete exportStatus.dataset.path;
    replaceChildren(exportStatus, t("fleet.export.saving"));
    let message: string | null = null;
    try {
      const res = await commands.exportChart(svg, format, opts.exportName());
      if (res.status === "ok") {
        exportStatus.dataset.path = res.data;
        replaceChildren(exportStatus, t("fleet.export.saved", { path: res.data }));
      } else {
        message = describeError(res.error);
      }
    } catch (err) {
      message = describeError(err);
    }
    if (message !== null) {
      replaceChildren(exportStatus);
      replaceChildren(
        exportError,
        h("p", { class: "alert alert-error", role: "alert", "data-testid": "chart-error" }, t("fleet.export.error", { message })),
      );
    }
    for (const b of buttons) b.disabled = parts.svg === null;
  }

  return parts;
}

function figureWidth(el: HTMLElement): number {
  return chartWidth(el.clientWidth);
}

export type HeatmapCard = { el: HTMLElement; refresh(): void; destroy(): void };

/** The fleet heatmap card. `refresh()` asks for the chart at the current size. */
export function heatmapCard(): HeatmapCard {
  const gpuCount = (): number => (fleetState().snapshot?.hosts ?? []).reduce((sum, host) => sum + host.gpu_count, 0);
  const empty = h("p", { class: "heatmap-empty", "data-testid": "heatmap-empty", hidden: true }, t("fleet.heatmap.empty"));
  const chart = chartFigure({
    className: "heatmap-chart",
    attrs: {},
    caption: t("fleet.heatmap.caption"),
    alt: t("fleet.heatmap.alt", { range: rangeLong(memory.heatmapRange) }),
    imgTestId: "heatmap-chart",
    height: heatmapHeight(gpuCount()),
    exportName: () => exportName("fleet-heatmap", memory.heatmapRange),
    errorWords: (message) => t("fleet.heatmap.error", { message }),
  });
  const el = h(
    "section",
    {
      class: "fleet-heatmap",
      "data-testid": "fleet-heatmap",
      "data-state": "loading",
      "data-range": memory.heatmapRange,
      "aria-labelledby": "fleet-heatmap-title",
    },
    h("h2", { id: "fleet-heatmap-title" }, t("fleet.heatmap.title")),
    h("p", { class: "section-lead lead" }, t("fleet.heatmap.lead")),
    rangePicker("heatmap", HEATMAP_RANGES, memory.heatmapRange, (id) => {
      memory.heatmapRange = id;
      el.dataset.range = id;
      chart.setAlt(t("fleet.heatmap.alt", { range: rangeLong(id) }));
      refresh();
    }),
    empty,
    chart.figure,
  );

  const loader = new LatestLoader<HeatmapRequest>(
    (r) => commands.fleetHeatmapChart(RANGES[r.range].seconds, r.theme, r.width, r.height, utcOffsetMinutes()),
    heatmapKey,
    (_slot, req, outcome) => {
      chart.show(outcome, req.theme, req.range);
      // No row yet: a brand-new fleet has no minute rollups. Say so instead of an empty grid.
      const isEmpty = outcome.ok && !heatmapHasRows(outcome.svg);
      empty.hidden = !isEmpty;
      chart.figure.hidden = isEmpty;
      el.dataset.state = isEmpty ? "empty" : chart.figure.dataset.state ?? "loading";
    },
  );

  function refresh(): void {
    if (!el.isConnected || el.closest("[hidden]")) return;
    const height = heatmapHeight(gpuCount());
    chart.img.height = height;
    const width = figureWidth(chart.figure.hidden ? el : chart.figure);
    loader.request("heatmap", { range: memory.heatmapRange, theme: getEffectiveTheme(), width, height });
  }

  const timer = window.setInterval(refresh, MINUTE_MS);
  const offTheme = onThemeChange(() => refresh());
  return {
    el,
    refresh,
    destroy() {
      window.clearInterval(timer);
      offTheme();
      loader.dispose();
    },
  };
}

export type HostDetail = { el: HTMLElement; mounted(): void; destroy(): void };

/** A host's detail page. `back()` returns to the fleet (the Back link and Escape). */
export function hostDetail(host: string, back: () => void): HostDetail {
  const title = h("h1", { id: "detail-title", tabindex: -1 }, host);
  const healthBox = h("p", { class: "detail-health" });
  const notice = h("div", { class: "alerts" });
  const liveNote = h("p", { class: "hint detail-live", "data-testid": "detail-live" }, t("fleet.detail.live"));
  const figures = new Map<ChartMetric, ChartFigure>();
  const grid = h("div", { class: "chart-grid detail-grid" });

  for (const metric of DETAIL_METRICS) {
    const name = t(METRIC_KEYS[metric]);
    const fig = chartFigure({
      className: "history-chart",
      attrs: { "data-chart": metric },
      caption: name,
      alt: detailAlt(metric),
      imgTestId: "history-chart",
      height: DETAIL_CHART_HEIGHT,
      exportName: () => exportName(host, metric, memory.detailRange),
      errorWords: (message) => t("fleet.detail.chartError", { metric: name, message }),
    });
    figures.set(metric, fig);
    grid.appendChild(fig.figure);
  }

  function detailAlt(metric: ChartMetric): string {
    return t("fleet.detail.alt", { metric: t(METRIC_KEYS[metric]), host, range: rangeLong(memory.detailRange) });
  }

  const el = h(
    "section",
    {
      class: "fleet-detail",
      id: "fleet-detail",
      "data-host": host,
      "data-range": memory.detailRange,
      "aria-labelledby": "detail-title",
    },
    h("p", { class: "back-row" }, h("a", { id: "fleet-back", class: "back-link", href: "#/fleet", on: { click: onBackClick } }, t("fleet.detail.back"))),
    h("header", { class: "view-header" }, title, healthBox, h("p", { class: "lead" }, t("fleet.detail.lead"))),
    notice,
    rangePicker("detail", DETAIL_RANGES, memory.detailRange, (id) => {
      memory.detailRange = id;
      el.dataset.range = id;
      for (const metric of DETAIL_METRICS) figures.get(metric)?.setAlt(detailAlt(metric));
      renderLive();
      requestAll();
    }),
    liveNote,
    grid,
  );

  const loader = new LatestLoader<HistoryRequest>(
    (r) =>
      commands.hostHistoryChart(r.host, r.metric, RANGES[r.range].seconds, r.theme, r.width, r.height, utcOffsetMinutes()),
    historyKey,
    (slot, req, outcome) => figures.get(slot as ChartMetric)?.show(outcome, req.theme, req.range),
  );

  function onBackClick(ev: MouseEvent): void {
    ev.preventDefault();
    back();
  }

  function onKey(ev: KeyboardEvent): void {
    if (ev.key !== "Escape" || ev.defaultPrevented || !el.isConnected) return;
    ev.preventDefault();
    back();
  }

  function renderLive(): void {
    liveNote.hidden = !isLiveRange(memory.detailRange);
  }

  /** Whether the host is known; false once the fleet is loaded without it. */
  function renderHost(): boolean {
    const snap = fleetState().snapshot;
    const status = snap?.hosts.find((x) => x.name === host);
    if (snap && !status) {
      replaceChildren(healthBox);
      replaceChildren(
        notice,
        h("p", { class: "alert alert-error", role: "alert", "data-testid": "detail-unknown" }, t("fleet.detail.unknownHost", { host })),
      );
      grid.hidden = true;
      return false;
    }
    replaceChildren(notice);
    grid.hidden = false;
    replaceChildren(
      healthBox,
      status
        ? [
            h(
              "span",
              { class: `health ${healthClass(status.health)}`, "data-health": status.health },
              h("span", { class: "dot", "aria-hidden": "true" }),
              t(healthKey(status.health)),
            ),
            h("span", { class: "detail-meta" }, t("fleet.detail.meta", { region: status.region.trim() || t("fleet.regionNone"), gpus: status.gpu_count })),
            status.last_error && status.health !== "online"
              ? h("span", { class: "host-error" }, t("fleet.lastError", { message: hostProblemText(status.last_error) }))
              : null,
          ]
        : null,
    );
    return true;
  }

  function requestAll(): void {
    if (!el.isConnected || !renderHost()) return;
    const theme = getEffectiveTheme();
    for (const metric of DETAIL_METRICS) {
      const fig = figures.get(metric);
      if (!fig) continue;
      loader.request(metric, {
        host,
        metric,
        range: memory.detailRange,
        theme,
        width: figureWidth(fig.figure),
        height: DETAIL_CHART_HEIGHT,
      });
    }
  }

  const unsubscribe = [
    onFleetChange(() => {
      // Live: every tick for the short range (a chart still being drawn is skipped).
      if (isLiveRange(memory.detailRange)) requestAll();
      else renderHost();
    }),
    onThemeChange(() => requestAll()),
  ];
  // Long ranges move by the minute (rollups), so a minute's refresh keeps them current.
  const timer = window.setInterval(() => {
    if (!isLiveRange(memory.detailRange)) requestAll();
  }, MINUTE_MS);
  document.addEventListener("keydown", onKey);
  renderLive();
  renderHost();

  return {
    el,
    mounted() {
      requestAll();
      // The list may have been scrolled far down: start the detail at its top (Back in view).
      el.scrollIntoView?.({ block: "start" });
      title.focus({ preventScroll: true });
    },
    destroy() {
      for (const off of unsubscribe) off();
      window.clearInterval(timer);
      document.removeEventListener("keydown", onKey);
      loader.dispose();
    },
  };
}
