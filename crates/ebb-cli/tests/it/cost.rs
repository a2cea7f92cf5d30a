//! `ebb catalog …` and `ebb cost …` through the real binary, each test with its own data
//! directory.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ebb_testkit::TempDir;

/// A fresh, empty directory for one test.
/// Runs `ebb --data-dir DATA ARGS…` with no `EBB_DATA_DIR` from outside.
fn ebb(data_dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ebb"))
        .arg("--data-dir")
        .arg(data_dir)
        .args(args)
        .env_remove("EBB_DATA_DIR")
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "ebb failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn json(output: &Output) -> serde_json::Value {
    serde_json::from_str(&stdout(output)).unwrap()
}

fn stderr(output: &Output) -> String {
    assert!(!output.status.success(), "ebb should have failed");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// FAQ 4's month: 10 GPUs, 50 from 19:00 to 24:00 on 28 days (140 peak hours).
fn faq_4_demand(dir: &Path) -> PathBuf {
    let mut csv = String::from("hour,demand\n");
    for hour in 0..730 {
        let gpus = if hour / 24 < 28 && hour % 24 >= 19 {
            50
        } else {
            10
        };
        csv.push_str(&format!("{hour},{gpus}\n"));
    }
    let path = dir.join("faq4.csv");
    std::fs::write(&path, csv).unwrap();
    path
}

#[test]
fn without_an_import_the_demo_catalog_is_used_and_said_so() {
    let data = TempDir::new("cli-demo");
    let shown = stdout(&ebb(&data, &["catalog", "show"]));
    assert!(
        shown.contains("the demo catalog (no catalog imported"),
        "{shown}"
    );
    assert!(shown.contains("Ascend 910B  cn-south"), "{shown}");
    let shown = json(&ebb(&data, &["catalog", "show", "--json"]));
    assert_eq!(shown["catalog"]["source"], "demo");
    assert_eq!(shown["currency"], "CNY");
    assert_eq!(shown["entries"].as_array().unwrap().len(), 12);
    assert_eq!(shown["entries"][3]["model"], "A100");
    assert_eq!(shown["entries"][3]["month_fen"], 500_000);
    // Reading never creates anything.
    assert_eq!(std::fs::read_dir(&data).unwrap().count(), 0);
}

#[test]
fn an_invalid_catalog_is_refused_with_every_problem_and_changes_nothing() {
    let data = TempDir::new("cli-invalid");
    let good = data.join("good.toml");
    let exported = stdout(&ebb(&data, &["catalog", "export"]));
    std::fs::write(&good, exported.replace("hour = 12.50", "hour = 13.00")).unwrap();
    stdout(&ebb(&data, &["catalog", "import", good.to_str().unwrap()]));
    let active = std::fs::read_to_string(data.join("catalog.toml")).unwrap();

    let bad = data.join("bad.toml");
    std::fs::write(
        &bad,
        "currency = \"CNY\"\n[[price]]\nmodel = \"A100\"\nregion = \"cn-north\"\nhour = -1\nmonth = 5000\nwek = 3\n\
         [[price]]\nmodel = \"A100\"\nregion = \"cn-north\"\nhour = 12\n",
    )
    .unwrap();
    let error = stderr(&ebb(&data, &["catalog", "import", bad.to_str().unwrap()]));
    for wanted in [
        "the price catalog has 4 problems",
        "[[price]] #1 (A100 in cn-north), `hour`: must be more than zero, got -1",
        "[[price]] #1 (A100 in cn-north), `wek`: unknown mode or field",
        "[[price]] #2 (A100 in cn-north), `month`: missing",
        "[[price]] #2 (A100 in cn-north): duplicate",
    ] {
        assert!(error.contains(wanted), "missing {wanted:?} in {error}");
    }
    assert_eq!(
        std::fs::read_to_string(data.join("catalog.toml")).unwrap(),
        active
    );
    let missing = stderr(&ebb(
        &data,
        &["catalog", "import", "/nonexistent/prices.toml"],
    ));
    assert!(
        missing.contains("cannot read /nonexistent/prices.toml"),
        "{missing}"
    );
}

#[test]
fn an_imported_catalog_becomes_the_active_one_atomically() {
    let dir = TempDir::new("cli-import");
    let data = dir.join("not yet there");
    let source_dir = TempDir::new("cli-import-source");
    let source = source_dir.join("prices.toml");
    std::fs::write(
        &source,
        "currency = \"CNY\"\n[[price]]\nmodel = \"A100\"\nregion = \"cn-north\"\nhour = 10\nmonth = 4000\nspot_hour = 6\n",
    )
    .unwrap();
    let imported = stdout(&ebb(
        &data,
        &["catalog", "import", source.to_str().unwrap()],
    ));
    assert!(imported.starts_with("Imported 1 prices from"), "{imported}");
    // A month at ¥5.48 an hour is cheaper than spot at ¥6: allowed, with a warning.
    assert!(
        imported.contains("warning: [[price]] #1 (A100 in cn-north), `month`"),
        "{imported}"
    );
    let files: Vec<String> = std::fs::read_dir(&data)
        .unwrap()
        .map(|file| file.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files, ["catalog.toml"], "no temporary file is left behind");

    let shown = json(&ebb(&data, &["catalog", "show", "--json"]));
    assert_eq!(shown["catalog"]["source"], "data_dir");
    assert_eq!(shown["entries"][0]["hour_fen"], 1000);
    assert_eq!(shown["warnings"].as_array().unwrap().len(), 1);
    let preview = json(&ebb(
        &data,
        &[
            "cost", "preview", "--model", "a100", "--region", "cn-north", "--from", "0", "--to",
            "2", "--json",
        ],
    ));
    assert_eq!(preview["catalog"]["source"], "data_dir");
    assert_eq!(preview["after"]["total"]["per_hour_fen"], 2000);
    // The demo prices are gone from this data directory.
    let error = stderr(&ebb(
        &data,
        &[
            "cost", "preview", "--model", "V100", "--region", "cn-east", "--from", "0", "--to", "1",
        ],
    ));
    assert!(
        error.contains("no price for `V100` in `cn-east`; the catalog prices: A100 in cn-north"),
        "{error}"
    );
    // The data directory can come from the environment too.
    let output = Command::new(env!("CARGO_BIN_EXE_ebb"))
        .args(["catalog", "show", "--json"])
        .env("EBB_DATA_DIR", &data)
        .output()
        .unwrap();
    assert_eq!(json(&output)["catalog"]["source"], "data_dir");
}

#[test]
fn preview_names_every_figure_with_its_unit() {
    let data = TempDir::new("cli-preview");
    let args = [
        "cost", "preview", "--model", "A100", "--region", "cn-north", "--from", "12", "--to", "20",
        "--base", "10",
    ];
    let mut with_json = args.to_vec();
    with_json.push("--json");
    let preview = json(&ebb(&data, &with_json));
    assert_eq!(preview["currency"], "CNY");
    assert_eq!(preview["catalog"]["source"], "demo");
    assert_eq!(preview["plan"]["base_gpus"], 10);
    assert_eq!(preview["plan"]["overlay"], "hour");
    assert_eq!(preview["after"]["overlay_gpus"], 10);
    assert_eq!(preview["after"]["base"]["per_month_fen"], 5_000_000);
    assert_eq!(preview["after"]["overlay"]["per_hour_fen"], 12_500);
    assert_eq!(preview["delta"]["per_hour_fen"], 10_000);
    assert_eq!(preview["delta"]["per_month_fen"], 7_300_000);

    let text = stdout(&ebb(&data, &args));
    assert!(text.contains("the demo catalog"), "{text}");
    assert!(text.contains("+¥100.00"), "{text}");
    assert!(text.contains("+¥73,000.00"), "{text}");

    let error = stderr(&ebb(
        &data,
        &[
            "cost",
            "preview",
            "--model",
            "A100",
            "--region",
            "cn-north",
            "--from",
            "1",
            "--to",
            "2",
            "--overlay",
            "fortnight",
        ],
    ));
    assert!(
        error.contains("unknown overlay mode `fortnight`: expected hour, day, week or spot"),
        "{error}"
    );
}

#[test]
fn plan_reproduces_faq_4_and_names_its_units() {
    let data = TempDir::new("cli-plan");
    let demand = faq_4_demand(&data);
    let demand = demand.to_str().unwrap();
    let args = [
        "cost", "plan", "--demand", demand, "--model", "A100", "--region", "cn-north",
    ];
    let text = stdout(&ebb(&data, &args));
    assert!(
        text.contains("Base optimum: subscribe 10 GPUs (monthly) and rent the rest by the hour: ¥120,000.00, 52.0% less than subscribing all 50."),
        "{text}"
    );
    assert!(text.contains("the demo catalog"), "{text}");
    assert!(
        text.contains("not evaluated: the pool is not marked interruptible"),
        "{text}"
    );

    let mut with_json = args.to_vec();
    with_json.extend(["--json", "--interruptible"]);
    let plan = json(&ebb(&data, &with_json));
    assert_eq!(plan["currency"], "CNY");
    assert_eq!(plan["hours"], 730);
    assert_eq!(plan["peak_gpus"], 50);
    assert_eq!(plan["subscription_per_gpu_fen"], 500_000);
    // The Costs view's own DTO (PlanComparisonView), with no chart asked for.
    assert_eq!(plan["chart_svg"], serde_json::Value::Null);
    assert_eq!(plan["model"], "A100");
    let recommendation = &plan["recommendation"];
    assert_eq!(recommendation["hourly_base_gpus"], 10);
    assert_eq!(recommendation["hourly_cost_fen"], 12_000_000);
    assert_eq!(recommendation["break_even_hours"], 401);
    // Interruptible work: spot at ¥6.00 an hour undercuts a month's ¥6.85 an hour, so no
    // base at all: 12,900 GPU-hours x ¥6.00 = ¥77,400.
    assert_eq!(recommendation["kind"], "base_spot");
    assert_eq!(recommendation["base_gpus"], 0);
    assert_eq!(recommendation["cost_fen"], 7_740_000);
    let plans = plan["plans"].as_array().unwrap();
    let all = plans
        .iter()
        .find(|plan| plan["kind"] == "all_subscribed")
        .unwrap();
    assert_eq!(all["total_fen"], 25_000_000);
    let hourly = plans
        .iter()
        .find(|plan| plan["kind"] == "base_hourly")
        .unwrap();
    assert_eq!(hourly["saving_pct"], 52.0);
    assert_eq!(hourly["paid_by_unit"]["hour"], 5_600);
    assert_eq!(hourly["paid_by_unit"]["subscribed"], 7_300);
    assert_eq!(hourly["paid_gpu_hours"], 12_900);
    // The console's view of the same demand is the same document.
    let demand_csv = std::fs::read_to_string(demand).unwrap();
    let catalog = ebb_core::catalog_store::ActiveCatalog::load(&data, None).unwrap();
    let request = ebb_wire::ipc::PlanRequest {
        model: "A100".into(),
        region: "cn-north".into(),
        demand_csv,
        term: None,
        interruptible: true,
    };
    let view = ebb_core::console_costs::compare_plans(&catalog, &request, None).unwrap();
    let mut printed = plan.clone();
    for key in ["catalog", "prices", "demand", "warnings"] {
        printed.as_object_mut().unwrap().remove(key);
    }
    assert_eq!(printed, serde_json::to_value(&view).unwrap());
}

#[test]
fn plan_takes_a_catalog_file_and_a_minute_trace() {
    let data = TempDir::new("cli-plan-file");
    let catalog = data.join("prices.toml");
    std::fs::write(
        &catalog,
        "currency = \"CNY\"\n[[price]]\nmodel = \"V100\"\nregion = \"cn-east\"\nhour = 4\nmonth = 1000\n",
    )
    .unwrap();
    let trace = data.join("trace.csv");
    // 3 GPUs for one minute of each of 300 hours: each hour takes its highest minute.
    let mut csv = String::from("minute,demand,users\n");
    for hour in 0..300 {
        csv.push_str(&format!("{},1,10\n{},2.5,99\n", hour * 60, hour * 60 + 30));
    }
    std::fs::write(&trace, csv).unwrap();
    let plan = json(&ebb(
        &data,
        &[
            "cost",
            "plan",
            "--demand",
            trace.to_str().unwrap(),
            "--catalog",
            catalog.to_str().unwrap(),
            "--model",
            "V100",
            "--region",
            "cn-east",
            "--json",
        ],
    ));
    assert_eq!(plan["catalog"]["source"], "file");
    assert_eq!(plan["demand"]["resolution"], "minute");
    assert_eq!(plan["hours"], 300);
    // 3 GPUs x 300 h x ¥4 = ¥3,600 by the hour; a month is ¥1,000: subscribe all 3.
    assert_eq!(plan["recommendation"]["hourly_base_gpus"], 3);
    assert_eq!(plan["recommendation"]["cost_fen"], 300_000);
    let skipped: Vec<&str> = plan["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|skipped| skipped["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        skipped,
        ["base_daily", "base_weekly", "base_reserved", "base_spot"]
    );
}

#[test]
fn a_bad_demand_file_is_named_with_its_line_and_column() {
    let data = TempDir::new("cli-bad-demand");
    let demand = data.join("demand.csv");
    std::fs::write(&demand, "hour,demand\n0,3\n1,three\n").unwrap();
    let error = stderr(&ebb(
        &data,
        &[
            "cost",
            "plan",
            "--demand",
            demand.to_str().unwrap(),
            "--model",
            "A100",
            "--region",
            "cn-north",
        ],
    ));
    assert!(
        error.contains(&format!(
            "cannot use {} as a demand series",
            demand.display()
        )),
        "{error}"
    );
    assert!(
        error.contains("line 3, column 2 (`demand`): `three` is not a number of GPUs"),
        "{error}"
    );
}

#[test]
fn a_broken_active_catalog_says_how_to_fix_it() {
    let data = TempDir::new("cli-broken");
    std::fs::write(data.join("catalog.toml"), "currency = \"CNY\"\n").unwrap();
    let error = stderr(&ebb(&data, &["catalog", "show"]));
    assert!(
        error.contains("import a valid one to replace it"),
        "{error}"
    );
    assert!(error.contains("no `[[price]]` entries"), "{error}");
}

#[test]
fn showback_of_a_month_by_team_in_a_table_json_or_csv_and_a_bad_month_is_refused() {
    let data = TempDir::new("cli-showback");
    let with_store = |args: &[&str]| {
        let mut all = vec!["--token-store", "file"];
        all.extend_from_slice(args);
        ebb(&data, &all)
    };
    let table = stdout(&with_store(&["cost", "showback", "--month", "2026-01"]));
    assert!(table.starts_with("Showback 2026-01"), "{table}");
    assert!(
        table.contains("TEAM / POOL") && table.contains("TOTAL"),
        "{table}"
    );
    let value = json(&with_store(&[
        "--json", "cost", "showback", "--month", "2026-01",
    ]));
    assert_eq!(value["month"], "2026-01");
    assert_eq!(value["complete"], true);
    assert_eq!(value["total"]["total_fen"], 0);
    let csv = stdout(&with_store(&[
        "cost", "showback", "--csv", "--month", "2026-01",
    ]));
    assert_eq!(
        csv,
        "month,row,team,pool,overlay_cny,base_used_cny,idle_base_cny,total_cny,gpu_hours,idle_base_gpu_hours,problem\n\
         2026-01,total,,,0.00,0.00,0.00,0.00,0.00,0.00,\n"
    );
    for month in ["2026-13", "2999-01", "January"] {
        let output = with_store(&["cost", "showback", "--month", month]);
        assert_eq!(output.status.code(), Some(2), "{month}");
        assert!(stderr(&output).contains("month:"), "{month}");
    }
}
