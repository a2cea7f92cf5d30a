// The Fleet's host filters: a name search and region / model / health choices, applied
// to the host tables and the chart grid alike. The fields are plain controlled inputs:
// a tick never touches them, so typing keeps its focus and caret.

import { For, type JSX } from "solid-js";
import type { Health } from "../../bindings";
import { NO_FILTER, type HostFilter } from "../../capacity";
import { healthKey } from "../../format";
import { t } from "../../i18n";
import { regionLabel } from "./host-table";

const HEALTHS: readonly Health[] = ["online", "degraded", "offline", "unknown"];

export function HostFilterBar(props: {
  filter: HostFilter;
  onChange: (filter: HostFilter) => void;
  regions: readonly string[];
  models: readonly string[];
  shown: number;
  total: number;
}): JSX.Element {
  const set = (patch: Partial<HostFilter>) => props.onChange({ ...props.filter, ...patch });
  const active = () =>
    props.filter.query !== "" || props.filter.region !== "" || props.filter.model !== "" || props.filter.health !== "";
  return (
    <form class="host-filter" data-testid="host-filter" role="search" onSubmit={(ev) => ev.preventDefault()}>
      <fieldset>
        <legend class="visually-hidden">{t("fleet.filter.legend")}</legend>
        <label class="filter-field filter-search">
          <span>{t("fleet.filter.search")}</span>
          <input
            id="fleet-search"
            type="search"
            autocomplete="off"
            placeholder={t("fleet.filter.searchPlaceholder")}
            value={props.filter.query}
            onInput={(ev) => set({ query: ev.currentTarget.value })}
          />
        </label>
        <label class="filter-field">
          <span>{t("fleet.filter.region")}</span>
          <select id="fleet-filter-region" value={props.filter.region} onChange={(ev) => set({ region: ev.currentTarget.value })}>
            <option value="">{t("fleet.filter.any")}</option>
            <For each={props.regions}>{(region) => <option value={region}>{regionLabel(region)}</option>}</For>
          </select>
        </label>
        <label class="filter-field">
          <span>{t("fleet.filter.model")}</span>
          <select id="fleet-filter-model" value={props.filter.model} onChange={(ev) => set({ model: ev.currentTarget.value })}>
            <option value="">{t("fleet.filter.any")}</option>
            <For each={props.models}>{(model) => <option value={model}>{model}</option>}</For>
          </select>
        </label>
        <label class="filter-field">
          <span>{t("fleet.filter.health")}</span>
          <select
            id="fleet-filter-health"
            value={props.filter.health}
            onChange={(ev) => set({ health: ev.currentTarget.value as Health | "" })}
          >
            <option value="">{t("fleet.filter.any")}</option>
            <For each={HEALTHS}>{(health) => <option value={health}>{t(healthKey(health))}</option>}</For>
          </select>
        </label>
        <button type="button" class="btn btn-small" id="fleet-filter-clear" disabled={!active()} onClick={() => props.onChange({ ...NO_FILTER })}>
          {t("fleet.filter.clear")}
        </button>
        {/* A filter is kept while the app runs (fleet/memory.ts): coming back to Fleet, it
            says so rather than showing fewer hosts as if that were all. */}
        <span class="filter-count" data-testid="filter-count" data-active={active() ? "true" : "false"}
          title={active() ? t("fleet.filter.kept") : undefined}
          role="status"
        >
          {t(active() ? "fleet.filter.shownFiltered" : "fleet.filter.shown", { shown: props.shown, total: props.total })}
        </span>
      </fieldset>
    </form>
  );
}
