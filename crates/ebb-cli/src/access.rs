//! `ebb whoami`, `ebb admin init|grant`, `ebb team …` and `ebb audit verify|export`: who
//! is acting, the roles a shared PostgreSQL enforces, teams with their quotas, and the
//! tamper-evident audit log.

use crate::pools::{open, parse_yuan};
use clap::Subcommand;
use ebb_core::console::TokenStore;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[derive(Debug, Subcommand)]
pub enum AdminCommand {
    /// Set up Ebb's roles on the shared PostgreSQL database: the group roles ebb_viewer,
    /// ebb_operator, ebb_admin and ebb_enforcer (made when missing; needs CREATEROLE), and
    /// their grants and row-level security on Ebb's tables (run by the tables' owner).
    /// Running it again changes nothing; run it again after an upgrade adds tables.
    Init,
    /// Give a database user one of Ebb's roles (viewer, operator, admin, enforcer), and no
    /// other; only an admin may.
    Grant {
        /// viewer, operator, admin or enforcer.
        #[arg(value_name = "ROLE")]
        role: String,
        /// An existing database user (CREATE ROLE NAME LOGIN).
        #[arg(value_name = "USER")]
        user: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum TeamCommand {
    /// Every team with its quotas, pools and the GPUs they ask for.
    List,
    /// Make a team, or set its spend quota.
    Set {
        /// The team's name.
        name: String,
        /// The most its pools may spend in a month, in yuan (e.g. 50000); left out: none.
        #[arg(long, value_name = "YUAN", value_parser = parse_yuan)]
        spend_per_month: Option<i64>,
    },
    /// Set (or clear) a team's quota of GPUs of one model.
    Quota {
        /// The team's name.
        team: String,
        /// The GPU model, as pools name it (A100).
        #[arg(long)]
        model: String,
        /// The most GPUs of the model its pools may ask for in all.
        #[arg(long, conflicts_with = "clear", required_unless_present = "clear")]
        gpus: Option<u32>,
        /// Remove the quota.
        #[arg(long)]
        clear: bool,
    },
    /// Move a pool into a team (refused if the team's quota would be passed); `--none`
    /// takes it out of any.
    Assign {
        /// The pool's name.
        pool: String,
        /// The team it moves into.
        #[arg(required_unless_present = "none")]
        team: Option<String>,
        /// Take it out of any team.
        #[arg(long, conflicts_with = "team")]
        none: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum AuditCommand {
    /// Check the audit log's hash chain: exit 0 when every entry is as written, else 1
    /// naming the first entry edited, deleted or moved.
    Verify,
    /// Write the audit log as JSON lines (oldest first) to FILE, or standard output.
    Export {
        /// Where to write it (standard output when left out).
        file: Option<PathBuf>,
    },
}

pub async fn whoami(data_dir: &Path, store: TokenStore, json: bool) -> anyhow::Result<()> {
    let console = open(data_dir, store, false).await?;
    let identity = console.identity().clone();
    console.shutdown().await;
    if json {
        println!("{}", serde_json::to_string_pretty(&identity)?);
    } else {
        let place = if identity.shared {
            "on a shared database"
        } else {
            "on this machine's own database"
        };
        println!("{} ({}) {place}", identity.who, identity.role);
    }
    Ok(())
}

pub async fn admin(
    command: &AdminCommand,
    data_dir: &Path,
    store: TokenStore,
    json: bool,
) -> anyhow::Result<()> {
    let console = open(data_dir, store, false).await?;
    let result = match command {
        AdminCommand::Init => console.admin_init().await.map(|()| {
            if json {
                println!("{}", serde_json::json!({ "initialized": true }));
            } else {
                println!(
                    "Ebb's roles are set up: grant them with `ebb admin grant ROLE USER` (viewer, operator, admin, enforcer)"
                );
            }
        }),
        AdminCommand::Grant { role, user } => {
            console.grant_role(role, user).await.map(|role| {
                if json {
                    println!("{}", serde_json::json!({ "user": user, "role": role }));
                } else {
                    println!("{user} is now {role}");
                }
            })
        }
    };
    console.shutdown().await;
    Ok(result?)
}

pub async fn team(
    command: &TeamCommand,
    data_dir: &Path,
    store: TokenStore,
    json: bool,
) -> anyhow::Result<()> {
    let console = open(data_dir, store, false).await?;
    let result = async {
        match command {
            TeamCommand::List => {}
            TeamCommand::Set {
                name,
                spend_per_month,
            } => console.set_team(name, *spend_per_month).await?,
            TeamCommand::Quota {
                team,
                model,
                gpus,
                clear,
            } => {
                console
                    .set_quota(team, model, if *clear { None } else { *gpus })
                    .await?
            }
            TeamCommand::Assign { pool, team, none } => {
                let team = if *none {
                    ""
                } else {
                    team.as_deref().unwrap_or("")
                };
                console.set_pool_team(pool, team).await?
            }
        }
        console.teams().await
    }
    .await;
    console.shutdown().await;
    let teams = result?;
    if json {
        println!("{}", serde_json::to_string_pretty(&teams)?);
    } else {
        print!("{}", teams_table(&teams));
    }
    Ok(())
}

fn teams_table(teams: &[ebb_wire::access::TeamView]) -> String {
    if teams.is_empty() {
        return "no teams yet (`ebb team set NAME`)\n".into();
    }
    let mut out = String::new();
    for team in teams {
        let spend = team
            .spend_per_month_fen
            .map_or("no spend quota".to_string(), |fen| {
                format!("spend quota ¥{}.{:02} a month", fen / 100, fen % 100)
            });
        let _ = writeln!(out, "{}  ({spend})", team.name);
        for quota in &team.quotas {
            let asks = team
                .holding
                .iter()
                .find(|held| held.model == quota.model)
                .map_or(0, |held| held.gpus);
            let _ = writeln!(
                out,
                "  quota {} {}: its pools ask for {asks}",
                quota.gpus, quota.model
            );
        }
        let pools = if team.pools.is_empty() {
            "none".to_string()
        } else {
            team.pools.join(", ")
        };
        let _ = writeln!(out, "  pools: {pools}");
    }
    out
}

/// Answers whether the chain verified (the exit code's 0 or 1).
pub async fn audit(
    command: &AuditCommand,
    data_dir: &Path,
    store: TokenStore,
    json: bool,
) -> anyhow::Result<bool> {
    let console = open(data_dir, store, false).await?;
    let entries = console.audit_entries().await;
    console.shutdown().await;
    let entries = entries?;
    match command {
        AuditCommand::Verify => {
            let verdict = ebb_core::audit::check(&entries);
            if json {
                println!("{}", serde_json::to_string_pretty(&verdict)?);
            } else {
                match &verdict.broken {
                    None => println!(
                        "verified: {} audit entries, each as written",
                        verdict.entries
                    ),
                    Some(broken) => println!(
                        "the audit log is broken: {broken} ({} entries read)",
                        verdict.entries
                    ),
                }
            }
            Ok(verdict.broken.is_none())
        }
        AuditCommand::Export { file } => {
            let text = ebb_core::audit::json_lines(&entries);
            match file {
                Some(path) => {
                    std::fs::write(path, text)?;
                    if !json {
                        eprintln!(
                            "{} audit entries written to {}",
                            entries.len(),
                            path.display()
                        );
                    }
                }
                None => print!("{text}"),
            }
            Ok(true)
        }
    }
}
