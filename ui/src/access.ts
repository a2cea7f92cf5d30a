// Who this console acts as, and what its role lets it do: asked once at start (a role
// changes only when an admin grants another, and the console is opened again to take it).
// On SQLite the one operator may do everything; on a shared PostgreSQL the database enforces
// the role, and the app disables what the role may not do, saying which role it needs.

import { createSignal } from "solid-js";
import { commands, type AccessAction, type Identity } from "./bindings";
import { t } from "./i18n";
import { call } from "./ipc";
import { accessActionText, roleText } from "./reasons";

const [identity, setIdentity] = createSignal<Identity | null>(null);

/** This console's identity, once the shell said it (`null` before, or without a shell). */
export { identity };

/** Asks the shell who this console is (once; the app calls it at start). */
export async function loadIdentity(): Promise<void> {
  const answer = await call(() => commands.whoami());
  if (answer.status === "ok") setIdentity(answer.data);
}

/**
 * Why the operator may not do `action`, in words ("Needs the admin role: you are
 * operator…"), or `null` when they may (or before the shell said).
 */
export function denial(action: AccessAction): string | null {
  const me = identity();
  const denied = me?.denied.find((d) => d.action === action);
  if (!me || !denied) return null;
  return t("access.needs", { action: accessActionText(action), role: roleText(denied.needs), current: roleText(me.role) });
}
