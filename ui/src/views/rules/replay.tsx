// "Replay before enabling": the rule file as it is in the editor, run over the pool's
// recorded history or a trace the operator picks or drops (CSV `minute,demand[,metric…]`),
// beside the seed's 80/30 rule, Kubernetes' HPA and the perfect-foresight oracle, priced
// with the pool's model, region and plan. The chart (demand, ready, held, each decision
// marked) is drawn in Rust, again on a theme change; the table gives each policy's cost,
// shortfall, actions a day and peak. "Suggest rules" asks for a rule file chosen by replay
// on the same demand and hands it up as a proposal (views/rules/suggestion.tsx): nothing
// in the editor changes until the operator accepts it. A loaded trace (or the sample one,
// rules-suggest.ts sampleTraceCsv) is kept per pool in rules-store.ts, so it is still
// there after a visit to another view; in the demo the sample is loaded from the start.
//
// Stable selectors (see views/rules.tsx):
//   [data-testid="rules-replay"] (data-state="idle|pending|ready|error"; a drop target)
//   #rules-replay-history #rules-replay-trace (radios)  #rules-trace-file  #rules-replay-sample
//   [data-testid="rules-trace-status"] (data-sample="true" when the sample is loaded)
//   #rules-replay-run #rules-suggest  [data-testid="rules-replay-summary"] [data-testid="rules-replay-stale"]
//   [data-testid="rules-replay-chart"] svg (data-theme)
//   [data-testid="rules-replay-table"] tr[data-policy] td[data-col="cost|shortfall|actions|peak"]
//   [data-testid="rules-replay-error"] [data-testid="rules-suggest-error"] (role=alert, data-kind)

import { createSignal, For, onCleanup, onMount, Show, type JSX } from "solid-js";
import { appInfoState, loadAppInfo, onAppInfo } from "../../app-info";
import { commands, type ChartTheme, type IpcError, type ReplayResult, type RuleSet, type RulesReplay, type RulesSuggestion } from "../../bindings";
import { demandRowCount, formatMoney, type Phrase } from "../../costs";
import { chartWidth } from "../../history";
import { t, type MessageKey } from "../../i18n";
import { call } from "../../ipc";
import { formatDateTime } from "../../pool";
import { chooseTrace, keepTrace, traceOf, type LoadedTrace } from "../../rules-store";
import { sampleMetrics, sampleTraceCsv, sampleTraceShape } from "../../rules-suggest";
import { getEffectiveTheme, onThemeChange } from "../../theme";
import { ErrorAlert } from "../error-alert";
import { SvgImage } from "../svg-image";
import { FilePicker, hasFiles, readFile } from "../costs/file-picker";

const MAX_TRACE_MB = 20;

const POLICIES: Readonly<Record<string, MessageKey>> = {
  rules: "rules.replay.policy.rules",
  "seed-80-30": "rules.replay.policy.seed",
  hpa: "rules.replay.policy.hpa",
  oracle: "rules.replay.policy.oracle",
};

type Request = { source: string; trace: LoadedTrace | null };

/** The replay chart's legend in the UI's language. */
export function replayLabels() {
  return {
    demand: t("rules.replay.chart.demand"),
    ready: t("rules.replay.chart.ready"),
    held: t("rules.replay.chart.held"),
    scale_out: t("rules.replay.chart.scaleOut"),
    scale_in: t("rules.replay.chart.scaleIn"),
    day: t("rules.replay.chart.day"),
  };
}

/**
 * The sample trace for a pool of `min`..`max` GPUs, worded in the UI's language, with a
 * column for each custom metric `rules` read (so the demo's rules act on it).
 */
export function sampleTrace(min: number, max: number, rules: RuleSet | null = null): LoadedTrace {
  const shape = sampleTraceShape(min, max);
  const text = sampleTraceCsv(shape, rules ? sampleMetrics(rules, shape) : []);
  return { name: t("rules.replay.sampleName"), text, minutes: demandRowCount(text), sample: true };
}

export function replaySentence(error: IpcError): MessageKey | null {
  if (error.kind !== "invalid_input") return null;
  if (error.field === "trace") return "rules.replay.badTrace";
  if (error.field === "model") return "rules.replay.noPrice";
  return "rules.replay.badRules";
}

export function pct(value: number): string {
  return `${value.toFixed(2)}%`;
}

export function Replay(props: {
  pool: string;
  /** The pool's range, which the sample trace is sized to. */
  range: { min: number; max: number };
  source: () => string;
  /** A suggestion came: a proposal, made on `trace` (null: the pool's history). */
  onSuggested: (suggestion: RulesSuggestion, trace: LoadedTrace | null) => void;
}): JSX.Element {
  const kept = traceOf(props.pool);
  const [fromTrace, setFromTraceSignal] = createSignal(kept?.chosen ?? false);
  const [trace, setTraceSignal] = createSignal<LoadedTrace | null>(kept?.trace ?? null);
  const setFromTrace = (chosen: boolean): void => {
    setFromTraceSignal(chosen);
    chooseTrace(props.pool, chosen);
  };
  const setTrace = (loaded: LoadedTrace): void => {
    setTraceSignal(loaded);
    setFromTraceSignal(true);
    keepTrace(props.pool, loaded, true);
  };
  const useSample = async (): Promise<void> => {
    setTraceProblem(null);
    // The rules in the editor, as data, name the metric columns the sample carries.
    const parsed = await call(() => commands.parseRules(props.source()));
    if (disposed) return;
    setTrace(sampleTrace(props.range.min, props.range.max, parsed.status === "ok" ? parsed.data : null));
  };
  const [traceProblem, setTraceProblem] = createSignal<Phrase | null>(null);
  const [dragging, setDragging] = createSignal(false);
  const [result, setResult] = createSignal<RulesReplay | null>(null);
  const [theme, setTheme] = createSignal<ChartTheme>(getEffectiveTheme());
  const [last, setLast] = createSignal<Request | null>(null);
  const [pending, setPending] = createSignal(false);
  const [error, setError] = createSignal<unknown>(null);
  const [suggesting, setSuggesting] = createSignal(false);
  const [suggestError, setSuggestError] = createSignal<unknown>(null);
  let figure!: HTMLDivElement;
  let disposed = false;

  const chosenTrace = (): LoadedTrace | null => (fromTrace() ? trace() : null);

  async function loadTrace(file: File): Promise<void> {
    const read = await readFile(file, MAX_TRACE_MB);
    if (disposed) return;
    if (!read.ok) {
      setTraceProblem(read.problem);
      return;
    }
    setTraceProblem(null);
    setTrace({ name: file.name, text: read.text, minutes: demandRowCount(read.text), sample: false });
  }

  async function run(request: Request): Promise<void> {
    if (pending()) return;
    setPending(true);
    setError(null);
    const drawn = getEffectiveTheme();
    const res = await call(() =>
      commands.replayRules(props.pool, request.source, request.trace?.text ?? null, drawn, chartWidth(figure?.clientWidth ?? 0), replayLabels()),
    );
    if (disposed) return;
    setPending(false);
    if (res.status === "ok") {
      setResult(res.data);
      setTheme(drawn);
      setLast(request);
    } else {
      setError(res.error);
    }
  }

  async function suggestRules(): Promise<void> {
    if (suggesting()) return;
    setSuggesting(true);
    setSuggestError(null);
    const on = chosenTrace();
    const res = await call(() => commands.suggestRules(props.pool, on?.text ?? null, props.source(), null));
    if (disposed) return;
    setSuggesting(false);
    if (res.status === "ok") props.onSuggested(res.data, on);
    else setSuggestError(res.error);
  }

  onMount(() => {
    // The demo has minutes of history at most: its replay starts on the sample.
    const offerSample = (): void => {
      if (!disposed && appInfoState().info?.demo && trace() === null) void useSample();
    };
    offerSample();
    const offInfo = onAppInfo(offerSample);
    void loadAppInfo();
    onCleanup(offInfo);
    const off = onThemeChange(() => {
      const request = last();
      if (request && result()) void run(request);
    });
    onCleanup(() => {
      disposed = true;
      off();
    });
  });

  const stale = (): boolean => {
    const request = last();
    return request !== null && (request.source !== props.source() || request.trace !== chosenTrace());
  };
  const rows = (): ReplayResult[] => {
    const r = result();
    return r ? [r.report, ...r.report.baselines] : [];
  };
  const summary = (r: RulesReplay): string => {
    const from =
      r.source.kind === "history"
        ? t("rules.replay.fromHistory", { from: formatDateTime(r.source.from_ms) })
        : last()?.trace?.sample
          ? t("rules.replay.fromSample")
          : t("rules.replay.fromTrace", { name: last()?.trace?.name ?? "" });
    return t("rules.replay.summary", {
      minutes: r.minutes,
      from,
      peak: r.peak_demand_gpus,
      model: r.model,
      region: r.region,
      warmup: r.warmup_minutes,
    });
  };
  const traceStatus = (): string | null => {
    const problem = traceProblem();
    if (problem) return t(problem.key, problem.params);
    const loaded = trace();
    return loaded ? t("rules.replay.traceLoaded", { name: loaded.name, minutes: loaded.minutes }) : null;
  };

  return (
    <section
      class="card rules-replay"
      classList={{ "drag-over": dragging() }}
      data-testid="rules-replay"
      data-state={pending() ? "pending" : error() !== null ? "error" : result() ? "ready" : "idle"}
      aria-labelledby="rules-replay-title"
      onDragOver={(event) => {
        if (!hasFiles(event)) return;
        event.preventDefault();
        if (event.dataTransfer) event.dataTransfer.dropEffect = "copy";
        setDragging(true);
      }}
      onDragLeave={(event) => {
        if (!(event.relatedTarget instanceof Node) || !event.currentTarget.contains(event.relatedTarget)) setDragging(false);
      }}
      onDrop={(event) => {
        if (!hasFiles(event)) return;
        event.preventDefault();
        setDragging(false);
        const file = event.dataTransfer?.files[0];
        if (file) void loadTrace(file);
      }}
    >
      <h2 id="rules-replay-title">{t("rules.replay.title")}</h2>
      <p class="hint section-lead">{t("rules.replay.lead")}</p>
      <fieldset class="rules-replay-source">
        <legend>{t("rules.replay.demand")}</legend>
        <label class="check" for="rules-replay-history">
          <input
            type="radio"
            name="rules-replay-source"
            id="rules-replay-history"
            checked={!fromTrace()}
            onChange={() => setFromTrace(false)}
          />
          {t("rules.replay.history")}
        </label>
        <label class="check" for="rules-replay-trace">
          <input
            type="radio"
            name="rules-replay-source"
            id="rules-replay-trace"
            checked={fromTrace()}
            disabled={trace() === null}
            onChange={() => setFromTrace(true)}
          />
          {t("rules.replay.trace")}
        </label>
        <span class="btn-row">
          <FilePicker id="rules-trace-file" accept=".csv,text/csv,text/plain" label={t("rules.replay.chooseTrace")} onFile={(file) => void loadTrace(file)} />
          <button type="button" id="rules-replay-sample" class="btn" aria-describedby="rules-replay-sample-hint" onClick={() => void useSample()}>
            {t("rules.replay.sample")}
          </button>
        </span>
        <p class="field-hint">{t("rules.replay.traceHint")}</p>
        <p class="field-hint" id="rules-replay-sample-hint">
          {t("rules.replay.sampleHint")} {t("rules.replay.traceKept")}
        </p>
        <p
          class="demand-status"
          classList={{ "is-error": traceProblem() !== null }}
          role={traceProblem() !== null ? "alert" : "status"}
          data-testid="rules-trace-status"
          data-sample={trace()?.sample ? "true" : undefined}
        >
          {traceStatus()}
        </p>
      </fieldset>
      <div class="btn-row rules-replay-actions">
        <button
          type="button"
          id="rules-replay-run"
          class="btn btn-primary"
          disabled={pending()}
          onClick={() => void run({ source: props.source(), trace: chosenTrace() })}
        >
          {pending() ? t("rules.replay.running") : t("rules.replay.run")}
        </button>
        <button type="button" id="rules-suggest" class="btn" disabled={suggesting()} onClick={() => void suggestRules()}>
          {suggesting() ? t("rules.replay.suggesting") : t("rules.replay.suggest")}
        </button>
      </div>
      <Show when={error() !== null}>
        <ErrorAlert lead={t("rules.replay.failed")} error={error()} testid="rules-replay-error" sentenceFor={replaySentence} />
      </Show>
      <Show when={suggestError() !== null}>
        <ErrorAlert lead={t("rules.replay.suggestFailed")} error={suggestError()} testid="rules-suggest-error" sentenceFor={replaySentence} />
      </Show>
      <div class="rules-replay-figure" ref={figure}>
        <Show when={result()}>
          {(r) => (
            <>
              <p class="hint" data-testid="rules-replay-summary">
                {summary(r())}
              </p>
              <For each={r().unread_metrics}>
                {(unread) => (
                  <p class="alert alert-warn" data-testid="rules-replay-unread" data-column={unread.column}>
                    {t("rules.replay.unread", { column: unread.column, rules: unread.rules.join(t("common.listSeparator")) })}
                  </p>
                )}
              </For>
              <Show when={stale()}>
                <p class="alert alert-info" data-testid="rules-replay-stale">
                  {t("rules.replay.stale")}
                </p>
              </Show>
              <SvgImage
                svg={r().chart_svg}
                label={t("rules.replay.chartAlt", { pool: props.pool, minutes: r().minutes })}
                testid="rules-replay-chart"
                theme={theme()}
              />
              <div class="table-wrap">
                <table class="hosts rules-table" data-testid="rules-replay-table">
                  <thead>
                    <tr>
                      <th scope="col">{t("rules.replay.col.policy")}</th>
                      <th scope="col" class="num">
                        {t("rules.replay.col.cost")}
                      </th>
                      <th scope="col" class="num">
                        {t("rules.replay.col.shortfall")}
                      </th>
                      <th scope="col" class="num">
                        {t("rules.replay.col.actions")}
                      </th>
                      <th scope="col" class="num">
                        {t("rules.replay.col.peak")}
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    <For each={rows()}>
                      {(row) => (
                        <tr data-policy={row.policy} classList={{ recommended: row.policy === "rules" }}>
                          <th scope="row">{POLICIES[row.policy] ? t(POLICIES[row.policy]!) : row.policy}</th>
                          <td class="num" data-col="cost">
                            {formatMoney(row.cost_fen)}
                          </td>
                          <td class="num" data-col="shortfall">
                            {pct(row.shortfall_pct)}
                          </td>
                          <td class="num" data-col="actions">
                            {row.actions_per_day.toFixed(1)}
                          </td>
                          <td class="num" data-col="peak">
                            {row.peak_held_gpus}
                          </td>
                        </tr>
                      )}
                    </For>
                  </tbody>
                </table>
              </div>
            </>
          )}
        </Show>
      </div>
    </section>
  );
}
