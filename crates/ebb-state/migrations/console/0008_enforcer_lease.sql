-- Consoles sharing one database elect one enforcer (election.rs): the holder of this row
-- until it expires, and its term, raised at every change of holder. One console on its own
-- SQLite file never needs it; the table is here so both engines hold one schema.
CREATE TABLE enforcer_lease (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    holder TEXT NOT NULL,
    term INTEGER NOT NULL,
    expires_at_ms INTEGER NOT NULL
);
