// Words as data from the shell: a `Phrase` is a catalog key and its typed arguments
// (crates/ebb-wire/src/phrase.rs). Rust decides which words a reason or a form problem is;
// this only renders them in the current language: text as it is, money as yuan, a time on
// the viewer's clock, GPUs with their noun, a nested phrase in place. Pure.

import type { Arg, Phrase } from "./bindings";
import { formatMoney, gpus } from "./costs";
import { catalogs, getLocale, t, type MessageKey, type Params } from "./i18n";

function pad2(n: number): string {
  return String(n).padStart(2, "0");
}

/** Local "HH:MM" (the Rust side writes UTC for logs; the view shows the viewer's clock). */
export function clockText(ms: number): string {
  const at = new Date(ms);
  return `${pad2(at.getHours())}:${pad2(at.getMinutes())}`;
}

/** A rule's number as the Rust side writes it: whole numbers bare, others to 2 places. */
export function ruleNumber(value: number): string {
  if (Number.isInteger(value) && Math.abs(value) < 1e15) return String(value);
  return value.toFixed(2);
}

function isKey(key: string): key is MessageKey {
  return Object.prototype.hasOwnProperty.call(catalogs[getLocale()], key);
}

function argText(arg: Arg): string {
  switch (arg.kind) {
    case "text":
      return arg.value;
    case "int":
      return String(arg.value);
    case "number":
      return ruleNumber(arg.value);
    case "money":
      return formatMoney(arg.value);
    case "time":
      return clockText(arg.value);
    case "gpus":
      return gpus(arg.value);
    case "phrase":
      return phraseText(arg.value);
    case "join":
      return arg.value.parts.map(phraseText).join(phraseText({ key: arg.value.separator, args: [] }));
  }
}

/** A phrase in the current language; a key this UI's catalog lacks is shown as it came. */
export function phraseText(phrase: Phrase): string {
  if (!isKey(phrase.key)) return phrase.key;
  const params: Record<string, string> = {};
  for (const { name, value } of phrase.args) params[name] = argText(value);
  return t(phrase.key, params as Params);
}
