//! The agent tested in-process: its `Router` request by request, and a whole agent on
//! loopback.

mod api;
mod leases;
mod nvml;
mod support;
