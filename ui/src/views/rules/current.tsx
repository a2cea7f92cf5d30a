// The pool's saved rules: their version, mode and when they were saved, the warnings
// acknowledged with them, and the Enable / Shadow / Disable buttons (the one pressed is
// the mode now). Without saved rules it says so: the editor below writes the first.
//
// Stable selectors (see views/rules.tsx for the whole view's):
//   [data-testid="rules-current"] (data-version, data-mode; absent: none saved)
//   [data-testid="rules-version"] [data-testid="rules-mode"]
//   #rules-mode-enabled #rules-mode-shadow #rules-mode-disabled (aria-pressed)
//   [data-testid="rules-mode-error"]

import { denial } from "../../access";
import { For, Show, type JSX } from "solid-js";
import type { PoolRules, RulesMode } from "../../bindings";
import { t, type MessageKey } from "../../i18n";
import { formatDateTime } from "../../pool";
import { rulesModeText } from "../../reasons";
import { RULES_MODES } from "../../rules";
import { ErrorAlert } from "../error-alert";

const MODE_BUTTONS: Readonly<Record<RulesMode, MessageKey>> = {
  enabled: "rules.mode.enable",
  shadow: "rules.mode.shadow",
  disabled: "rules.mode.disable",
};

const MODE_NOW: Readonly<Record<RulesMode, MessageKey>> = {
  enabled: "rules.mode.now.enabled",
  shadow: "rules.mode.now.shadow",
  disabled: "rules.mode.now.disabled",
};

const MODE_WORDS: Readonly<Record<RulesMode, MessageKey>> = {
  enabled: "rules.mode.enabledWords",
  shadow: "rules.mode.shadowWords",
  disabled: "rules.mode.disabledWords",
};

export function CurrentRules(props: {
  rules: PoolRules | null;
  busy: boolean;
  error: unknown;
  onMode: (mode: RulesMode) => void;
}): JSX.Element {
  return (
    <section
      class="card rules-current"
      data-testid="rules-current"
      data-version={props.rules?.version}
      data-mode={props.rules?.mode}
      aria-labelledby="rules-current-title"
    >
      <h2 id="rules-current-title">{t("rules.current.title")}</h2>
      <Show when={props.rules} fallback={<p class="hint">{t("rules.current.none")}</p>}>
        {(rules) => (
          <>
            <p class="rules-current-line">
              <span class="badge badge-soft" data-testid="rules-version">
                {t("rules.current.version", { version: rules().version })}
              </span>
              <span class={`badge rules-mode-badge mode-${rules().mode}`} data-testid="rules-mode">
                {rulesModeText(rules().mode)}
              </span>
              <span class="hint">{t("rules.current.saved", { when: formatDateTime(rules().updated_at_ms) })}</span>
            </p>
            <p class="hint rules-mode-words">{t(MODE_WORDS[rules().mode])}</p>
            <Show when={rules().warnings.length > 0}>
              <p class="hint">{t("rules.current.warnings", { n: rules().warnings.length })}</p>
            </Show>
            <div class="btn-row rules-mode-buttons" role="group" aria-label={t("rules.mode.label")}>
              <For each={RULES_MODES}>
                {(mode) => (
                  <button
                    type="button"
                    id={`rules-mode-${mode}`}
                    class="btn btn-small"
                    classList={{ "btn-current": rules().mode === mode }}
                    aria-pressed={rules().mode === mode ? "true" : "false"}
                    disabled={
                      props.busy || rules().mode === mode || denial(mode === "enabled" ? "enable_rules" : "edit_rules") !== null
                    }
                    title={denial(mode === "enabled" ? "enable_rules" : "edit_rules") ?? undefined}
                    onClick={() => props.onMode(mode)}
                  >
                    {/* The mode now reads as a state ("✓ Enabled"), the others as what a click does. */}
                    {t(rules().mode === mode ? MODE_NOW[mode] : MODE_BUTTONS[mode])}
                  </button>
                )}
              </For>
            </div>
            <Show when={denial("enable_rules")}>
              {(why) => (
                <p class="hint" data-testid="role-denied" data-action="enable_rules">
                  {why()}
                </p>
              )}
            </Show>
          </>
        )}
      </Show>
      <Show when={props.error !== null}>
        <ErrorAlert lead={t("rules.mode.error")} error={props.error} testid="rules-mode-error" />
      </Show>
    </section>
  );
}
