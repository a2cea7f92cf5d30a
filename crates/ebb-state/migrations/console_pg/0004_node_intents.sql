-- A Slurm node's lease is requested as every other lease is (written here before it is
-- sent): all of the node's GPUs (a JSON array of UUIDs; NULL for the one GPU in gpu_uuid)
-- and the workload the lease runs (a JSON argv: the node's slurmd; NULL for none).
ALTER TABLE lease_intents ADD COLUMN gpu_uuids TEXT;
ALTER TABLE lease_intents ADD COLUMN command TEXT;
