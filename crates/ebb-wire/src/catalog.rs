//! The operator's words outside the webview, from the one message catalog: one JSON file per
//! locale, `ui/src/locales/en.json` and `zh-CN.json`, which the UI imports and this compiles
//! in. The desktop notifications are worded with it (`ebb_notify`), and the English of a
//! phrased reason (`Display` of a rule state, a clamp, a decision's reason) is its phrase
//! in the English catalog, so a sentence is written once, and a Chinese one never in Rust.
//!
//! Keys and `{placeholders}` are the UI's: `t("reason.rules.clamp.min", {from, to})` there is
//! `words.text("reason.rules.clamp.min", &[("from", &from), ("to", &to)])` here.

use crate::ipc::UiLanguage;
use crate::phrase::{Arg, Phrase};
use std::collections::HashMap;
use std::fmt::Display;
use std::sync::LazyLock;

type Catalog = HashMap<String, String>;

static EN: LazyLock<Catalog> =
    LazyLock::new(|| parse(include_str!("../../../ui/src/locales/en.json")));
static ZH_CN: LazyLock<Catalog> =
    LazyLock::new(|| parse(include_str!("../../../ui/src/locales/zh-CN.json")));

fn parse(text: &str) -> Catalog {
    // Compiled in, and read by this module's tests: a catalog that is not an object of
    // strings fails them, never an operator.
    serde_json::from_str(text).unwrap_or_default()
}

/// One language's catalog.
#[derive(Debug, Clone, Copy)]
pub struct Words {
    catalog: &'static Catalog,
}

/// A placeholder's name and its value.
pub type Param<'a> = (&'a str, &'a dyn Display);

impl Words {
    /// The catalog of `language`.
    pub fn of(language: UiLanguage) -> Self {
        let catalog = match language {
            UiLanguage::English => &*EN,
            UiLanguage::SimplifiedChinese => &*ZH_CN,
        };
        Words { catalog }
    }

    /// The words of `key` with each `{name}` filled from `params`; a placeholder not given
    /// stays as it is, as in the UI. A key missing here (the tests name every key used) falls
    /// back to the English, then to the key itself.
    pub fn text(&self, key: &str, params: &[Param<'_>]) -> String {
        let template = self
            .catalog
            .get(key)
            .or_else(|| EN.get(key))
            .map_or(key, String::as_str);
        interpolate(template, params)
    }

    /// A phrase (a reason's words as Rust chose them, `ebb_wire::words`) in this language:
    /// money as yuan, a time as `HH:MM` UTC (as the logs write it), GPUs with their noun.
    pub fn render(&self, phrase: &Phrase) -> String {
        let values: Vec<(&str, String)> = phrase
            .args
            .iter()
            .map(|arg| (arg.name.as_str(), self.arg(&arg.value)))
            .collect();
        let params: Vec<Param<'_>> = values
            .iter()
            .map(|(name, value)| (*name, value as &dyn Display))
            .collect();
        self.text(&phrase.key, &params)
    }

    /// One argument of a phrase, in this language.
    pub fn arg(&self, arg: &Arg) -> String {
        match arg {
            Arg::Text(text) => text.clone(),
            Arg::Int(n) => n.to_string(),
            Arg::Number(value) => crate::rules::number(*value),
            Arg::Money(fen) => crate::plan::yuan(*fen),
            Arg::Time(at_ms) => crate::rules::hh_mm_utc(*at_ms),
            Arg::Gpus(1) => self.text("notify.gpus.one", &[]),
            Arg::Gpus(gpus) => self.text("notify.gpus.other", &[("gpus", gpus)]),
            Arg::Phrase(inner) => self.render(inner),
            Arg::Join { parts, separator } => {
                let separator = self.text(separator, &[]);
                let parts: Vec<String> = parts.iter().map(|part| self.render(part)).collect();
                parts.join(&separator)
            }
        }
    }
}

/// `{name}` → the value named `name` in `params` (as `interpolate` in `ui/src/i18n.ts`).
fn interpolate(template: &str, params: &[Param<'_>]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let name_len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        let value = (name_len > 0 && after[name_len..].starts_with('}'))
            .then(|| params.iter().find(|(name, _)| *name == &after[..name_len]))
            .flatten();
        match value {
            Some((_, value)) => {
                out.push_str(&value.to_string());
                rest = &after[name_len + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(locale: &str) -> Catalog {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("../../ui/src/locales/{locale}.json"));
        serde_json::from_str(&std::fs::read_to_string(path).unwrap())
            .expect("a catalog is a JSON object of strings")
    }

    #[test]
    fn both_catalogs_are_compiled_in_whole() {
        assert_eq!(*EN, file("en"));
        assert_eq!(*ZH_CN, file("zh-CN"));
        assert!(EN.len() > 1_000, "{}", EN.len());
    }

    #[test]
    fn placeholders_are_filled_by_name_and_unknown_ones_left_alone() {
        let gpus = 4;
        assert_eq!(
            interpolate(
                "{pool} to {gpus} ({gpus})",
                &[("pool", &"render"), ("gpus", &gpus)]
            ),
            "render to 4 (4)"
        );
        assert_eq!(interpolate("{missing} stays", &[]), "{missing} stays");
        assert_eq!(
            interpolate("{ not a name } {", &[("x", &1)]),
            "{ not a name } {"
        );
        assert_eq!(
            interpolate("规则 {rule}：", &[("rule", &"hot")]),
            "规则 hot："
        );
        let en = Words::of(UiLanguage::English);
        let zh = Words::of(UiLanguage::SimplifiedChinese);
        assert_eq!(
            en.text("reason.rules.clamp.min", &[("from", &0), ("to", &1)]),
            "the pool's min: 0 → 1"
        );
        assert_eq!(
            zh.text("reason.rules.clamp.min", &[("from", &0), ("to", &1)]),
            "资源池下限：0 → 1"
        );
        assert_eq!(en.text("no.such.key", &[]), "no.such.key");
    }
}
