-- Since when each host the enforcer looks at has not answered (on the console's clock),
-- so a restarted enforcer does not wait a whole grace period again.
CREATE TABLE host_down (
    host TEXT PRIMARY KEY NOT NULL,
    since_ms INTEGER NOT NULL
);
