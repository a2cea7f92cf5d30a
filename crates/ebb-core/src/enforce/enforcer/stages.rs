//! The stages of the enforcer's pass, one file each, in [`super::STAGES`] order: each an
//! `impl Loop` method over the pass's context ([`super::Pass`]). A new feature adds a
//! stage (or a phase of the pure planner it calls), not lines to another stage.

mod act;
mod bindings;
mod breakers;
mod observe;
mod plan;
mod rules;
mod settle;
