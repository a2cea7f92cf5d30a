// appInfo() is asked once; the header badge and Settings > About read it.

import { commands, type AppInfo } from "./bindings";

export type AppInfoState = { info: AppInfo | null; error: unknown; loading: boolean };

const state: AppInfoState = { info: null, error: null, loading: true };
const listeners = new Set<() => void>();
let started = false;

export function appInfoState(): Readonly<AppInfoState> {
  return state;
}

export function onAppInfo(fn: () => void): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

export async function loadAppInfo(): Promise<void> {
  if (started) return;
  started = true;
  try {
    state.info = await commands.appInfo();
  } catch (err) {
    state.error = err;
  }
  state.loading = false;
  for (const fn of [...listeners]) fn();
}
