// The outcome of the last change committed from the slider: asking, then from → to and how
// it ended (followed while in progress), its cost change and each host's part; or why the
// console refused it.

import { Match, Show, Switch, type JSX } from "solid-js";
import type { ActivityEntry } from "../../bindings";
import { formatCount } from "../../costs";
import { t } from "../../i18n";
import { hostResultText, outcomeText, outcomeTone, signedPerHour, signedPerMonth } from "../../pool";
import { ipcError } from "../../ipc";
import { ErrorAlert } from "../error-alert";

export type CommitShown =
  | { kind: "sending"; to: number }
  | { kind: "done"; entry: ActivityEntry }
  | { kind: "error"; to: number; error: unknown };

function Outcome(props: { entry: ActivityEntry }): JSX.Element {
  const entry = (): ActivityEntry => props.entry;
  return (
    <div
      class={`alert ${outcomeTone(entry().outcome)} pool-commit`}
      role="status"
      data-testid="pool-commit"
      data-outcome={entry().outcome}
      data-to={entry().to}
    >
      <span class="alert-line">
        {t("pool.commit.done", {
          from: formatCount(entry().from),
          to: formatCount(entry().to),
          outcome: outcomeText(entry().outcome),
        })}
      </span>
      <Show when={entry().delta_per_hour_fen !== null}>
        <span class="alert-detail">
          {t("pool.commit.delta", { hour: signedPerHour(entry().delta_per_hour_fen), month: signedPerMonth(entry().delta_per_month_fen) })}
        </span>
      </Show>
      <Show when={entry().results.length > 0}>
        <span class="alert-detail">{entry().results.map(hostResultText).join(" · ")}</span>
      </Show>
      <Show when={entry().outcome === "in_progress"}>
        <span class="alert-detail">{t("pool.commit.follow")}</span>
      </Show>
    </div>
  );
}

export function CommitOutcome(props: {
  shown: CommitShown | null;
  /** Sends the refused count again, past the rules' budget cap on purpose. */
  onOverBudget?: (to: number) => void;
}): JSX.Element {
  const sending = () => (props.shown?.kind === "sending" ? props.shown : null);
  const done = () => (props.shown?.kind === "done" ? props.shown.entry : null);
  const failed = () => (props.shown?.kind === "error" ? props.shown : null);
  return (
    <div class="pool-commit-box">
      <Switch>
        <Match when={sending()}>
          {(s) => (
            <p class="hint" role="status">
              {t("pool.commit.sending", { n: formatCount(s().to) })}
            </p>
          )}
        </Match>
        <Match when={done()}>{(entry) => <Outcome entry={entry()} />}</Match>
        <Match when={failed()}>
          {(f) => (
            <ErrorAlert
              lead={t("pool.commit.error", { n: formatCount(f().to) })}
              error={f().error}
              testid="pool-commit-error"
              sentenceFor={(e) => (e.field === "budget" ? "pool.commit.budget" : null)}
            >
              <Show when={ipcError(f().error)?.field === "budget" && props.onOverBudget}>
                <span class="discard-actions">
                  <button
                    type="button"
                    class="btn btn-small btn-danger"
                    id="pool-over-budget"
                    onClick={() => props.onOverBudget?.(f().to)}
                  >
                    {t("pool.commit.overBudget", { n: formatCount(f().to) })}
                  </button>
                </span>
              </Show>
            </ErrorAlert>
          )}
        </Match>
      </Switch>
    </div>
  );
}
