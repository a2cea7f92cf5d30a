//! `ebb rules suggest` through the real binary: the file on standard output is a rule file
//! that `ebb replay` replays to the figures `--json` reports; the errors.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ebb_testkit::TempDir;

fn ebb(data_dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ebb"))
        .arg("--data-dir")
        .arg(data_dir)
        .args(args)
        .env_remove("EBB_DATA_DIR")
        .output()
        .unwrap()
}

fn succeeded(output: &Output) -> String {
    assert!(
        output.status.success(),
        "ebb failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// Two days: 6 GPUs of work and a slow wave of 4 more, 24 from 18:00 to 22:00 each day.
fn write_trace(dir: &Path) -> PathBuf {
    let mut csv = String::from("minute,demand\n");
    for minute in 0..2 * 1440 {
        let hour = (minute % 1440) / 60;
        let wave = 4.0 * (f64::from(minute) / 180.0).sin().abs();
        let gpus = if (18..22).contains(&hour) {
            24.0
        } else {
            6.0 + wave
        };
        csv.push_str(&format!("{minute},{gpus:.3}\n"));
    }
    let path = dir.join("trace.csv");
    std::fs::write(&path, csv).unwrap();
    path
}

#[test]
fn suggest_prints_a_rule_file_that_replays_to_its_json_figures() {
    let data = TempDir::new("cli-suggest");
    let trace = write_trace(data.path());
    let trace = trace.to_str().unwrap();
    let price = ["--model", "A100", "--region", "cn-north"];

    let mut args = vec!["rules", "suggest", "--trace", trace];
    args.extend(price);
    let output = ebb(data.path(), &args);
    let file = succeeded(&output);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("replayed on"), "{stderr}");
    assert!(stderr.contains("x the oracle's"), "{stderr}");
    assert!(
        file.starts_with("# Suggested by `ebb rules suggest`"),
        "{file}"
    );
    assert!(file.contains("[[target]]") && file.contains("metric = \"busy_gpus\""));
    assert!(file.contains("force = false"), "{file}");
    let rules = ebb_rules::model::parse(&file).unwrap_or_else(|e| panic!("{e}\n{file}"));
    let rules_path = data.path().join("suggested.toml");
    std::fs::write(&rules_path, &file).unwrap();

    args.push("--json");
    let report: serde_json::Value =
        serde_json::from_str(&succeeded(&ebb(data.path(), &args))).unwrap();
    assert_eq!(report["file"].as_str(), Some(file.as_str()));
    assert_eq!(report["within_limit"], true, "{report}");
    assert_eq!(report["max_shortfall_pct"], 1.0);
    assert_eq!(report["model"], "A100");
    assert_eq!(report["oracle"]["policy"], "oracle");
    assert!(report["candidates"].as_u64().unwrap() > 10, "{report}");
    assert!(report["replay"]["shortfall_pct"].as_f64().unwrap() <= 1.0);
    assert_eq!(
        serde_json::to_value(rules.spec()).unwrap(),
        report["rules"],
        "the JSON's rules are the file's"
    );

    // `ebb replay` of the printed file gives the figures suggest reported.
    let mut replay = vec!["replay", "--trace", trace, "--rules"];
    replay.push(rules_path.to_str().unwrap());
    replay.extend(price);
    replay.push("--json");
    let replayed: serde_json::Value =
        serde_json::from_str(&succeeded(&ebb(data.path(), &replay))).unwrap();
    for key in ["cost_fen", "shortfall_pct", "actions", "peak_held_gpus"] {
        assert_eq!(replayed[key], report["replay"][key], "{key}");
    }
}

#[test]
fn suggest_without_a_price_uses_the_demo_catalog_and_says_so() {
    let data = TempDir::new("cli-suggest-demo");
    let trace = write_trace(data.path());
    let output = ebb(
        data.path(),
        &[
            "rules",
            "suggest",
            "--trace",
            trace.to_str().unwrap(),
            "--max-shortfall-pct",
            "2",
        ],
    );
    succeeded(&output);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("demo catalog's A100 in cn-north"),
        "{stderr}"
    );
    assert!(stderr.contains("(limit 2%)"), "{stderr}");
}

#[test]
fn suggest_errors_name_the_file_and_the_flag() {
    let data = TempDir::new("cli-suggest-errors");
    let bad = data.path().join("bad.csv");
    std::fs::write(&bad, "minute,demand\n0,1\n1,x\n").unwrap();
    let output = ebb(
        data.path(),
        &["rules", "suggest", "--trace", bad.to_str().unwrap()],
    );
    assert!(!output.status.success());
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(error.contains("bad.csv as a trace"), "{error}");
    assert!(error.contains("line 3"), "{error}");

    let trace = write_trace(data.path());
    let output = ebb(
        data.path(),
        &[
            "rules",
            "suggest",
            "--trace",
            trace.to_str().unwrap(),
            "--max-shortfall-pct=-1",
        ],
    );
    assert!(!output.status.success());
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(error.contains("--max-shortfall-pct"), "{error}");

    let output = ebb(
        data.path(),
        &[
            "rules",
            "suggest",
            "--trace",
            trace.to_str().unwrap(),
            "--model",
            "A100",
        ],
    );
    assert!(!output.status.success(), "--model needs --region");
}

/// A Slurm partition's queue over five and a half hours, as a bound pool records it: 8 GPUs
/// of jobs at minute 20 for two hours, 2 for one more, then none; 6 at minute 240 for half
/// an hour. The pool that ran then served each burst after 10 minutes, so the oldest job's
/// wait rose to 9 while its GPUs were pending.
fn write_queue_trace(dir: &Path) -> PathBuf {
    let mut csv = String::from(
        "minute,demand,slurm_pending_gpus,slurm_demand_gpus,slurm_oldest_wait_minutes\n",
    );
    for minute in 0..330u32 {
        let (demand, arrived) = match minute {
            20..140 => (8, 20),
            140..200 => (2, 20),
            240..270 => (6, 240),
            _ => (0, 0),
        };
        let waited = minute - arrived;
        let pending = if demand > 0 && waited < 10 { demand } else { 0 };
        let wait = if pending > 0 { waited } else { 0 };
        csv.push_str(&format!("{minute},{demand},{pending},{demand},{wait}\n"));
    }
    let path = dir.join("queue.csv");
    std::fs::write(&path, csv).unwrap();
    path
}

#[test]
fn suggest_on_a_queue_trace_writes_the_queue_rules_with_a_nodes_gpus() {
    let data = TempDir::new("cli-suggest-queue");
    let trace = write_queue_trace(data.path());
    let trace = trace.to_str().unwrap();
    let args = [
        "rules",
        "suggest",
        "--trace",
        trace,
        "--gpus-per-node",
        "2",
        "--max-shortfall-pct",
        "5",
    ];
    let output = ebb(data.path(), &args);
    let file = succeeded(&output);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{file}\n{stderr}");

    let rules = ebb_rules::model::parse(&file).unwrap_or_else(|e| panic!("{e}\n{file}"));
    let spec = rules.spec();
    assert_eq!(spec.targets.len(), 1, "{file}");
    let target = &spec.targets[0];
    assert_eq!(target.name, "size-to-queue");
    assert_eq!(target.metric.name(), "slurm_demand_gpus");
    assert_eq!((target.target, target.tolerance), (1.0, 0.0));
    let waited = &spec.thresholds[0];
    assert_eq!(waited.name, "queue-waited");
    assert_eq!(waited.metric.name(), "slurm_oldest_wait_minutes");
    assert_eq!(waited.action.to_string(), "+2", "a node's GPUs");
    let metrics: Vec<&str> = spec.metrics.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(metrics, ["slurm_demand_gpus", "slurm_oldest_wait_minutes"]);
    assert_eq!(spec.limits.min_gpus, 0);
    assert_eq!(spec.limits.max_gpus % 2, 0, "whole nodes");
    assert!(file.contains("not on the replayed one"), "{file}");
    assert!(file.contains("whole nodes of 2 GPUs"), "{file}");

    // The summary: the figures, and what the replay could not know.
    assert!(stderr.contains("replayed on"), "{stderr}");
    assert!(stderr.contains("(limit 5%)"), "{stderr}");
    assert!(stderr.contains("a Slurm queue trace"), "{stderr}");
    assert!(
        stderr.contains("`queue-waited` adds 2 GPUs (a node)"),
        "{stderr}"
    );
    assert!(stderr.contains("not on the replayed one"), "{stderr}");

    // `ebb replay` of the printed file gives the figures `--json` reports.
    let rules_path = data.path().join("queue-rules.toml");
    std::fs::write(&rules_path, &file).unwrap();
    let mut json = args.to_vec();
    json.push("--json");
    let report: serde_json::Value =
        serde_json::from_str(&succeeded(&ebb(data.path(), &json))).unwrap();
    assert_eq!(report["file"].as_str(), Some(file.as_str()));
    assert_eq!(report["within_limit"], true, "{report}");
    let replay = [
        "replay",
        "--trace",
        trace,
        "--rules",
        rules_path.to_str().unwrap(),
        "--model",
        "A100",
        "--region",
        "cn-north",
        "--json",
    ];
    let replayed: serde_json::Value =
        serde_json::from_str(&succeeded(&ebb(data.path(), &replay))).unwrap();
    for key in ["cost_fen", "shortfall_pct", "actions", "peak_held_gpus"] {
        assert_eq!(replayed[key], report["replay"][key], "{key}");
    }
    assert_eq!(report["replay"]["peak_held_gpus"], 8, "{report}");
}

#[test]
fn suggest_refuses_a_node_size_out_of_range_and_a_bad_queue_cell() {
    let data = TempDir::new("cli-suggest-queue-errors");
    let trace = write_queue_trace(data.path());
    for bad in ["0", "65", "two"] {
        let output = ebb(
            data.path(),
            &[
                "rules",
                "suggest",
                "--trace",
                trace.to_str().unwrap(),
                "--gpus-per-node",
                bad,
            ],
        );
        assert!(!output.status.success(), "{bad}");
        let error = String::from_utf8_lossy(&output.stderr);
        assert!(error.contains("--gpus-per-node"), "{bad}: {error}");
    }

    let bad = data.path().join("bad-queue.csv");
    std::fs::write(
        &bad,
        "minute,demand,slurm_demand_gpus,slurm_oldest_wait_minutes\n0,0,0,0\n1,2,2,-4\n",
    )
    .unwrap();
    let output = ebb(
        data.path(),
        &["rules", "suggest", "--trace", bad.to_str().unwrap()],
    );
    assert!(!output.status.success());
    let error = String::from_utf8_lossy(&output.stderr);
    for words in [
        "bad-queue.csv as a trace",
        "line 3, column 4 (`slurm_oldest_wait_minutes`)",
        "`-4` is below 0",
    ] {
        assert!(error.contains(words), "{words}: {error}");
    }
}

/// Two days of the wave above with a spot market: spot at ¥4.00 an hour (the on-demand hour
/// is ¥12.50), one spot GPU taken back every six hours.
fn write_spot_trace(dir: &Path, interrupted: bool) -> PathBuf {
    let mut csv = String::from(if interrupted {
        "minute,demand,spot_price,interrupted\n"
    } else {
        "minute,demand,spot_price\n"
    });
    for minute in 0..2 * 1440 {
        let hour = (minute % 1440) / 60;
        let wave = 4.0 * (f64::from(minute) / 180.0).sin().abs();
        let gpus = if (18..22).contains(&hour) {
            24.0
        } else {
            6.0 + wave
        };
        csv.push_str(&format!("{minute},{gpus:.3},4.00"));
        if interrupted {
            csv.push_str(if minute % 360 == 100 { ",1" } else { ",0" });
        }
        csv.push('\n');
    }
    let path = dir.join("spot-trace.csv");
    std::fs::write(&path, csv).unwrap();
    path
}

#[test]
fn suggest_on_a_spot_trace_chooses_the_mix_that_replay_reproduces() {
    let data = TempDir::new("cli-suggest-spot");
    let trace = write_spot_trace(data.path(), true);
    let trace = trace.to_str().unwrap();
    let price = ["--model", "A100", "--region", "cn-north"];
    let mut args = vec!["rules", "suggest", "--trace", trace];
    args.extend(price);

    let output = ebb(data.path(), &args);
    let file = succeeded(&output);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("spot: --on-demand-floor "), "{stderr}");
    assert!(file.contains("# Spot (the pool's settings"), "{file}");
    assert!(
        file.contains("--interruptible --on-demand-floor "),
        "{file}"
    );
    // The comments keep it a rule file.
    ebb_rules::model::parse(&file).unwrap_or_else(|e| panic!("{e}\n{file}"));
    let rules_path = data.path().join("suggested.toml");
    std::fs::write(&rules_path, &file).unwrap();

    args.push("--json");
    let report: serde_json::Value =
        serde_json::from_str(&succeeded(&ebb(data.path(), &args))).unwrap();
    assert_eq!(report["file"].as_str(), Some(file.as_str()));
    let mix = &report["spot_mix"];
    let spot_pct = mix["spot_pct"].as_u64().unwrap();
    let floor = mix["on_demand_floor"].as_u64().unwrap();
    // Spot at a third of the hour price and rare interruptions: some of the pool goes on it,
    // cheaper than the same rules on demand, within the limit.
    assert!([25, 50, 75, 100].contains(&spot_pct), "{mix}");
    assert!(
        file.contains(&format!("--on-demand-floor {floor} --spot-pct {spot_pct}")),
        "{file}"
    );
    assert_eq!(mix["interruptions_from"], "trace");
    assert!(mix["interruptions_per_gpu_hour"].is_null());
    assert_eq!(mix["within_limit"], true, "{mix}");
    assert!(mix["candidates"].as_u64().unwrap() >= 5, "{mix}");
    assert_eq!(mix["replay"]["policy"], "rules+spot");
    assert!(
        mix["replay"]["interruptions"].as_u64().unwrap() > 0,
        "{mix}"
    );
    assert!(
        mix["replay"]["cost_fen"].as_i64() < mix["on_demand"]["cost_fen"].as_i64(),
        "{mix}"
    );
    assert_eq!(mix["on_demand"]["cost_fen"], report["replay"]["cost_fen"]);

    // `ebb replay` of the printed file with that mix gives the figures suggest reported.
    let (floor, spot_pct) = (floor.to_string(), spot_pct.to_string());
    let mut replay = vec!["replay", "--trace", trace, "--rules"];
    replay.push(rules_path.to_str().unwrap());
    replay.extend(price);
    replay.extend([
        "--spot-pct",
        &spot_pct,
        "--on-demand-floor",
        &floor,
        "--json",
    ]);
    let replayed: serde_json::Value =
        serde_json::from_str(&succeeded(&ebb(data.path(), &replay))).unwrap();
    for key in [
        "cost_fen",
        "spot_cost_fen",
        "shortfall_pct",
        "interruptions",
    ] {
        assert_eq!(replayed["spot"]["mix"][key], mix["replay"][key], "{key}");
    }
}

#[test]
fn suggest_with_spot_prices_but_no_interruptions_says_what_is_missing() {
    let data = TempDir::new("cli-suggest-spot-none");
    let trace = write_spot_trace(data.path(), false);
    let trace = trace.to_str().unwrap();
    let args = ["rules", "suggest", "--trace", trace, "--json"];
    let output = ebb(data.path(), &args);
    let report: serde_json::Value = serde_json::from_str(&succeeded(&output)).unwrap();
    assert!(report.get("spot_mix").is_none(), "{report}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--interruptions-per-gpu-hour"), "{stderr}");

    // With a rate, the seeded market is drawn.
    let mut args = args.to_vec();
    args.extend(["--interruptions-per-gpu-hour", "0.02"]);
    let report: serde_json::Value =
        serde_json::from_str(&succeeded(&ebb(data.path(), &args))).unwrap();
    assert_eq!(report["spot_mix"]["interruptions_from"], "model");
    assert_eq!(report["spot_mix"]["interruptions_per_gpu_hour"], 0.02);
}

/// A small queue idle for hours between sudden 8-GPU jobs (six days of the `queue-bursts`
/// stand-in): standard error says what the 1% limit costs and which limit allows the
/// cheapest rules; `--json` carries it as a note, and at that limit the rules are as cheap.
#[test]
fn suggest_says_what_the_limit_costs_and_the_limit_it_names_allows_it() {
    use ebb_rules::replay::families::{Family, FamilyParams, generate};
    let data = TempDir::new("cli-suggest-price");
    let params = FamilyParams {
        days: 6,
        ..Family::QueueBursts.default_params()
    };
    let mut csv = String::from("minute,demand,slurm_demand_gpus\n");
    for (minute, gpus) in generate(Family::QueueBursts, &params, 3).iter().enumerate() {
        csv.push_str(&format!("{minute},{gpus},{gpus}\n"));
    }
    let trace = data.path().join("queue.csv");
    std::fs::write(&trace, csv).unwrap();
    let trace = trace.to_str().unwrap();
    let args = ["rules", "suggest", "--trace", trace, "--gpus-per-node", "8"];

    let output = ebb(data.path(), &args);
    succeeded(&output);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("what the 1% limit costs"), "{stderr}");
    assert!(stderr.contains("jobs waiting for their nodes"), "{stderr}");
    let mut json = args.to_vec();
    json.push("--json");
    let report: serde_json::Value =
        serde_json::from_str(&succeeded(&ebb(data.path(), &json))).unwrap();
    let price = report["notes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|note| note["kind"] == "limit_price")
        .unwrap_or_else(|| panic!("{report}"))
        .clone();
    assert_eq!(price["queue"], true, "{price}");
    let allow = price["allow_pct"].as_f64().unwrap();
    let cheapest = price["cost_fen"].as_f64().unwrap();
    assert!(
        stderr.contains(&format!("--max-shortfall-pct {allow} allows")),
        "{stderr}"
    );
    assert!(
        report["replay"]["cost_fen"].as_f64().unwrap() >= 1.2 * cheapest,
        "{report}"
    );

    let allow_text = allow.to_string();
    let mut relaxed = json.clone();
    relaxed.extend(["--max-shortfall-pct", allow_text.as_str()]);
    let report: serde_json::Value =
        serde_json::from_str(&succeeded(&ebb(data.path(), &relaxed))).unwrap();
    assert_eq!(report["within_limit"], true, "{report}");
    assert!(
        report["replay"]["cost_fen"].as_f64().unwrap() <= 1.05 * cheapest,
        "{report}"
    );
}
