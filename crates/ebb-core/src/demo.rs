//! The demo's content: the embedded fleet's hosts registered as real ones are, its pool
//! (A100s over the two regions that have them), the pool's seed-like rules (on the console's
//! own clock, paid-unit-aware), and the users they follow. The desktop shell starts the simulated fleet and hands
//! its hosts here; everything the demo shows goes through the same registry, pools and rules
//! as an operator's own.

use crate::console::{Console, ConsoleError};
use crate::registry::HostEntry;

impl Console {
    /// Registers the demo fleet's hosts (name, URL, region), labelled `demo=true`, and makes
    /// the demo pool on the first start; with `rules`, the pool's rules too.
    pub async fn seed_demo(
        &self,
        hosts: Vec<(String, String, String)>,
        rules: bool,
    ) -> Result<(), ConsoleError> {
        // What the setup logs is the demo's, not the operator's (their later changes are).
        let before = self.pool_store().last_activity_id().await;
        for (name, url, region) in hosts {
            let spec = HostEntry {
                name,
                url,
                region,
                labels: [("demo".to_string(), "true".to_string())].into(),
                fingerprint: None,
                has_token: false,
                draining: false,
            };
            self.upsert_host(&spec, None).await?;
        }
        seed_pool(self).await;
        if rules {
            seed_rules(self).await;
        }
        match before {
            Ok(before) => {
                if let Err(error) = self.pool_store().attribute_to_demo(before).await {
                    tracing::warn!(%error, "cannot mark the demo's setup as the demo's");
                }
            }
            Err(error) => tracing::warn!(%error, "cannot read the activity log"),
        }
        Ok(())
    }
}

/// The demo's pool, made on the first start: A100s over the two regions that have them.
async fn seed_pool(console: &Console) {
    if console
        .list_pools()
        .await
        .is_ok_and(|pools| !pools.is_empty())
    {
        return;
    }
    let input = ebb_wire::pools::PoolInput {
        name: "inference".into(),
        model: "A100".into(),
        regions: vec!["cn-east".into(), "cn-south".into()],
        min: 0,
        max: 8,
        base_gpus: 2,
        term: ebb_wire::plan::Term::Month,
        overlay: ebb_wire::plan::OverlayMode::Hour,
        placement: ebb_wire::pools::PlacementPolicy::Pack,
        interruptible: false,
        release_at_unit_end: false,
    };
    if let Err(error) = console.create_pool(&input).await {
        tracing::warn!(%error, "cannot create the demo pool");
    }
}

/// The demo pool's rules: the seed's e-commerce case ("users > 100k → 20 GPUs, < 50k →
/// 5"), sized to the demo pool and paid-unit-aware as the product recommends; written on
/// the first start only. They run on the console's own clock, as billing does.
pub const RULES: &str = r#"# The demo pool follows its users, as the seed's e-commerce case does: a festival peak
# sets it to 6 GPUs, back to normal sets it to 2.
# GPUs above the base are paid by the started hour, so a GPU no longer needed is kept
# until the last 10 minutes of the hour it has paid for: a peak that comes back within
# the hour uses it again at no extra cost, instead of paying a fresh hour.
pool = "inference"

[limits]
min_gpus = 0
max_gpus = 8

[scale_in]
force = false
release_window_minutes = 10

[[metric]]
name = "users"
stale_after_minutes = 3

[[threshold]]
name = "festival-peak"
metric = "users"
op = ">"
value = 100000
for_minutes = 1
action = "set 6"
cooldown_minutes = 5

[[threshold]]
name = "back-to-normal"
metric = "users"
op = "<"
value = 50000
for_minutes = 2
action = "set 2"
"#;

/// The demo pool's rules, saved when it has none (the demo's own data directory).
async fn seed_rules(console: &Console) {
    if console
        .pool_rules("inference")
        .await
        .ok()
        .flatten()
        .is_some()
    {
        return;
    }
    if let Err(error) = console.save_rules("inference", RULES, None, true).await {
        tracing::warn!(%error, "cannot save the demo pool's rules");
    }
}

/// How often the demo's festival peak comes back, in seconds.
pub const PEAK_EVERY_S: u64 = 600;

/// When in each [`PEAK_EVERY_S`] the peak is on, in seconds.
pub const PEAK_S: std::ops::Range<u64> = 10..250;

/// The demo's users, each second: 30k, then a festival peak of 150k from 10 s to 250 s of
/// every 10 minutes, with a little noise.
pub fn users(elapsed_s: u64) -> f64 {
    let t = elapsed_s % PEAK_EVERY_S;
    let base = if PEAK_S.contains(&t) {
        150_000.0
    } else {
        30_000.0
    };
    base + ((elapsed_s * 7_919) % 2_000) as f64
}

/// Pushes the demo's users each second as the custom metric `users` of the demo pool,
/// until the task is dropped.
pub async fn push_users(store: crate::pools::PoolStore) {
    let started = std::time::Instant::now();
    let mut ticks = tokio::time::interval(std::time::Duration::from_secs(1));
    loop {
        ticks.tick().await;
        let push = ebb_wire::rules::MetricPush {
            name: "users".into(),
            value: users(started.elapsed().as_secs()),
            pool: Some("inference".into()),
            at: None,
        };
        if let Err(error) = store.push_metric(&push).await {
            tracing::warn!(%error, "cannot push the demo's users");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_rules_parse_and_their_users_cross_both_thresholds() {
        ebb_rules::model::parse(RULES).unwrap();
        let peak = PEAK_S.map(users).fold(f64::MAX, f64::min);
        let normal = (0..PEAK_S.start)
            .chain(PEAK_S.end..PEAK_EVERY_S)
            .map(users)
            .fold(0.0, f64::max);
        assert!(peak > 100_000.0, "the festival peak is above 100k: {peak}");
        assert!(normal < 50_000.0, "normal is below 50k: {normal}");
    }
}
