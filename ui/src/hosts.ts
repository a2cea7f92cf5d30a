// Pure helpers for Settings → Hosts: labels as text, the token to send, and words for IPC
// errors. The form's checks are the registry's own (the shell's `check_host`), never a
// copy here. No DOM, so they are unit-tested in node.

import type { FieldProblem, IpcErrorKind } from "./bindings";
import type { MessageKey } from "./i18n";

/** The form's fields, named as the server names them in `invalid_input` messages. */
export type HostField = "name" | "url" | "region" | "labels" | "fingerprint" | "token";
export const HOST_FIELDS: readonly HostField[] = ["name", "url", "region", "labels", "fingerprint", "token"];

export type Labels = Record<string, string>;

/** Labels as the form's text, keys sorted (the registry reads it back): `{team: "ml", gpu: "a100"}` -> `"gpu=a100, team=ml"`. */
export function formatLabels(labels: Readonly<Partial<Record<string, string>>>): string {
  return Object.keys(labels)
    .sort()
    .flatMap((key) => {
      const value = labels[key];
      return value === undefined ? [] : [`${key}=${value}`];
    })
    .join(", ");
}

/** `AB:CD:EF:…:12:34` (32 bytes) -> `AB:CD:EF…12:34`; short or odd input is returned as is. */
export function shortFingerprint(fingerprint: string): string {
  const parts = fingerprint.trim().split(":");
  if (parts.length <= 6) return fingerprint.trim();
  return `${parts.slice(0, 3).join(":")}…${parts.slice(-2).join(":")}`;
}

/**
 * The token to send. Adding: empty means none. Editing: empty keeps the stored one
 * (`null`), unless the operator asked to remove it (`""`).
 */
export function tokenToSend(typed: string, removeStored: boolean): string | null {
  const token = typed.trim();
  if (token !== "") return token;
  return removeStored ? "" : null;
}

const ERROR_KINDS: Readonly<Record<IpcErrorKind, MessageKey>> = {
  bad_url: "hosts.error.bad_url",
  dns: "hosts.error.dns",
  refused: "hosts.error.refused",
  timeout: "hosts.error.timeout",
  tls: "hosts.error.tls",
  connect: "hosts.error.connect",
  unauthorized: "hosts.error.unauthorized",
  forbidden: "hosts.error.forbidden",
  status: "hosts.error.status",
  decode: "hosts.error.decode",
  incompatible: "hosts.error.incompatible",
  invalid_input: "hosts.error.invalid_input",
  invalid_catalog: "hosts.error.invalid_catalog",
  io: "hosts.error.io",
  refused_request: "hosts.error.refused_request",
  token_store: "hosts.error.token_store",
  not_found: "hosts.error.not_found",
  host_holds_gpus: "hosts.error.host_holds_gpus",
  unacknowledged_warnings: "hosts.error.unacknowledged_warnings",
  conflict: "error.kind.conflict",
  metrics_unavailable: "error.kind.metrics_unavailable",
  role_required: "error.kind.role_required",
  internal: "hosts.error.internal",
};

/** The translated, actionable sentence for an IpcError kind. */
export function errorKindKey(kind: IpcErrorKind): MessageKey {
  return ERROR_KINDS[kind];
}

/** The field each connection failure is most likely about (for aria-invalid and focus). */
export function fieldOfKind(kind: IpcErrorKind): HostField | null {
  switch (kind) {
    case "bad_url":
    case "dns":
    case "refused":
    case "connect":
    case "decode":
      return "url";
    case "tls":
      return "fingerprint";
    case "unauthorized":
    case "forbidden":
      return "token";
    default:
      return null;
  }
}

/** The check's problems by the form's fields, the first field first (a field it names that the form lacks is left out). */
export function problemsAt<F extends string>(problems: readonly FieldProblem[], fields: readonly F[]): { field: F; problem: FieldProblem }[] {
  const out: { field: F; problem: FieldProblem }[] = [];
  for (const field of fields) {
    const problem = problems.find((p) => p.field === field);
    if (problem) out.push({ field, problem });
  }
  return out;
}
