// The UI's side of the one message catalog: `locales/en.json` and `locales/zh-CN.json`,
// one file per locale, which the desktop notifications (the `ebb-notify` crate) read too.
// Every string the operator reads comes from there. `zhCN` is typed against the English
// keys, so a missing translation is a type error; i18n.test.ts checks the rest (the same
// keys, non-empty, the same {placeholders}, no key that no source names).

import enCatalog from "./locales/en.json";
import zhCNCatalog from "./locales/zh-CN.json";

const en = enCatalog;

export type MessageKey = keyof typeof en;

const zhCN: Record<MessageKey, string> = zhCNCatalog;

export type Locale = "en" | "zh-CN";
export const LOCALES: readonly Locale[] = ["en", "zh-CN"];

/** Both catalogs, for tests and tooling. */
export const catalogs: Readonly<Record<Locale, Readonly<Record<MessageKey, string>>>> = {
  en,
  "zh-CN": zhCN,
};

export function isLocale(value: unknown): value is Locale {
  return value === "en" || value === "zh-CN";
}

/**
 * Pick the UI language from the browser's preference list. The first tag we can
 * serve wins: any Chinese tag (zh, zh-CN, zh-TW, zh-Hans-SG, zh_CN...) means
 * Simplified Chinese, any English tag means English; other languages are skipped.
 * Nothing usable means English.
 */
export function detectLocale(languages: readonly string[]): Locale {
  for (const tag of languages) {
    const primary = tag.trim().toLowerCase().split(/[-_]/)[0];
    if (primary === "zh") return "zh-CN";
    if (primary === "en") return "en";
  }
  return "en";
}

export type Params = Readonly<Record<string, string | number>>;

/** Replace `{name}` with params.name; unknown placeholders are left as they are. */
export function interpolate(template: string, params?: Params): string {
  if (!params) return template;
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => {
    const value = params[name];
    return value === undefined ? whole : String(value);
  });
}

let current: Locale = "en";
const listeners = new Set<(locale: Locale) => void>();

export function getLocale(): Locale {
  return current;
}

/** Translate `key` in the current locale. */
export function t(key: MessageKey, params?: Params): string {
  return interpolate(catalogs[current][key], params);
}

/** Translate `key` in a given locale (used by tests and by language names). */
export function tIn(locale: Locale, key: MessageKey, params?: Params): string {
  return interpolate(catalogs[locale][key], params);
}

/** Switch language; updates <html lang> and tells subscribers to re-render. */
export function setLocale(locale: Locale): void {
  const changed = locale !== current;
  current = locale;
  if (typeof document !== "undefined") document.documentElement.lang = locale;
  if (changed) for (const fn of [...listeners]) fn(locale);
}

/** Subscribe to language changes; returns the unsubscribe function. */
export function onLocaleChange(fn: (locale: Locale) => void): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}
