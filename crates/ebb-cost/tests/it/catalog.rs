//! Parsing and validating price catalogs.

use ebb_cost::{Catalog, CostError, DEMO_CATALOG, Money, parse_catalog};

#[test]
fn the_demo_catalog_is_valid_complete_and_quiet() {
    let validated = parse_catalog(DEMO_CATALOG).unwrap();
    assert_eq!(
        validated.warnings,
        vec![],
        "the demo catalog should raise no warnings"
    );
    let catalog = validated.catalog;
    assert_eq!(catalog.currency, "CNY");
    // The regions are the agent's virtual fleet's.
    for model in ["H800", "A100", "V100", "Ascend 910B"] {
        for region in ["cn-north", "cn-east", "cn-south"] {
            let entry = catalog.find(model, region).unwrap();
            for (mode, price) in [
                ("day", entry.day),
                ("week", entry.week),
                ("year", entry.year),
                ("spot_hour", entry.spot_hour),
                ("reserved_hour", entry.reserved_hour),
            ] {
                assert!(price.is_some(), "{model} in {region} lacks {mode}");
            }
        }
    }
    assert_eq!(catalog.entries.len(), 12);
}

#[test]
fn lookups_forgive_case_spaces_and_dashes_and_name_what_exists() {
    let catalog = Catalog::demo();
    assert_eq!(
        catalog.find("ascend910b", "CN-NORTH").unwrap().model,
        "Ascend 910B"
    );
    assert_eq!(
        catalog.find("Ascend_910B", "cn north").unwrap().region,
        "cn-north"
    );
    let error = catalog.find("B200", "cn-north").unwrap_err();
    assert!(matches!(error, CostError::NoPrice { .. }));
    let message = error.to_string();
    assert!(
        message.contains("no price for `B200` in `cn-north`"),
        "{message}"
    );
    assert!(message.contains("A100 in cn-east"), "{message}");
}

#[test]
fn every_problem_is_listed_with_its_entry_and_field() {
    let text = r#"
currency = "CNY"
colour = "blue"

[[price]]
model = "A100"
region = "cn-north"
hour = -12.5
month = 5000
wek = 1400

[[price]]
model = "A100"
region = "cn-north"
hour = 12.5
month = 5000

[[price]]
model = "V100"
region = "cn-east"
hour = 4.3

[[price]]
region = "cn-south"
hour = "cheap"
month = 1880
day = 0
year = 12.345
spot_series = [{ hour = 5, price = 2 }, { hour = 3, price = 2 }]

[[price]]
model = "H800"
region = "cn-east"
hour = 31
month = 12400
spot_notice_minutes = -5
"#;
    let invalid = parse_catalog(text).unwrap_err();
    let problems: Vec<String> = invalid.problems.iter().map(ToString::to_string).collect();
    let expected = [
        "`colour`: unknown top-level key",
        "[[price]] #1 (A100 in cn-north), `wek`: unknown mode or field",
        "[[price]] #1 (A100 in cn-north), `hour`: must be more than zero, got -12.5",
        "[[price]] #3 (V100 in cn-east), `month`: missing",
        "[[price]] #4 (in cn-south), `model`: missing",
        "[[price]] #4 (in cn-south), `hour`: must be a number of yuan such as 12.50, got string",
        "[[price]] #4 (in cn-south), `day`: must be more than zero, got 0",
        "[[price]] #4 (in cn-south), `year`: 12.345 has more than two decimals",
        "[[price]] #4 (in cn-south), `spot_series[1].hour`: hours must increase: 3 comes after 5",
        "[[price]] #4 (in cn-south), `spot_hour`: missing: a `spot_series` needs",
        "[[price]] #5 (H800 in cn-east), `spot_notice_minutes`: must be 0 or more whole minutes",
        "[[price]] #2 (A100 in cn-north): duplicate: A100 in cn-north is already priced by [[price]] #1",
    ];
    for wanted in expected {
        assert!(
            problems.iter().any(|problem| problem.starts_with(wanted)),
            "missing {wanted:?} in:\n{}",
            problems.join("\n")
        );
    }
    assert_eq!(problems.len(), expected.len(), "{}", problems.join("\n"));
    // The error's text lists them all.
    let text = invalid.to_string();
    assert!(
        text.starts_with("the price catalog has 12 problems:"),
        "{text}"
    );
}

#[test]
fn a_duplicate_is_found_however_the_name_is_written() {
    let text = r#"
currency = "CNY"
[[price]]
model = "Ascend 910B"
region = "cn-north"
hour = 10
month = 4000
[[price]]
model = "ascend-910b"
region = "CN-North"
hour = 10
month = 4000
"#;
    let invalid = parse_catalog(text).unwrap_err();
    assert_eq!(invalid.problems.len(), 1);
    assert!(
        invalid.problems[0].message.starts_with("duplicate"),
        "{invalid}"
    );
    assert_eq!(invalid.problems[0].entry.as_ref().unwrap().number, 2);
}

#[test]
fn file_level_problems_are_named() {
    let cases = [
        ("", "`currency`: missing"),
        (
            "currency = \"USD\"\n[[price]]\nmodel='a'\nregion='b'\nhour=1\nmonth=2",
            "`currency`: `USD` is not supported",
        ),
        ("currency = \"CNY\"", "`price`: no `[[price]]` entries"),
        (
            "currency = \"CNY\"\nprice = 3",
            "`price`: must be an array of tables",
        ),
        (
            "currency = \"CNY\"\n[[price]\n",
            "not valid TOML: TOML parse error at line 2",
        ),
    ];
    for (text, wanted) in cases {
        let invalid = parse_catalog(text).unwrap_err();
        assert!(
            invalid
                .problems
                .iter()
                .any(|problem| problem.to_string().starts_with(wanted)),
            "{text:?}: {invalid}"
        );
    }
}

#[test]
fn a_subscription_cheaper_than_spot_is_allowed_with_a_warning() {
    let text = r#"
currency = "CNY"
[[price]]
model = "A100"
region = "cn-east"
hour = 12
month = 4800      # ¥6.58 an hour
spot_hour = 7     # dearer than that
spot_series = [{ hour = 0, price = 7 }, { hour = 100, price = 6.5 }]
"#;
    let validated = parse_catalog(text).unwrap();
    assert_eq!(validated.warnings.len(), 1, "{:?}", validated.warnings);
    let warning = validated.warnings[0].to_string();
    assert!(
        warning.starts_with("[[price]] #1 (A100 in cn-east), `month`: a month subscription (¥6.58 an hour) is cheaper per hour than spot (¥7.00)"),
        "{warning}"
    );
    let entry = &validated.catalog.entries[0];
    assert_eq!(entry.spot_price_at(-5), Some(Money::from_fen(700)));
    assert_eq!(entry.spot_price_at(99), Some(Money::from_fen(700)));
    assert_eq!(entry.spot_price_at(100), Some(Money::from_fen(650)));
}

#[test]
fn units_that_can_never_win_are_warned_about() {
    let text = r#"
currency = "CNY"
[[price]]
model = "V100"
region = "cn-north"
hour = 4
day = 100          # more than 24 hours
week = 800         # more than 7 days
month = 1800
year = 30000       # more than 12 months
reserved_hour = 5  # dearer than on demand
"#;
    let warnings: Vec<String> = parse_catalog(text)
        .unwrap()
        .warnings
        .iter()
        .map(|warning| warning.field.clone().unwrap())
        .collect();
    assert_eq!(warnings, ["day", "week", "year", "reserved_hour"]);
}

#[test]
fn prices_become_exact_fen() {
    let text = "currency = \"CNY\"\n[[price]]\nmodel = \"A\"\nregion = \"r\"\nhour = 0.1\nday = 12.10\nmonth = 5000\n";
    let entry = parse_catalog(text).unwrap().catalog.entries.remove(0);
    assert_eq!(entry.hour, Money::from_fen(10));
    assert_eq!(entry.day, Some(Money::from_fen(1210)));
    assert_eq!(entry.month, Money::from_fen(500_000));
    assert_eq!(entry.week, None);
}
