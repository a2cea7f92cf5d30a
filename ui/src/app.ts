// The shell: header, left navigation, and the current view. The whole shell is
// rebuilt when the language changes (views are cheap; live state lives in stores).

import { appInfoState, onAppInfo } from "./app-info";
import { h, replaceChildren } from "./dom";
import { nextIndex } from "./format";
import { onLocaleChange, t, type MessageKey } from "./i18n";
import { activityView } from "./views/activity";
import { costsView } from "./views/costs";
import { fleetView } from "./views/fleet";
import { placeholderView } from "./views/placeholder";
import { poolView } from "./views/pool";
import { settingsView } from "./views/settings";
import { isViewId, VIEW_IDS, type View, type ViewId } from "./views/view";

const NAV_LABELS: Record<ViewId, MessageKey> = {
  fleet: "nav.fleet",
  pool: "nav.pool",
  rules: "nav.rules",
  costs: "nav.costs",
  activity: "nav.activity",
  settings: "nav.settings",
};

function createView(id: ViewId): View {
  switch (id) {
    case "fleet":
      return fleetView();
    case "pool":
      return poolView();
    case "rules":
      return placeholderView("rules", "rules.title", "rules.empty");
    case "costs":
      return costsView();
    case "activity":
      return activityView();
    case "settings":
      return settingsView();
  }
}

/** The view a hash names: its first segment (`#/fleet/HOST` is the Fleet view). */
function viewFromHash(): ViewId | null {
  const id = location.hash.replace(/^#\/?/, "").split("/")[0] ?? "";
  return isViewId(id) ? id : null;
}

export function startApp(root: HTMLElement): void {
  let currentId: ViewId = viewFromHash() ?? "fleet";
  let current: View | null = null;
  let main: HTMLElement | null = null;
  let navButtons: HTMLButtonElement[] = [];
  let badgeSlot: HTMLElement | null = null;

  function renderBadge(): void {
    if (!badgeSlot) return;
    const info = appInfoState().info;
    replaceChildren(
      badgeSlot,
      info && !info.collecting
        ? h(
            "span",
            { class: "badge badge-viewer", "data-testid": "viewer-badge", title: t("app.viewerBadgeTitle") },
            t("app.viewerBadge"),
            // The title is not read out everywhere; say it in words too.
            h("span", { class: "visually-hidden" }, ` — ${t("app.viewerBadgeTitle")}`),
          )
        : null,
      info?.demo
        ? h("span", { class: "badge badge-demo", "data-testid": "demo-badge", title: t("app.demoBadgeTitle") }, t("app.demoBadge"))
        : null,
    );
  }

  function show(id: ViewId): void {
    currentId = id;
    current?.destroy?.();
    current = createView(id);
    if (main) replaceChildren(main, current.el);
    for (const b of navButtons) {
      if (b.dataset.nav === id) b.setAttribute("aria-current", "page");
      else b.removeAttribute("aria-current");
    }
    current.mounted?.();
  }

  function navigate(id: ViewId): void {
    // From a sub-page (#/fleet/HOST) too: the view's own hash goes back to its top.
    if (location.hash !== `#/${id}`) location.hash = `#/${id}`; // hashchange calls show() if needed
    else if (id !== currentId) show(id);
  }

  function onNavKey(ev: KeyboardEvent): void {
    const index = navButtons.findIndex((b) => b === document.activeElement);
    if (index < 0) return;
    const next = nextIndex(index, ev.key, navButtons.length);
    if (next === null) return;
    ev.preventDefault();
    navButtons[next]?.focus();
  }

  function render(): void {
    const focusedId = document.activeElement instanceof HTMLElement ? document.activeElement.id : "";

    navButtons = VIEW_IDS.map((id) =>
      h(
        "button",
        { type: "button", class: "nav-item", id: `nav-${id}`, "data-nav": id, on: { click: () => navigate(id) } },
        h("span", { class: `nav-icon nav-icon-${id}`, "aria-hidden": "true" }),
        h("span", { class: "nav-label" }, t(NAV_LABELS[id])),
      ),
    );
    badgeSlot = h("span", { class: "badge-slot" });
    main = h("main", { id: "main", class: "main", tabindex: -1 });

    replaceChildren(
      root,
      h("a", { class: "skip-link", href: "#main", on: { click: skipToMain } }, t("app.skipToContent")),
      h(
        "header",
        { class: "app-header" },
        h("span", { class: "brand" }, h("span", { class: "brand-mark", "aria-hidden": "true" }), t("app.name")),
        h("span", { class: "tagline" }, t("app.tagline")),
        badgeSlot,
      ),
      h(
        "nav",
        { class: "app-nav", "aria-label": t("nav.label") },
        h("ul", { on: { keydown: onNavKey } }, navButtons.map((b) => h("li", null, b))),
      ),
      main,
    );
    renderBadge();
    show(currentId);

    if (focusedId) document.getElementById(focusedId)?.focus();
  }

  function skipToMain(ev: MouseEvent): void {
    ev.preventDefault();
    main?.focus();
  }

  window.addEventListener("hashchange", () => {
    const id = viewFromHash();
    if (id && id !== currentId) show(id);
  });
  onLocaleChange(render);
  onAppInfo(renderBadge);
  render();
}
