-- Each pool's rule set (the TOML as saved), its mode, and every version saved.
CREATE TABLE pool_rules (
    pool_id TEXT PRIMARY KEY NOT NULL,
    version INTEGER NOT NULL,
    -- enabled | disabled | shadow
    mode TEXT NOT NULL,
    source TEXT NOT NULL,
    updated_at_ms INTEGER NOT NULL,
    -- The enforcer's latest decision on them (JSON), and when.
    last_decision TEXT,
    decided_at_ms INTEGER
);

CREATE TABLE pool_rules_versions (
    pool_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    mode TEXT NOT NULL,
    source TEXT NOT NULL,
    at_ms INTEGER NOT NULL,
    PRIMARY KEY (pool_id, version)
);

-- Custom metrics pushed by the operator's systems; `pool` is '' for every pool. Kept a
-- few hours (the longest rule window is far shorter).
CREATE TABLE custom_metrics (
    name TEXT NOT NULL,
    pool TEXT NOT NULL,
    at_ms INTEGER NOT NULL,
    value REAL NOT NULL
);
CREATE INDEX custom_metrics_by_name ON custom_metrics (name, pool, at_ms);

-- Bearer tokens for the console's metrics endpoint: SHA-256 hashes only.
CREATE TABLE metric_tokens (
    hash TEXT PRIMARY KEY NOT NULL,
    created_at_ms INTEGER NOT NULL
);
