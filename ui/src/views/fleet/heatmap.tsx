// The fleet heatmap card: every GPU × time, mean utilization per cell, over 1 h / 24 h /
// 7 d from the minute rollups. Drawn in Rust; asked again each minute, on a theme change,
// on a range change and whenever the card comes into view (`active`). Until the range has
// a stored row, each GPU's live utilization stands in for it (live-heat.tsx), with a legend.

import { createEffect, createSignal, on, onCleanup, Show, type JSX } from "solid-js";
import { commands } from "../../bindings";
import { fleet } from "../../fleet-store";
import {
  CHART_LOADING,
  chartWidth,
  exportName,
  HEATMAP_RANGES,
  heatmapHasRows,
  heatmapHeight,
  heatmapKey,
  LatestLoader,
  RANGES,
  showOutcome,
  utcOffsetMinutes,
  type HeatmapRequest,
  type RangeId,
} from "../../history";
import { t } from "../../i18n";
import { every } from "../../live";
import { getEffectiveTheme, onThemeChange } from "../../theme";
import { ChartCard } from "./chart-card";
import { LiveHeat } from "./live-heat";
import { memory } from "./memory";
import { RangePicker, rangeLong } from "./range-picker";

const MINUTE_MS = 60_000;

export function Heatmap(props: {
  /** The card can be seen: the view is in the document and shows the list. */
  active: boolean;
}): JSX.Element {
  const [range, setRange] = createSignal<RangeId>(memory.heatmapRange);
  const [shown, setShown] = createSignal(CHART_LOADING);
  const gpuCount = () => (fleet.snapshot?.hosts ?? []).reduce((sum, host) => sum + host.gpu_count, 0);
  const [height, setHeight] = createSignal(heatmapHeight(gpuCount()));
  // No row yet: a brand-new fleet has no minute rollups. Say so instead of an empty grid.
  const hasHosts = () => (fleet.snapshot?.hosts.length ?? 0) > 0;
  const isEmpty = () => shown().state === "ready" && !heatmapHasRows(shown().svg ?? "");
  let section!: HTMLElement;
  let figure!: HTMLElement;

  const loader = new LatestLoader<HeatmapRequest>(
    (r) => commands.fleetHeatmapChart({
        range_s: RANGES[r.range].seconds,
        theme: r.theme,
        width_px: r.width,
        height_px: r.height,
        utc_offset_minutes: utcOffsetMinutes(),
      }),
    heatmapKey,
    (_slot, req, outcome) => setShown((previous) => showOutcome(previous, outcome, req.theme, req.range)),
  );

  function refresh(): void {
    if (!props.active || !hasHosts() || !section.isConnected || section.closest("[hidden]")) return;
    const h = heatmapHeight(gpuCount());
    setHeight(h);
    const width = chartWidth((figure.hidden ? section : figure).clientWidth);
    loader.request("heatmap", { range: range(), theme: getEffectiveTheme(), width, height: h });
  }

  function choose(id: RangeId): void {
    memory.heatmapRange = id;
    setRange(id);
    refresh();
  }

  createEffect(on(() => props.active && hasHosts(), (seen) => seen && refresh()));
  // A heatmap cell is a minute: time alone moves it.
  const offMinute = every(MINUTE_MS)(refresh);
  const offTheme = onThemeChange(() => refresh());
  onCleanup(() => {
    offMinute();
    offTheme();
    loader.dispose();
  });

  return (
    <section
      ref={section}
      class="fleet-heatmap"
      data-testid="fleet-heatmap"
      data-state={isEmpty() ? "empty" : shown().state}
      data-range={range()}
      aria-labelledby="fleet-heatmap-title"
      hidden={!hasHosts()}
    >
      <h2 id="fleet-heatmap-title">{t("fleet.heatmap.title")}</h2>
      <p class="section-lead lead">{t("fleet.heatmap.lead")}</p>
      <RangePicker name="heatmap" ids={HEATMAP_RANGES} selected={range()} onChange={choose} />
      <p class="heatmap-empty" data-testid="heatmap-empty" hidden={!isEmpty()}>
        {t("fleet.heatmap.empty")}
      </p>
      <Show when={isEmpty() || shown().state === "loading"}>
        <LiveHeat hosts={fleet.snapshot?.hosts ?? []} />
      </Show>
      <ChartCard
        ref={(el) => (figure = el)}
        className="heatmap-chart"
        caption={t("fleet.heatmap.caption")}
        alt={t("fleet.heatmap.alt", { range: rangeLong(range()) })}
        imgTestId="heatmap-chart"
        height={height()}
        shown={shown()}
        hidden={isEmpty()}
        exportName={() => exportName("fleet-heatmap", range())}
        errorWords={(message) => t("fleet.heatmap.error", { message })}
      />
    </section>
  );
}
