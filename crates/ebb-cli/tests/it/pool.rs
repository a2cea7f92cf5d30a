//! `ebb pool show` through the real binary on simulated agents: the pool's leases, in text
//! and in `--json`; `ebb pool scale --release` gives back the leases it names.

use ebb_testkit::{Cli, TempDir, TestFleet};
use std::path::Path;

/// `ebb ARGS` on `data`, expected to fail: its stderr.
async fn ebb_err(data: &Path, args: &[&str]) -> String {
    let cli = Cli::with_program(Path::new(env!("CARGO_BIN_EXE_ebb")), data);
    let args: Vec<String> = args.iter().map(ToString::to_string).collect();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = cli.run(&args);
        assert!(!output.status.success(), "ebb {args:?} succeeded");
        String::from_utf8_lossy(&output.stderr).to_string()
    })
    .await
    .unwrap()
}

/// `ebb ARGS` on `data` (file token store), off the runtime the fleet answers on.
async fn ebb_ok(data: &Path, args: &[&str]) -> String {
    let cli = Cli::with_program(Path::new(env!("CARGO_BIN_EXE_ebb")), data);
    let args: Vec<String> = args.iter().map(ToString::to_string).collect();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        cli.ok(&args)
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pool_show_lists_each_lease_with_its_host_gpus_state_and_grant() {
    let dir = TempDir::new("cli-pool-show");
    let data = dir.join("console");
    // Three hosts of four GPUs, models in turn: one A100 host.
    let fleet = TestFleet::builder().start().await;
    for host in fleet.hosts() {
        ebb_ok(
            &data,
            &[
                "hosts",
                "add",
                &host.name,
                &host.url,
                "--region",
                &host.region,
            ],
        )
        .await;
    }
    let a100 = fleet
        .hosts()
        .iter()
        .find(|host| host.model.name().contains("A100"))
        .expect("an A100 host")
        .clone();
    ebb_ok(
        &data,
        &[
            "pool",
            "create",
            "train",
            "--model",
            "A100",
            "--region",
            &a100.region,
            "--min",
            "0",
            "--max",
            "4",
        ],
    )
    .await;
    let empty = ebb_ok(&data, &["pool", "show", "train"]).await;
    assert!(empty.contains("no leases"), "{empty}");

    let scaled = ebb_ok(&data, &["pool", "scale", "train", "3", "--yes", "--wait"]).await;
    assert!(scaled.contains("converged"), "{scaled}");

    let view: serde_json::Value =
        serde_json::from_str(&ebb_ok(&data, &["pool", "show", "train", "--json"]).await).unwrap();
    let leases = view["leases"].as_array().expect("leases in --json");
    assert!(!leases.is_empty(), "{view}");
    let mut gpus: Vec<u64> = Vec::new();
    for lease in leases {
        assert_eq!(lease["host"], a100.name.as_str(), "{lease}");
        assert_eq!(lease["region"], a100.region.as_str(), "{lease}");
        assert_eq!(lease["state"], "active", "{lease}");
        assert!(lease["granted_at_ms"].as_i64().unwrap() > 0, "{lease}");
        assert!(lease.get("util_pct").is_some(), "{lease}");
        gpus.extend(
            lease["gpu_indexes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i.as_u64().unwrap()),
        );
    }
    gpus.sort_unstable();
    gpus.dedup();
    assert_eq!(gpus.len(), 3, "three distinct GPUs: {view}");

    let text = ebb_ok(&data, &["pool", "show", "train"]).await;
    eprintln!("{text}");
    assert!(
        text.contains(&format!("leases ({}):", leases.len())),
        "{text}"
    );
    let header = text
        .lines()
        .find(|line| line.trim_start().starts_with("LEASE"))
        .unwrap_or_else(|| panic!("no lease header: {text}"));
    for column in ["HOST", "REGION", "GPUS", "STATE", "GRANTED AT", "UTIL"] {
        assert!(header.contains(column), "{header}");
    }
    for lease in leases {
        let id = lease["lease_id"].as_str().unwrap();
        let row = text
            .lines()
            .find(|line| line.trim_start().starts_with(id))
            .unwrap_or_else(|| panic!("lease {id} is not listed: {text}"));
        assert!(row.contains(&a100.name) && row.contains("active"), "{row}");
        let indexes: Vec<String> = lease["gpu_indexes"]
            .as_array()
            .unwrap()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert!(row.contains(&indexes.join(",")), "{row}");
    }

    // The oldest lease is the placement's last choice (newest go first): named, it goes.
    let oldest = leases
        .iter()
        .min_by_key(|lease| lease["fencing_token"].as_u64().unwrap())
        .unwrap()["lease_id"]
        .as_str()
        .unwrap()
        .to_string();
    let refused = ebb_err(
        &data,
        &["pool", "scale", "train", "2", "--release", "nope", "--yes"],
    )
    .await;
    assert!(
        refused.contains("release") && refused.contains("nope"),
        "{refused}"
    );
    ebb_ok(
        &data,
        &[
            "pool",
            "scale",
            "train",
            "2",
            "--release",
            &oldest,
            "--yes",
            "--wait",
        ],
    )
    .await;
    let view: serde_json::Value =
        serde_json::from_str(&ebb_ok(&data, &["pool", "show", "train", "--json"]).await).unwrap();
    let left: Vec<&str> = view["leases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|lease| lease["state"] == "active")
        .map(|lease| lease["lease_id"].as_str().unwrap())
        .collect();
    assert_eq!(left.len(), 2, "{view}");
    assert!(
        !left.contains(&oldest.as_str()),
        "{oldest} was kept: {view}"
    );
    fleet.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spot_mix_that_cannot_work_is_refused_naming_its_field() {
    let dir = TempDir::new("cli-pool-spot");
    let data = dir.join("console");
    let fleet = TestFleet::builder().start().await;
    for host in fleet.hosts() {
        ebb_ok(
            &data,
            &[
                "hosts",
                "add",
                &host.name,
                &host.url,
                "--region",
                &host.region,
            ],
        )
        .await;
    }
    let h800 = fleet
        .hosts()
        .iter()
        .find(|host| host.model.name().contains("H800"))
        .expect("an H800 host")
        .clone();
    let create = |extra: &[&str]| {
        let mut args = vec![
            "pool",
            "create",
            "render",
            "--model",
            "H800",
            "--region",
            &h800.region,
            "--min",
            "0",
            "--max",
            "4",
        ];
        args.extend_from_slice(extra);
        args.into_iter().map(String::from).collect::<Vec<String>>()
    };
    let run_err = |args: Vec<String>| {
        let data = data.clone();
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            ebb_err(&data, &args).await
        }
    };
    let not_interruptible = run_err(create(&["--spot-pct", "50"])).await;
    assert!(
        not_interruptible.contains("spot_pct") && not_interruptible.contains("interruptible"),
        "{not_interruptible}"
    );
    let too_much = run_err(create(&["--interruptible", "--spot-pct", "101"])).await;
    assert!(too_much.contains("spot_pct"), "{too_much}");
    let too_cheap = run_err(create(&[
        "--interruptible",
        "--spot-pct",
        "50",
        "--spot-max-price",
        "0.01",
    ]))
    .await;
    assert!(
        too_cheap.contains("max_price_fen") && too_cheap.contains("under every spot offer"),
        "{too_cheap}"
    );
    let not_money = run_err(create(&["--interruptible", "--spot-max-price", "cheap"])).await;
    assert!(not_money.contains("--spot-max-price"), "{not_money}");
    // Nothing was made.
    let list = ebb_ok(&data, &["pool", "list"]).await;
    assert!(!list.contains("render"), "{list}");

    // A mix that can work: shown with its split.
    ebb_ok(
        &data,
        &{
            let mut args = create(&[
                "--interruptible",
                "--on-demand-floor",
                "1",
                "--spot-pct",
                "50",
                "--spot-max-price",
                "999",
            ]);
            args.push("--json".into());
            args
        }
        .iter()
        .map(String::as_str)
        .collect::<Vec<&str>>(),
    )
    .await;
    let shown = ebb_ok(&data, &["pool", "show", "render"]).await;
    assert!(
        shown.contains("mix: on-demand floor 1, spot 50% of the rest at most ¥999.00/h"),
        "{shown}"
    );
}
