// Before the first paint: the saved theme (prefs.ts's "ebb.theme"), so index.html's skeleton
// is drawn in the colours the app then keeps (a dark choice on a light system flashed
// light). A file, not an inline script: the CSP allows scripts from the app only. The app
// (theme.ts) takes over when it starts.
try {
  var saved = localStorage.getItem("ebb.theme");
  if (saved === "light" || saved === "dark") document.documentElement.dataset.theme = saved;
} catch (e) {
  // No storage: the system's preference decides, as in the app.
}
