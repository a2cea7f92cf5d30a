//! `ebb-desktop`: flags and glue; the app lives in the library. Run under the name `ebb`
//! (the app's package installs `/usr/bin/ebb` as a link to this binary, so it carries the
//! core once), it is the `ebb` command line.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

use clap::Parser;
use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    if std::env::args_os()
        .next()
        .is_some_and(|program| Path::new(&program).file_stem() == Some("ebb".as_ref()))
    {
        return ebb_cli::main();
    }
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    match ebb_desktop::run(ebb_desktop::Options::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        // As `main() -> anyhow::Result<()>` did: the error's debug form, exit code 1.
        Err(error) => {
            eprintln!("Error: {error:?}");
            ExitCode::FAILURE
        }
    }
}
