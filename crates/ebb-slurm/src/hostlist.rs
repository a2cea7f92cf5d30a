//! Slurm's hostlist syntax, the form in which Slurm hands nodes to a ResumeProgram or
//! SuspendProgram and prints them in `sinfo`: `gpu[1-4,7]`, `rack[1-2]-gpu[01-04]`.
//!
//! [`expand`] reads one into names, [`compress`] writes names back as one. Every error
//! names the column (1-based, in characters) and the problem, since the text comes from a
//! person or a Slurm config.

use std::collections::{BTreeMap, BTreeSet};

use thiserror::Error;

/// The most hosts one hostlist may name: Slurm's own limit, and a guard against
/// `gpu[0-99999999]` filling memory.
pub const MAX_HOSTS: usize = 65_536;

/// Why a hostlist could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum HostlistError {
    /// A `[` never closed, a `]` never opened, or a `[` inside brackets.
    #[error("column {column}: unbalanced bracket")]
    UnbalancedBracket { column: usize },
    /// Nothing between two commas, or a comma at either end.
    #[error("column {column}: empty item")]
    EmptyItem { column: usize },
    /// `gpu[]` or `gpu[1,]`: a bracket with a range missing.
    #[error("column {column}: empty range")]
    EmptyRange { column: usize },
    /// `gpu[9-3]`.
    #[error("column {column}: range {start}-{end} starts past its end")]
    ReversedRange {
        column: usize,
        start: String,
        end: String,
    },
    /// A range bound that is not digits: `gpu[a-3]`, `gpu[1-2-3]`.
    #[error("column {column}: `{text}` is not a number")]
    NotANumber { column: usize, text: String },
    /// A bound past `u64`.
    #[error("column {column}: {text} is too large a number")]
    NumberTooLarge { column: usize, text: String },
    /// Whitespace inside a host name: `gpu 1`.
    #[error("column {column}: unexpected {character:?} in a host name")]
    UnexpectedCharacter { column: usize, character: char },
    /// The list names more than [`MAX_HOSTS`].
    #[error("more than {MAX_HOSTS} hosts")]
    TooManyHosts,
}

/// One range inside brackets: `start..=end`, each written `width` digits wide at least.
#[derive(Debug, Clone, Copy)]
struct NumberRange {
    start: u64,
    end: u64,
    width: usize,
}

impl NumberRange {
    fn len(self) -> u128 {
        u128::from(self.end - self.start) + 1
    }
}

#[derive(Debug)]
enum Segment {
    Text(String),
    Ranges(Vec<NumberRange>),
}

/// The names a hostlist stands for, in its order: items left to right, and within an item
/// the first bracket group outermost (`rack[1-2]-gpu[1-2]` → rack1-gpu1, rack1-gpu2,
/// rack2-gpu1, rack2-gpu2). A range keeps its start's width (`gpu[08-10]` → gpu08, gpu09,
/// gpu10). Whitespace around an item is ignored; an empty or blank spec names no host.
pub fn expand(spec: &str) -> Result<Vec<String>, HostlistError> {
    let chars: Vec<char> = spec.chars().collect();
    if chars.iter().all(|c| c.is_whitespace()) {
        return Ok(Vec::new());
    }
    let mut items = Vec::new();
    for (start, end) in split_items(&chars)? {
        items.push(parse_item(&chars, start, end)?);
    }
    let mut total: u128 = 0;
    for segments in &items {
        let count = segments.iter().fold(1u128, |count, segment| match segment {
            Segment::Text(_) => count,
            Segment::Ranges(ranges) => {
                count.saturating_mul(ranges.iter().map(|r| r.len()).sum::<u128>())
            }
        });
        total = total.saturating_add(count);
        if total > MAX_HOSTS as u128 {
            return Err(HostlistError::TooManyHosts);
        }
    }
    let mut names = Vec::with_capacity(total as usize);
    for segments in &items {
        names.extend(item_names(segments));
    }
    Ok(names)
}

/// The top-level items (char index ranges), split at commas outside brackets.
fn split_items(chars: &[char]) -> Result<Vec<(usize, usize)>, HostlistError> {
    let mut items = Vec::new();
    let mut open: Option<usize> = None;
    let mut item_start = 0;
    for (index, &c) in chars.iter().enumerate() {
        match c {
            '[' if open.is_some() => {
                return Err(HostlistError::UnbalancedBracket { column: index + 1 });
            }
            '[' => open = Some(index),
            ']' if open.is_none() => {
                return Err(HostlistError::UnbalancedBracket { column: index + 1 });
            }
            ']' => open = None,
            ',' if open.is_none() => {
                items.push((item_start, index));
                item_start = index + 1;
            }
            _ => {}
        }
    }
    if let Some(index) = open {
        return Err(HostlistError::UnbalancedBracket { column: index + 1 });
    }
    items.push((item_start, chars.len()));
    Ok(items)
}

/// One item (`chars[start..end]`, brackets balanced) into its text and bracket groups.
fn parse_item(chars: &[char], start: usize, end: usize) -> Result<Vec<Segment>, HostlistError> {
    let mut start = start;
    let mut end = end;
    while start < end && chars[start].is_whitespace() {
        start += 1;
    }
    while end > start && chars[end - 1].is_whitespace() {
        end -= 1;
    }
    if start == end {
        return Err(HostlistError::EmptyItem { column: start + 1 });
    }
    let mut segments = Vec::new();
    let mut text = String::new();
    let mut index = start;
    while index < end {
        let c = chars[index];
        if c == '[' {
            if !text.is_empty() {
                segments.push(Segment::Text(std::mem::take(&mut text)));
            }
            let close = (index + 1..end)
                .find(|&i| chars[i] == ']')
                .ok_or(HostlistError::UnbalancedBracket { column: index + 1 })?;
            segments.push(Segment::Ranges(parse_ranges(chars, index + 1, close)?));
            index = close + 1;
            continue;
        }
        if c.is_whitespace() {
            return Err(HostlistError::UnexpectedCharacter {
                column: index + 1,
                character: c,
            });
        }
        text.push(c);
        index += 1;
    }
    if !text.is_empty() {
        segments.push(Segment::Text(text));
    }
    Ok(segments)
}

/// The inside of one bracket group, `chars[start..end]`: comma-separated `a` or `a-b`.
fn parse_ranges(
    chars: &[char],
    start: usize,
    end: usize,
) -> Result<Vec<NumberRange>, HostlistError> {
    let mut ranges = Vec::new();
    let mut part_start = start;
    for index in start..=end {
        if index < end && chars[index] != ',' {
            continue;
        }
        if part_start == index {
            return Err(HostlistError::EmptyRange {
                column: part_start + 1,
            });
        }
        let part = &chars[part_start..index];
        let range = match part.iter().position(|&c| c == '-') {
            None => {
                let (value, text) = number(part, part_start)?;
                NumberRange {
                    start: value,
                    end: value,
                    width: text.len(),
                }
            }
            Some(dash) => {
                let (low, low_text) = number(&part[..dash], part_start)?;
                let (high, high_text) = number(&part[dash + 1..], part_start + dash + 1)?;
                if low > high {
                    return Err(HostlistError::ReversedRange {
                        column: part_start + 1,
                        start: low_text,
                        end: high_text,
                    });
                }
                NumberRange {
                    start: low,
                    end: high,
                    width: low_text.len(),
                }
            }
        };
        ranges.push(range);
        part_start = index + 1;
    }
    Ok(ranges)
}

/// A range bound: ASCII digits only, starting at char index `at`.
fn number(chars: &[char], at: usize) -> Result<(u64, String), HostlistError> {
    let text: String = chars.iter().collect();
    if text.is_empty() || !chars.iter().all(char::is_ascii_digit) {
        return Err(HostlistError::NotANumber {
            column: at + 1,
            text,
        });
    }
    match text.parse() {
        Ok(value) => Ok((value, text)),
        Err(_) => Err(HostlistError::NumberTooLarge {
            column: at + 1,
            text,
        }),
    }
}

/// The names one parsed item stands for, first bracket group outermost.
fn item_names(segments: &[Segment]) -> Vec<String> {
    let mut names = vec![String::new()];
    for segment in segments {
        match segment {
            Segment::Text(text) => names.iter_mut().for_each(|name| name.push_str(text)),
            Segment::Ranges(ranges) => {
                let mut next = Vec::new();
                for name in &names {
                    for range in ranges {
                        for value in range.start..=range.end {
                            next.push(format!("{name}{value:0width$}", width = range.width));
                        }
                    }
                }
                names = next;
            }
        }
    }
    names
}

/// Names as one hostlist, the inverse of [`expand`]: names ending in a number are grouped
/// by what comes before it, consecutive numbers written as a range (`gpu[1-3,7]`,
/// `gpu[08-10]`), a group of one name left bare (`gpu7`); names without a trailing number
/// are written as they are. Items come out sorted and each name once.
///
/// Names are host names: non-empty, without `[`, `]`, `,` or whitespace (an empty name is
/// skipped). `expand(&compress(names))` names exactly the distinct names given.
pub fn compress<S: AsRef<str>>(names: &[S]) -> String {
    let unique: BTreeSet<&str> = names
        .iter()
        .map(AsRef::as_ref)
        .filter(|name| !name.is_empty())
        .collect();
    let mut items: Vec<String> = Vec::new();
    let mut numbered: BTreeMap<&str, Vec<(u64, &str)>> = BTreeMap::new();
    for name in unique {
        let digits_at = name
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_ascii_digit())
            .last()
            .map(|(index, _)| index);
        let parsed = digits_at.and_then(|at| Some((at, name[at..].parse::<u64>().ok()?)));
        match parsed {
            Some((at, value)) => numbered
                .entry(&name[..at])
                .or_default()
                .push((value, &name[at..])),
            None => items.push(name.to_owned()),
        }
    }
    for (prefix, mut numbers) in numbered {
        if let [(_, digits)] = numbers.as_slice() {
            items.push(format!("{prefix}{digits}"));
            continue;
        }
        numbers.sort_unstable();
        items.push(format!("{prefix}[{}]", runs(&numbers).join(",")));
    }
    items.sort_unstable();
    items.join(",")
}

/// Consecutive numbers as ranges. A run continues while the next number, written at the
/// run's start width as [`expand`] would write it, is among the names; so `8,9,10` is one
/// run `8-10` and `08,09,10` is `08-10`, while `8` and `08` stay apart.
fn runs(numbers: &[(u64, &str)]) -> Vec<String> {
    let mut unused: BTreeSet<&str> = numbers.iter().map(|&(_, digits)| digits).collect();
    let mut runs = Vec::new();
    for &(start, start_digits) in numbers {
        if !unused.remove(start_digits) {
            continue;
        }
        let width = start_digits.len();
        let mut end = start;
        let mut end_digits = start_digits.to_owned();
        while let Some(next) = end.checked_add(1) {
            let next_digits = format!("{next:0width$}");
            if !unused.remove(next_digits.as_str()) {
                break;
            }
            end = next;
            end_digits = next_digits;
        }
        runs.push(if end == start {
            start_digits.to_owned()
        } else {
            format!("{start_digits}-{end_digits}")
        });
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(spec: &str) -> Vec<String> {
        expand(spec).unwrap()
    }

    #[test]
    fn expands_ranges_singles_and_plain_names() {
        assert_eq!(
            names("gpu[1-4,7]"),
            ["gpu1", "gpu2", "gpu3", "gpu4", "gpu7"]
        );
        assert_eq!(names("gpu[7]"), ["gpu7"]);
        assert_eq!(names("login,gpu1"), ["login", "gpu1"]);
        assert_eq!(names(" a , b "), ["a", "b"]);
        assert_eq!(names("[1-2]"), ["1", "2"]);
        assert_eq!(names("gpu[1-2].lan"), ["gpu1.lan", "gpu2.lan"]);
        assert!(names("").is_empty());
        assert!(names("  ").is_empty());
    }

    #[test]
    fn keeps_zero_padding_from_the_range_start() {
        assert_eq!(names("gpu[08-10]"), ["gpu08", "gpu09", "gpu10"]);
        assert_eq!(names("gpu[8-10]"), ["gpu8", "gpu9", "gpu10"]);
        assert_eq!(names("gpu[098-100]"), ["gpu098", "gpu099", "gpu100"]);
    }

    #[test]
    fn several_groups_are_a_cartesian_product_first_outermost() {
        assert_eq!(
            names("rack[1-2]-gpu[01-02],x"),
            [
                "rack1-gpu01",
                "rack1-gpu02",
                "rack2-gpu01",
                "rack2-gpu02",
                "x"
            ]
        );
    }

    #[test]
    fn each_error_names_its_column_and_problem() {
        let cases: [(&str, HostlistError); 12] = [
            ("gpu[1-3", HostlistError::UnbalancedBracket { column: 4 }),
            ("gpu1-3]", HostlistError::UnbalancedBracket { column: 7 }),
            ("gpu[1[2]]", HostlistError::UnbalancedBracket { column: 6 }),
            ("a,,b", HostlistError::EmptyItem { column: 3 }),
            ("a,", HostlistError::EmptyItem { column: 3 }),
            ("gpu[]", HostlistError::EmptyRange { column: 5 }),
            ("gpu[1,]", HostlistError::EmptyRange { column: 7 }),
            (
                "gpu[9-3]",
                HostlistError::ReversedRange {
                    column: 5,
                    start: "9".into(),
                    end: "3".into(),
                },
            ),
            (
                "gpu[1-x]",
                HostlistError::NotANumber {
                    column: 7,
                    text: "x".into(),
                },
            ),
            (
                "gpu[1-2-3]",
                HostlistError::NotANumber {
                    column: 7,
                    text: "2-3".into(),
                },
            ),
            (
                "gpu[99999999999999999999]",
                HostlistError::NumberTooLarge {
                    column: 5,
                    text: "99999999999999999999".into(),
                },
            ),
            (
                "gpu 1",
                HostlistError::UnexpectedCharacter {
                    column: 4,
                    character: ' ',
                },
            ),
        ];
        for (spec, error) in cases {
            assert_eq!(expand(spec), Err(error), "{spec}");
        }
    }

    #[test]
    fn refuses_more_than_the_host_limit_before_expanding() {
        assert_eq!(expand("gpu[0-65536]"), Err(HostlistError::TooManyHosts));
        assert_eq!(expand("a[0-999]b[0-999]"), Err(HostlistError::TooManyHosts));
        assert_eq!(
            expand("g[0-18446744073709551615]"),
            Err(HostlistError::TooManyHosts)
        );
        assert_eq!(expand("gpu[1-65536]").unwrap().len(), MAX_HOSTS);
        assert_eq!(expand("gpu[1-65536],x"), Err(HostlistError::TooManyHosts));
    }

    #[test]
    fn errors_read_as_sentences() {
        assert_eq!(
            expand("gpu[9-3]").unwrap_err().to_string(),
            "column 5: range 9-3 starts past its end"
        );
    }

    #[test]
    fn compresses_runs_and_leaves_singles_bare() {
        assert_eq!(
            compress(&["gpu3", "gpu1", "gpu2", "gpu7", "gpu2"]),
            "gpu[1-3,7]"
        );
        assert_eq!(compress(&["gpu7"]), "gpu7");
        assert_eq!(compress(&["login", "gpu1", "gpu2"]), "gpu[1-2],login");
        assert_eq!(compress(&["gpu08", "gpu09", "gpu10"]), "gpu[08-10]");
        assert_eq!(compress(&["gpu8", "gpu9", "gpu10"]), "gpu[8-10]");
        assert_eq!(compress(&["gpu8", "gpu08"]), "gpu[08,8]");
        assert_eq!(compress(&["rack1-gpu1", "rack1-gpu2"]), "rack1-gpu[1-2]");
        assert_eq!(compress::<&str>(&[]), "");
    }
}
