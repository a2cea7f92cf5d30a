//! TLS for the agent: either a self-signed certificate made on first start and kept in the
//! state directory, or the operator's own (CA-signed) chain and key. The leaf's SHA-256
//! fingerprint is what a console pins.

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
    #[error("{path} holds no usable PEM private key: {reason}")]
    BadKey { path: PathBuf, reason: String },
    #[error(
        "the private key in {key_path} does not match the certificate in {cert_path} (the first certificate of the file must be the one the key signs for)"
    )]
    KeyMismatch {
        cert_path: PathBuf,
        key_path: PathBuf,
    },
    #[error("cannot serve the certificate in {path}: {reason}")]
    Unusable { path: PathBuf, reason: String },
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

/// The operator's certificate chain and key, checked against each other and ready to serve.
#[derive(Debug)]
pub struct ProvidedTls {
    /// SHA-256 of the leaf certificate (the file's first), as [`fingerprint`] writes it.
    pub fingerprint: String,
    /// How many certificates the chain holds, the leaf included.
    pub chain_len: usize,
    /// What the server presents: exactly the chain and key that were checked.
    pub server_config: Arc<rustls::ServerConfig>,
}

/// Reads a PEM certificate chain (leaf first, then any intermediates) and its PEM private key
/// (PKCS#8, PKCS#1 or SEC1), and checks that the key belongs to the leaf. Nothing is made or
/// written: an operator who gives files gets those served or a start-up error naming the file.
pub fn load_provided(cert_path: &Path, key_path: &Path) -> Result<ProvidedTls, TlsError> {
    let read = |path: &Path| {
        std::fs::read(path).map_err(|source| TlsError::Io {
            action: "read",
            path: path.to_path_buf(),
            source,
        })
    };
    let bad_cert = |reason: String| TlsError::BadPem {
        path: cert_path.to_path_buf(),
        reason,
    };
    let bad_key = |reason: String| TlsError::BadKey {
        path: key_path.to_path_buf(),
        reason,
    };
    let cert_pem = read(cert_path)?;
    let key_pem = read(key_path)?;
    let chain = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| bad_cert(error.to_string()))?;
    let Some(leaf) = chain.first() else {
        return Err(bad_cert(
            "no `-----BEGIN CERTIFICATE-----` block found".into(),
        ));
    };
    let fingerprint = fingerprint(leaf);
    let key = PrivateKeyDer::from_pem_slice(&key_pem).map_err(|error| {
        bad_key(match error {
            rustls::pki_types::pem::Error::NoItemsFound => {
                "no `-----BEGIN PRIVATE KEY-----` (or RSA/EC PRIVATE KEY) block found".into()
            }
            other => other.to_string(),
        })
    })?;
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let signing_key = provider
        .key_provider
        .load_private_key(key)
        .map_err(|error| bad_key(error.to_string()))?;
    let chain_len = chain.len();
    let certified = rustls::sign::CertifiedKey::new(chain, signing_key);
    match certified.keys_match() {
        Ok(()) | Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::Unknown)) => {}
        Err(rustls::Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch)) => {
            return Err(TlsError::KeyMismatch {
                cert_path: cert_path.to_path_buf(),
                key_path: key_path.to_path_buf(),
            });
        }
        Err(error) => {
            return Err(bad_cert(format!(
                "the first certificate is not a valid X.509 certificate: {error}"
            )));
        }
    }
    let mut server_config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|error| TlsError::Unusable {
            path: cert_path.to_path_buf(),
            reason: error.to_string(),
        })?
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(rustls::sign::SingleCertAndKey::from(certified)));
    // As axum-server sets it for the self-signed certificate.
    server_config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(ProvidedTls {
        fingerprint,
        chain_len,
        server_config: Arc::new(server_config),
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

    /// A CA and a `localhost` leaf it signed: (CA PEM, leaf, leaf key PEM).
    fn ca_and_leaf() -> (String, rcgen::Certificate, String) {
        let mut ca_params = rcgen::CertificateParams::new(Vec::new()).unwrap();
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let ca = rcgen::CertifiedIssuer::self_signed(ca_params, ca_key).unwrap();
        let leaf_key = rcgen::KeyPair::generate().unwrap();
        let leaf = rcgen::CertificateParams::new(vec!["localhost".to_string()])
            .unwrap()
            .signed_by(&leaf_key, &ca)
            .unwrap();
        (ca.pem(), leaf, leaf_key.serialize_pem())
    }

    #[test]
    fn a_provided_chain_is_served_with_its_leaf_fingerprint() {
        let dir = ebb_testkit::TempDir::new("tls-provided");
        let (ca_pem, leaf, key_pem) = ca_and_leaf();
        std::fs::write(dir.join("chain.pem"), leaf.pem() + &ca_pem).unwrap();
        std::fs::write(dir.join("key.pem"), &key_pem).unwrap();
        let provided = load_provided(&dir.join("chain.pem"), &dir.join("key.pem")).unwrap();
        assert_eq!(provided.fingerprint, fingerprint(leaf.der()));
        assert_eq!(provided.chain_len, 2);
        assert!(
            std::fs::read_dir(dir.path()).unwrap().count() == 2,
            "nothing is made beside the given files"
        );
    }

    #[test]
    fn a_bad_provided_file_is_named_with_its_problem() {
        let dir = ebb_testkit::TempDir::new("tls-provided-bad");
        let (ca_pem, leaf, key_pem) = ca_and_leaf();
        let (_, _, other_key_pem) = ca_and_leaf();
        let chain = dir.join("chain.pem");
        std::fs::write(&chain, leaf.pem() + &ca_pem).unwrap();
        std::fs::write(dir.join("key.pem"), &key_pem).unwrap();
        std::fs::write(dir.join("other-key.pem"), &other_key_pem).unwrap();
        std::fs::write(dir.join("garbage.pem"), "not a certificate\n").unwrap();
        std::fs::write(
            dir.join("broken.pem"),
            "-----BEGIN CERTIFICATE-----\nMIIB@@@\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        let path = |name: &str| dir.join(name).display().to_string();
        let cases = [
            (
                "chain.pem",
                "missing-key.pem",
                format!("cannot read {}: ", path("missing-key.pem")),
            ),
            (
                "missing.pem",
                "key.pem",
                format!("cannot read {}: ", path("missing.pem")),
            ),
            (
                "chain.pem",
                "other-key.pem",
                format!(
                    "the private key in {} does not match the certificate in {}",
                    path("other-key.pem"),
                    path("chain.pem")
                ),
            ),
            (
                "garbage.pem",
                "key.pem",
                format!(
                    "{} holds no PEM certificate: no `-----BEGIN CERTIFICATE-----` block",
                    path("garbage.pem")
                ),
            ),
            (
                "broken.pem",
                "key.pem",
                format!("{} holds no PEM certificate: ", path("broken.pem")),
            ),
            (
                "chain.pem",
                "chain.pem",
                format!(
                    "{} holds no usable PEM private key: no `-----BEGIN PRIVATE KEY-----`",
                    path("chain.pem")
                ),
            ),
        ];
        for (cert, key, expected) in cases {
            let error = load_provided(&dir.join(cert), &dir.join(key))
                .unwrap_err()
                .to_string();
            assert!(error.starts_with(&expected), "{cert} {key}: {error}");
        }
    }
}
