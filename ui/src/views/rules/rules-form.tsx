// The rules as a form: limits (min, max, the step cap, the budget), scale-in (force, the
// release window, the deadband), the custom metrics (whose names the rules' metric field
// offers beside the built-in ones), the threshold and target rules and the schedules (a
// cron expression with a duration, or a window from a start to an end), a row each, added
// and removed. Each field shows what the linter says about it underneath (field-notes.tsx).
// The editor turns every change into the rule file (rules_to_toml), which stays the one
// source of truth; only the file's `pool` is kept as it is (the TOML tab edits it).
//
// Stable selectors: inputs #rules-f-FIELD (rules.ts fieldId: #rules-f-limits-min_gpus,
//   #rules-f-scale_in-force, #rules-f-threshold-0-action, #rules-f-threshold-0-action_kind,
//   #rules-f-metric-0-stale_after_minutes, #rules-f-schedule-0-kind (select: cron|window),
//   #rules-f-threshold-0-metric, #rules-f-target-0-metric (selects: option[data-kind=builtin|custom|unknown]),
//   [data-testid="rules-target-busy-hint"] (a busy_gpus target is % of each GPU),
//   #rules-f-schedule-0-cron / -duration_minutes or -start / -end, -time_zone,
//   #rules-f-schedule-0-bound (select: floor|ceiling|exact), #rules-f-schedule-0-gpus …)
//   [data-testid="rules-metric-row"][data-index]    #rules-remove-metric-N    #rules-add-metric
//   [data-testid="rules-threshold-row"][data-index] #rules-remove-threshold-N #rules-add-threshold
//   [data-testid="rules-target-row"][data-index]    #rules-remove-target-N    #rules-add-target
//   [data-testid="rules-schedule-row"][data-index]  #rules-remove-schedule-N  #rules-add-schedule

import { For, Index, Show, type JSX } from "solid-js";
import type { SetStoreFunction } from "solid-js/store";
import type { BoundKind } from "../../bindings";
import type { Phrase } from "../../costs";
import { t, type MessageKey } from "../../i18n";
import { comparisonSymbol } from "../../reasons";
import {
  ACTION_KINDS,
  BOUNDS,
  metricChoices,
  metricChoiceText,
  COMPARISONS,
  fieldId,
  newMetric,
  newSchedule,
  newTarget,
  newThreshold,
  SCHEDULE_KINDS,
  type ActionKind,
  type FieldNotes as Notes,
  type MetricRow,
  type RulesFormValues,
  type ScheduleKind,
  type ScheduleRow,
  type TargetRow,
  type ThresholdRow,
} from "../../rules";
import { FieldNotes, invalid } from "./field-notes";
import { PromqlTest } from "./promql-test";

const ACTION_WORDS: Readonly<Record<ActionKind, MessageKey>> = {
  add_gpus: "rules.f.action.add_gpus",
  add_pct: "rules.f.action.add_pct",
  remove_gpus: "rules.f.action.remove_gpus",
  remove_pct: "rules.f.action.remove_pct",
  set: "rules.f.action.set",
};

const KIND_WORDS: Readonly<Record<ScheduleKind, MessageKey>> = {
  cron: "rules.f.kind.cron",
  window: "rules.f.kind.window",
};

const BOUND_WORDS: Readonly<Record<BoundKind, MessageKey>> = {
  floor: "rules.f.bound.floor",
  ceiling: "rules.f.bound.ceiling",
  exact: "rules.f.bound.exact",
};

/** What a window's start and end look like in the file. */
const LOCAL_DATE_TIME = "2025-10-01T08:00:00";

type TopKey = Exclude<keyof RulesFormValues, "metrics" | "thresholds" | "targets" | "schedules" | "force">;

export function RulesForm(props: {
  values: RulesFormValues;
  setValues: SetStoreFunction<RulesFormValues>;
  /** After every change: the editor writes the file again. */
  changed: () => void;
  notes: Map<string, Notes>;
  /** The form's own problems, by form field (rules.ts problemsByField). */
  problems: Record<string, Phrase>;
  /** The pool the rules are for (a PromQL metric's Test runs its query for it). */
  pool: string;
}): JSX.Element {
  /** The custom metrics the form declares, offered beside the built-in ones. */
  const declaredMetrics = (): string[] => props.values.metrics.map((row) => row.name);
  const field = (name: string, label: MessageKey, input: JSX.Element, hint?: MessageKey): JSX.Element => (
    <div class="field" data-field={name}>
      <label for={fieldId(name)}>{t(label)}</label>
      {input}
      {hint ? (
        <p class="field-hint" id={`${fieldId(name)}-hint`}>
          {t(hint)}
        </p>
      ) : null}
      <FieldNotes field={name} notes={props.notes.get(name)} problem={props.problems[name]} />
    </div>
  );
  const describedBy = (name: string, hint: boolean): string =>
    hint ? `${fieldId(name)}-hint ${fieldId(name)}-notes` : `${fieldId(name)}-notes`;
  type TextOpts = { hint?: boolean; wide?: boolean; list?: string; placeholder?: string };
  const text = (name: string, value: () => string, set: (v: string) => void, opts: TextOpts = {}) => (
    <input
      id={fieldId(name)}
      type="text"
      class={opts.wide ? undefined : "num-input"}
      autocomplete="off"
      spellcheck={false}
      list={opts.list}
      placeholder={opts.placeholder}
      aria-describedby={describedBy(name, opts.hint ?? false)}
      aria-invalid={invalid(props.notes.get(name), props.problems[name])}
      value={value()}
      onInput={(event) => {
        set(event.currentTarget.value);
        props.changed();
      }}
    />
  );
  const choice = <T extends string>(name: string, value: () => T, options: readonly T[], word: (option: T) => string, set: (v: T) => void) => (
    <select
      id={fieldId(name)}
      aria-describedby={`${fieldId(name)}-notes`}
      value={value()}
      onChange={(event) => {
        set(event.currentTarget.value as T);
        props.changed();
      }}
    >
      <For each={options}>
        {(option) => (
          <option value={option} selected={option === value()}>
            {word(option)}
          </option>
        )}
      </For>
    </select>
  );
  const top = (key: TopKey, file: string, label: MessageKey, hint?: MessageKey) =>
    field(
      file,
      label,
      text(file, () => props.values[key], (v) => props.setValues(key, v), { hint: hint !== undefined }),
      hint,
    );

  const thresholdInput = (i: number, key: keyof ThresholdRow & string, opts: { wide?: boolean; list?: string } = {}) =>
    text(
      `threshold[${i}].${key}`,
      () => String(props.values.thresholds[i]?.[key] ?? ""),
      (v) => props.setValues("thresholds", i, key as "name", v),
      opts,
    );
  const targetInput = (i: number, key: keyof TargetRow & string, opts: { wide?: boolean; list?: string } = {}) =>
    text(
      `target[${i}].${key}`,
      () => String(props.values.targets[i]?.[key] ?? ""),
      (v) => props.setValues("targets", i, key as "name", v),
      opts,
    );
  const metricInput = (i: number, key: Exclude<keyof MetricRow, "key" | "source">, opts: TextOpts = {}) =>
    text(
      `metric[${i}].${key}`,
      () => props.values.metrics[i]?.[key] ?? "",
      (v) => props.setValues("metrics", i, key, v),
      opts,
    );
  const scheduleInput = (i: number, key: Exclude<keyof ScheduleRow, "key" | "kind" | "bound">, opts: TextOpts = {}) =>
    text(
      `schedule[${i}].${key}`,
      () => props.values.schedules[i]?.[key] ?? "",
      (v) => props.setValues("schedules", i, key, v),
      opts,
    );
  /** A rule's metric: a select of the built-in metrics and the file's own, so a rule can
   * only name a metric that exists (a free-text field let a typo through). */
  const metricSelect = (name: string, value: () => string, set: (v: string) => void) => (
    <select
      id={fieldId(name)}
      aria-describedby={`${fieldId(name)}-notes`}
      aria-invalid={invalid(props.notes.get(name), props.problems[name])}
      value={value()}
      onChange={(event) => {
        set(event.currentTarget.value);
        props.changed();
      }}
    >
      <For each={metricChoices(declaredMetrics(), value())}>
        {(choice) => (
          <option value={choice.name} selected={choice.name === value()} data-kind={choice.kind}>
            {metricChoiceText(choice)}
          </option>
        )}
      </For>
    </select>
  );
  const removeButton = (kind: "metric" | "threshold" | "target" | "schedule", i: number, name: string, remove: () => void) => (
    <button
      type="button"
      class="btn btn-small btn-danger-quiet"
      id={`rules-remove-${kind}-${i}`}
      onClick={() => {
        remove();
        props.changed();
      }}
    >
      {t("rules.f.remove", { name })}
    </button>
  );

  return (
    <div class="rules-form">
      <fieldset class="rules-fieldset">
        <legend>{t("rules.f.limits")}</legend>
        <div class="rules-grid">
          {top("min_gpus", "limits.min_gpus", "rules.f.min", "rules.h.min")}
          {top("max_gpus", "limits.max_gpus", "rules.f.max", "rules.h.max")}
          {top("budget_per_hour", "limits.budget_per_hour", "rules.f.budgetHour", "rules.h.budget")}
          {top("budget_per_month", "limits.budget_per_month", "rules.f.budgetMonth")}
        </div>
        <p class="field-hint rules-step-hint">{t("rules.h.step")}</p>
        <div class="rules-grid">
          {top("out_gpus", "limits.step.out_gpus", "rules.f.outGpus")}
          {top("out_pct", "limits.step.out_pct", "rules.f.outPct")}
          {top("in_gpus", "limits.step.in_gpus", "rules.f.inGpus")}
          {top("in_pct", "limits.step.in_pct", "rules.f.inPct")}
        </div>
      </fieldset>
      <fieldset class="rules-fieldset">
        <legend>{t("rules.f.scaleIn")}</legend>
        <div class="field field-check-line" data-field="scale_in.force">
          <label class="check" for={fieldId("scale_in.force")}>
            <input
              type="checkbox"
              id={fieldId("scale_in.force")}
              aria-describedby={`${fieldId("scale_in.force")}-hint ${fieldId("scale_in.force")}-notes`}
              checked={props.values.force}
              onChange={(event) => {
                props.setValues("force", event.currentTarget.checked);
                props.changed();
              }}
            />
            {t("rules.f.force")}
          </label>
          <p class="field-hint" id={`${fieldId("scale_in.force")}-hint`}>
            {t("rules.h.force")}
          </p>
          <FieldNotes field="scale_in.force" notes={props.notes.get("scale_in.force")} problem={props.problems["scale_in.force"]} />
        </div>
        <div class="rules-grid">
          {top("release_window_minutes", "scale_in.release_window_minutes", "rules.f.releaseWindow", "rules.h.releaseWindow")}
          {top("deadband_gpus", "scale_in.deadband_gpus", "rules.f.deadbandGpus", "rules.h.deadband")}
          {top("deadband_minutes", "scale_in.deadband_minutes", "rules.f.deadbandMinutes")}
        </div>
      </fieldset>

      <fieldset class="rules-fieldset">
        <legend>{t("rules.f.metrics")}</legend>
        <p class="field-hint">{t("rules.h.metrics")}</p>
        <Index each={props.values.metrics}>
          {(row, i) => (
            <fieldset class="rules-row" data-testid="rules-metric-row" data-index={i}>
              <legend>{t("rules.f.metricN", { n: i + 1, name: row().name })}</legend>
              <div class="rules-grid rules-grid-row">
                {field(`metric[${i}].name`, "rules.f.name", metricInput(i, "name", { wide: true }))}
                {field(`metric[${i}].stale_after_minutes`, "rules.f.staleAfter", metricInput(i, "stale_after_minutes"))}
                {field(`metric[${i}].prometheus`, "rules.f.promql", metricInput(i, "prometheus", { wide: true }))}
              </div>
              <PromqlTest pool={props.pool} query={() => row().prometheus} index={i} />
              {removeButton("metric", i, row().name, () => props.setValues("metrics", (rows) => rows.filter((_, n) => n !== i)))}
            </fieldset>
          )}
        </Index>
        <button
          type="button"
          class="btn btn-small"
          id="rules-add-metric"
          onClick={() => {
            props.setValues("metrics", (rows) => [...rows, newMetric(rows.length + 1)]);
            props.changed();
          }}
        >
          {t("rules.f.addMetric")}
        </button>
      </fieldset>

      <fieldset class="rules-fieldset">
        <legend>{t("rules.f.thresholds")}</legend>
        <p class="field-hint">{t("rules.h.thresholds")}</p>
        <Index each={props.values.thresholds}>
          {(row, i) => (
            <fieldset class="rules-row" data-testid="rules-threshold-row" data-index={i}>
              <legend>{t("rules.f.thresholdN", { n: i + 1, name: row().name })}</legend>
              <div class="rules-grid rules-grid-row">
                {field(`threshold[${i}].name`, "rules.f.name", thresholdInput(i, "name", { wide: true }))}
                {field(
                  `threshold[${i}].metric`,
                  "rules.f.metric",
                  metricSelect(`threshold[${i}].metric`, () => row().metric, (v) => props.setValues("thresholds", i, "metric", v)),
                )}
                {field(
                  `threshold[${i}].op`,
                  "rules.f.op",
                  choice(`threshold[${i}].op`, () => row().op, COMPARISONS, comparisonSymbol, (op) => props.setValues("thresholds", i, "op", op)),
                )}
                {field(`threshold[${i}].value`, "rules.f.value", thresholdInput(i, "value"))}
                {field(`threshold[${i}].for_minutes`, "rules.f.forMinutes", thresholdInput(i, "for_minutes"))}
                <div class="field rules-action" data-field={`threshold[${i}].action`}>
                  <label for={fieldId(`threshold[${i}].action`)}>{t("rules.f.action")}</label>
                  <span class="rules-action-pair">
                    <select
                      id={fieldId(`threshold[${i}].action_kind`)}
                      aria-label={t("rules.f.actionKind")}
                      value={row().action_kind}
                      onChange={(event) => {
                        props.setValues("thresholds", i, "action_kind", event.currentTarget.value as ActionKind);
                        props.changed();
                      }}
                    >
                      <For each={ACTION_KINDS}>
                        {(kind) => (
                          <option value={kind} selected={kind === row().action_kind}>
                            {t(ACTION_WORDS[kind])}
                          </option>
                        )}
                      </For>
                    </select>
                    {thresholdInput(i, "action")}
                  </span>
                  <FieldNotes
                    field={`threshold[${i}].action`}
                    notes={props.notes.get(`threshold[${i}].action`)}
                    problem={props.problems[`threshold[${i}].action`]}
                  />
                </div>
                {field(`threshold[${i}].cooldown_minutes`, "rules.f.cooldown", thresholdInput(i, "cooldown_minutes"))}
              </div>
              {removeButton("threshold", i, row().name, () => props.setValues("thresholds", (rows) => rows.filter((_, n) => n !== i)))}
            </fieldset>
          )}
        </Index>
        <button
          type="button"
          class="btn btn-small"
          id="rules-add-threshold"
          onClick={() => {
            props.setValues("thresholds", (rows) => [...rows, newThreshold(rows.length + 1)]);
            props.changed();
          }}
        >
          {t("rules.f.addThreshold")}
        </button>
      </fieldset>

      <fieldset class="rules-fieldset">
        <legend>{t("rules.f.targets")}</legend>
        <p class="field-hint">{t("rules.h.targets")}</p>
        <Index each={props.values.targets}>
          {(row, i) => (
            <fieldset class="rules-row" data-testid="rules-target-row" data-index={i}>
              <legend>{t("rules.f.targetN", { n: i + 1, name: row().name })}</legend>
              <div class="rules-grid rules-grid-row">
                {field(`target[${i}].name`, "rules.f.name", targetInput(i, "name", { wide: true }))}
                {field(
                  `target[${i}].metric`,
                  "rules.f.metric",
                  metricSelect(`target[${i}].metric`, () => row().metric, (v) => props.setValues("targets", i, "metric", v)),
                )}
                {field(`target[${i}].target`, "rules.f.target", targetInput(i, "target"))}
                {field(`target[${i}].tolerance`, "rules.f.tolerance", targetInput(i, "tolerance"))}
                {field(`target[${i}].scale_in_stabilization_minutes`, "rules.f.stabilization", targetInput(i, "scale_in_stabilization_minutes"))}
                {field(`target[${i}].scale_out_sustain_minutes`, "rules.f.sustain", targetInput(i, "scale_out_sustain_minutes"))}
                {field(`target[${i}].overload_gpus`, "rules.f.overload", targetInput(i, "overload_gpus"))}
              </div>
              <Show when={row().metric.trim() === "busy_gpus"}>
                <p class="field-hint" data-testid="rules-target-busy-hint">
                  {t("rules.h.targetBusy")}
                </p>
              </Show>
              {removeButton("target", i, row().name, () => props.setValues("targets", (rows) => rows.filter((_, n) => n !== i)))}
            </fieldset>
          )}
        </Index>
        <button
          type="button"
          class="btn btn-small"
          id="rules-add-target"
          onClick={() => {
            props.setValues("targets", (rows) => [...rows, newTarget(rows.length + 1)]);
            props.changed();
          }}
        >
          {t("rules.f.addTarget")}
        </button>
      </fieldset>

      <fieldset class="rules-fieldset">
        <legend>{t("rules.f.schedules")}</legend>
        <p class="field-hint">{t("rules.h.schedules")}</p>
        <Index each={props.values.schedules}>
          {(row, i) => (
            <fieldset class="rules-row" data-testid="rules-schedule-row" data-index={i} data-kind={row().kind}>
              <legend>{t("rules.f.scheduleN", { n: i + 1, name: row().name })}</legend>
              <div class="rules-grid rules-grid-row">
                {field(`schedule[${i}].name`, "rules.f.name", scheduleInput(i, "name", { wide: true }))}
                {field(
                  `schedule[${i}].kind`,
                  "rules.f.kind",
                  choice(
                    `schedule[${i}].kind`,
                    () => row().kind,
                    SCHEDULE_KINDS,
                    (kind) => t(KIND_WORDS[kind]),
                    (kind) => props.setValues("schedules", i, "kind", kind),
                  ),
                )}
                <Show
                  when={row().kind === "cron"}
                  fallback={
                    <>
                      {field(`schedule[${i}].start`, "rules.f.start", scheduleInput(i, "start", { wide: true, placeholder: LOCAL_DATE_TIME }))}
                      {field(`schedule[${i}].end`, "rules.f.end", scheduleInput(i, "end", { wide: true, placeholder: LOCAL_DATE_TIME }))}
                    </>
                  }
                >
                  {field(`schedule[${i}].cron`, "rules.f.cron", scheduleInput(i, "cron", { wide: true, placeholder: "0 20 * * *" }))}
                  {field(`schedule[${i}].duration_minutes`, "rules.f.duration", scheduleInput(i, "duration_minutes"))}
                </Show>
                {field(`schedule[${i}].time_zone`, "rules.f.timeZone", scheduleInput(i, "time_zone", { wide: true, placeholder: "Asia/Shanghai" }))}
                {field(
                  `schedule[${i}].bound`,
                  "rules.f.bound",
                  choice(
                    `schedule[${i}].bound`,
                    () => row().bound,
                    BOUNDS,
                    (bound) => t(BOUND_WORDS[bound]),
                    (bound) => props.setValues("schedules", i, "bound", bound),
                  ),
                )}
                {field(`schedule[${i}].gpus`, "rules.f.gpus", scheduleInput(i, "gpus"))}
              </div>
              {removeButton("schedule", i, row().name, () => props.setValues("schedules", (rows) => rows.filter((_, n) => n !== i)))}
            </fieldset>
          )}
        </Index>
        <button
          type="button"
          class="btn btn-small"
          id="rules-add-schedule"
          onClick={() => {
            props.setValues("schedules", (rows) => [...rows, newSchedule(rows.length + 1)]);
            props.changed();
          }}
        >
          {t("rules.f.addSchedule")}
        </button>
      </fieldset>
    </div>
  );
}
