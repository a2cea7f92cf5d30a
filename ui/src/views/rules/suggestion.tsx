// A suggestion as a proposal: the rule file in the editor and the suggested one side by
// side (a line diff), why the suggestion is as it is (its structured notes, worded from the
// catalog), and both replayed on the same demand the suggestion was chosen on (cost,
// shortfall, actions a day, peak). When the shortfall limit is what made the rules dear,
// the note that says so offers to suggest again at the limit it names. Accept puts the suggested file in the editor, unsaved;
// Dismiss leaves the editor as it is. The diff follows the editor as it changes.
//
// Stable selectors (see views/rules.tsx):
//   [data-testid="rules-suggestion"] (data-state="comparing|ready|error", data-within="true|false")
//   [data-testid="rules-suggest-diff"] tr[data-diff="same|added|removed|changed"]
//   [data-testid="rules-suggest-counts"]
//   [data-testid="rules-suggest-notes"] (data-kinds: the notes' kinds) li[data-note=KIND]
//     #rules-suggest-again (in li[data-note="limit_price"]: suggest again at the limit it names)
//     [data-testid="rules-suggest-again-error"]
//   [data-testid="rules-suggest-compare"] tr[data-which="current|suggested"] td[data-col="cost|shortfall|actions|peak"]
//   #rules-suggest-accept #rules-suggest-dismiss
//   [data-testid="discard-question"] #rules-suggest-discard-yes #rules-suggest-discard-no (accepting
//     over unsaved edits asks first)

import { createMemo, createSignal, For, onCleanup, onMount, Show, type JSX } from "solid-js";
import { commands, type ReplayResult, type RulesSuggestion, type SuggestNote } from "../../bindings";
import { formatMoney } from "../../costs";
import { t } from "../../i18n";
import { call } from "../../ipc";
import type { LoadedTrace } from "../../rules-store";
import { diffCounts, lineDiff, suggestAgainLabel, suggestNoteText, type DiffRow } from "../../rules-suggest";
import { getEffectiveTheme } from "../../theme";
import { DiscardQuestion } from "../discard-question";
import { ErrorAlert } from "../error-alert";
import { pct, replayLabels, replaySentence } from "./replay";

type Which = "current" | "suggested";
type Outcome = { status: "pending" } | { status: "ok"; result: ReplayResult } | { status: "error"; error: unknown };

/** The narrowest chart the replay draws: the comparison shows only the numbers. */
const COMPARE_CHART_PX = 320;

function leftOf(row: DiffRow): [number | null, string] {
  return row.kind === "added" ? [null, ""] : [row.leftLine, row.left];
}
function rightOf(row: DiffRow): [number | null, string] {
  return row.kind === "removed" ? [null, ""] : [row.rightLine, row.right];
}

export function Suggestion(props: {
  pool: string;
  suggestion: RulesSuggestion;
  /** The demand it was chosen on (null: the pool's history). */
  trace: LoadedTrace | null;
  /** The rule file in the editor now. */
  current: () => string;
  /** The editor holds unsaved edits, which accepting would replace: ask first. */
  dirty: () => boolean;
  onAccept: () => void;
  onDismiss: () => void;
  /** Suggested again, at another limit, on the same demand. */
  onSuggested: (suggestion: RulesSuggestion) => void;
}): JSX.Element {
  const [asking, setAsking] = createSignal(false);
  const [again, setAgain] = createSignal<{ status: "idle" } | { status: "pending" } | { status: "error"; error: unknown }>({ status: "idle" });
  const rows = createMemo(() => lineDiff(props.current(), props.suggestion.file));
  const counts = createMemo(() => diffCounts(rows()));
  const [outcomes, setOutcomes] = createSignal<Record<Which, Outcome>>({ current: { status: "pending" }, suggested: { status: "pending" } });
  let disposed = false;
  let accept!: HTMLButtonElement;

  async function replayOne(which: Which, source: string): Promise<void> {
    const res = await call(() =>
      commands.replayRules(props.pool, source, props.trace?.text ?? null, getEffectiveTheme(), COMPARE_CHART_PX, replayLabels()),
    );
    if (disposed) return;
    const outcome: Outcome = res.status === "ok" ? { status: "ok", result: res.data.report } : { status: "error", error: res.error };
    setOutcomes((all) => ({ ...all, [which]: outcome }));
  }

  onMount(() => {
    // Both on the same demand, the file in the editor as it was when the suggestion came.
    void replayOne("current", props.current());
    void replayOne("suggested", props.suggestion.file);
    accept.focus();
  });
  onCleanup(() => {
    disposed = true;
  });

  const againFailed = (): unknown => {
    const state = again();
    return state.status === "error" ? state.error : null;
  };

  /** The same suggestion at the limit a note names, on the same demand and metrics. */
  async function suggestAt(limitPct: number): Promise<void> {
    if (again().status === "pending") return;
    setAgain({ status: "pending" });
    const res = await call(() => commands.suggestRules(props.pool, props.trace?.text ?? null, props.current(), limitPct));
    if (disposed) return;
    if (res.status === "ok") {
      setAgain({ status: "idle" });
      props.onSuggested(res.data);
    } else {
      setAgain({ status: "error", error: res.error });
    }
  }
  const noteItem = (note: SuggestNote): JSX.Element => (
    <li data-note={note.kind}>
      {suggestNoteText(note)}
      <Show when={note.kind === "limit_price" ? note : null}>
        {(price) => (
          <>
            {" "}
            <button
              type="button"
              id="rules-suggest-again"
              class="btn btn-small"
              disabled={again().status === "pending"}
              onClick={() => void suggestAt(price().allow_pct)}
            >
              {again().status === "pending" ? t("rules.replay.suggesting") : suggestAgainLabel(price().allow_pct)}
            </button>
          </>
        )}
      </Show>
    </li>
  );

  const state = (): "comparing" | "ready" | "error" => {
    const all = outcomes();
    if (all.current.status === "pending" || all.suggested.status === "pending") return "comparing";
    return all.suggested.status === "error" ? "error" : "ready";
  };
  const WHICH: readonly Which[] = ["current", "suggested"];
  const whichWords = (which: Which): string => t(which === "current" ? "rules.suggest.current" : "rules.suggest.suggested");

  return (
    <section
      class="card rules-suggestion"
      data-testid="rules-suggestion"
      data-state={state()}
      data-within={props.suggestion.within_limit ? "true" : "false"}
      aria-labelledby="rules-suggestion-title"
      onKeyDown={(event) => {
        if (event.key !== "Escape") return;
        event.preventDefault();
        props.onDismiss();
      }}
    >
      <h2 id="rules-suggestion-title">{t("rules.suggest.title")}</h2>
      <p class="hint section-lead">{t("rules.suggest.lead")}</p>

      <h3>{t("rules.suggest.why")}</h3>
      <ul class="rules-suggest-notes" data-testid="rules-suggest-notes" data-kinds={props.suggestion.notes.map((note) => note.kind).join(" ")}>
        <For each={props.suggestion.notes}>{noteItem}</For>
      </ul>
      <Show when={againFailed() !== null}>
        <ErrorAlert lead={t("rules.replay.suggestFailed")} error={againFailed()} testid="rules-suggest-again-error" sentenceFor={replaySentence} />
      </Show>

      <h3>{t("rules.suggest.compareTitle")}</h3>
      <Show when={state() === "comparing"}>
        <p class="loading">{t("rules.suggest.comparing")}</p>
      </Show>
      <div class="table-wrap">
        <table class="hosts rules-table" data-testid="rules-suggest-compare">
          <thead>
            <tr>
              <th scope="col">{t("rules.suggest.col.rules")}</th>
              <th scope="col" class="num">
                {t("rules.replay.col.cost")}
              </th>
              <th scope="col" class="num">
                {t("rules.replay.col.shortfall")}
              </th>
              <th scope="col" class="num">
                {t("rules.replay.col.actions")}
              </th>
              <th scope="col" class="num">
                {t("rules.replay.col.peak")}
              </th>
            </tr>
          </thead>
          <tbody>
            <For each={WHICH}>
              {(which) => {
                const result = (): ReplayResult | null => {
                  const o = outcomes()[which];
                  return o.status === "ok" ? o.result : null;
                };
                const cell = (text: (r: ReplayResult) => string): string => {
                  const r = result();
                  return r ? text(r) : t("common.empty");
                };
                return (
                  <tr data-which={which} classList={{ recommended: which === "suggested" }}>
                    <th scope="row">{whichWords(which)}</th>
                    <td class="num" data-col="cost">
                      {cell((r) => formatMoney(r.cost_fen))}
                    </td>
                    <td class="num" data-col="shortfall">
                      {cell((r) => pct(r.shortfall_pct))}
                    </td>
                    <td class="num" data-col="actions">
                      {cell((r) => r.actions_per_day.toFixed(1))}
                    </td>
                    <td class="num" data-col="peak">
                      {cell((r) => String(r.peak_held_gpus))}
                    </td>
                  </tr>
                );
              }}
            </For>
          </tbody>
        </table>
      </div>
      <For each={WHICH}>
        {(which) => {
          const failed = (): unknown => {
            const o = outcomes()[which];
            return o.status === "error" ? o.error : null;
          };
          return (
            <Show when={failed() !== null}>
              <ErrorAlert
                lead={t("rules.suggest.compareFailed", { which: whichWords(which) })}
                error={failed()}
                testid={`rules-suggest-compare-error-${which}`}
                sentenceFor={replaySentence}
              />
            </Show>
          );
        }}
      </For>

      <h3>{t("rules.suggest.diffTitle")}</h3>
      <p class="hint" data-testid="rules-suggest-counts">
        {counts().added + counts().removed + counts().changed === 0
          ? t("rules.suggest.same")
          : t("rules.suggest.diffCounts", { changed: counts().changed, added: counts().added, removed: counts().removed })}
      </p>
      <div class="table-wrap rules-diff-wrap">
        <table class="rules-diff mono" data-testid="rules-suggest-diff" aria-label={t("rules.suggest.diffLabel")}>
          <colgroup>
            <col class="diff-num" />
            <col />
            <col class="diff-num" />
            <col />
          </colgroup>
          <thead>
            <tr>
              <th scope="col" colSpan={2}>
                {t("rules.suggest.current")}
              </th>
              <th scope="col" colSpan={2}>
                {t("rules.suggest.suggested")}
              </th>
            </tr>
          </thead>
          <tbody>
            <For each={rows()}>
              {(row) => {
                const [ln, left] = leftOf(row);
                const [rn, right] = rightOf(row);
                return (
                  <tr data-diff={row.kind} class={`diff-${row.kind}`}>
                    <td class="diff-line num">{ln === null ? "" : row.kind === "same" ? ln : `− ${ln}`}</td>
                    <td class="diff-left">{left}</td>
                    <td class="diff-line num">{rn === null ? "" : row.kind === "same" ? rn : `+ ${rn}`}</td>
                    <td class="diff-right">{right}</td>
                  </tr>
                );
              }}
            </For>
          </tbody>
        </table>
      </div>

      <div class="form-actions">
        <button
          type="button"
          id="rules-suggest-accept"
          class="btn btn-primary"
          ref={accept}
          onClick={() => (props.dirty() ? setAsking(true) : props.onAccept())}
        >
          {t("rules.suggest.accept")}
        </button>
        <button type="button" id="rules-suggest-dismiss" class="btn btn-quiet" onClick={() => props.onDismiss()}>
          {t("rules.suggest.dismiss")}
        </button>
      </div>
      {/* Under the buttons, so asking moves neither of them. */}
      <Show when={asking()}>
        <DiscardQuestion id="rules-suggest" onDiscard={() => props.onAccept()} onKeep={() => (setAsking(false), accept.focus())} />
      </Show>
    </section>
  );
}
