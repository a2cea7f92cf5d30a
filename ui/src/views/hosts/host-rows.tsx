// One registered host in the Settings → Hosts table: its row (with live health), the row
// under it that says why it is not online, and, while it is asked, the inline removal
// question. The rows stay the same elements while the fleet ticks: health updates in place.
//
// Stable selectors (see views/hosts.tsx for the whole section's):
//   tr[data-host="NAME"]                 cells td[data-col="url|region|labels|fingerprint|token|health"]
//     [data-col="health"] [data-health]  online | degraded | offline | unknown | none
//     button[data-action="edit"|"remove"]  (a draining host's "remove" forgets it: data-forget)
//   tr[data-reason-for="NAME"]           why it is not online (hidden while online)
//   tr[data-confirm-for="NAME"] .confirm button[data-action="confirm-remove"|"cancel-remove"]

import { Show, type JSX } from "solid-js";
import type { HostEntry, HostStatus } from "../../bindings";
import { healthClass, healthKey } from "../../format";
import { formatLabels, shortFingerprint } from "../../hosts";
import { t } from "../../i18n";
import { hostProblemText } from "../../reasons";

/** Columns of the registry table (the reason and confirmation rows span them all). */
export const COLUMNS = 8;

/** Why a host is not online, or null. Shown in its own row so it never widens the table. */
function healthReason(status: HostStatus | null): string | null {
  return status && status.health !== "online" && status.last_error ? hostProblemText(status.last_error) : null;
}

function Health(props: { status: HostStatus | null }): JSX.Element {
  // One span whose class, data-health and words follow the status: never replaced.
  return (
    <span
      class={`health ${props.status ? healthClass(props.status.health) : "health-unknown"}`}
      data-health={props.status?.health ?? "none"}
    >
      <span class="dot" aria-hidden="true" />
      {props.status ? t(healthKey(props.status.health)) : t("hosts.notCollected")}
    </span>
  );
}

function ConfirmRemove(props: {
  name: string;
  /** The host drains: the question is whether to forget it (written off, never released). */
  forget: boolean;
  busy: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}): JSX.Element {
  return (
    <tr class="confirm-row" data-confirm-for={props.name}>
      <td colspan={COLUMNS}>
        <div
          class="confirm"
          role="group"
          aria-label={t(props.forget ? "hosts.forgetLabel" : "hosts.removeLabel", { name: props.name })}
          onKeyDown={(ev) => {
            if (ev.key === "Escape" && !props.busy) {
              ev.preventDefault();
              ev.stopPropagation();
              props.onCancel();
            }
          }}
        >
          <span class="confirm-text">{t(props.forget ? "hosts.confirmForget" : "hosts.confirmRemove", { name: props.name })}</span>
          <span class="btn-row">
            <button
              type="button"
              class="btn btn-small btn-danger"
              data-action="confirm-remove"
              disabled={props.busy}
              onClick={() => props.onConfirm()}
            >
              {props.busy ? t("hosts.removing") : t(props.forget ? "hosts.confirmForgetYes" : "hosts.confirmRemoveYes")}
            </button>
            <button
              type="button"
              class="btn btn-small"
              data-action="cancel-remove"
              disabled={props.busy}
              onClick={() => props.onCancel()}
            >
              {t("hosts.confirmRemoveNo")}
            </button>
          </span>
        </div>
      </td>
    </tr>
  );
}

export function HostRows(props: {
  host: HostEntry;
  status: HostStatus | null;
  /** The removal question is asked for this host. */
  asking: boolean;
  /** Its removal is under way. */
  removing: boolean;
  onEdit: (opener: HTMLElement) => void;
  onAskRemove: () => void;
  onConfirmRemove: () => void;
  onCancelRemove: () => void;
}): JSX.Element {
  const reason = () => healthReason(props.status);
  const labels = () => formatLabels(props.host.labels);
  return (
    <>
      <tr data-host={props.host.name} classList={{ "has-reason": reason() !== null, confirming: props.asking }}>
        <th scope="row">{props.host.name}</th>
        <td data-col="url" class="url-cell">
          {props.host.url}
        </td>
        <td data-col="region">{props.host.region}</td>
        <td data-col="labels" class="labels-cell">
          {labels() === "" ? t("common.empty") : labels()}
        </td>
        <td data-col="fingerprint" class="mono">
          <Show when={props.host.fingerprint} fallback={t("common.empty")}>
            {(fingerprint) => <span title={fingerprint()}>{shortFingerprint(fingerprint())}</span>}
          </Show>
        </td>
        <td data-col="token" data-has-token={String(props.host.has_token)}>
          {t(props.host.has_token ? "hosts.tokenStored" : "hosts.tokenNone")}
        </td>
        <td data-col="health">
          <Health status={props.status} />
          <Show when={props.host.draining}>
            <span class="badge badge-warn draining" data-draining="true">
              {t("hosts.draining")}
            </span>
          </Show>
        </td>
        <td class="row-actions">
          <span class="btn-row">
            <button
              type="button"
              class="btn btn-small"
              data-action="edit"
              aria-label={t("hosts.editLabel", { name: props.host.name })}
              disabled={props.asking}
              onClick={(ev) => props.onEdit(ev.currentTarget)}
            >
              {t("hosts.edit")}
            </button>
            <button
              type="button"
              class="btn btn-small btn-danger-quiet"
              data-action="remove"
              data-forget={props.host.draining ? "true" : undefined}
              aria-label={t(props.host.draining ? "hosts.forgetLabel" : "hosts.removeLabel", { name: props.host.name })}
              aria-expanded={props.asking}
              disabled={props.asking}
              onClick={() => props.onAskRemove()}
            >
              {t(props.host.draining ? "hosts.forget" : "hosts.remove")}
            </button>
          </span>
        </td>
      </tr>
      <tr
        class="reason-row"
        classList={{ confirming: props.asking }}
        data-reason-for={props.host.name}
        hidden={reason() === null}
      >
        <td colspan={COLUMNS}>
          <p class={`health-reason health-reason-${props.status?.health ?? "unknown"}`}>
            {reason() === null ? "" : t("fleet.lastError", { message: reason() ?? "" })}
          </p>
        </td>
      </tr>
      <Show when={props.asking}>
        <ConfirmRemove
          name={props.host.name}
          forget={props.host.draining === true}
          busy={props.removing}
          onConfirm={props.onConfirmRemove}
          onCancel={props.onCancelRemove}
        />
      </Show>
    </>
  );
}
