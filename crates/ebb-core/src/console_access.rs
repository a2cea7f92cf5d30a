//! The console's access operations, for every front: who this console acts as, setting up
//! and granting Ebb's roles on a shared database, and the audit log's chain read and
//! checked.

use crate::access::AdminError;
use crate::console::Console;
use ebb_wire::access::{AccessRole, AuditEntry, AuditVerdict};

impl Console {
    /// `ebb admin init`: Ebb's roles, grants and row-level security on the shared database
    /// (again: changes nothing). Refused on SQLite, and by the database for a non-admin.
    pub async fn admin_init(&self) -> Result<(), AdminError> {
        crate::access::admin_init(self.registry().db()).await
    }

    /// `ebb admin grant ROLE USER`: `user` becomes a member of `role` and of no other.
    pub async fn grant_role(&self, role: &str, user: &str) -> Result<AccessRole, AdminError> {
        crate::access::grant(self.registry().db(), role, user).await
    }

    /// The audit log, oldest first.
    pub async fn audit_entries(&self) -> Result<Vec<AuditEntry>, sqlx::Error> {
        crate::audit::entries(self.registry().db()).await
    }

    /// The audit log's hash chain checked: how many entries, and where it first breaks.
    pub async fn verify_audit(&self) -> Result<AuditVerdict, sqlx::Error> {
        Ok(crate::audit::check(&self.audit_entries().await?))
    }
}
