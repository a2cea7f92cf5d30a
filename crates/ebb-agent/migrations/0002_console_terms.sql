-- The highest term each console group has sent this host's lease calls with (a fencing
-- token per group of consoles sharing a database): a lower one is refused. Terms only grow.
CREATE TABLE console_terms (
    host TEXT NOT NULL,
    console_group TEXT NOT NULL,
    term INTEGER NOT NULL,
    PRIMARY KEY (host, console_group)
);
