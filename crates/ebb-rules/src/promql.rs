//! PromQL for a custom metric read from Prometheus, pure: what the rule file's query must
//! look like before it is saved, and the query a pool sends.
//!
//! The check is of shape, not of meaning (Prometheus itself parses the query): something to
//! ask, brackets that close in order, quotes that end, at most 4 KiB. The console asks the
//! server too when it can (`ebb rules lint`, the Rules form's test).

/// The longest query accepted, in bytes.
pub const MAX_QUERY_BYTES: usize = 4096;

/// Whether `query` can be sent: `Err` says what is wrong, with the column (from 1).
pub fn check(query: &str) -> Result<(), String> {
    if query.trim().is_empty() {
        return Err("a PromQL query is needed, e.g. sum(up)".into());
    }
    if query.len() > MAX_QUERY_BYTES {
        return Err(format!(
            "{} bytes: a query is at most {MAX_QUERY_BYTES}",
            query.len()
        ));
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
                        return Err(format!(
                            "column {column}: `{c}` closes the `{got}` of column {at}"
                        ));
                    }
                    None => return Err(format!("column {column}: `{c}` closes nothing")),
                }
            }
            _ => {}
        }
    }
    if let Some((q, at)) = quote {
        return Err(format!(
            "column {at}: the string opened by {q} does not end"
        ));
    }
    if let Some((c, at)) = open.pop() {
        return Err(format!("column {at}: `{c}` is never closed"));
    }
    Ok(())
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
