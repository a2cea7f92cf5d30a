// The Fleet list's tables: one per region, one row per host (name, region, health, GPUs,
// free of total, which of our pools hold what, models under the catalog's names, mean
// utilization). Rows are keyed by the host (the store is reconciled by
// name), so a tick updates their cells in place: a host's link under the pointer or
// holding the focus is never replaced.

import { createMemo, For, Show, type JSX } from "solid-js";
import type { Health, HostStatus } from "../../bindings";
import { hostShare } from "../../capacity";
import { capacity } from "../../fleet-store";
import { formatModels, formatPercent, healthClass, healthKey, type RegionGroup } from "../../format";
import { hostHash } from "../../history";
import { t } from "../../i18n";
import { hostProblemText } from "../../reasons";

export function regionLabel(region: string): string {
  return region.trim() === "" ? t("fleet.regionNone") : region;
}

export function HealthBadge(props: { health: Health }): JSX.Element {
  return (
    <span class={`health ${healthClass(props.health)}`} data-health={props.health}>
      <span class="dot" aria-hidden="true" />
      {t(healthKey(props.health))}
    </span>
  );
}

function HostRow(props: { host: HostStatus }): JSX.Element {
  const host = () => props.host;
  const problem = () => (host().health === "online" ? null : host().last_error);
  const share = createMemo(() => hostShare(host(), capacity.facts));
  const reported = () => [...new Set(host().gpus.map((g) => g.model))].join(t("common.listSeparator"));
  return (
    <tr data-host={host().name}>
      <th scope="row">
        <a
          class="host-name host-link"
          href={hostHash(host().name)}
          data-testid="host-link"
          title={t("fleet.openHost", { host: host().name })}
        >
          {host().name}
        </a>
        <Show when={host().url}>
          <span class="host-url">{host().url}</span>
        </Show>
        <Show when={problem()}>
          {(p) => (
            <span
              class={host().health === "degraded" ? "host-error host-error-degraded" : "host-error"}
              data-testid="host-reason"
            >
              {t(host().health === "degraded" ? "fleet.degradedReason" : "fleet.lastError", {
                message: hostProblemText(p()),
              })}
            </span>
          )}
        </Show>
      </th>
      <td>{regionLabel(host().region)}</td>
      <td>
        <HealthBadge health={host().health} />
      </td>
      <td class="num">{String(host().gpu_count)}</td>
      <td class="num" data-testid="host-free">
        {share().total === 0 ? t("common.empty") : t("fleet.freeOf", { free: share().free, total: share().total })}
      </td>
      <td class="held" data-testid="host-held">
        <Show when={share().total > 0} fallback={t("common.empty")}>
          <Show when={share().ours + share().others + share().offline > 0} fallback={<span class="muted">{t("fleet.heldNone")}</span>}>
            <ul class="held-list">
              <For each={share().pools}>
                {(p) => (
                  <li class="held-pool" data-pool={p.pool}>
                    {t("fleet.heldPool", { pool: p.pool, gpus: p.gpus })}
                  </li>
                )}
              </For>
              <Show when={share().others > 0}>
                <li class="held-others">{t("fleet.heldOthers", { gpus: share().others })}</li>
              </Show>
              <Show when={share().offline > 0}>
                <li class="held-offline">{t("fleet.heldOffline", { gpus: share().offline })}</li>
              </Show>
            </ul>
          </Show>
        </Show>
      </td>
      <td data-testid="host-models" title={reported() || undefined}>
        {share().models.length > 0 ? formatModels(share().models) : formatModels(host().models)}
      </td>
      <td class="num util">
        <span class="util-value">{formatPercent(host().mean_util_pct)}</span>
        <Show when={host().mean_util_pct !== null}>
          <meter
            class="util-bar"
            min={0}
            max={100}
            value={Math.max(0, Math.min(100, host().mean_util_pct ?? 0))}
            aria-hidden="true"
          />
        </Show>
      </td>
    </tr>
  );
}

function RegionTable(props: { region: string; hosts: readonly HostStatus[]; index: number }): JSX.Element {
  const headingId = () => `fleet-region-${props.index}`;
  return (
    <section class="region" data-region={props.region} aria-labelledby={headingId()}>
      <h2 id={headingId()} class="region-title">
        {regionLabel(props.region)}
        <span class="count" aria-hidden="true">
          {String(props.hosts.length)}
        </span>
      </h2>
      <div class="table-wrap">
        <table class="hosts" data-testid="hosts-table">
          <caption class="visually-hidden">{t("fleet.regionHosts", { region: regionLabel(props.region) })}</caption>
          <thead>
            <tr>
              <th scope="col">{t("fleet.col.name")}</th>
              <th scope="col">{t("fleet.col.region")}</th>
              <th scope="col">{t("fleet.col.health")}</th>
              <th scope="col" class="num">
                {t("fleet.col.gpus")}
              </th>
              <th scope="col" class="num">
                {t("fleet.col.free")}
              </th>
              <th scope="col">{t("fleet.col.held")}</th>
              <th scope="col">{t("fleet.col.models")}</th>
              <th scope="col" class="num">
                {t("fleet.col.util")}
              </th>
            </tr>
          </thead>
          <tbody>
            <For each={props.hosts}>{(host) => <HostRow host={host} />}</For>
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** A table per region, in the order of `groups` (format.ts `groupByRegion`). */
export function HostTables(props: { groups: readonly RegionGroup[] }): JSX.Element {
  // Keyed by region name; the store's host objects keep their identity across ticks, so
  // <For> keeps each table and each row.
  const regions = createMemo(() => props.groups.map((g) => g.region));
  return (
    <For each={regions()}>
      {(region, index) => (
        <RegionTable region={region} index={index()} hosts={props.groups.find((g) => g.region === region)?.hosts ?? []} />
      )}
    </For>
  );
}
