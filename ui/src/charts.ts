// Fetches the per-host utilization charts (SVG drawn in Rust) and never has two
// requests for the same host in flight: a host whose previous chart is still
// being drawn is skipped until it finishes. A chart that comes back in a theme
// that is no longer current is dropped and asked for again.
//
// Which figures are in the viewport (FigureRegistry) and which charts to ask for on a tick
// (wantsChart) live here too: a chart out of view is not redrawn, one in view every
// LIVE_CHART_EVERY rounds.

import type { ChartTheme, IpcError, Result } from "./bindings";
import { describeError } from "./format";

export type ChartFetch = (
  host: string,
  theme: ChartTheme,
  widthPx: number,
  heightPx: number,
) => Promise<Result<string, IpcError>>;

export type ChartEntry = {
  /** The last good chart's SVG document, if any (drawn inline: see live-charts.tsx). */
  svg: string | null;
  /** Words for the last failure; null after a good chart. */
  error: string | null;
  /** Tick that was current when the shown chart was requested. */
  tick: number;
  theme: ChartTheme;
};

export type ChartRequest = { host: string; theme: ChartTheme; width: number; height: number; tick: number };

export class ChartLoader {
  private readonly inflight = new Set<string>();
  private readonly entries = new Map<string, ChartEntry>();
  private readonly listeners = new Set<(host: string, entry: ChartEntry) => void>();

  constructor(
    private readonly fetchChart: ChartFetch,
    private readonly currentTheme: () => ChartTheme,
  ) {}

  get(host: string): ChartEntry | undefined {
    return this.entries.get(host);
  }

  isInFlight(host: string): boolean {
    return this.inflight.has(host);
  }

  /** Forget hosts that left the fleet. */
  retain(hosts: ReadonlySet<string>): void {
    for (const host of [...this.entries.keys()]) if (!hosts.has(host)) this.entries.delete(host);
  }

  onUpdate(fn: (host: string, entry: ChartEntry) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Ask for a chart; returns false (and does nothing) if one is already in flight. */
  request(req: ChartRequest): boolean {
    if (this.inflight.has(req.host)) return false;
    this.inflight.add(req.host);
    void this.run(req);
    return true;
  }

  private async run(req: ChartRequest): Promise<void> {
    let outcome: { ok: true; svg: string } | { ok: false; error: string };
    try {
      const res = await this.fetchChart(req.host, req.theme, req.width, req.height);
      outcome = res.status === "ok" ? { ok: true, svg: res.data } : { ok: false, error: describeError(res.error) };
    } catch (err) {
      outcome = { ok: false, error: describeError(err) };
    }
    this.inflight.delete(req.host);

    const theme = this.currentTheme();
    if (theme !== req.theme) {
      // Drawn for the old theme: throw it away and draw again.
      this.request({ ...req, theme });
      return;
    }

    const previous = this.entries.get(req.host);
    const entry: ChartEntry = outcome.ok
      ? { svg: outcome.svg, error: null, tick: req.tick, theme: req.theme }
      : { svg: previous?.svg ?? null, error: outcome.error, tick: previous?.tick ?? req.tick, theme: req.theme };
    this.entries.set(req.host, entry);
    for (const fn of [...this.listeners]) fn(req.host, entry);
  }
}

/**
 * The figures in the document by host, for their widths, and which of them are in the
 * viewport. Without IntersectionObserver (tests) every figure counts as seen.
 */
export class FigureRegistry {
  private readonly figures = new Map<string, HTMLElement>();
  private readonly seen = new Set<string>();
  private readonly observer: IntersectionObserver | null;

  /** `onSeen`: a figure came into view (ask for its chart now). */
  constructor(onSeen: () => void = () => undefined) {
    this.observer =
      typeof IntersectionObserver === "undefined"
        ? null
        : new IntersectionObserver((entries) => {
            let newly = false;
            for (const entry of entries) {
              const host = (entry.target as HTMLElement).dataset.host;
              if (host === undefined) continue;
              if (entry.isIntersecting) {
                newly ||= !this.seen.has(host);
                this.seen.add(host);
              } else this.seen.delete(host);
            }
            if (newly) onSeen();
          });
  }

  add(host: string, figure: HTMLElement): void {
    const before = this.figures.get(host);
    if (before === figure) return;
    if (before) this.observer?.unobserve(before);
    this.figures.set(host, figure);
    this.observer?.observe(figure);
  }

  remove(host: string): void {
    const figure = this.figures.get(host);
    if (figure) this.observer?.unobserve(figure);
    this.figures.delete(host);
    this.seen.delete(host);
  }

  get(host: string): HTMLElement | undefined {
    return this.figures.get(host);
  }

  /** In the viewport (always, without an observer). */
  isSeen(host: string): boolean {
    return this.observer === null || this.seen.has(host);
  }

  dispose(): void {
    this.observer?.disconnect();
    this.figures.clear();
    this.seen.clear();
  }
}

/**
 * Sample rounds (about a second each) between two redraws of a live chart in view. Each
 * redraw is an SVG the web process lays out and paints: with four charts in view, redrawn
 * every round kept it at about 7% of a core, every third round 3.6% (issue 43: idle under
 * 3%); a two-minute chart that moves every five seconds still reads as live.
 */
export const LIVE_CHART_EVERY = 5;

/**
 * Whether a host's live chart is asked for now: its first one and one in a new theme
 * always (what is scrolled to is never the old look), later ones only in view and when the
 * shown one is `LIVE_CHART_EVERY` rounds old (`age`, in rounds; one coming into view after
 * that is asked for at once).
 */
export function wantsChart(opts: {
  inDocument: boolean;
  hasChart: boolean;
  themeChanged: boolean;
  seen: boolean;
  windowHidden: boolean;
  age: number;
}): boolean {
  if (!opts.inDocument) return false;
  if (!opts.hasChart || opts.themeChanged) return true;
  return opts.seen && !opts.windowHidden && opts.age >= LIVE_CHART_EVERY;
}
