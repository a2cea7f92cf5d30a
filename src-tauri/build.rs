include!("src/command_names.rs");

fn main() {
    let dist = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/dist");
    println!("cargo:rerun-if-changed=../ui/dist");
    println!("cargo:rerun-if-changed=src/command_names.rs");
    if std::env::var_os("CARGO_FEATURE_CUSTOM_PROTOCOL").is_some()
        && !dist.join("index.html").exists()
    {
        panic!(
            "ui/dist/index.html is missing: the app embeds the built UI. \
             Run `cargo xtask test` or `cargo xtask demo` (they build it), \
             or `npm --prefix ui ci && npm --prefix ui run build`."
        );
    }
    // Only these commands exist, and capabilities/main.json grants them to the main window.
    let manifest = tauri_build::AppManifest::new().commands(&COMMANDS);
    tauri_build::try_build(tauri_build::Attributes::new().app_manifest(manifest))
        .expect("tauri-build failed");
}
