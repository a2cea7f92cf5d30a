// The shell: skip link, header (brand, the viewer and demo badges following app info),
// the left navigation and the current view, routed by the hash (`#/VIEW`, and
// `#/fleet/HOST` for a host's detail, which the Fleet view routes itself).
//
// On Solid: the shell is rendered once. A language change re-renders its words in place
// (the nav buttons stay the same elements, so the focus stays where it was) and remounts
// only the current view, whose words are read once, putting the focus back on the
// element of the same id. The shell mounts any `View` ({el, mounted?, destroy?}),
// whatever the view is written in.
//
// Stable selectors (end-to-end tests rely on these):
//   a.skip-link                                  to #main
//   [data-testid="viewer-badge"]                 another process collects (app info)
//   [data-testid="follower-badge"]               another console sharing the database enforces
//   [data-testid="leader-badge"]                 this console was elected to enforce (its term)
//   [data-testid="demo-badge"]                   the built-in demo fleet (app info)
//   #nav-fleet|pool|rules|costs|activity|settings   nav buttons, data-nav=ID, aria-current="page" on the current one
//   main#main                                    the current view's section (#view-ID)

import { createEffect, createRoot, createSignal, For, on, onCleanup, Show, type JSX } from "solid-js";
import { render } from "solid-js/web";
import { identity, loadIdentity } from "./access";
import { appInfoState, onAppInfo } from "./app-info";
import { commands, type EnforcerRole } from "./bindings";
import { nextIndex } from "./format";
import { every } from "./live";
import { roleText } from "./reasons";
import { getLocale, onLocaleChange, t, type MessageKey } from "./i18n";
import { activityView } from "./views/activity";
import { costsView } from "./views/costs";
import { fleetView } from "./views/fleet";
import { poolView } from "./views/pool";
import { rulesView } from "./views/rules";
import { settingsView } from "./views/settings";
import { leaveForms } from "./unsaved";
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
      return rulesView();
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

/** How often the header asks whether this console enforces (an election moves within
 * 10 s; the answer also turns with time, as a lease runs out, so it stays a slow poll). */
const ROLE_REFRESH_MS = 5_000;

/** Keeps `el` (the control just used, e.g. the language radio) at `top` px from the window's
 * top while the view re-laid out in another language fills in (its tables load after it
 * mounts), until the operator scrolls, clicks or types, or a few seconds pass: WebKit has no
 * scroll anchoring, and the page moved under the pointer. Returns the stop function. */
function anchor(main: HTMLElement, view: HTMLElement, el: HTMLElement, top: number): () => void {
  const keep = (): void => {
    const moved = el.getBoundingClientRect().top - top;
    if (Math.abs(moved) >= 1) main.scrollTop += moved;
  };
  keep();
  const observer = new ResizeObserver(keep);
  observer.observe(view);
  const inputs = ["wheel", "pointerdown", "keydown", "touchstart"] as const;
  const stop = (): void => {
    observer.disconnect();
    clearTimeout(timer);
    for (const kind of inputs) window.removeEventListener(kind, stop, true);
  };
  const timer = setTimeout(stop, 3_000);
  for (const kind of inputs) window.addEventListener(kind, stop, true);
  return stop;
}

function Shell(): JSX.Element {
  const [locale, setLocaleShown] = createSignal(getLocale());
  onCleanup(onLocaleChange(setLocaleShown));
  /** `t`, read again when the language changes. */
  const tr = (key: MessageKey): string => {
    locale();
    return t(key);
  };
  const [info, setInfo] = createSignal(appInfoState().info);
  onCleanup(onAppInfo(() => setInfo(appInfoState().info)));
  // Whether this console enforces: asked every few seconds, as an election among consoles
  // sharing a database can move it. Only a shared database's roles get a badge.
  const [role, setRole] = createSignal<EnforcerRole | null>(null);
  const askRole = (): void => {
    commands.enforcerRole().then(setRole, () => setRole(null));
  };
  askRole();
  void loadIdentity();
  onCleanup(every(ROLE_REFRESH_MS)(askRole));
  const elected = (): number | undefined => {
    const now = role();
    return now?.kind === "elected" ? now.term : undefined;
  };
  const [current, setCurrent] = createSignal<ViewId>(viewFromHash() ?? "fleet");
  const navButtons: HTMLButtonElement[] = [];
  let main!: HTMLElement;

  /** The hash the current view was shown for: where a refused navigation goes back to. */
  let shownHash = location.hash;
  /** A navigation the operator already agreed to (Discard): not asked about again. */
  let agreed: string | null = null;

  function onHashChange(): void {
    const id = viewFromHash();
    const target = location.hash;
    if (!id || id === current()) {
      shownHash = target;
      return;
    }
    if (agreed !== target) {
      // Another view would throw away a changed form: go back and ask it first
      // (unsaved.ts); the navigation happens only on Discard.
      let now = true;
      const proceed = (): void => {
        if (now) return;
        agreed = target;
        location.hash = target;
      };
      const free = leaveForms(proceed);
      now = false;
      if (!free) {
        history.replaceState(null, "", shownHash || `#/${current()}`);
        return;
      }
    }
    agreed = null;
    shownHash = target;
    setCurrent(id);
  }
  window.addEventListener("hashchange", onHashChange);
  onCleanup(() => window.removeEventListener("hashchange", onHashChange));

  function navigate(id: ViewId): void {
    // From a sub-page (#/fleet/HOST) too: the view's own hash goes back to its top.
    if (location.hash !== `#/${id}`) location.hash = `#/${id}`; // hashchange shows it if needed
    else if (id !== current()) leaveForms(() => setCurrent(id));
  }

  function onNavKey(ev: KeyboardEvent): void {
    const index = navButtons.findIndex((b) => b === document.activeElement);
    if (index < 0) return;
    const next = nextIndex(index, ev.key, navButtons.length);
    if (next === null) return;
    ev.preventDefault();
    navButtons[next]?.focus();
  }

  // The current view, mounted into <main>; a new one for another view or another language.
  let focusedBefore = "";
  let focusedTop: number | null = null;
  let lastPointed: HTMLElement | null = null;
  const pointed = (ev: PointerEvent): void => {
    const el = ev.target instanceof Element ? ev.target : null;
    // A click on a label is a click on its control.
    const control = el?.closest("label")?.control;
    lastPointed = control instanceof HTMLElement && control.id ? control : (el?.closest<HTMLElement>("[id]") ?? null);
  };
  document.addEventListener("pointerdown", pointed, true);
  onCleanup(() => document.removeEventListener("pointerdown", pointed, true));
  let scrolledBefore = 0;
  createEffect(
    on([current, locale], ([id], previous) => {
      const relocalized = previous !== undefined && previous[0] === id;
      const { view, dispose } = createRoot((dispose) => ({ view: createView(id), dispose }));
      main.replaceChildren(view.el);
      // Another view starts at its top; the same one in another language stays where it was.
      main.scrollTop = relocalized ? scrolledBefore : 0;
      view.mounted?.();
      const focused = relocalized && focusedBefore ? document.getElementById(focusedBefore) : null;
      focused?.focus({ preventScroll: true });
      const stopAnchor = focused && focusedTop !== null ? anchor(main, view.el, focused, focusedTop) : null;
      onCleanup(() => {
        // Read before the view goes: its elements leave the document with it.
        // The control in use: the focused one, or (WebKit does not focus a clicked radio)
        // the last one clicked.
        const focused = document.activeElement instanceof HTMLElement ? document.activeElement : null;
        const active = focused && focused !== main && focused.id && main.contains(focused) ? focused : lastPointed;
        focusedBefore = active?.id ?? "";
        focusedTop = active && main.contains(active) ? active.getBoundingClientRect().top : null;
        // Not kept past this view: a detached element would hold the old view's whole tree.
        lastPointed = null;
        scrolledBefore = main.scrollTop;
        stopAnchor?.();
        view.destroy?.();
        dispose();
      });
    }),
  );

  return (
    <>
      <a
        class="skip-link"
        href="#main"
        onClick={(ev) => {
          ev.preventDefault();
          main.focus();
        }}
      >
        {tr("app.skipToContent")}
      </a>
      <header class="app-header">
        <span class="brand">
          <span class="brand-mark" aria-hidden="true" />
          {tr("app.name")}
        </span>
        <span class="tagline">{tr("app.tagline")}</span>
        <span class="badge-slot">
          <Show when={info()?.collecting === false}>
            <span class="badge badge-viewer" data-testid="viewer-badge" title={tr("app.viewerBadgeTitle")}>
              {tr("app.viewerBadge")}
              {/* The title is not read out everywhere; say it in words too. */}
              <span class="visually-hidden">{` — ${tr("app.viewerBadgeTitle")}`}</span>
            </span>
          </Show>
          <Show when={role()?.kind === "following"}>
            <span class="badge badge-viewer" data-testid="follower-badge" title={tr("app.followerBadgeTitle")}>
              {tr("app.followerBadge")}
              <span class="visually-hidden">{` — ${tr("app.followerBadgeTitle")}`}</span>
            </span>
          </Show>
          <Show when={elected()}>
            {(term) => (
              <span class="badge badge-leader" data-testid="leader-badge" title={tr("app.leaderBadgeTitle")}>
                {(locale(), t("app.leaderBadge", { term: term() }))}
              </span>
            )}
          </Show>
          <Show when={identity()?.shared ? identity() : null}>
            {(me) => (
              <span
                class="badge badge-role"
                data-testid="role-badge"
                data-role={me().role}
                title={(locale(), t("app.roleBadgeTitle", { who: me().who, role: roleText(me().role) }))}
              >
                {(locale(), t("app.roleBadge", { who: me().who, role: roleText(me().role) }))}
              </span>
            )}
          </Show>
          <Show when={info()?.demo}>
            <span class="badge badge-demo" data-testid="demo-badge" title={tr("app.demoBadgeTitle")}>
              {tr("app.demoBadge")}
            </span>
          </Show>
        </span>
      </header>
      <nav class="app-nav" aria-label={tr("nav.label")}>
        <ul onKeyDown={onNavKey}>
          <For each={VIEW_IDS}>
            {(id, index) => (
              <li>
                <button
                  ref={(el) => (navButtons[index()] = el)}
                  type="button"
                  class="nav-item"
                  id={`nav-${id}`}
                  data-nav={id}
                  aria-current={current() === id ? "page" : undefined}
                  onClick={() => navigate(id)}
                >
                  <span class={`nav-icon nav-icon-${id}`} aria-hidden="true" />
                  <span class="nav-label">{tr(NAV_LABELS[id])}</span>
                </button>
              </li>
            )}
          </For>
        </ul>
      </nav>
      <main ref={main} id="main" class="main" tabindex={-1} />
    </>
  );
}

export function startApp(root: HTMLElement): void {
  // index.html's skeleton stood in until now.
  root.replaceChildren();
  root.removeAttribute("aria-busy");
  render(() => <Shell />, root);
}
