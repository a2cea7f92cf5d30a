// A host's GPUs now, one row each: utilization, memory, temperature, power, clocks, the
// processes running on it (pid, name, memory), ECC and Xid counts, and the pool and lease
// holding it. A reading the card cannot give is "—". Rows are keyed by GPU index (the
// store keeps each GPU's object across ticks), so a tick changes cells in place.

import { For, Index, Show, type JSX } from "solid-js";
import type { Gpu, HostStatus } from "../../bindings";
import { holderOf, ourLeases, type GpuHolder } from "../../capacity";
import { capacity } from "../../fleet-store";
import { formatMemoryGib, formatPercent } from "../../format";
import { t } from "../../i18n";

const dash = () => t("common.empty");

function num(value: number | null, digits = 0): string {
  return value === null || !Number.isFinite(value) ? dash() : value.toFixed(digits);
}

function memoryWords(mib: number | null): string {
  if (mib === null) return dash();
  return mib >= 1024 ? `${(mib / 1024).toFixed(1)} GiB` : `${mib} MiB`;
}

function Processes(props: { gpu: Gpu }): JSX.Element {
  return (
    <Show when={props.gpu.processes} fallback={dash()}>
      {(list) => (
        <Show when={list().length > 0} fallback={<span class="muted">{t("fleet.gpus.noProcess")}</span>}>
          <ul class="process-list">
            <Index each={list()}>
              {(p) => (
                <li data-pid={p().pid} data-memory-mib={p().used_memory_mib ?? ""}>
                  <span class="process-pid">{p().pid}</span> <span class="process-name">{p().name ?? t("fleet.gpus.processUnnamed")}</span>{" "}
                  <span class="process-memory">{memoryWords(p().used_memory_mib)}</span>
                </li>
              )}
            </Index>
          </ul>
        </Show>
      )}
    </Show>
  );
}

function Holder(props: { holder: GpuHolder }): JSX.Element {
  const h = () => props.holder;
  return (
    <span class={`holder holder-${h().kind}`} data-holder={h().kind} data-pool={h().kind === "ours" ? (h() as { pool: string }).pool : undefined}>
      {(() => {
        const holder = h();
        switch (holder.kind) {
          case "free":
            return t("fleet.gpus.free");
          case "offline":
            return t("fleet.gpus.offline");
          case "ours":
            return (
              <>
                <span class="holder-pool">{holder.pool}</span>
                <span class="holder-lease">{holder.leaseId}</span>
              </>
            );
          case "others":
            return (
              <>
                {t("fleet.gpus.others")}
                <span class="holder-lease">{holder.leaseId}</span>
              </>
            );
        }
      })()}
    </span>
  );
}

export function GpuTable(props: { host: HostStatus }): JSX.Element {
  const ours = () => ourLeases(capacity.facts);
  return (
    <section class="gpu-table-card" aria-labelledby="gpu-table-title">
      <h2 id="gpu-table-title">{t("fleet.gpus.title")}</h2>
      <Show
        when={props.host.gpus.length > 0}
        fallback={
          <p class="hint" data-testid="gpu-table-empty">
            {t("fleet.gpus.empty")}
          </p>
        }
      >
        <div class="table-wrap">
          <table class="gpu-table" data-testid="gpu-table">
            <caption class="visually-hidden">{t("fleet.gpus.caption", { host: props.host.name })}</caption>
            <thead>
              <tr>
                <th scope="col">{t("fleet.gpus.gpu")}</th>
                <th scope="col" class="num">
                  {t("fleet.gpus.util")}
                </th>
                <th scope="col" class="num">
                  {t("fleet.gpus.memory")}
                </th>
                <th scope="col" class="num">
                  {t("fleet.gpus.temperature")}
                </th>
                <th scope="col" class="num">
                  {t("fleet.gpus.power")}
                </th>
                <th scope="col" class="num">
                  {t("fleet.gpus.clocks")}
                </th>
                <th scope="col">{t("fleet.gpus.processes")}</th>
                <th scope="col" class="num">
                  {t("fleet.gpus.ecc")}
                </th>
                <th scope="col" class="num">
                  {t("fleet.gpus.xid")}
                </th>
                <th scope="col">{t("fleet.gpus.holder")}</th>
              </tr>
            </thead>
            <tbody>
              <For each={props.host.gpus}>
                {(gpu) => (
                  <tr data-gpu={gpu.index} classList={{ unhealthy: !gpu.healthy }}>
                    <th scope="row">
                      <span class="gpu-index">{`GPU ${gpu.index}`}</span>
                      <Show when={!gpu.healthy && gpu.health_reason}>
                        {(reason) => <span class="host-error">{t("fleet.gpus.unhealthy", { reason: reason() })}</span>}
                      </Show>
                    </th>
                    <td class="num" data-col="util">
                      {formatPercent(gpu.gpu_util_pct)}
                    </td>
                    <td class="num" data-col="memory">
                      {formatMemoryGib(gpu.memory_used_mib, gpu.memory_total_mib)}
                    </td>
                    <td class="num" data-col="temperature">
                      {gpu.temperature_c === null ? dash() : `${num(gpu.temperature_c)} °C`}
                    </td>
                    <td class="num" data-col="power">
                      {gpu.power_draw_w === null
                        ? dash()
                        : `${num(gpu.power_draw_w)} / ${num(gpu.power_limit_w)}`}
                    </td>
                    <td class="num" data-col="clocks">
                      {gpu.sm_clock_mhz === null && gpu.memory_clock_mhz === null
                        ? dash()
                        : `${num(gpu.sm_clock_mhz)} / ${num(gpu.memory_clock_mhz)}`}
                    </td>
                    <td data-col="processes">
                      <Processes gpu={gpu} />
                    </td>
                    <td class="num" data-col="ecc">
                      {gpu.ecc_corrected === null && gpu.ecc_uncorrected === null
                        ? dash()
                        : `${num(gpu.ecc_corrected)} / ${num(gpu.ecc_uncorrected)}`}
                    </td>
                    <td class="num" data-col="xid">
                      {num(gpu.xid_errors)}
                    </td>
                    <td data-col="holder">
                      <Holder holder={holderOf(props.host, gpu, ours())} />
                    </td>
                  </tr>
                )}
              </For>
            </tbody>
          </table>
        </div>
      </Show>
    </section>
  );
}
