//! The parsers of what an operator hands us (the price catalog, a demand CSV) never panic,
//! name the line or the field of every refusal, and still read valid files however they
//! arrive (a BOM, CRLF). Inputs: arbitrary bytes and text, and mutations of valid files
//! (`ebb_testkit::fuzz`); each test prints `parser cases run: ...`.

use ebb_cost::{DEMO_CATALOG, DemandSeries, InvalidCatalog, parse_catalog};
use ebb_testkit::fuzz::{self, CaseCount, lossy, names_a_line};

/// Catalogs that parse: the demo one (every mode, a spot series, notes) and two small ones.
fn valid_catalogs() -> Vec<String> {
    vec![
        DEMO_CATALOG.to_string(),
        "currency = \"CNY\"\n[[price]]\nmodel = \"A100\"\nregion = \"cn-east\"\nhour = 12.5\nmonth = 4800\n"
            .to_string(),
        r#"currency = "CNY"
name = "two"

[[price]]
model = "V100"
region = "cn-north"
hour = 4
day = 90
week = 600
month = 1800
year = 20000
spot_hour = 2.10
spot_notice_minutes = 2
reserved_hour = 3
spot_series = [{ hour = 0, price = 2.10 }, { hour = 24, price = 2.5 }]

[[price]]
model = "Ascend 910B"
region = "cn-south"
hour = 9.99
month = 3900
"#
        .to_string(),
    ]
}

/// Every problem of a refused catalog says where: its entry or field, or (TOML syntax) the
/// line.
fn check_catalog_refusal(invalid: &InvalidCatalog) -> Result<(), String> {
    if invalid.problems.is_empty() {
        return Err(format!("refused with no problem: {invalid}"));
    }
    for problem in &invalid.problems {
        let placed =
            problem.entry.is_some() || problem.field.is_some() || names_a_line(&problem.message);
        if !placed {
            return Err(format!("names no line, entry or field: {problem}"));
        }
    }
    Ok(())
}

fn check_catalog(bytes: &[u8]) -> Result<(), String> {
    match parse_catalog(&lossy(bytes)) {
        Ok(validated) => {
            if validated.catalog.entries.is_empty() {
                return Err("accepted with no entries".into());
            }
            Ok(())
        }
        Err(invalid) => check_catalog_refusal(&invalid),
    }
}

#[test]
fn the_catalog_parser_never_panics_and_names_every_refusal() {
    let mut count = CaseCount::new();
    count.check(
        "arbitrary",
        256,
        fuzz::arbitrary(r#"[a-z_\[\]=." \n#0-9,{}-]{0,400}"#),
        |bytes| check_catalog(&bytes),
    );
    count.check("mutated", 768, fuzz::mutated(valid_catalogs()), |bytes| {
        check_catalog(&bytes)
    });
    count.check(
        "valid",
        128,
        fuzz::valid_variants(valid_catalogs()),
        |text| {
            parse_catalog(&text)
                .map(drop)
                .map_err(|invalid| format!("a valid catalog was refused: {invalid}"))
        },
    );
    count.report("catalog");
}

/// Demand files that parse: hourly with gaps, comments and an extra column; by the minute.
fn valid_demands() -> Vec<String> {
    vec![
        "# a comment\nhour,demand,users\n10,2,100\n11,2.3,120\n\n14,0.5,1\n15,4,9\n".to_string(),
        "minute,demand\n0,1\n30,5.5\n59,2\n60,1\n179,3\n".to_string(),
        (0..48)
            .map(|hour| format!("{hour},{}\n", hour % 7))
            .fold("hour,demand\n".to_string(), |text, row| text + &row),
    ]
}

fn check_demand(bytes: &[u8]) -> Result<(), String> {
    match DemandSeries::from_csv(&lossy(bytes)) {
        Ok(series) => {
            if series.hours() == 0 {
                return Err("accepted with no hours".into());
            }
            Ok(())
        }
        Err(error) => {
            let message = error.to_string();
            if error.line == 0 || !names_a_line(&message) {
                return Err(format!("names no line: {message}"));
            }
            Ok(())
        }
    }
}

#[test]
fn the_demand_parser_never_panics_and_names_every_refusal() {
    let mut count = CaseCount::new();
    count.check(
        "arbitrary",
        256,
        fuzz::arbitrary(r"[hourminutedmn,\n\r 0-9.#e+-]{0,300}"),
        |bytes| check_demand(&bytes),
    );
    count.check("mutated", 768, fuzz::mutated(valid_demands()), |bytes| {
        check_demand(&bytes)
    });
    count.check(
        "valid",
        128,
        fuzz::valid_variants(valid_demands()),
        |text| {
            DemandSeries::from_csv(&text)
                .map(drop)
                .map_err(|error| format!("a valid demand file was refused: {error}"))
        },
    );
    count.report("demand CSV");
}

/// Found by the property above: a spreadsheet's byte order mark made the header unreadable
/// (`﻿hour` is not `hour`).
#[test]
fn a_demand_file_with_a_byte_order_mark_is_read() {
    let series = DemandSeries::from_csv("\u{feff}hour,demand\r\n0,1\r\n1,2\r\n").unwrap();
    assert_eq!(series.gpus(), &[1, 2]);
    let commented = DemandSeries::from_csv("\u{feff}# from a sheet\nminute,demand\n0,3\n").unwrap();
    assert_eq!(commented.gpus(), &[3]);
}
