// The one way views call the shell: every IPC command goes through `call`, and every
// failure is read back through `ipcError`.

import type { IpcError, Result } from "./bindings";

/** Calls an IPC command; a thrown error (no shell, a bug) is folded into the same shape. */
export async function call<T>(run: () => Promise<Result<T, IpcError>>): Promise<Result<T, unknown>> {
  try {
    return await run();
  } catch (err) {
    return { status: "error", error: err };
  }
}

/** The error as the shell sent it, or `null` for anything else (a thrown error, no shell). */
export function ipcError(err: unknown): IpcError | null {
  if (typeof err !== "object" || err === null) return null;
  const record = err as Record<string, unknown>;
  if (typeof record.kind !== "string") return null;
  return err as IpcError;
}

/** The form field an error names (its `field`), when it is one of `fields`; null otherwise. */
export function fieldOf<F extends string>(err: IpcError | null, fields: readonly F[]): F | null {
  const field = err?.field;
  return field ? (fields.find((f) => f === field) ?? null) : null;
}
