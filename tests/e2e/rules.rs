//! The Rules view: a rule set typed into the TOML tab of the demo pool `inference`, its lint
//! warning beside the field it names in the form, a replay over a trace file beside the
//! baselines, a save refused until the warning is acknowledged, then saved enabled as
//! version 1 (the pool's first); a festival-peak schedule added in the form, written into
//! the file and saved with it as version 2; in en light and (when shooting) zh-CN dark.

use crate::support::{App, Session, shooting};
use ebb_testkit::TempDir;
use fantoccini::key::Key;
use std::path::Path;
use std::time::Duration;

/// A scale-out rule whose cooldown (2 min) ends before its GPUs are ready (the 5 min
/// warmup): valid, with one warning, on `threshold[0].cooldown_minutes`; and a rule on a
/// custom metric nothing pushes.
const RULES: &str = r#"pool = "inference"

[limits]
min_gpus = 0
max_gpus = 8

[[threshold]]
name = "busy-out"
metric = "busy_gpus"
op = ">="
value = 2
for_minutes = 2
action = "+2"
cooldown_minutes = 2

[[threshold]]
name = "idle-in"
metric = "gpu_util"
op = "<="
value = 20
for_minutes = 10
action = "-1"
cooldown_minutes = 10

[[threshold]]
name = "queue-empty"
metric = "queue_len"
op = "<"
value = 1
for_minutes = 5
action = "-1"
cooldown_minutes = 10

[[metric]]
name = "queue_len"
stale_after_minutes = 2
"#;

/// Four hours: 1.2 GPUs busy, 5.5 from the first to the third hour.
fn trace_csv() -> String {
    let mut csv = String::from("minute,demand\n");
    for minute in 0..240 {
        let demand = if (60..150).contains(&minute) {
            5.5
        } else {
            1.2
        };
        csv.push_str(&format!("{minute},{demand}\n"));
    }
    csv
}

async fn open_rules(app: &Session) {
    app.click("#nav-rules").await;
    app.eventually(
        "the demo pool in the Rules view",
        Duration::from_secs(30),
        || async {
            let names = app.attr_of("#rules-select", "data-names").await?;
            names.lines().any(|name| name == "inference").then_some(())
        },
    )
    .await;
    app.select_value("#rules-select", "inference").await;
    app.wait_exists("the editor", "#rules-editor", Duration::from_secs(15))
        .await;
}

/// The lint's answer once it has one: (state, warnings).
async fn linted(app: &Session, state: &str, warnings: &str) {
    app.eventually(
        &format!("the lint {state} with {warnings} warning(s)"),
        Duration::from_secs(15),
        || async {
            let lint = "[data-testid=\"rules-lint\"]";
            let seen = (
                app.attr_of(lint, "data-state").await,
                app.attr_of(lint, "data-warnings").await,
            );
            if seen.0.as_deref() == Some(state) && seen.1.as_deref() == Some(warnings) {
                Ok(())
            } else {
                Err(format!("{seen:?}"))
            }
        },
    )
    .await;
}

/// Chooses the trace file and waits for its status to say `seen` (its name, its minutes).
async fn load_trace(app: &Session, trace: &Path, seen: &str) {
    app.choose_file("#rules-trace-file", trace).await;
    app.eventually("the trace loaded", Duration::from_secs(10), || async {
        let status = app.text_of("[data-testid=\"rules-trace-status\"]").await?;
        status.contains(seen).then_some(())
    })
    .await;
}

/// Replays over the trace file and waits for the table's four policies.
async fn replay_trace(app: &Session, trace: &Path) {
    load_trace(app, trace, "240").await;
    app.click("#rules-replay-run").await;
    app.eventually("the replay", Duration::from_secs(30), || async {
        let replay = "[data-testid=\"rules-replay\"]";
        let state = app.attr_of(replay, "data-state").await;
        if state.as_deref() == Some("error") {
            let why = app.text_of("[data-testid=\"rules-replay-error\"]").await;
            panic!("the replay failed: {why:?}");
        }
        (state.as_deref() == Some("ready")).then_some(())?;
        for policy in ["rules", "seed-80-30", "hpa", "oracle"] {
            app.exists(&format!("tr[data-policy=\"{policy}\"]"))
                .await
                .then_some(())?;
        }
        app.exists("[data-testid=\"rules-replay-chart\"]")
            .await
            .then_some(())
    })
    .await;
}

#[tokio::test]
#[ignore = "needs Xvfb, tauri-driver and the custom-protocol build: run by `cargo xtask test`"]
async fn rules_are_linted_replayed_and_saved_enabled() {
    let data_dir = TempDir::new("e2e-rules");
    let trace = data_dir.path().join("trace.csv");
    std::fs::write(&trace, trace_csv()).unwrap();
    let app = App::open_demo(&data_dir).await;

    app.run(move |app| async move {
        open_rules(&app).await;
        // The demo pool starts without rules (unless EBB_DEMO_RULES gives it the demo's).
        let before: u32 = app
            .attr_of("[data-testid=\"rules-current\"]", "data-version")
            .await
            .and_then(|version| version.parse().ok())
            .unwrap_or(0);
        let version = (before + 1).to_string();

        // Typed into the TOML tab: valid, with one warning on the scale-out's cooldown.
        app.click("#rules-tab-toml").await;
        app.type_lines("#rules-source", RULES).await;
        linted(&app, "valid", "1").await;
        let item = "li[data-testid=\"rules-lint-item\"][data-severity=\"warning\"]";
        assert_eq!(
            app.attr_of(item, "data-field").await.as_deref(),
            Some("threshold[0].cooldown_minutes")
        );
        let line = app.attr_of(item, "data-line").await.unwrap_or_default();
        assert_eq!(line, "14", "the cooldown's line");
        let listed = app.text_now(item).await;
        assert!(
            listed.contains("line 14") && listed.contains("warmup"),
            "{listed}"
        );

        // The form shows the same file, the warning under the cooldown it names.
        app.click("#rules-tab-form").await;
        let beside =
            "#rules-f-threshold-0-cooldown_minutes-notes .field-error[data-severity=\"warning\"]";
        let words = app
            .eventually(
                "the warning beside the cooldown",
                Duration::from_secs(10),
                || async { app.text_of(beside).await },
            )
            .await;
        assert!(words.contains("shorter than the warmup"), "{words}");
        app.wait_value("#rules-f-threshold-0-cooldown_minutes", "2")
            .await;
        app.wait_value("#rules-f-limits-max_gpus", "8").await;
        app.scroll_to("[data-testid=\"rules-threshold-row\"]").await;
        app.shoot("rules-editor-en-light").await;

        // Replayed over the trace file, beside seed-80-30, HPA and the oracle.
        replay_trace(&app, &trace).await;
        let summary = app.text_now("[data-testid=\"rules-replay-summary\"]").await;
        assert!(
            summary.contains("240 minutes") && summary.contains("trace.csv"),
            "{summary}"
        );
        app.scroll_to("[data-testid=\"rules-replay-summary\"]")
            .await;
        app.shoot("rules-replay-en-light").await;

        // Saving with the warning unacknowledged is refused; acknowledged, saved enabled.
        app.select_value("#rules-save-mode", "enabled").await;
        app.click("#rules-save").await;
        app.eventually("the refusal", Duration::from_secs(10), || async {
            let kind = app
                .attr_of("[data-testid=\"rules-save-error\"]", "data-kind")
                .await?;
            (kind == "unacknowledged_warnings").then_some(())
        })
        .await;
        assert_eq!(
            app.active_id().await,
            "rules-ack",
            "the focus goes to the checkbox"
        );
        app.click("#rules-ack").await;
        app.click("#rules-save").await;
        app.wait_text(
            "the save said",
            "[data-testid=\"rules-save-status\"]",
            &format!("Saved as version {version}, enabled."),
            Duration::from_secs(10),
        )
        .await;
        app.eventually(
            "the new version, enabled",
            Duration::from_secs(10),
            || async {
                let current = "[data-testid=\"rules-current\"]";
                let shown = app.attr_of(current, "data-version").await?;
                let mode = app.attr_of(current, "data-mode").await?;
                (shown == version && mode == "enabled").then_some(())
            },
        )
        .await;
        assert_eq!(
            app.text_now("[data-testid=\"rules-version\"]").await,
            format!("Version {version}")
        );
        assert_eq!(
            app.text_now("[data-testid=\"rules-mode\"]").await,
            "enabled"
        );
        assert_eq!(
            app.attr_of("#rules-mode-enabled", "aria-pressed")
                .await
                .as_deref(),
            Some("true")
        );
        assert_eq!(app.attr_of("#rules-editor", "data-dirty").await, None);
        // Nothing pushes queue_len here: stale, and the rule on it idle.
        app.eventually(
            "the custom metric, stale",
            Duration::from_secs(10),
            || async {
                let stale = app
                    .attr_of("tr[data-metric=\"queue_len\"]", "data-stale")
                    .await?;
                (stale == "true").then_some(())
            },
        )
        .await;

        // A change in the form is the file's change; Escape asks, then puts the saved back.
        app.type_into("#rules-f-limits-max_gpus", "6").await;
        app.eventually(
            "the change in the file",
            Duration::from_secs(10),
            || async {
                (app.attr_of("#rules-editor", "data-dirty").await.as_deref() == Some("true"))
                    .then_some(())
            },
        )
        .await;
        app.send_key("#rules-f-limits-max_gpus", Key::Escape).await;
        app.eventually("the discard question", Duration::from_secs(5), || async {
            (app.active_id().await == "rules-discard-no").then_some(())
        })
        .await;
        app.click("#rules-discard-yes").await;
        app.wait_value("#rules-f-limits-max_gpus", "8").await;
        assert_eq!(app.attr_of("#rules-editor", "data-dirty").await, None);

        // The enforcer decides on them within a few passes.
        let reason = app
            .eventually("a decision", Duration::from_secs(30), || async {
                let state = app
                    .attr_of("[data-testid=\"rules-decision\"]", "data-state")
                    .await?;
                (state != "none").then_some(())?;
                app.text_of("[data-testid=\"rules-decision-reason\"]").await
            })
            .await;
        assert!(!reason.is_empty());
        app.scroll_to("#view-rules").await;
        app.shoot("rules-saved-en-light").await;

        // A festival peak added in the form is the file's [[schedule]], saved with it.
        app.click("#rules-add-schedule").await;
        let row = "[data-testid=\"rules-schedule-row\"][data-index=\"0\"]";
        app.wait_exists("the new schedule row", row, Duration::from_secs(5))
            .await;
        app.type_into("#rules-f-schedule-0-name", "festival-peak")
            .await;
        app.select_value("#rules-f-schedule-0-kind", "window").await;
        app.type_into("#rules-f-schedule-0-start", "2027-02-06T08:00:00")
            .await;
        app.type_into("#rules-f-schedule-0-end", "2027-02-13T00:00:00")
            .await;
        app.type_into("#rules-f-schedule-0-time_zone", "Asia/Shanghai")
            .await;
        app.type_into("#rules-f-schedule-0-gpus", "6").await;
        // Each section's title and hint in view, above its rows.
        let above_metrics = "#rules-f-scale_in-deadband_minutes";
        let above_schedules = "[data-testid=\"rules-threshold-row\"][data-index=\"2\"]";
        app.scroll_to(above_metrics).await;
        app.shoot("rules-form-metric-en-light").await;
        app.scroll_to(above_schedules).await;
        app.shoot("rules-form-schedule-en-light").await;
        app.click("#rules-tab-toml").await;
        let written = "[[schedule]]\nname = \"festival-peak\"\nstart = 2027-02-06T08:00:00\n\
                       end = 2027-02-13T00:00:00\ntime_zone = \"Asia/Shanghai\"\nfloor = 6\n";
        app.eventually(
            "the schedule in the file",
            Duration::from_secs(10),
            || async {
                let source = app.value_of("#rules-source").await.ok().flatten();
                source
                    .as_deref()
                    .is_some_and(|source| source.contains(written))
                    .then_some(())
            },
        )
        .await;
        linted(&app, "valid", "1").await;
        app.click("#rules-ack").await;
        app.click("#rules-save").await;
        let version = (before + 2).to_string();
        app.wait_text(
            "the schedule saved",
            "[data-testid=\"rules-save-status\"]",
            &format!("Saved as version {version}, enabled."),
            Duration::from_secs(10),
        )
        .await;

        if shooting() {
            app.open_settings_hosts().await;
            app.click("#setting-theme-dark").await;
            app.click("#setting-language-zh-CN").await;
            app.wait_lang("zh-CN", "zh-CN").await;
            open_rules(&app).await;
            app.eventually(
                "the saved version in zh-CN",
                Duration::from_secs(10),
                || async {
                    let shown = app
                        .attr_of("[data-testid=\"rules-current\"]", "data-version")
                        .await?;
                    (shown == version).then_some(())
                },
            )
            .await;
            assert_eq!(app.text_now("[data-testid=\"rules-mode\"]").await, "已启用");
            app.shoot("rules-saved-zh-dark").await;
            linted(&app, "valid", "1").await;
            app.scroll_to("[data-testid=\"rules-threshold-row\"]").await;
            app.shoot("rules-editor-zh-dark").await;
            app.wait_value("#rules-f-schedule-0-name", "festival-peak")
                .await;
            app.scroll_to(above_metrics).await;
            app.shoot("rules-form-metric-zh-dark").await;
            app.scroll_to(above_schedules).await;
            app.shoot("rules-form-schedule-zh-dark").await;
            replay_trace(&app, &trace).await;
            let theme = app
                .attr_of("[data-testid=\"rules-replay-chart\"]", "data-theme")
                .await;
            assert_eq!(theme.as_deref(), Some("dark"));
            app.scroll_to("[data-testid=\"rules-replay-summary\"]")
                .await;
            app.shoot("rules-replay-zh-dark").await;
            app.open_settings_hosts().await;
            app.click("#setting-theme-light").await;
            app.click("#setting-language-en").await;
        }
    })
    .await;
}

/// Suggests rules on the trace chosen (the demo's sample at first) and waits for the
/// proposal beside the editor, both replayed on it; its notes' kinds.
async fn suggest_and_wait(app: &Session) -> String {
    app.click("#rules-suggest").await;
    app.eventually(
        "the suggestion, both replayed",
        Duration::from_secs(180),
        || async {
            if let Some(why) = app.text_of("[data-testid=\"rules-suggest-error\"]").await {
                panic!("the suggestion failed: {why}");
            }
            suggestion_ready(app).await
        },
    )
    .await
}

/// The suggestion's notes' kinds, once both replays are in.
async fn suggestion_ready(app: &Session) -> Option<String> {
    let state = app
        .attr_of("[data-testid=\"rules-suggestion\"]", "data-state")
        .await;
    (state.as_deref() == Some("ready")).then_some(())?;
    app.attr_of("[data-testid=\"rules-suggest-notes\"]", "data-kinds")
        .await
}

#[tokio::test]
#[ignore = "needs Xvfb, tauri-driver and the custom-protocol build: run by `cargo xtask test`"]
async fn a_suggestion_is_a_proposal_and_an_unsaved_edit_outlives_navigation() {
    let data_dir = TempDir::new("e2e-rules-suggest");
    let app = App::open_demo(&data_dir).await;

    app.run(move |app| async move {
        open_rules(&app).await;
        // The demo has minutes of history at most: its replay starts on the sample trace.
        app.eventually("the sample trace", Duration::from_secs(10), || async {
            let sample = app
                .attr_of("[data-testid=\"rules-trace-status\"]", "data-sample")
                .await;
            (sample.as_deref() == Some("true")).then_some(())
        })
        .await;
        app.click("#rules-tab-toml").await;
        app.type_lines("#rules-source", RULES).await;
        linted(&app, "valid", "1").await;
        let typed = app.value_of("#rules-source").await.unwrap().unwrap();
        assert!(typed.contains("busy-out"), "{typed}");

        // Dismissed: the editor is as it was.
        suggest_and_wait(&app).await;
        for which in ["current", "suggested"] {
            let cost = app
                .text_now(&format!("tr[data-which=\"{which}\"] td[data-col=\"cost\"]"))
                .await;
            assert!(cost.contains('¥'), "{which}: {cost}");
        }
        let target = app
            .text_now("[data-testid=\"rules-suggest-notes\"] li[data-note=\"target\"]")
            .await;
        assert!(target.contains("% of each GPU"), "{target}");
        let kept = app
            .text_now("[data-testid=\"rules-suggest-notes\"] li[data-note=\"kept_metrics\"]")
            .await;
        assert!(kept.contains("queue_len"), "{kept}");
        assert!(
            app.exists("[data-testid=\"rules-suggest-diff\"] tr[data-diff=\"removed\"]")
                .await
                || app
                    .exists("[data-testid=\"rules-suggest-diff\"] tr[data-diff=\"changed\"]")
                    .await,
            "the diff shows what the suggestion replaces"
        );
        app.shoot("rules-suggestion-en-light").await;
        app.click("#rules-suggest-dismiss").await;
        app.eventually("the proposal gone", Duration::from_secs(5), || async {
            (!app.exists("[data-testid=\"rules-suggestion\"]").await).then_some(())
        })
        .await;
        app.wait_value("#rules-source", &typed).await;

        // Accepted over the unsaved edit: asked first, then the editor holds it, unsaved.
        suggest_and_wait(&app).await;
        app.click("#rules-suggest-accept").await;
        app.eventually("the question", Duration::from_secs(5), || async {
            (app.active_id().await == "rules-suggest-discard-no").then_some(())
        })
        .await;
        assert_eq!(
            app.value_of("#rules-source").await.unwrap().as_deref(),
            Some(typed.as_str()),
            "nothing changed while it asks"
        );
        app.click("#rules-suggest-discard-yes").await;
        let accepted = app
            .eventually(
                "the suggestion in the editor",
                Duration::from_secs(10),
                || async {
                    let source = app.value_of("#rules-source").await.ok().flatten()?;
                    (source.contains("size-to-busy-gpus") && source.contains("queue_len"))
                        .then_some(source)
                },
            )
            .await;
        assert!(!app.exists("[data-testid=\"rules-suggestion\"]").await);
        assert_eq!(
            app.attr_of("#rules-editor", "data-dirty").await.as_deref(),
            Some("true")
        );
        // Its target rule's metric is a select of the known metrics, worded as % of each GPU.
        app.click("#rules-tab-form").await;
        app.wait_value("#rules-f-target-0-metric", "busy_gpus")
            .await;
        assert!(app.exists("[data-testid=\"rules-target-busy-hint\"]").await);

        // To another view and back: the unsaved file is there, still marked unsaved.
        app.click("#nav-activity").await;
        app.eventually("the Activity view", Duration::from_secs(10), || async {
            (!app.exists("#rules-editor").await).then_some(())
        })
        .await;
        open_rules(&app).await;
        app.eventually("the draft kept", Duration::from_secs(10), || async {
            let source = app.value_of("#rules-source").await.ok().flatten();
            let dirty = app.attr_of("#rules-editor", "data-dirty").await;
            (source.as_deref() == Some(accepted.as_str()) && dirty.as_deref() == Some("true"))
                .then_some(())
        })
        .await;
        assert!(app.exists("[data-testid=\"rules-unsaved\"]").await);
        // The sample trace stayed loaded for the pool too.
        assert_eq!(
            app.attr_of("[data-testid=\"rules-trace-status\"]", "data-sample")
                .await
                .as_deref(),
            Some("true")
        );
    })
    .await;
}

/// Six days of a Slurm queue: 8-GPU jobs of 1 to 4 hours, 3 to 7 idle hours apart.
fn queue_csv() -> String {
    let jobs = [
        (120, 240),
        (605, 120),
        (1108, 240),
        (1535, 180),
        (2093, 90),
        (2529, 60),
        (2999, 90),
        (3297, 120),
        (3717, 90),
        (4084, 240),
        (4530, 240),
        (5013, 60),
        (5440, 90),
        (5814, 120),
        (6160, 180),
        (6560, 60),
        (6835, 240),
        (7413, 180),
        (7805, 90),
        (8075, 60),
        (8368, 90),
    ];
    let mut csv = String::from("minute,demand,slurm_demand_gpus\n");
    for minute in 0..6 * 1440 {
        let busy = jobs
            .iter()
            .any(|&(start, length)| (start..start + length).contains(&minute));
        let gpus = if busy { 8 } else { 0 };
        csv.push_str(&format!("{minute},{gpus},{gpus}\n"));
    }
    csv
}

#[tokio::test]
#[ignore = "needs Xvfb, tauri-driver and the custom-protocol build: run by `cargo xtask test`"]
async fn what_the_limit_costs_is_said_and_a_suggestion_at_the_limit_it_names_is_one_click() {
    let data_dir = TempDir::new("e2e-rules-limit-price");
    let trace = data_dir.path().join("queue.csv");
    std::fs::write(&trace, queue_csv()).unwrap();
    let app = App::open_demo(&data_dir).await;

    app.run(move |app| async move {
        open_rules(&app).await;
        load_trace(&app, &trace, "queue.csv").await;

        // Held to 1%, the rules keep a node ready for jobs no rule sees coming: the note
        // says what that costs beside the cheapest rules tried, and offers their limit.
        let kinds = suggest_and_wait(&app).await;
        assert!(kinds.contains("limit_price"), "{kinds}");
        let price = app
            .text_now("[data-testid=\"rules-suggest-notes\"] li[data-note=\"limit_price\"]")
            .await;
        assert!(price.contains("What the 1% limit costs"), "{price}");
        assert!(price.contains("jobs waiting for their nodes"), "{price}");
        let again = app.text_now("#rules-suggest-again").await;
        let limit = again
            .strip_prefix("Suggest with a ")
            .and_then(|rest| rest.strip_suffix(" limit"))
            .unwrap_or_else(|| panic!("{again}"))
            .to_string();
        assert!(price.contains(&format!("a limit of {limit}")), "{price}");
        app.scroll_to("[data-testid=\"rules-suggestion\"]").await;
        app.shoot("rules-limit-price-en-light").await;

        // One click: suggested again at that limit, on the same trace; no price to say.
        app.click("#rules-suggest-again").await;
        app.eventually(
            "the suggestion at the named limit",
            Duration::from_secs(180),
            || async {
                if let Some(why) = app
                    .text_of("[data-testid=\"rules-suggest-again-error\"]")
                    .await
                {
                    panic!("the suggestion failed: {why}");
                }
                let kinds = suggestion_ready(&app).await?;
                let replayed = app
                    .text_of("[data-testid=\"rules-suggest-notes\"] li[data-note=\"replayed\"]")
                    .await?;
                (!kinds.contains("limit_price") && replayed.contains(&format!("(limit {limit})")))
                    .then_some(())
            },
        )
        .await;
        assert_eq!(
            app.attr_of("[data-testid=\"rules-suggestion\"]", "data-within")
                .await
                .as_deref(),
            Some("true")
        );

        if shooting() {
            app.open_settings_hosts().await;
            app.click("#setting-theme-dark").await;
            app.click("#setting-language-zh-CN").await;
            app.wait_lang("zh-CN", "zh-CN").await;
            open_rules(&app).await;
            load_trace(&app, &trace, "queue.csv").await;
            let kinds = suggest_and_wait(&app).await;
            assert!(kinds.contains("limit_price"), "{kinds}");
            app.scroll_to("[data-testid=\"rules-suggestion\"]").await;
            app.shoot("rules-limit-price-zh-dark").await;
            app.open_settings_hosts().await;
            app.click("#setting-theme-light").await;
            app.click("#setting-language-en").await;
        }
    })
    .await;
}
