-- Pools, the leases the enforcer asked for and holds, failover fences, and the activity log.

-- This console's identity: the holder id on every lease it asks agents for.
CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE pools (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    model TEXT NOT NULL,
    -- JSON array of region names.
    regions TEXT NOT NULL,
    min_gpus INTEGER NOT NULL,
    max_gpus INTEGER NOT NULL,
    desired INTEGER NOT NULL,
    base_gpus INTEGER NOT NULL,
    term TEXT NOT NULL,
    overlay TEXT NOT NULL,
    placement TEXT NOT NULL,
    interruptible INTEGER NOT NULL,
    release_at_unit_end INTEGER NOT NULL,
    -- The operator asked to release now, paid unit or not (until the next change).
    force_release INTEGER NOT NULL DEFAULT 0,
    created_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL
);

-- A lease request written before it is sent, and deleted once its answer is certain: after
-- a crash it is sent again with the same key, so the agent grants it at most once.
CREATE TABLE lease_intents (
    key TEXT PRIMARY KEY,
    pool_id TEXT NOT NULL,
    host TEXT NOT NULL,
    gpu_uuid TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL
);

-- Every lease of ours the agents reported: the pools' lease history (spend) and what is
-- known of hosts that do not answer (failover).
CREATE TABLE pool_leases (
    host TEXT NOT NULL,
    lease_id TEXT NOT NULL,
    pool_id TEXT NOT NULL,
    gpu_uuids TEXT NOT NULL,
    gpu_indexes TEXT NOT NULL,
    fencing_token INTEGER NOT NULL,
    granted_at_ms INTEGER NOT NULL,
    -- When it ended (released, or gone from its agent); NULL while held.
    ended_at_ms INTEGER,
    PRIMARY KEY (host, lease_id)
);
CREATE INDEX pool_leases_pool ON pool_leases (pool_id, granted_at_ms);

-- A host written off after the grace period: our leases there at or below `fence` are stale.
CREATE TABLE host_fences (
    host TEXT PRIMARY KEY,
    fence INTEGER NOT NULL,
    at_ms INTEGER NOT NULL
);

-- What the enforcer last saw of each pool (JSON), for every process on this data directory.
CREATE TABLE pool_status (
    pool_id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    checked_at_ms INTEGER NOT NULL
);

CREATE TABLE activity (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at_ms INTEGER NOT NULL,
    pool_id TEXT NOT NULL,
    pool_name TEXT NOT NULL,
    actor TEXT NOT NULL,
    from_gpus INTEGER NOT NULL,
    to_gpus INTEGER NOT NULL,
    reason TEXT NOT NULL,
    delta_per_hour_fen INTEGER,
    delta_per_month_fen INTEGER,
    -- JSON array of per-host results.
    results TEXT NOT NULL,
    outcome TEXT NOT NULL,
    finished_at_ms INTEGER
);
CREATE INDEX activity_pool ON activity (pool_name, id);

CREATE TABLE settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
