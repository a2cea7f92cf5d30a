import { loadAppInfo } from "./app-info";
import { startApp } from "./app";
import { startFleet } from "./fleet-store";
import { detectLocale, setLocale } from "./i18n";
import { loadLocale, loadThemePref } from "./prefs";
import { initTheme } from "./theme";

setLocale(loadLocale() ?? detectLocale(navigator.languages ?? [navigator.language]));
initTheme(loadThemePref());

const root = document.getElementById("app");
if (root) startApp(root);

void loadAppInfo();
void startFleet();
