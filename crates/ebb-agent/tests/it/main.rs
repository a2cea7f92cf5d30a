//! The agent tested in-process: its `Router` request by request, and a whole agent on
//! loopback; and the `ebb-agent` binary itself where its flags matter (`tls`).

mod api;
mod leases;
mod nvml;
mod parsers;
mod reclaim;
mod retention;
mod support;
mod terms;
mod tls;
