//! The rules engine against the seed's cases and hand-computed replays.

mod billing;
mod decide;
mod families;
mod lint;
mod model;
mod parsers;
mod replay;
mod replay_spot;
mod seed_rules;
mod suggest;
mod suggest_flaps;
mod suggest_queue;
mod worded;
