// Settings: the host registry (views/hosts.tsx), language and theme (saved on this
// computer), which desktop notifications to show (kept in the data directory, through
// `notification_prefs`/`set_notification_prefs`), a pointer to the price catalog (in Costs),
// and About (version, data directory, who collects, where tokens are kept).
//
// Stable selectors: [data-testid="notifications-setting"] (the card), each checkbox
// input[data-testid="notify-scaled|notify-budget|notify-stale|notify-spot"],
// [data-testid="notifications-error"] (role=alert).
//
// On Solid: About follows the app-info store through a signal, in place; the Hosts
// section is a child component (its subscriptions go with the view's dispose).

import { createSignal, For, Match, onCleanup, Show, Switch, type JSX } from "solid-js";
import { commands, type NotificationPrefs } from "../bindings";
import { appInfoState, onAppInfo } from "../app-info";
import { describeError } from "../format";
import { getLocale, LOCALES, setLocale, tIn, t, type Locale, type MessageKey } from "../i18n";
import { saveLocale, saveThemePref } from "../prefs";
import { call } from "../ipc";
import { every } from "../live";
import { tokenStoreDetail, tokenStoreText } from "../reasons";
import { getThemePref, setThemePref, THEME_PREFS, type ThemePref } from "../theme";
import { leaveForms } from "../unsaved";
import { ErrorAlert, ErrorDetail } from "./error-alert";
import { HostsSection } from "./hosts";
import { mountView } from "./solid";
import type { View } from "./view";

function RadioGroup<V extends string>(props: {
  name: string;
  legend: string;
  options: readonly { value: V; label: string; lang?: string }[];
  selected: V;
  /** False: the change did not happen (the buttons go back to `selected`). */
  onChange: (value: V) => boolean | void;
}): JSX.Element {
  let group!: HTMLDivElement;
  return (
    <fieldset class="choice-group" data-testid={`${props.name}-setting`}>
      <legend>{props.legend}</legend>
      <div class="choices" ref={group}>
        <For each={props.options}>
          {(o) => {
            const id = `setting-${props.name}-${o.value}`;
            return (
              <label class="choice" for={id}>
                <input
                  type="radio"
                  id={id}
                  name={props.name}
                  value={o.value}
                  checked={o.value === props.selected}
                  onChange={() => {
                    if (props.onChange(o.value) !== false) return;
                    for (const radio of group.querySelectorAll<HTMLInputElement>("input[type=radio]")) {
                      radio.checked = radio.value === props.selected;
                    }
                  }}
                />
                <span lang={o.lang}>{o.label}</span>
              </label>
            );
          }}
        </For>
      </div>
    </fieldset>
  );
}

const THEME_LABELS: Record<ThemePref, MessageKey> = {
  system: "settings.theme.system",
  light: "settings.theme.light",
  dark: "settings.theme.dark",
};

const LANGUAGE_LABELS: Record<Locale, MessageKey> = {
  en: "settings.language.en",
  "zh-CN": "settings.language.zh-CN",
};

const NOTIFICATION_KINDS: readonly { kind: keyof NotificationPrefs; label: MessageKey }[] = [
  { kind: "scaled", label: "settings.notifications.scaled" },
  { kind: "budget", label: "settings.notifications.budget" },
  { kind: "stale", label: "settings.notifications.stale" },
  { kind: "spot", label: "settings.notifications.spot" },
];

/** Which desktop notifications to show: a checkbox a kind, saved as it is ticked. */
function Notifications(): JSX.Element {
  const [prefs, setPrefs] = createSignal<NotificationPrefs | null>(null);
  const [error, setError] = createSignal<unknown>(null);
  // Why they do not reach the desktop (no notification server, the last one failed), as
  // the shell last found: switched on or not, the operator is told.
  const [undelivered, setUndelivered] = createSignal<string | null>(null);
  let disposed = false;
  const lookDelivery = (): void => {
    void commands.notificationDelivery().then((delivery) => {
      if (!disposed) setUndelivered(delivery.kind === "unavailable" ? delivery.detail : null);
    }, () => undefined);
  };
  // The notifier's finding changes in the shell, with no event of its own: asked again.
  const offLook = every(5_000)(lookDelivery);
  onCleanup(() => {
    disposed = true;
    offLook();
  });
  lookDelivery();
  void call(() => commands.notificationPrefs()).then((res) => {
    if (disposed) return;
    if (res.status === "ok") setPrefs(res.data);
    else setError(res.error);
  });
  async function set(kind: keyof NotificationPrefs, on: boolean): Promise<void> {
    const before = prefs();
    if (before === null) return;
    setPrefs({ ...before, [kind]: on });
    const res = await call(() => commands.setNotificationPrefs({ ...before, [kind]: on }));
    if (disposed) return;
    if (res.status === "ok") {
      setPrefs(res.data);
      setError(null);
    } else {
      setPrefs(before);
      setError(res.error);
    }
  }
  return (
    <section class="card" aria-labelledby="settings-notifications" data-testid="notifications-setting">
      <h2 id="settings-notifications">{t("settings.notifications")}</h2>
      <fieldset class="choice-group" disabled={prefs() === null} aria-describedby="settings-notifications-hint">
        <legend class="visually-hidden">{t("settings.notifications")}</legend>
        <div class="choices">
          <For each={NOTIFICATION_KINDS}>
            {(k) => (
              <label class="choice" for={`setting-notify-${k.kind}`}>
                <input
                  type="checkbox"
                  id={`setting-notify-${k.kind}`}
                  data-testid={`notify-${k.kind}`}
                  checked={prefs()?.[k.kind] ?? false}
                  onChange={(e) => void set(k.kind, e.currentTarget.checked)}
                />
                <span>{t(k.label)}</span>
              </label>
            )}
          </For>
        </div>
      </fieldset>
      <p class="hint" id="settings-notifications-hint">
        {t("settings.notificationsHint")}
      </p>
      <Show when={undelivered()}>
        {(detail) => (
          <div class="alert alert-warn" role="status" data-testid="notifications-unavailable">
            <span class="alert-line">{t("settings.notificationsUnavailable")}</span>
            <details>
              <summary>{t("error.detail")}</summary>
              <span class="mono">{detail()}</span>
            </details>
          </div>
        )}
      </Show>
      <Show when={error() !== null}>
        <ErrorAlert testid="notifications-error" lead={t("settings.notificationsFailed")} error={error()} />
      </Show>
    </section>
  );
}

function About(): JSX.Element {
  // The app-info state is one object changed in place: every notice is news.
  const [state, setState] = createSignal(appInfoState(), { equals: false });
  const off = onAppInfo(() => setState(appInfoState()));
  // The view's dispose runs this owner's cleanups: the subscription goes with it.
  onCleanup(off);
  return (
    <dl class="about" data-testid="about">
      <Switch
        fallback={
          <dd class="alert alert-error" role="alert">
            {t("settings.aboutError", { message: describeError(state().error) })}
          </dd>
        }
      >
        <Match when={state().info}>
          {(info) => (
            <>
              <dt>{t("settings.version")}</dt>
              <dd data-testid="app-version">{info().version}</dd>
              <dt>{t("settings.dataDir")}</dt>
              <dd data-testid="data-dir">
                <code>{info().data_dir}</code>
              </dd>
              <dt>{t("settings.mode")}</dt>
              <dd>{t(info().demo ? "settings.modeDemo" : "settings.modeLive")}</dd>
              <dt>{t("settings.collection")}</dt>
              <dd data-testid="collecting" data-collecting={String(info().collecting)}>
                {t(info().collecting ? "settings.collectionHere" : "settings.collectionElsewhere")}
              </dd>
              <dt>{t("settings.tokenStore")}</dt>
              <dd data-testid="token-store">
                {tokenStoreText(info().token_store)}
                <Show when={tokenStoreDetail(info().token_store)}>{(detail) => <ErrorDetail text={detail()} english prefix={false} />}</Show>
              </dd>
            </>
          )}
        </Match>
        <Match when={state().loading}>
          <dd class="loading">{t("common.loading")}</dd>
        </Match>
      </Switch>
    </dl>
  );
}

export function settingsView(): View {
  const { el, dispose } = mountView(
    "settings",
    { className: "view view-settings", labelledBy: "settings-title" },
    () => (
      <>
        <header class="view-header">
          <h1 id="settings-title">{t("settings.title")}</h1>
        </header>
        <HostsSection />
        <section class="card" aria-labelledby="settings-appearance">
          <h2 id="settings-appearance">{t("settings.appearance")}</h2>
          <RadioGroup<Locale>
            name="language"
            legend={t("settings.language")}
            // Language names are shown in their own language.
            options={LOCALES.map((l) => ({ value: l, label: tIn(l, LANGUAGE_LABELS[l]), lang: l }))}
            selected={getLocale()}
            // Another language rebuilds the view: a changed host form asks first (unsaved.ts).
            onChange={(l) =>
              leaveForms(() => {
                saveLocale(l);
                setLocale(l);
              })
            }
          />
          <RadioGroup<ThemePref>
            name="theme"
            legend={t("settings.theme")}
            options={THEME_PREFS.map((p) => ({ value: p, label: t(THEME_LABELS[p]) }))}
            selected={getThemePref()}
            onChange={(p) => {
              saveThemePref(p);
              setThemePref(p);
            }}
          />
          <p class="hint">{t("settings.savedLocally")}</p>
        </section>
        <Notifications />
        <section class="card">
          {/* The price catalog lives in Costs; Settings points there. */}
          <div class="coming-row">
            <h3>{t("settings.prices")}</h3>
            <p>{t("settings.pricesWhere")}</p>
            <p>
              <a class="btn" href="#/costs" data-testid="settings-prices-link">
                {t("settings.pricesLink")}
              </a>
            </p>
          </div>
        </section>
        <section class="card" aria-labelledby="settings-about">
          <h2 id="settings-about">{t("settings.about")}</h2>
          <About />
        </section>
      </>
    ),
  );

  return { el, destroy: dispose };
}
