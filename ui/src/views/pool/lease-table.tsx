// Every lease the pool holds: the host and region, the GPU indexes, its state, the GPUs'
// utilization and when it was granted. The rows are a store reconciled by lease id, so a
// refresh updates a lease's cells in place and only a new or gone lease adds or drops a row.

import { createComputed, For, Show, type JSX } from "solid-js";
import { createStore, reconcile } from "solid-js/store";
import type { PoolLeaseView } from "../../bindings";
import { formatCount } from "../../costs";
import { formatPercent } from "../../format";
import { t } from "../../i18n";
import { formatWhen, indexesText, leaseStateText } from "../../pool";

function LeaseRow(props: { lease: PoolLeaseView; now: number }): JSX.Element {
  const lease = props.lease;
  return (
    <tr data-testid="pool-lease-row" data-lease={lease.lease_id} data-host={lease.host} data-state={lease.state}>
      <th scope="row">
        {lease.host}
        <span class="host-url">{lease.region}</span>
      </th>
      <td class="mono">{indexesText(lease.gpu_indexes)}</td>
      <td>
        <span class={`lease-state lease-${lease.state}`}>{leaseStateText(lease.state)}</span>
      </td>
      <td class="num">{formatPercent(lease.util_pct)}</td>
      <td>{formatWhen(lease.granted_at_ms, props.now)}</td>
    </tr>
  );
}

export function LeaseTable(props: { pool: string; leases: readonly PoolLeaseView[]; now: number }): JSX.Element {
  const [rows, setRows] = createStore<{ leases: PoolLeaseView[] }>({ leases: [] });
  // The store owns its copy: reconciling mutates it, never the answer it came from.
  createComputed(() => setRows("leases", reconcile(structuredClone(props.leases) as PoolLeaseView[], { key: "lease_id" })));
  const empty = () => rows.leases.length === 0;
  return (
    <section class="pool-table-card" aria-labelledby="pool-leases-title">
      <h2 id="pool-leases-title">
        {t("pool.leases.title")}
        <span class="count">{formatCount(rows.leases.length)}</span>
      </h2>
      <Show when={empty()}>
        <p class="hint" data-testid="pool-leases-empty">
          {t("pool.leases.none")}
        </p>
      </Show>
      <div class="table-wrap" hidden={empty()}>
        <table class="hosts pool-leases" data-testid="pool-leases">
          <caption class="visually-hidden">{t("pool.leases.caption", { pool: props.pool })}</caption>
          <thead>
            <tr>
              <th scope="col">{t("pool.col.host")}</th>
              <th scope="col">{t("pool.col.gpus")}</th>
              <th scope="col">{t("pool.col.state")}</th>
              <th scope="col" class="num">
                {t("pool.col.util")}
              </th>
              <th scope="col">{t("pool.col.granted")}</th>
            </tr>
          </thead>
          <tbody>
            <For each={rows.leases}>{(lease) => <LeaseRow lease={lease} now={props.now} />}</For>
          </tbody>
        </table>
      </div>
    </section>
  );
}
