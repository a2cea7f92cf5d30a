// Activity: every change to a pool, newest first (the last 200), re-read every 2 s while
// shown: when, which pool, who (operator, failover, rule, enforcer), from → to, why, the
// cost it moved, each host's part, and how it ended. A select filters to one pool.
//
// Stable selectors (end-to-end tests rely on these):
//   #view-activity                              the view
//   #activity-pool                              the filter (value "" = all pools)
//   [data-testid="activity-error"]              role=alert: loading failed
//   [data-testid="activity-empty"]              nothing logged (for this filter)
//   [data-testid="activity-table"]              the log: tr[data-testid="activity-row"][data-id][data-pool]
//     [data-actor] [data-outcome]               on the row; cells td[data-col="time|pool|actor|change|reason|cost|hosts|outcome"]

import { commands, type ActivityEntry } from "../bindings";
import { formatCount } from "../costs";
import { h, replaceChildren } from "../dom";
import { describeError } from "../format";
import { call, ipcError } from "../ipc";
import { changeReasonText } from "../reasons";
import { t } from "../i18n";
import { actorText, formatWhen, hostResultText, outcomeText, signedPerHour, signedPerMonth } from "../pool";
import type { View } from "./view";

const REFRESH_MS = 2000;
const LIMIT = 200;

/** The filter outlives one view instance (a language change rebuilds the view). */
const memory: { pool: string } = { pool: "" };

export function activityView(): View {
  let entries: ActivityEntry[] | null = null;
  let poolNames: string[] = [];
  let loadError: unknown = null;
  let loading = false;
  let disposed = false;
  let timer: number | undefined;
  let seq = 0;

  const filter = h("select", {
    id: "activity-pool",
    on: {
      change: () => {
        memory.pool = filter.value;
        entries = null;
        render();
        void refresh(true);
      },
    },
  });
  const errorBox = h("div", { class: "activity-error-box" });
  const body = h("div", { class: "activity-body" });
  const el = h(
    "section",
    { class: "view view-activity", id: "view-activity", "data-view": "activity", "aria-labelledby": "view-activity-title" },
    h(
      "header",
      { class: "view-header" },
      h("h1", { id: "view-activity-title" }, t("activity.title")),
      h("p", { class: "lead" }, t("activity.lead")),
    ),
    h("div", { class: "activity-filter field" }, h("label", { for: "activity-pool" }, t("activity.filter")), filter),
    errorBox,
    body,
  );

  function renderFilter(): void {
    const names = [...new Set([...poolNames, ...(memory.pool ? [memory.pool] : [])])].sort();
    const key = names.join("\n");
    if (filter.dataset.names !== key) {
      filter.dataset.names = key;
      replaceChildren(
        filter,
        h("option", { value: "" }, t("activity.allPools")),
        names.map((name) => h("option", { value: name }, name)),
      );
    }
    if (filter.value !== memory.pool) filter.value = memory.pool;
  }

  async function refresh(force = false): Promise<void> {
    if ((loading && !force) || disposed) return;
    loading = true;
    const mine = ++seq;
    const wanted = memory.pool;
    const [log, pools] = await Promise.all([
      call(() => commands.listActivity(wanted === "" ? null : wanted, LIMIT)),
      call(() => commands.listPools()),
    ]);
    if (mine === seq) loading = false;
    if (disposed || mine !== seq) return;
    if (pools.status === "ok") poolNames = pools.data.map((p) => p.name);
    if (log.status === "ok") {
      entries = log.data;
      loadError = null;
    } else {
      loadError = log.error;
      // A deleted pool whose log is gone: back to all pools.
      if (ipcError(log.error)?.kind === "not_found" && memory.pool !== "") {
        memory.pool = "";
        entries = null;
      }
    }
    render();
  }

  function row(entry: ActivityEntry, now: number): HTMLTableRowElement {
    const cost =
      entry.delta_per_hour_fen === null
        ? t("common.empty")
        : [
            h("span", { class: "nowrap cost-line" }, signedPerHour(entry.delta_per_hour_fen)),
            h("span", { class: "nowrap cost-line" }, signedPerMonth(entry.delta_per_month_fen)),
          ];
    const delta = entry.delta_per_hour_fen ?? 0;
    return h(
      "tr",
      {
        "data-testid": "activity-row",
        "data-id": entry.id,
        "data-pool": entry.pool,
        "data-actor": entry.actor,
        "data-outcome": entry.outcome,
        "data-from": entry.from,
        "data-to": entry.to,
      },
      h(
        "td",
        { "data-col": "time", class: "nowrap" },
        h("time", { datetime: new Date(entry.at_ms).toISOString() }, formatWhen(entry.at_ms, now)),
      ),
      h("td", { "data-col": "pool" }, entry.pool),
      h("td", { "data-col": "actor", class: "nowrap" }, h("span", { class: `actor actor-${entry.actor}` }, actorText(entry.actor))),
      h(
        "td",
        { "data-col": "change", class: "nowrap" },
        t("activity.change", { from: formatCount(entry.from), to: formatCount(entry.to) }),
      ),
      h("td", { "data-col": "reason", "data-reason": entry.reason.kind }, changeReasonText(entry.reason)),
      h("td", { "data-col": "cost", class: `num ${delta > 0 ? "dearer" : delta < 0 ? "cheaper" : ""}` }, cost),
      h(
        "td",
        { "data-col": "hosts" },
        entry.results.length === 0
          ? t("common.empty")
          : h(
              "ul",
              { class: "host-results" },
              entry.results.map((r) =>
                h("li", { class: r.failed > 0 ? "has-failure" : null, "data-host": r.host }, hostResultText(r)),
              ),
            ),
      ),
      h(
        "td",
        { "data-col": "outcome" },
        h("span", { class: `outcome outcome-${entry.outcome}` }, outcomeText(entry.outcome)),
        entry.finished_at_ms !== null && entry.outcome !== "in_progress"
          ? h("span", { class: "host-url" }, formatWhen(entry.finished_at_ms, now))
          : null,
      ),
    );
  }

  function render(): void {
    renderFilter();
    replaceChildren(
      errorBox,
      loadError !== null
        ? h(
            "div",
            { class: "alert alert-error", role: "alert", "data-testid": "activity-error" },
            h("span", { class: "alert-line" }, t("activity.loadError", { message: describeError(loadError) })),
          )
        : null,
    );
    if (entries === null) {
      replaceChildren(body, loadError === null ? h("p", { class: "loading" }, t("common.loading")) : null);
      return;
    }
    if (entries.length === 0) {
      replaceChildren(
        body,
        h(
          "div",
          { class: "empty-state", "data-testid": "activity-empty" },
          h("p", null, memory.pool ? t("activity.noneFor", { pool: memory.pool }) : t("activity.none")),
        ),
      );
      return;
    }
    const now = Date.now();
    replaceChildren(
      body,
      h(
        "div",
        { class: "table-wrap" },
        h(
          "table",
          { class: "hosts activity-table", "data-testid": "activity-table" },
          h("caption", { class: "visually-hidden" }, t("activity.caption")),
          h(
            "thead",
            null,
            h(
              "tr",
              null,
              h("th", { scope: "col" }, t("activity.col.time")),
              h("th", { scope: "col" }, t("activity.col.pool")),
              h("th", { scope: "col" }, t("activity.col.actor")),
              h("th", { scope: "col" }, t("activity.col.change")),
              h("th", { scope: "col" }, t("activity.col.reason")),
              h("th", { scope: "col", class: "num" }, t("activity.col.cost")),
              h("th", { scope: "col" }, t("activity.col.hosts")),
              h("th", { scope: "col" }, t("activity.col.outcome")),
            ),
          ),
          h("tbody", null, entries.map((e) => row(e, now))),
        ),
      ),
      entries.length >= LIMIT ? h("p", { class: "hint" }, t("activity.limited", { n: formatCount(LIMIT) })) : null,
    );
  }

  render();
  void refresh();

  return {
    el,
    mounted() {
      timer = window.setInterval(() => void refresh(), REFRESH_MS);
    },
    destroy() {
      disposed = true;
      if (timer !== undefined) window.clearInterval(timer);
    },
  };
}
