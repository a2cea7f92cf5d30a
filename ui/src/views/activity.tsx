// Activity: every change to a pool, and to the console as a whole (a host added or
// removed, a limit or the budget changed: no pool), newest first (the last 200), re-read
// when the log grows or a pool changes (live.ts): when (always with its date), which pool, who (operator, failover, rule, enforcer, Slurm), from → to, why, the
// cost it moved, each host's part, and how it ended. A select filters to one pool, and
// checkboxes by kind (the operator's, rule decisions, failover, the enforcer and Slurm, decisions
// that changed nothing). Consecutive decisions that changed nothing are one row ("stays at
// 6 GPUs: 14 decisions with no change, 10:02–10:09") that opens to each (activity.ts).
//
// On Solid: the log is a store reconciled by entry id, so a refresh updates the rows that
// changed in place and never replaces a row (or the filter) under the pointer or the focus.
//
// Stable selectors (end-to-end tests rely on these):
//   #view-activity                              the view
//   #activity-pool                              the filter (value "" = all pools)
//   #activity-kind-operator|rule|automatic|noops  the kind checkboxes
//   tr[data-testid="activity-noops"][data-key][data-count][data-pool]  a run of no-op decisions;
//     its button[data-testid="activity-noops-toggle"] (aria-expanded) shows each as an activity-row
//   [data-testid="activity-error"]              role=alert: loading failed
//   [data-testid="activity-empty"]              nothing logged (for this filter)
//   [data-testid="activity-table"]              the log: tr[data-testid="activity-row"][data-id][data-pool] (data-pool="" console-wide)
//     [data-actor] [data-outcome] [data-noop]   on the row (data-noop="true": a rule decision that changed nothing);
//                                               cells td[data-col="time|pool|actor|change|reason|cost|hosts|outcome"]
//   [data-testid="activity-none-shown"]         entries exist, but none of the kinds ticked
//   [data-testid="audit-status"][data-state="verified|broken"]  the audit chain as last checked
//     ([data-entries] when verified, [data-id] of the first broken entry)
//   [data-testid="activity-who"][data-who][data-role]  who made an entry, in its actor cell

import { createMemo, createSignal, For, Show, type Accessor, type JSX, type Setter } from "solid-js";
import { createStore, reconcile } from "solid-js/store";
import { changeCellText, DEFAULT_FILTER, hasOutcome, isNoOp, noOpsText, summarize, type ActivityFilter, type ActivityRow } from "../activity";
import { commands, type AccessRole, type ActivityEntry, type AuditProblem, type AuditVerdict } from "../bindings";
import { formatCount } from "../costs";
import { describeError } from "../format";
import { t, type MessageKey } from "../i18n";
import { call, ipcError } from "../ipc";
import { actorText, formatDateTime, formatWhen, hostResultText, outcomeText, signedPerHour, signedPerMonth } from "../pool";
import { changeReasonText, roleText } from "../reasons";
import { activityAppended, every, Live, liveView, poolsChanged } from "../live";
import { mountView } from "./solid";
import type { View } from "./view";

/** Whether an entry's actor is a person (the console's user made it), not the rules, the
 * enforcer or Slurm acting on that user's console. */
function byPerson(actor: string): boolean {
  return actor === "operator" || actor === "demo";
}

/** The audit chain is read whole: checked on opening, then every 30 s (an entry edited in
 * the database by hand says nothing to the app). */
const AUDIT_MS = 30_000;

const AUDIT_PROBLEM: Readonly<Record<AuditProblem, MessageKey>> = {
  edited: "activity.audit.edited",
  deleted: "activity.audit.deleted",
  reordered: "activity.audit.reordered",
};
const LIMIT = 200;

/** The filters outlive one view instance (a language change rebuilds the view). */
const memory: { pool: string; kinds: ActivityFilter } = { pool: "", kinds: { ...DEFAULT_FILTER } };

const KIND_BOXES: readonly { kind: keyof ActivityFilter; id: string; label: MessageKey }[] = [
  { kind: "operator", id: "activity-kind-operator", label: "activity.kind.operator" },
  { kind: "rule", id: "activity-kind-rule", label: "activity.kind.rule" },
  { kind: "automatic", id: "activity-kind-automatic", label: "activity.kind.automatic" },
  { kind: "noOps", id: "activity-kind-noops", label: "activity.kind.noOps" },
];

function Row(props: { entry: ActivityEntry; now: number; inRun?: boolean }): JSX.Element {
  const delta = () => props.entry.delta_per_hour_fen ?? 0;
  /** A rule decision that changed nothing: no cost moved, no outcome to report. */
  const noOp = () => isNoOp(props.entry);
  /** A host added or removed, a limit or the budget changed: no pool, no GPU count moved. */
  const consoleWide = () => props.entry.pool === "";
  return (
    <tr
      data-testid="activity-row"
      data-id={props.entry.id}
      data-pool={props.entry.pool}
      data-actor={props.entry.actor}
      data-outcome={props.entry.outcome}
      data-from={props.entry.from}
      data-to={props.entry.to}
      data-noop={noOp() ? "true" : undefined}
      class={props.inRun ? "activity-run-entry" : undefined}
    >
      <td data-col="time" class="nowrap">
        <time datetime={new Date(props.entry.at_ms).toISOString()}>{formatDateTime(props.entry.at_ms)}</time>
      </td>
      <td data-col="pool">
        <Show when={!consoleWide()} fallback={<span class="console-wide" title={t("activity.consoleTitle")}>{t("activity.console")}</span>}>
          {props.entry.pool}
        </Show>
      </td>
      <td data-col="actor" class="nowrap">
        <span class={`actor actor-${props.entry.actor}`}>{actorText(props.entry.actor)}</span>
        <Show when={(props.entry.who ?? "") !== ""}>
          <span class="host-url activity-who" data-testid="activity-who" data-who={props.entry.who ?? ""} data-role={props.entry.role ?? ""}>
            {byPerson(props.entry.actor)
              ? t("activity.by", { who: props.entry.who ?? "", role: roleText((props.entry.role ?? "admin") as AccessRole) })
              : t("activity.via", { who: props.entry.who ?? "" })}
          </span>
        </Show>
      </td>
      <td data-col="change" class="nowrap">
        {changeCellText(props.entry)}
      </td>
      <td data-col="reason" data-reason={props.entry.reason.kind}>
        {changeReasonText(props.entry.reason)}
      </td>
      <td data-col="cost" class={`num ${delta() > 0 ? "dearer" : delta() < 0 ? "cheaper" : ""}`}>
        <Show when={props.entry.delta_per_hour_fen !== null && !noOp()} fallback={t("common.empty")}>
          <span class="nowrap cost-line">{signedPerHour(props.entry.delta_per_hour_fen)}</span>
          <span class="nowrap cost-line">{signedPerMonth(props.entry.delta_per_month_fen)}</span>
        </Show>
      </td>
      <td data-col="hosts">
        <Show when={props.entry.results.length > 0} fallback={t("common.empty")}>
          <ul class="host-results">
            <For each={props.entry.results}>
              {(r) => (
                <li class={r.failed > 0 ? "has-failure" : undefined} data-host={r.host}>
                  {hostResultText(r)}
                </li>
              )}
            </For>
          </ul>
        </Show>
      </td>
      <td data-col="outcome">
        <Show when={hasOutcome(props.entry)} fallback={t("common.empty")}>
          <span class={`outcome outcome-${props.entry.outcome}`}>{outcomeText(props.entry.outcome)}</span>
        </Show>
        <Show when={hasOutcome(props.entry) && !consoleWide() && props.entry.finished_at_ms !== null && props.entry.outcome !== "in_progress"}>
          <span class="host-url">{formatWhen(props.entry.finished_at_ms, props.now)}</span>
        </Show>
      </td>
    </tr>
  );
}

type NoOpsRun = Extract<ActivityRow, { kind: "noops" }>;

/**
 * A row as the table keeps it: an entry (the log store's own object, the same across
 * refreshes), or a run of no-ops whose contents are a signal, so a run that grows updates
 * its row in place rather than replacing it (and the toggle under the pointer).
 */
type ShownRow = { key: string; kind: "entry"; entry: ActivityEntry } | { key: string; kind: "noops"; run: Accessor<NoOpsRun>; set: Setter<NoOpsRun> };

/** A run of decisions that changed nothing: one row, opening to each. */
function NoOpsRows(props: { run: Accessor<NoOpsRun>; now: number; open: boolean; onToggle: () => void }): JSX.Element {
  const row = (): NoOpsRun => props.run();
  return (
    <>
      <tr
        data-testid="activity-noops"
        class="activity-noops"
        data-key={row().key}
        data-pool={row().pool}
        data-count={row().entries.length}
      >
        <td data-col="time" class="nowrap">
          <time datetime={new Date(row().last_ms).toISOString()}>{formatDateTime(row().last_ms)}</time>
        </td>
        <td data-col="pool">{row().pool}</td>
        <td data-col="actor" class="nowrap">
          <span class="actor actor-rule">{actorText("rule")}</span>
        </td>
        <td data-col="change" class="nowrap">
          {t("activity.change.stays", { n: formatCount(row().gpus) })}
        </td>
        <td data-col="reason" colspan={4}>
          <span class="noops-text">{noOpsText(row())}</span>{" "}
          <button
            type="button"
            class="btn btn-small btn-quiet"
            data-testid="activity-noops-toggle"
            aria-expanded={props.open ? "true" : "false"}
            onClick={() => props.onToggle()}
          >
            {t(props.open ? "activity.noops.hide" : "activity.noops.show")}
          </button>
        </td>
      </tr>
      <Show when={props.open}>
        <For each={row().entries}>{(entry) => <Row entry={entry} now={props.now} inRun />}</For>
      </Show>
    </>
  );
}

export function activityView(): View {
  const [log, setLog] = createStore<{ entries: ActivityEntry[] | null }>({ entries: null });
  const [poolNames, setPoolNames] = createSignal<string[]>([]);
  const [pool, setPool] = createSignal(memory.pool);
  const [loadError, setLoadError] = createSignal<unknown>(null);
  const [now, setNow] = createSignal(Date.now());
  const [kinds, setKinds] = createSignal<ActivityFilter>(memory.kinds);
  /** The audit chain as last checked (on opening, then every AUDIT_MS). */
  const [audit, setAudit] = createSignal<AuditVerdict | null>(null);
  /** The runs of no-op decisions opened, by row key. */
  const [opened, setOpened] = createSignal<ReadonlySet<string>>(new Set());
  /** The rows shown last, by key: kept across refreshes so <For> keeps their elements. */
  let shownBefore = new Map<string, ShownRow>();
  let disposed = false;
  let seq = 0;

  // The rows shown: kept by key, so a refresh keeps each row (and its open run) in place.
  const rows = createMemo((): ShownRow[] => {
    const entries = log.entries;
    const next = new Map<string, ShownRow>();
    const list = (entries ? summarize(entries, kinds()) : []).map((row): ShownRow => {
      const was = shownBefore.get(row.key);
      let shown: ShownRow;
      if (row.kind === "entry") {
        shown = was?.kind === "entry" && was.entry === row.entry ? was : { key: row.key, kind: "entry", entry: row.entry };
      } else if (was?.kind === "noops") {
        was.set(row);
        shown = was;
      } else {
        const [run, set] = createSignal<NoOpsRun>(row);
        shown = { key: row.key, kind: "noops", run, set };
      }
      next.set(row.key, shown);
      return shown;
    });
    shownBefore = next;
    return list;
  });

  function toggleKind(kind: keyof ActivityFilter, on: boolean): void {
    memory.kinds = { ...memory.kinds, [kind]: on };
    setKinds(memory.kinds);
  }

  function toggleRun(key: string): void {
    const next = new Set(opened());
    if (next.has(key)) next.delete(key);
    else next.add(key);
    setOpened(next);
  }

  const filterNames = createMemo(() => [...new Set([...poolNames(), ...(pool() ? [pool()] : [])])].sort());

  function choose(name: string): void {
    memory.pool = name;
    setPool(name);
    setLog("entries", null);
    // What a refresh in flight reads is for the filter before: dropped.
    seq += 1;
    void live.request();
  }

  async function refresh(): Promise<void> {
    if (disposed) return;
    const mine = ++seq;
    const wanted = memory.pool;
    const [entries, pools] = await Promise.all([
      call(() => commands.listActivity(wanted === "" ? null : wanted, LIMIT)),
      call(() => commands.listPools()),
    ]);
    if (disposed || mine !== seq) return;
    if (pools.status === "ok") setPoolNames(pools.data.map((p) => p.name));
    setNow(Date.now());
    if (entries.status === "ok") {
      setLog("entries", reconcile(entries.data, { key: "id" }));
      setLoadError(null);
    } else {
      setLoadError(entries.error);
      // A deleted pool whose log is gone: back to all pools.
      if (ipcError(entries.error)?.kind === "not_found" && memory.pool !== "") {
        memory.pool = "";
        setPool("");
        setLog("entries", null);
      }
    }
  }

  const { el, dispose } = mountView(
    "activity",
    { className: "view view-activity", labelledBy: "view-activity-title" },
    () => (
      <>
        <header class="view-header">
          <h1 id="view-activity-title">{t("activity.title")}</h1>
          <p class="lead">{t("activity.lead")}</p>
        </header>
        <div class="activity-filter field">
          <label for="activity-pool">{t("activity.filter")}</label>
          <select
            id="activity-pool"
            data-names={filterNames().join("\n")}
            value={pool()}
            onChange={(event) => choose(event.currentTarget.value)}
          >
            <option value="" selected={pool() === ""}>
              {t("activity.allPools")}
            </option>
            <For each={filterNames()}>
              {(name) => (
                <option value={name} selected={name === pool()}>
                  {name}
                </option>
              )}
            </For>
          </select>
        </div>
        <fieldset class="activity-kinds choice-group">
          <legend>{t("activity.kinds")}</legend>
          <div class="choices">
            <For each={KIND_BOXES}>
              {(box) => (
                <label class="choice" for={box.id}>
                  <input
                    type="checkbox"
                    id={box.id}
                    checked={kinds()[box.kind]}
                    onChange={(event) => toggleKind(box.kind, event.currentTarget.checked)}
                  />
                  <span>{t(box.label)}</span>
                </label>
              )}
            </For>
          </div>
        </fieldset>
        <Show when={audit()}>
          {(verdict) => (
            <Show
              when={verdict().broken}
              fallback={
                <p class="audit-status audit-verified" data-testid="audit-status" data-state="verified" data-entries={verdict().entries}>
                  {t("activity.audit.verified", { count: formatCount(verdict().entries) })}
                </p>
              }
            >
              {(broken) => (
                <div class="alert alert-error audit-status" role="alert" data-testid="audit-status" data-state="broken" data-id={broken().id}>
                  <span class="alert-line">
                    {t("activity.audit.broken", { id: broken().id, problem: t(AUDIT_PROBLEM[broken().problem]) })}
                  </span>
                </div>
              )}
            </Show>
          )}
        </Show>
        <div class="activity-error-box">
          <Show when={loadError() !== null}>
            <div class="alert alert-error" role="alert" data-testid="activity-error">
              <span class="alert-line">{t("activity.loadError", { message: describeError(loadError()) })}</span>
            </div>
          </Show>
        </div>
        <div class="activity-body">
          <Show
            when={log.entries}
            fallback={
              <Show when={loadError() === null}>
                <p class="loading">{t("common.loading")}</p>
              </Show>
            }
          >
            {(entries) => (
              <Show
                when={entries().length > 0}
                fallback={
                  <div class="empty-state" data-testid="activity-empty">
                    <p>{pool() ? t("activity.noneFor", { pool: pool() }) : t("activity.none")}</p>
                  </div>
                }
              >
                <Show when={rows().length === 0}>
                  <p class="empty-state" data-testid="activity-none-shown">
                    {t("activity.noneShown")}
                  </p>
                </Show>
                <div class="table-wrap" hidden={rows().length === 0}>
                  <table class="hosts activity-table" data-testid="activity-table">
                    <caption class="visually-hidden">{t("activity.caption")}</caption>
                    <thead>
                      <tr>
                        <th scope="col">{t("activity.col.time")}</th>
                        <th scope="col">{t("activity.col.pool")}</th>
                        <th scope="col">{t("activity.col.actor")}</th>
                        <th scope="col">{t("activity.col.change")}</th>
                        <th scope="col">{t("activity.col.reason")}</th>
                        <th scope="col" class="num">
                          {t("activity.col.cost")}
                        </th>
                        <th scope="col">{t("activity.col.hosts")}</th>
                        <th scope="col">{t("activity.col.outcome")}</th>
                      </tr>
                    </thead>
                    <tbody>
                      <For each={rows()}>
                        {(row) =>
                          row.kind === "entry" ? (
                            <Row entry={row.entry} now={now()} />
                          ) : (
                            <NoOpsRows run={row.run} now={now()} open={opened().has(row.key)} onToggle={() => toggleRun(row.key)} />
                          )
                        }
                      </For>
                    </tbody>
                  </table>
                </div>
                <Show when={entries().length >= LIMIT}>
                  <p class="hint">{t("activity.limited", { n: formatCount(LIMIT) })}</p>
                </Show>
              </Show>
            )}
          </Show>
        </div>
      </>
    ),
  );

  async function checkAudit(): Promise<void> {
    const verdict = await call(() => commands.verifyAudit());
    if (!disposed && verdict.status === "ok") setAudit(verdict.data);
  }

  const live = new Live(refresh, [activityAppended(), poolsChanged()]);
  const audited = new Live(checkAudit, [every(AUDIT_MS)]);
  void live.request();
  void audited.request();

  return liveView({ el, dispose }, [live, audited], () => (disposed = true));
}
