// What the Rules view keeps per pool while the operator works, outside any one view
// instance (module level), so leaving for another view and coming back loses nothing:
// the editor's unsaved draft, the trace loaded for replay, and the last few distinct
// decisions seen (the console keeps only the latest). Nothing here touches the DOM.

import type { Decision } from "./bindings";
import { decisionText } from "./reasons";

/** An unsaved rule file of one pool, and the saved file it was edited from. */
export type Draft = { source: string; baseline: string };

/** A trace loaded for replay: a file the operator picked or dropped, or the sample. */
export type LoadedTrace = { name: string; text: string; minutes: number; sample: boolean };

/** A decision seen, and the last time one like it (the same reason and counts) came. */
export type SeenDecision = { decision: Decision; lastAt: number };

/** The most distinct decisions kept per pool. */
export const DECISIONS_KEPT = 5;

const drafts = new Map<string, Draft>();
const traces = new Map<string, { trace: LoadedTrace; chosen: boolean }>();
const decisions = new Map<string, SeenDecision[]>();

/** The pool's unsaved draft, if any. */
export function draftOf(pool: string): Draft | null {
  return drafts.get(pool) ?? null;
}

/** Keeps the editor's file for `pool`; a file equal to its baseline is no draft. */
export function keepDraft(pool: string, source: string, baseline: string): void {
  if (source === baseline) drafts.delete(pool);
  else drafts.set(pool, { source, baseline });
}

/** Forgets the pool's draft (saved, or discarded after asking). */
export function dropDraft(pool: string): void {
  drafts.delete(pool);
}

/** Pools with unsaved rule edits. */
export function poolsWithDrafts(): string[] {
  return [...drafts.keys()];
}

/** The trace loaded for `pool`, and whether the replay was set to use it. */
export function traceOf(pool: string): { trace: LoadedTrace; chosen: boolean } | null {
  return traces.get(pool) ?? null;
}

export function keepTrace(pool: string, trace: LoadedTrace, chosen: boolean): void {
  traces.set(pool, { trace, chosen });
}

export function chooseTrace(pool: string, chosen: boolean): void {
  const kept = traces.get(pool);
  if (kept) traces.set(pool, { ...kept, chosen });
}

/**
 * What makes two decisions the same for the history: what its line says (the reason in
 * words and the counts). Two decisions that read alike are one entry, whatever a clamp's
 * timestamp or a rule's reading did in between: the list never shows the same line twice.
 */
export function decisionKey(decision: Decision): string {
  return JSON.stringify([decisionText(decision), decision.current_gpus, decision.desired_gpus]);
}

/**
 * The history with `decision` in it (pure): newest first; one like the newest (the same
 * key) only moves its `lastAt` on, so a steady pool's decision each tick is one entry; one
 * like an older entry replaces it at the top (a pool going back and forth between two
 * decisions lists each once); at most `keep` entries. A decision older than the newest
 * kept is ignored.
 */
export function withDecision(history: readonly SeenDecision[], decision: Decision, keep = DECISIONS_KEPT): SeenDecision[] {
  const newest = history[0];
  if (newest && decision.at_ms < newest.lastAt) return [...history];
  const key = decisionKey(decision);
  if (newest && decisionKey(newest.decision) === key) {
    return [{ decision: newest.decision, lastAt: decision.at_ms }, ...history.slice(1)];
  }
  const others = history.filter((seen) => decisionKey(seen.decision) !== key);
  return [{ decision, lastAt: decision.at_ms }, ...others].slice(0, keep);
}

/** Records the pool's latest decision; the history after it. */
export function noteDecision(pool: string, decision: Decision | null): SeenDecision[] {
  const history = decisions.get(pool) ?? [];
  if (decision === null) return history;
  const next = withDecision(history, decision);
  decisions.set(pool, next);
  return next;
}

export function decisionsOf(pool: string): SeenDecision[] {
  return decisions.get(pool) ?? [];
}

/** Forgets everything kept (tests). */
export function resetRulesStore(): void {
  drafts.clear();
  traces.clear();
  decisions.clear();
}
