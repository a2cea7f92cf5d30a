// Fleet: the capacity summary first (GPUs by model × region: free, ours, others', offline,
// the catalog's price), then hosts found by name, region, model and health: a compact,
// paged grid of live per-GPU utilization charts (SVG drawn in Rust, re-requested every few
// ticks while in view, at once on coming into view and on theme changes), tables by region with each host's free GPUs and which pool
// holds what, and the fleet heatmap (live values until minutes of history exist). A host's name opens its detail page, #/fleet/HOST
// (fleet/host-detail.tsx), in place of the list; Back returns to the list, onto the
// host's link.
//
// On Solid: the snapshot is a store reconciled by host name (fleet-store.ts), so each
// tick updates rows, links and chart images in place and never replaces the element
// under the pointer or the focus. One concern per file under fleet/: the tables
// (host-table.tsx), the live charts (live-charts.tsx), the heatmap (heatmap.tsx), the
// host detail (host-detail.tsx), a history chart with its export (chart-card.tsx), the
// range radios (range-picker.tsx), the capacity summary (capacity-summary.tsx), the
// filters (host-filter.tsx), a host's GPU table (gpu-table.tsx).
//
// Stable selectors (end-to-end tests rely on these):
//   #view-fleet                                  the view; data-tick (latest sample round), data-mode="list|detail"
//   [data-testid="fleet-status"]                 the summary line
//   [data-testid="viewer-notice"]                another process collects
//   [data-testid="fleet-error"]                  role=alert: the fleet could not be loaded
//   [data-testid="fleet-skeleton"]               before the first snapshot: the layout in grey
//   [data-testid="empty-state"]                  no host registered; a[data-testid="empty-add-host"] to Settings
//   [data-testid="capacity-summary"]             the capacity table: tr[data-model][data-region] (catalog model),
//                                                tfoot tr[data-total]; td[data-count="total|free|ours|others|offline"],
//                                                td[data-testid="capacity-price"]
//   [data-testid="host-filter"]                  #fleet-search, #fleet-filter-region|model|health, #fleet-filter-clear,
//                                                [data-testid="filter-count"]
//   [data-testid="chart-pager"]                  #charts-prev, #charts-next, [data-testid="pager-range"] (data-page, data-pages)
//   [data-testid="hosts-table"] tr[data-host]    one row per host, per region section [data-region]
//     a[data-testid="host-link"]                 the host's name: opens its detail
//     [data-health]                              online | degraded | offline | unknown
//     [data-testid="host-reason"]                why it is not online
//     [data-testid="host-free"]                  "FREE of TOTAL"
//     [data-testid="host-held"] li[data-pool]    our pools on the host, "POOL ×N"; li.held-others, li.held-offline
//     [data-testid="host-models"]                models under the catalog's names (title: as reported)
//   figure.host-chart[data-host] [data-testid="util-chart"] svg   the live 2-minute charts (inline SVG)
//   [data-testid="fleet-heatmap"]                the heatmap card; data-state="loading|ready|empty|error", data-range
//     #heatmap-range-1h|24h|7d                   range radios
//     [data-testid="heatmap-chart"] svg       the heatmap (inline SVG); its figure has data-theme
//     [data-testid="heatmap-empty"]              "fills in as minutes of history are collected"
//     [data-testid="heatmap-live"]               meanwhile: each GPU's latest utilization, .heat-cell[data-host][data-gpu][data-level]
//     [data-testid="heat-legend"]                the colour scale
//   #fleet-detail                                the host detail; data-host, data-range
//     #fleet-back                                back to the fleet (Escape does the same)
//     #detail-title                              the host's name (focused on open)
//     [data-testid="detail-model"]               the host's model(s), as reported and as the catalog names them
//     table[data-testid="gpu-table"] tr[data-gpu=INDEX]   one row per GPU; td[data-col="util|memory|temperature|
//                                                power|clocks|processes|ecc|xid|holder"]; processes li[data-pid]
//                                                (data-memory-mib); holder data-holder="free|ours|others|offline", data-pool
//     #detail-range-5m|1h|24h|7d                 range radios
//     [data-testid="detail-live"]                "Live: redrawn with every sample round" (5 min only)
//     [data-testid="detail-unknown"]             role=alert: no such host
//     figure.history-chart[data-chart="util|memory_pct|temperature|power"]
//                                                data-state="loading|ready|error", data-range, data-theme
//       [data-testid="history-chart"] svg     the chart (inline SVG)
//   any history chart figure (heatmap included):
//     button[data-action="export-svg"|"export-png"]
//     [data-testid="export-status"]              role=status: "Saved to PATH" (data-path) or "Saving…"
//     [data-testid="chart-error"]                role=alert: drawing or exporting failed

import { createEffect, createMemo, createRenderEffect, createRoot, createSignal, Match, on, onCleanup, Show, Switch, type JSX } from "solid-js";
import { appInfoState, onAppInfo } from "../app-info";
import { filterChoices, filterHosts, type HostFilter } from "../capacity";
import { capacity, fleet, onFleetChange } from "../fleet-store";
import { describeError, groupByRegion, summarize } from "../format";
import { hostFromHash } from "../history";
import { t } from "../i18n";
import { onThemeChange } from "../theme";
import { ErrorAlert } from "./error-alert";
import { CapacitySummary } from "./fleet/capacity-summary";
import { Heatmap } from "./fleet/heatmap";
import { HostFilterBar } from "./fleet/host-filter";
import { HostDetail } from "./fleet/host-detail";
import { HostTables } from "./fleet/host-table";
import { FigureRegistry, LiveCharts, requestLiveCharts } from "./fleet/live-charts";
import { memory } from "./fleet/memory";
import { mountView } from "./solid";
import type { View } from "./view";

function ViewerNotice(): JSX.Element {
  const [collecting, setCollecting] = createSignal(appInfoState().info?.collecting);
  onCleanup(onAppInfo(() => setCollecting(appInfoState().info?.collecting)));
  return (
    <p class="alert alert-info" data-testid="viewer-notice" hidden={collecting() !== false}>
      {t("fleet.viewerNotice")}
    </p>
  );
}

function Alerts(): JSX.Element {
  // The same cause (e.g. no desktop shell at all) is said once.
  const listenWords = () => {
    if (fleet.listenError === null) return null;
    const words = describeError(fleet.listenError);
    return fleet.snapshotError !== null && describeError(fleet.snapshotError) === words ? null : words;
  };
  return (
    <div class="alerts">
      <Show when={fleet.snapshot?.metrics_unavailable}>
        {(gone) => (
          <p class="alert alert-warn" role="alert" data-testid="metrics-unavailable">
            {t("fleet.metricsUnavailable", { url: gone().url, reason: gone().reason })}
          </p>
        )}
      </Show>
      <Show when={fleet.snapshotError !== null}>
        <ErrorAlert lead={t("fleet.loadFailed")} error={fleet.snapshotError} testid="fleet-error" />
      </Show>
      <Show when={listenWords()}>
        {(words) => (
          <p class="alert alert-warn" role="alert">
            {t("fleet.listenError", { message: words() })}
          </p>
        )}
      </Show>
    </div>
  );
}

function Status(): JSX.Element {
  const summary = createMemo(() => summarize(fleet.snapshot?.hosts ?? []));
  return (
    <p class="fleet-status" data-testid="fleet-status">
      <Show when={fleet.snapshot}>
        {(snap) => (
          <>
            <Show when={summary().hosts > 0}>
              <span>{t("fleet.summary", summary())}</span>
            </Show>
            <Show when={summary().degraded > 0}>
              <span class="summary-degraded">{t("fleet.summaryDegraded", summary())}</span>
            </Show>
            <span class="tick">{t("fleet.sampleRound", { tick: snap().tick })}</span>
          </>
        )}
      </Show>
    </p>
  );
}

/**
 * Before the first snapshot: the list's layout in grey (the capacity card, a row of charts)
 * under the words saying what is awaited, never a blank page (issue 43).
 */
function FleetSkeleton(): JSX.Element {
  return (
    <div class="fleet-skeleton" data-testid="fleet-skeleton">
      <p class="loading">{t("fleet.loading")}</p>
      <div class="skeleton-card" aria-hidden="true">
        <span class="skeleton-bar skeleton-title" />
        <span class="skeleton-bar skeleton-line" />
        <span class="skeleton-rows" />
      </div>
      <div class="skeleton-charts" aria-hidden="true">
        <div class="skeleton-card" />
        <div class="skeleton-card" />
      </div>
    </div>
  );
}

function EmptyFleet(): JSX.Element {
  return (
    <div class="empty-state" data-testid="empty-state">
      <h2>{t("fleet.emptyTitle")}</h2>
      <p>{t("fleet.emptyBody")}</p>
      <p>
        <a class="btn btn-primary" href="#/settings" data-testid="empty-add-host">
          {t("fleet.emptyAction")}
        </a>
      </p>
    </div>
  );
}

export function fleetView(): View {
  const [connected, setConnected] = createSignal(false);
  const [detailHost, setDetailHost] = createSignal(hostFromHash(location.hash));
  const showsList = () => detailHost() === null;
  // A chart scrolled into view is asked for at once, not at the next tick.
  const figures = new FigureRegistry(() => requestCharts());

  function requestCharts(): void {
    const snap = fleet.snapshot;
    if (!snap || !connected() || !showsList()) return;
    requestLiveCharts(snap.hosts, snap.tick, figures);
  }

  /** Show the list or a host's detail, as the hash says. */
  function route(): void {
    const wanted = hostFromHash(location.hash);
    const leaving = detailHost();
    if (wanted === leaving) return;
    setDetailHost(wanted);
    if (wanted === null && leaving !== null) {
      // Back where the operator left: the host's link.
      const link = [...el.querySelectorAll<HTMLAnchorElement>('a[data-testid="host-link"]')].find(
        (a) => a.textContent === leaving,
      );
      link?.focus();
    }
  }

  function Fleet(): JSX.Element {
    const [filter, setFilter] = createSignal<HostFilter>(memory.filter);
    const [page, setPage] = createSignal(memory.chartPage);
    const hosts = () => fleet.snapshot?.hosts ?? [];
    const found = createMemo(() => filterHosts(hosts(), filter(), capacity.facts));
    const groups = createMemo(() => groupByRegion(found()));
    const ordered = createMemo(() => groups().flatMap((g) => g.hosts));
    const choices = createMemo(() => filterChoices(hosts(), capacity.facts));
    const hasHosts = () => hosts().length > 0;
    const chooseFilter = (next: HostFilter) => {
      memory.filter = next;
      setFilter(next);
      choosePage(0);
    };
    const choosePage = (next: number) => {
      memory.chartPage = next;
      setPage(next);
    };

    // Sizes are known once the view is in the document and the list is shown; a new
    // page or filter shows other charts, asked at once.
    createEffect(on([connected, showsList, page, filter], () => requestCharts()));
    onCleanup(onFleetChange(requestCharts));
    onCleanup(onThemeChange(() => requestCharts()));
    window.addEventListener("hashchange", route);
    onCleanup(() => window.removeEventListener("hashchange", route));

    return (
      <>
        <div class="fleet-list" hidden={!showsList()}>
          <header class="view-header">
            <h1 id="fleet-title">{t("fleet.title")}</h1>
            <p class="lead">{t("fleet.lead")}</p>
            <Status />
          </header>
          <ViewerNotice />
          <Alerts />
          <Show when={hasHosts()}>
            <CapacitySummary />
            <HostFilterBar
              filter={filter()}
              onChange={chooseFilter}
              regions={choices().regions}
              models={choices().models}
              shown={found().length}
              total={hosts().length}
            />
            <Show when={found().length === 0}>
              <p class="hint" data-testid="filter-none">
                {t("fleet.filter.none")}
              </p>
            </Show>
          </Show>
          <section class="fleet-charts" aria-labelledby="fleet-charts-title" hidden={found().length === 0}>
            <h2 id="fleet-charts-title">{t("fleet.chartsTitle")}</h2>
            <LiveCharts hosts={ordered()} figures={figures} page={page()} onPage={choosePage} />
          </section>
          <div class="fleet-hosts">
            <Switch>
              <Match when={fleet.snapshot === null}>
                <Show when={fleet.loading}>
                  <FleetSkeleton />
                </Show>
              </Match>
              <Match when={!hasHosts()}>
                <EmptyFleet />
              </Match>
              <Match when={hasHosts()}>
                <HostTables groups={groups()} />
              </Match>
            </Switch>
          </div>
          <Heatmap active={connected() && showsList()} />
        </div>
        <div class="fleet-detail-box">
          <Show when={detailHost()} keyed>
            {(host) => <HostDetail host={host} connected={connected()} back={() => (location.hash = "#/fleet")} />}
          </Show>
        </div>
      </>
    );
  }

  const { el, dispose } = mountView("fleet", { className: "view view-fleet", labelledBy: "fleet-title" }, () => <Fleet />);
  // The section itself is mountView's: its data-mode and data-tick follow from here.
  const disposeSection = createRoot((disposeRoot) => {
    createRenderEffect(() => {
      el.dataset.mode = showsList() ? "list" : "detail";
    });
    createRenderEffect(() => {
      const tick = fleet.snapshot?.tick;
      if (tick === undefined) delete el.dataset.tick;
      else el.dataset.tick = String(tick);
    });
    return disposeRoot;
  });

  return {
    el,
    mounted() {
      setConnected(true);
    },
    destroy() {
      disposeSection();
      dispose();
      figures.dispose();
    },
  };
}
