//! `ebb`: the console core without a window. Everything but parsing is in the library.

use clap::Parser;
use std::process::ExitCode;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    match ebb_cli::run(ebb_cli::Cli::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("Error: {error:#}");
            ExitCode::from(ebb_cli::exit_code(&error))
        }
    }
}
