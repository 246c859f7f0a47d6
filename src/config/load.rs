//! Loading the layered settings (defaults, the config file, `CHATD_*`, the
//! command line) into a [`Config`], and what can go wrong doing it.

use std::path::{Path, PathBuf};

use figment::providers::{Env, Format, Serialized, Toml};
use figment::Figment;
use serde::Serialize;

use super::settings::{Config, DEFAULT_CONFIG_FILE};

/// Settings that are text even when they look like numbers.
const TEXT_KEYS: &[&str] = &[
    "listen",
    "admin_listen",
    "database_url",
    "database_replica_url",
    "data_dir",
    "jwt_secret",
    "admin_token",
    "jwt_issuer",
    "jwt_audience",
    "jwt_jwks_file",
    "cors_allowed_origins",
    "nats_url",
    "nats_subject_prefix",
    "log",
    "webhook_url",
    "webhook_secret",
    "attachment_types",
    "attachments_s3_bucket",
    "attachments_s3_endpoint",
    "attachments_s3_region",
];

/// Command-line overrides; `None` leaves the value from file and environment.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Overrides {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub listen: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub database_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_dir: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
}

/// A configuration that could not be loaded or is out of range.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A source could not be read or a value has the wrong type; names the
    /// source and the key.
    #[error("configuration: {0}")]
    Load(#[from] Box<figment::Error>),
    /// A value out of range, or a config file that is missing or not a file.
    #[error("configuration: {0}")]
    Invalid(String),
    /// `<data_dir>/secrets.toml` could not be read or written
    /// ([`Config::secrets`]).
    #[error("secrets file {path}: {source}")]
    Secrets {
        /// The secrets file.
        path: PathBuf,
        /// The file system's error.
        #[source]
        source: std::io::Error,
    },
    /// `<data_dir>/secrets.toml` is not valid TOML or holds an empty secret.
    #[error("secrets file {path}: {message}")]
    SecretsFormat {
        /// The secrets file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
}

impl Config {
    /// Loads the layered configuration.
    ///
    /// `file` is the config file to read (it must exist); `None` reads
    /// `CHATD_CONFIG` or else [`DEFAULT_CONFIG_FILE`] when it exists.
    ///
    /// # Errors
    /// [`ConfigError::Load`] naming the source and key of a bad value, or
    /// [`ConfigError::Invalid`] for a value out of range.
    pub fn load(file: Option<&Path>, overrides: &Overrides) -> Result<Self, ConfigError> {
        let mut figment = Figment::from(Serialized::defaults(Config::default()));
        let env_file = std::env::var_os("CHATD_CONFIG").map(PathBuf::from);
        match file.map(Path::to_path_buf).or(env_file) {
            Some(path) => {
                if !path.is_file() {
                    let what = if path.is_dir() {
                        "is a directory, not a file"
                    } else if path.exists() {
                        "is not a regular file"
                    } else {
                        "not found"
                    };
                    return Err(ConfigError::Invalid(format!("config file {} {what}", path.display())));
                }
                figment = figment.merge(Toml::file_exact(path));
            }
            // Only the working directory's file, not a parent's; absent is fine.
            None if Path::new(DEFAULT_CONFIG_FILE).is_file() => {
                figment = figment.merge(Toml::file_exact(DEFAULT_CONFIG_FILE))
            }
            None => {}
        }
        // figment parses env values ("1.50" becomes 1.5); text settings are
        // taken verbatim instead.
        let text_from_env: std::collections::BTreeMap<&str, String> = TEXT_KEYS
            .iter()
            .filter_map(|key| {
                std::env::var(format!("CHATD_{}", key.to_uppercase()))
                    .ok()
                    .map(|v| (*key, v))
            })
            .collect();
        let config: Config = figment
            .merge(
                Env::prefixed("CHATD_")
                    .ignore(&["config"])
                    .filter(|key| !TEXT_KEYS.contains(&key.as_str())),
            )
            .merge(Serialized::defaults(text_from_env))
            .merge(Serialized::defaults(overrides))
            .extract()
            .map_err(Box::new)?;
        config.validate()?;
        Ok(config)
    }
}
