-- A card whose memory NVML could not read has no total: NULL, as every other reading it
-- could not give, not the 0 this column held for it before. SQLite cannot drop a NOT NULL,
-- so the table is rebuilt (it holds the last hours of raw samples only).
CREATE TABLE samples_new (
    host_id INTEGER NOT NULL,
    t_ms INTEGER NOT NULL,
    gpu_index INTEGER NOT NULL,
    util_pct REAL,
    memory_used_mib INTEGER,
    memory_total_mib INTEGER,
    temperature_c REAL,
    power_w REAL,
    PRIMARY KEY (host_id, t_ms, gpu_index)
) WITHOUT ROWID;

INSERT INTO samples_new
SELECT host_id, t_ms, gpu_index, util_pct, memory_used_mib, NULLIF(memory_total_mib, 0),
       temperature_c, power_w
FROM samples;

DROP TABLE samples;
ALTER TABLE samples_new RENAME TO samples;
