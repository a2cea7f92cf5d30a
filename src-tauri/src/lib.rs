//! Ebb's desktop shell: the only crate that knows Tauri. Thin commands and events over
//! `ebb-core`; the demo fleet comes from `ebb-agent`.

mod commands;
mod notify;
mod starting;
mod state;

pub use state::Options;

use anyhow::Context;
use state::AppState;
use tauri::Manager;
use tauri_specta::{Builder, collect_commands, collect_events};

include!("command_names.rs");

/// The longest the UI waits, after the console has started, for its first sample round.
const FIRST_ROUND_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// A round the UI can start on: every one of the `registered` hosts in it, each polled.
fn first_round(snapshot: &ebb_wire::ipc::FleetSnapshot, registered: usize) -> bool {
    snapshot.hosts.len() >= registered
        && snapshot
            .hosts
            .iter()
            .all(|host| host.health != ebb_wire::ipc::Health::Unknown)
}

/// Every command and event the webview may use. `ui/src/bindings.ts` is generated from it.
pub fn specta_builder() -> Builder<tauri::Wry> {
    Builder::<tauri::Wry>::new()
        .commands(collect_commands![
            starting::console_started,
            commands::app_info,
            commands::enforcer_role,
            commands::fleet_snapshot,
            commands::fleet_capacity,
            commands::utilization_chart,
            commands::list_hosts,
            commands::add_host,
            commands::update_host,
            commands::remove_host,
            commands::forget_host,
            commands::test_host,
            commands::check_host,
            commands::catalog_show,
            commands::catalog_import,
            commands::cost_plan,
            commands::host_history_chart,
            commands::fleet_heatmap_chart,
            commands::pool_chart,
            commands::pool_slurm,
            commands::export_chart,
            commands::list_pools,
            commands::pool_options,
            commands::check_pool,
            commands::preview_mix,
            commands::create_pool,
            commands::update_pool,
            commands::delete_pool,
            commands::preview_scale,
            commands::scale_pool,
            commands::release_now,
            commands::list_activity,
            commands::set_confirm_policy,
            commands::spend_summary,
            commands::spend_showback,
            commands::set_budget,
            commands::export_spend_csv,
            commands::notification_prefs,
            commands::notification_delivery,
            commands::set_notification_prefs,
            commands::set_ui_language,
            commands::set_ui_theme,
            commands::pool_rules,
            commands::lint_rules,
            commands::test_promql,
            commands::whoami,
            commands::verify_audit,
            commands::list_teams,
            commands::save_rules,
            commands::set_rules_mode,
            commands::replay_rules,
            commands::suggest_rules,
            commands::rules_to_toml,
            commands::parse_rules,
        ])
        .events(collect_events![
            state::FleetTick,
            state::PoolsChanged,
            state::ActivityAppended
        ])
}

/// Where the generated TypeScript goes, and how it is written.
pub fn export_bindings(path: &std::path::Path) -> anyhow::Result<()> {
    specta_builder()
        .export(
            specta_typescript::Typescript::default()
                .bigint(specta_typescript::BigIntExportBehavior::Number)
                .header("// Generated from the Rust types by `cargo xtask bindings`. Do not edit.\n// @ts-nocheck"),
            path,
        )
        .with_context(|| format!("cannot write TypeScript bindings to {}", path.display()))
}

/// Runs the app until its window closes.
pub fn run(options: Options) -> anyhow::Result<()> {
    let builder = specta_builder();
    let app = tauri::Builder::default()
        .plugin(tauri_plugin_dialog::init())
        .plugin(tauri_plugin_notification::init())
        .invoke_handler(builder.invoke_handler())
        .setup(move |app| {
            builder.mount_events(app);
            let data_dir = match &options.data_dir {
                Some(dir) => dir.clone(),
                None => app.path().app_data_dir()?,
            };
            let (started, readers) = starting::channel();
            app.manage(readers);
            open_main_window(app, &data_dir)?;
            // The console starts beside the window (starting.rs): the page loads meanwhile.
            let handle = app.handle().clone();
            tauri::async_runtime::spawn(async move {
                let since = std::time::Instant::now();
                match AppState::start(&options, data_dir).await {
                    Ok(state) => {
                        tracing::info!(ms = since.elapsed().as_millis() as u64, "console started");
                        state.forward_ticks(handle.clone());
                        let notifier = notify::Notifier::start(
                            handle.clone(),
                            state.console.pool_store().clone(),
                            state.console.changes().clone(),
                            state.language.clone(),
                            state.delivery.clone(),
                        );
                        // The UI starts on the first round in which every registered host
                        // has answered (or failed): the collector publishes it as soon as
                        // they have, not at its next tick, so the fleet is there at once;
                        // the skeleton stands meanwhile, at most FIRST_ROUND_WAIT.
                        let mut rounds = state.console.subscribe();
                        let registered = state
                            .console
                            .registry()
                            .list()
                            .await
                            .map_or(0, |hosts| hosts.len());
                        handle.manage(state);
                        handle.manage(notifier);
                        let _ = tokio::time::timeout(
                            FIRST_ROUND_WAIT,
                            rounds.wait_for(|snapshot| first_round(snapshot, registered)),
                        )
                        .await;
                        let _ = started.send(Some(Ok(())));
                    }
                    Err(error) => {
                        // As a failed setup did: said on stderr, and the app ends.
                        eprintln!("Error: cannot start the console: {error:#}");
                        let _ = started.send(Some(Err(format!("{error:#}"))));
                        handle.exit(1);
                    }
                }
            });
            Ok(())
        })
        .build(tauri::generate_context!())
        .context("cannot start the Tauri app")?;
    app.run(|handle, event| {
        if let tauri::RunEvent::Exit = event
            && let Some(notifier) = handle.try_state::<notify::Notifier>()
        {
            notifier.stop();
        }
        if let tauri::RunEvent::Exit = event
            && let Some(state) = handle.try_state::<AppState>()
        {
            tauri::async_runtime::block_on(state.shutdown());
        }
    });
    Ok(())
}

/// The main window from `tauri.conf.json`, with its web storage (language, theme) kept in
/// the data directory so each data directory is a whole, separate profile.
fn open_main_window(app: &tauri::App, data_dir: &std::path::Path) -> tauri::Result<()> {
    let config = app
        .config()
        .app
        .windows
        .iter()
        .find(|window| window.label == "main")
        .cloned()
        .expect("tauri.conf.json defines the main window");
    let started = std::time::Instant::now();
    let logged = std::sync::atomic::AtomicBool::new(false);
    let window = tauri::WebviewWindowBuilder::from_config(app.handle(), &config)?
        .data_directory(data_dir.join("webview"))
        .on_page_load(move |window, payload| {
            // The UI renders as its script runs, before the page's load event: this line marks
            // the first painted window (the installed-package test measures start-up by it).
            if payload.event() == tauri::webview::PageLoadEvent::Finished
                && !logged.swap(true, std::sync::atomic::Ordering::Relaxed)
            {
                tracing::info!(
                    window = window.label(),
                    ms = started.elapsed().as_millis() as u64,
                    "first page loaded"
                );
            }
        })
        .build()?;
    #[cfg(target_os = "linux")]
    window.with_webview(|webview| {
        use webkit2gtk::{
            CacheModel, HardwareAccelerationPolicy, SettingsExt, WebContextExt, WebViewExt,
        };
        let view = webview.inner();
        // Every page and image here is the app's own, so WebKit keeps no dead resource in
        // memory. With the default (web browser) cache model each live chart, an SVG image
        // with a document of its own, stayed cached after its `src` moved on: the web
        // process grew about 170 MiB a minute on Fleet until near 1 GiB, where WebKit's
        // memory pressure handler held it (issue 43, tests/bench/soak.sh).
        if let Some(context) = view.context() {
            context.set_cache_model(CacheModel::DocumentViewer);
        }
        // Tables, text and small SVG charts: drawn on the CPU. Accelerated compositing
        // (GL, software GL where there is no GPU) held the first frame about a second after
        // the page had loaded (tests/bench/launch.sh).
        if let Some(settings) = WebViewExt::settings(&view) {
            settings.set_hardware_acceleration_policy(HardwareAccelerationPolicy::Never);
        }
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// Fails when `ui/src/bindings.ts` no longer matches the Rust types.
    #[test]
    fn typescript_bindings_are_fresh() {
        let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/src/bindings.ts");
        let fresh = std::env::temp_dir().join(format!("ebb-bindings-{}.ts", std::process::id()));
        super::export_bindings(&fresh).unwrap();
        let fresh_text = std::fs::read_to_string(&fresh).unwrap();
        let _ = std::fs::remove_file(&fresh);
        if std::env::var_os("EBB_BLESS").is_some() {
            std::fs::write(&committed, &fresh_text).unwrap();
            return;
        }
        let committed_text = std::fs::read_to_string(&committed).unwrap_or_default();
        assert!(
            committed_text == fresh_text,
            "ui/src/bindings.ts is stale: run `cargo xtask bindings` and commit the result"
        );
    }
}
