// The Add/Edit host form: the registry's checks (the shell's `check_host`, asked as the
// operator types, for the fields typed in, and before each test or save), "Test
// connection", Save and Cancel; a
// server error shows at the field it names (its `field`), else above the buttons. Adding
// a host tests it first: one that does not answer is flagged before it is saved ("Save
// anyway" keeps it, watched as offline until it answers). Cancel, Escape and leaving the
// view ask first when something was changed (unsaved.ts). The test's outcome shown is the
// latest one only: an edit or a save clears it.
//
// The token is only ever in the password input while the operator types it: it is read
// from the input when sent, the input is cleared right after, and no signal holds it.
//
// Stable selectors (see views/hosts.tsx for the whole section's):
//   #host-form                               data-mode="add|edit"
//   #host-name #host-url #host-region #host-labels #host-fingerprint #host-token
//   #host-token-remove                       checkbox (edit, when a token is stored)
//   #host-FIELD-error                        role=alert under each field (data-source="client": the check; "server": a refusal)
//   #host-test                               "Test connection"
//   [data-testid="host-test-result"]         data-state="pending|ok|error"
//   #host-save #host-cancel
//   [data-testid="host-form-error"]          role=alert: a save failure no field explains
//   [data-testid="host-save-anyway"]         the flag: the new host's test failed; #host-save-anyway saves it
//   [data-testid="discard-question"]         Escape on a changed form: #host-discard-yes #host-discard-no

import { createSignal, onCleanup, onMount, Show, type JSX } from "solid-js";
import { createStore } from "solid-js/store";
import { commands, type FieldProblem, type HostEntry, type HostForm as HostFormValues, type HostInput } from "../../bindings";
import { explainError, type SentenceFor } from "../../explain";
import { errorKindKey, fieldOfKind, formatLabels, HOST_FIELDS, problemsAt, tokenToSend, type HostField } from "../../hosts";
import { t, type MessageKey } from "../../i18n";
import { call, fieldOf, ipcError } from "../../ipc";
import { createUnsaved } from "../../unsaved";
import { backendText } from "../../reasons";
import { phraseText } from "../../phrase";
import { DiscardQuestion } from "../discard-question";
import { ErrorAlert, ErrorDetail } from "../error-alert";

/** Add a host, or edit one (a copy of its entry taken when the form opened). */
export type FormMode = { mode: "add" } | { mode: "edit"; host: HostEntry };

/** The Hosts section's sentence for an error from the shell: its kind says what to do. */
export const hostSentence: SentenceFor = (e) => errorKindKey(e.kind);

const SERVER_FIELD_KEYS: Record<HostField, MessageKey> = {
  name: "hosts.server.name",
  url: "hosts.server.url",
  region: "hosts.server.region",
  labels: "hosts.server.labels",
  fingerprint: "hosts.server.fingerprint",
  token: "hosts.server.token",
};

type FieldError = { sentence: string; detail: string | null; english: boolean; source: "client" | "server" };

/** What the last connection test said (none while it runs, or when a field took the error). */
type TestOutcome = { ok: true; text: string } | { ok: false; error: unknown };

function Field(props: {
  name: HostField;
  label: MessageKey;
  optional?: boolean;
  /** The hint under the input; its element carries the id `host-NAME-hint`. */
  hint: JSX.Element;
  value?: string;
  error: FieldError | null;
  /** Marked invalid without words (the error above the buttons is likely about it). */
  marked: boolean;
  type?: "text" | "password";
  autocomplete?: string;
  inputmode?: "url";
  required?: boolean;
  readonly?: boolean;
  mono?: boolean;
  disabled?: boolean;
  ref: (el: HTMLInputElement) => void;
  onInput: () => void;
}): JSX.Element {
  const id = `host-${props.name}`;
  const hintId = `${id}-hint`;
  return (
    <div class={`field field-${props.name}`}>
      <label for={id}>
        {t(props.label)}
        <Show when={props.optional}>
          <span class="optional">{t("hosts.optional")}</span>
        </Show>
      </label>
      <input
        ref={props.ref}
        id={id}
        name={props.name}
        type={props.type ?? "text"}
        class={props.mono ? "mono" : undefined}
        value={props.value ?? ""}
        autocomplete={props.autocomplete ?? "off"}
        spellcheck={false}
        autocapitalize="off"
        inputmode={props.inputmode}
        required={props.required}
        readonly={props.readonly}
        aria-readonly={props.readonly ? "true" : undefined}
        disabled={props.disabled}
        aria-invalid={props.error !== null || props.marked ? "true" : undefined}
        aria-describedby={props.error !== null ? `${id}-error ${hintId}` : hintId}
        onInput={() => props.onInput()}
      />
      {props.hint}
      <div id={`${id}-error`} class="field-error-box" data-field={props.name}>
        <Show when={props.error}>
          {(error) => (
            <p class="field-error" role="alert" data-source={error().source}>
              <span class="alert-line">{error().sentence}</span>
              <Show when={error().detail}>{(detail) => <ErrorDetail text={detail()} english={error().english} />}</Show>
            </p>
          )}
        </Show>
      </div>
    </div>
  );
}

export function HostForm(props: {
  mode: FormMode;
  /** Where tokens go, in words (follows app info). */
  tokenStore: string;
  /** No keychain answers here: a token cannot be kept (the hint says how to keep one). */
  noKeychain?: boolean;
  onDone: (saved: HostEntry) => void;
  onCancel: () => void;
  onNotFound: () => void;
}): JSX.Element {
  // One form, one mode: another host's form is a new form.
  const editing = props.mode.mode === "edit" ? props.mode.host : null;
  const inputs: Partial<Record<HostField, HTMLInputElement>> = {};
  const [errors, setErrors] = createStore<Record<HostField, FieldError | null>>({
    name: null,
    url: null,
    region: null,
    labels: null,
    fingerprint: null,
    token: null,
  });
  const [marked, setMarked] = createSignal<HostField | null>(null);
  const [busy, setBusy] = createSignal<"test" | "save" | null>(null);
  const [testState, setTestState] = createSignal<"pending" | "ok" | "error" | null>(null);
  const [testOutcome, setTestOutcome] = createSignal<TestOutcome | null>(null);
  const [formError, setFormError] = createSignal<unknown>(null);
  const [removeToken, setRemoveToken] = createSignal(false);
  /** Something was typed or ticked since the form opened. */
  const [dirty, setDirty] = createSignal(false);
  const { asking, gate } = createUnsaved({ dirty, busy: () => busy() !== null });
  /** The new host's test failed: saving again saves it anyway. */
  const [flagged, setFlagged] = createSignal(false);
  let testButton!: HTMLButtonElement;
  let saveButton!: HTMLButtonElement;
  let formEl!: HTMLFormElement;
  let disposed = false;

  const input = (name: HostField): HTMLInputElement => {
    const el = inputs[name];
    if (!el) throw new Error(`no field ${name}`);
    return el;
  };

  function clearToken(): void {
    const token = inputs.token;
    if (token) token.value = "";
  }

  onMount(() => input(editing ? "url" : "name").focus());
  onCleanup(() => {
    disposed = true;
    clearToken();
  });

  function setFieldError(name: HostField, error: FieldError | null): void {
    setErrors(name, error);
    if (error === null && marked() === name) setMarked(null);
  }

  function clearErrors(): void {
    for (const name of HOST_FIELDS) setErrors(name, null);
    setMarked(null);
    setFormError(null);
  }

  /** Cancel and Escape: a form as it opened closes; a changed one asks first. */
  function cancel(): void {
    gate.leave(() => {
      clearToken();
      props.onCancel();
    });
  }

  function edited(): void {
    setDirty(true);
    setFlagged(false);
    // A test of what the form held before says nothing of what it holds now.
    if (busy() === null) {
      setTestOutcome(null);
      setTestState(null);
    }
  }

  /** The form as typed, for the registry's check. */
  const typed = (): HostFormValues => ({
    name: input("name").value,
    url: input("url").value,
    region: input("region").value,
    labels: input("labels").value,
    fingerprint: input("fingerprint").value,
  });

  const checkError = (problem: FieldProblem): FieldError => ({ sentence: phraseText(problem.words), detail: null, english: false, source: "client" });

  /** The registry's check; on problems marks the fields and focuses the first (null: the form went away). */
  async function collect(): Promise<HostInput | null> {
    checkSeq++;
    const checked = await commands.checkHost(typed());
    if (disposed) return null;
    if (checked.input === null) {
      const found = problemsAt(checked.problems, HOST_FIELDS);
      for (const { field, problem } of found) setFieldError(field, checkError(problem));
      const first = found[0];
      if (first) input(first.field).focus();
      return null;
    }
    return { ...checked.input, token: tokenToSend(input("token").value, removeToken()) };
  }

  // As the operator types: the fields typed in so far get the check's words a moment after.
  const touched = new Set<HostField>();
  let checkSeq = 0;
  let checkTimer: number | undefined;
  onCleanup(() => window.clearTimeout(checkTimer));
  function checkSoon(name: HostField): void {
    if (name !== "token") touched.add(name);
    window.clearTimeout(checkTimer);
    checkTimer = window.setTimeout(() => void checkTyped(), 300);
  }
  async function checkTyped(): Promise<void> {
    const seq = ++checkSeq;
    const checked = await commands.checkHost(typed());
    if (disposed || seq !== checkSeq || busy() !== null) return;
    for (const field of touched) {
      const problem = checked.problems.find((p) => p.field === field);
      if (problem) setFieldError(field, checkError(problem));
      else if (errors[field]?.source === "client") setFieldError(field, null);
    }
  }

  /** Shows a server error at the field it names (true), or marks the likeliest one (false). */
  function showAtField(err: unknown): boolean {
    const error = ipcError(err);
    const named = error?.kind === "invalid_input" ? fieldOf(error, HOST_FIELDS) : null;
    if (named) {
      const explained = explainError(err);
      setFieldError(named, { sentence: t(SERVER_FIELD_KEYS[named]), detail: explained.detail, english: explained.detailIsEnglish, source: "server" });
      input(named).focus();
      return true;
    }
    setMarked(error ? fieldOfKind(error.kind) : null);
    if (error?.kind === "not_found") props.onNotFound();
    return false;
  }

  /**
   * Tests the connection as the form stands: "ok" when the agent answered, "invalid" when
   * the console refused a field (shown there), "failed" when the host did not answer as an
   * agent; null when the form went away meanwhile.
   */
  async function test(request: HostInput): Promise<"ok" | "invalid" | "failed" | null> {
    setTestOutcome(null);
    setTestState("pending");
    const res = await call(() => commands.testHost(request));
    if (disposed) return null;
    if (res.status === "ok") {
      setTestState("ok");
      setTestOutcome({
        ok: true,
        text: t("hosts.testOk", { host: res.data.host, version: res.data.agent_version, backend: backendText(res.data.backend) }),
      });
      return "ok";
    }
    setTestState("error");
    if (showAtField(res.error)) return "invalid";
    setTestOutcome({ ok: false, error: res.error });
    return ipcError(res.error)?.kind === "invalid_input" ? "invalid" : "failed";
  }

  async function runTest(): Promise<void> {
    if (busy() !== null) return;
    clearErrors();
    setTestOutcome(null);
    setTestState(null);
    const request = await collect();
    if (!request) return;
    setBusy("test");
    const answered = await test(request);
    request.token = null;
    if (answered === null) return;
    setBusy(null);
    testButton.focus();
  }

  async function save(anyway = false): Promise<void> {
    if (busy() !== null) return;
    clearErrors();
    // The outcome shown is this save's: an older test's "connected" must not stand beside it.
    setTestOutcome(null);
    setTestState(null);
    const request = await collect();
    if (!request) return;
    // A new host is tested first; one that does not answer is flagged, not saved silently.
    if (!editing && !anyway && !flagged()) {
      setBusy("test");
      const answered = await test(request);
      if (answered === null) return;
      setBusy(null);
      if (answered !== "ok") {
        request.token = null;
        // A refused field would be refused again: only an unanswered test can be overridden.
        if (answered === "failed") {
          setFlagged(true);
          document.getElementById("host-save-anyway")?.focus();
        }
        return;
      }
    }
    setFlagged(false);
    setBusy("save");
    const res = await call(() => (editing ? commands.updateHost(editing.name, request) : commands.addHost(request)));
    // The token has been handed over (or refused): it leaves the page either way.
    request.token = null;
    if (disposed) return;
    setBusy(null);
    if (res.status === "ok") {
      clearToken();
      props.onDone(res.data);
    } else {
      // The save's refusal is the latest word: a test that passed on the way is not.
      setTestOutcome(null);
      setTestState(null);
      if (!showAtField(res.error)) setFormError(res.error);
      if (!formEl.contains(document.activeElement)) saveButton.focus();
    }
  }

  /** The shared parts of every field: its error, its mark, its input kept by name. */
  const parts = (name: HostField) => ({
    name,
    get error() {
      return errors[name];
    },
    get marked() {
      return marked() === name;
    },
    ref: (el: HTMLInputElement) => (inputs[name] = el),
    // Editing a field clears the error shown for it (and a flag on an older test).
    onInput: () => {
      setFieldError(name, null);
      edited();
      checkSoon(name);
    },
  });

  const hint = (name: HostField, key: MessageKey): JSX.Element => (
    <p class="field-hint" id={`host-${name}-hint`}>
      {t(key)}
    </p>
  );

  return (
    <form
      ref={formEl}
      id="host-form"
      class="host-form"
      data-mode={props.mode.mode}
      novalidate
      aria-labelledby="host-form-title"
      aria-busy={busy() !== null}
      onSubmit={(ev) => {
        ev.preventDefault();
        void save();
      }}
      onKeyDown={(ev) => {
        if (ev.key === "Escape") {
          ev.preventDefault();
          cancel();
        }
      }}
    >
      <h3 id="host-form-title">{editing ? t("hosts.form.editTitle", { name: editing.name }) : t("hosts.form.addTitle")}</h3>
      <p class="hint form-keys">{t("hosts.form.keys")}</p>
      <div class="form-grid">
        <Field
          {...parts("name")}
          label="hosts.field.name"
          hint={hint("name", editing ? "hosts.hint.nameFixed" : "hosts.hint.name")}
          value={editing?.name ?? ""}
          readonly={editing !== null}
          required={editing === null}
        />
        <Field
          {...parts("url")}
          label="hosts.field.url"
          hint={hint("url", "hosts.hint.url")}
          value={editing?.url ?? ""}
          inputmode="url"
          required
        />
        <Field
          {...parts("region")}
          label="hosts.field.region"
          hint={hint("region", "hosts.hint.region")}
          value={editing?.region ?? ""}
          required
        />
        <Field
          {...parts("labels")}
          label="hosts.field.labels"
          hint={hint("labels", "hosts.hint.labels")}
          optional
          value={editing ? formatLabels(editing.labels) : ""}
        />
        <Field
          {...parts("fingerprint")}
          label="hosts.field.fingerprint"
          hint={hint("fingerprint", "hosts.hint.fingerprint")}
          optional
          value={editing?.fingerprint ?? ""}
          mono
        />
        <Field
          {...parts("token")}
          label="hosts.field.token"
          hint={
            <div class="token-extra">
              <p class="field-hint" id="host-token-hint">
                {props.noKeychain
                  ? t("hosts.hint.noKeychain")
                  : t(editing?.has_token ? "hosts.hint.tokenStored" : "hosts.hint.token", { store: props.tokenStore })}
              </p>
              <Show when={editing?.has_token}>
                <label class="check" for="host-token-remove">
                  <input
                    type="checkbox"
                    id="host-token-remove"
                    checked={removeToken()}
                    onChange={(ev) => {
                      const removing = ev.currentTarget.checked;
                      edited();
                      setRemoveToken(removing);
                      if (removing) clearToken();
                    }}
                  />
                  {t("hosts.field.tokenRemove")}
                </label>
              </Show>
            </div>
          }
          optional
          type="password"
          // new-password: browsers neither fill it nor offer to remember it.
          autocomplete="new-password"
          disabled={removeToken()}
        />
      </div>
      <div class="form-actions">
        <button ref={saveButton} type="submit" id="host-save" class="btn btn-primary" disabled={busy() !== null}>
          {busy() === "save" ? t("hosts.saving") : t(editing ? "hosts.save.edit" : "hosts.save.add")}
        </button>
        <button ref={testButton} type="button" id="host-test" class="btn" disabled={busy() !== null} onClick={() => void runTest()}>
          {busy() === "test" ? t("hosts.testing") : t("hosts.test")}
        </button>
        <button type="button" id="host-cancel" class="btn btn-quiet" disabled={busy() !== null} onClick={() => cancel()}>
          {t("hosts.cancel")}
        </button>
      </div>
      {/* What a button brings (the test's result, a question, a refusal) comes under the
          buttons: nothing moves Add host or Save while the pointer is on its way (issue 43). */}
      <div class="test-result" data-testid="host-test-result" data-state={testState() ?? undefined}>
        <Show when={testOutcome()} keyed>
          {(outcome) =>
            outcome.ok ? (
              <p class="alert alert-ok" role="status">
                {outcome.text}
              </p>
            ) : (
              <ErrorAlert lead={t("hosts.testError")} error={outcome.error} testid="host-test-error" sentenceFor={hostSentence} />
            )
          }
        </Show>
      </div>
      <Show when={flagged()}>
        <div class="alert alert-warn save-anyway" role="alert" data-testid="host-save-anyway">
          <span class="alert-line">{t("hosts.flag.testFailed")}</span>
          <span class="discard-actions">
            <button type="button" id="host-save-anyway" class="btn btn-small" disabled={busy() !== null} onClick={() => void save(true)}>
              {t("hosts.flag.saveAnyway")}
            </button>
          </span>
        </div>
      </Show>
      <Show when={asking()}>
        <DiscardQuestion
          id="host"
          onDiscard={() => gate.discard()}
          onKeep={() => {
            gate.keep();
            saveButton.focus();
          }}
        />
      </Show>
      <div class="form-error-box">
        <Show when={formError() !== null}>
          <ErrorAlert
            lead={editing ? t("hosts.saveError", { name: editing.name }) : t("hosts.addError")}
            error={formError()}
            testid="host-form-error"
            sentenceFor={hostSentence}
          />
        </Show>
      </div>
    </form>
  );
}
