// Operator preferences kept in localStorage. Storage can be missing or throw
// (private mode, tests in node), so every access is guarded.

import { isLocale, type Locale } from "./i18n";
import { isThemePref, type ThemePref } from "./theme";

const LOCALE_KEY = "ebb.locale";
const THEME_KEY = "ebb.theme";

function storage(): Storage | null {
  try {
    return typeof localStorage === "undefined" ? null : localStorage;
  } catch {
    return null;
  }
}

function read(key: string): string | null {
  try {
    return storage()?.getItem(key) ?? null;
  } catch {
    return null;
  }
}

function write(key: string, value: string): void {
  try {
    storage()?.setItem(key, value);
  } catch {
    // Not persisted; the choice still applies for this session.
  }
}

export function loadLocale(): Locale | null {
  const v = read(LOCALE_KEY);
  return isLocale(v) ? v : null;
}

export function saveLocale(locale: Locale): void {
  write(LOCALE_KEY, locale);
}

export function loadThemePref(): ThemePref {
  const v = read(THEME_KEY);
  return isThemePref(v) ? v : "system";
}

export function saveThemePref(pref: ThemePref): void {
  write(THEME_KEY, pref);
}
