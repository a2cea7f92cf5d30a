// Rules: pick a pool and see its auto-scaling rules as saved (version and mode, with
// Enable / Shadow / Disable), the enforcer's latest decision on them in words, and the
// custom metrics they watch (a stale one puts its rules idle); edit them in a form or as
// TOML, linted as typed with each problem at its field; replay them over the pool's
// history or a trace beside seed-80-30, HPA and the oracle before enabling them; or have
// a rule file suggested from the same demand.
//
// On Solid: the saved rules are asked for every 2 s into a store reconciled in place
// (the decision's words, each rule's line and each metric's row change; nothing focused
// is replaced). The editor is built once per pool and never refreshed under the
// operator's hands. The parts, one concern each, are in views/rules/: current.tsx,
// decision.tsx, history.tsx, metrics.tsx, editor.tsx (rules-form.tsx, field-notes.tsx,
// lint-list.tsx), replay.tsx and suggestion.tsx; the pure helpers in rules.ts and
// rules-suggest.ts, the words of reasons in reasons.ts. What outlives the view (each
// pool's unsaved draft, its loaded trace, the decisions seen) is in rules-store.ts.
//
// Suggest is a proposal: the suggestion stands beside the editor's file as a line diff,
// with its reasons and both replayed on the same demand; Accept puts it in the editor
// (unsaved, asking first when that replaces unsaved edits), Dismiss changes nothing.
//
// Stable selectors (end-to-end tests rely on these):
//   #view-rules                                the view; data-pool (the selected pool)
//   #rules-select                              the pool picker (a select; data-names, one name a line)
//   [data-testid="rules-error"]                role=alert: loading the pools or the rules failed
//   [data-testid="rules-empty"]                no pool yet
//   [data-testid="rules-announce"]             role=status: what was just done
//   [data-testid="rules-current"]              data-version, data-mode (absent: none saved)
//     [data-testid="rules-version"] [data-testid="rules-mode"]
//     #rules-mode-enabled #rules-mode-shadow #rules-mode-disabled   aria-pressed on the mode now
//     [data-testid="rules-mode-error"]         role=alert, data-kind
//   [data-testid="rules-decision"]             data-state="none|steady|change", data-desired
//     [data-testid="rules-decision-reason"]    the latest decision in words
//     [data-testid="rules-decision-counts"]    holds N / moves from → to, when, the cost of it
//     li[data-testid="rules-decision-clamp"]   li[data-testid="rules-decision-rule"][data-rule]
//   [data-testid="rules-history"]              data-count; li[data-testid="rules-history-item"][data-state][data-desired]
//   [data-testid="rules-metrics"]              tr[data-metric][data-stale], td[data-col="value|age|state"]
//   #rules-editor                              data-tab="form|toml", data-dirty ([data-testid="rules-unsaved"] badge)
//     #rules-tab-form #rules-tab-toml          the tabs (role=tab, arrow keys move)
//     #rules-source                            the rule file (textarea, TOML tab)
//     #rules-f-FIELD                           form inputs, ids from rules.ts fieldId: #rules-f-limits-min_gpus,
//                                                #rules-f-scale_in-force, #rules-f-threshold-0-action …
//     #rules-f-FIELD-notes                     the linter's words under that field:
//                                                .field-error[data-severity="error|warning|client"]
//     [data-testid="rules-metric-row"][data-index]    #rules-add-metric    #rules-remove-metric-N
//     [data-testid="rules-threshold-row"][data-index] #rules-add-threshold #rules-remove-threshold-N
//     [data-testid="rules-target-row"][data-index]    #rules-add-target    #rules-remove-target-N
//     [data-testid="rules-schedule-row"][data-index]  #rules-add-schedule  #rules-remove-schedule-N
//                                                (data-kind="cron|window")
//     [data-testid="rules-form-blocked"]       the file does not parse: the form waits for it
//     [data-testid="rules-lint"]               data-state="pending|valid|invalid", data-errors, data-warnings
//       li[data-testid="rules-lint-item"][data-severity="error|warning"][data-field][data-line]
//     #rules-save-mode #rules-ack (when warnings) #rules-save #rules-revert
//     [data-testid="rules-save-status"]        role=status  [data-testid="rules-save-error"] role=alert, data-kind
//     [data-testid="discard-question"] #rules-discard-yes #rules-discard-no
//   [data-testid="rules-replay"]               data-state="idle|pending|ready|error" (drop a trace on it)
//     #rules-replay-history #rules-replay-trace #rules-trace-file #rules-replay-sample
//     [data-testid="rules-trace-status"] (data-sample)
//     #rules-replay-run #rules-suggest [data-testid="rules-replay-summary"] [data-testid="rules-replay-stale"]
//     [data-testid="rules-replay-chart"] svg    data-theme
//     [data-testid="rules-replay-table"]       tr[data-policy="rules|seed-80-30|hpa|oracle"],
//                                                td[data-col="cost|shortfall|actions|peak"]
//     [data-testid="rules-replay-error"] [data-testid="rules-suggest-error"]
//   [data-testid="rules-suggestion"]           data-state="comparing|ready|error", data-within
//     [data-testid="rules-suggest-diff"] tr[data-diff="same|added|removed|changed"]  [data-testid="rules-suggest-counts"]
//     [data-testid="rules-suggest-notes"] (data-kinds) li[data-note]  #rules-suggest-again [data-testid="rules-suggest-again-error"]
//     [data-testid="rules-suggest-compare"] tr[data-which="current|suggested"] td[data-col]
//     #rules-suggest-accept #rules-suggest-dismiss  #rules-suggest-discard-yes #rules-suggest-discard-no

import { batch, createEffect, createMemo, createSignal, For, on, Show, type JSX } from "solid-js";
import { createStore, reconcile } from "solid-js/store";
import { commands, type PoolRules, type PoolView, type RulesMode, type RulesSuggestion } from "../bindings";
import { t } from "../i18n";
import { call } from "../ipc";
import { keepSelection } from "../pool";
import { rulesModeText } from "../reasons";
import { starterRules } from "../rules";
import { decisionsOf, draftOf, noteDecision, type LoadedTrace, type SeenDecision } from "../rules-store";
import { ErrorAlert } from "./error-alert";
import { CurrentRules } from "./rules/current";
import { LatestDecision } from "./rules/decision";
import { Editor } from "./rules/editor";
import { RecentDecisions } from "./rules/history";
import { MetricsTable } from "./rules/metrics";
import { Replay } from "./rules/replay";
import { Suggestion } from "./rules/suggestion";
import { Live, liveView, poolChanged, poolsChanged } from "../live";
import { mountView } from "./solid";
import type { View } from "./view";

/** The selected pool outlives one view instance (a language change rebuilds the view). */
const memory: { selected: string | null } = { selected: null };

/** The editor of one pool (a new object for each pool opened). */
type Opened = { pool: string; saved: PoolRules | null; starter: string };

export function rulesView(): View {
  const [pools, setPools] = createSignal<readonly PoolView[] | null>(null);
  const [selected, setSelected] = createSignal<string | null>(memory.selected);
  /** The saved rules of the selected pool, as the store the live parts read (reconciled). */
  const [live, setLive] = createStore<{ rules: PoolRules | null; loaded: boolean }>({ rules: null, loaded: false });
  const [loadError, setLoadError] = createSignal<unknown>(null);
  const [modeBusy, setModeBusy] = createSignal(false);
  const [modeError, setModeError] = createSignal<unknown>(null);
  const [announcement, setAnnouncement] = createSignal("");
  const [now, setNow] = createSignal(Date.now());
  const [opened, setOpened] = createSignal<Opened | null>(null);
  /** The rule file being edited: the editor and the replay share it. */
  const [source, setSource] = createSignal("");
  const [replaced, setReplaced] = createSignal(0);
  /** A suggestion waiting for Accept or Dismiss, and the demand it was made on. */
  const [proposal, setProposal] = createSignal<{ suggestion: RulesSuggestion; trace: LoadedTrace | null } | null>(null);
  const [history, setHistory] = createSignal<SeenDecision[]>(memory.selected ? decisionsOf(memory.selected) : []);
  /** Whether the editor's file differs from the saved one (the editor reports it). */
  const [editorDirty, setEditorDirty] = createSignal(false);
  let disposed = false;

  const names = createMemo(() => (pools() ?? []).map((p) => p.name));

  function choose(name: string | null): void {
    memory.selected = name;
    setSelected(name);
  }

  async function loadPools(): Promise<void> {
    const res = await call(() => commands.listPools());
    if (disposed) return;
    if (res.status === "ok") {
      setPools(res.data);
      choose(keepSelection(res.data.map((p) => p.name), memory.selected));
    } else {
      setLoadError(res.error);
    }
  }

  async function refresh(): Promise<void> {
    const pool = selected();
    if (disposed || pool === null) return;
    const res = await call(() => commands.poolRules(pool));
    if (disposed || pool !== selected()) return;
    batch(() => {
      setNow(Date.now());
      if (res.status === "ok") {
        setLive("rules", reconcile(res.data === null ? null : structuredClone(res.data), { key: "name" }));
        setHistory(noteDecision(pool, res.data?.last_decision ?? null));
        setLoadError(null);
        if (!live.loaded) {
          setLive("loaded", true);
          open(pool, res.data);
        }
      } else {
        setLoadError(res.error);
      }
    });
  }

  const rulesFollowed = new Live(refresh, [poolChanged(selected)]);

  function rangeOf(pool: string): { min: number; max: number } {
    const view = pools()?.find((p) => p.name === pool);
    return { min: view?.min ?? 0, max: view?.max ?? 1 };
  }

  /** Opens the editor on the pool's saved file (or a starter one). */
  function open(pool: string, saved: PoolRules | null): void {
    const view = pools()?.find((p) => p.name === pool);
    const starter = starterRules(pool, view?.min ?? 0, view?.max ?? 1);
    // An unsaved draft from before (another pool, another view) comes back as it was.
    setSource(draftOf(pool)?.source ?? saved?.source ?? starter);
    setOpened({ pool, saved, starter });
  }

  // Another pool (once the pools are known): forget the last one's rules, read this one's.
  createEffect(
    on([selected, () => pools() !== null], ([pool, known]) => {
      batch(() => {
        setLive({ rules: null, loaded: false });
        setOpened(null);
        setProposal(null);
        setModeError(null);
        setHistory(pool === null ? [] : decisionsOf(pool));
      });
      if (pool !== null && known) void rulesFollowed.request();
    }),
  );

  async function setMode(mode: RulesMode): Promise<void> {
    const pool = selected();
    if (pool === null || modeBusy()) return;
    setModeBusy(true);
    setModeError(null);
    const res = await call(() => commands.setRulesMode(pool, mode));
    if (disposed) return;
    setModeBusy(false);
    if (res.status === "ok") {
      setLive("rules", reconcile(structuredClone(res.data), { key: "name" }));
      setAnnouncement(t("rules.mode.set", { pool, mode: rulesModeText(res.data.mode) }));
    } else {
      setModeError(res.error);
    }
  }

  function RulesPage(): JSX.Element {
    let header: HTMLElement | undefined;
    createEffect(() => {
      const section = header?.parentElement;
      if (section) section.dataset.pool = selected() ?? "";
    });
    return (
      <>
        <header class="view-header" ref={header}>
          <h1 id="view-rules-title">{t("rules.title")}</h1>
          <p class="lead">{t("rules.lead")}</p>
        </header>
        <div class="rules-error-box">
          <Show when={loadError() !== null}>
            <ErrorAlert lead={t("rules.loadFailed")} error={loadError()} testid="rules-error" />
          </Show>
        </div>
        <div class="pool-picker" hidden={pools()?.length === 0}>
          <div class="field">
            <label for="rules-select">{t("rules.select")}</label>
            <select
              id="rules-select"
              data-names={names().join("\n")}
              disabled={names().length === 0}
              value={selected() ?? ""}
              onChange={(event) => choose(event.currentTarget.value || null)}
            >
              <For each={names()}>
                {(name) => (
                  <option value={name} selected={name === selected()}>
                    {name}
                  </option>
                )}
              </For>
            </select>
          </div>
        </div>
        <p class="pool-announce" role="status" data-testid="rules-announce">
          {announcement()}
        </p>
        <Show when={pools()} fallback={<p class="loading">{t("rules.loading")}</p>}>
          {(loaded) => (
            <Show when={loaded().length > 0}>
              <Show when={live.loaded} fallback={<p class="loading">{t("rules.loading")}</p>}>
                <div class="rules-live">
                  <CurrentRules rules={live.rules} busy={modeBusy()} error={modeError()} onMode={(mode) => void setMode(mode)} />
                  <LatestDecision
                    decision={live.rules?.last_decision ?? null}
                    mode={live.rules?.mode ?? null}
                    metrics={live.rules?.metrics ?? []}
                    now={now()}
                  />
                </div>
                <Show when={live.rules}>
                  <RecentDecisions history={history()} now={now()} />
                  <MetricsTable metrics={live.rules?.metrics ?? []} now={now()} />
                </Show>
              </Show>
            </Show>
          )}
        </Show>
        <Show when={pools()?.length === 0}>
          <div class="empty-state" data-testid="rules-empty">
            <h2>{t("rules.none.title")}</h2>
            <p>{t("rules.none.body")}</p>
          </div>
        </Show>
        <Show when={opened()} keyed>
          {(editing) => (
            <div class="rules-work">
              <Show when={proposal()} keyed>
                {(shown) => (
                  <Suggestion
                    pool={editing.pool}
                    suggestion={shown.suggestion}
                    trace={shown.trace}
                    current={source}
                    dirty={editorDirty}
                    onAccept={() => {
                      batch(() => {
                        setProposal(null);
                        setSource(shown.suggestion.file);
                        setReplaced((n) => n + 1);
                      });
                      setAnnouncement(t("rules.suggest.accepted", { pool: editing.pool }));
                      document.getElementById("rules-editor-title")?.scrollIntoView({ block: "nearest" });
                    }}
                    onDismiss={() => {
                      setProposal(null);
                      setAnnouncement(t("rules.suggest.dismissed"));
                      document.getElementById("rules-suggest")?.focus();
                    }}
                    onSuggested={(suggestion) => {
                      setProposal({ suggestion, trace: shown.trace });
                      setAnnouncement(t("rules.replay.suggested", { pool: editing.pool }));
                    }}
                  />
                )}
              </Show>
              <Editor
                pool={editing.pool}
                saved={editing.saved}
                starter={editing.starter}
                source={source}
                setSource={setSource}
                replaced={replaced}
                onDirty={setEditorDirty}
                announce={setAnnouncement}
                onSaved={(saved) => {
                  setLive("rules", reconcile(structuredClone(saved), { key: "name" }));
                }}
              />
              <Replay
                pool={editing.pool}
                range={rangeOf(editing.pool)}
                source={source}
                onSuggested={(suggestion, trace) => {
                  setProposal({ suggestion, trace });
                  setAnnouncement(t("rules.replay.suggested", { pool: editing.pool }));
                }}
              />
            </div>
          )}
        </Show>
      </>
    );
  }

  const { el, dispose } = mountView("rules", { className: "view view-rules", labelledBy: "view-rules-title" }, () => <RulesPage />);

  // The rules re-read when the shown pool changes (saved, its mode set, a decision
  // recorded); the pools when one comes or goes.
  const poolsFollowed = new Live(loadPools, [poolsChanged((changed) => changed === null)]);
  void poolsFollowed.request();

  return liveView({ el, dispose }, [rulesFollowed, poolsFollowed], () => (disposed = true));
}
