// The slider: the range, the exact number, the live preview, the confirmation and the
// commit's outcome, for one pool (a new pool, a new slider).
//
// Moving it (`input`) asks previewScale for the value (one request in flight, only the
// latest answer shown). Letting go with the pointer (`change` after a pointer press),
// Enter on the slider or in the number field, or the Apply button commits it (scalePool).
// Arrow keys on the slider only preview, so stepping through values with the keyboard does
// not rent at every step. Escape puts it back. When the preview says `needs_confirmation`,
// an inline question comes first; Cancel puts the slider back.
//
// Leases ticked in the lease table (`picked`) move the slider to the desired count less
// those, and the preview and the commit name them: the enforcer gives back exactly those
// (the placement chooses any more). Moving the slider by hand, Escape, or a commit clears
// the choice.
//
// The two inputs are set from code, not bound: on each look at the pool they follow its
// count unless the operator has chosen another, and the number field keeps what is being
// typed in it (a bound value would overwrite a half-typed number, or miss "4" back to "4").

import { denial } from "../../access";
import { batch, createEffect, createMemo, createSignal, For, on, onCleanup, Show, untrack, type Accessor, type JSX } from "solid-js";
import { commands, type ScalePreview } from "../../bindings";
import { formatCount, gpus } from "../../costs";
import { t } from "../../i18n";
import { call } from "../../ipc";
import { confirmReasonText, LatestOnly, parseCount, perHour, scaleMarks } from "../../pool";
import { showsSpot } from "../../spot";
import { CommitOutcome, type CommitShown } from "./commit-outcome";
import type { PoolSummary } from "./pool-card";
import { Preview, type PreviewShown, type PreviewState } from "./preview";

type PreviewAnswer = Awaited<ReturnType<typeof call<ScalePreview>>>;
type Control = "range" | "count";
/** What a preview is asked for: a count and the leases the operator chose to give back. */
type Ask = { to: number; release: readonly string[] };

/** The leases as the IPC takes them: none chosen is `null` (the placement's choice). */
function releaseArg(ids: readonly string[]): string[] | null {
  return ids.length > 0 ? [...ids] : null;
}

/** Whether `preview` was made for exactly the leases in `ids` as the operator's choice. */
function sameChoice(preview: ScalePreview, ids: readonly string[]): boolean {
  const chosen = preview.released.filter((l) => l.chosen).map((l) => l.lease_id);
  return chosen.length === ids.length && ids.every((id) => chosen.includes(id));
}

export function Slider(props: {
  /** The pool's store entry: the same object for this slider's life, updated in place. */
  pool: PoolSummary;
  /** When the pool was last looked at: each look moves the controls and follows the commit. */
  now: Accessor<number>;
  /** Bumped when the confirmation limits change: what is shown is asked for again. */
  limitsSaved: Accessor<number>;
  /** Leases the operator ticked to give back. */
  picked: Accessor<readonly string[]>;
  clearPicked: () => void;
  announce: (text: string) => void;
  refresh: () => void;
  /** Said by the slider when the pool's rules may move (or only log) the count: null when not. */
  rulesNote: Accessor<string | null>;
}): JSX.Element {
  const pool = props.pool;
  /** The pool's desired count as this slider knows it (a commit's answer is known first). */
  const [desired, setDesired] = createSignal(untrack(() => pool.desired));
  /** The value the operator chose and has not committed (null: the slider follows `desired`). */
  const [chosen, setChosen] = createSignal<number | null>(null);
  const [committing, setCommitting] = createSignal(false);
  const [confirming, setConfirming] = createSignal<ScalePreview | null>(null);
  const [previewState, setPreviewState] = createSignal<PreviewState>("idle");
  const [previewTo, setPreviewTo] = createSignal<number | null>(null);
  const [shown, setShown] = createSignal<PreviewShown>({ kind: "idle" });
  const [commit, setCommit] = createSignal<CommitShown | null>(null);
  const [countInvalid, setCountInvalid] = createSignal(false);
  /** What moved the slider last: a pointer commits on release, keys only on Enter. */
  let lastInput: "pointer" | "key" = "key";
  let disposed = false;
  let following = false;
  /** The choice of leases was cleared here (a move by hand, Escape, a commit), not there. */
  let clearedHere = false;
  let range!: HTMLInputElement;
  let count!: HTMLInputElement;
  let confirmYes: HTMLButtonElement | undefined;

  const gate = new LatestOnly<Ask, PreviewAnswer>(
    (ask) => call(() => commands.previewScale(pool.name, ask.to, releaseArg(ask.release))),
    (ask, res) => showPreview(ask.to, res),
  );
  onCleanup(() => {
    disposed = true;
    gate.close();
  });

  const marks = createMemo(() => scaleMarks(pool.min, pool.max));
  const idle = createMemo(() =>
    t("pool.preview.idle", { n: gpus(desired()), cost: perHour(pool.spend?.run_rate_per_hour_fen ?? null) }),
  );
  // Not beside a pending confirmation: the question's own buttons answer it.
  const applyDisabled = () =>
    denial("scale") !== null || committing() || confirming() !== null || chosen() === null || chosen() === desired();

  // A new look at the pool (every refresh).
  createEffect(
    on(props.now, () => {
      const before = desired();
      setDesired(pool.desired);
      const asked = chosen();
      if (asked !== null) setChosen(Math.max(pool.min, Math.min(pool.max, asked)));
      if (chosen() === pool.desired && !confirming()) setChosen(null);
      if (chosen() === null) {
        // What is being typed in the number field stays until Enter or Escape.
        setControls(pool.desired, document.activeElement === count ? "count" : null);
        if (pool.desired !== before) dropPreview();
      }
      void followCommit();
    }),
  );

  // The limits changed: ask again for what is shown.
  createEffect(
    on(
      props.limitsSaved,
      () => {
        const asked = chosen();
        if (asked !== null) void gate.ask({ to: asked, release: props.picked() });
      },
      { defer: true },
    ),
  );

  // Leases ticked in the table: the desired count less those, previewed naming them.
  createEffect(
    on(
      props.picked,
      (ids) => {
        if (ids.length > 0) onMove(Math.max(pool.min, desired() - ids.length), null);
        else if (clearedHere) clearedHere = false;
        else if (chosen() !== null && !committing()) reset();
      },
      { defer: true },
    ),
  );

  /** Drops the operator's choice of leases, here. */
  function clearChoice(): void {
    if (props.picked().length === 0) return;
    clearedHere = true;
    props.clearPicked();
  }

  function setControls(n: number, except: Control | null): void {
    if (except !== "range" && range.value !== String(n)) range.value = String(n);
    if (except !== "count" && count.value !== String(n)) count.value = String(n);
  }

  /** The slider or the number field moved (`from`), or the ticked leases did (`null`). */
  function onMove(n: number, from: Control | null): void {
    if (committing()) return;
    if (from !== null) clearChoice();
    batch(() => {
      setChosen(n);
      cancelConfirm(false);
      // A new preview: the last commit's outcome is history (Activity keeps it).
      if (commit()?.kind !== "sending") setCommit(null);
      setControls(n, from);
      setPreviewState("pending");
      setPreviewTo(n);
    });
    void gate.ask({ to: n, release: props.picked() });
  }

  function onKey(event: KeyboardEvent, from: Control): void {
    if (from === "range") lastInput = "key";
    if (event.key === "Enter") {
      event.preventDefault();
      const n = from === "count" ? parseCount(count.value, pool.min, pool.max) : Number(range.value);
      setCountInvalid(n === null);
      if (n === null) return;
      // Enter on what the ticked leases chose keeps that choice.
      if (n !== chosen()) onMove(n, from);
      void commitTo(n);
    } else if (event.key === "Escape" && chosen() !== null) {
      event.preventDefault();
      reset();
    }
  }

  /** Back to the pool's desired count; nothing asked is shown. */
  function reset(): void {
    clearChoice();
    batch(() => {
      setChosen(null);
      gate.reset();
      setControls(desired(), null);
      dropPreview();
    });
  }

  function dropPreview(): void {
    batch(() => {
      setShown({ kind: "idle" });
      setPreviewState("idle");
      setPreviewTo(null);
    });
  }

  function showPreview(to: number, res: PreviewAnswer): void {
    if (disposed || chosen() !== to) return;
    batch(() => {
      if (res.status === "ok") {
        setShown({ kind: "ready", preview: res.data });
        setPreviewState("ready");
      } else {
        setShown({ kind: "error", error: res.error });
        setPreviewState("error");
      }
      setPreviewTo(to);
    });
  }

  async function previewFor(to: number): Promise<ScalePreview | null> {
    const now = shown();
    const ids = props.picked();
    if (now.kind === "ready" && now.preview.to === to && previewState() === "ready" && sameChoice(now.preview, ids)) return now.preview;
    const res = await call(() => commands.previewScale(pool.name, to, releaseArg(ids)));
    if (disposed) return null;
    showPreview(to, res);
    return res.status === "ok" ? res.data : null;
  }

  async function commitTo(to: number): Promise<void> {
    if (committing() || disposed) return;
    if (confirming()?.to === to) return;
    if (to === desired() && chosen() === null) return;
    setChosen(to);
    const preview = await previewFor(to);
    if (disposed || chosen() !== to) return;
    // The preview failed: its error is shown; committing blind could rent past a limit.
    if (!preview) return;
    if (preview.needs_confirmation) {
      setConfirming(preview);
      confirmYes?.focus();
      return;
    }
    await send(to);
  }

  async function confirmed(): Promise<void> {
    const preview = confirming();
    if (!preview) return;
    setConfirming(null);
    await send(preview.to);
    range.focus();
  }

  /** Drops the question; with `revert`, the slider goes back to the pool's desired count. */
  function cancelConfirm(revert: boolean): void {
    if (!confirming()) return;
    setConfirming(null);
    if (revert) {
      reset();
      props.announce(t("pool.confirm.cancelled", { n: formatCount(desired()) }));
      range.focus();
    }
  }

  async function send(to: number, overBudget = false): Promise<void> {
    batch(() => {
      setCommitting(true);
      setCommit({ kind: "sending", to });
    });
    const release = releaseArg(props.picked());
    // From the count this slider showed: a change that came first (a rule, another
    // console) is refused as a conflict rather than overwritten.
    const from = desired();
    const res = await call(() => commands.scalePool(pool.name, to, from, release, overBudget));
    setCommitting(false);
    if (disposed) return;
    if (res.status === "ok") {
      const entry = res.data;
      clearChoice();
      batch(() => {
        setDesired(entry.to);
        setChosen(null);
        gate.reset();
        setControls(entry.to, null);
        dropPreview();
        setCommit({ kind: "done", entry });
      });
      props.refresh();
    } else {
      setCommit({ kind: "error", to, error: res.error });
    }
  }

  /** While the last change is in progress, its entry is read again to show how it ends. */
  async function followCommit(): Promise<void> {
    const was = commit();
    if (was?.kind !== "done" || was.entry.outcome !== "in_progress" || following) return;
    following = true;
    const res = await call(() => commands.listActivity(pool.name, 20));
    following = false;
    const still = commit();
    if (disposed || still?.kind !== "done" || still.entry.id !== was.entry.id || res.status !== "ok") return;
    const now = res.data.find((e) => e.id === was.entry.id);
    if (now && (now.outcome !== was.entry.outcome || JSON.stringify(now.results) !== JSON.stringify(was.entry.results))) {
      setCommit({ kind: "done", entry: now });
    }
  }

  return (
    <section class="card pool-slider-card" aria-labelledby="pool-slider-title" aria-busy={committing() ? "true" : undefined}>
      <h2 id="pool-slider-title">{t("pool.slider.title")}</h2>
      <div class="pool-slider-row">
        <div class="field pool-range-field">
          <label for="pool-slider">{t("pool.slider.label", { pool: pool.name })}</label>
          <input
            type="range"
            id="pool-slider"
            class="pool-slider"
            data-testid="pool-slider"
            ref={range}
            min={pool.min}
            max={pool.max}
            step={1}
            aria-describedby="pool-slider-hint"
            onInput={() => onMove(Number(range.value), "range")}
            onChange={() => {
              // A pointer let go: commit. Arrow keys fire change at every step too: those
              // only preview, and Enter commits.
              if (lastInput === "pointer") void commitTo(Number(range.value));
            }}
            onPointerDown={() => {
              lastInput = "pointer";
            }}
            onKeyDown={(event) => onKey(event, "range")}
          />
          <div class="pool-scale" aria-hidden="true">
            <For each={marks()}>{(mark) => <span>{String(mark)}</span>}</For>
          </div>
        </div>
        <div class="field pool-count-field">
          <label for="pool-count">{t("pool.slider.exact")}</label>
          <input
            type="number"
            id="pool-count"
            class="num-input pool-count"
            data-testid="pool-count-input"
            ref={count}
            min={pool.min}
            max={pool.max}
            step={1}
            inputmode="numeric"
            aria-invalid={countInvalid() ? "true" : undefined}
            onInput={() => {
              const n = parseCount(count.value, pool.min, pool.max);
              if (n !== null) onMove(n, "count");
            }}
            onKeyDown={(event) => onKey(event, "count")}
          />
        </div>
      </div>
      <p class="field-hint" id="pool-slider-hint">
        {t("pool.slider.hint")}
      </p>
      <Show when={props.rulesNote()}>
        {(note) => (
          <p class="pool-slider-rules hint" data-testid="pool-slider-rules">
            {note()}
          </p>
        )}
      </Show>
      <Preview state={previewState()} to={previewTo()} shown={shown()} idle={idle()} spot={showsSpot(pool)} />
      <div class="pool-confirm-box">
        <Show when={confirming()}>
          {(question) => (
            <div
              class="confirm pool-confirm"
              role="alertdialog"
              aria-labelledby="pool-confirm-text"
              data-testid="pool-confirm"
              onKeyDown={(event) => {
                if (event.key === "Escape") {
                  event.preventDefault();
                  cancelConfirm(true);
                }
              }}
            >
              <span class="confirm-text" id="pool-confirm-text">
                {t("pool.confirm.text", {
                  from: formatCount(question().from),
                  to: formatCount(question().to),
                  reason: confirmReasonText(question()),
                })}
              </span>
              <span class="btn-row">
                <button
                  type="button"
                  id="pool-confirm-yes"
                  class="btn btn-small btn-primary"
                  data-testid="confirm-scale"
                  ref={confirmYes}
                  onClick={() => void confirmed()}
                >
                  {t("pool.confirm.yes", { n: gpus(question().to) })}
                </button>
                <button type="button" id="pool-confirm-no" class="btn btn-small" data-testid="cancel-scale" onClick={() => cancelConfirm(true)}>
                  {t("pool.confirm.no")}
                </button>
              </span>
            </div>
          )}
        </Show>
      </div>
      <div class="form-actions pool-slider-actions">
        <button
          type="button"
          id="pool-apply"
          class="btn btn-primary"
          data-testid="pool-apply"
          disabled={applyDisabled()}
          title={denial("scale") ?? undefined}
          onClick={() => void commitTo(chosen() ?? desired())}
        >
          {t("pool.apply")}
        </button>
        <Show when={denial("scale")}>
          {(why) => (
            <p class="hint" data-testid="role-denied" data-action="scale">
              {why()}
            </p>
          )}
        </Show>
      </div>
      <CommitOutcome shown={commit()} onOverBudget={(to) => void send(to, true)} />
    </section>
  );
}
