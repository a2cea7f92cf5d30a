// Every lease the pool holds: the host and region, the GPU indexes, its state, the GPUs'
// utilization, when it was granted and when its workload last saved its state; a lease on
// spot GPUs wears a "spot" badge, and one whose Slurm node is draining for scale-in says so.
// The rows are in a steady order (host, then GPU index: not the order the console lists
// them in), a store reconciled by lease id, so a refresh updates a lease's cells in place
// and only a new or gone lease adds or drops a row.
//
// Each active lease has a checkbox: ticked, it is the operator's choice of what to give back
// (the slider then previews releasing exactly those; see slider.tsx).

import { createComputed, For, Show, type JSX } from "solid-js";
import { createStore, reconcile } from "solid-js/store";
import type { PoolLeaseView, SlurmNodeState } from "../../bindings";
import { formatCount } from "../../costs";
import { formatPercent } from "../../format";
import { t } from "../../i18n";
import { formatWhen, indexesText, leaseStateText, sortLeases } from "../../pool";

/** The Slurm node a lease is, where the pool is bound to a partition (slurm-card.tsx). */
export type LeaseNode = { node: string; state: SlurmNodeState };

function LeaseRow(props: {
  lease: PoolLeaseView;
  node: LeaseNode | undefined;
  now: number;
  picked: boolean;
  onPick: (id: string, on: boolean) => void;
}): JSX.Element {
  const lease = props.lease;
  return (
    <tr
      data-testid="pool-lease-row"
      data-lease={lease.lease_id}
      data-host={lease.host}
      data-state={lease.state}
      data-spot={lease.spot ? "true" : "false"}
      data-saved={lease.checkpoint_at_ms === null ? "false" : "true"}
      data-draining={props.node?.state === "draining" || props.node?.state === "drained" ? props.node.state : undefined}
      classList={{ picked: props.picked }}
    >
      <td class="pick">
        <Show when={lease.state === "active"}>
          <input
            type="checkbox"
            class="lease-pick"
            data-testid="pool-lease-pick"
            data-lease={lease.lease_id}
            checked={props.picked}
            aria-label={t("pool.leases.pickLabel", { host: lease.host, indexes: indexesText(lease.gpu_indexes) })}
            onChange={(event) => props.onPick(lease.lease_id, event.currentTarget.checked)}
          />
        </Show>
      </td>
      <th scope="row">
        {lease.host}
        <Show when={lease.spot}>
          {" "}
          <span class="badge badge-soft lease-spot" data-testid="pool-lease-spot" title={t("pool.lease.spotTitle")}>
            {t("pool.lease.spot")}
          </span>
        </Show>
        <span class="host-url">{lease.region}</span>
      </th>
      <td class="mono">{indexesText(lease.gpu_indexes)}</td>
      <td>
        <span class={`lease-state lease-${lease.state}`}>{leaseStateText(lease.state)}</span>
        <Show when={lease.starting && lease.state === "active"}>
          {" "}
          <span class="badge badge-soft lease-starting" data-testid="pool-lease-starting" title={t("pool.lease.startingTitle")}>
            {t("pool.lease.starting")}
          </span>
        </Show>
        <Show when={props.node?.state === "draining" || props.node?.state === "drained" ? props.node : null}>
          {(node) => (
            <>
              {" "}
              <span
                class="badge badge-soft lease-draining"
                data-testid="pool-lease-draining"
                title={t("pool.lease.drainingTitle", { node: node().node })}
              >
                {t(node().state === "drained" ? "pool.lease.drained" : "pool.lease.draining")}
              </span>
            </>
          )}
        </Show>
        <Show when={lease.reclaim_deadline_ms}>
          {(at) => (
            <span class="muted" data-testid="pool-lease-reclaim">
              {" "}
              {t("pool.lease.reclaimUntil", { time: formatWhen(at(), props.now) })}
            </span>
          )}
        </Show>
      </td>
      <td class="num">{formatPercent(lease.util_pct)}</td>
      <td>{formatWhen(lease.granted_at_ms, props.now)}</td>
      <td data-testid="pool-lease-saved">{lease.checkpoint_at_ms === null ? "—" : formatWhen(lease.checkpoint_at_ms, props.now)}</td>
    </tr>
  );
}

export function LeaseTable(props: {
  pool: string;
  leases: readonly PoolLeaseView[];
  /** Each lease's Slurm node by lease id (empty for a pool bound to no partition). */
  nodes?: ReadonlyMap<string, LeaseNode>;
  now: number;
  /** The leases the operator ticked to give back. */
  picked: readonly string[];
  onPick: (id: string, on: boolean) => void;
  onClearPicked: () => void;
}): JSX.Element {
  const [rows, setRows] = createStore<{ leases: PoolLeaseView[] }>({ leases: [] });
  // The store owns its copy: reconciling mutates it, never the answer it came from.
  createComputed(() => setRows("leases", reconcile(sortLeases(structuredClone(props.leases) as PoolLeaseView[]), { key: "lease_id" })));
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
      <div hidden={empty()}>
        <p class="field-hint pool-pick-hint">
          {t("pool.leases.pickHint")}{" "}
          <Show when={props.picked.length > 0}>
            <span class="pool-picked" data-testid="pool-picked" data-count={props.picked.length}>
              {t("pool.leases.picked", { n: formatCount(props.picked.length) })}
            </span>{" "}
            <button type="button" class="btn btn-small" id="pool-pick-clear" data-testid="pool-pick-clear" onClick={() => props.onClearPicked()}>
              {t("pool.leases.clear")}
            </button>
          </Show>
        </p>
        <div class="table-wrap">
          <table class="hosts pool-leases" data-testid="pool-leases">
            <caption class="visually-hidden">{t("pool.leases.caption", { pool: props.pool })}</caption>
            <thead>
              <tr>
                <th scope="col" class="pick">
                  {t("pool.col.release")}
                </th>
                <th scope="col">{t("pool.col.host")}</th>
                <th scope="col">{t("pool.col.gpus")}</th>
                <th scope="col">{t("pool.col.state")}</th>
                <th scope="col" class="num">
                  {t("pool.col.util")}
                </th>
                <th scope="col">{t("pool.col.granted")}</th>
                <th scope="col">{t("pool.col.saved")}</th>
              </tr>
            </thead>
            <tbody>
              <For each={rows.leases}>
                {(lease) => (
                  <LeaseRow lease={lease} node={props.nodes?.get(lease.lease_id)} now={props.now} picked={props.picked.includes(lease.lease_id)} onPick={props.onPick} />
                )}
              </For>
            </tbody>
          </table>
        </div>
      </div>
    </section>
  );
}
