// The demand card: a drop zone, a file picker and the FAQ-4 sample, the CSV text, the model
// and region (from the catalog), spot allowed or not, Compare, and why it failed.
//
// Stable selectors (see views/costs.tsx for the whole view's):
//   [data-testid="costs-demand"]  [data-testid="costs-dropzone"] (data-dragging)
//   #costs-demand-file #costs-sample #costs-demand-text [data-testid="costs-demand-status"]
//   #costs-model #costs-region #costs-interruptible #costs-compare
//   [data-testid="costs-error"] (data-kind)  button[data-action="go-to-line"]

import { For, Show, type JSX } from "solid-js";
import type { Phrase } from "../../costs";
import { t } from "../../i18n";
import { ErrorAlert } from "../error-alert";
import { FilePicker } from "./file-picker";
import { costsSentence, demandErrorLine, type Costs } from "./state";

function phrase(p: Phrase): string {
  return t(p.key, p.params);
}

function Select(props: {
  id: string;
  values: string[];
  selected: string | null;
  onChange: (value: string) => void;
  ref?: (el: HTMLSelectElement) => void;
}): JSX.Element {
  return (
    <select
      ref={props.ref}
      id={props.id}
      disabled={props.values.length === 0}
      value={props.selected ?? ""}
      onChange={(ev) => props.onChange(ev.currentTarget.value)}
    >
      <For each={props.values}>
        {(value) => (
          <option value={value} selected={value === props.selected}>
            {value}
          </option>
        )}
      </For>
    </select>
  );
}

function CompareErrorBox(props: { costs: Costs }): JSX.Element {
  const costs = props.costs;
  return (
    <div class="costs-error-box" ref={(el) => (costs.refs.compareError = el)}>
      <Show when={costs.compareError()} keyed>
        {(problem) =>
          problem.kind === "client" ? (
            <p class="alert alert-error" role="alert" data-testid="costs-error" data-kind="client">
              {t(problem.key)}
            </p>
          ) : (
            <ErrorAlert lead={t("costs.error.compare")} error={problem.error} testid="costs-error" sentenceFor={costsSentence}>
              <Show when={demandErrorLine(problem.error)}>
                {(line) => (
                  <button type="button" class="btn btn-small" data-action="go-to-line" onClick={() => costs.goToLine(line())}>
                    {t("costs.goToLine", { line: line() })}
                  </button>
                )}
              </Show>
            </ErrorAlert>
          )
        }
      </Show>
    </div>
  );
}

export function DemandInput(props: { costs: Costs }): JSX.Element {
  const costs = props.costs;
  const status = (): string | null => {
    const said = costs.demandProblem() ?? costs.demandNote();
    return said ? phrase(said) : null;
  };
  return (
    <form
      ref={(el) => (costs.refs.demandCard = el)}
      class="card costs-demand"
      classList={{ "drag-over": costs.dragging() === "demand" }}
      data-testid="costs-demand"
      aria-labelledby="costs-demand-title"
      novalidate
      onSubmit={(ev) => {
        ev.preventDefault();
        costs.compareNow();
      }}
    >
      <h2 id="costs-demand-title">{t("costs.demand.title")}</h2>
      <p class="hint section-lead">{t("costs.demand.lead")}</p>
      <div class="dropzone" data-testid="costs-dropzone" data-dragging={costs.dragging() === "demand" ? "" : undefined}>
        <span class="dropzone-icon" aria-hidden="true" />
        <span class="dropzone-text">{t("costs.demand.drop")}</span>
        <span class="dropzone-or">{t("costs.demand.or")}</span>
        <span class="btn-row">
          <FilePicker
            id="costs-demand-file"
            accept=".csv,text/csv,text/plain"
            label={t("costs.demand.choose")}
            onFile={(file) => void costs.loadDemandFile(file)}
          />
          <button
            type="button"
            id="costs-sample"
            class="btn"
            aria-describedby="costs-sample-hint"
            onClick={() => void costs.useSample()}
          >
            {t("costs.demand.sample")}
          </button>
        </span>
        <span class="field-hint" id="costs-sample-hint">
          {t("costs.demand.sampleHint")}
        </span>
      </div>
      <div class="field demand-field">
        <label for="costs-demand-text">{t("costs.demand.text")}</label>
        <textarea
          ref={(el) => (costs.refs.demandText = el)}
          id="costs-demand-text"
          class="mono"
          rows={8}
          spellcheck={false}
          autocomplete="off"
          placeholder={"hour,demand\n0,10\n1,10\n…"}
          aria-describedby="costs-demand-text-hint"
          value={costs.demandText()}
          onInput={(ev) => costs.typed(ev.currentTarget.value)}
          onKeyDown={(ev) => {
            if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) {
              ev.preventDefault();
              costs.compareNow();
            }
          }}
        />
        <p class="field-hint" id="costs-demand-text-hint">
          {t("costs.demand.textHint")}
        </p>
        {/* An unreadable file is an error: said at once, in an alert. */}
        <p
          class="demand-status"
          classList={{ "is-error": costs.demandProblem() !== null }}
          role={costs.demandProblem() !== null ? "alert" : "status"}
          data-testid="costs-demand-status"
        >
          {status()}
        </p>
      </div>
      <div class="pool-row">
        <div class="field">
          <label for="costs-model">{t("costs.model")}</label>
          <Select
            id="costs-model"
            values={costs.models()}
            selected={costs.model()}
            onChange={costs.chooseModel}
            ref={(el) => (costs.refs.model = el)}
          />
        </div>
        <div class="field">
          <label for="costs-region">{t("costs.region")}</label>
          <Select
            id="costs-region"
            values={costs.regions()}
            selected={costs.region()}
            onChange={costs.chooseRegion}
          />
        </div>
        <div class="field field-check">
          <label class="check" for="costs-interruptible">
            <input
              type="checkbox"
              id="costs-interruptible"
              checked={costs.interruptible()}
              aria-describedby="costs-interruptible-hint"
              onChange={(ev) => costs.chooseInterruptible(ev.currentTarget.checked)}
            />
            {t("costs.interruptible")}
          </label>
          <p class="field-hint" id="costs-interruptible-hint">
            {t("costs.interruptibleHint")}
          </p>
        </div>
        <div class="compare-action">
          <button
            ref={(el) => (costs.refs.compareButton = el)}
            type="submit"
            id="costs-compare"
            class="btn btn-primary"
            disabled={costs.pending()}
          >
            {costs.pending() ? t("costs.comparing") : t("costs.compare")}
          </button>
        </div>
      </div>
      <CompareErrorBox costs={costs} />
    </form>
  );
}
