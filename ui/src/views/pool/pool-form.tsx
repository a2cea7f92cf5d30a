// Create a pool, or edit one: every field of PoolInput, each problem next to the field it
// names. The checks are the store's own, asked of the console (`check_pool`) as the
// operator types (for the fields typed in) and before each save; a refusal that names a
// field (its `field`) shows at that field too. The choices
// (terms, overlays, placements, regions, models) are the shell's PoolOptions; until they
// arrive, the pool's own value is the one choice. The model is picked from what the hosts
// report, under the catalog's names (the shell's `models`). Enter saves from any field;
// Cancel, Escape and leaving the view close it, and ask first when something was changed
// (unsaved.ts). The spot mix (spot.ts) is a fieldset of its own, enabled while the pool is
// interruptible; editing a pool starts from its stored mix and sends it back. Its example
// (how max would split) is the reconciler's split, asked of the console (`preview_mix`).

import { createEffect, createSignal, For, on, onCleanup, onMount, Show, type JSX } from "solid-js";
import { createStore, reconcile } from "solid-js/store";
import {
  commands,
  type FieldProblem,
  type MixExample,
  type OverlayMode,
  type PlacementPolicy,
  type PoolForm as PoolFormAnswer,
  type PoolOptions,
  type PoolView,
  type Term,
} from "../../bindings";
import { formatCount } from "../../costs";
import { explainError } from "../../explain";
import { t, type MessageKey } from "../../i18n";
import { call, fieldOf, ipcError } from "../../ipc";
import { problemsAt } from "../../hosts";
import { phraseText } from "../../phrase";
import {
  defaultModel,
  formIsDirty,
  modelChoices,
  modelWhereText,
  overlayText,
  placementText,
  POOL_FIELDS,
  regionChoices,
  termText,
  type PoolField,
  type PoolFormValues,
} from "../../pool";
import { mixExampleText, SPOT_FIELDS, spotFormValues, type SpotField, type SpotFormValues } from "../../spot";
import { createUnsaved, type UnsavedGate } from "../../unsaved";
import { DiscardQuestion } from "../discard-question";
import { ErrorAlert, ErrorDetail } from "../error-alert";

/** A problem shown at a field: the client's check, or the console's refusal (its detail in English). */
type ShownProblem = { sentence: string; detail: string | null; english: boolean; source: "client" | "server" };
/** Every input the form has, and so every field a problem (the client's or the console's) may name. */
type FormField = PoolField | SpotField;
type Problems = Partial<Record<FormField, ShownProblem>>;
const FORM_FIELDS: readonly FormField[] = [...POOL_FIELDS, ...SPOT_FIELDS];
type ChoiceField = "term" | "overlay" | "placement";


function FieldError(props: { name: FormField; problem: ShownProblem | undefined }): JSX.Element {
  return (
    <div id={`pool-f-${props.name}-error`} class="field-error-box" data-field={props.name}>
      <Show when={props.problem}>
        {(problem) => (
          <p class="field-error" role="alert" data-source={problem().source}>
            <span class="alert-line">{problem().sentence}</span>
            <Show when={problem().detail}>{(detail) => <ErrorDetail text={detail()} english={problem().english} prefix={false} />}</Show>
          </p>
        )}
      </Show>
    </div>
  );
}

function Field(props: { name: FormField; label: MessageKey; hint: MessageKey; problem: ShownProblem | undefined; children: JSX.Element }): JSX.Element {
  return (
    <div class={`field field-${props.name}`}>
      <label for={`pool-f-${props.name}`}>{t(props.label)}</label>
      {props.children}
      <p class="field-hint" id={`pool-f-${props.name}-hint`}>
        {t(props.hint)}
      </p>
      <FieldError name={props.name} problem={props.problem} />
    </div>
  );
}

export function PoolForm(props: {
  /** The pool to edit (as it was when the form opened), or null to create one. */
  pool: PoolView | null;
  options: PoolOptions | null;
  onDone: (saved: PoolView, created: boolean) => Promise<void>;
  onCancel: () => void;
  /** The form's gate: the view asks it before replacing the form (another pool, another form). */
  gateRef?: (gate: UnsavedGate) => void;
}): JSX.Element {
  const initial = props.pool;
  const editing = initial?.name ?? null;
  const initialTerm: Term = initial?.term ?? "month";
  const initialOverlay: OverlayMode = initial?.overlay ?? "hour";
  const initialPlacement: PlacementPolicy = initial?.placement ?? "pack";
  const [values, setValues] = createStore<PoolFormValues & SpotFormValues>({
    name: initial?.name ?? "",
    model: initial?.model ?? "",
    regions: [...(initial?.regions ?? [])],
    min: String(initial?.min ?? 0),
    max: String(initial?.max ?? 8),
    base_gpus: String(initial?.base_gpus ?? 0),
    term: initialTerm,
    overlay: initialOverlay,
    placement: initialPlacement,
    interruptible: initial?.interruptible ?? false,
    release_at_unit_end: initial?.release_at_unit_end ?? false,
    ...spotFormValues(initial?.spot ?? null),
  });
  /** What the form opened with (and the choices it was given since): Escape asks when it differs. */
  const baseline: PoolFormValues & SpotFormValues = { ...values, regions: [...values.regions] };
  const [problems, setProblems] = createStore<Problems>({});
  const [state, setState] = createStore<{ busy: boolean; error: unknown }>({ busy: false, error: null });
  const { asking, gate } = createUnsaved({ dirty: () => formIsDirty(values, baseline), busy: () => state.busy });
  props.gateRef?.(gate);
  let form!: HTMLFormElement;
  let saveButton!: HTMLButtonElement;

  // What each select offers: the options, or until they arrive the pool's own value.
  const terms = (): readonly Term[] => props.options?.terms ?? [initialTerm];
  const overlays = (): readonly OverlayMode[] => props.options?.overlays ?? [initialOverlay];
  const placements = (): readonly PlacementPolicy[] => props.options?.placements ?? [initialPlacement];
  const regions = () =>
    regionChoices(
      props.options?.regions ?? [],
      initial?.regions ?? [],
      props.options?.models.find((m) => m.model === values.model) ?? null,
    );

  // When the options arrive, a value they do not offer gives way to the first they do.
  createEffect(() => {
    if (!props.options) return;
    const offered: [ChoiceField, readonly string[]][] = [
      ["term", terms()],
      ["overlay", overlays()],
      ["placement", placements()],
    ];
    for (const [name, list] of offered) {
      if (!list.includes(values[name])) {
        setValues(name, list[0] ?? "");
        baseline[name] = list[0] ?? "";
      }
    }
    // A new pool starts on the first priced model a host reports.
    if (!editing && values.model === "" && baseline.model === "") {
      const model = defaultModel(props.options.models);
      setValues("model", model);
      baseline.model = model;
    }
  });
  const models = () => modelChoices(props.options?.models ?? [], editing ? (initial?.model ?? "") : "");

  onMount(() => {
    form.querySelector<HTMLElement>(editing ? "#pool-f-model" : "#pool-f-name")?.focus();
    form.scrollIntoView?.({ block: "nearest" });
  });

  /** The form as typed, for the console's check and the mix's example. */
  const typed = (): PoolFormAnswer => ({
    name: values.name,
    model: values.model,
    regions: [...values.regions],
    min: values.min,
    max: values.max,
    base_gpus: values.base_gpus,
    term: values.term,
    overlay: values.overlay,
    placement: values.placement,
    interruptible: values.interruptible,
    release_at_unit_end: values.release_at_unit_end,
    on_demand_floor: values.on_demand_floor,
    spot_pct: values.spot_pct,
    max_price: values.max_price_fen,
    stored_spot: initial?.spot ?? null,
  });
  const checkProblem = (problem: FieldProblem): ShownProblem => ({ sentence: phraseText(problem.words), detail: null, english: false, source: "client" });

  // As the operator types: the fields typed in so far get the check's words a moment after.
  const touched = new Set<FormField>();
  let checkSeq = 0;
  let checkTimer: number | undefined;
  let disposed = false;
  onCleanup(() => {
    disposed = true;
    window.clearTimeout(checkTimer);
  });
  async function checkTyped(): Promise<void> {
    const seq = ++checkSeq;
    const res = await call(() => commands.checkPool(typed()));
    if (disposed || seq !== checkSeq || state.busy || res.status !== "ok") return;
    for (const field of touched) {
      const problem = res.data.problems.find((p) => p.field === field);
      if (problem) setProblems(field, checkProblem(problem));
      else if (problems[field]?.source === "client") setProblems(field, undefined);
    }
  }

  // The mix's example: how max splits under what is typed, as the console would split it.
  const [example, setExample] = createSignal<MixExample | null>(null);
  let exampleSeq = 0;
  createEffect(
    on(
      () => [values.interruptible, values.max, values.base_gpus, values.on_demand_floor, values.spot_pct],
      () => {
        const seq = ++exampleSeq;
        if (!values.interruptible) return setExample(null);
        void commands.previewMix(typed()).then((answer) => {
          if (!disposed && seq === exampleSeq) setExample(answer);
        });
      },
    ),
  );

  function edit<K extends keyof (PoolFormValues & SpotFormValues)>(name: K, value: (PoolFormValues & SpotFormValues)[K]): void {
    setValues(name, value);
    setProblems(name, undefined);
    // The mix's fields are disabled without Interruptible: a problem shown there goes with them.
    if (name === "interruptible") for (const field of SPOT_FIELDS) setProblems(field, undefined);
    touched.add(name);
    window.clearTimeout(checkTimer);
    checkTimer = window.setTimeout(() => void checkTyped(), 300);
  }

  function toggleRegion(region: string, on: boolean): void {
    const rest = values.regions.filter((r) => r !== region);
    edit("regions", on ? [...rest, region] : rest);
  }

  function focusField(name: FormField): void {
    const css = name === "regions" ? "#pool-f-regions input" : `#pool-f-${name}`;
    form.querySelector<HTMLElement>(css)?.focus();
  }

  /** Cancel and Escape: a form as it opened closes; a changed one asks first. */
  function cancel(): void {
    gate.leave(() => props.onCancel());
  }

  function keepEditing(): void {
    gate.keep();
    form.querySelector<HTMLElement>("#pool-f-save")?.focus();
  }

  async function save(): Promise<void> {
    if (state.busy) return;
    setProblems(reconcile({}));
    setState("error", null);
    checkSeq++;
    setState("busy", true);
    const checked = await call(() => commands.checkPool(typed()));
    if (disposed) return;
    if (checked.status === "ok" && checked.data.input === null) {
      setState("busy", false);
      const found = problemsAt(checked.data.problems, FORM_FIELDS);
      for (const { field, problem } of found) setProblems(field, checkProblem(problem));
      const first = found[0];
      if (first) focusField(first.field);
      return;
    }
    if (checked.status !== "ok" || checked.data.input === null) {
      setState({ busy: false, error: checked.status === "ok" ? null : checked.error });
      saveButton.focus();
      return;
    }
    const input = checked.data.input;
    const res = await call(() => (editing ? commands.updatePool(editing, input) : commands.createPool(input)));
    setState("busy", false);
    if (res.status === "ok") {
      await props.onDone(res.data, editing === null);
      return;
    }
    const error = ipcError(res.error);
    const named = error?.kind === "invalid_input" ? fieldOf(error, FORM_FIELDS) : null;
    if (named) {
      const explained = explainError(res.error);
      setProblems(named, { sentence: t("pool.form.serverField"), detail: explained.detail, english: explained.detailIsEnglish, source: "server" });
      focusField(named);
      return;
    }
    setState("error", res.error);
    saveButton.focus();
  }

  const text = (
    name: "name" | "min" | "max" | "base_gpus" | SpotField,
    opts: { required?: boolean; numeric?: boolean; decimal?: boolean } = {},
  ): JSX.Element => (
    <input
      id={`pool-f-${name}`}
      name={name}
      type="text"
      class={opts.numeric || opts.decimal ? "num-input" : undefined}
      inputmode={opts.decimal ? "decimal" : opts.numeric ? "numeric" : undefined}
      required={opts.required}
      autocomplete="off"
      spellcheck={false}
      aria-describedby={`pool-f-${name}-hint`}
      aria-invalid={problems[name] ? "true" : undefined}
      value={values[name]}
      onInput={(event) => edit(name, event.currentTarget.value)}
    />
  );
  const number = (name: "min" | "max" | "base_gpus" | "on_demand_floor" | "spot_pct"): JSX.Element => text(name, { numeric: true });
  const exampleText = () => {
    const answer = example();
    return answer ? mixExampleText(answer) : null;
  };
  const choice = <V extends string>(name: ChoiceField, list: () => readonly V[], words: (value: V) => string): JSX.Element => (
    <select
      id={`pool-f-${name}`}
      name={name}
      aria-describedby={`pool-f-${name}-hint`}
      aria-invalid={problems[name] ? "true" : undefined}
      value={values[name]}
      onChange={(event) => edit(name, event.currentTarget.value)}
    >
      <For each={list()}>
        {(value) => (
          <option value={value} selected={value === values[name]}>
            {words(value)}
          </option>
        )}
      </For>
    </select>
  );
  const check = (name: "interruptible" | "release_at_unit_end", label: MessageKey, hint: MessageKey): JSX.Element => (
    <div class="field field-check-line">
      <label class="check" for={`pool-f-${name}`}>
        <input
          type="checkbox"
          id={`pool-f-${name}`}
          name={name}
          aria-describedby={`pool-f-${name}-hint`}
          aria-invalid={problems[name] ? "true" : undefined}
          checked={values[name]}
          onChange={(event) => edit(name, event.currentTarget.checked)}
        />
        {t(label)}
      </label>
      <p class="field-hint" id={`pool-f-${name}-hint`}>
        {t(hint)}
      </p>
      <FieldError name={name} problem={problems[name]} />
    </div>
  );

  return (
    <form
      id="pool-form"
      class="card pool-form"
      ref={form}
      data-mode={editing ? "edit" : "create"}
      novalidate
      aria-labelledby="pool-form-title"
      aria-busy={state.busy ? "true" : undefined}
      onSubmit={(event) => {
        event.preventDefault();
        void save();
      }}
      onKeyDown={(event) => {
        if (event.key === "Escape") {
          event.preventDefault();
          cancel();
          return;
        }
        // Enter saves from any field (a select or a checkbox does not submit by itself);
        // on a button it is the button's own click.
        const target = event.target;
        if (
          event.key === "Enter" &&
          !event.isComposing &&
          (target instanceof HTMLInputElement || target instanceof HTMLSelectElement)
        ) {
          event.preventDefault();
          void save();
        }
      }}
    >
      <h2 id="pool-form-title">{editing ? t("pool.form.editTitle", { name: editing }) : t("pool.form.createTitle")}</h2>
      <p class="hint form-keys">{t("pool.form.keys")}</p>
      <div class="form-grid">
        <Field name="name" label="pool.f.name" hint="pool.h.name" problem={problems.name}>
          {text("name", { required: true })}
        </Field>
        <Field name="model" label="pool.f.model" hint="pool.h.model" problem={problems.model}>
          <select
            id="pool-f-model"
            name="model"
            required
            aria-describedby="pool-f-model-hint"
            aria-invalid={problems.model ? "true" : undefined}
            value={values.model}
            onChange={(event) => edit("model", event.currentTarget.value)}
          >
            <Show when={models().length === 0}>
              <option value="" selected>
                {t(props.options ? "pool.model.none" : "common.loading")}
              </option>
            </Show>
            <For each={models()}>
              {(choice) => (
                <option value={choice.value} disabled={choice.disabled} selected={choice.value === values.model}>
                  {choice.label}
                </option>
              )}
            </For>
          </select>
          <p class="field-hint model-where" data-testid="pool-f-model-where">
            {modelWhereText(props.options?.models ?? [], values.model) ?? ""}
          </p>
        </Field>
        <div class="field field-regions field-wide">
          <span class="field-label" id="pool-f-regions-label">
            {t("pool.f.regions")}
          </span>
          <div
            class="region-checks"
            id="pool-f-regions"
            role="group"
            aria-labelledby="pool-f-regions-label"
            aria-invalid={problems.regions ? "true" : undefined}
          >
            <Show when={regions().length > 0} fallback={<p class="hint">{t(props.options ? "pool.f.regionsNone" : "common.loading")}</p>}>
              <For each={regions()}>
                {(offer, i) => (
                  <label class="check region-check" for={`pool-f-region-${i()}`}>
                    <input
                      type="checkbox"
                      id={`pool-f-region-${i()}`}
                      name="regions"
                      value={offer.region}
                      checked={values.regions.includes(offer.region)}
                      onChange={(event) => toggleRegion(offer.region, event.currentTarget.checked)}
                    />
                    <span class="region-name">{offer.region}</span>
                    <span class="region-models hint">
                      {offer.gpu_models.length > 0
                        ? t(offer.hosts === 1 ? "pool.f.regionOffer.one" : "pool.f.regionOffer", { hosts: formatCount(offer.hosts), models: offer.gpu_models.join(t("common.listSeparator")) })
                        : t(offer.hosts === 1 ? "pool.f.regionUnknown.one" : "pool.f.regionUnknown", { hosts: formatCount(offer.hosts) })}
                    </span>
                  </label>
                )}
              </For>
            </Show>
          </div>
          <p class="field-hint" id="pool-f-regions-hint">
            {t("pool.h.regions")}
          </p>
          <FieldError name="regions" problem={problems.regions} />
        </div>
        <div class="field-trio field-wide">
          <Field name="min" label="pool.f.min" hint="pool.h.min" problem={problems.min}>
            {number("min")}
          </Field>
          <Field name="max" label="pool.f.max" hint="pool.h.max" problem={problems.max}>
            {number("max")}
          </Field>
          <Field name="base_gpus" label="pool.f.base" hint="pool.h.base" problem={problems.base_gpus}>
            {number("base_gpus")}
          </Field>
        </div>
        <Field name="term" label="pool.f.term" hint="pool.h.term" problem={problems.term}>
          {choice("term", terms, termText)}
        </Field>
        <Field name="overlay" label="pool.f.overlay" hint="pool.h.overlay" problem={problems.overlay}>
          {choice("overlay", overlays, overlayText)}
        </Field>
        <Field name="placement" label="pool.f.placement" hint="pool.h.placement" problem={problems.placement}>
          {choice("placement", placements, placementText)}
        </Field>
        <div class="field-checks">
          {check("interruptible", "pool.f.interruptible", "pool.h.interruptible")}
          {check("release_at_unit_end", "pool.f.releaseAtUnitEnd", "pool.h.releaseAtUnitEnd")}
        </div>
        <fieldset
          class="pool-spot-mix field-wide"
          id="pool-f-spot"
          data-testid="pool-f-spot"
          disabled={!values.interruptible}
          aria-describedby="pool-f-spot-explain"
        >
          <legend>{t("pool.spot.title")}</legend>
          <p class="field-hint" id="pool-f-spot-explain">
            {t("pool.spot.explain")}
          </p>
          <Show when={!values.interruptible}>
            <p class="hint pool-spot-off" data-testid="pool-f-spot-off">
              {t("pool.spot.disabled")}
            </p>
          </Show>
          <div class="field-trio">
            <Field name="on_demand_floor" label="pool.f.onDemandFloor" hint="pool.h.onDemandFloor" problem={problems.on_demand_floor}>
              {number("on_demand_floor")}
            </Field>
            <Field name="spot_pct" label="pool.f.spotPct" hint="pool.h.spotPct" problem={problems.spot_pct}>
              {number("spot_pct")}
            </Field>
            <Field name="max_price_fen" label="pool.f.maxPrice" hint="pool.h.maxPrice" problem={problems.max_price_fen}>
              {text("max_price_fen", { decimal: true })}
            </Field>
          </div>
          <Show when={values.interruptible && exampleText()}>
            {(line) => (
              <p class="hint pool-spot-example" data-testid="pool-f-spot-example">
                {line()}
              </p>
            )}
          </Show>
        </fieldset>
      </div>
      <div class="form-actions">
        <button type="submit" id="pool-f-save" class="btn btn-primary" ref={saveButton} disabled={state.busy}>
          {t(editing ? "pool.form.saveEdit" : "pool.form.saveCreate")}
        </button>
        <button type="button" id="pool-f-cancel" class="btn btn-quiet" disabled={state.busy} onClick={cancel}>
          {t("pool.form.cancel")}
        </button>
      </div>
      {/* Under the buttons: the question and a refusal move neither Save nor Cancel (issue 43). */}
      <div class="form-error-box">
        <Show when={state.error !== null}>
          <ErrorAlert lead={t(editing ? "pool.form.saveError" : "pool.form.createError")} error={state.error} testid="pool-form-error" />
        </Show>
      </div>
      <Show when={asking()}>
        <DiscardQuestion id="pool-f" onDiscard={() => gate.discard()} onKeep={keepEditing} />
      </Show>
    </form>
  );
}
