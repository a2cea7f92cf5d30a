//! The console core against agents served in-process on loopback.
// Tests read as their story, start to end: no line budget for them.
#![allow(clippy::too_many_lines)]

mod changes;
mod demo_queue;
mod election;
mod failover;
mod forms;
mod lease_history;
mod parsers;
mod pinning;
mod pools;
mod prom_backend;
mod provider;
mod reclaim;
mod registry;
mod roles;
mod rules;
mod rules_replay;
mod showback;
mod slurm_sim;
mod spot;

/// A pool as the tests make most: `max` GPUs of `model` in `regions`, none at least, no
/// base, monthly with an hourly overlay, packed.
pub(crate) fn pool_input(
    name: &str,
    model: &str,
    regions: Vec<String>,
    max: u32,
) -> ebb_wire::pools::PoolInput {
    use ebb_wire::plan::{OverlayMode, Term};
    ebb_wire::pools::PoolInput {
        name: name.into(),
        model: model.into(),
        regions,
        min: 0,
        max,
        base_gpus: 0,
        term: Term::Month,
        overlay: OverlayMode::Hour,
        placement: ebb_wire::pools::PlacementPolicy::Pack,
        interruptible: false,
        release_at_unit_end: false,
        spot: Default::default(),
    }
}

/// Sets a pool's desired count as `ebb pool scale` does (an operator's change, logged).
pub(crate) async fn set_desired(store: &ebb_core::pools::PoolStore, pool: &str, to: u32) {
    let from = store.get(pool).await.unwrap().desired;
    let change = ebb_core::pools::NewActivity {
        actor: ebb_wire::pools::Actor::Operator,
        from,
        to,
        reason: ebb_wire::reasons::ChangeReason::Cli,
        delta_per_hour_fen: None,
        delta_per_month_fen: None,
    };
    store
        .set_desired(pool, to, &[], &change, None)
        .await
        .unwrap();
}

/// A fresh database on the suite's PostgreSQL server (`EBB_TEST_POSTGRES`), or on one
/// started for this test; the server, when started here, lives as long as the guard.
pub(crate) fn shared_database(
    name: &str,
) -> (Option<ebb_testkit::PostgresServer>, ebb_core::db::Location) {
    let (server, base) = match std::env::var(ebb_testkit::POSTGRES_ENV) {
        Ok(base) => (None, base),
        Err(_) => {
            let server =
                ebb_testkit::PostgresServer::start(name).unwrap_or_else(|error| panic!("{error}"));
            let base = server.url().to_string();
            (Some(server), base)
        }
    };
    let database = format!("ebb_{name}_{}", std::process::id());
    (
        server,
        ebb_core::db::Location::Postgres(format!("{base}/{database}")),
    )
}
