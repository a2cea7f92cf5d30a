// The Fleet list's live charts: one per host, its GPUs' utilization over the last two
// minutes, drawn in Rust and asked again every LIVE_CHART_EVERY rounds and on a theme change (`charts` in
// fleet-store.ts keeps one request per host in flight). A figure is keyed by its host,
// so a new chart replaces the SVG inside it and nothing else. The grid is compact and
// paged (CHARTS_PER_PAGE a page), so 200 hosts cost at most one page of charts a redraw.
//
// Only a chart that can be seen is redrawn: each figure gets its first chart at once, and
// after that a new one every few rounds only while it is in the viewport of a visible window (an
// IntersectionObserver says which). Redrawing every host's chart each second with the
// charts scrolled away cost the web process a third of a core and, through WebKit's image
// cache, hundreds of MiB (issue 43); coming into view asks for a fresh chart at once.

import { createMemo, For, onCleanup, Show, type JSX } from "solid-js";
import type { HostStatus } from "../../bindings";
import { pageOf } from "../../capacity";
import { FigureRegistry, wantsChart } from "../../charts";
import { chartEntries, charts } from "../../fleet-store";
import { getEffectiveTheme } from "../../theme";
import { t } from "../../i18n";
import { SvgImage } from "../svg-image";
import { regionLabel } from "./host-table";

export const CHART_HEIGHT = 180;
export const CHART_FALLBACK_WIDTH = 480;
export { FigureRegistry };

/** Charts on one page of the grid. */
export const CHARTS_PER_PAGE = 12;

/** Asks for each host's chart at its figure's width (skipped for hosts not on screen). */
export function requestLiveCharts(hosts: readonly HostStatus[], tick: number, figures: FigureRegistry): void {
  const theme = getEffectiveTheme();
  const windowHidden = typeof document !== "undefined" && document.visibilityState === "hidden";
  for (const host of hosts) {
    const figure = figures.get(host.name);
    const shown = charts.get(host.name);
    const asked = wantsChart({
      inDocument: figure !== undefined,
      hasChart: shown !== undefined,
      themeChanged: shown !== undefined && shown.theme !== theme,
      seen: figures.isSeen(host.name),
      windowHidden,
      age: shown === undefined ? Number.POSITIVE_INFINITY : tick - shown.tick,
    });
    if (!figure || !asked) continue;
    const width = Math.round(figure.clientWidth) || CHART_FALLBACK_WIDTH;
    charts.request({ host: host.name, theme, width, height: CHART_HEIGHT, tick });
  }
}

function HostChart(props: { host: HostStatus; figures: FigureRegistry }): JSX.Element {
  const name = props.host.name;
  const entry = () => chartEntries[name];
  const svg = () => entry()?.svg ?? null;
  const state = () => {
    const e = entry();
    if (!e) return "loading";
    return e.error !== null ? "error" : "ready";
  };
  onCleanup(() => props.figures.remove(name));
  return (
    <figure
      ref={(el) => props.figures.add(name, el)}
      class="host-chart"
      data-host={name}
      data-state={state()}
      data-chart-tick={svg() !== null ? entry()?.tick : undefined}
      data-chart-theme={svg() !== null ? entry()?.theme : undefined}
    >
      <figcaption>{t("fleet.chartCaption", { host: name, region: regionLabel(props.host.region) })}</figcaption>
      <div class="chart-status">
        <Show when={entry()} fallback={<p class="chart-loading">{t("fleet.chartLoading")}</p>}>
          {(e) => (
            <Show when={e().error}>
              {(message) => (
                <p class="alert alert-error" role="alert">
                  {t("fleet.chartError", { host: name, message: message() })}
                </p>
              )}
            </Show>
          )}
        </Show>
      </div>
      <SvgImage svg={svg()} label={t("fleet.chartAlt", { host: name })} testid="util-chart" stale={entry()?.error != null} />
    </figure>
  );
}

/** The charts of one page, in the order of `hosts` (the tables' order), with the pager. */
export function LiveCharts(props: {
  hosts: readonly HostStatus[];
  figures: FigureRegistry;
  page: number;
  onPage: (page: number) => void;
}): JSX.Element {
  const shown = createMemo(() => pageOf(props.hosts, props.page, CHARTS_PER_PAGE));
  return (
    <>
      <div class="chart-grid chart-grid-compact">
        <For each={shown().items}>{(host) => <HostChart host={host} figures={props.figures} />}</For>
      </div>
      <nav class="pager" data-testid="chart-pager" aria-label={t("fleet.pager.label")} hidden={shown().pages <= 1}>
        <button type="button" class="btn btn-small" id="charts-prev" disabled={shown().page === 0} onClick={() => props.onPage(shown().page - 1)}>
          {t("fleet.pager.prev")}
        </button>
        <span class="pager-range" data-testid="pager-range" data-page={shown().page} data-pages={shown().pages}>
          {t("fleet.pager.range", { first: shown().first, last: shown().last, total: shown().total })}
        </span>
        <button
          type="button"
          class="btn btn-small"
          id="charts-next"
          disabled={shown().page >= shown().pages - 1}
          onClick={() => props.onPage(shown().page + 1)}
        >
          {t("fleet.pager.next")}
        </button>
      </nav>
    </>
  );
}
