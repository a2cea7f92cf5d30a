// What the count on the slider would cost and do, before anything changes: the target, the
// cost after (per hour and per month, and now), the change, the GPUs free now, the plan in
// words and whether it asks for confirmation; for a pool that may take spot, how the new
// count splits (base, on demand, spot) and what its spot saves an hour. While an answer is on its way the last one
// stays, dimmed (data-state="pending"); an answer for an older value is never shown.

import { For, Match, Show, Switch, type JSX } from "solid-js";
import type { ScalePreview } from "../../bindings";
import { formatCount, gpus } from "../../costs";
import { t } from "../../i18n";
import {
  confirmReasonText,
  costTone,
  freeText,
  perHour,
  perMonth,
  planWords,
  releasedLeaseWords,
  releaseWarnings,
  signedPerHour,
  signedPerMonth,
} from "../../pool";
import { spotSavingText, splitText } from "../../spot";
import { ErrorAlert } from "../error-alert";

export type PreviewState = "idle" | "pending" | "ready" | "error";

/** What the box shows: the pool as it is, an answer, or why there is none. */
export type PreviewShown = { kind: "idle" } | { kind: "ready"; preview: ScalePreview } | { kind: "error"; error: unknown };

/** The GPUs a scale-in gives back (host, GPU index, lease), and what releasing them stops. */
function Released(props: { preview: ScalePreview }): JSX.Element {
  const nowMs = Date.now();
  const warnings = () => releaseWarnings(props.preview, nowMs);
  return (
    <div class="pool-release" data-testid="pool-release">
      <p class="pool-release-title">{t("pool.release.title")}</p>
      <Show when={warnings().length > 0}>
        <div class="alert alert-warn pool-release-warn" role="status" data-testid="pool-release-warning" data-busy={props.preview.release_warning?.busy ?? 0}>
          <For each={warnings()}>{(text) => <p>{text}</p>}</For>
        </div>
      </Show>
      <ul class="pool-release-list">
        <For each={props.preview.released}>
          {(lease) => {
            const words = releasedLeaseWords(lease, nowMs);
            return (
              <li
                class={`pool-release-item ${words.tone}`}
                data-testid="pool-release-item"
                data-lease={lease.lease_id}
                data-host={lease.host}
                data-busy={lease.busy ? "true" : "false"}
                data-kept={lease.kept_to_unit_end ? "true" : "false"}
                data-chosen={lease.chosen ? "true" : "false"}
                data-safe={lease.safe ? "true" : "false"}
              >
                <span class="gpu">{words.gpu}</span>
                <span class="util">{words.util}</span>
                <span class="paid">{words.paid}</span>
                <For each={words.marks}>{(mark) => <span class="mark">{mark}</span>}</For>
                <span class="lease mono">{words.lease}</span>
              </li>
            );
          }}
        </For>
      </ul>
    </div>
  );
}

function Answer(props: { preview: ScalePreview; spot: boolean }): JSX.Element {
  const p = (): ScalePreview => props.preview;
  const plan = () => planWords(p());
  const saving = () => spotSavingText(p().spot_saving_per_hour_fen);
  return (
    <>
      <dl class="pool-preview-grid">
        <div>
          <dt>{t("pool.preview.target")}</dt>
          <dd data-testid="pool-preview-target" data-to={p().to} data-from={p().from}>
            {t("pool.preview.targetValue", { to: gpus(p().to), from: formatCount(p().from) })}
          </dd>
        </div>
        <div>
          <dt>{t("pool.preview.after")}</dt>
          <dd
            data-testid="pool-preview-cost"
            data-per-hour-fen={p().per_hour_after_fen}
            data-per-hour-before-fen={p().per_hour_before_fen}
            data-per-month-fen={p().per_month_after_fen}
          >
            <span class="big">{perHour(p().per_hour_after_fen)}</span>
            <span class="sub">{perMonth(p().per_month_after_fen)}</span>
            <span class="sub before">{t("pool.preview.before", { cost: perHour(p().per_hour_before_fen) })}</span>
          </dd>
        </div>
        <div>
          <dt>{t("pool.preview.delta")}</dt>
          <dd
            class={`delta ${costTone(p().delta_per_hour_fen)}`}
            data-testid="pool-preview-delta"
            data-delta-per-hour-fen={p().delta_per_hour_fen}
          >
            <span class="big">{signedPerHour(p().delta_per_hour_fen)}</span>
            <span class="sub">{signedPerMonth(p().delta_per_month_fen)}</span>
          </dd>
        </div>
      </dl>
      <p class="pool-preview-free" data-testid="pool-preview-free" data-free={p().free_now}>
        {freeText(p().free_now, p().free_by_host)}
      </p>
      <Show when={props.spot || p().split.spot > 0}>
        <p
          class="pool-preview-free pool-preview-split"
          data-testid="pool-preview-split"
          data-base={p().split.base}
          data-on-demand={p().split.on_demand}
          data-spot={p().split.spot}
          data-saving-fen={p().spot_saving_per_hour_fen ?? undefined}
        >
          {t("pool.preview.split", { split: splitText(p().split) })}
          <Show when={saving()}>{(text) => <> {text()}</>}</Show>
        </p>
      </Show>
      <div class="pool-preview-plan" data-testid="pool-preview-plan">
        <p class="plan-headline">{plan().headline}</p>
        <Show when={plan().notes.length > 0}>
          <ul class="plan-notes">
            <For each={plan().notes}>{(note) => <li>{note}</li>}</For>
          </ul>
        </Show>
        <Show when={p().released.length > 0}>
          <Released preview={p()} />
        </Show>
        <Show when={p().needs_confirmation}>
          <p class="plan-confirm hint">{t("pool.preview.asks", { reason: confirmReasonText(p()) })}</p>
        </Show>
      </div>
    </>
  );
}

export function Preview(props: {
  state: PreviewState;
  /** The count the state is for (none while idle). */
  to: number | null;
  shown: PreviewShown;
  /** The words while idle: the pool now. */
  idle: string;
  /** The pool may take spot (interruptible, or holding some): the split is shown. */
  spot: boolean;
}): JSX.Element {
  const ready = () => (props.shown.kind === "ready" ? props.shown.preview : null);
  const failed = () => (props.shown.kind === "error" ? { error: props.shown.error } : null);
  return (
    <div class="pool-preview" data-testid="pool-preview" data-state={props.state} data-to={props.to ?? undefined} aria-live="polite">
      <Switch fallback={<p class="hint pool-preview-idle">{props.idle}</p>}>
        <Match when={failed()}>
          {(f) => <ErrorAlert lead={t("pool.preview.error")} error={f().error} testid="pool-preview-error" />}
        </Match>
        <Match when={ready()}>{(preview) => <Answer preview={preview()} spot={props.spot} />}</Match>
      </Switch>
    </div>
  );
}
