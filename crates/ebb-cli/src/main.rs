//! `ebb`: the console core without a window. Everything but parsing is in the library.

use clap::Parser;
use std::process::ExitCode;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    // What the core says (a host that cannot be reached, a pass that failed) goes to
    // standard error: warnings by default, `RUST_LOG=info` or `debug` for more.
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    match ebb_cli::run(ebb_cli::Cli::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("Error: {}", ebb_cli::errors::words(&error));
            ExitCode::from(ebb_cli::exit_code(&error))
        }
    }
}
