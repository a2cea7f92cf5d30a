//! Why Slurm could not be asked or did not answer: the error of every call the shell makes
//! to Slurm's commands, as data.

use thiserror::Error;

/// Why Slurm could not be asked or did not answer.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SlurmError {
    #[error("`{program}` is not installed (apt-get install slurm-client)")]
    Missing { program: String },
    #[error("`{program}` did not answer within {after_s} s (is slurmctld up?)")]
    Timeout { program: String, after_s: u64 },
    #[error("`{program}` failed: {message}")]
    Failed { program: String, message: String },
    #[error("`{program}` answered what Ebb cannot read: {message}")]
    Malformed { program: String, message: String },
    #[error("Slurm has no partition `{name}`")]
    NoPartition { name: String },
    #[error("Slurm has no node `{name}`")]
    NoNode { name: String },
}
