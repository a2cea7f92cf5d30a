// "Replay before enabling": the rule file as it is in the editor, run over the pool's
// recorded history or a trace the operator picks or drops (CSV `minute,demand[,metric…]`),
// beside the seed's 80/30 rule, Kubernetes' HPA and the perfect-foresight oracle, priced
// with the pool's model, region and plan. The chart (demand, ready, held, each decision
// marked) is drawn in Rust, again on a theme change; the table gives each policy's cost,
// shortfall, actions a day and peak. "Suggest rules" fills the editor with a rule file
// chosen by replay on the same demand.
//
// Stable selectors (see views/rules.tsx):
//   [data-testid="rules-replay"] (data-state="idle|pending|ready|error"; a drop target)
//   #rules-replay-history #rules-replay-trace (radios)  #rules-trace-file  [data-testid="rules-trace-status"]
//   #rules-replay-run #rules-suggest  [data-testid="rules-replay-summary"] [data-testid="rules-replay-stale"]
//   img[data-testid="rules-replay-chart"] (data-theme)
//   [data-testid="rules-replay-table"] tr[data-policy] td[data-col="cost|shortfall|actions|peak"]
//   [data-testid="rules-replay-error"] [data-testid="rules-suggest-error"] (role=alert, data-kind)

import { createSignal, For, onCleanup, onMount, Show, type JSX } from "solid-js";
import { commands, type ChartTheme, type IpcError, type ReplayResult, type RulesReplay } from "../../bindings";
import { demandRowCount, formatMoney, type Phrase } from "../../costs";
import { svgDataUrl } from "../../format";
import { chartWidth } from "../../history";
import { t, type MessageKey } from "../../i18n";
import { call } from "../../ipc";
import { formatDateTime } from "../../pool";
import { getEffectiveTheme, onThemeChange } from "../../theme";
import { ErrorAlert } from "../error-alert";
import { FilePicker, hasFiles, readFile } from "../costs/file-picker";

const MAX_TRACE_MB = 20;

const POLICIES: Readonly<Record<string, MessageKey>> = {
  rules: "rules.replay.policy.rules",
  "seed-80-30": "rules.replay.policy.seed",
  hpa: "rules.replay.policy.hpa",
  oracle: "rules.replay.policy.oracle",
};

type Trace = { name: string; text: string; minutes: number };
type Request = { source: string; trace: Trace | null };

function replaySentence(error: IpcError): MessageKey | null {
  if (error.kind !== "invalid_input") return null;
  if (error.field === "trace") return "rules.replay.badTrace";
  if (error.field === "model") return "rules.replay.noPrice";
  return "rules.replay.badRules";
}

function pct(value: number): string {
  return `${value.toFixed(2)}%`;
}

export function Replay(props: { pool: string; source: () => string; onSuggested: (file: string) => void }): JSX.Element {
  const [fromTrace, setFromTrace] = createSignal(false);
  const [trace, setTrace] = createSignal<Trace | null>(null);
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

  const chosenTrace = (): Trace | null => (fromTrace() ? trace() : null);

  async function loadTrace(file: File): Promise<void> {
    const read = await readFile(file, MAX_TRACE_MB);
    if (disposed) return;
    if (!read.ok) {
      setTraceProblem(read.problem);
      return;
    }
    setTraceProblem(null);
    setTrace({ name: file.name, text: read.text, minutes: demandRowCount(read.text) });
    setFromTrace(true);
  }

  async function run(request: Request): Promise<void> {
    if (pending()) return;
    setPending(true);
    setError(null);
    const drawn = getEffectiveTheme();
    const res = await call(() =>
      commands.replayRules(props.pool, request.source, request.trace?.text ?? null, drawn, chartWidth(figure?.clientWidth ?? 0), {
        demand: t("rules.replay.chart.demand"),
        ready: t("rules.replay.chart.ready"),
        held: t("rules.replay.chart.held"),
        scale_out: t("rules.replay.chart.scaleOut"),
        scale_in: t("rules.replay.chart.scaleIn"),
        day: t("rules.replay.chart.day"),
      }),
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
    const res = await call(() => commands.suggestRules(props.pool, chosenTrace()?.text ?? null));
    if (disposed) return;
    setSuggesting(false);
    if (res.status === "ok") props.onSuggested(res.data);
    else setSuggestError(res.error);
  }

  onMount(() => {
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
        </span>
        <p class="field-hint">{t("rules.replay.traceHint")}</p>
        <p
          class="demand-status"
          classList={{ "is-error": traceProblem() !== null }}
          role={traceProblem() !== null ? "alert" : "status"}
          data-testid="rules-trace-status"
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
              <Show when={stale()}>
                <p class="alert alert-info" data-testid="rules-replay-stale">
                  {t("rules.replay.stale")}
                </p>
              </Show>
              <img
                data-testid="rules-replay-chart"
                data-theme={theme()}
                src={svgDataUrl(r().chart_svg)}
                alt={t("rules.replay.chartAlt", { pool: props.pool, minutes: r().minutes })}
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
