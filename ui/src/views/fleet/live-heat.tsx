// The heatmap's stand-in until minutes of history are stored: one row per host, one cell
// per GPU, coloured by its latest utilization in ten steps of the stored heatmap's scale,
// with the scale as a legend. Rows keyed by host and cells by GPU index, so a tick only
// changes their level and title.

import { For, Index, type JSX } from "solid-js";
import type { HostStatus } from "../../bindings";
import { heatLevel } from "../../capacity";
import { formatPercent } from "../../format";
import { t } from "../../i18n";

const LEVELS = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];

export function HeatLegend(): JSX.Element {
  return (
    <div class="heat-legend" data-testid="heat-legend">
      <span class="heat-legend-label">{t("fleet.heatmap.legend")}</span>
      <span class="heat-legend-end">0%</span>
      <span class="heat-legend-scale" aria-hidden="true">
        <For each={LEVELS}>{(level) => <span class={`heat-swatch heat-${level}`} />}</For>
      </span>
      <span class="heat-legend-end">100%</span>
      <span class="heat-legend-none">
        <span class="heat-swatch heat-none" aria-hidden="true" />
        {t("fleet.heatmap.noReading")}
      </span>
    </div>
  );
}

export function LiveHeat(props: { hosts: readonly HostStatus[] }): JSX.Element {
  return (
    <div class="heat-live" data-testid="heatmap-live">
      <h3 class="heat-live-title">{t("fleet.heatmap.liveTitle")}</h3>
      <p class="hint">{t("fleet.heatmap.liveLead")}</p>
      <div class="heat-rows">
        <For each={props.hosts}>
          {(host) => (
            <div class="heat-row" data-host={host.name}>
              <span class="heat-host">{host.name}</span>
              <span class="heat-cells">
                <Index each={host.gpus}>
                  {(gpu) => {
                    const level = () => heatLevel(gpu().gpu_util_pct);
                    const words = () =>
                      t("fleet.heatmap.cell", {
                        host: host.name,
                        gpu: gpu().index,
                        util: level() === null ? t("fleet.heatmap.noReading") : formatPercent(gpu().gpu_util_pct),
                      });
                    return (
                      <span
                        class={`heat-cell heat-${level() ?? "none"}`}
                        data-host={host.name}
                        data-gpu={gpu().index}
                        data-level={level() ?? ""}
                        role="img"
                        aria-label={words()}
                        title={words()}
                      />
                    );
                  }}
                </Index>
              </span>
            </div>
          )}
        </For>
      </div>
      <HeatLegend />
    </div>
  );
}
