//! What the Fleet's capacity summary needs beside the snapshot: each reported GPU model
//! mapped to the catalog's name (through `ebb_reconcile::placement::model_matches`, the one
//! matcher pools use), the catalog's hourly prices, and which of our pools holds each of
//! our leases. `fleet_capacity` is pure; `Console::fleet_capacity` reads its inputs.

use crate::console::Console;
use crate::pools::PoolError;
use ebb_cost::Catalog;
use ebb_reconcile::placement;
use ebb_reconcile::reconcile::KnownLease;
use ebb_wire::ipc::{CapacityPrice, FleetCapacity, HostStatus, ModelMapping, PoolLeaseRef};
use std::collections::{BTreeSet, HashMap};

/// The catalog's model for a GPU the driver names `gpu_model`, or `None` when the catalog
/// prices none. When several match (`A100` and `A100 80GB`), the most specific (longest)
/// name wins, so a catalog that tells the variants apart keeps them apart. Pure.
pub fn catalog_model<'a>(gpu_model: &str, catalog_models: &'a [String]) -> Option<&'a str> {
    placement::catalog_match(gpu_model, catalog_models).map(|index| catalog_models[index].as_str())
}

/// The capacity facts for these hosts, this catalog and our leases (`pool_names` by pool
/// id; a lease of a pool deleted meanwhile shows its id). Pure.
pub fn fleet_capacity(
    hosts: &[HostStatus],
    catalog: &Catalog,
    leases: &[KnownLease],
    pool_names: &HashMap<String, String>,
) -> FleetCapacity {
    let mut catalog_models: Vec<String> = Vec::new();
    for entry in &catalog.entries {
        if !catalog_models.contains(&entry.model) {
            catalog_models.push(entry.model.clone());
        }
    }
    let reported: BTreeSet<&str> = hosts
        .iter()
        .flat_map(|host| {
            host.gpus
                .iter()
                .map(|gpu| gpu.model.as_str())
                .chain(host.models.iter().map(String::as_str))
        })
        .collect();
    FleetCapacity {
        currency: catalog.currency.clone(),
        models: reported
            .into_iter()
            .map(|gpu_model| ModelMapping {
                gpu_model: gpu_model.to_string(),
                catalog_model: catalog_model(gpu_model, &catalog_models).map(str::to_string),
            })
            .collect(),
        prices: catalog
            .entries
            .iter()
            .map(|entry| CapacityPrice {
                model: entry.model.clone(),
                region: entry.region.clone(),
                hour_fen: entry.hour.fen(),
            })
            .collect(),
        leases: leases
            .iter()
            .map(|lease| PoolLeaseRef {
                lease_id: lease.lease_id.clone(),
                host: lease.host.clone(),
                pool: pool_names
                    .get(&lease.pool_id)
                    .cloned()
                    .unwrap_or_else(|| lease.pool_id.clone()),
            })
            .collect(),
    }
}

impl Console {
    /// The capacity facts for the fleet as the latest snapshot shows it.
    pub async fn fleet_capacity(&self) -> Result<FleetCapacity, PoolError> {
        let pool_names: HashMap<String, String> = self
            .pools
            .list()
            .await?
            .into_iter()
            .map(|pool| (pool.id, pool.name))
            .collect();
        let leases = self.pools.known_leases().await?;
        Ok(fleet_capacity(
            &self.latest().hosts,
            &self.catalog(),
            &leases,
            &pool_names,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ebb_wire::agent::Gpu;
    use ebb_wire::ipc::Health;

    fn models(names: &[&str]) -> Vec<String> {
        names.iter().map(|name| name.to_string()).collect()
    }

    #[test]
    fn reported_names_map_to_the_catalogs_models() {
        let catalog = models(&["H800", "A100", "V100", "Ascend 910B"]);
        for (reported, expected) in [
            ("NVIDIA A100-SXM4-80GB", Some("A100")),
            ("NVIDIA H800", Some("H800")),
            ("Tesla V100-SXM2-32GB", Some("V100")),
            ("Ascend 910B", Some("Ascend 910B")),
            ("NVIDIA A10", None),
            ("NVIDIA H100 80GB HBM3", None),
            ("unknown", None),
        ] {
            assert_eq!(catalog_model(reported, &catalog), expected, "{reported}");
        }
    }

    #[test]
    fn the_most_specific_catalog_model_wins() {
        let catalog = models(&["A100", "A100 80GB", "A100-40GB"]);
        assert_eq!(
            catalog_model("NVIDIA A100 80GB PCIe", &catalog),
            Some("A100 80GB")
        );
        assert_eq!(
            catalog_model("NVIDIA A100-SXM4-80GB", &catalog),
            Some("A100")
        );
        assert_eq!(
            catalog_model("NVIDIA A100-40GB", &catalog),
            Some("A100-40GB")
        );
    }

    #[test]
    fn capacity_names_models_prices_and_our_pools() {
        let catalog = Catalog::demo();
        let host = HostStatus {
            name: "cn-east-001".into(),
            url: "http://a".into(),
            region: "cn-east".into(),
            health: Health::Online,
            gpu_count: 1,
            models: vec!["NVIDIA A100-SXM4-80GB".into()],
            mean_util_pct: None,
            last_error: None,
            gpus: vec![Gpu {
                model: "NVIDIA A100-SXM4-80GB".into(),
                ..Gpu::default()
            }],
        };
        let lease = |id: &str, pool_id: &str| KnownLease {
            host: "cn-east-001".into(),
            lease_id: id.into(),
            pool_id: pool_id.into(),
            fencing_token: 1,
            gpu_uuids: Vec::new(),
            gpu_indexes: vec![0],
            granted_at_ms: 0,
        };
        let names = HashMap::from([("p1".to_string(), "inference".to_string())]);
        let capacity = fleet_capacity(
            &[host],
            &catalog,
            &[lease("lease-1", "p1"), lease("lease-2", "gone")],
            &names,
        );
        assert_eq!(
            capacity.models,
            vec![ModelMapping {
                gpu_model: "NVIDIA A100-SXM4-80GB".into(),
                catalog_model: Some("A100".into()),
            }]
        );
        assert!(
            capacity.prices.iter().any(|price| price.model == "A100"
                && price.region == "cn-east"
                && price.hour_fen > 0)
        );
        let pools: Vec<&str> = capacity.leases.iter().map(|l| l.pool.as_str()).collect();
        assert_eq!(pools, vec!["inference", "gone"]);
    }
}
