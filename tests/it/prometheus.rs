//! Ebb in a real Prometheus: simulated agents in two regions, `ebb daemon` serving the
//! registry as HTTP service discovery (`GET /v1/prometheus/targets`, a metric token), two
//! pools leasing GPUs, and Debian's `prometheus` scraping the agents it was told of. Every
//! query of the Grafana dashboard (`dist/grafana/ebb-gpus.json`) and of its variables must
//! answer something; `promtool` must find nothing wrong with the config or an agent's
//! `/metrics`.

use crate::{MetricsDaemon, http};
use ebb_testkit::{AgentCommand, AgentProcess, Cli, PrometheusServer, TempDir, eventually};
use ebb_wire::agent::{LeaseList, LeaseState};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const DASHBOARD: &str = include_str!("../../dist/grafana/ebb-gpus.json");

/// The hosts: name, region, rack label.
const HOSTS: [(&str, &str, &str); 4] = [
    ("gpu-n1", "cn-north", "r1"),
    ("gpu-n2", "cn-north", "r2"),
    ("gpu-e1", "cn-east", "r1"),
    ("gpu-e2", "cn-east", "r2"),
];

/// The dashboard's panels, those inside rows included.
fn panels(dashboard: &Value) -> Vec<&Value> {
    let mut all = Vec::new();
    for panel in dashboard["panels"].as_array().expect("panels") {
        all.push(panel);
        if let Some(inner) = panel["panels"].as_array() {
            all.extend(inner);
        }
    }
    all
}

/// A query as Grafana would send it with every variable on All and a one-minute interval.
fn substitute(query: &str) -> String {
    let mut out = query.to_string();
    for interval in ["$__rate_interval", "$__interval", "$__range"] {
        out = out.replace(interval, "1m");
    }
    for variable in ["$job", "$region", "$host", "$pool"] {
        out = out.replace(variable, ".*");
    }
    assert!(!out.contains('$'), "a variable left in {out}");
    out
}

/// Checks the model Grafana imports: unique ids, every panel placed on the 24-column grid,
/// every query on the `${DS_PROMETHEUS}` variable.
fn check_importable(dashboard: &Value) {
    let mut ids = HashSet::new();
    for panel in panels(dashboard) {
        let id = panel["id"].as_u64().expect("a numeric panel id");
        assert!(ids.insert(id), "panel id {id} twice");
        let grid = &panel["gridPos"];
        let (x, w, h) = (&grid["x"], &grid["w"], &grid["h"]);
        let (x, w) = (x.as_u64().unwrap(), w.as_u64().unwrap());
        assert!(grid["y"].is_u64() && h.as_u64().unwrap() > 0, "{panel}");
        assert!(w > 0 && x + w <= 24, "panel {id} off the grid: {grid}");
        if panel["type"] != "row" {
            assert_eq!(panel["datasource"]["uid"], "${DS_PROMETHEUS}", "panel {id}");
            assert!(panel["targets"].as_array().is_some_and(|t| !t.is_empty()));
        }
    }
    let variables = dashboard["templating"]["list"].as_array().unwrap();
    let names: BTreeSet<&str> = variables
        .iter()
        .map(|variable| variable["name"].as_str().unwrap())
        .collect();
    for name in ["DS_PROMETHEUS", "region", "host", "pool"] {
        assert!(names.contains(name), "no {name} variable: {names:?}");
    }
    assert!(
        variables
            .iter()
            .any(|v| v["name"] == "DS_PROMETHEUS" && v["type"] == "datasource"),
        "DS_PROMETHEUS is the Prometheus data source variable"
    );
}

/// Every GPU our pools hold, by pool id, from the agents.
async fn held_by_pool(agents: &[AgentProcess]) -> BTreeMap<String, usize> {
    let mut held = BTreeMap::new();
    for agent in agents {
        let list: LeaseList = http()
            .get(format!("{}/v1/leases", agent.url))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        for lease in list.leases {
            if lease.state == LeaseState::Active {
                *held.entry(lease.pool_id).or_default() += lease.gpu_uuids.len();
            }
        }
    }
    held
}

/// `GET base/path?params` on Prometheus's API: the `data`, or a panic naming `what` and the
/// error when Prometheus refused (a query it cannot parse fails at once, it is not waited on).
async fn api(base: &str, path: &str, params: &[(&str, &str)], what: &str) -> Value {
    let body: Value = http()
        .get(reqwest::Url::parse_with_params(&format!("{base}{path}"), params).unwrap())
        .send()
        .await
        .unwrap_or_else(|error| panic!("{what}: {error}"))
        .json()
        .await
        .unwrap_or_else(|error| panic!("{what}: {error}"));
    assert_eq!(body["status"], "success", "{what}: {body}");
    body["data"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_dashboard_query_answers_from_a_real_prometheus_fed_by_service_discovery() {
    let started = Instant::now();
    let dashboard: Value = serde_json::from_str(DASHBOARD).expect("the dashboard is JSON");
    check_importable(&dashboard);
    let promtool = PrometheusServer::tool("promtool");
    PrometheusServer::tool("prometheus");

    let dir = TempDir::new("it-prometheus");
    let agents: Vec<AgentProcess> = HOSTS
        .iter()
        .map(|(name, _, _)| {
            AgentCommand::sim(&dir.subdir(name), "2xA100")
                .host_name(name)
                .sample_interval_ms(200)
                .start()
        })
        .collect();
    let data = dir.join("console");
    let cli = Cli::new(&data);
    for ((name, region, rack), agent) in HOSTS.iter().zip(&agents) {
        let rack = format!("rack={rack}");
        // `pool` is also a label of the agents' lease series: the join below must survive it.
        cli.ok(&[
            "hosts",
            "add",
            name,
            &agent.url,
            "--region",
            region,
            "--label",
            &rack,
            "--label",
            "pool=batch",
        ]);
    }
    // Two pools, one per region, so the per-pool and per-region panels have something.
    for (pool, region, gpus) in [("train", "cn-north", "3"), ("infer", "cn-east", "2")] {
        cli.ok(&[
            "pool", "create", pool, "--model", "A100", "--region", region, "--min", "0", "--max",
            "4",
        ]);
        cli.ok(&["pool", "scale", pool, gpus, "--yes", "--wait"]);
    }
    let held = held_by_pool(&agents).await;
    let mut counts: Vec<usize> = held.values().copied().collect();
    counts.sort_unstable();
    assert_eq!(counts, [2, 3], "{held:?}");

    let daemon = MetricsDaemon::start(cli.command(&["daemon"]));
    let console = &daemon.addr;
    let token = cli.ok(&["metric", "token", "new"]).trim().to_string();

    // A service-discovery scrape job, as README.md shows it. `type: Bearer` is needed: in
    // http_sd_configs Prometheus sends the bare credentials without it (prometheus/docs#2377).
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
             scrape_configs:\n  - job_name: ebb-agents\n    http_sd_configs:\n      \
             - url: http://{console}/v1/prometheus/targets\n        refresh_interval: 5s\n        \
             authorization:\n          type: Bearer\n          credentials: {token}\n"
        ),
    )
    .unwrap();
    let checked = Command::new(&promtool)
        .args(["check", "config"])
        .arg(&config)
        .output()
        .unwrap();
    assert!(
        checked.status.success(),
        "promtool check config: {}{}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );

    // promtool's lint of a real exposition, with a lease held (ebb_gpu_lease_info present).
    let body = http()
        .get(format!("{}/metrics", agents[0].url))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(body.contains("ebb_gpu_lease_info{"), "{body}");
    let mut lint = Command::new(&promtool)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    lint.stdin
        .take()
        .unwrap()
        .write_all(body.as_bytes())
        .unwrap();
    let lint = lint.wait_with_output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&lint.stdout),
        String::from_utf8_lossy(&lint.stderr)
    );
    assert!(
        lint.status.success() && said.trim().is_empty(),
        "promtool check metrics ({}): {said}",
        lint.status
    );
    eprintln!("promtool: the config and an agent's /metrics have no problems");

    let server = PrometheusServer::start_with(dir.path(), &config);
    let prometheus = server.url().to_string();
    let targets = eventually(
        "Prometheus to scrape every agent",
        Duration::from_secs(60),
        || async {
            let data = api(&prometheus, "/api/v1/targets", &[], "targets").await;
            let active = data["activeTargets"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let up = active
                .iter()
                .filter(|target| target["health"] == "up")
                .count();
            let seen: Vec<String> = active
                .iter()
                .map(|t| format!("{} {}", t["labels"]["host"], t["health"]))
                .collect();
            (up == HOSTS.len()).then_some(active).ok_or(seen)
        },
    )
    .await;
    for (name, region, rack) in HOSTS {
        let target = targets
            .iter()
            .find(|target| target["labels"]["host"] == name)
            .unwrap_or_else(|| panic!("no target for {name}"));
        assert_eq!(target["labels"]["region"], region, "{target}");
        assert_eq!(target["labels"]["rack"], rack, "{target}");
        assert_eq!(target["labels"]["host_pool"], "batch", "{target}");
        assert_eq!(target["labels"]["job"], "ebb-agents", "{target}");
    }

    // Every panel's queries answer, with every variable on All.
    let mut panel_queries = 0;
    for panel in panels(&dashboard) {
        for target in panel["targets"].as_array().into_iter().flatten() {
            let expr = substitute(target["expr"].as_str().expect("an expr"));
            let what = format!("panel {}: {expr}", panel["title"]);
            let series = eventually(&what, Duration::from_secs(30), || async {
                let data = api(&prometheus, "/api/v1/query", &[("query", &expr)], &what).await;
                let result = data["result"].as_array().cloned().unwrap_or_default();
                (!result.is_empty()).then_some(result).ok_or("no series")
            })
            .await;
            assert!(!series.is_empty());
            panel_queries += 1;
        }
    }

    // The variables' label_values(SELECTOR, LABEL) queries list what the fleet has.
    let mut variables = BTreeMap::new();
    for variable in dashboard["templating"]["list"].as_array().unwrap() {
        if variable["type"] != "query" {
            continue;
        }
        let query = variable["query"].as_str().unwrap();
        let inner = query
            .strip_prefix("label_values(")
            .and_then(|rest| rest.strip_suffix(')'))
            .unwrap_or_else(|| panic!("not label_values(...): {query}"));
        let (selector, label) = inner.rsplit_once(',').unwrap();
        let selector = substitute(selector.trim());
        let what = format!("variable {}: {query}", variable["name"]);
        let path = format!("/api/v1/label/{}/values", label.trim());
        let values: BTreeSet<String> =
            serde_json::from_value(api(&prometheus, &path, &[("match[]", &selector)], &what).await)
                .unwrap();
        assert!(!values.is_empty(), "{what}");
        variables.insert(variable["name"].as_str().unwrap().to_string(), values);
    }
    let set = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
    assert_eq!(variables["job"], set(&["ebb-agents"]));
    assert_eq!(variables["region"], set(&["cn-east", "cn-north"]));
    assert_eq!(
        variables["host"],
        set(&HOSTS.map(|(name, _, _)| name)),
        "the registry's names"
    );
    let pools: BTreeSet<String> = held.keys().cloned().collect();
    assert_eq!(variables["pool"], pools, "the pools' ids");

    // The join the per-pool panels rest on counts each pool's GPUs as the agents do.
    let data = api(
        &prometheus,
        "/api/v1/query",
        &[(
            "query",
            "count by (pool) (ebb_gpu_utilization_percent * on (instance, uuid) group_left (pool) ebb_gpu_lease_info)",
        )],
        "GPUs by pool",
    )
    .await;
    let joined: BTreeMap<String, usize> = data["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|series| {
            let pool = series["metric"]["pool"].as_str().unwrap().to_string();
            let count = series["value"][1].as_str().unwrap().parse().unwrap();
            (pool, count)
        })
        .collect();
    assert_eq!(joined, held, "GPUs per pool through PromQL");

    eprintln!(
        "{panel_queries} panel queries and {} variable queries of the dashboard answered by Prometheus, {:.1} s in all",
        variables.len(),
        started.elapsed().as_secs_f64()
    );
    drop(server);
}

/// A custom metric read from Prometheus: `ebb daemon` runs the rule file's PromQL query (the
/// pool's name templated in) against the server `console.toml` names and stores the answer
/// as the pool's metric; with Prometheus gone, after `fallback_after` failures in a row the
/// metric reads its `fallback`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_promql_metric_reads_prometheus_and_falls_back_when_it_is_gone() {
    PrometheusServer::tool("prometheus");
    let dir = TempDir::new("it-promql");
    let agent = AgentCommand::sim(&dir.subdir("gpu-n1"), "2xA100")
        .host_name("gpu-n1")
        .sample_interval_ms(200)
        .start();
    // A static scrape of the agent, labelled with the pool the query names.
    let target = agent
        .url
        .trim_start_matches("http://")
        .trim_end_matches('/');
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
             scrape_configs:\n  - job_name: ebb-agents\n    static_configs:\n      \
             - targets: ['{target}']\n        labels:\n          pool_name: web\n"
        ),
    )
    .unwrap();
    let server = PrometheusServer::start_with(dir.path(), &config);
    let prometheus = server.url().to_string();

    let cli = web_pool(&dir, &agent, &format!("prometheus = \"{prometheus}\""));
    let rules = dir.join("web.toml");
    std::fs::write(
        &rules,
        "pool = \"web\"\n[limits]\nmin_gpus = 0\nmax_gpus = 2\n\n\
         [[metric]]\nname = \"agents_up\"\nstale_after_minutes = 1\n\
         prometheus = 'sum(up{pool_name=\"{pool}\"})'\ntimeout_s = 2\n\
         fallback = 7\nfallback_after = 2\n\n\
         [[threshold]]\nname = \"never\"\nmetric = \"agents_up\"\nop = \">=\"\n\
         value = 100\naction = \"+1\"\n",
    )
    .unwrap();
    cli.ok(&["rules", "set", "web", rules.to_str().unwrap(), "--yes"]);
    // `ebb rules lint` asks the server console.toml names: the query above passes; one the
    // file's own check lets through (an unknown function) is refused, naming its field.
    let linted = cli.run(&["rules", "lint", rules.to_str().unwrap()]);
    assert_eq!(
        linted.status.code(),
        Some(1),
        "valid, with its cooldown warning: {}",
        String::from_utf8_lossy(&linted.stdout)
    );
    let unknown = dir.join("unknown.toml");
    std::fs::write(
        &unknown,
        std::fs::read_to_string(&rules)
            .unwrap()
            .replace("sum(up{", "frobnicate(up{"),
    )
    .unwrap();
    let linted = cli.run(&["rules", "lint", unknown.to_str().unwrap()]);
    let said = String::from_utf8_lossy(&linted.stdout);
    assert_eq!(linted.status.code(), Some(2), "{said}");
    assert!(
        said.contains("metric[0].prometheus") && said.contains("frobnicate"),
        "{said}"
    );
    let _daemon = MetricsDaemon::start(cli.command(&["daemon"]));

    let value = |cli: &Cli| -> Option<f64> {
        let shown: Value =
            serde_json::from_str(&cli.ok(&["rules", "show", "web", "--json"])).ok()?;
        shown["metrics"]
            .as_array()?
            .iter()
            .find(|metric| metric["name"] == "agents_up")?["value"]
            .as_f64()
    };
    eventually(
        "the query's answer stored as the pool's metric",
        Duration::from_secs(60),
        || async { (value(&cli) == Some(1.0)).then_some(()) },
    )
    .await;
    // Prometheus gone: two failed reads, then the fallback.
    drop(server);
    eventually(
        "the fallback once Prometheus is gone",
        Duration::from_secs(60),
        || async { (value(&cli) == Some(7.0)).then_some(()) },
    )
    .await;
}

/// The console in `dir/console` with `line` added to its console.toml, the agent as host
/// `gpu-n1` in cn-north and a pool `web` of 0 to 2 A100s there.
fn web_pool(dir: &TempDir, agent: &AgentProcess, line: &str) -> Cli {
    let data = dir.join("console");
    std::fs::create_dir_all(&data).unwrap();
    let toml = data.join("console.toml");
    let mut kept = std::fs::read_to_string(&toml).unwrap_or_default();
    kept.push_str(line);
    kept.push('\n');
    std::fs::write(&toml, kept).unwrap();
    let cli = Cli::new(&data);
    cli.ok(&["hosts", "add", "gpu-n1", &agent.url, "--region", "cn-north"]);
    cli.ok(&[
        "pool", "create", "web", "--model", "A100", "--region", "cn-north", "--min", "0", "--max",
        "2",
    ]);
    cli
}

/// An application's own exporter: `/metrics` with `test_queue_depth` at what the test sets.
struct Exporter {
    depth: std::sync::Arc<std::sync::atomic::AtomicU32>,
    target: String,
    task: tokio::task::JoinHandle<()>,
}

impl Exporter {
    async fn start() -> Self {
        use std::sync::atomic::Ordering;
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let target = listener.local_addr().unwrap().to_string();
        let depth = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
        let served = depth.clone();
        let task = tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let depth = served.load(Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut request = [0u8; 4096];
                    let _ = stream.read(&mut request).await;
                    let body = format!("# TYPE test_queue_depth gauge\ntest_queue_depth {depth}\n");
                    let answer = format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n\
                         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = stream.write_all(answer.as_bytes()).await;
                });
            }
        });
        Self {
            depth,
            target,
            task,
        }
    }

    fn set(&self, depth: u32) {
        self.depth.store(depth, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// `ebb daemon` on Prometheus as its metrics back end (`metrics = "prometheus+…"` in
/// console.toml) with a rule on a PromQL metric (an application's queue, from its own
/// exporter): a deep queue scales the pool out; Prometheus stopped, the metric goes stale
/// and the pool stands still, its leases untouched; Prometheus back with the queue empty,
/// the pool scales back in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_promql_rule_on_the_prometheus_back_end_scales_out_and_back() {
    PrometheusServer::tool("prometheus");
    let dir = TempDir::new("it-promql-rule");
    let agent = AgentCommand::sim(&dir.subdir("gpu-n1"), "2xA100")
        .host_name("gpu-n1")
        .sample_interval_ms(200)
        .start();
    let exporter = Exporter::start().await;
    let mut server = PrometheusServer::start(
        dir.path(),
        &format!(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
             scrape_configs:\n  - job_name: app\n    static_configs:\n      \
             - targets: ['{}']\n  - job_name: ebb-agents\n    static_configs:\n      \
             - targets: ['{}']\n        labels: {{host: gpu-n1, region: cn-north}}\n",
            exporter.target,
            agent
                .url
                .trim_start_matches("http://")
                .trim_end_matches('/'),
        ),
    );
    let data = dir.join("console");
    let cli = web_pool(
        &dir,
        &agent,
        &format!("metrics = \"prometheus+{}\"", server.url()),
    );
    let rules = dir.join("web.toml");
    std::fs::write(
        &rules,
        "pool = \"web\"\n[limits]\nmin_gpus = 0\nmax_gpus = 2\n\n[scale_in]\nforce = true\n\n\
         [[metric]]\nname = \"queue\"\nstale_after_minutes = 1\n\
         prometheus = 'max(test_queue_depth)'\ntimeout_s = 2\n\n\
         [[threshold]]\nname = \"deep\"\nmetric = \"queue\"\nop = \">\"\nvalue = 5\n\
         action = \"+2\"\n\n\
         [[threshold]]\nname = \"empty\"\nmetric = \"queue\"\nop = \"<\"\nvalue = 1\n\
         action = \"-2\"\n",
    )
    .unwrap();
    cli.ok(&["rules", "set", "web", rules.to_str().unwrap(), "--yes"]);
    let daemon = MetricsDaemon::start(cli.command(&["daemon"]));
    let held = |cli: &Cli| -> Option<(u64, u64)> {
        let view: Value = serde_json::from_str(&cli.ok(&["pool", "show", "web", "--json"])).ok()?;
        Some((view["desired"].as_u64()?, view["actual"].as_u64()?))
    };
    let stale = |cli: &Cli| -> Option<bool> {
        let shown: Value =
            serde_json::from_str(&cli.ok(&["rules", "show", "web", "--json"])).ok()?;
        shown["metrics"]
            .as_array()?
            .iter()
            .find(|metric| metric["name"] == "queue")?["stale"]
            .as_bool()
    };

    exporter.set(12);
    eventually(
        "the deep queue to scale the pool out to 2",
        Duration::from_secs(240),
        || async { (held(&cli) == Some((2, 2))).then_some(()) },
    )
    .await;
    assert_eq!(
        held_by_pool(std::slice::from_ref(&agent))
            .await
            .values()
            .sum::<usize>(),
        2
    );
    // `ebb metrics` reads the agent's readings from Prometheus too (no metrics.db).
    let readings: Value =
        serde_json::from_str(&cli.ok(&["metrics", "gpu-n1", "--since", "1m", "--json"])).unwrap();
    assert_eq!(readings.as_array().map(Vec::len), Some(2), "{readings}");
    assert!(!data.join("metrics.db").exists(), "nothing collected");

    // Prometheus gone, the queue emptied meanwhile: the metric goes stale, and the pool
    // stands still.
    server.stop();
    exporter.set(0);
    eventually(
        "the queue metric to go stale",
        Duration::from_secs(180),
        || async { (stale(&cli) == Some(true)).then_some(()) },
    )
    .await;
    assert_eq!(held(&cli), Some((2, 2)), "no rule moved the pool");
    assert_eq!(
        held_by_pool(std::slice::from_ref(&agent))
            .await
            .values()
            .sum::<usize>(),
        2,
        "its leases untouched"
    );

    // Back: the empty queue scales it in.
    server.restart();
    eventually(
        "the empty queue to scale the pool back to 0",
        Duration::from_secs(240),
        || async { (held(&cli) == Some((0, 0))).then_some(()) },
    )
    .await;
    eventually(
        "the agent to hold none",
        Duration::from_secs(30),
        || async {
            (held_by_pool(std::slice::from_ref(&agent))
                .await
                .values()
                .sum::<usize>()
                == 0)
                .then_some(())
        },
    )
    .await;
    drop(daemon);
}
