//! Where agent tokens live: the OS keychain, or — only when the operator opts in — a file
//! readable by the owner alone. Never the database, logs, IPC or the UI.

use ebb_wire::ipc::TokenStoreKind;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The keychain service name tokens are filed under.
pub const KEYCHAIN_SERVICE: &str = "dev.ebb.console";

#[derive(Debug, thiserror::Error)]
pub enum VaultError {
    #[error(
        "no OS keychain is available ({0}); to keep tokens in a file readable only by you, opt in with `--token-store file` (or EBB_TOKEN_STORE=file)"
    )]
    NoKeychain(String),
    #[error("the token store failed: {0}")]
    Failed(String),
}

/// A place for tokens, by host name.
pub trait TokenVault: Send + Sync + std::fmt::Debug {
    /// Where tokens go, in words for the operator (e.g. "the OS keychain").
    fn describe(&self) -> TokenStoreKind;
    fn get(&self, host: &str) -> Result<Option<String>, VaultError>;
    fn set(&self, host: &str, token: &str) -> Result<(), VaultError>;
    fn delete(&self, host: &str) -> Result<(), VaultError>;
}

/// The OS keychain (macOS Keychain, Windows Credential Manager, Secret Service on Linux).
#[derive(Debug, Default)]
pub struct KeychainVault;

impl KeychainVault {
    fn entry(host: &str) -> Result<keyring::Entry, VaultError> {
        keyring::Entry::new(KEYCHAIN_SERVICE, host).map_err(classify)
    }

    /// Whether a keychain answers here: looks up an entry that is never written (found or
    /// not, the keychain answered), so nothing is stored and nothing asks to unlock.
    pub fn probe() -> Result<(), VaultError> {
        match Self::entry("ebb-keychain-probe")?.get_password() {
            Ok(_) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(error) => Err(classify(error)),
        }
    }
}

fn classify(error: keyring::Error) -> VaultError {
    match error {
        keyring::Error::PlatformFailure(_) | keyring::Error::NoStorageAccess(_) => {
            VaultError::NoKeychain(error.to_string())
        }
        other => VaultError::Failed(other.to_string()),
    }
}

impl TokenVault for KeychainVault {
    fn describe(&self) -> TokenStoreKind {
        TokenStoreKind::Keychain
    }

    fn get(&self, host: &str) -> Result<Option<String>, VaultError> {
        match Self::entry(host)?.get_password() {
            Ok(token) => Ok(Some(token)),
            Err(keyring::Error::NoEntry) => Ok(None),
            Err(error) => Err(classify(error)),
        }
    }

    fn set(&self, host: &str, token: &str) -> Result<(), VaultError> {
        Self::entry(host)?.set_password(token).map_err(classify)
    }

    fn delete(&self, host: &str) -> Result<(), VaultError> {
        match Self::entry(host)?.delete_credential() {
            Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
            Err(error) => Err(classify(error)),
        }
    }
}

/// Tokens in a JSON file with mode 0600, for machines without a keychain. Opt-in only.
#[derive(Debug)]
pub struct FileVault {
    path: PathBuf,
    lock: Mutex<()>,
}

impl FileVault {
    pub fn new(data_dir: &Path) -> Self {
        Self {
            path: data_dir.join("tokens.json"),
            lock: Mutex::new(()),
        }
    }

    fn read(&self) -> Result<BTreeMap<String, String>, VaultError> {
        match std::fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|error| {
                VaultError::Failed(format!("{} is corrupt: {error}", self.path.display()))
            }),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
            Err(error) => Err(VaultError::Failed(format!(
                "cannot read {}: {error}",
                self.path.display()
            ))),
        }
    }

    fn write(&self, tokens: &BTreeMap<String, String>) -> Result<(), VaultError> {
        use std::io::Write;
        let failed = |error: std::io::Error| {
            VaultError::Failed(format!("cannot write {}: {error}", self.path.display()))
        };
        let temp = self.path.with_extension("json.tmp");
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let mut file = options.open(&temp).map_err(failed)?;
        file.write_all(&serde_json::to_vec_pretty(tokens).unwrap_or_default())
            .map_err(failed)?;
        file.sync_all().map_err(failed)?;
        std::fs::rename(&temp, &self.path).map_err(failed)
    }
}

impl TokenVault for FileVault {
    fn describe(&self) -> TokenStoreKind {
        TokenStoreKind::File {
            path: self.path.display().to_string(),
        }
    }

    fn get(&self, host: &str) -> Result<Option<String>, VaultError> {
        let _guard = self
            .lock
            .lock()
            .map_err(|_| VaultError::Failed("lock poisoned".into()))?;
        Ok(self.read()?.get(host).cloned())
    }

    fn set(&self, host: &str, token: &str) -> Result<(), VaultError> {
        let _guard = self
            .lock
            .lock()
            .map_err(|_| VaultError::Failed("lock poisoned".into()))?;
        let mut tokens = self.read()?;
        tokens.insert(host.into(), token.into());
        self.write(&tokens)
    }

    fn delete(&self, host: &str) -> Result<(), VaultError> {
        let _guard = self
            .lock
            .lock()
            .map_err(|_| VaultError::Failed("lock poisoned".into()))?;
        let mut tokens = self.read()?;
        if tokens.remove(host).is_some() {
            self.write(&tokens)?;
        }
        Ok(())
    }
}

/// Tokens in memory: for tests and the demo fleet (which needs none).
#[derive(Debug, Default)]
pub struct MemoryVault {
    tokens: Mutex<BTreeMap<String, String>>,
    /// Makes every call fail, to test that nothing is half-changed.
    pub fail: std::sync::atomic::AtomicBool,
}

impl TokenVault for MemoryVault {
    fn describe(&self) -> TokenStoreKind {
        TokenStoreKind::Memory
    }

    fn get(&self, host: &str) -> Result<Option<String>, VaultError> {
        self.check()?;
        Ok(self
            .tokens
            .lock()
            .map_err(|_| VaultError::Failed("poisoned".into()))?
            .get(host)
            .cloned())
    }

    fn set(&self, host: &str, token: &str) -> Result<(), VaultError> {
        self.check()?;
        self.tokens
            .lock()
            .map_err(|_| VaultError::Failed("poisoned".into()))?
            .insert(host.into(), token.into());
        Ok(())
    }

    fn delete(&self, host: &str) -> Result<(), VaultError> {
        self.check()?;
        self.tokens
            .lock()
            .map_err(|_| VaultError::Failed("poisoned".into()))?
            .remove(host);
        Ok(())
    }
}

impl MemoryVault {
    fn check(&self) -> Result<(), VaultError> {
        if self.fail.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(VaultError::Failed("the test vault is set to fail".into()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_vault_keeps_tokens_private() {
        let dir = std::env::temp_dir().join(format!("ebb-vault-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let vault = FileVault::new(&dir);
        assert_eq!(vault.get("a").unwrap(), None);
        vault.set("a", "secret-a").unwrap();
        vault.set("b", "secret-b").unwrap();
        vault.delete("a").unwrap();
        assert_eq!(vault.get("a").unwrap(), None);
        assert_eq!(vault.get("b").unwrap().as_deref(), Some("secret-b"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.join("tokens.json"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
