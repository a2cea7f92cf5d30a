//! `ebb --help` reads like the UI: every subcommand says what it does and every argument and
//! flag what it is, walked over clap's whole tree from `Cli::command()`.

use clap::{Arg, Command, CommandFactory};

/// `ebb pool show NAME` style paths of every subcommand without a description and every
/// argument without help text, under `command`.
fn undescribed(command: &Command, path: &str) -> Vec<String> {
    let mut missing = Vec::new();
    for arg in command.get_arguments() {
        if arg.is_hide_set() {
            continue;
        }
        if arg.get_help().is_none() && arg.get_long_help().is_none() {
            missing.push(format!("{path}: {}", arg_name(arg)));
        }
    }
    for sub in command.get_subcommands() {
        let sub_path = format!("{path} {}", sub.get_name());
        if sub.is_hide_set() {
            continue;
        }
        if sub.get_about().is_none() && sub.get_long_about().is_none() {
            missing.push(format!("{sub_path}: the subcommand itself"));
        }
        missing.extend(undescribed(sub, &sub_path));
    }
    missing
}

fn arg_name(arg: &Arg) -> String {
    match arg.get_long() {
        Some(long) => format!("--{long}"),
        None => arg.get_id().as_str().to_uppercase(),
    }
}

#[test]
fn every_subcommand_and_every_argument_has_help_text() {
    let cli = ebb_cli::Cli::command();
    let missing = undescribed(&cli, "ebb");
    assert!(
        missing.is_empty(),
        "without help text ({}):\n  {}",
        missing.len(),
        missing.join("\n  ")
    );
    // The walk reaches the leaves: `ebb pool show`'s NAME and `ebb rules suggest`'s flags.
    let pool_show = cli
        .find_subcommand("pool")
        .and_then(|pool| pool.find_subcommand("show"))
        .expect("ebb pool show");
    assert!(pool_show.get_arguments().any(|arg| arg.get_id() == "name"));
}

#[test]
fn the_walk_finds_an_argument_or_subcommand_left_undescribed() {
    let command = Command::new("ebb")
        .arg(Arg::new("json").long("json").help("Print JSON."))
        .subcommand(
            Command::new("pool").about("Pools.").subcommand(
                Command::new("show")
                    .about("One pool.")
                    .arg(Arg::new("name")),
            ),
        )
        .subcommand(Command::new("daemon"));
    assert_eq!(
        undescribed(&command, "ebb"),
        ["ebb pool show: NAME", "ebb daemon: the subcommand itself"]
    );
}

#[test]
fn data_dir_says_it_holds_everything_ebb_keeps() {
    let cli = ebb_cli::Cli::command();
    let data_dir = cli
        .get_arguments()
        .find(|arg| arg.get_id() == "data_dir")
        .expect("--data-dir");
    let help = data_dir
        .get_long_help()
        .or(data_dir.get_help())
        .expect("--data-dir help")
        .to_string();
    for kept in [
        "hosts",
        "pools",
        "activity",
        "metrics",
        "catalog",
        "tokens",
        "desktop app",
    ] {
        assert!(
            help.contains(kept),
            "--data-dir does not mention {kept}: {help}"
        );
    }
}
