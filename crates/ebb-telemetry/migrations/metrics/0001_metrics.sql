-- The metrics store (metrics.db): GPU samples at three resolutions.
-- A reading the card could not give is NULL, never 0; every aggregate ignores NULLs.

-- Host names, once each; rows refer to them by id.
CREATE TABLE metric_hosts (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
);

-- Raw samples, clustered by host then time: one host's round of GPUs lands in adjacent
-- rows, and one host's chart is one range of the primary key.
CREATE TABLE samples (
    host_id INTEGER NOT NULL,
    t_ms INTEGER NOT NULL,
    gpu_index INTEGER NOT NULL,
    util_pct REAL,
    memory_used_mib INTEGER,
    memory_total_mib INTEGER NOT NULL,
    temperature_c REAL,
    power_w REAL,
    PRIMARY KEY (host_id, t_ms, gpu_index)
) WITHOUT ROWID;

-- Rollups: per bucket (bucket_ms is the bucket's start) and GPU, each metric's min, max,
-- sum and count of readings (count 0 and NULLs when the GPU gave none). Averages are
-- sum / count, so rolling minutes up into hours stays exact. Memory is kept both in MiB
-- and as a share of each reading's card, so the share stays exact too.
CREATE TABLE rollup_minute (
    host_id INTEGER NOT NULL,
    bucket_ms INTEGER NOT NULL,
    gpu_index INTEGER NOT NULL,
    util_min REAL, util_max REAL, util_sum REAL, util_n INTEGER NOT NULL,
    mem_min INTEGER, mem_max INTEGER, mem_sum INTEGER, mem_n INTEGER NOT NULL,
    mem_pct_min REAL, mem_pct_max REAL, mem_pct_sum REAL, mem_pct_n INTEGER NOT NULL,
    temp_min REAL, temp_max REAL, temp_sum REAL, temp_n INTEGER NOT NULL,
    power_min REAL, power_max REAL, power_sum REAL, power_n INTEGER NOT NULL,
    PRIMARY KEY (host_id, bucket_ms, gpu_index)
) WITHOUT ROWID;

CREATE TABLE rollup_hour (
    host_id INTEGER NOT NULL,
    bucket_ms INTEGER NOT NULL,
    gpu_index INTEGER NOT NULL,
    util_min REAL, util_max REAL, util_sum REAL, util_n INTEGER NOT NULL,
    mem_min INTEGER, mem_max INTEGER, mem_sum INTEGER, mem_n INTEGER NOT NULL,
    mem_pct_min REAL, mem_pct_max REAL, mem_pct_sum REAL, mem_pct_n INTEGER NOT NULL,
    temp_min REAL, temp_max REAL, temp_sum REAL, temp_n INTEGER NOT NULL,
    power_min REAL, power_max REAL, power_sum REAL, power_n INTEGER NOT NULL,
    PRIMARY KEY (host_id, bucket_ms, gpu_index)
) WITHOUT ROWID;

-- One row. pending_from_ms: the earliest sample time written since the rollups were last
-- brought up to date (NULL when they are). *_horizon_ms: retention's last cutoff per table;
-- rows older than it may be gone, so queries reaching further back use a coarser table.
CREATE TABLE store_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    pending_from_ms INTEGER,
    raw_horizon_ms INTEGER,
    minute_horizon_ms INTEGER,
    hour_horizon_ms INTEGER
);
INSERT INTO store_state (id) VALUES (1);
