// Pool: pick a pool, see where it stands (desired, held, pending, releasing, lost, its
// phase in words, spend, each host's part and every lease), move the slider to see what a
// new count would cost and do before letting go, and create, edit or delete pools.
//
// The pools are re-read every second while the view is shown (one request in flight).
// The slider, the number field and the form are built once per pool and never rebuilt
// by a refresh, so focus and typing survive; only the live parts are redrawn.
//
// The slider: moving it (`input`) asks previewScale for the value (one request in flight,
// only the latest answer shown). Letting go with the pointer (`change` after a pointer
// press), Enter on the slider or in the number field, or the Apply button commits it
// (scalePool). Arrow keys on the slider only preview, so stepping through values with the
// keyboard does not rent at every step. Escape puts it back. When the preview says
// `needs_confirmation`, an inline question comes first; Cancel puts the slider back.
//
// Stable selectors (end-to-end tests rely on these):
//   #view-pool                                the view; data-pool (the selected pool's name)
//   #pool-select                              the pool picker (a select)
//   [data-testid="pool-error"]                role=alert: loading the pools failed
//   [data-testid="pool-empty"]                no pool yet
//   [data-testid="pool-status"]               the selected pool's state card
//     [data-testid="pool-desired"] [data-testid="pool-actual"] [data-testid="pool-pending"]
//     [data-testid="pool-releasing"] [data-testid="pool-lost"]   numbers (text = the count)
//     [data-testid="pool-phase"]              data-phase="converged|scaling_out|…", the phase in words
//     [data-testid="pool-message"]            why it is not converged
//     [data-testid="pool-spend"]              month to date, projection, run rate, GPU-hours (or the problem)
//   #pool-slider ([data-testid="pool-slider"])           input type=range, min..max
//   #pool-count ([data-testid="pool-count-input"])       input type=number
//   #pool-apply ([data-testid="pool-apply"])             commits the value shown
//   [data-testid="pool-preview"]              data-state="idle|pending|ready|error", data-to
//     [data-testid="pool-preview-target"]     "6 GPUs (now 2)"
//     [data-testid="pool-preview-cost"]       the cost after, per hour and per month
//     [data-testid="pool-preview-delta"]      signed change per hour and per month
//     [data-testid="pool-preview-free"]       free matching GPUs now, per host
//     [data-testid="pool-preview-plan"]       "Rent 6: 4 on cn-east-001, 2 on cn-south-002"
//   [data-testid="pool-confirm"]              the confirmation question: confirmation_reason
//     #pool-confirm-yes ([data-testid="confirm-scale"]) #pool-confirm-no ([data-testid="cancel-scale"])
//   [data-testid="pool-commit"]               role=status: the committed change's outcome (data-outcome)
//   [data-testid="pool-hosts"]                per-host table: tr[data-testid="pool-host-row"][data-host]
//                                               td[data-col="leased|pending|releasing|failed|error"]
//   [data-testid="pool-leases"]               leases: tr[data-testid="pool-lease-row"][data-lease][data-host]
//   #pool-policy-gpus #pool-policy-cost #pool-policy-save [data-testid="pool-policy-status"]
//   #pool-new #pool-edit #pool-delete         open the form / ask to delete
//   [data-testid="pool-delete-confirm"] #pool-delete-yes #pool-delete-no
//   #pool-form (data-mode="create|edit"), fields #pool-f-NAME, #pool-f-NAME-error,
//     region checkboxes input[name="regions"][value=REGION], #pool-f-save #pool-f-cancel,
//     [data-testid="pool-form-error"]

import {
  commands,
  type ActivityEntry,
  type OverlayMode,
  type PlacementPolicy,
  type PoolOptions,
  type PoolView,
  type ScalePreview,
  type Term,
} from "../bindings";
import { formatCount, formatMoney, gpus } from "../costs";
import { h, replaceChildren } from "../dom";
import { describeError, formatPercent } from "../format";
import { t, type MessageKey } from "../i18n";
import { call, fieldOf, ipcError } from "../ipc";
import { confirmationText, hostProblemText, poolNotesText } from "../reasons";
import {
  checkPoolForm,
  formatGpuHours,
  formatWhen,
  freeText,
  hostResultText,
  indexesText,
  leaseStateText,
  outcomeText,
  parseCount,
  parseYuan,
  perHour,
  perMonth,
  phaseText,
  planWords,
  POOL_FIELDS,
  type PoolChoices,
  signedPerHour,
  signedPerMonth,
  yuanInput,
  LatestOnly,
  type PoolField,
  type Phrase,
} from "../pool";
import type { View } from "./view";

const REFRESH_MS = 1000;

/** The selected pool outlives one view instance (a language change rebuilds the view). */
const memory: { selected: string | null } = { selected: null };

function tr(p: Phrase): string {
  return t(p.key, p.params);
}

/** An alert: the lead in the current language, the backend's message (which names the field) under it. */
function errorAlert(lead: string, err: unknown, testid: string): HTMLElement {
  const ipc = ipcError(err);
  const message = ipc ? ipc.message.trim() || ipc.kind : describeError(err);
  return h(
    "div",
    { class: "alert alert-error", role: "alert", "data-testid": testid, "data-kind": ipc?.kind ?? "" },
    h("span", { class: "alert-line" }, lead),
    h("span", { class: "alert-message", lang: ipc ? "en" : null }, message),
  );
}

const TERM_KEYS: Record<Term, MessageKey> = { month: "pool.term.month", year: "pool.term.year" };
const OVERLAY_KEYS: Record<OverlayMode, MessageKey> = {
  hour: "pool.overlay.hour",
  day: "pool.overlay.day",
  week: "pool.overlay.week",
  spot: "pool.overlay.spot",
};
const PLACEMENT_KEYS: Record<PlacementPolicy, MessageKey> = { pack: "pool.placement.pack", spread: "pool.placement.spread" };

function stat(label: MessageKey, value: string | number, testid: string, extra?: string): HTMLElement {
  return h(
    "div",
    { class: `pool-stat${extra ? ` ${extra}` : ""}` },
    h("dt", null, t(label)),
    h("dd", { "data-testid": testid }, typeof value === "number" ? formatCount(value) : value),
  );
}

export function poolView(): View {
  let pools: PoolView[] | null = null;
  let options: PoolOptions | null = null;
  let loadError: unknown = null;
  let disposed = false;
  let loading = false;
  let timer: number | undefined;

  /** The pool the slider section was built for (its name), and its controls. */
  let sliderFor: string | null = null;
  let slider: SliderSection | null = null;
  let form: PoolForm | null = null;
  let askingDelete = false;
  let deleting = false;

  const errorBox = h("div", { class: "pool-error-box" });
  const status = h("p", { class: "pool-announce", role: "status", "data-testid": "pool-announce" });
  const select = h("select", {
    id: "pool-select",
    on: {
      change: () => {
        memory.selected = select.value || null;
        closeForm();
        askingDelete = false;
        render();
      },
    },
  });
  const newButton = h(
    "button",
    { type: "button", id: "pool-new", class: "btn", on: { click: () => openForm(null) } },
    t("pool.new"),
  );
  const pickerRow = h(
    "div",
    { class: "pool-picker" },
    h("div", { class: "field" }, h("label", { for: "pool-select" }, t("pool.select")), select),
    h("div", { class: "pool-picker-actions" }, newButton),
  );
  const summaryCard = h("section", { class: "card pool-status", "data-testid": "pool-status", "aria-labelledby": "pool-status-title" });
  const sliderBox = h("div", { class: "pool-slider-box" });
  const hostsCard = h("section", { class: "pool-table-card", "aria-labelledby": "pool-hosts-title" });
  const leasesCard = h("section", { class: "pool-table-card", "aria-labelledby": "pool-leases-title" });
  const policyBox = h("div", { class: "pool-policy-box" });
  const formBox = h("div", { class: "pool-form-box" });
  const emptyBox = h("div", { class: "pool-empty-box" });

  const el = h(
    "section",
    { class: "view view-pool", id: "view-pool", "data-view": "pool", "aria-labelledby": "view-pool-title" },
    h(
      "header",
      { class: "view-header" },
      h("h1", { id: "view-pool-title" }, t("pool.title")),
      h("p", { class: "lead" }, t("pool.lead")),
    ),
    errorBox,
    pickerRow,
    status,
    emptyBox,
    h("div", { class: "pool-top" }, summaryCard, sliderBox),
    hostsCard,
    leasesCard,
    formBox,
    policyBox,
  );

  function selected(): PoolView | null {
    if (!pools) return null;
    return pools.find((p) => p.name === memory.selected) ?? null;
  }

  function announce(text: string): void {
    replaceChildren(status, text);
  }

  // ---------- loading ----------

  async function refresh(): Promise<void> {
    if (loading || disposed) return;
    loading = true;
    const res = await call(() => commands.listPools());
    loading = false;
    if (disposed) return;
    if (res.status === "ok") {
      pools = res.data;
      loadError = null;
    } else {
      loadError = res.error;
    }
    render();
  }

  async function loadOptions(): Promise<void> {
    const res = await call(() => commands.poolOptions());
    if (disposed) return;
    if (res.status === "ok") {
      options = res.data;
      form?.setOptions(res.data);
      renderPolicy();
    }
  }

  // ---------- rendering ----------

  function renderSelect(): void {
    const list = pools ?? [];
    const names = list.map((p) => p.name);
    if (memory.selected === null || !names.includes(memory.selected)) memory.selected = names[0] ?? null;
    const key = names.join("\n");
    if (select.dataset.names !== key) {
      select.dataset.names = key;
      replaceChildren(
        select,
        list.map((p) => h("option", { value: p.name }, p.name)),
      );
    }
    if (memory.selected !== null && select.value !== memory.selected) select.value = memory.selected;
    select.disabled = list.length === 0;
  }

  function render(): void {
    replaceChildren(
      errorBox,
      loadError !== null
        ? h(
            "div",
            { class: "alert alert-error", role: "alert", "data-testid": "pool-error" },
            h("span", { class: "alert-line" }, t("pool.loadError", { message: describeError(loadError) })),
          )
        : null,
    );
    if (pools === null) {
      replaceChildren(emptyBox, loadError === null ? h("p", { class: "loading" }, t("pool.loading")) : null);
      return;
    }
    renderSelect();
    const pool = selected();
    el.dataset.pool = pool?.name ?? "";
    pickerRow.hidden = pools.length === 0;
    replaceChildren(
      emptyBox,
      pools.length === 0 && !form
        ? h(
            "div",
            { class: "empty-state", "data-testid": "pool-empty" },
            h("h2", null, t("pool.none.title")),
            h("p", null, t("pool.none.body")),
            h("button", { type: "button", class: "btn btn-primary", id: "pool-create-first", on: { click: () => openForm(null) } }, t("pool.new")),
          )
        : null,
    );
    if (!pool) {
      summaryCard.hidden = true;
      hostsCard.hidden = true;
      leasesCard.hidden = true;
      sliderFor = null;
      slider?.dispose();
      slider = null;
      replaceChildren(sliderBox);
      return;
    }
    summaryCard.hidden = false;
    hostsCard.hidden = false;
    leasesCard.hidden = false;
    renderSummary(pool);
    if (sliderFor !== pool.name || !slider) {
      slider?.dispose();
      slider = new SliderSection(pool, (text) => announce(text), () => void refresh());
      sliderFor = pool.name;
      replaceChildren(sliderBox, slider.el);
    } else {
      slider.update(pool);
    }
    renderHosts(pool);
    renderLeases(pool);
  }

  function renderSummary(pool: PoolView): void {
    const spend = pool.spend;
    const editButton = h(
      "button",
      {
        type: "button",
        id: "pool-edit",
        class: "btn btn-small",
        disabled: askingDelete,
        on: { click: () => openForm(pool) },
      },
      t("pool.edit"),
    );
    const deleteButton = h(
      "button",
      {
        type: "button",
        id: "pool-delete",
        class: "btn btn-small btn-danger-quiet",
        "aria-expanded": String(askingDelete),
        disabled: askingDelete,
        on: {
          click: () => {
            askingDelete = true;
            render();
            document.getElementById("pool-delete-no")?.focus();
          },
        },
      },
      t("pool.delete"),
    );
    const focusedId = summaryCard.contains(document.activeElement) ? (document.activeElement as HTMLElement).id : "";
    replaceChildren(
      summaryCard,
      h(
        "div",
        { class: "pool-status-head" },
        h("h2", { id: "pool-status-title" }, pool.name),
        h("span", { class: "btn-row" }, editButton, deleteButton),
      ),
      h(
        "p",
        { class: "pool-meta", "data-testid": "pool-meta" },
        t("pool.meta", {
          model: pool.model,
          regions: pool.regions.join(t("common.listSeparator")),
          min: formatCount(pool.min),
          max: formatCount(pool.max),
        }),
      ),
      h(
        "p",
        { class: "pool-terms" },
        t("pool.terms", {
          base: gpus(pool.base_gpus),
          term: t(TERM_KEYS[pool.term]),
          overlay: t(OVERLAY_KEYS[pool.overlay]),
          placement: t(PLACEMENT_KEYS[pool.placement]),
        }),
      ),
      askingDelete ? deleteConfirm(pool) : null,
      h(
        "p",
        { class: `pool-phase phase-${pool.phase}`, "data-testid": "pool-phase", "data-phase": pool.phase },
        h("span", { class: "dot", "aria-hidden": "true" }),
        phaseText(pool.phase),
      ),
      pool.notes.length > 0
        ? h("p", { class: "pool-message", "data-testid": "pool-message", "data-notes": pool.notes.map((n) => n.kind).join(" ") }, poolNotesText(pool.notes))
        : null,
      h(
        "dl",
        { class: "pool-stats" },
        stat("pool.stat.desired", pool.desired, "pool-desired", "pool-stat-main"),
        stat("pool.stat.actual", pool.actual, "pool-actual", "pool-stat-main"),
        stat("pool.stat.pending", pool.pending, "pool-pending"),
        stat("pool.stat.releasing", pool.releasing, "pool-releasing"),
        stat("pool.stat.lost", pool.lost, "pool-lost"),
        pool.held_to_unit_end > 0 ? stat("pool.stat.held", pool.held_to_unit_end, "pool-held") : null,
      ),
      pool.held_to_unit_end > 0
        ? h(
            "p",
            { class: "pool-release-now" },
            h(
              "button",
              {
                type: "button",
                class: "btn btn-small",
                id: "pool-release-now",
                "data-testid": "pool-release-now",
                title: t("pool.releaseNowHint"),
                on: { click: () => void releaseNow(pool.name) },
              },
              t("pool.releaseNow"),
            ),
          )
        : null,
      h(
        "div",
        { class: "pool-spend", "data-testid": "pool-spend" },
        h("h3", null, spend ? t("pool.spend.title", { month: spend.month }) : t("pool.spend.titleNone")),
        spend
          ? h(
              "dl",
              { class: "pool-stats pool-spend-stats" },
              stat("pool.spend.mtd", formatMoney(spend.month_to_date_fen), "pool-spend-mtd"),
              stat("pool.spend.projected", formatMoney(spend.projected_month_fen), "pool-spend-projected"),
              stat("pool.spend.runRate", perHour(spend.run_rate_per_hour_fen), "pool-spend-rate"),
              stat("pool.spend.gpuHours", formatGpuHours(spend.gpu_hours), "pool-spend-hours"),
            )
          : null,
        pool.spend_problem
          ? h("p", { class: "alert alert-warn", "data-testid": "pool-spend-problem" }, t("pool.spend.problem", { message: pool.spend_problem }))
          : null,
      ),
      h(
        "p",
        { class: "pool-checked hint" },
        pool.checked_at_ms === null ? t("pool.checkedNever") : t("pool.checked", { time: formatWhen(pool.checked_at_ms, Date.now()) }),
      ),
    );
    if (focusedId) document.getElementById(focusedId)?.focus();
  }

  function deleteConfirm(pool: PoolView): HTMLElement {
    const cancel = (): void => {
      askingDelete = false;
      render();
      document.getElementById("pool-delete")?.focus();
    };
    return h(
      "div",
      {
        class: "confirm pool-delete-confirm",
        role: "group",
        "data-testid": "pool-delete-confirm",
        "aria-label": t("pool.deleteLabel", { name: pool.name }),
        on: {
          keydown: (ev) => {
            if (ev.key === "Escape" && !deleting) {
              ev.preventDefault();
              cancel();
            }
          },
        },
      },
      h("span", { class: "confirm-text" }, t("pool.confirmDelete", { name: pool.name, n: formatCount(pool.actual) })),
      h(
        "span",
        { class: "btn-row" },
        h(
          "button",
          { type: "button", id: "pool-delete-yes", class: "btn btn-small btn-danger", disabled: deleting, on: { click: () => void deletePool(pool.name) } },
          t(deleting ? "pool.deleting" : "pool.deleteYes"),
        ),
        h("button", { type: "button", id: "pool-delete-no", class: "btn btn-small", disabled: deleting, on: { click: cancel } }, t("pool.deleteNo")),
      ),
    );
  }

  async function releaseNow(name: string): Promise<void> {
    const res = await call(() => commands.releaseNow(name));
    if (disposed) return;
    if (res.status === "ok") {
      announce(t("pool.releasedNow", { name }));
      await refresh();
    } else {
      replaceChildren(errorBox, errorAlert(t("pool.releaseNowError", { name }), res.error, "pool-error"));
      render();
    }
  }

  async function deletePool(name: string): Promise<void> {
    deleting = true;
    render();
    const res = await call(() => commands.deletePool(name));
    deleting = false;
    askingDelete = false;
    if (disposed) return;
    if (res.status === "ok") {
      announce(t("pool.deleted", { name }));
      if (memory.selected === name) memory.selected = null;
      if (form?.editing === name) closeForm();
      await refresh();
      select.focus();
    } else {
      replaceChildren(errorBox, errorAlert(t("pool.deleteError", { name }), res.error, "pool-error"));
      render();
    }
  }

  function renderHosts(pool: PoolView): void {
    replaceChildren(
      hostsCard,
      h("h2", { id: "pool-hosts-title" }, t("pool.hosts.title")),
      pool.hosts.length === 0
        ? h("p", { class: "hint", "data-testid": "pool-hosts" }, t("pool.hosts.none"))
        : h(
            "div",
            { class: "table-wrap" },
            h(
              "table",
              { class: "hosts pool-hosts", "data-testid": "pool-hosts" },
              h("caption", { class: "visually-hidden" }, t("pool.hosts.caption", { pool: pool.name })),
              h(
                "thead",
                null,
                h(
                  "tr",
                  null,
                  h("th", { scope: "col" }, t("pool.col.host")),
                  h("th", { scope: "col" }, t("pool.col.region")),
                  h("th", { scope: "col" }, t("pool.col.progress")),
                  h("th", { scope: "col", class: "num" }, t("pool.col.leased")),
                  h("th", { scope: "col", class: "num" }, t("pool.col.pending")),
                  h("th", { scope: "col", class: "num" }, t("pool.col.releasing")),
                  h("th", { scope: "col", class: "num" }, t("pool.col.failed")),
                  h("th", { scope: "col" }, t("pool.col.lastError")),
                ),
              ),
              h(
                "tbody",
                null,
                pool.hosts.map((host) => {
                  const goal = host.leased + host.pending;
                  return h(
                    "tr",
                    {
                      "data-testid": "pool-host-row",
                      "data-host": host.host,
                      class: host.failed > 0 ? "has-failure" : null,
                    },
                    h("th", { scope: "row" }, host.host),
                    h("td", null, host.region),
                    h(
                      "td",
                      { class: "progress-cell" },
                      goal > 0
                        ? h("meter", {
                            class: "util-bar host-progress",
                            min: 0,
                            max: goal,
                            value: String(host.leased),
                            title: t("pool.progress", { leased: formatCount(host.leased), goal: formatCount(goal) }),
                          })
                        : null,
                      h(
                        "span",
                        { class: "progress-text" },
                        host.pending > 0
                          ? t("pool.progress", { leased: formatCount(host.leased), goal: formatCount(goal) })
                          : host.releasing > 0
                            ? t("pool.progressReleasing", { n: formatCount(host.releasing) })
                            : t("pool.progressDone"),
                      ),
                    ),
                    h("td", { class: "num", "data-col": "leased" }, formatCount(host.leased)),
                    h("td", { class: "num", "data-col": "pending" }, formatCount(host.pending)),
                    h("td", { class: "num", "data-col": "releasing" }, formatCount(host.releasing)),
                    h("td", { class: host.failed > 0 ? "num bad" : "num", "data-col": "failed" }, formatCount(host.failed)),
                    h(
                      "td",
                      { "data-col": "error", class: "error-cell", "data-kind": host.last_error?.kind ?? null },
                      host.last_error ? hostProblemText(host.last_error) : t("common.empty"),
                    ),
                  );
                }),
              ),
            ),
          ),
    );
  }

  function renderLeases(pool: PoolView): void {
    const now = Date.now();
    replaceChildren(
      leasesCard,
      h("h2", { id: "pool-leases-title" }, t("pool.leases.title"), h("span", { class: "count" }, formatCount(pool.leases.length))),
      pool.leases.length === 0
        ? h("p", { class: "hint", "data-testid": "pool-leases-empty" }, t("pool.leases.none"))
        : null,
      h(
        "div",
        { class: "table-wrap", hidden: pool.leases.length === 0 },
        h(
          "table",
          { class: "hosts pool-leases", "data-testid": "pool-leases" },
          h("caption", { class: "visually-hidden" }, t("pool.leases.caption", { pool: pool.name })),
          h(
            "thead",
            null,
            h(
              "tr",
              null,
              h("th", { scope: "col" }, t("pool.col.host")),
              h("th", { scope: "col" }, t("pool.col.gpus")),
              h("th", { scope: "col" }, t("pool.col.state")),
              h("th", { scope: "col", class: "num" }, t("pool.col.util")),
              h("th", { scope: "col" }, t("pool.col.granted")),
            ),
          ),
          h(
            "tbody",
            null,
            pool.leases.map((lease) =>
              h(
                "tr",
                { "data-testid": "pool-lease-row", "data-lease": lease.lease_id, "data-host": lease.host, "data-state": lease.state },
                h("th", { scope: "row" }, lease.host, h("span", { class: "host-url" }, lease.region)),
                h("td", { class: "mono" }, indexesText(lease.gpu_indexes)),
                h("td", null, h("span", { class: `lease-state lease-${lease.state}` }, leaseStateText(lease.state))),
                h("td", { class: "num" }, formatPercent(lease.util_pct)),
                h("td", null, formatWhen(lease.granted_at_ms, now)),
              ),
            ),
          ),
        ),
      ),
    );
  }

  // ---------- confirmation policy ----------

  function renderPolicy(): void {
    if (!options) {
      replaceChildren(policyBox);
      return;
    }
    if (policyBox.dataset.built === "1") return;
    policyBox.dataset.built = "1";
    const gpusInput = h("input", {
      type: "number",
      id: "pool-policy-gpus",
      class: "num-input",
      min: 0,
      step: 1,
      inputmode: "numeric",
      value: String(options.confirm_above_gpus),
    });
    const costInput = h("input", {
      type: "text",
      id: "pool-policy-cost",
      class: "num-input",
      inputmode: "decimal",
      value: yuanInput(options.confirm_above_per_hour_fen),
    });
    const policyStatus = h("div", { class: "pool-policy-status", "data-testid": "pool-policy-status" });
    const save = async (): Promise<void> => {
      const above = parseCount(gpusInput.value, 0, 1_000_000);
      const fen = parseYuan(costInput.value);
      if (above === null || fen === null) {
        replaceChildren(
          policyStatus,
          h("p", { class: "field-error", role: "alert" }, t(above === null ? "pool.policy.badGpus" : "pool.policy.badCost")),
        );
        (above === null ? gpusInput : costInput).focus();
        return;
      }
      const res = await call(() => commands.setConfirmPolicy(above, fen));
      if (disposed) return;
      if (res.status === "ok") {
        if (options) {
          options.confirm_above_gpus = above;
          options.confirm_above_per_hour_fen = fen;
        }
        replaceChildren(
          policyStatus,
          h("p", { class: "hint", role: "status" }, t("pool.policy.saved", { n: formatCount(above), cost: perHour(fen) })),
        );
        slider?.repreview();
      } else {
        replaceChildren(policyStatus, errorAlert(t("pool.policy.error"), res.error, "pool-policy-error"));
      }
    };
    replaceChildren(
      policyBox,
      h(
        "form",
        {
          class: "card pool-policy",
          id: "pool-policy",
          "aria-labelledby": "pool-policy-title",
          novalidate: true,
          on: {
            submit: (ev) => {
              ev.preventDefault();
              void save();
            },
          },
        },
        h("h2", { id: "pool-policy-title" }, t("pool.policy.title")),
        h("p", { class: "hint section-lead" }, t("pool.policy.lead")),
        h(
          "div",
          { class: "pool-policy-row" },
          h("label", { for: "pool-policy-gpus" }, t("pool.policy.gpus")),
          gpusInput,
          h("label", { for: "pool-policy-cost" }, t("pool.policy.cost")),
          costInput,
          h("button", { type: "submit", id: "pool-policy-save", class: "btn" }, t("pool.policy.save")),
        ),
        policyStatus,
      ),
    );
  }

  // ---------- the form ----------

  function openForm(pool: PoolView | null): void {
    closeForm();
    form = new PoolForm(pool, options, {
      onDone: async (saved, created) => {
        closeForm();
        memory.selected = saved.name;
        announce(t(created ? "pool.created" : "pool.saved", { name: saved.name }));
        await refresh();
        select.focus();
      },
      onCancel: () => {
        closeForm();
        (pool ? document.getElementById("pool-edit") : newButton)?.focus();
      },
    });
    replaceChildren(formBox, form.el);
    render();
    form.focusFirst();
    form.el.scrollIntoView?.({ block: "nearest" });
  }

  function closeForm(): void {
    form = null;
    replaceChildren(formBox);
  }

  // ---------- start ----------

  render();
  void refresh();
  void loadOptions();

  return {
    el,
    mounted() {
      timer = window.setInterval(() => void refresh(), REFRESH_MS);
    },
    destroy() {
      disposed = true;
      if (timer !== undefined) window.clearInterval(timer);
      slider?.dispose();
    },
  };
}

// ---------- the slider ----------

type PreviewAnswer = Awaited<ReturnType<typeof call<ScalePreview>>>;

/** The slider, the number field, the live preview, the confirmation and the commit's outcome. */
class SliderSection {
  readonly el: HTMLElement;
  private pool: PoolView;
  private readonly range: HTMLInputElement;
  private readonly count: HTMLInputElement;
  private readonly apply: HTMLButtonElement;
  private readonly preview: HTMLElement;
  private readonly confirmBox: HTMLElement;
  private readonly commitBox: HTMLElement;
  private readonly scale: HTMLElement;
  private readonly gate: LatestOnly<number, PreviewAnswer>;
  /** The value the operator chose and has not committed (null: the slider follows `desired`). */
  private chosen: number | null = null;
  private shown: ScalePreview | null = null;
  /** What moved the slider last: a pointer commits on release, keys only on Enter. */
  private lastInput: "pointer" | "key" = "key";
  private committing = false;
  private confirming: ScalePreview | null = null;
  private disposed = false;
  /** The last change committed here, followed until it ends. */
  private lastEntry: ActivityEntry | null = null;
  private following = false;

  constructor(
    pool: PoolView,
    private readonly announce: (text: string) => void,
    private readonly refresh: () => void,
  ) {
    this.pool = pool;
    this.gate = new LatestOnly<number, PreviewAnswer>(
      (to) => call(() => commands.previewScale(this.pool.name, to)),
      (to, res) => this.showPreview(to, res),
    );
    this.range = h("input", {
      type: "range",
      id: "pool-slider",
      class: "pool-slider",
      "data-testid": "pool-slider",
      min: pool.min,
      max: pool.max,
      step: 1,
      value: String(pool.desired),
      "aria-describedby": "pool-slider-hint",
      on: {
        input: () => this.onMove(Number(this.range.value), "range"),
        change: () => {
          // A pointer let go: commit. Arrow keys fire change at every step too: those
          // only preview, and Enter commits.
          if (this.lastInput === "pointer") void this.commit(Number(this.range.value));
        },
        pointerdown: () => {
          this.lastInput = "pointer";
        },
        keydown: (ev) => this.onKey(ev),
      },
    });
    this.count = h("input", {
      type: "number",
      id: "pool-count",
      class: "num-input pool-count",
      "data-testid": "pool-count-input",
      min: pool.min,
      max: pool.max,
      step: 1,
      inputmode: "numeric",
      value: String(pool.desired),
      on: {
        input: () => {
          const n = parseCount(this.count.value, this.pool.min, this.pool.max);
          if (n !== null) this.onMove(n, "count");
        },
        keydown: (ev) => this.onKey(ev),
      },
    });
    this.apply = h(
      "button",
      {
        type: "button",
        id: "pool-apply",
        class: "btn btn-primary",
        "data-testid": "pool-apply",
        disabled: true,
        on: { click: () => void this.commit(this.value()) },
      },
      t("pool.apply"),
    );
    this.scale = h("div", { class: "pool-scale", "aria-hidden": "true" });
    this.preview = h("div", { class: "pool-preview", "data-testid": "pool-preview", "data-state": "idle", "aria-live": "polite" });
    this.confirmBox = h("div", { class: "pool-confirm-box" });
    this.commitBox = h("div", { class: "pool-commit-box" });
    this.el = h(
      "section",
      { class: "card pool-slider-card", "aria-labelledby": "pool-slider-title" },
      h("h2", { id: "pool-slider-title" }, t("pool.slider.title")),
      h(
        "div",
        { class: "pool-slider-row" },
        h(
          "div",
          { class: "field pool-range-field" },
          h("label", { for: "pool-slider" }, t("pool.slider.label", { pool: pool.name })),
          this.range,
          this.scale,
        ),
        h("div", { class: "field pool-count-field" }, h("label", { for: "pool-count" }, t("pool.slider.exact")), this.count),
      ),
      h("p", { class: "field-hint", id: "pool-slider-hint" }, t("pool.slider.hint")),
      this.preview,
      this.confirmBox,
      h("div", { class: "form-actions pool-slider-actions" }, this.apply),
      this.commitBox,
    );
    this.renderScale();
    this.renderPreview();
  }

  dispose(): void {
    this.disposed = true;
    this.gate.close();
  }

  /** The value the controls show. */
  private value(): number {
    return this.chosen ?? this.pool.desired;
  }

  /** A new look at the pool (every second). */
  update(pool: PoolView): void {
    const rangeChanged = pool.min !== this.pool.min || pool.max !== this.pool.max;
    const desiredChanged = pool.desired !== this.pool.desired;
    this.pool = pool;
    if (rangeChanged) {
      for (const input of [this.range, this.count]) {
        input.min = String(pool.min);
        input.max = String(pool.max);
      }
      if (this.chosen !== null) this.chosen = Math.max(pool.min, Math.min(pool.max, this.chosen));
      this.renderScale();
    }
    if (this.chosen === this.pool.desired && !this.confirming) this.chosen = null;
    if (this.chosen === null) {
      // What is being typed in the number field stays until Enter or Escape.
      this.setControls(pool.desired, document.activeElement === this.count ? "count" : null);
      if (desiredChanged) this.dropPreview();
    }
    this.apply.disabled = this.committing || this.chosen === null;
    if (this.preview.dataset.state === "idle") this.renderPreview();
    void this.followCommit();
  }

  /** While the last change is in progress, its entry is read again to show how it ends. */
  private async followCommit(): Promise<void> {
    const entry = this.lastEntry;
    if (!entry || entry.outcome !== "in_progress" || this.following) return;
    this.following = true;
    const res = await call(() => commands.listActivity(this.pool.name, 20));
    this.following = false;
    if (this.disposed || this.lastEntry?.id !== entry.id || res.status !== "ok") return;
    const now = res.data.find((e) => e.id === entry.id);
    if (now && (now.outcome !== entry.outcome || JSON.stringify(now.results) !== JSON.stringify(entry.results))) {
      this.lastEntry = now;
      this.renderCommit();
    }
  }

  private renderCommit(): void {
    const entry = this.lastEntry;
    if (!entry) {
      replaceChildren(this.commitBox);
      return;
    }
    const tone = entry.outcome === "partial" ? "alert-warn" : entry.outcome === "superseded" ? "alert-info" : "alert-ok";
    replaceChildren(
      this.commitBox,
      h(
        "div",
        { class: `alert ${tone} pool-commit`, role: "status", "data-testid": "pool-commit", "data-outcome": entry.outcome, "data-to": entry.to },
        h(
          "span",
          { class: "alert-line" },
          t("pool.commit.done", {
            from: formatCount(entry.from),
            to: formatCount(entry.to),
            outcome: outcomeText(entry.outcome),
          }),
        ),
        entry.delta_per_hour_fen !== null
          ? h("span", { class: "alert-detail" }, t("pool.commit.delta", { hour: signedPerHour(entry.delta_per_hour_fen), month: signedPerMonth(entry.delta_per_month_fen) }))
          : null,
        entry.results.length > 0 ? h("span", { class: "alert-detail" }, entry.results.map(hostResultText).join(" · ")) : null,
        entry.outcome === "in_progress" ? h("span", { class: "alert-detail" }, t("pool.commit.follow")) : null,
      ),
    );
  }

  /** The threshold changed: ask again for what is shown. */
  repreview(): void {
    if (this.chosen !== null) void this.gate.ask(this.chosen);
  }

  private renderScale(): void {
    const { min, max } = this.pool;
    const marks = max - min <= 16 ? Array.from({ length: max - min + 1 }, (_, i) => min + i) : [min, Math.round((min + max) / 2), max];
    replaceChildren(
      this.scale,
      marks.map((m) => h("span", null, String(m))),
    );
  }

  private setControls(n: number, except: "range" | "count" | null): void {
    if (except !== "range" && this.range.value !== String(n)) this.range.value = String(n);
    if (except !== "count" && this.count.value !== String(n)) this.count.value = String(n);
  }

  private onMove(n: number, from: "range" | "count"): void {
    if (this.committing) return;
    this.chosen = n;
    this.cancelConfirm(false);
    this.setControls(n, from);
    this.apply.disabled = n === this.pool.desired;
    this.preview.dataset.state = "pending";
    this.preview.dataset.to = String(n);
    void this.gate.ask(n);
  }

  private onKey(ev: KeyboardEvent): void {
    if (ev.target === this.range) this.lastInput = "key";
    if (ev.key === "Enter") {
      ev.preventDefault();
      const n = ev.target === this.count ? parseCount(this.count.value, this.pool.min, this.pool.max) : Number(this.range.value);
      if (n === null) {
        this.count.setAttribute("aria-invalid", "true");
        return;
      }
      this.count.removeAttribute("aria-invalid");
      if (n !== this.chosen) this.onMove(n, ev.target === this.count ? "count" : "range");
      void this.commit(n);
    } else if (ev.key === "Escape" && this.chosen !== null) {
      ev.preventDefault();
      this.reset();
    }
  }

  /** Back to the pool's desired count; nothing asked is shown. */
  private reset(): void {
    this.chosen = null;
    this.gate.reset();
    this.setControls(this.pool.desired, null);
    this.apply.disabled = true;
    this.dropPreview();
  }

  private dropPreview(): void {
    this.shown = null;
    this.preview.dataset.state = "idle";
    delete this.preview.dataset.to;
    this.renderPreview();
  }

  private previewError: unknown = null;

  private showPreview(to: number, res: PreviewAnswer): void {
    if (this.disposed || this.chosen !== to) return;
    if (res.status === "ok") {
      this.shown = res.data;
      this.previewError = null;
      this.preview.dataset.state = "ready";
    } else {
      this.shown = null;
      this.previewError = res.error;
      this.preview.dataset.state = "error";
    }
    this.preview.dataset.to = String(to);
    this.renderPreview();
  }

  private renderPreview(): void {
    if (this.preview.dataset.state === "error") {
      replaceChildren(this.preview, errorAlert(t("pool.preview.error"), this.previewError, "pool-preview-error"));
      return;
    }
    const p = this.shown;
    if (!p) {
      const idle = t("pool.preview.idle", { n: gpus(this.pool.desired), cost: perHour(this.pool.spend?.run_rate_per_hour_fen ?? null) });
      // Redrawn with every look at the pool: only when the words change (the box is a live region).
      if (this.preview.textContent !== idle) replaceChildren(this.preview, h("p", { class: "hint pool-preview-idle" }, idle));
      return;
    }
    const plan = planWords(p);
    const deltaClass = p.delta_per_hour_fen > 0 ? "dearer" : p.delta_per_hour_fen < 0 ? "cheaper" : "";
    replaceChildren(
      this.preview,
      h(
        "dl",
        { class: "pool-preview-grid" },
        h(
          "div",
          null,
          h("dt", null, t("pool.preview.target")),
          h(
            "dd",
            { "data-testid": "pool-preview-target", "data-to": p.to, "data-from": p.from },
            t("pool.preview.targetValue", { to: gpus(p.to), from: formatCount(p.from) }),
          ),
        ),
        h(
          "div",
          null,
          h("dt", null, t("pool.preview.after")),
          h(
            "dd",
            {
              "data-testid": "pool-preview-cost",
              "data-per-hour-fen": p.per_hour_after_fen,
              "data-per-hour-before-fen": p.per_hour_before_fen,
              "data-per-month-fen": p.per_month_after_fen,
            },
            h("span", { class: "big" }, perHour(p.per_hour_after_fen)),
            h("span", { class: "sub" }, perMonth(p.per_month_after_fen)),
            h("span", { class: "sub before" }, t("pool.preview.before", { cost: perHour(p.per_hour_before_fen) })),
          ),
        ),
        h(
          "div",
          null,
          h("dt", null, t("pool.preview.delta")),
          h(
            "dd",
            { class: `delta ${deltaClass}`, "data-testid": "pool-preview-delta", "data-delta-per-hour-fen": p.delta_per_hour_fen },
            h("span", { class: "big" }, signedPerHour(p.delta_per_hour_fen)),
            h("span", { class: "sub" }, signedPerMonth(p.delta_per_month_fen)),
          ),
        ),
      ),
      h("p", { class: "pool-preview-free", "data-testid": "pool-preview-free", "data-free": p.free_now }, freeText(p.free_now, p.free_by_host)),
      h(
        "div",
        { class: "pool-preview-plan", "data-testid": "pool-preview-plan" },
        h("p", { class: "plan-headline" }, plan.headline),
        plan.notes.length > 0 ? h("ul", { class: "plan-notes" }, plan.notes.map((n) => h("li", null, n))) : null,
        p.needs_confirmation
          ? h("p", { class: "plan-confirm hint" }, t("pool.preview.asks", { reason: p.confirmation_reason ? confirmationText(p.confirmation_reason) : "" }))
          : null,
      ),
    );
  }

  private async previewFor(to: number): Promise<ScalePreview | null> {
    if (this.shown && this.shown.to === to && this.preview.dataset.state === "ready") return this.shown;
    const res = await call(() => commands.previewScale(this.pool.name, to));
    if (this.disposed) return null;
    this.showPreview(to, res);
    return res.status === "ok" ? res.data : null;
  }

  private async commit(to: number): Promise<void> {
    if (this.committing || this.disposed) return;
    if (this.confirming && this.confirming.to === to) return;
    if (to === this.pool.desired && this.chosen === null) return;
    this.chosen = to;
    const preview = await this.previewFor(to);
    if (this.disposed || this.chosen !== to) return;
    if (!preview) {
      // The preview failed: its error is shown; committing blind could rent past a limit.
      return;
    }
    if (preview.needs_confirmation) {
      this.askConfirm(preview);
      return;
    }
    await this.send(to);
  }

  private askConfirm(preview: ScalePreview): void {
    this.confirming = preview;
    const yes = h(
      "button",
      { type: "button", id: "pool-confirm-yes", class: "btn btn-small btn-primary", "data-testid": "confirm-scale", on: { click: () => void this.confirmed() } },
      t("pool.confirm.yes", { n: formatCount(preview.to) }),
    );
    const no = h(
      "button",
      { type: "button", id: "pool-confirm-no", class: "btn btn-small", "data-testid": "cancel-scale", on: { click: () => this.cancelConfirm(true) } },
      t("pool.confirm.no"),
    );
    replaceChildren(
      this.confirmBox,
      h(
        "div",
        {
          class: "confirm pool-confirm",
          role: "alertdialog",
          "aria-labelledby": "pool-confirm-text",
          "data-testid": "pool-confirm",
          on: {
            keydown: (ev) => {
              if (ev.key === "Escape") {
                ev.preventDefault();
                this.cancelConfirm(true);
              }
            },
          },
        },
        h(
          "span",
          { class: "confirm-text", id: "pool-confirm-text" },
          t("pool.confirm.text", {
            from: formatCount(preview.from),
            to: formatCount(preview.to),
            reason: preview.confirmation_reason ? confirmationText(preview.confirmation_reason) : "",
          }),
        ),
        h("span", { class: "btn-row" }, yes, no),
      ),
    );
    yes.focus();
  }

  private async confirmed(): Promise<void> {
    const preview = this.confirming;
    if (!preview) return;
    this.confirming = null;
    replaceChildren(this.confirmBox);
    await this.send(preview.to);
    this.range.focus();
  }

  /** Drops the question; with `revert`, the slider goes back to the pool's desired count. */
  private cancelConfirm(revert: boolean): void {
    if (!this.confirming) return;
    this.confirming = null;
    replaceChildren(this.confirmBox);
    if (revert) {
      this.reset();
      this.announce(t("pool.confirm.cancelled", { n: formatCount(this.pool.desired) }));
      this.range.focus();
    }
  }

  private async send(to: number): Promise<void> {
    this.committing = true;
    this.apply.disabled = true;
    this.el.setAttribute("aria-busy", "true");
    replaceChildren(this.commitBox, h("p", { class: "hint", role: "status" }, t("pool.commit.sending", { n: formatCount(to) })));
    const res = await call(() => commands.scalePool(this.pool.name, to));
    this.committing = false;
    this.el.removeAttribute("aria-busy");
    if (this.disposed) return;
    if (res.status === "ok") {
      const entry: ActivityEntry = res.data;
      this.pool = { ...this.pool, desired: entry.to };
      this.chosen = null;
      this.gate.reset();
      this.setControls(entry.to, null);
      this.dropPreview();
      this.lastEntry = entry;
      this.renderCommit();
      this.refresh();
    } else {
      this.apply.disabled = false;
      replaceChildren(this.commitBox, errorAlert(t("pool.commit.error", { n: formatCount(to) }), res.error, "pool-commit-error"));
    }
  }
}

// ---------- the form ----------

type FormCallbacks = {
  onDone(saved: PoolView, created: boolean): Promise<void>;
  onCancel(): void;
};

type Control = HTMLInputElement | HTMLSelectElement;

/** Create a pool, or edit one: every field of PoolInput, errors next to the field they name. */
class PoolForm {
  readonly el: HTMLFormElement;
  readonly editing: string | null;
  private readonly controls = new Map<PoolField, Control>();
  private readonly errors = new Map<PoolField, HTMLElement>();
  private readonly regionsBox: HTMLElement;
  private readonly modelList: HTMLDataListElement;
  private readonly formError: HTMLElement;
  private readonly saveButton: HTMLButtonElement;
  private readonly cancelButton: HTMLButtonElement;
  private chosenRegions: Set<string>;
  private busy = false;
  private choices: PoolChoices = { terms: [], overlays: [], placements: [] };

  constructor(
    pool: PoolView | null,
    options: PoolOptions | null,
    private readonly callbacks: FormCallbacks,
  ) {
    this.editing = pool?.name ?? null;
    this.chosenRegions = new Set(pool?.regions ?? []);
    this.regionsBox = h("div", { class: "region-checks", id: "pool-f-regions", role: "group", "aria-labelledby": "pool-f-regions-label" });
    this.modelList = h("datalist", { id: "pool-f-models" });
    this.formError = h("div", { class: "form-error-box" });
    this.saveButton = h("button", { type: "submit", id: "pool-f-save", class: "btn btn-primary" }, t(pool ? "pool.form.saveEdit" : "pool.form.saveCreate"));
    this.cancelButton = h("button", { type: "button", id: "pool-f-cancel", class: "btn btn-quiet", on: { click: () => this.cancel() } }, t("pool.form.cancel"));

    const text = (name: PoolField, value: string, attrs: Record<string, string | number | boolean> = {}): HTMLInputElement => {
      const input = h("input", {
        id: `pool-f-${name}`,
        name,
        type: "text",
        value,
        autocomplete: "off",
        spellcheck: "false",
        "aria-describedby": `pool-f-${name}-hint`,
        ...attrs,
      });
      this.controls.set(name, input);
      return input;
    };
    // The choices come from the shell's PoolOptions (setOptions fills them); until they
    // arrive, the pool's own value is the one choice.
    const choice = <V extends string>(name: "term" | "overlay" | "placement", keys: Record<V, MessageKey>, value: V): HTMLSelectElement => {
      const select = h("select", { id: `pool-f-${name}`, name, "aria-describedby": `pool-f-${name}-hint` }, h("option", { value }, t(keys[value])));
      select.value = value;
      this.controls.set(name, select);
      return select;
    };
    const check = (name: PoolField, value: boolean): HTMLInputElement => {
      const input = h("input", { type: "checkbox", id: `pool-f-${name}`, name, checked: value, "aria-describedby": `pool-f-${name}-hint` });
      this.controls.set(name, input);
      return input;
    };
    const field = (name: PoolField, label: MessageKey, control: HTMLElement, hint: MessageKey, extra = ""): HTMLElement => {
      const error = h("div", { id: `pool-f-${name}-error`, class: "field-error-box", "data-field": name });
      this.errors.set(name, error);
      return h(
        "div",
        { class: `field field-${name}${extra}` },
        h("label", { for: `pool-f-${name}` }, t(label)),
        control,
        h("p", { class: "field-hint", id: `pool-f-${name}-hint` }, t(hint)),
        error,
      );
    };
    const checkField = (name: PoolField, label: MessageKey, control: HTMLInputElement, hint: MessageKey): HTMLElement => {
      const error = h("div", { id: `pool-f-${name}-error`, class: "field-error-box", "data-field": name });
      this.errors.set(name, error);
      return h(
        "div",
        { class: "field field-check-line" },
        h("label", { class: "check", for: `pool-f-${name}` }, control, t(label)),
        h("p", { class: "field-hint", id: `pool-f-${name}-hint` }, t(hint)),
        error,
      );
    };
    const regionsError = h("div", { id: "pool-f-regions-error", class: "field-error-box", "data-field": "regions" });
    this.errors.set("regions", regionsError);
    const num = (name: PoolField, value: number): HTMLInputElement =>
      text(name, String(value), { inputmode: "numeric", class: "num-input" });

    this.el = h(
      "form",
      {
        id: "pool-form",
        class: "card pool-form",
        "data-mode": pool ? "edit" : "create",
        novalidate: true,
        "aria-labelledby": "pool-form-title",
        on: {
          submit: (ev) => {
            ev.preventDefault();
            void this.save();
          },
          keydown: (ev) => {
            if (ev.key === "Escape") {
              ev.preventDefault();
              this.cancel();
            }
          },
        },
      },
      h("h2", { id: "pool-form-title" }, pool ? t("pool.form.editTitle", { name: pool.name }) : t("pool.form.createTitle")),
      h("p", { class: "hint form-keys" }, t("pool.form.keys")),
      this.modelList,
      h(
        "div",
        { class: "form-grid" },
        field("name", "pool.f.name", text("name", pool?.name ?? "", { required: true }), "pool.h.name"),
        field("model", "pool.f.model", text("model", pool?.model ?? "", { list: "pool-f-models", required: true }), "pool.h.model"),
        h(
          "div",
          { class: "field field-regions field-wide" },
          h("span", { class: "field-label", id: "pool-f-regions-label" }, t("pool.f.regions")),
          this.regionsBox,
          h("p", { class: "field-hint", id: "pool-f-regions-hint" }, t("pool.h.regions")),
          regionsError,
        ),
        h(
          "div",
          { class: "field-trio field-wide" },
          field("min", "pool.f.min", num("min", pool?.min ?? 0), "pool.h.min"),
          field("max", "pool.f.max", num("max", pool?.max ?? 8), "pool.h.max"),
          field("base_gpus", "pool.f.base", num("base_gpus", pool?.base_gpus ?? 0), "pool.h.base"),
        ),
        field("term", "pool.f.term", choice("term", TERM_KEYS, pool?.term ?? "month"), "pool.h.term"),
        field("overlay", "pool.f.overlay", choice("overlay", OVERLAY_KEYS, pool?.overlay ?? "hour"), "pool.h.overlay"),
        field("placement", "pool.f.placement", choice("placement", PLACEMENT_KEYS, pool?.placement ?? "pack"), "pool.h.placement"),
        h(
          "div",
          { class: "field-checks" },
          checkField("interruptible", "pool.f.interruptible", check("interruptible", pool?.interruptible ?? false), "pool.h.interruptible"),
          checkField("release_at_unit_end", "pool.f.releaseAtUnitEnd", check("release_at_unit_end", pool?.release_at_unit_end ?? false), "pool.h.releaseAtUnitEnd"),
        ),
      ),
      this.formError,
      h("div", { class: "form-actions" }, this.saveButton, this.cancelButton),
    );
    for (const [name, control] of this.controls) {
      control.addEventListener(control instanceof HTMLSelectElement || control.type === "checkbox" ? "change" : "input", () => this.setError(name, null));
    }
    this.setOptions(options);
  }

  setOptions(options: PoolOptions | null): void {
    if (options) {
      this.choices = { terms: options.terms, overlays: options.overlays, placements: options.placements };
      this.fillChoice("term", options.terms, TERM_KEYS);
      this.fillChoice("overlay", options.overlays, OVERLAY_KEYS);
      this.fillChoice("placement", options.placements, PLACEMENT_KEYS);
    }
    replaceChildren(
      this.modelList,
      (options?.catalog_models ?? []).map((m) => h("option", { value: m })),
    );
    const offered = options?.regions ?? [];
    const known = new Set(offered.map((r) => r.region));
    // A region the pool names that no host is in any more still shows, so it can be unticked.
    const extra = [...this.chosenRegions].filter((r) => !known.has(r)).map((region) => ({ region, hosts: 0, gpu_models: [] as string[] }));
    const all = [...offered, ...extra];
    if (all.length === 0) {
      replaceChildren(this.regionsBox, h("p", { class: "hint" }, t(options ? "pool.f.regionsNone" : "common.loading")));
      return;
    }
    replaceChildren(
      this.regionsBox,
      all.map((offer, i) => {
        const id = `pool-f-region-${i}`;
        const box = h("input", {
          type: "checkbox",
          id,
          name: "regions",
          value: offer.region,
          checked: this.chosenRegions.has(offer.region),
          on: {
            change: () => {
              if (box.checked) this.chosenRegions.add(offer.region);
              else this.chosenRegions.delete(offer.region);
              this.setError("regions", null);
            },
          },
        });
        return h(
          "label",
          { class: "check region-check", for: id },
          box,
          h("span", { class: "region-name" }, offer.region),
          h(
            "span",
            { class: "region-models hint" },
            offer.gpu_models.length > 0
              ? t("pool.f.regionOffer", { hosts: formatCount(offer.hosts), models: offer.gpu_models.join(t("common.listSeparator")) })
              : t("pool.f.regionUnknown", { hosts: formatCount(offer.hosts) }),
          ),
        );
      }),
    );
  }

  focusFirst(): void {
    (this.controls.get(this.editing ? "model" : "name") as HTMLElement | undefined)?.focus();
  }

  private cancel(): void {
    if (this.busy) return;
    this.callbacks.onCancel();
  }

  private value(name: PoolField): string {
    return this.controls.get(name)?.value ?? "";
  }

  private checked(name: PoolField): boolean {
    const control = this.controls.get(name);
    return control instanceof HTMLInputElement ? control.checked : false;
  }

  private setError(name: PoolField, content: { sentence: string; detail: string | null; source: "client" | "server" } | null): void {
    const box = this.errors.get(name);
    if (!box) return;
    const control = name === "regions" ? this.regionsBox : this.controls.get(name);
    if (!content) {
      if (box.firstChild) replaceChildren(box);
      control?.removeAttribute("aria-invalid");
      return;
    }
    replaceChildren(
      box,
      h(
        "p",
        { class: "field-error", role: "alert", "data-source": content.source },
        h("span", { class: "alert-line" }, content.sentence),
        content.detail ? h("span", { class: "alert-detail", lang: "en" }, content.detail) : null,
      ),
    );
    control?.setAttribute("aria-invalid", "true");
  }

  private fillChoice<V extends string>(name: "term" | "overlay" | "placement", values: readonly V[], keys: Record<V, MessageKey>): void {
    const select = this.controls.get(name);
    if (!(select instanceof HTMLSelectElement)) return;
    const chosen = select.value;
    replaceChildren(
      select,
      values.map((v) => h("option", { value: v }, t(keys[v]))),
    );
    if (values.some((v) => v === chosen)) select.value = chosen;
  }

  private focusField(name: PoolField): void {
    if (name === "regions") this.regionsBox.querySelector<HTMLInputElement>("input")?.focus();
    else (this.controls.get(name) as HTMLElement | undefined)?.focus();
  }

  private async save(): Promise<void> {
    if (this.busy) return;
    for (const name of POOL_FIELDS) this.setError(name, null);
    replaceChildren(this.formError);
    const checked = checkPoolForm({
      name: this.value("name"),
      model: this.value("model"),
      regions: [...this.chosenRegions],
      min: this.value("min"),
      max: this.value("max"),
      base_gpus: this.value("base_gpus"),
      term: this.value("term"),
      overlay: this.value("overlay"),
      placement: this.value("placement"),
      interruptible: this.checked("interruptible"),
      release_at_unit_end: this.checked("release_at_unit_end"),
    }, this.choices);
    if (!checked.ok) {
      let first: PoolField | null = null;
      for (const name of POOL_FIELDS) {
        const problem = checked.problems[name];
        if (!problem) continue;
        this.setError(name, { sentence: tr(problem), detail: null, source: "client" });
        first ??= name;
      }
      if (first) this.focusField(first);
      return;
    }
    this.busy = true;
    this.el.setAttribute("aria-busy", "true");
    this.saveButton.disabled = true;
    this.cancelButton.disabled = true;
    const input = checked.input;
    const res = await call(() => (this.editing ? commands.updatePool(this.editing, input) : commands.createPool(input)));
    this.busy = false;
    this.el.removeAttribute("aria-busy");
    this.saveButton.disabled = false;
    this.cancelButton.disabled = false;
    if (res.status === "ok") {
      await this.callbacks.onDone(res.data, this.editing === null);
      return;
    }
    const ipc = ipcError(res.error);
    const named = ipc?.kind === "invalid_input" ? fieldOf(ipc, POOL_FIELDS) : null;
    if (named) {
      this.setError(named, { sentence: t("pool.form.serverField"), detail: ipc?.message.trim() ?? null, source: "server" });
      this.focusField(named);
      return;
    }
    replaceChildren(this.formError, errorAlert(t(this.editing ? "pool.form.saveError" : "pool.form.createError"), res.error, "pool-form-error"));
    this.saveButton.focus();
  }
}
