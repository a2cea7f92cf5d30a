-- Whether a lease holds GPUs its host offers as spot (only such a lease can be reclaimed
-- by the host's owner). Rows from before read as false: their hosts offered no spot.
ALTER TABLE leases ADD COLUMN spot INTEGER NOT NULL DEFAULT 0;
