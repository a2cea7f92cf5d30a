// Pure helpers for Settings → Hosts: labels text <-> map, the client-side checks
// (a mirror of the registry's, so most mistakes are caught before a round trip; the
// server stays the judge and its answer is always shown), and words for IPC errors.
// No DOM, so they are unit-tested in node.

import type { HostInput, IpcErrorKind } from "./bindings";
import type { MessageKey, Params } from "./i18n";

/** The form's fields, named as the server names them in `invalid_input` messages. */
export type HostField = "name" | "url" | "region" | "labels" | "fingerprint" | "token";
export const HOST_FIELDS: readonly HostField[] = ["name", "url", "region", "labels", "fingerprint", "token"];

/** A message from the catalog, not yet translated (the view translates it). */
export type Problem = { key: MessageKey; params?: Params };

export type Labels = Record<string, string>;

// The registry's limits (crates/ebb-core/src/registry.rs `validate`).
export const NAME_MAX = 63;
export const REGION_MAX = 63;
export const LABELS_MAX = 32;
export const LABEL_KEY_MAX = 63;
export const LABEL_VALUE_MAX = 255;

/**
 * `"gpu=a100, team=ml"` -> `{gpu: "a100", team: "ml"}`. Pieces are split on commas
 * and trimmed; empty pieces are skipped, so a trailing comma is fine. A value may
 * contain `=` (only the first one splits) but not a comma.
 */
export function parseLabels(text: string): { ok: true; labels: Labels } | { ok: false; problem: Problem } {
  const labels: Labels = {};
  let count = 0;
  for (const raw of text.split(",")) {
    const piece = raw.trim();
    if (piece === "") continue;
    const eq = piece.indexOf("=");
    if (eq < 0) return { ok: false, problem: { key: "hosts.check.labelPair", params: { piece } } };
    const key = piece.slice(0, eq).trim();
    const value = piece.slice(eq + 1).trim();
    if (key === "") return { ok: false, problem: { key: "hosts.check.labelKeyEmpty", params: { piece } } };
    if (key.length > LABEL_KEY_MAX || value.length > LABEL_VALUE_MAX) {
      return {
        ok: false,
        problem: { key: "hosts.check.labelLength", params: { key, keyMax: LABEL_KEY_MAX, valueMax: LABEL_VALUE_MAX } },
      };
    }
    if (Object.prototype.hasOwnProperty.call(labels, key)) {
      return { ok: false, problem: { key: "hosts.check.labelDuplicate", params: { key } } };
    }
    labels[key] = value;
    count += 1;
  }
  if (count > LABELS_MAX) return { ok: false, problem: { key: "hosts.check.labelCount", params: { max: LABELS_MAX } } };
  return { ok: true, labels };
}

/** The inverse of parseLabels, keys sorted: `{team: "ml", gpu: "a100"}` -> `"gpu=a100, team=ml"`. */
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

/** What the operator typed, as strings (the token stays out: it needs no checks here). */
export type HostFormValues = {
  name: string;
  url: string;
  region: string;
  labels: string;
  fingerprint: string;
};

export type FieldProblems = Partial<Record<HostField, Problem>>;

const NAME_PATTERN = /^[A-Za-z0-9._-]+$/;

/**
 * The client-side checks, a mirror of the registry's: every field gets at most one
 * problem. On success, the HostInput without its token (the caller decides it).
 */
export function checkHostForm(
  values: HostFormValues,
): { ok: true; input: Omit<HostInput, "token"> } | { ok: false; problems: FieldProblems } {
  const problems: FieldProblems = {};

  const name = values.name.trim();
  if (name === "") problems.name = { key: "hosts.check.nameRequired" };
  else if (name.length > NAME_MAX) problems.name = { key: "hosts.check.nameLength", params: { max: NAME_MAX } };
  else if (!NAME_PATTERN.test(name)) problems.name = { key: "hosts.check.namePattern" };

  const url = values.url.trim();
  if (url === "") problems.url = { key: "hosts.check.urlRequired" };
  else if (!url.startsWith("http://") && !url.startsWith("https://")) problems.url = { key: "hosts.check.urlScheme" };
  else if (url.replace(/^https?:\/\//, "").replace(/\/+$/, "") === "") problems.url = { key: "hosts.check.urlHost" };

  const region = values.region.trim();
  if (region === "") problems.region = { key: "hosts.check.regionRequired" };
  else if (region.length > REGION_MAX) problems.region = { key: "hosts.check.regionLength", params: { max: REGION_MAX } };
  else if (/\s/.test(region)) problems.region = { key: "hosts.check.regionSpaces" };

  const labels = parseLabels(values.labels);
  if (!labels.ok) problems.labels = labels.problem;

  const fingerprintText = values.fingerprint.trim();
  if (fingerprintText !== "") {
    const hex = fingerprintText.replace(/[:\s]/g, "");
    if (!/^[0-9a-fA-F]{64}$/.test(hex)) problems.fingerprint = { key: "hosts.check.fingerprintFormat" };
    else if (url.startsWith("http://")) problems.fingerprint = { key: "hosts.check.fingerprintHttps" };
  }

  if (Object.keys(problems).length > 0 || !labels.ok) return { ok: false, problems };
  return {
    ok: true,
    input: { name, url, region, labels: labels.labels, fingerprint: fingerprintText === "" ? null : fingerprintText },
  };
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
