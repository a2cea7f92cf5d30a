// Light / dark themes. The operator picks System, Light or Dark; System follows
// prefers-color-scheme live. The effective theme is written to
// <html data-theme="light|dark"> (CSS custom properties hang off it) and is also
// the theme the Rust side draws charts in.

import type { ChartTheme } from "./bindings";

export type ThemePref = "system" | "light" | "dark";
export type EffectiveTheme = ChartTheme;

export const THEME_PREFS: readonly ThemePref[] = ["system", "light", "dark"];

export function isThemePref(value: unknown): value is ThemePref {
  return value === "system" || value === "light" || value === "dark";
}

export function resolveTheme(pref: ThemePref, systemPrefersDark: boolean): EffectiveTheme {
  if (pref === "system") return systemPrefersDark ? "dark" : "light";
  return pref;
}

const DARK_QUERY = "(prefers-color-scheme: dark)";

let pref: ThemePref = "system";
let effective: EffectiveTheme = "light";
const listeners = new Set<(theme: EffectiveTheme) => void>();
let tellShell: ((pref: ThemePref) => void) | null = null;
let media: MediaQueryList | null = null;

function systemPrefersDark(): boolean {
  return media?.matches ?? false;
}

function apply(): void {
  tellShell?.(pref);
  const next = resolveTheme(pref, systemPrefersDark());
  const changed = next !== effective;
  effective = next;
  document.documentElement.dataset.theme = next;
  document.documentElement.dataset.themePref = pref;
  if (changed) for (const fn of [...listeners]) fn(next);
}

/** Start theming: apply `initial` and follow the system setting when it is "system".
 *  `shell`, when given, hears every choice (the window's own theme: native popups such as
 *  a select's list are drawn by the toolkit, not the page). */
export function initTheme(initial: ThemePref, shell?: (pref: ThemePref) => void): void {
  pref = initial;
  tellShell = shell ?? null;
  if (typeof window.matchMedia === "function") {
    media = window.matchMedia(DARK_QUERY);
    media.addEventListener("change", () => {
      if (pref === "system") apply();
    });
  }
  effective = resolveTheme(pref, systemPrefersDark());
  apply();
}

export function setThemePref(next: ThemePref): void {
  pref = next;
  apply();
}

export function getThemePref(): ThemePref {
  return pref;
}

export function getEffectiveTheme(): EffectiveTheme {
  return effective;
}

/** Subscribe to effective-theme changes; returns the unsubscribe function. */
export function onThemeChange(fn: (theme: EffectiveTheme) => void): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}
