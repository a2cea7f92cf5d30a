-- The leases the operator chose to give back first on the pool's scale-in (a JSON array of
-- lease ids), set with the desired count it goes with and replaced by the next change.
ALTER TABLE pools ADD COLUMN release_first TEXT NOT NULL DEFAULT '[]';
