// Pool, Rules and Activity are not built yet: each says what will come there.

import { h } from "../dom";
import { t, type MessageKey } from "../i18n";
import type { View, ViewId } from "./view";

export function placeholderView(id: ViewId, title: MessageKey, body: MessageKey): View {
  const el = h(
    "section",
    { class: "view", id: `view-${id}`, "data-view": id, "aria-labelledby": `view-${id}-title` },
    h("header", { class: "view-header" }, h("h1", { id: `view-${id}-title` }, t(title))),
    h(
      "div",
      { class: "empty-state", "data-testid": "empty-state" },
      h("span", { class: "badge badge-soft" }, t("common.comingSoon")),
      h("p", null, t(body)),
    ),
  );
  return { el };
}
