//! The rules engine against the seed's cases and hand-computed replays.

mod billing;
mod families;
mod model;
mod replay;
