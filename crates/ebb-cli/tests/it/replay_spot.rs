//! `ebb replay` with a spot mix through the real binary: the comparison (the mix, on
//! demand, the oracle) in `--json` and the table, interruptions from the trace or the
//! seeded model, and a bad spot column named by line and column.

use std::path::{Path, PathBuf};

use crate::replay::{ebb, stderr, stdout};
use ebb_testkit::TempDir;

/// Two days: 4 GPUs of work, 20 from 18:00 to 22:00 each day; spot at ¥4.00 then ¥4.50;
/// with `interrupted`, one spot GPU taken back every 97 minutes.
fn write_trace(dir: &Path, interrupted: bool) -> PathBuf {
    let mut csv = String::from("minute,demand,spot_price");
    csv.push_str(if interrupted { ",interrupted\n" } else { "\n" });
    for minute in 0..2 * 1440 {
        let hour = (minute % 1440) / 60;
        let gpus = if (18..22).contains(&hour) { 20 } else { 4 };
        let price = if minute < 1440 { "4.00" } else { "4.50" };
        csv.push_str(&format!("{minute},{gpus},{price}"));
        if interrupted {
            let taken = u32::from(minute > 0 && minute % 97 == 0);
            csv.push_str(&format!(",{taken}"));
        }
        csv.push('\n');
    }
    let path = dir.join(if interrupted {
        "spot.csv"
    } else {
        "prices.csv"
    });
    std::fs::write(&path, csv).unwrap();
    path
}

fn seed_rules() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../ebb-rules/examples/seed-80-30.toml")
}

fn replay_args<'a>(trace: &'a str, rules: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "replay", "--trace", trace, "--rules", rules, "--model", "A100", "--region", "cn-north",
    ];
    args.extend_from_slice(extra);
    args
}

#[test]
fn replay_compares_the_spot_mix_with_on_demand_and_the_oracle() {
    let data = TempDir::new("cli-replay-spot");
    let trace = write_trace(&data, true);
    let rules = seed_rules();
    let (trace, rules) = (trace.to_str().unwrap(), rules.to_str().unwrap());
    let spot = [
        "--spot-pct",
        "60",
        "--on-demand-floor",
        "2",
        "--notice-minutes",
        "2",
    ];
    let mut args = replay_args(trace, rules, &spot);
    args.push("--json");
    let report: serde_json::Value = serde_json::from_str(&stdout(&ebb(&data, &args))).unwrap();
    // The rules' own result is on demand: nothing taken back.
    assert_eq!(report["interruptions"], 0);
    let comparison = &report["spot"];
    let settings = &comparison["settings"];
    assert_eq!(settings["spot_pct"], 60);
    assert_eq!(settings["on_demand_floor"], 2);
    assert_eq!(settings["notice_minutes"], 2);
    assert_eq!(settings["interruptions_from"], "trace");
    let mix = &comparison["mix"];
    let on_demand = &comparison["on_demand"];
    assert_eq!(mix["policy"], "rules+spot");
    assert_eq!(on_demand["cost_fen"], report["cost_fen"]);
    assert_eq!(comparison["oracle"]["policy"], "oracle");
    let interruptions = mix["interruptions"].as_u64().unwrap();
    assert!((1..=29).contains(&interruptions), "{interruptions}");
    assert!(mix["spot_gpu_hours"].as_u64().unwrap() > 0);
    let spot_cost = mix["spot_cost_fen"].as_i64().unwrap();
    assert!(spot_cost > 0 && spot_cost < mix["cost_fen"].as_i64().unwrap());
    // Spot at about a third of the hour price: the mix is cheaper than all on demand.
    assert!(mix["cost_fen"].as_i64() < on_demand["cost_fen"].as_i64());

    // The table says it too.
    let table = stdout(&ebb(&data, &replay_args(trace, rules, &spot)));
    assert!(
        table.contains("Spot: 60% of the GPUs above a floor of 2"),
        "{table}"
    );
    assert!(table.contains("\nrules+spot "), "{table}");
    assert!(table.contains("\noracle "), "{table}");
    assert!(table.contains("INTERRUPTIONS"), "{table}");
}

#[test]
fn without_an_interrupted_column_the_seeded_model_draws_them() {
    let data = TempDir::new("cli-replay-spot-model");
    let trace = write_trace(&data, false);
    let rules = seed_rules();
    let (trace, rules) = (trace.to_str().unwrap(), rules.to_str().unwrap());
    let run = |seed: &'static str| {
        let extra = [
            "--spot-pct",
            "100",
            "--interruptions-per-gpu-hour",
            "0.2",
            "--seed",
            seed,
            "--json",
        ];
        let output = stdout(&ebb(&data, &replay_args(trace, rules, &extra)));
        serde_json::from_str::<serde_json::Value>(&output).unwrap()["spot"].clone()
    };
    let first = run("7");
    assert_eq!(first["settings"]["interruptions_from"], "model");
    assert_eq!(first["settings"]["interruptions_per_gpu_hour"], 0.2);
    assert!(first["mix"]["interruptions"].as_u64().unwrap() > 0);
    // The same seed, the same market.
    assert_eq!(run("7"), first);
}

#[test]
fn a_bad_spot_price_or_flag_is_named() {
    let data = TempDir::new("cli-replay-spot-errors");
    let rules = seed_rules();
    let rules = rules.to_str().unwrap();
    let cases = [
        (
            "gap.csv",
            "minute,demand,spot_price\n0,1,4\n1,1,4\n2,1,\n",
            "line 4, column 3 (`spot_price`)",
            "gap",
        ),
        (
            "negative.csv",
            "minute,demand,spot_price\n0,1,4\n1,1,-3.5\n",
            "line 3, column 3 (`spot_price`)",
            "below 0",
        ),
        (
            "count.csv",
            "minute,demand,interrupted\n0,1,0\n1,1,half\n",
            "line 3, column 3 (`interrupted`)",
            "whole number",
        ),
    ];
    for (name, csv, place, words) in cases {
        let path = data.join(name);
        std::fs::write(&path, csv).unwrap();
        let args = replay_args(path.to_str().unwrap(), rules, &["--spot-pct", "50"]);
        let error = stderr(&ebb(&data, &args));
        assert!(error.contains(place), "{error}");
        assert!(error.contains(words), "{error}");
    }
    let trace = write_trace(&data, true);
    let trace = trace.to_str().unwrap();
    for (flags, named) in [
        (&["--spot-pct", "101"][..], "--spot-pct"),
        (
            &["--spot-pct", "50", "--interruptions-per-gpu-hour", "1.5"][..],
            "--interruptions-per-gpu-hour",
        ),
        (
            &["--spot-pct", "50", "--spot-max-price", "cheap"][..],
            "--spot-max-price",
        ),
        (&["--on-demand-floor", "2"][..], "--spot-pct"),
        (
            &["--spot-pct", "50", "--overlay", "spot"][..],
            "--overlay spot",
        ),
    ] {
        let error = stderr(&ebb(&data, &replay_args(trace, rules, flags)));
        assert!(error.contains(named), "{flags:?}: {error}");
    }
}
