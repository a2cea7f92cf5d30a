//! Property tests of ebb-slurm: hostlists round-trip, and the scale-in decision keeps its
//! promises (the budget, idle before busy, no job ended without `force` or the cost cap).

mod drain;
mod hostlist;
