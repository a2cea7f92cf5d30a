//! The active price catalog: `catalog.toml` in the data directory, else the demo catalog.
//! Shared by the desktop app and the CLI; the prices themselves are `ebb_cost`'s.

use ebb_cost::{Catalog, InvalidCatalog, Problem, Validated, parse_catalog};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The file the active catalog is kept in, inside the data directory.
pub const CATALOG_FILE: &str = "catalog.toml";

#[derive(Debug, thiserror::Error)]
pub enum CatalogStoreError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{what} is not a usable price catalog: {invalid}")]
    Invalid {
        what: String,
        invalid: InvalidCatalog,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
}

/// Where the prices in use came from.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum CatalogSource {
    /// No catalog imported: the embedded demo catalog.
    Demo,
    /// The catalog imported into the data directory.
    DataDir { path: PathBuf },
    /// A file given with `--catalog`.
    File { path: PathBuf },
}

/// The catalog in use, with its warnings and where it came from.
#[derive(Debug, Clone)]
pub struct ActiveCatalog {
    pub catalog: Catalog,
    pub warnings: Vec<Problem>,
    pub source: CatalogSource,
    /// The TOML text, for export.
    pub text: String,
}

impl ActiveCatalog {
    /// The prices in use: the data directory's catalog, or the demo one when none was
    /// imported or it cannot be read (pools are still shown and enforced).
    pub fn prices(data_dir: &Path) -> Catalog {
        ActiveCatalog::load(data_dir, None)
            .map(|active| active.catalog)
            .unwrap_or_else(|_| Catalog::demo())
    }

    /// `file` if given, else the data directory's catalog, else the demo one.
    pub fn load(data_dir: &Path, file: Option<&Path>) -> Result<ActiveCatalog, CatalogStoreError> {
        if let Some(file) = file {
            let text = read(file)?;
            let validated = validate(&text, &file.display().to_string())?;
            return Ok(ActiveCatalog::from(
                validated,
                text,
                CatalogSource::File {
                    path: file.to_path_buf(),
                },
            ));
        }
        let path = data_dir.join(CATALOG_FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                let validated = validate(
                    &text,
                    &format!(
                        "the active catalog {} (import a valid one to replace it)",
                        path.display()
                    ),
                )?;
                Ok(ActiveCatalog::from(
                    validated,
                    text,
                    CatalogSource::DataDir { path },
                ))
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                let text = ebb_cost::DEMO_CATALOG.to_string();
                let validated = validate(&text, "the demo catalog")?;
                Ok(ActiveCatalog::from(validated, text, CatalogSource::Demo))
            }
            Err(source) => Err(CatalogStoreError::Read {
                path: path.display().to_string(),
                source,
            }),
        }
    }

    fn from(validated: Validated, text: String, source: CatalogSource) -> ActiveCatalog {
        ActiveCatalog {
            catalog: validated.catalog,
            warnings: validated.warnings,
            source,
            text,
        }
    }

    /// One line saying where the prices come from.
    pub fn source_line(&self) -> String {
        match &self.source {
            CatalogSource::Demo => {
                "Prices: the demo catalog (no catalog imported; `ebb catalog import FILE` sets one)"
                    .to_string()
            }
            CatalogSource::DataDir { path } => {
                format!("Prices: the imported catalog {}", path.display())
            }
            CatalogSource::File { path } => format!("Prices: {}", path.display()),
        }
    }
}

fn read(file: &Path) -> Result<String, CatalogStoreError> {
    std::fs::read_to_string(file).map_err(|source| CatalogStoreError::Read {
        path: file.display().to_string(),
        source,
    })
}

fn validate(text: &str, what: &str) -> Result<Validated, CatalogStoreError> {
    parse_catalog(text).map_err(|invalid| CatalogStoreError::Invalid {
        what: what.to_string(),
        invalid,
    })
}

/// Validates `text` and, only if it is valid, makes it the active catalog: written to a
/// temporary file in the data directory, then renamed over `catalog.toml`, so a crash
/// leaves the old catalog or the new one, never half of one. `what` names the text in errors.
pub fn import_text(
    data_dir: &Path,
    text: &str,
    what: &str,
) -> Result<(Validated, PathBuf), CatalogStoreError> {
    let validated = validate(text, what)?;
    let write_error = |path: &Path| {
        let path = path.display().to_string();
        move |source| CatalogStoreError::Write { path, source }
    };
    std::fs::create_dir_all(data_dir).map_err(write_error(data_dir))?;
    let target = data_dir.join(CATALOG_FILE);
    let temporary = data_dir.join(format!(".{CATALOG_FILE}.{}.tmp", std::process::id()));
    let written = (|| {
        use std::io::Write as _;
        let mut out = std::fs::File::create(&temporary)?;
        out.write_all(text.as_bytes())?;
        out.sync_all()?;
        std::fs::rename(&temporary, &target)
    })();
    if let Err(error) = written {
        let _ = std::fs::remove_file(&temporary);
        return Err(write_error(&target)(error));
    }
    Ok((validated, target))
}
