-- A pool's spot mix (a JSON `SpotMix`: on-demand floor, spot share, max price) and whether
-- each lease in the history held spot GPUs (priced at spot, and counted apart in spend).
ALTER TABLE pools ADD COLUMN spot_mix TEXT NOT NULL DEFAULT '{}';
ALTER TABLE pool_leases ADD COLUMN spot BIGINT NOT NULL DEFAULT 0;
