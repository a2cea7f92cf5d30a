// Settings → Hosts: the host registry. A table of registered hosts with live health from
// the fleet store, Edit and Remove (confirmed inline), and one Add/Edit form
// (views/hosts/host-form.tsx) with client-side checks, "Test connection", Save and Cancel.
//
// On Solid: the registry and the fleet's health are stores reconciled by host name, so a
// fleet tick or a reload updates the rows in place; the button under the pointer or the
// focus, and an open form, are never replaced by one.
//
// Stable selectors (end-to-end tests rely on these):
//   [data-testid="settings-hosts"]           the section
//   [data-testid="settings-hosts-table"]     the table; one tbody row per host:
//     tr[data-host="NAME"]                     cells td[data-col="url|region|labels|fingerprint|token|health"]
//     [data-col="health"] [data-health]        online | degraded | offline | unknown | none
//     tr[data-reason-for="NAME"]               why it is not online (hidden while online)
//     button[data-action="edit"|"remove"]      row actions
//     tr[data-confirm-for="NAME"]              the inline removal question, right under the row:
//       .confirm button[data-action="confirm-remove"|"cancel-remove"]
//   [data-testid="hosts-empty"]              shown when no host is registered
//   [data-testid="hosts-status"]             role=status: "Added …", "Removed …"
//   [data-testid="hosts-error"]              role=alert: loading or removing failed; data-kind
//   [data-testid="token-store"]              (About, in settings.tsx) where tokens go
//   #host-add                                the "Add host" button
//   #host-form …                             the form: see views/hosts/host-form.tsx

import { denial } from "../access";
import { batch, createSignal, For, onCleanup, Show, type JSX } from "solid-js";
import { createStore, reconcile, unwrap } from "solid-js/store";
import { appInfoState, onAppInfo } from "../app-info";
import { commands, type HostEntry, type HostStatus } from "../bindings";
import { fleetState, onFleetChange } from "../fleet-store";
import { t } from "../i18n";
import { call, ipcError } from "../ipc";
import { tokenStoreText } from "../reasons";
import { ErrorAlert } from "./error-alert";
import { HostForm, hostSentence, type FormMode } from "./hosts/host-form";
import { HostRows } from "./hosts/host-rows";
import { leaveForms } from "../unsaved";

/** An open Add/Edit form, and the button that opened it (focus goes back there). */
type OpenForm = { mode: FormMode; opener: HTMLElement };

/**
 * The fleet's host statuses, copied: the store reconciles into what it holds, and the
 * snapshot is shared with every other view.
 */
function fleetStatuses(): HostStatus[] {
  return structuredClone(fleetState().snapshot?.hosts ?? []);
}

/** The names the fleet collects from, in one string to compare. */
function fleetNames(): string {
  return (fleetState().snapshot?.hosts ?? [])
    .map((x) => x.name)
    .sort()
    .join("\n");
}

export function HostsSection(): JSX.Element {
  const [registry, setRegistry] = createStore<{ hosts: HostEntry[] | null }>({ hosts: null });
  const [fleet, setFleet] = createStore<{ statuses: HostStatus[] }>({ statuses: fleetStatuses() });
  // appInfoState() is one object, changed in place: every notice is news.
  const [info, setInfo] = createSignal(appInfoState(), { equals: false });
  const [loadError, setLoadError] = createSignal<unknown>(null);
  const [removeError, setRemoveError] = createSignal<{ name: string; error: unknown } | null>(null);
  const [confirming, setConfirming] = createSignal<string | null>(null);
  const [removing, setRemoving] = createSignal<string | null>(null);
  /** The open form; a new object for each opening, so another host gets a fresh form. */
  const [form, setForm] = createSignal<OpenForm | null>(null);
  const [status, setStatus] = createSignal("");
  let section!: HTMLElement;
  let addButton!: HTMLButtonElement;
  let namesKey = fleetNames();

  const editedName = (): string | null => {
    const open = form();
    return open?.mode.mode === "edit" ? open.mode.host.name : null;
  };

  const statusOf = (name: string): HostStatus | null => fleet.statuses.find((s) => s.name === name) ?? null;

  /** Where tokens go, in the current language. */
  const tokenStoreWords = (): string => {
    const store = info().info?.token_store;
    return store ? tokenStoreText(store) : t("hosts.tokenStore.unknown");
  };

  /** A button of the host's row or of its confirmation row. */
  function rowButton(name: string, action: string): HTMLButtonElement | null {
    for (const row of section.querySelectorAll<HTMLTableRowElement>("tr[data-host], tr[data-confirm-for]")) {
      if (row.dataset.host !== name && row.dataset.confirmFor !== name) continue;
      const button = row.querySelector<HTMLButtonElement>(`button[data-action="${action}"]`);
      if (button) return button;
    }
    return null;
  }

  async function reload(): Promise<void> {
    const res = await call(() => commands.listHosts());
    if (res.status === "ok") {
      batch(() => {
        setRegistry("hosts", reconcile(res.data, { key: "name" }));
        setLoadError(null);
      });
    } else {
      setLoadError(res.error);
    }
    // A host being edited that is gone (removed elsewhere) closes its form.
    const edited = editedName();
    if (edited !== null && registry.hosts && !registry.hosts.some((x) => x.name === edited)) closeForm();
  }

  /** Another form replaces the open one only once its changes may go (unsaved.ts). */
  function openForm(mode: FormMode, opener: HTMLElement): void {
    leaveForms(() => setForm({ mode, opener }));
  }

  function closeForm(): void {
    setForm(null);
  }

  async function formDone(open: OpenForm, saved: HostEntry): Promise<void> {
    closeForm();
    setStatus(t(open.mode.mode === "add" ? "hosts.added" : "hosts.saved", { name: saved.name }));
    await reload();
    (rowButton(saved.name, "edit") ?? addButton).focus();
  }

  function formCancelled(open: OpenForm): void {
    closeForm();
    // Back to where the operator came from.
    const target = open.mode.mode === "edit" ? rowButton(open.mode.host.name, "edit") : null;
    (target ?? (open.opener.isConnected ? open.opener : addButton)).focus();
  }

  function askRemove(name: string): void {
    setConfirming(name);
    rowButton(name, "cancel-remove")?.focus();
  }

  function cancelRemove(name: string): void {
    setConfirming(null);
    rowButton(name, "remove")?.focus();
  }

  /**
   * Removes a host; with `release`, where pools hold GPUs there, they are released first
   * (each pool takes its GPUs elsewhere) and the enforcer removes the host after.
   */
  function removeHost(name: string, release = false): Promise<void> {
    return takeAway(name, async () => {
      const res = await call(() => commands.removeHost(name, release));
      if (res.status !== "ok") return res;
      return res.data.kind === "draining"
        ? { status: "ok", data: { gone: false, words: t("hosts.drainingStarted", { name }) } }
        : { status: "ok", data: { gone: true, words: t("hosts.removed", { name }) } };
    });
  }

  /**
   * Forgets a draining host that went silent and was written off (a drain it can never
   * finish); the shell refuses, naming the host, while it is not written off.
   */
  function forgetHost(name: string): Promise<void> {
    return takeAway(name, async () => {
      const res = await call(() => commands.forgetHost(name));
      if (res.status !== "ok") return res;
      return { status: "ok", data: { gone: true, words: t(res.data === 1 ? "hosts.forgotten.one" : "hosts.forgotten", { name, leases: res.data }) } };
    });
  }

  /**
   * One removal or forgetting, as the row asked it: the call, then what it said (the host
   * gone, or draining), or the refusal beside the table.
   */
  async function takeAway(
    name: string,
    run: () => Promise<{ status: "ok"; data: { gone: boolean; words: string } } | { status: "error"; error: unknown }>,
  ): Promise<void> {
    batch(() => {
      setRemoving(name);
      setRemoveError(null);
    });
    const res = await run();
    batch(() => {
      setRemoving(null);
      setConfirming(null);
    });
    if (res.status === "ok") {
      setStatus(res.data.words);
      if (res.data.gone && editedName() === name) closeForm();
      await reload();
      (res.data.gone ? addButton : rowButton(name, "edit"))?.focus();
    } else {
      setRemoveError({ name, error: res.error });
      if (ipcError(res.error)?.kind === "not_found") await reload();
      rowButton(name, "remove")?.focus();
    }
  }

  function onFleet(): void {
    setFleet("statuses", reconcile(fleetStatuses(), { key: "name" }));
    // Hosts registered elsewhere (the CLI, another window) show up without a reload button.
    const names = fleetNames();
    if (names !== namesKey) {
      const first = namesKey === "";
      namesKey = names;
      if (!first && removing() === null) void reload();
    }
  }

  void reload();
  const offs = [onFleetChange(onFleet), onAppInfo(() => setInfo(appInfoState()))];
  onCleanup(() => {
    for (const off of offs) off();
  });

  return (
    <section
      ref={section}
      class="card"
      id="settings-hosts"
      data-testid="settings-hosts"
      aria-labelledby="settings-hosts-title"
    >
      <h2 id="settings-hosts-title">{t("hosts.title")}</h2>
      <p class="hint section-lead">{t("hosts.lead")}</p>
      <p class="alert alert-info" data-testid="hosts-viewer-notice" hidden={info().info?.collecting !== false}>
        {t("hosts.viewerNotice")}
      </p>
      <div class="hosts-error-box">
        <Show
          when={loadError() !== null}
          fallback={
            <Show when={removeError()} keyed>
              {(failed) => (
                <ErrorAlert
                  lead={t("hosts.removeError", { name: failed.name })}
                  error={failed.error}
                  testid="hosts-error"
                  sentenceFor={hostSentence}
                >
                  <Show when={ipcError(failed.error)?.kind === "host_holds_gpus"}>
                    <span class="discard-actions">
                      <button
                        type="button"
                        class="btn btn-small btn-danger"
                        data-action="release-and-remove"
                        disabled={removing() !== null}
                        onClick={() => void removeHost(failed.name, true)}
                      >
                        {t("hosts.releaseAndRemove")}
                      </button>
                    </span>
                  </Show>
                </ErrorAlert>
              )}
            </Show>
          }
        >
          <ErrorAlert lead={t("hosts.loadError")} error={loadError()} testid="hosts-error" sentenceFor={hostSentence}>
            <button type="button" class="btn btn-quiet" onClick={() => void reload()}>
              {t("hosts.retry")}
            </button>
          </ErrorAlert>
        </Show>
      </div>
      <div class="hosts-table-box">
        <Show
          when={registry.hosts}
          fallback={
            <Show when={loadError() === null}>
              <p class="loading">{t("hosts.loading")}</p>
            </Show>
          }
        >
          {(hosts) => (
            <Show
              when={hosts().length > 0}
              fallback={
                <p class="hosts-empty" data-testid="hosts-empty">
                  {t("hosts.empty")}
                </p>
              }
            >
              <div class="table-wrap">
                <table class="hosts registry" data-testid="settings-hosts-table">
                  <caption class="visually-hidden">{t("hosts.tableCaption")}</caption>
                  <thead>
                    <tr>
                      <th scope="col">{t("hosts.col.name")}</th>
                      <th scope="col">{t("hosts.col.url")}</th>
                      <th scope="col">{t("hosts.col.region")}</th>
                      <th scope="col">{t("hosts.col.labels")}</th>
                      <th scope="col">{t("hosts.col.fingerprint")}</th>
                      <th scope="col">{t("hosts.col.token")}</th>
                      <th scope="col">{t("hosts.col.health")}</th>
                      <th scope="col" class="actions-col">
                        <span class="visually-hidden">{t("hosts.col.actions")}</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    <For each={hosts()}>
                      {(host) => (
                        <HostRows
                          host={host}
                          status={statusOf(host.name)}
                          asking={confirming() === host.name}
                          removing={removing() === host.name}
                          // A copy: the form keeps what it opened with while the registry reloads.
                          onEdit={(opener) => openForm({ mode: "edit", host: structuredClone(unwrap(host)) }, opener)}
                          onAskRemove={() => askRemove(host.name)}
                          onConfirmRemove={() => void (host.draining ? forgetHost(host.name) : removeHost(host.name))}
                          onCancelRemove={() => cancelRemove(host.name)}
                        />
                      )}
                    </For>
                  </tbody>
                </table>
              </div>
            </Show>
          )}
        </Show>
      </div>
      <div class="hosts-actions">
        <button
          ref={addButton}
          type="button"
          id="host-add"
          class="btn btn-primary"
          hidden={form() !== null}
          disabled={denial("hosts") !== null}
          title={denial("hosts") ?? undefined}
          onClick={(ev) => openForm({ mode: "add" }, ev.currentTarget)}
        >
          {t("hosts.add")}
        </button>
        <Show when={denial("hosts")}>
          {(why) => (
            <p class="hint" data-testid="role-denied" data-action="hosts">
              {why()}
            </p>
          )}
        </Show>
        <p class="hosts-status" role="status" data-testid="hosts-status">
          {status()}
        </p>
      </div>
      <div class="host-form-box">
        <Show when={form()} keyed>
          {(open) => (
            <HostForm
              mode={open.mode}
              tokenStore={tokenStoreWords()}
              noKeychain={info().info?.token_store.kind === "no_keychain"}
              onDone={(saved) => void formDone(open, saved)}
              onCancel={() => formCancelled(open)}
              onNotFound={() => void reload()}
            />
          )}
        </Show>
      </div>
    </section>
  );
}
