//! TLS for the agent: a self-signed certificate made on first start and kept in the state
//! directory; its SHA-256 fingerprint is what a console pins.

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot make a certificate: {0}")]
    Generate(#[from] rcgen::Error),
    #[error("{path} holds no PEM certificate: {reason}")]
    BadPem { path: PathBuf, reason: String },
}

/// The certificate and key the agent serves, with the certificate's fingerprint.
#[derive(Debug, Clone)]
pub struct TlsFiles {
    pub cert_path: PathBuf,
    pub key_path: PathBuf,
    /// SHA-256 of the certificate (DER), as colon-separated uppercase hex.
    pub fingerprint: String,
    /// Whether this start made the certificate.
    pub created: bool,
}

/// Uses `dir/cert.pem` and `dir/key.pem`, making a self-signed pair for `names` when absent.
pub fn load_or_create(dir: &Path, names: &[String]) -> Result<TlsFiles, TlsError> {
    let cert_path = dir.join("cert.pem");
    let key_path = dir.join("key.pem");
    let io = |action, path: &Path| {
        let path = path.to_path_buf();
        move |source| TlsError::Io {
            action,
            path,
            source,
        }
    };
    let created = !cert_path.exists();
    if created {
        std::fs::create_dir_all(dir).map_err(io("create", dir))?;
        let made = rcgen::generate_simple_self_signed(names.to_vec())?;
        write_private(&key_path, made.signing_key.serialize_pem().as_bytes())
            .map_err(io("write", &key_path))?;
        std::fs::write(&cert_path, made.cert.pem()).map_err(io("write", &cert_path))?;
    }
    let pem = std::fs::read(&cert_path).map_err(io("read", &cert_path))?;
    let der = CertificateDer::from_pem_slice(&pem).map_err(|error| TlsError::BadPem {
        path: cert_path.clone(),
        reason: error.to_string(),
    })?;
    Ok(TlsFiles {
        cert_path,
        key_path,
        fingerprint: fingerprint(&der),
        created,
    })
}

/// SHA-256 of a DER certificate as `AB:CD:...`.
pub fn fingerprint(der: &[u8]) -> String {
    Sha256::digest(der)
        .iter()
        .map(|byte| format!("{byte:02X}"))
        .collect::<Vec<_>>()
        .join(":")
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)?.write_all(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_once_then_reused_with_the_same_fingerprint() {
        let dir = std::env::temp_dir().join(format!("ebb-tls-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let first = load_or_create(&dir, &["localhost".into()]).unwrap();
        let second = load_or_create(&dir, &["localhost".into()]).unwrap();
        assert!(first.created && !second.created);
        assert_eq!(first.fingerprint, second.fingerprint);
        assert_eq!(first.fingerprint.len(), 32 * 3 - 1);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&first.key_path)
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
