//! The first [`GpuProvider`]: Ebb's own agents over HTTP, a client per registered host.

use super::{GpuProvider, ProviderError, ProviderFuture, Release, Rent, Rented};
use crate::registry::{HostEntry, Registry};
use ebb_telemetry::client::{AgentAccess, AgentClient, ClientConfig, SharedHttp};
use ebb_wire::agent::{ConsoleTerm, GpuList, Lease};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::RwLock;

/// The agents of the registry's hosts: a client per host (its token from the vault, its
/// pinned certificate), remade when the host's entry changes; all on one shared HTTP
/// client but for the pinned ones.
#[derive(Debug)]
pub struct AgentProvider {
    registry: Registry,
    http: SharedHttp,
    clients: RwLock<HashMap<String, (HostEntry, AgentClient)>>,
}

impl AgentProvider {
    pub fn new(registry: Registry, config: ClientConfig) -> Self {
        Self {
            registry,
            http: SharedHttp::new(config),
            clients: RwLock::new(HashMap::new()),
        }
    }

    fn client(&self, target: &str) -> Result<AgentClient, ProviderError> {
        self.clients
            .read()
            .ok()
            .and_then(|clients| clients.get(target).map(|(_, client)| client.clone()))
            .ok_or_else(|| ProviderError::Connect {
                url: target.to_string(),
                reason: "no client for this host: it is not registered, or its URL or pinned fingerprint cannot be used (see the log)".into(),
            })
    }

    async fn refresh(&self, specs: &[HostEntry]) {
        let changed: Vec<HostEntry> = match self.clients.read() {
            Ok(clients) => specs
                .iter()
                .filter(|spec| !clients.get(&spec.name).is_some_and(|(had, _)| had == *spec))
                .cloned()
                .collect(),
            Err(_) => specs.to_vec(),
        };
        let mut made = Vec::new();
        for spec in changed {
            let token = self.registry.token(&spec).await.unwrap_or(None);
            let access = AgentAccess {
                url: spec.url.clone(),
                token,
                fingerprint: spec.fingerprint.clone(),
            };
            match self.http.client(&access) {
                Ok(client) => made.push((spec, client)),
                Err(error) => tracing::warn!(host = %spec.name, %error, "cannot make a client"),
            }
        }
        if let Ok(mut clients) = self.clients.write() {
            clients.retain(|name, _| specs.iter().any(|spec| &spec.name == name));
            for (spec, client) in made {
                clients.insert(spec.name.clone(), (spec, client));
            }
        }
    }
}

impl GpuProvider for AgentProvider {
    fn prepare<'a>(
        &'a self,
        targets: &'a [HostEntry],
    ) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> {
        Box::pin(self.refresh(targets))
    }

    fn capacity<'a>(&'a self, target: &'a str) -> ProviderFuture<'a, GpuList> {
        Box::pin(async move { self.client(target)?.gpus().await })
    }

    fn list<'a>(&'a self, target: &'a str) -> ProviderFuture<'a, Vec<Lease>> {
        Box::pin(async move { Ok(self.client(target)?.leases().await?.leases) })
    }

    fn lease<'a>(
        &'a self,
        target: &'a str,
        lease_id: &'a str,
    ) -> ProviderFuture<'a, Option<Lease>> {
        Box::pin(async move { self.client(target)?.lease(lease_id).await })
    }

    fn announce<'a>(&'a self, target: &'a str, term: &'a ConsoleTerm) -> ProviderFuture<'a, ()> {
        Box::pin(async move {
            self.client(target)?.announce_term(term).await?;
            Ok(())
        })
    }

    fn rent<'a>(&'a self, rent: &'a Rent) -> ProviderFuture<'a, Rented> {
        Box::pin(async move {
            let client = self.client(&rent.target)?;
            let (new, lease) = client
                .create_lease(&rent.key, &rent.lease_request())
                .await?;
            Ok(Rented { lease, new })
        })
    }

    fn release<'a>(&'a self, release: &'a Release) -> ProviderFuture<'a, Lease> {
        Box::pin(async move {
            self.client(&release.target)?
                .release_lease(&release.lease_id, release.term.as_ref())
                .await
        })
    }

    fn restart<'a>(&'a self, target: &'a str, lease_id: &'a str) -> ProviderFuture<'a, Lease> {
        Box::pin(async move { self.client(target)?.restart_lease(lease_id).await })
    }
}
