//! `ebb`: the console core without a window. Everything is in the library.

fn main() -> std::process::ExitCode {
    ebb_cli::main()
}
