-- Many operators, one fleet: who made each change, teams with quotas, and the audit log.
--
-- `activity.who`/`role`: the operator (the OS user on SQLite, the database role on a shared
-- PostgreSQL) and their Ebb role (`viewer`, `operator`, `admin`, `enforcer`).
ALTER TABLE activity ADD COLUMN who TEXT NOT NULL DEFAULT '';
ALTER TABLE activity ADD COLUMN role TEXT NOT NULL DEFAULT '';

-- A pool belongs to one team ('' for none); a team's quotas bound what its pools hold.
ALTER TABLE pools ADD COLUMN team TEXT NOT NULL DEFAULT '';
CREATE TABLE teams (
    name TEXT PRIMARY KEY NOT NULL,
    -- Spend per calendar month (fen) its pools may project to; NULL: none.
    spend_per_month_fen INTEGER,
    created_at_ms INTEGER NOT NULL
);
-- GPUs of `model` the team's pools may hold in all.
CREATE TABLE team_quotas (
    team TEXT NOT NULL,
    model TEXT NOT NULL,
    max_gpus INTEGER NOT NULL,
    PRIMARY KEY (team, model)
);

-- Every change, each entry carrying the hash of the one before (audit.rs): an edited,
-- deleted or reordered entry breaks the chain where it is.
CREATE TABLE audit (
    id INTEGER PRIMARY KEY,
    at_ms INTEGER NOT NULL,
    who TEXT NOT NULL,
    role TEXT NOT NULL,
    what TEXT NOT NULL,
    subject TEXT NOT NULL,
    before TEXT NOT NULL,
    after TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
);
