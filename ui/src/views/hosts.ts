// Settings → Hosts: the host registry. A table of registered hosts with live
// health from the fleet store, Edit and Remove (confirmed inline), and one
// Add/Edit form with client-side checks, "Test connection", Save and Cancel.
//
// The token is only ever in the password input while the operator types it: it is
// sent once, the input is cleared right after, and nothing else holds or logs it.
//
// Stable selectors (end-to-end tests rely on these):
//   [data-testid="settings-hosts"]           the section
//   [data-testid="settings-hosts-table"]     the table; one tbody row per host:
//     tr[data-host="NAME"]                     cells td[data-col="url|region|labels|fingerprint|token|health"]
//     [data-col="health"] [data-health]        online | degraded | offline | unknown | none
//     tr[data-reason-for="NAME"]               why it is not online (hidden while online)
//     button[data-action="edit"|"remove"]      row actions
//     tr[data-confirm-for="NAME"]              the inline removal question, right under the row:
//       button[data-action="confirm-remove"|"cancel-remove"]
//   [data-testid="hosts-empty"]              shown when no host is registered
//   [data-testid="hosts-status"]             role=status: "Added …", "Removed …"
//   [data-testid="hosts-error"]              role=alert: loading or removing failed
//   #host-add                                the "Add host" button
//   #host-form                               the form; data-mode="add|edit"
//   #host-name #host-url #host-region #host-labels #host-fingerprint #host-token
//   #host-token-remove                       checkbox (edit, when a token is stored)
//   #host-FIELD-error                        role=alert under each field (data-source="client|server")
//   #host-test                               "Test connection"
//   [data-testid="host-test-result"]         data-state="pending|ok|error"
//   #host-save #host-cancel
//   [data-testid="host-form-error"]          role=alert: a save failure no field explains

import { appInfoState, onAppInfo } from "../app-info";
import { commands, type HostEntry, type HostInput, type HostStatus, type IpcError } from "../bindings";
import { h, replaceChildren } from "../dom";
import { fleetState, onFleetChange } from "../fleet-store";
import { describeError, healthClass, healthKey } from "../format";
import {
  checkHostForm,
  errorKindKey,
  fieldOfKind,
  formatLabels,
  HOST_FIELDS,
  shortFingerprint,
  tokenToSend,
  type HostField,
  type Problem,
} from "../hosts";
import { t, type MessageKey } from "../i18n";
import { call, fieldOf, ipcError } from "../ipc";
import { hostProblemText, tokenStoreText } from "../reasons";

type Section = { el: HTMLElement; destroy(): void };

type FormMode = { mode: "add" } | { mode: "edit"; host: HostEntry };

/** Columns of the registry table (the confirmation row spans them all). */
const COLUMNS = 8;

const SERVER_FIELD_KEYS: Record<HostField, MessageKey> = {
  name: "hosts.server.name",
  url: "hosts.server.url",
  region: "hosts.server.region",
  labels: "hosts.server.labels",
  fingerprint: "hosts.server.fingerprint",
  token: "hosts.server.token",
};

function tr(problem: Problem): string {
  return t(problem.key, problem.params);
}

/** Where tokens go, in the current language. */
function tokenStoreWords(): string {
  const store = appInfoState().info?.token_store;
  return store ? tokenStoreText(store) : t("hosts.tokenStore.unknown");
}

/** A translated sentence for any failure, and the English detail to show beneath it. */
function explain(err: unknown): { sentence: string; detail: string | null; error: IpcError | null } {
  const ipc = ipcError(err);
  if (ipc) {
    const detail = ipc.message.trim();
    return { sentence: t(errorKindKey(ipc.kind)), detail: detail === "" ? null : detail, error: ipc };
  }
  return { sentence: describeError(err), detail: null, error: null };
}

function explanation(err: unknown, lead?: string): HTMLElement[] {
  const { sentence, detail } = explain(err);
  return [
    h("span", { class: "alert-line" }, lead ? `${lead} ${sentence}` : sentence),
    detail ? h("span", { class: "alert-detail", lang: "en" }, `${t("hosts.detail")} ${detail}`) : null,
  ].filter((x): x is HTMLElement => x !== null);
}

function healthOf(name: string): HostStatus | null {
  return fleetState().snapshot?.hosts.find((host) => host.name === name) ?? null;
}

function healthContent(status: HostStatus | null): HTMLElement {
  if (!status) {
    return h("span", { class: "health health-unknown", "data-health": "none" }, h("span", { class: "dot", "aria-hidden": "true" }), t("hosts.notCollected"));
  }
  return h(
    "span",
    { class: `health ${healthClass(status.health)}`, "data-health": status.health },
    h("span", { class: "dot", "aria-hidden": "true" }),
    t(healthKey(status.health)),
  );
}

/** Why a host is not online, or null. Shown in its own row so it never widens the table. */
function healthReason(status: HostStatus | null): string | null {
  return status && status.health !== "online" && status.last_error ? hostProblemText(status.last_error) : null;
}

/** The health cell, and the row under the host that says why it is not online. */
type HealthParts = { row: HTMLTableRowElement; cell: HTMLElement; reasonRow: HTMLTableRowElement; reason: HTMLElement };

function paintHealth(parts: HealthParts, name: string): void {
  const status = healthOf(name);
  replaceChildren(parts.cell, healthContent(status));
  const reason = healthReason(status);
  parts.reasonRow.hidden = reason === null;
  parts.row.classList.toggle("has-reason", reason !== null);
  parts.reason.className = `health-reason health-reason-${status?.health ?? "unknown"}`;
  replaceChildren(parts.reason, reason === null ? null : t("fleet.lastError", { message: reason }));
}

export function hostsSection(): Section {
  let hosts: HostEntry[] | null = null;
  let loadError: unknown = null;
  let confirming: string | null = null;
  let removing: string | null = null;
  let form: HostForm | null = null;
  let fleetNamesKey = "";

  const status = h("p", { class: "hosts-status", role: "status", "data-testid": "hosts-status" });
  const errorBox = h("div", { class: "hosts-error-box" });
  const tableBox = h("div", { class: "hosts-table-box" });
  const formBox = h("div", { class: "host-form-box" });
  const addButton = h(
    "button",
    { type: "button", id: "host-add", class: "btn btn-primary", on: { click: () => openForm({ mode: "add" }, addButton) } },
    t("hosts.add"),
  );
  const viewerNotice = h("p", { class: "alert alert-info", "data-testid": "hosts-viewer-notice" }, t("hosts.viewerNotice"));
  const healthCells = new Map<string, HealthParts>();

  const el = h(
    "section",
    { class: "card", id: "settings-hosts", "data-testid": "settings-hosts", "aria-labelledby": "settings-hosts-title" },
    h("h2", { id: "settings-hosts-title" }, t("hosts.title")),
    h("p", { class: "hint section-lead" }, t("hosts.lead")),
    viewerNotice,
    errorBox,
    tableBox,
    h("div", { class: "hosts-actions" }, addButton, status),
    formBox,
  );

  function renderViewerNotice(): void {
    viewerNotice.hidden = appInfoState().info?.collecting !== false;
  }

  function announce(text: string): void {
    replaceChildren(status, text);
  }

  function showError(nodes: HTMLElement[] | null): void {
    replaceChildren(
      errorBox,
      nodes ? h("div", { class: "alert alert-error", role: "alert", "data-testid": "hosts-error" }, nodes) : null,
    );
  }

  async function reload(): Promise<void> {
    const res = await call(() => commands.listHosts());
    if (res.status === "ok") {
      hosts = res.data;
      loadError = null;
    } else {
      loadError = res.error;
    }
    // A host being edited that is gone (removed elsewhere) closes its form.
    if (form && form.mode.mode === "edit" && hosts && !hosts.some((x) => form?.mode.mode === "edit" && x.name === form.mode.host.name)) {
      closeForm(false);
    }
    renderTable();
  }

  function renderTable(): void {
    healthCells.clear();
    if (loadError !== null) {
      showError([
        ...explanation(loadError, t("hosts.loadError")),
        h("button", { type: "button", class: "btn btn-quiet", on: { click: () => void reload() } }, t("hosts.retry")),
      ]);
    } else if (removing === null) {
      showError(null);
    }
    if (hosts === null) {
      replaceChildren(tableBox, loadError === null ? h("p", { class: "loading" }, t("hosts.loading")) : null);
      return;
    }
    if (hosts.length === 0) {
      replaceChildren(tableBox, h("p", { class: "hosts-empty", "data-testid": "hosts-empty" }, t("hosts.empty")));
      return;
    }
    replaceChildren(
      tableBox,
      h(
        "div",
        { class: "table-wrap" },
        h(
          "table",
          { class: "hosts registry", "data-testid": "settings-hosts-table" },
          h("caption", { class: "visually-hidden" }, t("hosts.tableCaption")),
          h(
            "thead",
            null,
            h(
              "tr",
              null,
              h("th", { scope: "col" }, t("hosts.col.name")),
              h("th", { scope: "col" }, t("hosts.col.url")),
              h("th", { scope: "col" }, t("hosts.col.region")),
              h("th", { scope: "col" }, t("hosts.col.labels")),
              h("th", { scope: "col" }, t("hosts.col.fingerprint")),
              h("th", { scope: "col" }, t("hosts.col.token")),
              h("th", { scope: "col" }, t("hosts.col.health")),
              h("th", { scope: "col", class: "actions-col" }, h("span", { class: "visually-hidden" }, t("hosts.col.actions"))),
            ),
          ),
          h("tbody", null, hosts.map(hostRows)),
        ),
      ),
    );
  }

  /** The host's row, and under it the removal question while it is asked. */
  function hostRows(host: HostEntry): HTMLTableRowElement[] {
    const labels = formatLabels(host.labels);
    const health = h("td", { "data-col": "health" });
    const row = h(
      "tr",
      { "data-host": host.name },
      h("th", { scope: "row" }, host.name),
      h("td", { "data-col": "url", class: "url-cell" }, host.url),
      h("td", { "data-col": "region" }, host.region),
      h("td", { "data-col": "labels", class: "labels-cell" }, labels === "" ? t("common.empty") : labels),
      h(
        "td",
        { "data-col": "fingerprint", class: "mono" },
        host.fingerprint ? h("span", { title: host.fingerprint }, shortFingerprint(host.fingerprint)) : t("common.empty"),
      ),
      h("td", { "data-col": "token", "data-has-token": String(host.has_token) }, t(host.has_token ? "hosts.tokenStored" : "hosts.tokenNone")),
      health,
      h("td", { class: "row-actions" }, rowButtons(host, confirming === host.name)),
    );
    const reason = h("p");
    const reasonRow = h("tr", { class: "reason-row", "data-reason-for": host.name }, h("td", { colspan: COLUMNS }, reason));
    const parts: HealthParts = { row, cell: health, reasonRow, reason };
    healthCells.set(host.name, parts);
    paintHealth(parts, host.name);
    if (confirming !== host.name) return [row, reasonRow];
    row.classList.add("confirming");
    reasonRow.classList.add("confirming");
    return [
      row,
      reasonRow,
      h("tr", { class: "confirm-row", "data-confirm-for": host.name }, h("td", { colspan: COLUMNS }, confirmBox(host))),
    ];
  }

  function rowButtons(host: HostEntry, asking: boolean): HTMLElement {
    const edit = h(
      "button",
      {
        type: "button",
        class: "btn btn-small",
        "data-action": "edit",
        "aria-label": t("hosts.editLabel", { name: host.name }),
        disabled: asking,
        on: { click: () => openForm({ mode: "edit", host }, edit) },
      },
      t("hosts.edit"),
    );
    const remove = h(
      "button",
      {
        type: "button",
        class: "btn btn-small btn-danger-quiet",
        "data-action": "remove",
        "aria-label": t("hosts.removeLabel", { name: host.name }),
        "aria-expanded": String(asking),
        disabled: asking,
        on: {
          click: () => {
            confirming = host.name;
            renderTable();
            rowButton(host.name, "cancel-remove")?.focus();
          },
        },
      },
      t("hosts.remove"),
    );
    return h("span", { class: "btn-row" }, edit, remove);
  }

  function confirmBox(host: HostEntry): HTMLElement {
    const busy = removing === host.name;
    const cancel = (): void => {
      confirming = null;
      renderTable();
      rowButton(host.name, "remove")?.focus();
    };
    return h(
      "div",
      {
        class: "confirm",
        role: "group",
        "aria-label": t("hosts.removeLabel", { name: host.name }),
        on: {
          keydown: (ev) => {
            if (ev.key === "Escape" && !busy) {
              ev.preventDefault();
              ev.stopPropagation();
              cancel();
            }
          },
        },
      },
      h("span", { class: "confirm-text" }, t("hosts.confirmRemove", { name: host.name })),
      h(
        "span",
        { class: "btn-row" },
        h(
          "button",
          { type: "button", class: "btn btn-small btn-danger", "data-action": "confirm-remove", disabled: busy, on: { click: () => void removeHost(host.name) } },
          busy ? t("hosts.removing") : t("hosts.confirmRemoveYes"),
        ),
        h("button", { type: "button", class: "btn btn-small", "data-action": "cancel-remove", disabled: busy, on: { click: cancel } }, t("hosts.confirmRemoveNo")),
      ),
    );
  }

  /** A button of the host's row or of its confirmation row. */
  function rowButton(name: string, action: string): HTMLButtonElement | null {
    for (const row of tableBox.querySelectorAll<HTMLTableRowElement>("tr[data-host], tr[data-confirm-for]")) {
      if (row.dataset.host !== name && row.dataset.confirmFor !== name) continue;
      const button = row.querySelector<HTMLButtonElement>(`button[data-action="${action}"]`);
      if (button) return button;
    }
    return null;
  }

  async function removeHost(name: string): Promise<void> {
    removing = name;
    renderTable();
    const res = await call(() => commands.removeHost(name));
    removing = null;
    confirming = null;
    if (res.status === "ok") {
      showError(null);
      announce(t("hosts.removed", { name }));
      if (form?.mode.mode === "edit" && form.mode.host.name === name) closeForm(false);
      await reload();
      addButton.focus();
    } else {
      showError(explanation(res.error, t("hosts.removeError", { name })));
      if (ipcError(res.error)?.kind === "not_found") await reload();
      else renderTable();
      rowButton(name, "remove")?.focus();
    }
  }

  function openForm(mode: FormMode, opener: HTMLElement): void {
    closeForm(false);
    form = new HostForm(mode, {
      onDone: async (saved) => {
        const name = saved.name;
        closeForm(false);
        announce(t(mode.mode === "add" ? "hosts.added" : "hosts.saved", { name }));
        await reload();
        (rowButton(name, "edit") ?? addButton).focus();
      },
      onCancel: () => {
        closeForm(false);
        // Back to where the operator came from; the row may have been re-rendered.
        const target = mode.mode === "edit" ? rowButton(mode.host.name, "edit") : null;
        (target ?? (opener.isConnected ? opener : addButton)).focus();
      },
      onNotFound: () => void reload(),
    });
    addButton.hidden = true;
    replaceChildren(formBox, form.el);
    form.focusFirst();
  }

  function closeForm(focus: boolean): void {
    form?.dispose();
    form = null;
    replaceChildren(formBox);
    addButton.hidden = false;
    if (focus) addButton.focus();
  }

  function onFleet(): void {
    for (const [name, parts] of healthCells) paintHealth(parts, name);
    // Hosts registered elsewhere (the CLI, another window) show up without a reload button.
    const names = (fleetState().snapshot?.hosts ?? []).map((x) => x.name).sort().join("\n");
    if (names !== fleetNamesKey) {
      const first = fleetNamesKey === "";
      fleetNamesKey = names;
      if (!first && removing === null) void reload();
    }
  }

  fleetNamesKey = (fleetState().snapshot?.hosts ?? []).map((x) => x.name).sort().join("\n");
  renderViewerNotice();
  renderTable();
  void reload();
  const offs = [
    onFleetChange(onFleet),
    onAppInfo(() => {
      renderViewerNotice();
      form?.renderTokenHint();
    }),
  ];

  return {
    el,
    destroy() {
      for (const off of offs) off();
      form?.dispose();
    },
  };
}

type FormCallbacks = {
  onDone(saved: HostEntry): Promise<void>;
  onCancel(): void;
  onNotFound(): void;
};

type FieldParts = { input: HTMLInputElement; error: HTMLElement; hintId: string };

/** The Add/Edit form. Holds the only reference to the typed token, in its input. */
class HostForm {
  readonly el: HTMLFormElement;
  private readonly fields = new Map<HostField, FieldParts>();
  private readonly testResult: HTMLElement;
  private readonly formError: HTMLElement;
  private readonly testButton: HTMLButtonElement;
  private readonly saveButton: HTMLButtonElement;
  private readonly cancelButton: HTMLButtonElement;
  private readonly tokenHint: HTMLElement;
  private readonly removeToken: HTMLInputElement | null;
  private busy = false;
  private disposed = false;

  constructor(
    readonly mode: FormMode,
    private readonly callbacks: FormCallbacks,
  ) {
    const editing = mode.mode === "edit" ? mode.host : null;
    this.testResult = h("div", { class: "test-result", "data-testid": "host-test-result" });
    this.formError = h("div", { class: "form-error-box" });
    this.tokenHint = h("p", { class: "field-hint", id: "host-token-hint" });
    this.removeToken = editing?.has_token
      ? h("input", { type: "checkbox", id: "host-token-remove", on: { change: () => this.syncTokenRemove() } })
      : null;

    const field = (name: HostField, opts: { label: MessageKey; hint: HTMLElement | string; optional?: boolean; value?: string; attrs?: Record<string, string | boolean> }): HTMLElement => {
      const id = `host-${name}`;
      const hintId = `${id}-hint`;
      const input = h("input", {
        id,
        name,
        type: "text",
        value: opts.value ?? "",
        autocomplete: "off",
        spellcheck: "false",
        autocapitalize: "off",
        "aria-describedby": hintId,
        ...opts.attrs,
      });
      const error = h("div", { id: `${id}-error`, class: "field-error-box", "data-field": name });
      this.fields.set(name, { input, error, hintId });
      return h(
        "div",
        { class: `field field-${name}` },
        h("label", { for: id }, t(opts.label), opts.optional ? h("span", { class: "optional" }, t("hosts.optional")) : null),
        input,
        typeof opts.hint === "string" ? h("p", { class: "field-hint", id: hintId }, opts.hint) : opts.hint,
        error,
      );
    };

    const title = editing ? t("hosts.form.editTitle", { name: editing.name }) : t("hosts.form.addTitle");
    this.testButton = h("button", { type: "button", id: "host-test", class: "btn", on: { click: () => void this.test() } }, t("hosts.test"));
    this.saveButton = h("button", { type: "submit", id: "host-save", class: "btn btn-primary" }, t(editing ? "hosts.save.edit" : "hosts.save.add"));
    this.cancelButton = h("button", { type: "button", id: "host-cancel", class: "btn btn-quiet", on: { click: () => this.cancel() } }, t("hosts.cancel"));

    this.el = h(
      "form",
      {
        id: "host-form",
        class: "host-form",
        "data-mode": mode.mode,
        novalidate: true,
        "aria-labelledby": "host-form-title",
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
      h("h3", { id: "host-form-title" }, title),
      h("p", { class: "hint form-keys" }, t("hosts.form.keys")),
      h(
        "div",
        { class: "form-grid" },
        field("name", {
          label: "hosts.field.name",
          hint: t(editing ? "hosts.hint.nameFixed" : "hosts.hint.name"),
          value: editing?.name ?? "",
          attrs: editing ? { readonly: true, "aria-readonly": "true" } : { required: true },
        }),
        field("url", {
          label: "hosts.field.url",
          hint: t("hosts.hint.url"),
          value: editing?.url ?? "",
          attrs: { inputmode: "url", required: true },
        }),
        field("region", { label: "hosts.field.region", hint: t("hosts.hint.region"), value: editing?.region ?? "", attrs: { required: true } }),
        field("labels", {
          label: "hosts.field.labels",
          hint: t("hosts.hint.labels"),
          optional: true,
          value: editing ? formatLabels(editing.labels) : "",
        }),
        field("fingerprint", {
          label: "hosts.field.fingerprint",
          hint: t("hosts.hint.fingerprint"),
          optional: true,
          value: editing?.fingerprint ?? "",
          attrs: { class: "mono" },
        }),
        field("token", {
          label: "hosts.field.token",
          hint: h(
            "div",
            { class: "token-extra" },
            this.tokenHint,
            this.removeToken ? h("label", { class: "check", for: "host-token-remove" }, this.removeToken, t("hosts.field.tokenRemove")) : null,
          ),
          optional: true,
          // autocomplete=new-password: browsers neither fill it nor offer to remember it.
          attrs: { type: "password", autocomplete: "new-password" },
        }),
      ),
      this.testResult,
      this.formError,
      h("div", { class: "form-actions" }, this.saveButton, this.testButton, this.cancelButton),
    );
    this.renderTokenHint();
    for (const [name, parts] of this.fields) {
      // Editing a field clears the error shown for it.
      parts.input.addEventListener("input", () => this.setFieldError(name, null));
    }
  }

  renderTokenHint(): void {
    const editing = this.mode.mode === "edit" ? this.mode.host : null;
    const store = tokenStoreWords();
    replaceChildren(this.tokenHint, t(editing?.has_token ? "hosts.hint.tokenStored" : "hosts.hint.token", { store }));
  }

  focusFirst(): void {
    const first = this.mode.mode === "edit" ? "url" : "name";
    this.fields.get(first)?.input.focus();
  }

  dispose(): void {
    this.disposed = true;
    this.clearToken();
  }

  private input(name: HostField): HTMLInputElement {
    const parts = this.fields.get(name);
    if (!parts) throw new Error(`no field ${name}`);
    return parts.input;
  }

  private clearToken(): void {
    const token = this.fields.get("token")?.input;
    if (token) token.value = "";
  }

  private syncTokenRemove(): void {
    const token = this.input("token");
    const removing = this.removeToken?.checked === true;
    token.disabled = removing;
    if (removing) token.value = "";
  }

  private cancel(): void {
    if (this.busy) return;
    this.clearToken();
    this.callbacks.onCancel();
  }

  private setFieldError(name: HostField, content: { sentence: string; detail: string | null; source: "client" | "server" } | null): void {
    const parts = this.fields.get(name);
    if (!parts) return;
    if (!content) {
      if (parts.error.firstChild) replaceChildren(parts.error);
      parts.input.removeAttribute("aria-invalid");
      parts.input.setAttribute("aria-describedby", parts.hintId);
      return;
    }
    replaceChildren(
      parts.error,
      h(
        "p",
        { class: "field-error", role: "alert", "data-source": content.source },
        h("span", { class: "alert-line" }, content.sentence),
        content.detail ? h("span", { class: "alert-detail", lang: "en" }, `${t("hosts.detail")} ${content.detail}`) : null,
      ),
    );
    parts.input.setAttribute("aria-invalid", "true");
    parts.input.setAttribute("aria-describedby", `${parts.error.id} ${parts.hintId}`);
  }

  private clearErrors(): void {
    for (const name of HOST_FIELDS) this.setFieldError(name, null);
    replaceChildren(this.formError);
  }

  /** Client checks; on failure marks the fields and focuses the first. */
  private collect(): HostInput | null {
    const checked = checkHostForm({
      name: this.input("name").value,
      url: this.input("url").value,
      region: this.input("region").value,
      labels: this.input("labels").value,
      fingerprint: this.input("fingerprint").value,
    });
    if (!checked.ok) {
      let first: HostField | null = null;
      for (const name of HOST_FIELDS) {
        const problem = checked.problems[name];
        if (!problem) continue;
        this.setFieldError(name, { sentence: tr(problem), detail: null, source: "client" });
        first ??= name;
      }
      if (first) this.input(first).focus();
      return null;
    }
    return { ...checked.input, token: tokenToSend(this.input("token").value, this.removeToken?.checked === true) };
  }

  /** Shows a server error at the field it names (or the likeliest one), else above the buttons. */
  private showServerError(err: unknown, where: HTMLElement): void {
    const explained = explain(err);
    const kind = explained.error?.kind ?? null;
    const named = kind === "invalid_input" ? fieldOf(explained.error, HOST_FIELDS) : null;
    if (named) {
      this.setFieldError(named, {
        sentence: t(SERVER_FIELD_KEYS[named]),
        detail: explained.detail,
        source: "server",
      });
      this.input(named).focus();
      return;
    }
    replaceChildren(
      where,
      h(
        "div",
        { class: "alert alert-error", role: "alert", "data-testid": where === this.formError ? "host-form-error" : null, "data-kind": kind ?? "" },
        explanation(err),
      ),
    );
    if (where === this.testResult) this.testResult.dataset.state = "error";
    const likely = kind ? fieldOfKind(kind) : null;
    if (likely) this.input(likely).setAttribute("aria-invalid", "true");
    if (kind === "not_found") this.callbacks.onNotFound();
  }

  private setBusy(busy: boolean, which: "test" | "save"): void {
    this.busy = busy;
    this.el.setAttribute("aria-busy", String(busy));
    this.testButton.disabled = busy;
    this.saveButton.disabled = busy;
    this.cancelButton.disabled = busy;
    if (which === "test") replaceChildren(this.testButton, t(busy ? "hosts.testing" : "hosts.test"));
    else replaceChildren(this.saveButton, t(busy ? "hosts.saving" : this.mode.mode === "edit" ? "hosts.save.edit" : "hosts.save.add"));
  }

  private async test(): Promise<void> {
    if (this.busy) return;
    this.clearErrors();
    replaceChildren(this.testResult);
    const input = this.collect();
    if (!input) {
      delete this.testResult.dataset.state;
      return;
    }
    this.testResult.dataset.state = "pending";
    this.setBusy(true, "test");
    const res = await call(() => commands.testHost(input));
    if (this.disposed) return;
    this.setBusy(false, "test");
    if (res.status === "ok") {
      this.testResult.dataset.state = "ok";
      replaceChildren(
        this.testResult,
        h(
          "p",
          { class: "alert alert-ok", role: "status" },
          t("hosts.testOk", { host: res.data.host, version: res.data.agent_version, backend: res.data.backend }),
        ),
      );
    } else {
      delete this.testResult.dataset.state;
      this.showServerError(res.error, this.testResult);
      if (this.testResult.dataset.state !== "error") this.testResult.dataset.state = "error";
    }
    this.testButton.focus();
  }

  private async save(): Promise<void> {
    if (this.busy) return;
    this.clearErrors();
    const input = this.collect();
    if (!input) return;
    this.setBusy(true, "save");
    const res = await call(() =>
      this.mode.mode === "edit" ? commands.updateHost(this.mode.host.name, input) : commands.addHost(input),
    );
    // The token has been handed over (or refused): it leaves the page either way.
    input.token = null;
    if (this.disposed) return;
    this.setBusy(false, "save");
    if (res.status === "ok") {
      this.clearToken();
      await this.callbacks.onDone(res.data);
    } else {
      this.showServerError(res.error, this.formError);
      if (!this.el.contains(document.activeElement)) this.saveButton.focus();
    }
  }
}
