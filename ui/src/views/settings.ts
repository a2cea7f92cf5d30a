// Settings: the host registry (views/hosts.ts), language and theme (saved on this
// computer), a pointer to the price catalog (in Costs), and About (version, data directory, who
// collects, where tokens are kept).

import { appInfoState, onAppInfo } from "../app-info";
import { h, replaceChildren } from "../dom";
import { describeError } from "../format";
import { tokenStoreText } from "../reasons";
import { getLocale, LOCALES, setLocale, tIn, t, type Locale, type MessageKey } from "../i18n";
import { saveLocale, saveThemePref } from "../prefs";
import { getThemePref, setThemePref, THEME_PREFS, type ThemePref } from "../theme";
import { hostsSection } from "./hosts";
import type { View } from "./view";

function radioGroup<V extends string>(opts: {
  name: string;
  legend: string;
  options: readonly { value: V; label: string; lang?: string }[];
  selected: V;
  onChange: (value: V) => void;
}): HTMLElement {
  return h(
    "fieldset",
    { class: "choice-group", "data-testid": `${opts.name}-setting` },
    h("legend", null, opts.legend),
    h(
      "div",
      { class: "choices" },
      opts.options.map((o) => {
        const id = `setting-${opts.name}-${o.value}`;
        return h(
          "label",
          { class: "choice", for: id },
          h("input", {
            type: "radio",
            id,
            name: opts.name,
            value: o.value,
            checked: o.value === opts.selected,
            on: { change: () => opts.onChange(o.value) },
          }),
          h("span", { lang: o.lang ?? null }, o.label),
        );
      }),
    ),
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

/** The price catalog lives in Costs; Settings points there. */
function pricesRow(): HTMLElement {
  return h(
    "div",
    { class: "coming-row" },
    h("h3", null, t("settings.prices")),
    h("p", null, t("settings.pricesWhere")),
    h("p", null, h("a", { class: "btn", href: "#/costs", "data-testid": "settings-prices-link" }, t("settings.pricesLink"))),
  );
}

export function settingsView(): View {
  const hosts = hostsSection();
  const about = h("dl", { class: "about", "data-testid": "about" });

  function renderAbout(): void {
    const { info, error, loading } = appInfoState();
    if (info) {
      replaceChildren(
        about,
        h("dt", null, t("settings.version")),
        h("dd", { "data-testid": "app-version" }, info.version),
        h("dt", null, t("settings.dataDir")),
        h("dd", { "data-testid": "data-dir" }, h("code", null, info.data_dir)),
        h("dt", null, t("settings.mode")),
        h("dd", null, t(info.demo ? "settings.modeDemo" : "settings.modeLive")),
        h("dt", null, t("settings.collection")),
        h(
          "dd",
          { "data-testid": "collecting", "data-collecting": String(info.collecting) },
          t(info.collecting ? "settings.collectionHere" : "settings.collectionElsewhere"),
        ),
        h("dt", null, t("settings.tokenStore")),
        h("dd", { "data-testid": "token-store" }, tokenStoreText(info.token_store)),
      );
    } else if (loading) {
      replaceChildren(about, h("dd", { class: "loading" }, t("common.loading")));
    } else {
      replaceChildren(
        about,
        h("dd", { class: "alert alert-error", role: "alert" }, t("settings.aboutError", { message: describeError(error) })),
      );
    }
  }

  const el = h(
    "section",
    { class: "view view-settings", id: "view-settings", "data-view": "settings", "aria-labelledby": "settings-title" },
    h("header", { class: "view-header" }, h("h1", { id: "settings-title" }, t("settings.title"))),
    hosts.el,
    h(
      "section",
      { class: "card", "aria-labelledby": "settings-appearance" },
      h("h2", { id: "settings-appearance" }, t("settings.appearance")),
      radioGroup<Locale>({
        name: "language",
        legend: t("settings.language"),
        // Language names are shown in their own language.
        options: LOCALES.map((l) => ({ value: l, label: tIn(l, LANGUAGE_LABELS[l]), lang: l })),
        selected: getLocale(),
        onChange: (l) => {
          saveLocale(l);
          setLocale(l);
        },
      }),
      radioGroup<ThemePref>({
        name: "theme",
        legend: t("settings.theme"),
        options: THEME_PREFS.map((p) => ({ value: p, label: t(THEME_LABELS[p]) })),
        selected: getThemePref(),
        onChange: (p) => {
          saveThemePref(p);
          setThemePref(p);
        },
      }),
      h("p", { class: "hint" }, t("settings.savedLocally")),
    ),
    h("section", { class: "card" }, pricesRow()),
    h(
      "section",
      { class: "card", "aria-labelledby": "settings-about" },
      h("h2", { id: "settings-about" }, t("settings.about")),
      about,
    ),
  );

  renderAbout();
  const off = onAppInfo(renderAbout);
  return {
    el,
    destroy() {
      off();
      hosts.destroy();
    },
  };
}
