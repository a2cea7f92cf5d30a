//! PromQL for a custom metric read from Prometheus, pure: what the rule file's query must
//! look like before it is saved, and the query a pool sends.
//!
//! The check is of shape, not of meaning (Prometheus itself parses the query): something to
//! ask, brackets that close in order, quotes that end, at most 4 KiB. The console asks the
//! server too when it can (`ebb rules lint`, the Rules form's test).

use ebb_wire::catalog::Words;
use ebb_wire::ipc::UiLanguage;
use ebb_wire::phrase::Phrase;

/// The longest query accepted, in bytes.
pub const MAX_QUERY_BYTES: usize = 4096;

/// Whether `query` can be sent: `Err` says what is wrong, with the column (from 1), in
/// English (as [`check_words`] words it).
pub fn check(query: &str) -> Result<(), String> {
    check_words(query).map_err(|words| Words::of(UiLanguage::English).render(&words))
}

/// Whether `query` can be sent: `Err` says what is wrong, with the column (from 1), as
/// words (a `rules.error.promql*` phrase).
pub fn check_words(query: &str) -> Result<(), Phrase> {
    if query.trim().is_empty() {
        return Err(Phrase::new("rules.error.promqlEmpty"));
    }
    if query.len() > MAX_QUERY_BYTES {
        return Err(Phrase::new("rules.error.promqlTooLong")
            .int("bytes", i64::try_from(query.len()).unwrap_or(i64::MAX))
            .int("max", i64::try_from(MAX_QUERY_BYTES).unwrap_or(i64::MAX)));
    }
    let mut open: Vec<(char, usize)> = Vec::new();
    let mut quote: Option<(char, usize)> = None;
    let mut escaped = false;
    for (column, c) in query.chars().enumerate().map(|(i, c)| (i + 1, c)) {
        if let Some((q, _)) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' && q != '`' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' | '`' => quote = Some((c, column)),
            '(' | '[' | '{' => open.push((c, column)),
            ')' | ']' | '}' => {
                let want = match c {
                    ')' => '(',
                    ']' => '[',
                    _ => '{',
                };
                match open.pop() {
                    Some((got, _)) if got == want => {}
                    Some((got, at)) => {
                        return Err(Phrase::new("rules.error.promqlMismatch")
                            .int("column", column_number(column))
                            .text("close", c)
                            .text("open", got)
                            .int("at", column_number(at)));
                    }
                    None => {
                        return Err(Phrase::new("rules.error.promqlClosesNothing")
                            .int("column", column_number(column))
                            .text("close", c));
                    }
                }
            }
            _ => {}
        }
    }
    if let Some((q, at)) = quote {
        return Err(Phrase::new("rules.error.promqlOpenString")
            .int("column", column_number(at))
            .text("quote", q));
    }
    if let Some((c, at)) = open.pop() {
        return Err(Phrase::new("rules.error.promqlNeverClosed")
            .int("column", column_number(at))
            .text("open", c));
    }
    Ok(())
}

fn column_number(column: usize) -> i64 {
    i64::try_from(column).unwrap_or(i64::MAX)
}

/// The query a pool sends: each `{pool}` is the pool's name, escaped as inside a PromQL
/// string (the usual place: `requests{pool="{pool}"}`).
pub fn render(query: &str, pool: &str) -> String {
    let escaped = pool.replace('\\', "\\\\").replace('"', "\\\"");
    query.replace("{pool}", &escaped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_is_checked_for_shape_with_its_column() {
        assert!(check(r#"sum(rate(requests_total{pool="{pool}"}[1m]))"#).is_ok());
        assert!(check("vector(1)").is_ok());
        assert!(
            check(r#"up{job="a)b"}"#).is_ok(),
            "brackets in strings count for nothing"
        );
        assert_eq!(
            check("  ").unwrap_err(),
            "a PromQL query is needed, e.g. sum(up)"
        );
        assert_eq!(
            check("sum(up").unwrap_err(),
            "column 4: `(` is never closed"
        );
        assert_eq!(
            check("sum(up]").unwrap_err(),
            "column 7: `]` closes the `(` of column 4"
        );
        assert_eq!(check("up)").unwrap_err(), "column 3: `)` closes nothing");
        assert_eq!(
            check(r#"up{job="x}"#).unwrap_err(),
            "column 8: the string opened by \" does not end"
        );
        assert!(check(&"a".repeat(MAX_QUERY_BYTES + 1)).is_err());
    }

    #[test]
    fn the_pool_is_templated_in_as_a_string() {
        assert_eq!(
            render(r#"sum(x{pool="{pool}"})"#, "web"),
            r#"sum(x{pool="web"})"#
        );
        assert_eq!(render(r#"x{pool="{pool}"}"#, r#"a"b"#), r#"x{pool="a\"b"}"#);
    }
}
