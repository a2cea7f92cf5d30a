//! Words as data: a message catalog key (`ui/src/locales/*.json`) and its arguments. Rust
//! decides which words a reason or a form problem is ([`Phrase`]); each side renders them
//! in the operator's language with the one catalog: the UI with `t(key, args)`
//! (`ui/src/phrase.ts`), the desktop notifications with `ebb_notify::Words::render`. So the
//! mapping from a structured reason to its words is written once, here in Rust.
//!
//! An argument is typed so each side formats it as it formats that kind of value: money as
//! yuan, a time as `HH:MM` (UTC in Rust text, the viewer's clock in the UI), a GPU count
//! with its noun, a rule's number bare or to two places; an argument may itself be a phrase
//! (a clamp inside a decision), or phrases joined by a separator key.

use serde::{Deserialize, Serialize};
use specta::Type;

/// A catalog key and its named arguments.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, Type)]
pub struct Phrase {
    pub key: String,
    pub args: Vec<PhraseArg>,
}

/// One `{name}` of a phrase and its value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct PhraseArg {
    pub name: String,
    pub value: Arg,
}

/// A value in a phrase, typed by how it is written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum Arg {
    /// Written as it is: a name, a metric, a symbol.
    Text(String),
    /// A whole number written bare: `3`.
    Int(i64),
    /// A rule's number: whole numbers bare, others to two places.
    Number(f64),
    /// Money in fen: `¥12.50`.
    Money(i64),
    /// A moment (epoch ms) as `HH:MM`.
    Time(i64),
    /// A count of GPUs with its noun: "1 GPU", "4 GPUs".
    Gpus(u32),
    /// Words of their own.
    Phrase(Box<Phrase>),
    /// Phrases joined by the words of the `separator` key.
    Join {
        parts: Vec<Phrase>,
        separator: String,
    },
}

impl Phrase {
    /// The words of `key` with no argument yet.
    pub fn new(key: &str) -> Phrase {
        Phrase {
            key: key.to_string(),
            args: Vec::new(),
        }
    }

    /// With `{name}` as `value`.
    #[must_use]
    pub fn arg(mut self, name: &str, value: Arg) -> Phrase {
        self.args.push(PhraseArg {
            name: name.to_string(),
            value,
        });
        self
    }

    #[must_use]
    pub fn text(self, name: &str, value: impl Into<String>) -> Phrase {
        self.arg(name, Arg::Text(value.into()))
    }

    #[must_use]
    pub fn int(self, name: &str, value: impl Into<i64>) -> Phrase {
        self.arg(name, Arg::Int(value.into()))
    }

    #[must_use]
    pub fn number(self, name: &str, value: f64) -> Phrase {
        self.arg(name, Arg::Number(value))
    }

    #[must_use]
    pub fn money(self, name: &str, fen: i64) -> Phrase {
        self.arg(name, Arg::Money(fen))
    }

    #[must_use]
    pub fn time(self, name: &str, at_ms: i64) -> Phrase {
        self.arg(name, Arg::Time(at_ms))
    }

    #[must_use]
    pub fn gpus(self, name: &str, gpus: u32) -> Phrase {
        self.arg(name, Arg::Gpus(gpus))
    }

    #[must_use]
    pub fn phrase(self, name: &str, words: Phrase) -> Phrase {
        self.arg(name, Arg::Phrase(Box::new(words)))
    }

    #[must_use]
    pub fn join(self, name: &str, parts: Vec<Phrase>, separator: &str) -> Phrase {
        self.arg(
            name,
            Arg::Join {
                parts,
                separator: separator.to_string(),
            },
        )
    }

    /// Every key this phrase names, its own first, then its arguments' (for the tests that
    /// check each key is in both catalogs).
    pub fn keys(&self) -> Vec<&str> {
        let mut out = vec![self.key.as_str()];
        for arg in &self.args {
            match &arg.value {
                Arg::Phrase(inner) => out.extend(inner.keys()),
                Arg::Join { parts, separator } => {
                    out.push(separator);
                    out.extend(parts.iter().flat_map(Phrase::keys));
                }
                _ => {}
            }
        }
        out
    }
}

/// A problem with one field of a form, in words: the field as the form names it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct FieldProblem {
    pub field: String,
    pub words: Phrase,
}

impl FieldProblem {
    pub fn new(field: &str, words: Phrase) -> FieldProblem {
        FieldProblem {
            field: field.to_string(),
            words,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_phrase_travels_as_its_key_and_typed_args() {
        let inner = Phrase::new("reason.rules.clamp.min")
            .int("from", 0)
            .int("to", 1);
        let words = Phrase::new("reason.rules.decision.held")
            .text("rule", "out")
            .phrase("clamp", inner.clone());
        let json = serde_json::to_value(&words).unwrap();
        assert_eq!(
            json["args"][1],
            serde_json::json!({"name": "clamp", "value": {"kind": "phrase", "value": serde_json::to_value(&inner).unwrap()}})
        );
        assert_eq!(
            serde_json::from_value::<Phrase>(json).unwrap(),
            words,
            "read back as written"
        );
        assert_eq!(
            words.keys(),
            ["reason.rules.decision.held", "reason.rules.clamp.min"]
        );
    }
}
