-- Leases and idempotency records, per host (a virtual fleet keeps many hosts in one file).
-- Rows hold the wire JSON of ebb_wire::agent types: the agent never queries inside them.
CREATE TABLE leases (
    host TEXT NOT NULL,
    id TEXT NOT NULL,
    fencing_token INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (host, id)
);

CREATE TABLE idempotency (
    host TEXT NOT NULL,
    key TEXT NOT NULL,
    request TEXT NOT NULL,
    response TEXT NOT NULL,
    PRIMARY KEY (host, key)
);

CREATE TABLE fencing (
    host TEXT PRIMARY KEY,
    last_token INTEGER NOT NULL
);
