// The rules editor: a form tab (rules-form.tsx) and a TOML tab over one rule file, which
// is the one source of truth: a form change writes the file again (rules_to_toml), and the
// form is read back from the file (parse_rules) when its tab opens. The file is linted as
// it is typed (300 ms after the last change): each problem and warning stands under the
// form field it names and is listed with its line (lint-list.tsx). Saving is refused while
// the file is invalid (the problem stays at its field); warnings are saved only once
// acknowledged (the checkbox; the console refuses otherwise). Enter saves from a form
// field, Ctrl+Enter from the TOML; Escape (or Put back) puts the saved file back, asking
// first. An unsaved file is kept per pool (rules-store.ts) as it is typed, so leaving for
// another view and coming back finds it again, marked unsaved. For a pool bound to a Slurm
// partition (asked once as the editor opens), the form offers a template that sizes the
// pool to the partition's queue (queue-template.tsx): applying it is an unsaved edit.
//
// Stable selectors (see views/rules.tsx):
//   #rules-editor (data-tab="form|toml", data-dirty)  #rules-tab-form #rules-tab-toml (role=tab)
//   #rules-source  [data-testid="rules-form-blocked"]  [data-testid="rules-lint"]
//   #rules-save-mode #rules-ack #rules-save #rules-revert
//   [data-testid="rules-save-status"] [data-testid="rules-save-error"] (data-kind)
//   [data-testid="rules-template"] (only for a pool bound to a Slurm partition; queue-template.tsx)

import { denial } from "../../access";
import { createEffect, createMemo, createSignal, on, onCleanup, onMount, Show, type JSX } from "solid-js";
import { createStore, reconcile, unwrap } from "solid-js/store";
import { commands, type FieldPath, type IpcError, type LintReport, type PoolRules, type RuleSet, type RulesMode, type SlurmPoolView } from "../../bindings";
import { lineRange } from "../../costs";
import { t, type MessageKey } from "../../i18n";
import { call, ipcError } from "../../ipc";
import { phraseText } from "../../phrase";
import { rulesModeText } from "../../reasons";
import { keepDraft } from "../../rules-store";
import {
  fieldId,
  formField,
  formFromRules,
  notesByField,
  placeText,
  RULES_MODES,
  rulesFromForm,
  type FormProblems,
  type RulesFormValues,
} from "../../rules";
import { applyQueueTemplate } from "../../rules-template";
import { DiscardQuestion } from "../discard-question";
import { ErrorAlert, ErrorDetail } from "../error-alert";
import { LintList } from "./lint-list";
import { QueueTemplate } from "./queue-template";
import { RulesForm } from "./rules-form";

const LINT_DEBOUNCE_MS = 300;

type Tab = "form" | "toml";

const EMPTY_FORM: RulesFormValues = {
  min_gpus: "",
  max_gpus: "",
  out_gpus: "",
  out_pct: "",
  in_gpus: "",
  in_pct: "",
  budget_per_hour: "",
  budget_per_month: "",
  force: false,
  release_window_minutes: "",
  deadband_gpus: "",
  deadband_minutes: "",
  metrics: [],
  thresholds: [],
  targets: [],
  schedules: [],
};

/** Why the file cannot be read into the form: the linter's words in the operator's language
 * (a failure that is not the file's keeps its English). */
function blockedDetail(error: IpcError): { text: string; english: boolean } {
  return error.words ? { text: phraseText(error.words), english: false } : { text: error.message, english: true };
}

function saveSentence(error: IpcError): MessageKey | null {
  switch (error.kind) {
    case "unacknowledged_warnings":
      return "rules.save.unacknowledged";
    case "invalid_input":
      return "rules.save.invalid";
    case "not_found":
      return "rules.save.noPool";
    default:
      return null;
  }
}

export function Editor(props: {
  pool: string;
  /** The saved rules when the editor opened (null: none yet). */
  saved: PoolRules | null;
  /** The file to start from when none is saved. */
  starter: string;
  /** The editor's file (a draft kept from before, else the saved file or the starter). */
  source: () => string;
  setSource: (text: string) => void;
  /** Bumped when the file was replaced from outside (a suggestion): the form reads it again. */
  replaced: () => number;
  onSaved: (rules: PoolRules) => void;
  /** Told whether the file differs from the saved one, as that changes. */
  onDirty?: (dirty: boolean) => void;
  announce: (text: string) => void;
}): JSX.Element {
  /** What Escape goes back to: the saved file (or the starter). */
  const [baseline, setBaseline] = createSignal(props.saved?.source ?? props.starter);
  const [tab, setTab] = createSignal<Tab>("form");
  const [values, setValues] = createStore<RulesFormValues>(structuredClone(EMPTY_FORM));
  const [base, setBase] = createSignal<RuleSet | null>(null);
  const [blocked, setBlocked] = createSignal<IpcError | null>(null);
  const [problems, setProblems] = createStore<FormProblems>({});
  const [report, setReport] = createSignal<LintReport | null>(null);
  const [linting, setLinting] = createSignal(true);
  const [lintError, setLintError] = createSignal<unknown>(null);
  const [mode, setMode] = createSignal<RulesMode>(props.saved?.mode ?? "shadow");
  const [ack, setAck] = createSignal(false);
  const [busy, setBusy] = createSignal(false);
  const [saveError, setSaveError] = createSignal<unknown>(null);
  const [status, setStatus] = createSignal("");
  const [asking, setAsking] = createSignal(false);
  /** The pool's Slurm partition, when it is bound to one (the queue template is offered then). */
  const [slurm, setSlurm] = createSignal<SlurmPoolView | null>(null);
  const dirty = () => props.source() !== baseline();
  const notes = createMemo(() => notesByField(report()));
  /** The form's own problems, keyed by its fields. */
  const fieldProblems = createMemo(() => ({ ...problems }));
  let form!: HTMLFormElement;
  let textarea: HTMLTextAreaElement | undefined;
  let ackBox: HTMLInputElement | undefined;
  let saveButton!: HTMLButtonElement;
  const tabs: HTMLButtonElement[] = [];
  let disposed = false;
  let lintTimer: number | undefined;
  let lintSeq = 0;
  let tomlSeq = 0;
  let pendingToml: Promise<void> = Promise.resolve();

  /** Reads the file into the form; false (and why, for the TOML tab) when it does not parse. */
  async function readForm(text: string): Promise<boolean> {
    const res = await call(() => commands.parseRules(text));
    if (disposed) return false;
    if (res.status === "ok") {
      setValues(reconcile(formFromRules(res.data)));
      setBase(res.data);
      setProblems(reconcile({}));
      setBlocked(null);
      return true;
    }
    setBlocked(ipcError(res.error) ?? { kind: "internal", field: null, line: null, message: String(res.error), problem: null });
    return false;
  }

  /** A form change: the file written again from the form (unless a field is not a number). */
  function formChanged(): void {
    const from = base();
    if (!from) return;
    const built = rulesFromForm(values, from);
    if (!built.ok) {
      setProblems(reconcile(built.problems));
      tomlSeq++;
      return;
    }
    setProblems(reconcile({}));
    const seq = ++tomlSeq;
    pendingToml = (async () => {
      const res = await call(() => commands.rulesToToml(built.rules));
      if (!disposed && seq === tomlSeq && res.status === "ok") props.setSource(res.data);
    })();
  }

  /** Applies the queue template for N minutes to the form: an edit like any other. */
  function applyTemplate(minutes: number): void {
    if (!base()) return;
    const next = applyQueueTemplate(structuredClone(unwrap(values)), minutes, slurm()?.gpus_per_node ?? 1);
    if (!next) return;
    setValues(reconcile(next));
    formChanged();
    props.announce(t("rules.tpl.applied"));
  }

  async function lint(text: string): Promise<void> {
    const seq = ++lintSeq;
    const res = await call(() => commands.lintRules(props.pool, text));
    if (disposed || seq !== lintSeq) return;
    setLinting(false);
    if (res.status === "ok") {
      setReport(res.data);
      setLintError(null);
    } else {
      setLintError(res.error);
    }
  }

  createEffect(() => props.onDirty?.(dirty()));
  onCleanup(() => props.onDirty?.(false));
  // Every change is kept for the pool until it is saved or put back.
  createEffect(on([props.source, baseline], ([text, saved]) => keepDraft(props.pool, text, saved)));
  // Lint as the operator types; a new file needs its warnings acknowledged again.
  createEffect(
    on(props.source, (text) => {
      setLinting(true);
      setAck(false);
      setStatus("");
      window.clearTimeout(lintTimer);
      lintTimer = window.setTimeout(() => void lint(text), LINT_DEBOUNCE_MS);
    }),
  );
  // A suggestion replaced the file: the form shows it.
  createEffect(
    on(
      props.replaced,
      () => {
        void readForm(props.source()).then((ok) => {
          if (!ok) setTab("toml");
        });
      },
      { defer: true },
    ),
  );

  onMount(() => {
    void readForm(props.source()).then((ok) => {
      if (!ok) setTab("toml");
    });
    // Once per pool (the editor opens afresh for each); a failure just leaves the template out.
    void call(() => commands.poolSlurm(props.pool)).then((res) => {
      if (!disposed && res.status === "ok") setSlurm(res.data);
    });
  });
  onCleanup(() => {
    disposed = true;
    window.clearTimeout(lintTimer);
  });

  async function choose(next: Tab): Promise<void> {
    if (next === tab()) return;
    if (next === "toml") {
      await pendingToml;
      setTab("toml");
      return;
    }
    if (await readForm(props.source())) setTab("form");
  }

  function onTabKey(event: KeyboardEvent): void {
    if (event.key !== "ArrowLeft" && event.key !== "ArrowRight") return;
    event.preventDefault();
    const next: Tab = tab() === "form" ? "toml" : "form";
    void choose(next).then(() => tabs[next === "form" ? 0 : 1]?.focus());
  }

  /** Moves to what a problem names: its form field, else its line in the TOML. */
  async function go(path: FieldPath | null, line: number | null): Promise<void> {
    await goTo(path === null ? null : formField(path), line);
  }

  /** Moves to a form field (the form's own problems name theirs), else to a line in the TOML. */
  async function goTo(named: string | null, line: number | null): Promise<void> {
    if (tab() === "form" && named !== null) {
      const input = form.querySelector<HTMLElement>(`#${CSS.escape(fieldId(named))}`);
      if (input) {
        input.focus();
        return;
      }
    }
    await choose("toml");
    if (!textarea) return;
    textarea.focus();
    const range = line === null ? null : lineRange(props.source(), line);
    if (range) textarea.setSelectionRange(range[0], range[1]);
  }

  async function save(): Promise<void> {
    if (busy()) return;
    await pendingToml;
    const first = Object.keys(problems)[0];
    if (first) {
      void goTo(first, null);
      return;
    }
    setBusy(true);
    setSaveError(null);
    setStatus("");
    const res = await call(() => commands.saveRules(props.pool, props.source(), mode(), ack()));
    if (disposed) return;
    setBusy(false);
    if (res.status === "ok") {
      setBaseline(res.data.source);
      const words = t("rules.save.saved", { version: res.data.version, mode: rulesModeText(res.data.mode) });
      setStatus(words);
      props.announce(words);
      props.onSaved(res.data);
      return;
    }
    setSaveError(res.error);
    const error = ipcError(res.error);
    if (error?.kind === "unacknowledged_warnings") {
      ackBox?.focus();
    } else if (error?.kind === "invalid_input" && error.field) {
      // The same problem is in the lint report, with its place read in Rust.
      const field = error.field;
      void go(report()?.errors.find((e) => e.field === field)?.path ?? null, error.line);
    } else {
      saveButton.focus();
    }
  }

  function revert(): void {
    setAsking(false);
    props.setSource(baseline());
    void readForm(baseline()).then((ok) => setTab(ok ? "form" : "toml"));
  }

  const warnings = () => report()?.warnings.length ?? 0;

  return (
    <form
      id="rules-editor"
      class="card rules-editor"
      ref={form}
      novalidate
      data-tab={tab()}
      data-dirty={dirty() ? "true" : undefined}
      aria-labelledby="rules-editor-title"
      aria-busy={busy() ? "true" : undefined}
      onSubmit={(event) => {
        event.preventDefault();
        void save();
      }}
      onKeyDown={(event) => {
        if (event.key === "Escape") {
          if (!dirty() || busy()) return;
          event.preventDefault();
          setAsking(true);
          return;
        }
        if (event.key !== "Enter" || event.isComposing) return;
        const target = event.target;
        if (target instanceof HTMLTextAreaElement) {
          if (!event.ctrlKey && !event.metaKey) return;
        } else if (!(target instanceof HTMLInputElement || target instanceof HTMLSelectElement)) {
          return;
        }
        event.preventDefault();
        void save();
      }}
    >
      <h2 id="rules-editor-title">{t("rules.editor.title")}</h2>
      <p class="hint form-keys">{t("rules.editor.keys")}</p>
      <div class="rules-tabs" role="tablist" aria-label={t("rules.editor.tabs")} onKeyDown={onTabKey}>
        <button
          type="button"
          role="tab"
          id="rules-tab-form"
          ref={(el) => (tabs[0] = el)}
          class="rules-tab"
          aria-selected={tab() === "form" ? "true" : "false"}
          aria-controls="rules-panel-form"
          tabindex={tab() === "form" ? 0 : -1}
          onClick={() => void choose("form")}
        >
          {t("rules.editor.tabForm")}
        </button>
        <button
          type="button"
          role="tab"
          id="rules-tab-toml"
          ref={(el) => (tabs[1] = el)}
          class="rules-tab"
          aria-selected={tab() === "toml" ? "true" : "false"}
          aria-controls="rules-panel-toml"
          tabindex={tab() === "toml" ? 0 : -1}
          onClick={() => void choose("toml")}
        >
          {t("rules.editor.tabToml")}
        </button>
        <Show when={dirty()}>
          <span class="badge badge-soft rules-dirty" data-testid="rules-unsaved">
            {t("rules.editor.unsaved")}
          </span>
        </Show>
      </div>
      <Show when={dirty()}>
        <p class="hint rules-draft-hint">{t("rules.editor.draftHint")}</p>
      </Show>
      <Show when={blocked()}>
        {(why) => (
          <p class="alert alert-warn" data-testid="rules-form-blocked">
            <span class="alert-line">{t("rules.editor.formBlocked", { place: placeText(why().line, why().field ?? "") })}</span>
            <ErrorDetail text={blockedDetail(why()).text} english={blockedDetail(why()).english} prefix={false} />
          </p>
        )}
      </Show>
      <div id="rules-panel-form" role="tabpanel" aria-labelledby="rules-tab-form" hidden={tab() !== "form"}>
        <p class="hint">{t("rules.editor.formHint")}</p>
        <Show when={slurm() !== null && base() !== null}>
          <QueueTemplate gpusPerNode={slurm()?.gpus_per_node ?? 1} onApply={applyTemplate} />
        </Show>
        <RulesForm
          values={values}
          setValues={setValues}
          changed={formChanged}
          notes={notes()}
          problems={fieldProblems()}
          pool={props.pool}
        />
      </div>
      <div id="rules-panel-toml" role="tabpanel" aria-labelledby="rules-tab-toml" hidden={tab() !== "toml"}>
        <div class="field">
          <label for="rules-source">{t("rules.editor.source")}</label>
          <textarea
            id="rules-source"
            ref={textarea}
            class="mono rules-source"
            rows={18}
            spellcheck={false}
            autocomplete="off"
            aria-describedby="rules-source-hint"
            value={props.source()}
            onInput={(event) => props.setSource(event.currentTarget.value)}
          />
          <p class="field-hint" id="rules-source-hint">
            {t("rules.editor.sourceHint")}
          </p>
        </div>
      </div>
      <LintList report={report()} pending={linting()} onGo={(path, line) => void go(path, line)} />
      <Show when={lintError() !== null}>
        <ErrorAlert lead={t("rules.lint.failed")} error={lintError()} testid="rules-lint-error" />
      </Show>
      <div class="rules-save-row">
        <div class="field">
          <label for="rules-save-mode">{t("rules.save.mode")}</label>
          <select id="rules-save-mode" value={mode()} onChange={(event) => setMode(event.currentTarget.value as RulesMode)}>
            {RULES_MODES.map((m) => (
              <option value={m} selected={m === mode()}>
                {rulesModeText(m)}
              </option>
            ))}
          </select>
        </div>
        <Show when={warnings() > 0 && report()?.valid}>
          <label class="check rules-ack" for="rules-ack">
            <input type="checkbox" id="rules-ack" ref={ackBox} checked={ack()} onChange={(event) => setAck(event.currentTarget.checked)} />
            {t("rules.save.ack", { n: warnings() })}
          </label>
        </Show>
      </div>
      <div class="form-actions">
        <button
          type="submit"
          id="rules-save"
          class="btn btn-primary"
          ref={saveButton}
          disabled={busy() || denial("edit_rules") !== null}
          title={denial("edit_rules") ?? undefined}
        >
          {warnings() > 0 && report()?.valid ? t("rules.save.withWarnings", { n: warnings() }) : t("rules.save.save")}
        </button>
        <button type="button" id="rules-revert" class="btn btn-quiet" disabled={busy() || !dirty()} onClick={() => setAsking(true)}>
          {t("rules.save.revert")}
        </button>
      </div>
      {/* What a button brings (the question, the outcome) comes under the buttons: nothing
          moves them while the pointer is on its way (issue 43). */}
      <Show when={asking()}>
        <DiscardQuestion id="rules" onDiscard={revert} onKeep={() => (setAsking(false), saveButton.focus())} />
      </Show>
      <div class="form-error-box">
        <Show when={saveError() !== null}>
          <ErrorAlert lead={t("rules.save.error")} error={saveError()} testid="rules-save-error" sentenceFor={saveSentence} />
        </Show>
      </div>
      <p class="rules-save-status" role="status" data-testid="rules-save-status">
        {status()}
      </p>
    </form>
  );
}
