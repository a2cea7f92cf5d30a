// The confirmation limits: a slider change of more than so many GPUs, or moving the cost by
// more than so much per hour, asks before anything is rented or released. Built once from
// the shell's PoolOptions; what is typed stays until it is saved, and leaving the view
// with it unsaved asks first (unsaved.ts).

import { createSignal, Match, Show, Switch, type JSX } from "solid-js";
import { commands, type PoolOptions } from "../../bindings";
import { gpus } from "../../costs";
import { t, type MessageKey } from "../../i18n";
import { call } from "../../ipc";
import { parseCount, parseYuan, perHour, yuanInput } from "../../pool";
import { createUnsaved } from "../../unsaved";
import { DiscardQuestion } from "../discard-question";
import { ErrorAlert } from "../error-alert";

type PolicyStatus =
  | { kind: "invalid"; problem: MessageKey }
  | { kind: "saved"; aboveGpus: number; perHourFen: number }
  | { kind: "error"; error: unknown };

export function Policy(props: {
  /** The limits as the shell had them when the view opened. */
  options: PoolOptions;
  /** The limits were saved: what the slider shows is asked for again. */
  onSaved: () => void;
}): JSX.Element {
  const [status, setStatus] = createSignal<PolicyStatus | null>(null);
  let gpusInput!: HTMLInputElement;
  let costInput!: HTMLInputElement;
  // Read once: the fields are the operator's from here on.
  const initialGpus = String(props.options.confirm_above_gpus);
  const initialCost = yuanInput(props.options.confirm_above_per_hour_fen);
  /** What the fields held when last saved (or opened): leaving with other values asks. */
  const [stored, setStored] = createSignal({ gpus: initialGpus, cost: initialCost });
  const { asking, gate } = createUnsaved({
    dirty: () => gpusInput.value.trim() !== stored().gpus.trim() || costInput.value.trim() !== stored().cost.trim(),
  });

  async function save(): Promise<void> {
    const above = parseCount(gpusInput.value, 0, 1_000_000);
    const fen = parseYuan(costInput.value);
    if (above === null || fen === null) {
      setStatus({ kind: "invalid", problem: above === null ? "pool.policy.badGpus" : "pool.policy.badCost" });
      (above === null ? gpusInput : costInput).focus();
      return;
    }
    const res = await call(() => commands.setConfirmPolicy(above, fen));
    if (res.status === "ok") {
      setStored({ gpus: gpusInput.value, cost: costInput.value });
      setStatus({ kind: "saved", aboveGpus: above, perHourFen: fen });
      props.onSaved();
    } else {
      setStatus({ kind: "error", error: res.error });
    }
  }

  const invalid = () => {
    const s = status();
    return s?.kind === "invalid" ? s : null;
  };
  const saved = () => {
    const s = status();
    return s?.kind === "saved" ? s : null;
  };
  const failed = () => {
    const s = status();
    return s?.kind === "error" ? s : null;
  };

  return (
    <form
      class="card pool-policy"
      id="pool-policy"
      aria-labelledby="pool-policy-title"
      novalidate
      onSubmit={(event) => {
        event.preventDefault();
        void save();
      }}
    >
      <h2 id="pool-policy-title">{t("pool.policy.title")}</h2>
      <p class="hint section-lead">{t("pool.policy.lead")}</p>
      <div class="pool-policy-row">
        <label for="pool-policy-gpus">{t("pool.policy.gpus")}</label>
        <input type="number" id="pool-policy-gpus" class="num-input" min={0} step={1} inputmode="numeric" ref={gpusInput} value={initialGpus} />
        <label for="pool-policy-cost">{t("pool.policy.cost")}</label>
        <input type="text" id="pool-policy-cost" class="num-input" inputmode="decimal" ref={costInput} value={initialCost} />
        <button type="submit" id="pool-policy-save" class="btn">
          {t("pool.policy.save")}
        </button>
      </div>
      <Show when={asking()}>
        <DiscardQuestion id="pool-policy" onDiscard={() => gate.discard()} onKeep={() => gate.keep()} />
      </Show>
      <div class="pool-policy-status" data-testid="pool-policy-status">
        <Switch>
          <Match when={invalid()}>
            {(s) => (
              <p class="field-error" role="alert">
                {t(s().problem)}
              </p>
            )}
          </Match>
          <Match when={saved()}>
            {(s) => (
              <p class="hint" role="status">
                {t("pool.policy.saved", { n: gpus(s().aboveGpus), cost: perHour(s().perHourFen) })}
              </p>
            )}
          </Match>
          <Match when={failed()}>{(s) => <ErrorAlert lead={t("pool.policy.error")} error={s().error} testid="pool-policy-error" />}</Match>
        </Switch>
      </div>
    </form>
  );
}
