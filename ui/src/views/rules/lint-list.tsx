// The linter's answer on the file as it is now, listed with the line and field of each
// problem: the errors that stop a save, then the warnings that need acknowledging. A
// button on each moves to it (the field in the form, the line in the TOML).
//
// Stable selectors (see views/rules.tsx):
//   [data-testid="rules-lint"] (data-state="pending|valid|invalid", data-errors, data-warnings)
//     li[data-testid="rules-lint-item"][data-severity="error|warning"][data-field][data-line]

import { For, Show, type JSX } from "solid-js";
import type { FieldPath, LintReport } from "../../bindings";
import { t } from "../../i18n";
import { phraseText } from "../../phrase";
import { lintProblemText } from "../../reasons";
import { placeText } from "../../rules";

export function LintList(props: {
  report: LintReport | null;
  pending: boolean;
  onGo: (path: FieldPath, line: number | null) => void;
}): JSX.Element {
  const state = (): "pending" | "valid" | "invalid" => {
    if (props.pending || !props.report) return "pending";
    return props.report.valid ? "valid" : "invalid";
  };
  const summary = (): string => {
    const report = props.report;
    if (!report) return t("rules.lint.checking");
    if (!report.valid) return t("rules.lint.errors", { n: report.errors.length });
    if (report.warnings.length > 0) return t("rules.lint.warnings", { n: report.warnings.length });
    return t("rules.lint.clean");
  };
  return (
    <div
      class="rules-lint"
      data-testid="rules-lint"
      data-state={state()}
      data-errors={props.report?.errors.length ?? 0}
      data-warnings={props.report?.warnings.length ?? 0}
    >
      <p class={`rules-lint-summary lint-${state()}`} aria-live="polite">
        {summary()}
      </p>
      <Show when={props.report && (props.report.errors.length > 0 || props.report.warnings.length > 0)}>
        <ul class="rules-lint-list">
          <For each={props.report?.errors ?? []}>
            {(error) => (
              <li data-testid="rules-lint-item" data-severity="error" data-field={error.field} data-line={error.line ?? ""}>
                <button type="button" class="btn btn-small btn-quiet" onClick={() => props.onGo(error.path, error.line)}>
                  {placeText(error.line, error.field)}
                </button>
                <span>{phraseText(error.words)}</span>
              </li>
            )}
          </For>
          <For each={props.report?.warnings ?? []}>
            {(warning) => (
              <li data-testid="rules-lint-item" data-severity="warning" data-field={warning.field} data-line={warning.line ?? ""}>
                <button type="button" class="btn btn-small btn-quiet" onClick={() => props.onGo(warning.path, warning.line)}>
                  {placeText(warning.line, warning.field)}
                </button>
                <span>{lintProblemText(warning.problem)}</span>
              </li>
            )}
          </For>
        </ul>
      </Show>
    </div>
  );
}
