// The Rules form's Test of a PromQL metric: the query run now against the rules'
// Prometheus server (the pool's name templated in), its value or why none.

import { createSignal, Match, Show, Switch, type JSX } from "solid-js";
import { commands, type PromqlValue } from "../../bindings";
import { t } from "../../i18n";
import { call } from "../../ipc";
import { ErrorAlert } from "../error-alert";

type Tested = { kind: "idle" } | { kind: "busy" } | { kind: "ok"; value: PromqlValue } | { kind: "error"; error: unknown };

export function PromqlTest(props: { pool: string; query: () => string; index: number }): JSX.Element {
  const [tested, setTested] = createSignal<Tested>({ kind: "idle" });
  const run = async (): Promise<void> => {
    setTested({ kind: "busy" });
    const res = await call(() => commands.testPromql(props.pool, props.query()));
    setTested(res.status === "ok" ? { kind: "ok", value: res.data } : { kind: "error", error: res.error });
  };
  const answered = (): PromqlValue | null => {
    const now = tested();
    return now.kind === "ok" ? now.value : null;
  };
  const failed = (): unknown => {
    const now = tested();
    return now.kind === "error" ? now.error : null;
  };
  return (
    <div class="promql-test" data-testid="promql-test" data-index={props.index}>
      <button
        type="button"
        class="btn btn-small"
        disabled={props.query().trim() === "" || tested().kind === "busy"}
        onClick={() => void run()}
      >
        {t("rules.promql.test")}
      </button>
      <span role="status" aria-live="polite" class="promql-test-result">
        <Switch>
          <Match when={tested().kind === "busy"}>{t("rules.promql.testing")}</Match>
          <Match when={answered()}>
            {(value) => (
              <span data-testid="promql-value">
                {t("rules.promql.value", { value: value().value.toLocaleString(), query: value().query })}
              </span>
            )}
          </Match>
        </Switch>
      </span>
      <Show when={failed() !== null}>
        <ErrorAlert lead={t("rules.promql.failed")} error={failed()} testid="promql-error" />
      </Show>
    </div>
  );
}
