//! Showback: who spent what in a calendar month. Each pool's month, priced as its spend is
//! (`pools::month_spend`: the lease history, each lease at its host's region, spot apart),
//! split into the overlay (leases beyond the base, spot included), the base its GPUs used
//! and the base left idle; then summed per team (`pools.team`, '' for none). The shell
//! reads; [`showback`] and [`showback_csv`] are pure.

use crate::console::Console;
use crate::pools::{self, PoolError, csv_amount, csv_field, refused};
use ebb_cost::{Spend, SpendWindow, SpotSpend};
use ebb_wire::phrase::Phrase;
use ebb_wire::showback::{PoolShowback, Showback, ShowbackLine, TeamShowback};
use sqlx::Row;
use std::collections::{BTreeMap, HashMap};

impl Console {
    /// The showback of `month` (`YYYY-MM`, UTC; `None`: this month): a month that is over
    /// is billed to its end, this one to now; a month not begun is refused, naming `month`.
    /// The pools are today's, each at its current plan and the active catalog.
    pub async fn showback(&self, month: Option<&str>) -> Result<Showback, PoolError> {
        let now = self.pools.now_ms();
        let (name, start, end) = match month.map(str::trim) {
            None => ebb_charts::calendar::utc_month(now),
            Some(month) => {
                let (start, end) =
                    ebb_charts::calendar::utc_month_named(month).ok_or_else(|| {
                        refused(
                            "month",
                            Phrase::new("showback.refuse.month").text("month", month),
                        )
                    })?;
                (month.to_string(), start, end)
            }
        };
        let not_begun = || {
            refused(
                "month",
                Phrase::new("showback.refuse.notBegun").text("month", &name),
            )
        };
        let through = SpendWindow::billed_month(start, end, now, start).ok_or_else(not_begun)?;
        let teams = self.pool_teams().await?;
        let catalog = self.catalog();
        let mut rows = Vec::new();
        for pool in self.pools.list().await? {
            let status = self
                .pools
                .read_status(&pool.id)
                .await?
                .map(|(status, _)| status)
                .unwrap_or_default();
            let spans = self.pools.spans(&pool.id, start).await?;
            let window = SpendWindow::billed_month(start, end, now, pool.created_at_ms)
                .ok_or_else(not_begun)?;
            let spend = pools::month_spend(&pool, &status, &spans, &catalog, window);
            rows.push(PoolShowback {
                team: teams.get(&pool.id).cloned().unwrap_or_default(),
                pool: pool.name,
                model: pool.model,
                base_gpus: pool.base_gpus,
                spend: spend.as_ref().ok().map(|(spend, spot)| line(spend, spot)),
                spend_problem: spend.err(),
            });
        }
        showback(name, start, through.now_ms, through.now_ms == end, rows)
    }

    /// Each pool's team ('' for none), by pool id.
    async fn pool_teams(&self) -> Result<HashMap<String, String>, PoolError> {
        let rows = sqlx::query("SELECT id, team FROM pools")
            .fetch_all(self.pools.db().pool())
            .await?;
        Ok(rows
            .iter()
            .map(|row| (row.get("id"), row.get("team")))
            .collect())
    }
}

/// A pool's month as a showback line: the on-demand split, with spot GPUs as overlay.
pub fn line(spend: &Spend, spot: &SpotSpend) -> ShowbackLine {
    let split = spend.split;
    ShowbackLine {
        overlay_fen: split.overlay.fen() + spot.month_to_date.fen(),
        base_used_fen: split.base_used.fen(),
        idle_base_fen: split.idle_base.fen(),
        total_fen: spend.month_to_date.fen() + spot.month_to_date.fen(),
        gpu_hours: spend.gpu_hours + spot.gpu_hours,
        idle_base_gpu_hours: split.idle_base_gpu_hours,
    }
}

/// `a + b`, every amount checked.
fn add(a: ShowbackLine, b: &ShowbackLine) -> Result<ShowbackLine, PoolError> {
    let sum = |x: i64, y: i64| {
        x.checked_add(y)
            .ok_or_else(|| refused("spend", Phrase::new("spend.refuse.overflow")))
    };
    Ok(ShowbackLine {
        overlay_fen: sum(a.overlay_fen, b.overlay_fen)?,
        base_used_fen: sum(a.base_used_fen, b.base_used_fen)?,
        idle_base_fen: sum(a.idle_base_fen, b.idle_base_fen)?,
        total_fen: sum(a.total_fen, b.total_fen)?,
        gpu_hours: a.gpu_hours + b.gpu_hours,
        idle_base_gpu_hours: a.idle_base_gpu_hours + b.idle_base_gpu_hours,
    })
}

/// The month's showback from its pools' lines: pools ordered by team (named teams by name,
/// the pools with no team last), then by name; a line per team with the sums of its pools
/// that could be priced; the total over them all.
pub fn showback(
    month: String,
    month_start_ms: i64,
    through_ms: i64,
    complete: bool,
    mut pools: Vec<PoolShowback>,
) -> Result<Showback, PoolError> {
    let team_key = |team: &str| (team.is_empty(), team.to_string());
    pools.sort_by(|a, b| (team_key(&a.team), &a.pool).cmp(&(team_key(&b.team), &b.pool)));
    let mut teams: BTreeMap<(bool, String), TeamShowback> = BTreeMap::new();
    let mut total = ShowbackLine::default();
    for pool in &pools {
        let team = teams
            .entry(team_key(&pool.team))
            .or_insert_with(|| TeamShowback {
                team: pool.team.clone(),
                pools: Vec::new(),
                spend: ShowbackLine::default(),
            });
        team.pools.push(pool.pool.clone());
        if let Some(spend) = &pool.spend {
            team.spend = add(team.spend, spend)?;
            total = add(total, spend)?;
        }
    }
    Ok(Showback {
        month,
        month_start_ms,
        through_ms,
        complete,
        teams: teams.into_values().collect(),
        pools,
        total,
    })
}

/// The showback as CSV: a header; per team its pools (`row` = `pool`), then the team's
/// line (`team`); the total last (`total`). Amounts in yuan with two decimals, as in the
/// spend CSV.
pub fn showback_csv(showback: &Showback) -> String {
    let mut out = String::from(
        "month,row,team,pool,overlay_cny,base_used_cny,idle_base_cny,total_cny,gpu_hours,idle_base_gpu_hours,problem\n",
    );
    let mut row =
        |kind: &str, team: &str, pool: &str, spend: Option<&ShowbackLine>, problem: String| {
            let amounts = spend.map_or_else(
                || vec![String::new(); 6],
                |s| {
                    vec![
                        csv_amount(s.overlay_fen),
                        csv_amount(s.base_used_fen),
                        csv_amount(s.idle_base_fen),
                        csv_amount(s.total_fen),
                        format!("{:.2}", s.gpu_hours),
                        format!("{:.2}", s.idle_base_gpu_hours),
                    ]
                },
            );
            let mut cells = vec![
                csv_field(&showback.month),
                kind.to_string(),
                csv_field(team),
                csv_field(pool),
            ];
            cells.extend(amounts);
            cells.push(csv_field(&problem));
            out.push_str(&cells.join(","));
            out.push('\n');
        };
    for team in &showback.teams {
        for pool in showback.pools.iter().filter(|p| p.team == team.team) {
            let problem = pool
                .spend_problem
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default();
            row("pool", &team.team, &pool.pool, pool.spend.as_ref(), problem);
        }
        row("team", &team.team, "", Some(&team.spend), String::new());
    }
    row("total", "", "", Some(&showback.total), String::new());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ebb_wire::reasons::PriceProblem;

    fn spend(overlay: i64, used: i64, idle: i64, hours: f64) -> ShowbackLine {
        ShowbackLine {
            overlay_fen: overlay,
            base_used_fen: used,
            idle_base_fen: idle,
            total_fen: overlay + used + idle,
            gpu_hours: hours,
            idle_base_gpu_hours: 0.0,
        }
    }

    fn pool(name: &str, team: &str, line: Option<ShowbackLine>) -> PoolShowback {
        PoolShowback {
            pool: name.into(),
            team: team.into(),
            model: "A100".into(),
            base_gpus: 0,
            spend: line,
            spend_problem: line.is_none().then_some(PriceProblem::NoRegion),
        }
    }

    #[test]
    fn teams_sum_their_pools_and_the_total_sums_them_all() {
        let pools = vec![
            pool("z-lone", "", Some(spend(5, 0, 0, 1.0))),
            pool("infer", "vision", Some(spend(100, 40, 60, 10.0))),
            pool("train", "nlp", Some(spend(0, 300, 1, 20.0))),
            pool("eval", "vision", Some(spend(7, 0, 0, 2.0))),
            pool("broken", "vision", None),
        ];
        let showback = showback("2026-11".into(), 0, 10, true, pools).unwrap();
        let names: Vec<(&str, &str)> = showback
            .pools
            .iter()
            .map(|p| (p.team.as_str(), p.pool.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("nlp", "train"),
                ("vision", "broken"),
                ("vision", "eval"),
                ("vision", "infer"),
                ("", "z-lone")
            ],
            "by team, no team last, then by name"
        );
        let teams: Vec<(&str, ShowbackLine)> = showback
            .teams
            .iter()
            .map(|t| (t.team.as_str(), t.spend))
            .collect();
        assert_eq!(
            teams,
            [
                ("nlp", spend(0, 300, 1, 20.0)),
                ("vision", spend(107, 40, 60, 12.0)),
                ("", spend(5, 0, 0, 1.0)),
            ]
        );
        assert_eq!(showback.teams[1].pools, ["broken", "eval", "infer"]);
        assert_eq!(showback.total, spend(112, 340, 61, 33.0));
        let csv = showback_csv(&showback);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 1 + 5 + 3 + 1, "{csv}");
        assert_eq!(
            lines[1],
            "2026-11,pool,nlp,train,0.00,3.00,0.01,3.01,20.00,0.00,"
        );
        assert_eq!(
            lines[2],
            "2026-11,team,nlp,,0.00,3.00,0.01,3.01,20.00,0.00,"
        );
        assert_eq!(
            lines[3],
            "2026-11,pool,vision,broken,,,,,,,the pool has no region"
        );
        assert_eq!(lines[8], "2026-11,team,,,0.05,0.00,0.00,0.05,1.00,0.00,");
        assert_eq!(lines[9], "2026-11,total,,,1.12,3.40,0.61,5.13,33.00,0.00,");
    }

    #[test]
    fn a_sum_past_the_fen_s_range_is_an_error_not_a_wrap() {
        let pools = vec![
            pool("a", "", Some(spend(i64::MAX, 0, 0, 0.0))),
            pool("b", "", Some(spend(1, 0, 0, 0.0))),
        ];
        assert!(matches!(
            showback("2026-11".into(), 0, 0, false, pools),
            Err(PoolError::Invalid { field: "spend", .. })
        ));
    }
}
