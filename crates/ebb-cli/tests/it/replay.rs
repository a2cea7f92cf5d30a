//! `ebb replay` through the real binary: the JSON contract, the series file, the errors.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ebb_testkit::TempDir;

pub(crate) fn ebb(data_dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ebb"))
        .arg("--data-dir")
        .arg(data_dir)
        .args(args)
        .env_remove("EBB_DATA_DIR")
        .output()
        .unwrap()
}

/// `ebb replay` of `rules` on `trace`, priced as the demo catalog's A100 in cn-north, with
/// `extra` arguments.
fn replay_on(data_dir: &Path, trace: &Path, rules: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "replay",
        "--trace",
        trace.to_str().unwrap(),
        "--rules",
        rules.to_str().unwrap(),
        "--model",
        "A100",
        "--region",
        "cn-north",
    ];
    args.extend_from_slice(extra);
    ebb(data_dir, &args)
}

pub(crate) fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "ebb failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

pub(crate) fn stderr(output: &Output) -> String {
    assert!(!output.status.success(), "ebb should have failed");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Two days: 4 GPUs of work, 20 from 18:00 to 22:00 each day.
fn write_trace(dir: &Path) -> PathBuf {
    let mut csv = String::from("minute,demand,users\n");
    for minute in 0..2 * 1440 {
        let hour = (minute % 1440) / 60;
        let gpus = if (18..22).contains(&hour) { 20.0 } else { 4.0 };
        csv.push_str(&format!("{minute},{gpus},{}\n", gpus * 5000.0));
    }
    let path = dir.join("trace.csv");
    std::fs::write(&path, csv).unwrap();
    path
}

/// The seed's rule, as the rules engine ships it.
fn seed_rules() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../ebb-rules/examples/seed-80-30.toml")
}

const KEYS: [&str; 12] = [
    "policy",
    "cost_fen",
    "base_gpus",
    "gpu_hours",
    "shortfall_gpu_minutes",
    "shortfall_pct",
    "actions",
    "actions_per_day",
    "peak_held_gpus",
    "interruptions",
    "spot_gpu_hours",
    "spot_cost_fen",
];

#[test]
fn replay_prints_the_rules_and_each_baseline_with_the_contract_keys() {
    let data = TempDir::new("cli-replay");
    let trace = write_trace(&data);
    let series = data.join("series.csv");
    let rules = seed_rules();
    let output = replay_on(
        &data,
        &trace,
        &rules,
        &[
            "--baseline",
            "static-peak",
            "--baseline",
            "oracle",
            "--series",
            series.to_str().unwrap(),
            "--json",
        ],
    );
    let report: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    let mut keys: Vec<&str> = report
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    let mut expected: Vec<&str> = KEYS.iter().copied().chain(["baselines"]).collect();
    expected.sort_unstable();
    assert_eq!(keys, expected);
    assert_eq!(report["policy"], "rules");
    let baselines = report["baselines"].as_array().unwrap();
    let names: Vec<&str> = baselines
        .iter()
        .map(|result| result["policy"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["static-peak", "oracle"]);
    for result in baselines {
        assert_eq!(result.as_object().unwrap().len(), KEYS.len());
        let hours = result["gpu_hours"].as_object().unwrap();
        assert!(hours.contains_key("subscribed") && hours.contains_key("overlay"));
    }
    // Static peak: 20 GPUs for 48 hours by the hour (a month's subscription is dearer).
    assert_eq!(baselines[0]["cost_fen"], 20 * 48 * 1250);
    assert_eq!(baselines[0]["peak_held_gpus"], 20);
    assert_eq!(baselines[1]["shortfall_gpu_minutes"], 0.0);
    assert!(baselines[1]["cost_fen"].as_i64() < baselines[0]["cost_fen"].as_i64());
    // The seed's rule reacts after the peak starts, so it is short at first.
    assert!(report["shortfall_gpu_minutes"].as_f64().unwrap() > 0.0);
    assert!(report["actions"].as_u64().unwrap() >= 4);

    let series = std::fs::read_to_string(&series).unwrap();
    let lines: Vec<&str> = series.lines().collect();
    assert_eq!(lines[0], "minute,demand,ready,held,utilization,decision");
    assert_eq!(lines.len(), 1 + 2 * 1440);
    assert_eq!(lines[1], "0,4,4,4,100.0,0");

    // The table says where the prices came from and lists every policy.
    let output = replay_on(&data, &trace, &rules, &["--baseline", "hpa"]);
    let table = stdout(&output);
    assert!(table.contains("the demo catalog"), "{table}");
    assert!(table.contains("\nrules "), "{table}");
    assert!(table.contains("\nhpa "), "{table}");
}

#[test]
fn replay_errors_name_the_file_the_line_and_the_baseline() {
    let data = TempDir::new("cli-replay-errors");
    let bad_trace = data.join("bad.csv");
    std::fs::write(&bad_trace, "minute,demand\n0,1\n1,lots\n").unwrap();
    let rules = seed_rules();
    let run = |trace: &Path, rules: &Path, baseline: &str| {
        replay_on(&data, trace, rules, &["--baseline", baseline])
    };
    let error = stderr(&run(&bad_trace, &rules, "oracle"));
    assert!(error.contains("bad.csv as a replay trace"), "{error}");
    assert!(error.contains("line 3, column 2 (`demand`)"), "{error}");
    let good_trace = write_trace(&data);
    let error = stderr(&run(&good_trace, &rules, "kubernetes"));
    assert!(error.contains("no baseline `kubernetes`"), "{error}");
    let bad_rules = data.join("rules.toml");
    std::fs::write(&bad_rules, "[limits]\nmin_gpus = \"two\"\n").unwrap();
    let error = stderr(&run(&good_trace, &bad_rules, "oracle"));
    assert!(error.contains("rules.toml as a rule file"), "{error}");
}

#[test]
fn replay_in_whole_nodes_holds_and_the_oracle_rents_multiples_of_a_node() {
    let data = TempDir::new("cli-replay-nodes");
    let trace = write_trace(&data);
    let series = data.join("series.csv");
    let rules = seed_rules();
    let run = |gpus_per_node: &str| -> serde_json::Value {
        let extra = [
            "--baseline",
            "oracle",
            "--gpus-per-node",
            gpus_per_node,
            "--series",
            series.to_str().unwrap(),
            "--json",
        ];
        serde_json::from_str(&stdout(&replay_on(&data, &trace, &rules, &extra))).unwrap()
    };
    let single = run("1");
    let nodes = run("8");
    // From the rules' first move (the replay starts at the trace's first demand), every
    // count they hold is whole nodes of 8.
    let held: Vec<u32> = std::fs::read_to_string(&series)
        .unwrap()
        .lines()
        .skip(1)
        .map(|line| line.split(',').nth(3).unwrap().parse().unwrap())
        .collect();
    let decided: Vec<u32> = held
        .iter()
        .copied()
        .skip_while(|gpus| *gpus == held[0])
        .collect();
    assert!(!decided.is_empty());
    assert!(decided.iter().all(|gpus| gpus % 8 == 0), "{decided:?}");
    // The oracle rents whole nodes too: 4 GPUs of work hold a node of 8.
    let oracle = |report: &serde_json::Value| report["baselines"][0]["cost_fen"].as_i64().unwrap();
    assert!(oracle(&nodes) > oracle(&single), "{nodes} vs {single}");
    assert_eq!(nodes["baselines"][0]["shortfall_gpu_minutes"], 0.0);
    assert_eq!(nodes["baselines"][0]["peak_held_gpus"], 24);
}

#[test]
fn replay_names_a_metric_the_rules_read_that_the_trace_lacks_before_its_figures() {
    let data = TempDir::new("cli-replay-unread");
    let trace = data.join("bare.csv");
    let mut csv = String::from("minute,demand\n");
    for minute in 0..120 {
        csv.push_str(&format!("{minute},4\n"));
    }
    std::fs::write(&trace, csv).unwrap();
    let rules = data.join("users.toml");
    std::fs::write(
        &rules,
        "[limits]\nmin_gpus = 0\nmax_gpus = 8\n[[metric]]\nname = \"users\"\nstale_after_minutes = 3\n\
         [[threshold]]\nname = \"festival-peak\"\nmetric = \"users\"\nop = \">\"\nvalue = 100000\naction = \"set 6\"\n",
    )
    .unwrap();
    let run = |trace: &Path| replay_on(&data, trace, &rules, &[]);
    let said_by = |output: &Output| String::from_utf8_lossy(&output.stderr).into_owned();
    let output = run(&trace);
    assert!(output.status.success(), "{}", said_by(&output));
    let said = said_by(&output);
    assert!(
        said.contains("no `users` column, read by festival-peak"),
        "{said}"
    );
    // A trace that carries the column says nothing.
    let output = run(&write_trace(&data));
    assert!(
        !said_by(&output).contains("column, read by"),
        "{}",
        said_by(&output)
    );
}

/// A queue recorded with the partition's idle GPUs: a job of 4 GPUs pending for two hours
/// while 12 sat idle is stuck. `ebb replay` says how much it took out of the demand before
/// the figures, and replays without it (the oracle holds no GPU for it).
#[test]
fn replay_says_a_queues_stuck_jobs_and_leaves_them_out_of_demand() {
    let data = TempDir::new("cli-replay-stuck");
    let write = |name: &str, idle: bool| {
        let mut csv = String::from("minute,demand,slurm_pending_gpus,slurm_demand_gpus");
        csv.push_str(if idle { ",slurm_idle_gpus\n" } else { "\n" });
        for minute in 0..180 {
            let held = if (30..150).contains(&minute) { 4 } else { 0 };
            csv.push_str(&format!("{minute},{held},{held},{held}"));
            csv.push_str(if idle { ",12\n" } else { "\n" });
        }
        let path = data.join(name);
        std::fs::write(&path, csv).unwrap();
        path
    };
    let run = |trace: &Path| {
        replay_on(
            &data,
            trace,
            &seed_rules(),
            &["--baseline", "oracle", "--json"],
        )
    };
    let output = run(&write("stuck.csv", true));
    let said = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        said.contains("480 GPU-minutes (100.0% of what the queue asked for) pended"),
        "{said}"
    );
    let report: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(report["baselines"][0]["cost_fen"], 0, "{report}");
    // Without the idle column the same job is demand.
    let output = run(&write("counted.csv", false));
    let said = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!said.contains("GPU-minutes"), "{said}");
    let report: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert!(
        report["baselines"][0]["cost_fen"].as_i64().unwrap() > 0,
        "{report}"
    );
}
