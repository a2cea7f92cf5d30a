// Fleet: hosts grouped by region with health and mean utilization, one live per-GPU
// utilization chart per host (SVG drawn in Rust, re-requested on every tick and on theme
// changes) and the fleet heatmap. A host's name opens its detail page, #/fleet/HOST
// (fleet/host-detail.tsx), in place of the list; Back returns to the list, onto the
// host's link.
//
// On Solid: the snapshot is a store reconciled by host name (fleet-store.ts), so each
// tick updates rows, links and chart images in place and never replaces the element
// under the pointer or the focus. One concern per file under fleet/: the tables
// (host-table.tsx), the live charts (live-charts.tsx), the heatmap (heatmap.tsx), the
// host detail (host-detail.tsx), a history chart with its export (chart-card.tsx), the
// range radios (range-picker.tsx).
//
// Stable selectors (end-to-end tests rely on these):
//   #view-fleet                                  the view; data-tick (latest sample round), data-mode="list|detail"
//   [data-testid="fleet-status"]                 the summary line
//   [data-testid="viewer-notice"]                another process collects
//   [data-testid="fleet-error"]                  role=alert: the fleet could not be loaded
//   [data-testid="empty-state"]                  no host registered; a[data-testid="empty-add-host"] to Settings
//   [data-testid="hosts-table"] tr[data-host]    one row per host, per region section [data-region]
//     a[data-testid="host-link"]                 the host's name: opens its detail
//     [data-health]                              online | degraded | offline | unknown
//     [data-testid="host-reason"]                why it is not online
//   figure.host-chart[data-host] img[data-testid="util-chart"]   the live 2-minute charts
//   [data-testid="fleet-heatmap"]                the heatmap card; data-state="loading|ready|empty|error", data-range
//     #heatmap-range-1h|24h|7d                   range radios
//     img[data-testid="heatmap-chart"]           the heatmap (data:image/svg+xml); its figure has data-theme
//     [data-testid="heatmap-empty"]              "fills in as minutes of history are collected"
//   #fleet-detail                                the host detail; data-host, data-range
//     #fleet-back                                back to the fleet (Escape does the same)
//     #detail-title                              the host's name (focused on open)
//     #detail-range-5m|1h|24h|7d                 range radios
//     [data-testid="detail-live"]                "Live: redrawn with every sample round" (5 min only)
//     [data-testid="detail-unknown"]             role=alert: no such host
//     figure.history-chart[data-chart="util|memory_pct|temperature|power"]
//                                                data-state="loading|ready|error", data-range, data-theme
//       img[data-testid="history-chart"]         the chart (data:image/svg+xml)
//   any history chart figure (heatmap included):
//     button[data-action="export-svg"|"export-png"]
//     [data-testid="export-status"]              role=status: "Saved to PATH" (data-path) or "Saving…"
//     [data-testid="chart-error"]                role=alert: drawing or exporting failed

import { createEffect, createMemo, createRenderEffect, createRoot, createSignal, Match, on, onCleanup, Show, Switch, type JSX } from "solid-js";
import { appInfoState, onAppInfo } from "../app-info";
import { fleet, onFleetChange } from "../fleet-store";
import { describeError, groupByRegion, summarize } from "../format";
import { hostFromHash } from "../history";
import { t } from "../i18n";
import { onThemeChange } from "../theme";
import { ErrorAlert } from "./error-alert";
import { Heatmap } from "./fleet/heatmap";
import { HostDetail } from "./fleet/host-detail";
import { HostTables } from "./fleet/host-table";
import { LiveCharts, requestLiveCharts, type FigureRegistry } from "./fleet/live-charts";
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
  const figures: FigureRegistry = new Map();

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
    const hosts = () => fleet.snapshot?.hosts ?? [];
    const groups = createMemo(() => groupByRegion(hosts()));
    const ordered = createMemo(() => groups().flatMap((g) => g.hosts));
    const hasHosts = () => hosts().length > 0;

    // Sizes are known once the view is in the document and the list is shown.
    createEffect(on([connected, showsList], () => requestCharts()));
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
          <section class="fleet-charts" aria-labelledby="fleet-charts-title" hidden={!hasHosts()}>
            <h2 id="fleet-charts-title">{t("fleet.chartsTitle")}</h2>
            <LiveCharts hosts={ordered()} figures={figures} />
          </section>
          <div class="fleet-hosts">
            <Switch>
              <Match when={fleet.snapshot === null}>
                <Show when={fleet.loading}>
                  <p class="loading">{t("fleet.loading")}</p>
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
    },
  };
}
