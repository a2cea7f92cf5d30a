import { appInfoState, loadAppInfo } from "./app-info";
import { startApp } from "./app";
import { startFleet } from "./fleet-store";
import { commands, type UiLanguage } from "./bindings";
import { detectLocale, getLocale, onLocaleChange, setLocale } from "./i18n";
import { loadLocale, loadThemePref } from "./prefs";
import { initTheme, type ThemePref } from "./theme";

const browserLanguages = navigator.languages ?? [navigator.language];
const savedLocale = loadLocale();
setLocale(savedLocale ?? detectLocale(browserLanguages));
// The window takes the chosen theme too, so what the toolkit draws (a select's open list)
// is dark with the page; "system" hands it back to the desktop's setting. The one command
// called before the console answers: it reads nothing of the console.
const windowTheme = (pref: ThemePref): void => {
  commands.setUiTheme(pref === "system" ? null : pref).catch(() => undefined);
};
initTheme(loadThemePref(), windowTheme);

// The console starts beside the window (src-tauri/src/starting.rs): until it answers,
// index.html's skeleton stands, and nothing here calls a command that reads it.
const root = document.getElementById("app");

async function start(): Promise<void> {
  // A shell that cannot answer (no desktop shell at all) still gets the app, which then
  // says what failed where it failed.
  await commands.consoleStarted().catch(() => undefined);

  // The shell words desktop notifications in the language the operator reads the app in.
  const tellShell = (language: UiLanguage): void => {
    commands.setUiLanguage(language).catch(() => undefined);
  };
  tellShell(getLocale());
  onLocaleChange(tellShell);

  if (root) startApp(root);

  // Without a saved choice, the OS locale (read by the shell) decides the language:
  // webviews do not always pass it on to navigator.languages.
  void loadAppInfo().then(() => {
    const osLocale = appInfoState().info?.os_locale;
    if (savedLocale === null && osLocale) setLocale(detectLocale([osLocale, ...browserLanguages]));
  });
  void startFleet();
}
void start();
