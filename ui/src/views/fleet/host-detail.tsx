// A host's detail page (#/fleet/HOST): its model in the header, a table of its GPUs now
// (readings, processes, ECC/Xid, the pool and lease holding each: gpu-table.tsx), and
// per-GPU utilization, memory, temperature and power over 5 min / 1 h / 24 h / 7 d, redrawn with every sample round for 5 min and each minute
// for the longer ranges, each chart exportable. Back (the link, or Escape) returns to the
// fleet. The charts and the range radios stay the same elements while they redraw.

import { createEffect, createMemo, createSignal, For, on, onCleanup, Show, type JSX } from "solid-js";
import { createStore } from "solid-js/store";
import { commands, type ChartMetric } from "../../bindings";
import { modelName } from "../../capacity";
import { capacity, fleet, onFleetChange } from "../../fleet-store";
import {
  CHART_LOADING,
  chartWidth,
  DETAIL_METRICS,
  DETAIL_RANGES,
  exportName,
  historyKey,
  isLiveRange,
  LatestLoader,
  RANGES,
  showOutcome,
  utcOffsetMinutes,
  type ChartShown,
  type HistoryRequest,
  type RangeId,
} from "../../history";
import { t, type MessageKey } from "../../i18n";
import { every, when } from "../../live";
import { hostProblemText } from "../../reasons";
import { getEffectiveTheme, onThemeChange } from "../../theme";
import { ChartCard } from "./chart-card";
import { GpuTable } from "./gpu-table";
import { HealthBadge, regionLabel } from "./host-table";
import { memory } from "./memory";
import { RangePicker, rangeLong } from "./range-picker";

export const DETAIL_CHART_HEIGHT = 260;
const MINUTE_MS = 60_000;

const METRIC_KEYS: Readonly<Record<ChartMetric, MessageKey>> = {
  util: "fleet.metric.util",
  memory_used: "fleet.metric.memory_used",
  memory_pct: "fleet.metric.memory_pct",
  temperature: "fleet.metric.temperature",
  power: "fleet.metric.power",
};

export function HostDetail(props: {
  host: string;
  /** The view is in the document: sizes are known, the title can take the focus. */
  connected: boolean;
  back: () => void;
}): JSX.Element {
  const host = props.host;
  const [range, setRange] = createSignal<RangeId>(memory.detailRange);
  const [shown, setShown] = createStore<Partial<Record<ChartMetric, ChartShown>>>({});
  const status = createMemo(() => fleet.snapshot?.hosts.find((x) => x.name === host));
  /** The host's models as reported, each with the catalog's name when it differs. */
  const modelWords = createMemo(() => {
    const s = status();
    if (!s) return null;
    const reported = [...new Set(s.gpus.length > 0 ? s.gpus.map((g) => g.model) : s.models)];
    if (reported.length === 0) return null;
    return reported
      .map((name) => {
        const mapped = modelName(name, capacity.facts);
        return mapped === name ? name : t("fleet.detail.modelMapped", { reported: name, model: mapped });
      })
      .join(t("common.listSeparator"));
  });
  /** Known until the fleet is loaded without it. */
  const unknown = () => fleet.snapshot !== null && status() === undefined;
  const figures = new Map<ChartMetric, HTMLElement>();
  let section!: HTMLElement;
  let title!: HTMLHeadingElement;

  const loader = new LatestLoader<HistoryRequest>(
    (r) =>
      commands.hostHistoryChart(r.host, r.metric, {
        range_s: RANGES[r.range].seconds,
        theme: r.theme,
        width_px: r.width,
        height_px: r.height,
        utc_offset_minutes: utcOffsetMinutes(),
      }),
    historyKey,
    (slot, req, outcome) =>
      setShown(slot as ChartMetric, (previous) => showOutcome(previous ?? CHART_LOADING, outcome, req.theme, req.range)),
  );

  function requestAll(): void {
    if (!section.isConnected || unknown()) return;
    const theme = getEffectiveTheme();
    for (const metric of DETAIL_METRICS) {
      const figure = figures.get(metric);
      if (!figure) continue;
      loader.request(metric, {
        host,
        metric,
        range: range(),
        theme,
        width: chartWidth(figure.clientWidth),
        height: DETAIL_CHART_HEIGHT,
      });
    }
  }

  function choose(id: RangeId): void {
    memory.detailRange = id;
    setRange(id);
    requestAll();
  }

  function onKey(ev: KeyboardEvent): void {
    if (ev.key !== "Escape" || ev.defaultPrevented || !section.isConnected) return;
    ev.preventDefault();
    props.back();
  }

  createEffect(
    on(
      () => props.connected,
      (connected) => {
        if (!connected) return;
        requestAll();
        // The list may have been scrolled far down: start the detail at its top (Back in
        // view). scrollIntoView would put the section's edge at the scroller's edge, under
        // the main area's top padding (it read as ~24 px scrolled under the header); the
        // scroller is moved so the padding stays above it.
        const scroller = section.closest<HTMLElement>(".main");
        if (scroller) {
          const padding = parseFloat(getComputedStyle(scroller).paddingTop) || 0;
          const top = section.getBoundingClientRect().top - scroller.getBoundingClientRect().top + scroller.scrollTop - padding;
          scroller.scrollTop = Math.max(0, top);
        } else {
          section.scrollIntoView?.({ block: "start" });
        }
        title.focus({ preventScroll: true });
      },
    ),
  );
  // Live: every tick for the short range (a chart still being drawn is skipped).
  const offFleet = when(onFleetChange, () => isLiveRange(range()))(requestAll);
  const offTheme = onThemeChange(() => requestAll());
  // Long ranges move by the minute (rollups), so a minute's refresh keeps them current.
  const offMinute = when(every(MINUTE_MS), () => !isLiveRange(range()))(requestAll);
  document.addEventListener("keydown", onKey);
  onCleanup(() => {
    offFleet();
    offTheme();
    offMinute();
    document.removeEventListener("keydown", onKey);
    loader.dispose();
  });

  const alt = (metric: ChartMetric) => t("fleet.detail.alt", { metric: t(METRIC_KEYS[metric]), host, range: rangeLong(range()) });

  return (
    <section ref={section} class="fleet-detail" id="fleet-detail" data-host={host} data-range={range()} aria-labelledby="detail-title">
      <p class="back-row">
        <a
          id="fleet-back"
          class="back-link"
          href="#/fleet"
          onClick={(ev) => {
            ev.preventDefault();
            props.back();
          }}
        >
          {t("fleet.detail.back")}
        </a>
      </p>
      <header class="view-header">
        <h1 ref={title} id="detail-title" tabindex={-1}>
          {host}
        </h1>
        <p class="detail-health">
          <Show when={status()}>
            {(s) => (
              <>
                <HealthBadge health={s().health} />
                <span class="detail-meta">{t(s().gpu_count === 1 ? "fleet.detail.meta.one" : "fleet.detail.meta", { region: regionLabel(s().region), gpus: s().gpu_count })}</span>
                <Show when={s().health !== "online" ? s().last_error : null}>
                  {(problem) => <span class="host-error">{t("fleet.lastError", { message: hostProblemText(problem()) })}</span>}
                </Show>
              </>
            )}
          </Show>
        </p>
        <Show when={modelWords()}>
          {(words) => (
            <p class="detail-model" data-testid="detail-model">
              {t("fleet.detail.model", { model: words() })}
            </p>
          )}
        </Show>
        <p class="lead">{t("fleet.detail.lead")}</p>
      </header>
      <div class="alerts">
        <Show when={unknown()}>
          <p class="alert alert-error" role="alert" data-testid="detail-unknown">
            {t("fleet.detail.unknownHost", { host })}
          </p>
        </Show>
      </div>
      <Show when={status()}>{(s) => <GpuTable host={s()} />}</Show>
      <RangePicker name="detail" ids={DETAIL_RANGES} selected={range()} onChange={choose} />
      <p class="hint detail-live" data-testid="detail-live" hidden={!isLiveRange(range())}>
        {t("fleet.detail.live")}
      </p>
      <div class="chart-grid detail-grid" hidden={unknown()}>
        <For each={DETAIL_METRICS}>
          {(metric) => {
            const name = t(METRIC_KEYS[metric]);
            onCleanup(() => figures.delete(metric));
            return (
              <ChartCard
                ref={(el) => figures.set(metric, el)}
                className="history-chart"
                metric={metric}
                caption={name}
                alt={alt(metric)}
                imgTestId="history-chart"
                height={DETAIL_CHART_HEIGHT}
                shown={shown[metric] ?? CHART_LOADING}
                exportName={() => exportName(host, metric, range())}
                errorWords={(message) => t("fleet.detail.chartError", { metric: name, message })}
              />
            );
          }}
        </For>
      </div>
    </section>
  );
}
