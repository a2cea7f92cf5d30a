-- Each pool over time, as the enforcer saw it after a pass: written at most once a minute
-- per pool, or sooner when a count moved; kept for a bounded time (pool_history.rs).
CREATE TABLE pool_history (
    pool_id TEXT NOT NULL,
    at_ms INTEGER NOT NULL,
    desired INTEGER NOT NULL,
    -- Leases held and counted.
    ready INTEGER NOT NULL,
    -- Lease requests sent and not answered yet.
    warming INTEGER NOT NULL,
    -- Mean utilization of the held GPUs that reported one; NULL when none did.
    util_pct REAL,
    PRIMARY KEY (pool_id, at_ms)
);

-- A lease request leaves lease_intents once its answer is certain; the enforcer's history
-- pass reads these on its own clock to measure each host's delivery time.
CREATE TABLE lease_answered (
    key TEXT PRIMARY KEY,
    pool_id TEXT NOT NULL,
    host TEXT NOT NULL,
    gpu_uuid TEXT NOT NULL,
    asked_at_ms INTEGER NOT NULL
);
CREATE TRIGGER lease_intent_answered AFTER DELETE ON lease_intents
BEGIN
    INSERT OR REPLACE INTO lease_answered (key, pool_id, host, gpu_uuid, asked_at_ms)
    VALUES (OLD.key, OLD.pool_id, OLD.host, OLD.gpu_uuid, OLD.created_at_ms);
END;

-- Each host's measured delivery time: from a lease request to its GPU granted (ready),
-- on the console's clock; a running mean over the last samples.
CREATE TABLE host_delivery (
    host TEXT PRIMARY KEY,
    samples INTEGER NOT NULL,
    mean_ms REAL NOT NULL,
    last_ms INTEGER NOT NULL,
    at_ms INTEGER NOT NULL
);
