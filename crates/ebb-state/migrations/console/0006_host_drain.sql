-- Hosts being removed: the pools' GPUs there are released (and taken elsewhere) first;
-- the enforcer drops the host from the registry once none is left.
CREATE TABLE host_drain (
    host TEXT PRIMARY KEY NOT NULL,
    since_ms INTEGER NOT NULL
);
