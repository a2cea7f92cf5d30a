// The rules as a form: limits (min, max, the step cap, the budget), scale-in (force, the
// release window, the deadband) and the threshold and target rules, a row each, added and
// removed. Each field shows what the linter says about it underneath (field-notes.tsx).
// The editor turns every change into the rule file (rules_to_toml), which stays the one
// source of truth; custom metrics, schedules and the file's `pool` are kept as they are
// (the TOML tab edits them).
//
// Stable selectors: inputs #rules-f-FIELD (rules.ts fieldId: #rules-f-limits-min_gpus,
//   #rules-f-scale_in-force, #rules-f-threshold-0-action, #rules-f-threshold-0-action_kind …)
//   [data-testid="rules-threshold-row"][data-index] #rules-remove-threshold-N #rules-add-threshold
//   [data-testid="rules-target-row"][data-index]    #rules-remove-target-N    #rules-add-target

import { For, Index, type JSX } from "solid-js";
import type { SetStoreFunction } from "solid-js/store";
import type { Comparison } from "../../bindings";
import type { Phrase } from "../../costs";
import { t, type MessageKey } from "../../i18n";
import { comparisonSymbol } from "../../reasons";
import {
  ACTION_KINDS,
  BUILTIN_METRICS,
  COMPARISONS,
  fieldId,
  newTarget,
  newThreshold,
  type ActionKind,
  type FieldNotes as Notes,
  type RulesFormValues,
  type TargetRow,
  type ThresholdRow,
} from "../../rules";
import { FieldNotes, invalid } from "./field-notes";

const ACTION_WORDS: Readonly<Record<ActionKind, MessageKey>> = {
  add_gpus: "rules.f.action.add_gpus",
  add_pct: "rules.f.action.add_pct",
  remove_gpus: "rules.f.action.remove_gpus",
  remove_pct: "rules.f.action.remove_pct",
  set: "rules.f.action.set",
};

type TopKey = Exclude<keyof RulesFormValues, "thresholds" | "targets" | "force">;

export function RulesForm(props: {
  values: RulesFormValues;
  setValues: SetStoreFunction<RulesFormValues>;
  /** After every change: the editor writes the file again. */
  changed: () => void;
  notes: Map<string, Notes>;
  problems: Record<string, Phrase>;
  /** Custom metrics the file declares (offered beside the built-in ones). */
  customMetrics: readonly string[];
}): JSX.Element {
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
  const text = (name: string, value: () => string, set: (v: string) => void, opts: { hint?: boolean; wide?: boolean; list?: string } = {}) => (
    <input
      id={fieldId(name)}
      type="text"
      class={opts.wide ? undefined : "num-input"}
      autocomplete="off"
      spellcheck={false}
      list={opts.list}
      aria-describedby={describedBy(name, opts.hint ?? false)}
      aria-invalid={invalid(props.notes.get(name), props.problems[name])}
      value={value()}
      onInput={(event) => {
        set(event.currentTarget.value);
        props.changed();
      }}
    />
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

  return (
    <div class="rules-form">
      <datalist id="rules-metric-names">
        <For each={[...BUILTIN_METRICS, ...props.customMetrics]}>{(name) => <option value={name} />}</For>
      </datalist>
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
        <legend>{t("rules.f.thresholds")}</legend>
        <p class="field-hint">{t("rules.h.thresholds")}</p>
        <Index each={props.values.thresholds}>
          {(row, i) => (
            <fieldset class="rules-row" data-testid="rules-threshold-row" data-index={i}>
              <legend>{t("rules.f.thresholdN", { n: i + 1, name: row().name })}</legend>
              <div class="rules-grid rules-grid-row">
                {field(`threshold[${i}].name`, "rules.f.name", thresholdInput(i, "name", { wide: true }))}
                {field(`threshold[${i}].metric`, "rules.f.metric", thresholdInput(i, "metric", { wide: true, list: "rules-metric-names" }))}
                {field(
                  `threshold[${i}].op`,
                  "rules.f.op",
                  <select
                    id={fieldId(`threshold[${i}].op`)}
                    aria-describedby={`${fieldId(`threshold[${i}].op`)}-notes`}
                    value={row().op}
                    onChange={(event) => {
                      props.setValues("thresholds", i, "op", event.currentTarget.value as Comparison);
                      props.changed();
                    }}
                  >
                    <For each={COMPARISONS}>
                      {(op) => (
                        <option value={op} selected={op === row().op}>
                          {comparisonSymbol(op)}
                        </option>
                      )}
                    </For>
                  </select>,
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
              <button
                type="button"
                class="btn btn-small btn-danger-quiet"
                id={`rules-remove-threshold-${i}`}
                onClick={() => {
                  props.setValues("thresholds", (rows) => rows.filter((_, n) => n !== i));
                  props.changed();
                }}
              >
                {t("rules.f.remove", { name: row().name })}
              </button>
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
                {field(`target[${i}].metric`, "rules.f.metric", targetInput(i, "metric", { wide: true, list: "rules-metric-names" }))}
                {field(`target[${i}].target`, "rules.f.target", targetInput(i, "target"))}
                {field(`target[${i}].tolerance`, "rules.f.tolerance", targetInput(i, "tolerance"))}
                {field(`target[${i}].scale_in_stabilization_minutes`, "rules.f.stabilization", targetInput(i, "scale_in_stabilization_minutes"))}
                {field(`target[${i}].scale_out_sustain_minutes`, "rules.f.sustain", targetInput(i, "scale_out_sustain_minutes"))}
                {field(`target[${i}].overload_gpus`, "rules.f.overload", targetInput(i, "overload_gpus"))}
              </div>
              <button
                type="button"
                class="btn btn-small btn-danger-quiet"
                id={`rules-remove-target-${i}`}
                onClick={() => {
                  props.setValues("targets", (rows) => rows.filter((_, n) => n !== i));
                  props.changed();
                }}
              >
                {t("rules.f.remove", { name: row().name })}
              </button>
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
    </div>
  );
}
