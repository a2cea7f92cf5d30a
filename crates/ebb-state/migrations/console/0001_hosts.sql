-- The host registry. Tokens are never here: they live in the OS keychain (or, when the
-- operator opted in, the 0600 file store).
CREATE TABLE hosts (
    name TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    region TEXT NOT NULL,
    labels TEXT NOT NULL,
    fingerprint TEXT,
    -- Whether the vault holds a token for the host (so hosts without one never touch it).
    has_token INTEGER NOT NULL DEFAULT 0,
    created_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL
);

-- What the collector last saw of each host, so a viewer (a second app or CLI on the same
-- data directory) can show it without collecting twice.
CREATE TABLE host_health (
    name TEXT PRIMARY KEY,
    health TEXT NOT NULL,
    reason TEXT,
    gpu_count INTEGER NOT NULL,
    models TEXT NOT NULL,
    mean_util_pct REAL,
    checked_at_ms INTEGER NOT NULL
);
