// The question before a pool is deleted: what goes (its GPUs are released), Delete or Keep
// it. "Keep it" has the focus when the question opens; Escape keeps it too.

import { createSignal, onMount, type JSX } from "solid-js";
import { gpus } from "../../costs";
import { t } from "../../i18n";

export function DeleteConfirm(props: {
  name: string;
  /** The GPUs the pool holds now. */
  gpus: number;
  /** Deletes the pool; the view words a failure. */
  onDelete: () => Promise<void>;
  /** The delete was answered (either way): the question closes. */
  onDone: () => void;
  onCancel: () => void;
}): JSX.Element {
  const [deleting, setDeleting] = createSignal(false);
  let keep: HTMLButtonElement | undefined;
  onMount(() => keep?.focus());

  async function remove(): Promise<void> {
    setDeleting(true);
    await props.onDelete();
    setDeleting(false);
    props.onDone();
  }

  return (
    <div
      class="confirm pool-delete-confirm"
      role="group"
      data-testid="pool-delete-confirm"
      aria-label={t("pool.deleteLabel", { name: props.name })}
      onKeyDown={(event) => {
        if (event.key === "Escape" && !deleting()) {
          event.preventDefault();
          props.onCancel();
        }
      }}
    >
      <span class="confirm-text">{t("pool.confirmDelete", { name: props.name, n: gpus(props.gpus) })}</span>
      <span class="btn-row">
        <button type="button" id="pool-delete-yes" class="btn btn-small btn-danger" disabled={deleting()} onClick={() => void remove()}>
          {t(deleting() ? "pool.deleting" : "pool.deleteYes")}
        </button>
        <button type="button" id="pool-delete-no" class="btn btn-small" ref={keep} disabled={deleting()} onClick={() => props.onCancel()}>
          {t("pool.deleteNo")}
        </button>
      </span>
    </div>
  );
}
