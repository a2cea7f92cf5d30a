//! The app locked down (issue 11, item 5): the webview runs only the app's own code and
//! calls only the app's own commands.
//!
//! - the CSP of `tauri.conf.json`, every directive parsed: only `'self'`, `'none'`, `data:`
//!   for images and the IPC origins for `connect-src`; no `unsafe-*`, no remote origin;
//! - the capabilities: one, for the window `main` alone, local, granting exactly the
//!   commands the app registers (and listening to its events), no plugin's permission;
//!   checked as written and as `tauri-build` resolved and embedded them.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn json_file(path: &Path) -> Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

fn tauri_conf() -> Value {
    json_file(&crate_dir().join("../tauri.conf.json"))
}

/// A CSP as directive → sources, from the object or the string form.
fn directives(csp: &Value) -> BTreeMap<String, Vec<String>> {
    let pairs: Vec<(String, String)> = match csp {
        Value::Object(map) => map
            .iter()
            .map(|(name, sources)| {
                let sources = match sources {
                    Value::String(text) => text.clone(),
                    Value::Array(items) => items
                        .iter()
                        .map(|item| item.as_str().expect("a source is a string"))
                        .collect::<Vec<_>>()
                        .join(" "),
                    other => panic!("{name}: sources are a string or a list, got {other}"),
                };
                (name.clone(), sources)
            })
            .collect(),
        Value::String(text) => text
            .split(';')
            .map(str::trim)
            .filter(|directive| !directive.is_empty())
            .map(|directive| {
                let (name, sources) = directive.split_once(' ').unwrap_or((directive, ""));
                (name.to_string(), sources.to_string())
            })
            .collect(),
        other => panic!("the CSP is an object or a string, got {other}"),
    };
    let mut parsed = BTreeMap::new();
    for (name, sources) in pairs {
        let sources: Vec<String> = sources.split_whitespace().map(str::to_string).collect();
        assert!(
            parsed.insert(name.to_ascii_lowercase(), sources).is_none(),
            "{name} given twice"
        );
    }
    parsed
}

/// What each directive may allow: the app's own origin, nothing, images from `data:` (the
/// charts), and IPC.
fn allowed_sources(directive: &str) -> Option<&'static [&'static str]> {
    Some(match directive {
        "default-src" | "script-src" | "style-src" | "font-src" => &["'self'"],
        "img-src" => &["'self'", "data:"],
        "connect-src" => &["ipc:", "http://ipc.localhost"],
        "object-src" | "base-uri" | "form-action" | "frame-ancestors" | "frame-src"
        | "child-src" | "worker-src" | "manifest-src" | "media-src" => &["'self'", "'none'"],
        _ => return None,
    })
}

/// Everything wrong with `csp`, in words (nothing: it is locked down).
fn csp_problems(csp: &Value) -> Vec<String> {
    let parsed = directives(csp);
    let mut problems = Vec::new();
    for required in [
        "default-src",
        "script-src",
        "style-src",
        "img-src",
        "connect-src",
        "object-src",
        "base-uri",
        "form-action",
        "frame-ancestors",
    ] {
        if !parsed.contains_key(required) {
            problems.push(format!("no {required}"));
        }
    }
    for (directive, sources) in &parsed {
        let Some(allowed) = allowed_sources(directive) else {
            problems.push(format!("{directive}: a directive this test does not know"));
            continue;
        };
        if sources.is_empty() {
            problems.push(format!("{directive} has no source"));
        }
        for source in sources {
            let lower = source.to_ascii_lowercase();
            if lower.contains("unsafe-") {
                problems.push(format!("{directive} allows {source}"));
            } else if lower.contains('*') {
                problems.push(format!("{directive} allows a wildcard, {source}"));
            } else if !allowed.contains(&source.as_str()) {
                problems.push(format!("{directive} allows {source}: only {allowed:?}"));
            }
        }
        if sources.len() > 1 && sources.iter().any(|source| source == "'none'") {
            problems.push(format!("{directive}: 'none' with other sources"));
        }
    }
    for (directive, only) in [
        ("default-src", "'self'"),
        ("script-src", "'self'"),
        ("object-src", "'none'"),
        ("frame-ancestors", "'none'"),
    ] {
        if parsed
            .get(directive)
            .is_some_and(|sources| sources != &[only])
        {
            problems.push(format!("{directive} must be {only} alone"));
        }
    }
    problems
}

#[test]
fn the_csp_allows_only_the_apps_own_origin() {
    let conf = tauri_conf();
    let security = &conf["app"]["security"];
    assert_eq!(csp_problems(&security["csp"]), Vec::<String>::new());
    // A dev CSP, if one is ever added, is held to the same rules.
    if !security["devCsp"].is_null() {
        assert_eq!(
            csp_problems(&security["devCsp"]),
            Vec::<String>::new(),
            "devCsp"
        );
    }
    assert!(security["dev-csp"].is_null(), "use devCsp");
    // Tauri adds its nonces and hashes only while it may modify the CSP.
    let disabled = &security["dangerousDisableAssetCspModification"];
    assert!(
        disabled.is_null() || disabled == &Value::Bool(false),
        "the CSP must stay Tauri's to complete: {disabled}"
    );
    assert_eq!(security["freezePrototype"], Value::Bool(true));
    assert_eq!(conf["app"]["withGlobalTauri"], Value::Bool(false));
    let asset = &security["assetProtocol"];
    assert!(
        asset.is_null() || asset["enable"] != Value::Bool(true),
        "no asset protocol: {asset}"
    );
    assert!(
        security["pattern"].is_null() || security["pattern"]["use"] == "brownfield",
        "{}",
        security["pattern"]
    );
}

/// The rules above refuse each way a CSP is opened up: the app's own CSP with one change.
#[test]
fn the_csp_rules_catch_what_they_are_for() {
    let csp = tauri_conf()["app"]["security"]["csp"].clone();
    let changes = [
        ("script-src", "'self' 'unsafe-inline'"),
        ("script-src", "'self' 'unsafe-eval'"),
        ("script-src", "'self' 'wasm-unsafe-eval'"),
        ("style-src", "'self' 'unsafe-inline'"),
        ("script-src", "'self' https://cdn.example.com"),
        ("connect-src", "ipc: http://ipc.localhost https:"),
        (
            "connect-src",
            "ipc: http://ipc.localhost ws://localhost:1420",
        ),
        ("img-src", "'self' data: blob:"),
        ("img-src", "*"),
        ("default-src", "'self' data:"),
        ("object-src", "'self'"),
        ("frame-src", "https://example.com"),
        ("require-trusted-types-for", "'script'"),
    ];
    for (directive, sources) in changes {
        let mut changed = csp.clone();
        changed[directive] = Value::String(sources.into());
        assert!(
            !csp_problems(&changed).is_empty(),
            "not refused: {directive} {sources}"
        );
    }
    let mut missing = csp.clone();
    missing.as_object_mut().unwrap().remove("object-src");
    assert_eq!(csp_problems(&missing), ["no object-src"]);
    let as_text = Value::String(
        "default-src 'self'; script-src 'self' 'unsafe-eval'; img-src 'self' data:".into(),
    );
    assert!(!csp_problems(&as_text).is_empty());
}

/// The window list of the app: `main` alone, created by the app from the local frontend.
#[test]
fn the_only_window_is_main_on_the_local_frontend() {
    let conf = tauri_conf();
    let windows = conf["app"]["windows"].as_array().unwrap();
    let labels: Vec<&str> = windows
        .iter()
        .map(|window| window["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["main"]);
    for window in windows {
        let url = window["url"].as_str().unwrap_or("index.html");
        assert!(
            !url.contains("://"),
            "the window loads the app's own frontend, not {url}"
        );
    }
    let frontend = conf["build"]["frontendDist"].as_str().unwrap();
    assert!(
        !frontend.contains("://"),
        "frontendDist is local: {frontend}"
    );
}

/// `allow-add-host` for `add_host`.
fn permission_of(command: &str) -> String {
    format!("allow-{}", command.replace('_', "-"))
}

/// The commands the app registers, as the generated bindings call them.
fn registered_commands() -> BTreeSet<String> {
    let bindings = ebb_desktop::specta_builder()
        .export_str(
            specta_typescript::Typescript::default()
                .bigint(specta_typescript::BigIntExportBehavior::Number),
        )
        .expect("the bindings export");
    let mut commands = BTreeSet::new();
    for (at, marker) in bindings.match_indices("TAURI_INVOKE(\"") {
        let rest = &bindings[at + marker.len()..];
        let name = &rest[..rest.find('"').unwrap()];
        assert!(commands.insert(name.to_string()), "{name} registered twice");
    }
    commands
}

/// Every permission the main window holds: the app's commands, and listening to events.
fn expected_permissions() -> BTreeSet<String> {
    let mut expected: BTreeSet<String> = ebb_desktop::COMMANDS
        .iter()
        .map(|command| permission_of(command))
        .collect();
    expected.insert("core:event:allow-listen".into());
    expected.insert("core:event:allow-unlisten".into());
    expected
}

/// Checks one capability as written or as resolved by `tauri-build`.
fn check_capability(where_: &str, capability: &Value) {
    assert_eq!(capability["identifier"], "main", "{where_}");
    assert_eq!(
        capability["windows"],
        serde_json::json!(["main"]),
        "{where_}"
    );
    assert!(
        capability["webviews"].is_null(),
        "{where_}: no webview list"
    );
    assert!(
        capability["remote"].is_null(),
        "{where_}: no remote URL may use it: {}",
        capability["remote"]
    );
    assert_ne!(
        capability["local"],
        Value::Bool(false),
        "{where_}: local only"
    );
    let permissions = capability["permissions"].as_array().unwrap();
    let mut granted = BTreeSet::new();
    for permission in permissions {
        let identifier = permission
            .as_str()
            .unwrap_or_else(|| panic!("{where_}: a scoped permission: {permission}"));
        assert!(
            granted.insert(identifier.to_string()),
            "{where_}: {identifier} twice"
        );
        // Plugins' permissions have a prefix; the app's own do not. Only the event
        // listener is let through: dialog and notification are used from Rust only.
        if let Some((plugin, _)) = identifier.rsplit_once(':') {
            assert_eq!(
                plugin, "core:event",
                "{where_}: the webview holds {identifier}, a plugin's permission"
            );
        }
    }
    assert_eq!(granted, expected_permissions(), "{where_}");
}

#[test]
fn the_main_window_is_granted_exactly_the_apps_commands() {
    // The list the build makes permissions from is the list the app registers.
    let listed: BTreeSet<String> = ebb_desktop::COMMANDS
        .iter()
        .map(|command| command.to_string())
        .collect();
    assert_eq!(
        listed.len(),
        ebb_desktop::COMMANDS.len(),
        "a command listed twice"
    );
    assert_eq!(
        listed,
        registered_commands(),
        "command_names.rs vs specta_builder"
    );

    // As written: one capability file.
    let dir = crate_dir().join("capabilities");
    let files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files, ["main.json"], "one capability, for the main window");
    check_capability("capabilities/main.json", &json_file(&dir.join("main.json")));
    let conf = tauri_conf();
    let listed = &conf["app"]["security"]["capabilities"];
    assert!(
        listed.is_null() || listed == &serde_json::json!(["main"]),
        "tauri.conf.json adds capabilities: {listed}"
    );

    // As tauri-build resolved them and the app embeds them.
    let schemas = crate_dir().join("gen/schemas");
    let embedded = json_file(&schemas.join("capabilities.json"));
    let embedded = embedded.as_object().unwrap();
    assert_eq!(
        embedded.keys().collect::<Vec<_>>(),
        ["main"],
        "the app embeds one capability"
    );
    check_capability("gen/schemas/capabilities.json", &embedded["main"]);

    // Each permission, through the manifests, allows exactly one command and denies none.
    let manifests = json_file(&schemas.join("acl-manifests.json"));
    let mut allowed = BTreeSet::new();
    for identifier in expected_permissions() {
        let (manifest, name) = match identifier.rsplit_once(':') {
            Some((plugin, name)) => (plugin.to_string(), name.to_string()),
            None => ("__app-acl__".to_string(), identifier.clone()),
        };
        let permission = &manifests[&manifest]["permissions"][&name];
        let commands = &permission["commands"];
        let allows: Vec<&str> = commands["allow"]
            .as_array()
            .unwrap_or_else(|| panic!("{identifier} is not in the manifests"))
            .iter()
            .map(|command| command.as_str().unwrap())
            .collect();
        assert_eq!(allows.len(), 1, "{identifier} allows {allows:?}");
        assert!(
            permission["scope"].is_null() || permission["scope"] == serde_json::json!({}),
            "{identifier} carries a scope"
        );
        allowed.insert(format!("{manifest}|{}", allows[0]));
    }
    let mut expected: BTreeSet<String> = ebb_desktop::COMMANDS
        .iter()
        .map(|command| format!("__app-acl__|{command}"))
        .collect();
    expected.insert("core:event|listen".into());
    expected.insert("core:event|unlisten".into());
    assert_eq!(allowed, expected);
}
