//! The rules engine against the seed's cases and hand-computed replays.
