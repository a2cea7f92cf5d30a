//! The Pool view's slider: the preview as it moves (keyboard, number field, pointer), the
//! rent and the release, the confirmation limit, the Activity log, the form's refusal.

use crate::support::{App, Session, shooting};
use ebb_testkit::{TempDir, try_eventually};
use fantoccini::Locator;
use fantoccini::key::Key;
use std::time::Duration;

/// The preview once it answers for `to`: (cost text, per-hour fen after, plan text).
pub(crate) async fn preview_for(app: &Session, to: u32) -> (String, i64, String) {
    let preview = "[data-testid=\"pool-preview\"]";
    let cost_css = "[data-testid=\"pool-preview-cost\"]";
    let answered = try_eventually(
        &format!("the preview for {to}"),
        Duration::from_secs(15),
        || async {
            let state = app.attr_of(preview, "data-state").await;
            let shown = app.attr_of(preview, "data-to").await;
            if state.as_deref() != Some("ready") || shown != Some(to.to_string()) {
                let count = app.value_of("#pool-count").await;
                let slider = app.value_of("#pool-slider").await;
                let text = app.text_of(preview).await;
                return Err(format!(
                    "state {state:?}, for {shown:?}, number field {count:?}, slider {slider:?}, \
                     text {text:?}"
                ));
            }
            let cost = app.text_of(cost_css).await;
            let fen = app
                .attr_of(cost_css, "data-per-hour-fen")
                .await
                .and_then(|fen| fen.parse().ok());
            let plan = app.text_of("[data-testid=\"pool-preview-plan\"]").await;
            match (cost, fen, plan) {
                (Some(cost), Some(fen), Some(plan)) => Ok((cost, fen, plan)),
                seen => Err(format!("ready, but read {seen:?}")),
            }
        },
    )
    .await;
    match answered {
        Ok(preview) => preview,
        Err(timeout) => {
            let recorded = app.recorded().await;
            app.fail(timeout, &format!("what happened:\n{recorded}"))
                .await
        }
    }
}

/// Presses the pointer on the Pool slider's thumb at `from` and moves it to `to`, the button
/// still held (the slider spans the pool's 0 to 8).
async fn drag_slider_holding(app: &Session, from: u32, to: u32) {
    use fantoccini::actions::{InputSource, MOUSE_BUTTON_LEFT, MouseActions, PointerAction};
    let slider = app.element("#pool-slider").await;
    let width = app
        .execute(
            "return document.querySelector('#pool-slider').getBoundingClientRect().width",
            vec![],
        )
        .await
        .ok()
        .and_then(|value| value.as_f64())
        .expect("the slider's width");
    // Offsets from the element's centre; the thumb's own width is left at the ends.
    let thumb = 16.0;
    let at = |value: u32| -width / 2.0 + thumb / 2.0 + (width - thumb) * f64::from(value) / 8.0;
    let actions = MouseActions::new("mouse".into())
        .then(PointerAction::MoveToElement {
            element: slider.clone(),
            duration: None,
            x: at(from),
            y: 0.0,
        })
        .then(PointerAction::Down {
            button: MOUSE_BUTTON_LEFT,
        })
        .then(PointerAction::MoveToElement {
            element: slider,
            duration: Some(Duration::from_millis(300)),
            x: at(to),
            y: 0.0,
        });
    app.perform_actions(actions)
        .await
        .expect("the pointer drags the slider");
}

/// Lets the pointer's button go.
async fn release_pointer(app: &Session) {
    use fantoccini::actions::{InputSource, MOUSE_BUTTON_LEFT, MouseActions, PointerAction};
    let actions = MouseActions::new("mouse".into()).then(PointerAction::Up {
        button: MOUSE_BUTTON_LEFT,
    });
    app.perform_actions(actions)
        .await
        .expect("the pointer lets go");
}

async fn lease_rows(app: &Session) -> usize {
    app.find_all(Locator::Css("[data-testid=\"pool-lease-row\"]"))
        .await
        .map(|rows| rows.len())
        .unwrap_or(0)
}

#[tokio::test]
#[ignore = "needs Xvfb, tauri-driver and the custom-protocol build: run by `cargo xtask test`"]
async fn the_pool_slider_previews_the_cost_then_rents_and_releases() {
    let data_dir = TempDir::new("e2e-pool");
    let app = App::open_demo(&data_dir).await;

    app.run(|app| async move {
        let converge = Duration::from_secs(90);
        app.record().await;
        app.click("#nav-pool").await;
        app.eventually("the demo pool", Duration::from_secs(30), || async {
            let names = app.attr_of("#pool-select", "data-names").await?;
            names.lines().any(|name| name == "inference").then_some(())
        })
        .await;
        app.select_value("#pool-select", "inference").await;
        app.wait_text("the pool at 0",
            "[data-testid=\"pool-desired\"]",
            "0",
            Duration::from_secs(10),
        )
        .await;
        app.wait_text("no GPU held",
            "[data-testid=\"pool-actual\"]",
            "0",
            converge,
        )
        .await;
        assert_eq!(
            app.attr_of("#pool-slider", "max").await.as_deref(),
            Some("8")
        );
        app.shoot("pool-en-light-start").await;

        // Four steps right with the keyboard: the preview says what 4 would cost and do,
        // and nothing is rented yet.
        app.focus("#pool-slider").await;
        app.press(Key::Right, 4).await;
        let (cost, after_fen, plan) = preview_for(&app, 4).await;
        let before_fen: i64 = app.attr_of("[data-testid=\"pool-preview-cost\"]",
            "data-per-hour-before-fen",
        )
        .await
        .and_then(|fen| fen.parse().ok())
        .expect("the cost at 0");
        assert!(
            after_fen > before_fen,
            "{cost}: {after_fen} vs {before_fen} fen at 0"
        );
        let delta = app.text_now("[data-testid=\"pool-preview-delta\"]").await;
        assert!(delta.starts_with('+'), "the cost goes up: {delta}");
        assert!(plan.starts_with("Rent 4"), "{plan}");
        assert!(cost.contains("¥") && cost.contains("/h"), "{cost}");
        app.wait_value("#pool-count", "4").await;
        assert_eq!(
            app.text_now("[data-testid=\"pool-desired\"]").await,
            "0",
            "nothing is committed before letting go"
        );
        // One step back: the cost text changes before anything is committed.
        app.press(Key::Left, 1).await;
        let (cost3, after3, plan3) = preview_for(&app, 3).await;
        assert!(after3 < after_fen, "{cost3} vs {cost}");
        assert_ne!(cost3, cost);
        assert!(plan3.starts_with("Rent 3"), "{plan3}");
        app.press(Key::Right, 1).await;
        preview_for(&app, 4).await;
        app.shoot("pool-en-light-preview").await;

        // Enter lets go: the pool rents 4, each host's part shows, the leases appear.
        app.press(Key::Enter, 1).await;
        app.wait_text("desired 4",
            "[data-testid=\"pool-desired\"]",
            "4",
            Duration::from_secs(10),
        )
        .await;
        let committed = app.text_now("[data-testid=\"pool-commit\"]").await;
        assert!(committed.contains("from 0 to 4"), "{committed}");
        app.wait_text("4 GPUs held",
            "[data-testid=\"pool-actual\"]",
            "4",
            converge,
        )
        .await;
        let rows = app.eventually("four lease rows", Duration::from_secs(10), || async {
            let rows = lease_rows(&app).await;
            (rows == 4).then_some(rows)
        })
        .await;
        assert_eq!(rows, 4);
        assert!(app.exists("[data-testid=\"pool-host-row\"]").await);
        app.scroll_to("[data-testid=\"pool-status\"]").await;
        app.shoot("pool-en-light-rented").await;

        // Back to 0 with the number field: the preview says what is released, Enter commits.
        // Typed as a person would: into the field, the old digits erased, the new one typed
        // (a WebDriver clear blurs the field, and a refresh may put the pool's count back).
        app.focus("#pool-count").await;
        app.press(Key::End, 1).await;
        app.press(Key::Backspace, 3).await;
        app.press_chars("0").await;
        let (_, zero_fen, release) = preview_for(&app, 0).await;
        assert!(zero_fen < after_fen);
        assert!(release.starts_with("Release 4"), "{release}");
        app.wait_value("#pool-slider", "0").await;
        app.press(Key::Enter, 1).await;
        app.wait_text("desired 0",
            "[data-testid=\"pool-desired\"]",
            "0",
            Duration::from_secs(10),
        )
        .await;
        app.wait_text("all released",
            "[data-testid=\"pool-actual\"]",
            "0",
            converge,
        )
        .await;
        app.eventually("no lease rows", Duration::from_secs(20), || async {
            (lease_rows(&app).await == 0).then_some(())
        })
        .await;

        // Dragged with the pointer: while the button is held the preview follows and nothing
        // is rented; letting go rents.
        app.scroll_to(".pool-slider-card").await;
        drag_slider_holding(&app, 0, 3).await;
        let (_, dragged_fen, dragged_plan) = preview_for(&app, 3).await;
        assert!(dragged_fen > before_fen, "{dragged_fen} vs {before_fen}");
        assert!(dragged_plan.starts_with("Rent 3"), "{dragged_plan}");
        assert_eq!(
            app.text_now("[data-testid=\"pool-desired\"]").await,
            "0",
            "nothing committed while the pointer is down"
        );
        release_pointer(&app).await;
        app.wait_text("desired 3 after the drag",
            "[data-testid=\"pool-desired\"]",
            "3",
            Duration::from_secs(10),
        )
        .await;
        app.wait_text("3 GPUs held after the drag",
            "[data-testid=\"pool-actual\"]",
            "3",
            converge,
        )
        .await;
        app.focus("#pool-count").await;
        app.press(Key::End, 1).await;
        app.press(Key::Backspace, 3).await;
        app.press_chars("0").await;
        preview_for(&app, 0).await;
        app.press(Key::Enter, 1).await;
        app.wait_text("all released again",
            "[data-testid=\"pool-actual\"]",
            "0",
            converge,
        )
        .await;

        // A change above the confirmation limit asks first; Cancel puts the slider back.
        app.type_into("#pool-policy-gpus", "2").await;
        app.click("#pool-policy-save").await;
        app.eventually("the limit saved", Duration::from_secs(10), || async {
            let status = app.text_of("[data-testid=\"pool-policy-status\"]").await?;
            status.contains("more than 2 GPUs").then_some(())
        })
        .await;
        app.focus("#pool-slider").await;
        app.press(Key::Right, 3).await;
        let (_, _, asks) = preview_for(&app, 3).await;
        assert!(asks.contains("confirmation"), "{asks}");
        app.press(Key::Enter, 1).await;
        let question = app.eventually("the confirmation", Duration::from_secs(10), || {
            app.text_of("[data-testid=\"pool-confirm\"]")
        })
        .await;
        assert!(question.contains("more than 2"), "{question}");
        app.scroll_to(".pool-slider-card").await;
        app.shoot("pool-en-light-confirm").await;
        app.click("[data-testid=\"cancel-scale\"]").await;
        assert!(!app.exists("[data-testid=\"pool-confirm\"]").await);
        app.wait_value("#pool-slider", "0").await;
        assert_eq!(
            app.text_now("[data-testid=\"pool-desired\"]").await,
            "0"
        );
        // Asked again and confirmed: it goes through.
        app.focus("#pool-slider").await;
        app.press(Key::Right, 3).await;
        preview_for(&app, 3).await;
        app.press(Key::Enter, 1).await;
        app.eventually(
            "the confirmation again",
            Duration::from_secs(10),
            || async {
                app.exists("[data-testid=\"confirm-scale\"]")
                    .await
                    .then_some(())
            },
        )
        .await;
        app.click("[data-testid=\"confirm-scale\"]").await;
        app.wait_text("desired 3",
            "[data-testid=\"pool-desired\"]",
            "3",
            Duration::from_secs(10),
        )
        .await;

        // The Activity view lists the changes, newest first.
        app.click("#nav-activity").await;
        let changes = app.eventually("three slider changes", Duration::from_secs(15), || async {
            let rows = app
                .find_all(Locator::Css(
                    "[data-testid=\"activity-row\"][data-pool=\"inference\"][data-actor=\"operator\"]",
                ))
                .await
                .ok()?;
            let mut seen = Vec::new();
            for row in rows {
                let from = row.attr("data-from").await.ok()??;
                let to = row.attr("data-to").await.ok()??;
                seen.push(format!("{from}>{to}"));
            }
            seen.starts_with(&[
                "0>3".into(),
                "3>0".into(),
                "0>3".into(),
                "4>0".into(),
                "0>4".into(),
            ])
                .then_some(seen)
        })
        .await;
        assert!(changes.len() >= 3, "{changes:?}");
        app.shoot("activity-en-light").await;

        // The pool form: the regions offered are those whose hosts have the model (V100s
        // are not in cn-east), and the console's refusal shows at the field it names.
        app.click("#nav-pool").await;
        app.click("#pool-new").await;
        app.type_into("#pool-f-name", "inference").await;
        app.select_value("#pool-f-model", "V100").await;
        app.wait_exists("the V100's regions", "#pool-f-regions input[value=\"cn-north\"]", Duration::from_secs(5)).await;
        assert!(
            !app.exists("#pool-f-regions input[value=\"cn-east\"]").await,
            "cn-east has no V100 and is not offered"
        );
        app.click("#pool-f-regions input[value=\"cn-north\"]").await;
        app.click("#pool-f-save").await;
        // The error box is there before the answer: wait for its words.
        let refusal = app.eventually("the name refused", Duration::from_secs(10), || async {
            app.text_of("#pool-f-name-error")
                .await
                .filter(|text| !text.trim().is_empty())
        })
        .await;
        assert!(refusal.contains("inference"), "{refusal}");
        app.scroll_to("#pool-form").await;
        app.shoot("pool-en-light-form-error").await;
        // Cancel on a form with typed input asks before throwing it away; Keep editing
        // keeps every field as typed, Discard closes it.
        app.click("#pool-f-cancel").await;
        app.eventually("the discard question on Cancel", Duration::from_secs(5), || async {
            (app.active_id().await == "pool-f-discard-no").then_some(())
        })
        .await;
        assert!(app.exists("#pool-form [data-testid=\"discard-question\"]").await);
        app.click("#pool-f-discard-no").await;
        assert!(app.exists("#pool-form").await, "kept editing");
        assert!(!app.exists("[data-testid=\"discard-question\"]").await);
        assert_eq!(
            app.value_of("#pool-f-name").await.unwrap().as_deref(),
            Some("inference")
        );
        app.click("#pool-f-cancel").await;
        app.click("#pool-f-discard-yes").await;
        assert!(!app.exists("#pool-form").await);

        // The same screens in Chinese and dark, for a person to look at.
        if shooting() {
            app.open_settings_hosts().await;
            app.click("#setting-theme-dark").await;
            app.click("#setting-language-zh-CN").await;
            app.click("#nav-pool").await;
            app.wait_text("3 GPUs held",
                "[data-testid=\"pool-actual\"]",
                "3",
                converge,
            )
            .await;
            app.focus("#pool-slider").await;
            app.press(Key::Right, 2).await;
            preview_for(&app, 5).await;
            app.shoot("pool-zh-dark").await;
            app.scroll_to("[data-testid=\"pool-hosts\"]").await;
            app.shoot("pool-zh-dark-tables").await;
            app.click("#pool-edit").await;
            app.scroll_to("#pool-form").await;
            app.shoot("pool-zh-dark-form").await;
            app.click("#nav-activity").await;
            app.wait_exists("the activity rows", "[data-testid=\"activity-row\"]", Duration::from_secs(10)).await;
            app.shoot("activity-zh-dark").await;
            app.open_settings_hosts().await;
            app.click("#setting-language-en").await;
            app.click("#setting-theme-light").await;
        }
    })
    .await;
}
