//! `ebb`: the console core without a window. Everything but parsing is in the library.

use clap::Parser;

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    ebb_cli::run(ebb_cli::Cli::parse()).await
}
