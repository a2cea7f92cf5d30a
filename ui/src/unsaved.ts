// One rule for every form: unsaved input is never thrown away without asking. A form's
// Cancel, its Escape and leaving its view (the navigation, a language change) all go
// through the same gate: a form as it opened closes at once; a changed one asks "Discard
// your changes?" (views/discard-question.tsx) and closes only on Discard.
//
// The pure parts (`valuesDiffer`, `UnsavedGate`, the registry) are tested in
// unsaved.test.ts; `createUnsaved` ties a gate to a Solid component's life.

import { createSignal, getOwner, onCleanup, type Accessor } from "solid-js";

/**
 * Whether a form's values differ from what it opened with. Arrays compare as sets of
 * their items (the order regions were ticked in is no change); strings compare trimmed
 * (a space typed and deleted is no change); everything else by `===`.
 */
export function valuesDiffer<T extends Record<string, unknown>>(values: T, initial: T): boolean {
  const keys = new Set([...Object.keys(initial), ...Object.keys(values)]);
  for (const key of keys) {
    const a = values[key];
    const b = initial[key];
    if (Array.isArray(a) && Array.isArray(b)) {
      if ([...a].map(String).sort().join("\n") !== [...b].map(String).sort().join("\n")) return true;
    } else if (typeof a === "string" && typeof b === "string") {
      if (a.trim() !== b.trim()) return true;
    } else if (a !== b) {
      return true;
    }
  }
  return false;
}

/** A form that may hold unsaved input, as the registry and the navigation see it. */
export interface UnsavedForm {
  /** Whether closing now would lose something typed. */
  dirty(): boolean;
  /** Ask the operator; `proceed` runs only if they choose to discard. */
  ask(proceed: () => void): void;
}

/**
 * The decision of one form: what Cancel, Escape and a navigation do. Holds the question
 * while it is open and what to do if the answer is Discard.
 */
export class UnsavedGate implements UnsavedForm {
  private pending: (() => void) | null = null;

  constructor(
    private readonly isDirty: () => boolean,
    /** Called with true when the question opens, false when it is answered. */
    private readonly setAsking: (asking: boolean) => void,
    /** While a save is in flight the form cannot be left (nothing happens). */
    private readonly isBusy: () => boolean = () => false,
  ) {}

  dirty(): boolean {
    return this.isDirty();
  }

  /**
   * Leave the form: at once when nothing was changed, else ask first. Returns
   * "left" (`close` ran), "asking" (the question is open) or "busy" (nothing happened).
   */
  leave(close: () => void): "left" | "asking" | "busy" {
    if (this.isBusy()) return "busy";
    if (!this.isDirty()) {
      this.pending = null;
      close();
      return "left";
    }
    this.pending = close;
    this.setAsking(true);
    return "asking";
  }

  ask(proceed: () => void): void {
    this.pending = proceed;
    this.setAsking(true);
  }

  /** "Discard": the question closes and what was asked for happens. */
  discard(): void {
    const then = this.pending;
    this.pending = null;
    this.setAsking(false);
    then?.();
  }

  /** "Keep editing": the question closes, nothing else happens. */
  keep(): void {
    this.pending = null;
    this.setAsking(false);
  }

  isAsking(): boolean {
    return this.pending !== null;
  }
}

/** The forms open now, in the order they opened. */
const open: UnsavedForm[] = [];

/** Register an open form; the returned function unregisters it (when it closes). */
export function registerUnsaved(form: UnsavedForm): () => void {
  open.push(form);
  return () => {
    const at = open.indexOf(form);
    if (at >= 0) open.splice(at, 1);
  };
}

/** The first open form with unsaved input, or null. */
export function firstUnsaved(): UnsavedForm | null {
  return open.find((form) => form.dirty()) ?? null;
}

/**
 * Before something that would throw the open forms away (another view, another
 * language): runs `proceed` at once when nothing is unsaved and returns true; otherwise
 * the first changed form asks, `proceed` runs only on Discard, and this returns false.
 */
export function leaveForms(proceed: () => void): boolean {
  const form = firstUnsaved();
  if (!form) {
    proceed();
    return true;
  }
  form.ask(proceed);
  return false;
}

/**
 * A gate for a Solid form component, registered while the component lives: `asking()`
 * shows the question, `leave(close)` is Cancel and Escape, `discard`/`keep` its answers.
 */
export function createUnsaved(opts: { dirty: () => boolean; busy?: () => boolean }): {
  asking: Accessor<boolean>;
  gate: UnsavedGate;
} {
  const [asking, setAsking] = createSignal(false);
  const gate = new UnsavedGate(opts.dirty, setAsking, opts.busy);
  const unregister = registerUnsaved(gate);
  if (getOwner()) onCleanup(unregister);
  return { asking, gate };
}
