// A view not built yet (Rules): it says what will come there.

import { t, type MessageKey } from "../i18n";
import { mountView } from "./solid";
import type { View, ViewId } from "./view";

export function placeholderView(id: ViewId, title: MessageKey, body: MessageKey): View {
  const { el, dispose } = mountView(id, { className: "view", labelledBy: `view-${id}-title` }, () => (
    <>
      <header class="view-header">
        <h1 id={`view-${id}-title`}>{t(title)}</h1>
      </header>
      <div class="empty-state" data-testid="empty-state">
        <span class="badge badge-soft">{t("common.comingSoon")}</span>
        <p>{t(body)}</p>
      </div>
    </>
  ));
  return { el, destroy: dispose };
}
