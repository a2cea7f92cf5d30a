// One history chart on screen (a host detail's metric, the fleet heatmap): caption,
// chart, Export SVG / PNG (the shell asks where, in the save dialog, and titles the file
// with the chart's alt text: host, metric, range), and its messages. The image is the same element from the first
// drawing on: a redraw changes its `src`, and a failed redraw dims the last good chart.

import { createSignal, For, Show, type JSX } from "solid-js";
import { commands, type ExportFormat } from "../../bindings";
import { isStale, type ChartShown } from "../../history";
import { t, type MessageKey } from "../../i18n";
import { call } from "../../ipc";
import { ErrorAlert } from "../error-alert";
import { SvgImage } from "../svg-image";

/** The export formats the shell writes, as the buttons name them (typed over ExportFormat: none is missing). */
const EXPORT_LABELS: Readonly<Record<ExportFormat, string>> = { svg: "SVG", png: "PNG" };
const EXPORT_FORMATS = Object.keys(EXPORT_LABELS) as ExportFormat[];
const EXPORT_BUTTONS: Readonly<Record<ExportFormat, MessageKey>> = { svg: "fleet.export.svg", png: "fleet.export.png" };

export function ChartCard(props: {
  /** `history-chart` or `heatmap-chart`, next to `chart-card`. */
  className: string;
  /** The metric, for a host detail's charts (data-chart). */
  metric?: string;
  caption: string;
  alt: string;
  imgTestId: string;
  height: number;
  shown: ChartShown;
  hidden?: boolean;
  /** File name of an export, without extension. */
  exportName: () => string;
  /** Words for a drawing failure. */
  errorWords: (message: string) => string;
  ref?: (figure: HTMLElement) => void;
}): JSX.Element {
  const [exporting, setExporting] = createSignal(false);
  const [savedTo, setSavedTo] = createSignal<string | null>(null);
  const [cancelled, setCancelled] = createSignal(false);
  const [exportError, setExportError] = createSignal<unknown>(null);

  async function exportAs(format: ExportFormat): Promise<void> {
    const svg = props.shown.svg;
    if (svg === null) return;
    setExporting(true);
    setExportError(null);
    setSavedTo(null);
    setCancelled(false);
    // The file says what it shows: the alt text names the host, the metric and the range.
    const res = await call(() => commands.exportChart(svg, format, props.exportName(), props.alt));
    if (res.status === "ok") {
      if (res.data === null) setCancelled(true);
      else setSavedTo(res.data);
    } else setExportError(res.error);
    setExporting(false);
  }

  const status = () => {
    const path = savedTo();
    if (path !== null) return t("fleet.export.saved", { path });
    if (cancelled()) return t("fleet.export.cancelled");
    return exporting() ? t("fleet.export.saving") : "";
  };

  return (
    <figure
      ref={props.ref}
      class={`chart-card ${props.className}`}
      data-chart={props.metric}
      data-state={props.shown.state}
      data-theme={props.shown.theme ?? undefined}
      data-range={props.shown.range ?? undefined}
      hidden={props.hidden}
    >
      <figcaption>
        <span class="chart-title">{props.caption}</span>
        <span class="chart-actions">
          <For each={EXPORT_FORMATS}>
            {(format) => (
              <button
                type="button"
                class="btn btn-small btn-quiet"
                data-action={`export-${format}`}
                aria-label={t("fleet.export.label", { chart: props.caption, format: EXPORT_LABELS[format] })}
                disabled={props.shown.svg === null || exporting()}
                onClick={() => void exportAs(format)}
              >
                {t(EXPORT_BUTTONS[format])}
              </button>
            )}
          </For>
        </span>
      </figcaption>
      <Show when={props.shown.state === "loading"}>
        <p class="chart-loading">{t("fleet.chartLoading")}</p>
      </Show>
      <SvgImage svg={props.shown.svg} label={props.alt} testid={props.imgTestId} stale={isStale(props.shown)} />
      <div class="chart-alert">
        <Show when={props.shown.state === "error" ? props.shown.error : null}>
          {(message) => (
            <p class="alert alert-error" role="alert" data-testid="chart-error">
              {props.errorWords(message())}
            </p>
          )}
        </Show>
      </div>
      <p class="export-status" role="status" data-testid="export-status" data-path={savedTo() ?? undefined}>
        {status()}
      </p>
      <div class="chart-alert">
        <Show when={exportError() !== null}>
          <ErrorAlert lead={t("fleet.export.failed")} error={exportError()} testid="chart-error" />
        </Show>
      </div>
    </figure>
  );
}
