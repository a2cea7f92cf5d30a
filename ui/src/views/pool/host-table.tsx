// Each host's part in the pool: held, pending, releasing, failed and its last error, with
// a bar for the GPUs granted of those asked for. The rows are a store reconciled by host
// name, so a refresh updates the cells in place.

import { createComputed, For, Show, type JSX } from "solid-js";
import { createStore, reconcile } from "solid-js/store";
import type { PoolHostView } from "../../bindings";
import { formatCount } from "../../costs";
import { t } from "../../i18n";
import { hostProgressText } from "../../pool";
import { hostProblemText } from "../../reasons";

function HostRow(props: { host: PoolHostView }): JSX.Element {
  const host = props.host;
  const goal = () => host.leased + host.pending;
  return (
    <tr data-testid="pool-host-row" data-host={host.host} class={host.failed > 0 ? "has-failure" : undefined}>
      <th scope="row">{host.host}</th>
      <td>{host.region}</td>
      <td class="progress-cell">
        <Show when={goal() > 0}>
          <meter
            class="util-bar host-progress"
            min={0}
            max={goal()}
            value={host.leased}
            title={t("pool.progress", { leased: formatCount(host.leased), goal: formatCount(goal()) })}
          />
        </Show>
        <span class="progress-text">{hostProgressText(host)}</span>
      </td>
      <td class="num" data-col="leased">
        {formatCount(host.leased)}
      </td>
      <td class="num" data-col="pending">
        {formatCount(host.pending)}
      </td>
      <td class="num" data-col="releasing">
        {formatCount(host.releasing)}
      </td>
      <td class={host.failed > 0 ? "num bad" : "num"} data-col="failed">
        {formatCount(host.failed)}
      </td>
      <td data-col="error" class="error-cell" data-kind={host.last_error?.kind}>
        {host.last_error ? hostProblemText(host.last_error) : t("common.empty")}
      </td>
    </tr>
  );
}

export function HostTable(props: { pool: string; hosts: readonly PoolHostView[] }): JSX.Element {
  const [rows, setRows] = createStore<{ hosts: PoolHostView[] }>({ hosts: [] });
  // The store owns its copy: reconciling mutates it, never the answer it came from.
  createComputed(() => setRows("hosts", reconcile(structuredClone(props.hosts) as PoolHostView[], { key: "host" })));
  return (
    <section class="pool-table-card" aria-labelledby="pool-hosts-title">
      <h2 id="pool-hosts-title">{t("pool.hosts.title")}</h2>
      <Show
        when={rows.hosts.length > 0}
        fallback={
          <p class="hint" data-testid="pool-hosts">
            {t("pool.hosts.none")}
          </p>
        }
      >
        <div class="table-wrap">
          <table class="hosts pool-hosts" data-testid="pool-hosts">
            <caption class="visually-hidden">{t("pool.hosts.caption", { pool: props.pool })}</caption>
            <thead>
              <tr>
                <th scope="col">{t("pool.col.host")}</th>
                <th scope="col">{t("pool.col.region")}</th>
                <th scope="col">{t("pool.col.progress")}</th>
                <th scope="col" class="num">
                  {t("pool.col.leased")}
                </th>
                <th scope="col" class="num">
                  {t("pool.col.pending")}
                </th>
                <th scope="col" class="num">
                  {t("pool.col.releasing")}
                </th>
                <th scope="col" class="num">
                  {t("pool.col.failed")}
                </th>
                <th scope="col">{t("pool.col.lastError")}</th>
              </tr>
            </thead>
            <tbody>
              <For each={rows.hosts}>{(host) => <HostRow host={host} />}</For>
            </tbody>
          </table>
        </div>
      </Show>
    </section>
  );
}
