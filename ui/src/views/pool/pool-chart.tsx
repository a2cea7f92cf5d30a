// A pool's own chart: desired, ready, warming and utilization over the last hour (an SVG
// drawn by the Rust side), and under it the scale-out in progress as a bar (ready, then
// warming) with its ETA from the hosts' measured delivery time, or why there is none.
//
// On Solid: the chart is asked for again when its pool changes or the log grows (a
// decision), on a theme change, and as time moves it along: every 3 s while GPUs warm (the
// ETA), else every 30 s (a row a minute); one request in flight (live.ts). The image's source and the bar's widths change in place, and the
// per-host lines are reconciled by host, so nothing under the pointer is replaced.
//
// Stable selectors (end-to-end tests rely on these):
//   [data-testid="pool-chart"]            data-state="loading|ready|error", data-pool
//     [data-testid="pool-chart-img"] svg   the chart (inline SVG), data-theme
//     [data-testid="pool-chart-error"]    role=alert: the chart could not be drawn
//     [data-testid="pool-scale-out"]      data-state="none|unmeasured|eta|overdue",
//                                           data-desired, data-ready, data-warming (numbers)
//       [data-testid="pool-scale-out-eta"]          the ETA in words (absent when none)
//       li[data-testid="pool-warming-host"][data-host]   each host's warming and delivery
//   [data-testid="pool-chart-marks"]      role=group over the image: the rule decisions
//     button[data-testid="pool-chart-mark"]  data-id (the activity entry), data-kind="out|in|held",
//                                           data-shadow; aria-label names it, aria-describedby
//                                           its tooltip
//     [data-testid="pool-chart-mark-tip"]  role=tooltip: the reason; shown on hover or focus
//   [data-testid="pool-chart-legend"]     what each kind of mark means (shown when there are marks)
//
// The decision marks are buttons laid over the image where the Rust side drew each mark
// (its x/y in % of the image); reconciled by entry id, so a refresh never replaces the
// focused one. Hover, focus or a click shows the reason; Escape hides it.

import { createMemo, createSignal, For, onCleanup, onMount, Show, type JSX } from "solid-js";
import { createStore, reconcile } from "solid-js/store";
import { commands, type DecisionMark, type PoolChart as PoolChartData, type WarmingHost } from "../../bindings";
import { gpus } from "../../costs";
import { SvgImage } from "../svg-image";
import { chartWidth, utcOffsetMinutes } from "../../history";
import { t } from "../../i18n";
import { call } from "../../ipc";
import { formatWhen } from "../../pool";
import { barShares, markKind, markLabelKey, markPlace, scaleOutState, shortDuration, tipSide } from "../../pool-chart";
import { changeReasonText } from "../../reasons";
import { getEffectiveTheme, onThemeChange } from "../../theme";
import { ErrorAlert } from "../error-alert";
import { activityAppended, every, poolChanged, useLive, when } from "../../live";

/** While GPUs warm, the ETA is read again this often. */
const WARMING_MS = 3_000;
/** Otherwise the chart moves with time by a row a minute: drawn again this often. */
const IDLE_MS = 30_000;
const RANGE_S = 3600;
const HEIGHT_PX = 260;

const units = () => ({ s: t("pool.unit.s"), min: t("pool.unit.min"), h: t("pool.unit.h") });

/** One rule decision over the chart: a focusable button on the drawn mark, its tooltip. */
function Mark(props: { mark: DecisionMark; now: number; open: boolean; onOpen: (open: boolean) => void }): JSX.Element {
  const tipId = () => `pool-mark-tip-${props.mark.id}`;
  const label = () =>
    t(markLabelKey(props.mark), {
      time: formatWhen(props.mark.at_ms, props.now),
      from: props.mark.from,
      // A held mark names one count ("held at 1 GPU"); a move names two ("2 → 6 GPUs").
      to: markKind(props.mark) === "held" ? gpus(props.mark.to) : props.mark.to,
    });
  return (
    <span
      class="pool-mark-spot"
      style={markPlace(props.mark)}
      data-side={tipSide(props.mark.x_pct)}
      onMouseEnter={() => props.onOpen(true)}
      onMouseLeave={() => props.onOpen(false)}
    >
      <button
        type="button"
        class="pool-mark"
        data-testid="pool-chart-mark"
        data-id={props.mark.id}
        data-kind={markKind(props.mark)}
        data-shadow={String(props.mark.shadow)}
        aria-label={label()}
        aria-describedby={tipId()}
        title={props.open ? undefined : label()}
        data-open={String(props.open)}
        onFocus={() => props.onOpen(true)}
        onBlur={() => props.onOpen(false)}
        onClick={() => props.onOpen(true)}
        onKeyDown={(e) => {
          if (e.key === "Escape" && props.open) {
            e.stopPropagation();
            props.onOpen(false);
          }
        }}
      />
      <span role="tooltip" id={tipId()} class="pool-mark-tip" data-testid="pool-chart-mark-tip" hidden={!props.open}>
        <strong>{label()}</strong>
        <span>{changeReasonText(props.mark.reason)}</span>
      </span>
    </span>
  );
}

export function PoolChart(props: { pool: string }): JSX.Element {
  const [chart, setChart] = createSignal<PoolChartData | null>(null);
  const [theme, setTheme] = createSignal(getEffectiveTheme());
  const [error, setError] = createSignal<unknown>(null);
  const [now, setNow] = createSignal(Date.now());
  const [hosts, setHosts] = createStore<{ list: WarmingHost[] }>({ list: [] });
  const [marks, setMarks] = createStore<{ list: DecisionMark[] }>({ list: [] });
  const [openMark, setOpenMark] = createSignal<number | null>(null);
  let figure!: HTMLDivElement;
  let disposed = false;
  let drawnAt = 0;

  async function load(): Promise<void> {
    if (disposed) return;
    drawnAt = Date.now();
    const drawn = getEffectiveTheme();
    const res = await call(() =>
      commands.poolChart(
        props.pool,
        {
          range_s: RANGE_S,
          theme: drawn,
          width_px: chartWidth(figure?.clientWidth ?? 0),
          height_px: HEIGHT_PX,
          utc_offset_minutes: utcOffsetMinutes(),
        },
        {
          desired: t("pool.chart.desired"),
          ready: t("pool.chart.ready"),
          warming: t("pool.chart.warming"),
          utilization: t("pool.chart.util"),
          queue: t("pool.chart.queue"),
          reclaimed: t("pool.chart.reclaimed"),
          spot_paused: t("pool.chart.spotPaused"),
        },
      ),
    );
    if (disposed) return;
    setNow(Date.now());
    if (res.status === "ok") {
      setChart(res.data);
      setTheme(drawn);
      setHosts("list", reconcile(structuredClone(res.data.scale_out?.hosts ?? []), { key: "host" }));
      setMarks("list", reconcile(structuredClone(res.data.marks), { key: "id" }));
      setError(null);
    } else {
      setError(res.error);
    }
  }

  const live = useLive(load, [
    poolChanged(() => props.pool),
    activityAppended(),
    when(every(WARMING_MS), () => (chart()?.scale_out?.warming ?? 0) > 0 || Date.now() - drawnAt >= IDLE_MS),
  ]);
  onMount(() => {
    const off = onThemeChange(() => void live.request());
    onCleanup(() => {
      disposed = true;
      off();
    });
  });

  const state = createMemo(() => scaleOutState(chart()?.scale_out ?? null, now()));
  const counts = () => {
    const c = chart();
    return { desired: c?.desired ?? 0, ready: c?.ready ?? 0, warming: c?.scale_out?.warming ?? 0 };
  };
  const shares = () => barShares(counts().desired, counts().ready, counts().warming);
  const eta = (): string | null => {
    const s = state();
    switch (s.kind) {
      case "none":
        return null;
      case "unmeasured":
        return t("pool.scaleOut.unmeasured", {
          hosts: hosts.list
            .filter((h) => h.delivery_ms === null)
            .map((h) => h.host)
            .join(t("common.listSeparator")),
        });
      case "starting":
        return t("pool.scaleOut.starting", { count: s.starting });
      case "eta":
        return s.seconds === 0 ? t("pool.scaleOut.etaNow") : t("pool.scaleOut.eta", { time: shortDuration(s.seconds, units()) });
      case "overdue":
        return t("pool.scaleOut.overdue", { time: shortDuration(s.seconds, units()) });
    }
  };

  return (
    <section
      class="card pool-chart"
      data-testid="pool-chart"
      data-pool={props.pool}
      data-state={error() !== null ? "error" : chart() === null ? "loading" : "ready"}
    >
      <h3>{t("pool.chart.title")}</h3>
      <div class="pool-chart-figure" ref={figure}>
        <Show when={chart()} fallback={<p class="muted">{t("pool.chart.loading")}</p>}>
          {(c) => (
            <div class="pool-chart-frame">
              <SvgImage svg={c().svg} label={t("pool.chart.alt", { name: props.pool })} testid="pool-chart-img" theme={theme()} />
              <Show when={marks.list.length > 0}>
                <div class="pool-chart-marks" role="group" aria-label={t("pool.chart.marks")} data-testid="pool-chart-marks">
                  <For each={marks.list}>
                    {(mark) => (
                      <Mark
                        mark={mark}
                        now={now()}
                        open={openMark() === mark.id}
                        onOpen={(open) => setOpenMark((was) => (open ? mark.id : was === mark.id ? null : was))}
                      />
                    )}
                  </For>
                </div>
              </Show>
            </div>
          )}
        </Show>
      </div>
      <Show when={marks.list.length > 0}>
        <div class="pool-chart-legend" data-testid="pool-chart-legend">
          <span class="pool-chart-legend-title">{t("pool.chart.legend")}</span>
          <ul>
            <li class="legend-out">{t("pool.chart.legend.out")}</li>
            <li class="legend-in">{t("pool.chart.legend.in")}</li>
            <li class="legend-held">{t("pool.chart.legend.held")}</li>
            <li class="legend-shadow">{t("pool.chart.legend.shadow")}</li>
          </ul>
          <span class="hint">{t("pool.chart.legend.hint")}</span>
        </div>
      </Show>
      <Show when={error() !== null}>
        <ErrorAlert testid="pool-chart-error" lead={t("pool.chart.failed")} error={error()} />
      </Show>
      <Show when={chart() !== null}>
        <div
          class="pool-scale-out"
          data-testid="pool-scale-out"
          data-state={state().kind}
          data-desired={counts().desired}
          data-ready={counts().ready}
          data-warming={counts().warming}
        >
          <div class="pool-scale-out-bar" aria-hidden="true">
            <span class="pool-scale-out-ready" style={{ width: `${shares().ready}%` }} />
            <span class="pool-scale-out-warming" style={{ width: `${shares().warming}%` }} />
          </div>
          <p class="pool-scale-out-words">
            {state().kind !== "none"
              ? t("pool.scaleOut.progress", counts())
              : counts().ready > counts().desired
                ? t("pool.scaleOut.over", { ready: counts().ready, desired: counts().desired })
                : t("pool.scaleOut.settled", { ready: counts().ready, desired: counts().desired })}
          </p>
          <Show when={eta()}>
            {(words) => (
              <p class="pool-scale-out-eta" data-testid="pool-scale-out-eta">
                {words()}
              </p>
            )}
          </Show>
          <Show when={hosts.list.length > 0}>
            <ul class="pool-warming-hosts">
              <For each={hosts.list}>
                {(host) => (
                  <li data-testid="pool-warming-host" data-host={host.host}>
                    {host.delivery_ms === null
                      ? t("pool.scaleOut.hostUnmeasured", { host: host.host, warming: host.warming })
                      : t("pool.scaleOut.host", {
                          host: host.host,
                          warming: host.warming,
                          time: shortDuration(host.delivery_ms / 1000, units()),
                          samples: host.samples,
                        })}
                  </li>
                )}
              </For>
            </ul>
          </Show>
        </div>
      </Show>
    </section>
  );
}
