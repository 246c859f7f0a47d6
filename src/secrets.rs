//! The two secrets, `jwt_secret` (the HS256 key of user tokens) and
//! `admin_token` (the admin API's bearer token): a configured one is used as
//! it is; a missing one is read from `<data_dir>/secrets.toml`, or generated
//! on first start and saved there (mode 0600, in a data directory of mode
//! 0700).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::config::{Config, ConfigError};
use crate::private_files::write_private;

/// The secrets in force once generated ones are filled in.
#[derive(Clone)]
pub struct Secrets {
    /// HS256 key bytes.
    pub jwt_secret: String,
    /// Admin bearer token.
    pub admin_token: String,
    /// The secrets file, when any secret came from it.
    pub file: Option<PathBuf>,
    /// Whether this read generated `jwt_secret` (none was configured or in
    /// the file): tokens signed with it are refused by a server that runs
    /// with another data directory, which `chatd token` warns about.
    pub jwt_secret_generated: bool,
}

/// Shortest `jwt_secret` that is not warned about, bytes: RFC 7518 §3.2 asks
/// for an HS256 key at least as long as the hash output (256 bits).
pub const JWT_SECRET_RECOMMENDED_BYTES: usize = 32;

/// Shortest `admin_token` that is not warned about, bytes (128 bits).
pub const ADMIN_TOKEN_RECOMMENDED_BYTES: usize = 16;

impl Secrets {
    /// What is weak about these secrets, one sentence each (never the
    /// secrets themselves): a `jwt_secret` shorter than
    /// [`JWT_SECRET_RECOMMENDED_BYTES`] or an `admin_token` shorter than
    /// [`ADMIN_TOKEN_RECOMMENDED_BYTES`]. They are still used as they are (the
    /// wire contract says a configured secret is used as it is); `chatd serve`
    /// logs each as a warning and `chatd token` prints it on stderr.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        if self.jwt_secret.len() < JWT_SECRET_RECOMMENDED_BYTES {
            warnings.push(format!(
                "jwt_secret is {} bytes; RFC 7518 §3.2 asks for at least {JWT_SECRET_RECOMMENDED_BYTES} for HS256, \
                 and a short one can be guessed offline from any token",
                self.jwt_secret.len()
            ));
        }
        if self.admin_token.len() < ADMIN_TOKEN_RECOMMENDED_BYTES {
            warnings.push(format!(
                "admin_token is {} bytes; use at least {ADMIN_TOKEN_RECOMMENDED_BYTES} random bytes",
                self.admin_token.len()
            ));
        }
        warnings
    }
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Secrets")
            .field("file", &self.file)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct SecretsFile {
    #[serde(skip_serializing_if = "Option::is_none")]
    jwt_secret: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    admin_token: Option<String>,
}

/// Name of the generated secrets file inside the data directory.
pub const SECRETS_FILE: &str = "secrets.toml";

impl Config {
    /// Returns the configured secrets, reading `<data_dir>/secrets.toml` for
    /// missing ones and generating (and saving, mode 0600) those still missing.
    /// A configured secret is used as it is and never written to the file.
    ///
    /// # Errors
    /// [`ConfigError::Secrets`] when the file cannot be read or written,
    /// [`ConfigError::SecretsFormat`] when it is not valid TOML.
    pub fn secrets(&self) -> Result<Secrets, ConfigError> {
        if let (Some(jwt_secret), Some(admin_token)) = (&self.jwt_secret, &self.admin_token) {
            return Ok(Secrets {
                jwt_secret: jwt_secret.clone(),
                admin_token: admin_token.clone(),
                file: None,
                jwt_secret_generated: false,
            });
        }
        let path = self.data_dir.join(SECRETS_FILE);
        let io = |source| ConfigError::Secrets {
            path: path.clone(),
            source,
        };
        let mut stored = match std::fs::read_to_string(&path) {
            Ok(text) => toml::from_str::<SecretsFile>(&text).map_err(|e| ConfigError::SecretsFormat {
                path: path.clone(),
                message: e.message().to_owned(),
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => SecretsFile::default(),
            Err(e) => return Err(io(e)),
        };
        let mut changed = false;
        let jwt_secret_generated = self.jwt_secret.is_none() && stored.jwt_secret.is_none();
        if jwt_secret_generated {
            stored.jwt_secret = Some(random_secret());
            changed = true;
        }
        if self.admin_token.is_none() && stored.admin_token.is_none() {
            stored.admin_token = Some(random_secret());
            changed = true;
        }
        if changed {
            write_private(&path, &toml::to_string(&stored).unwrap_or_default()).map_err(io)?;
        }
        let pick =
            |configured: &Option<String>, stored: Option<String>| configured.clone().or(stored).unwrap_or_default();
        let secrets = Secrets {
            jwt_secret: pick(&self.jwt_secret, stored.jwt_secret),
            admin_token: pick(&self.admin_token, stored.admin_token),
            file: Some(path.clone()),
            jwt_secret_generated,
        };
        // An empty line in a hand-edited file is a mistake, not a key (an
        // empty configured value counts as unset instead).
        if secrets.jwt_secret.is_empty() || secrets.admin_token.is_empty() {
            return Err(ConfigError::SecretsFormat {
                path,
                message: "jwt_secret and admin_token must not be empty (delete the line to have one generated)".into(),
            });
        }
        Ok(secrets)
    }
}

/// 32 random bytes as 64 hex characters.
fn random_secret() -> String {
    use rand::RngCore;
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_secrets_are_private_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        let config = Config {
            data_dir: dir.path().to_path_buf(),
            ..Config::default()
        };
        let first = config.secrets().unwrap();
        assert_eq!(first.jwt_secret.len(), 64);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let made = Config {
                data_dir: dir.path().join("new"),
                ..Config::default()
            };
            made.secrets().unwrap();
            let mode = std::fs::metadata(dir.path().join("new")).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700, "a data_dir chatd creates is private");
        }
        assert_ne!(first.jwt_secret, first.admin_token);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join(SECRETS_FILE))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let second = config.secrets().unwrap();
        assert_eq!(first.jwt_secret, second.jwt_secret);
        assert_eq!(first.admin_token, second.admin_token);
    }

    #[test]
    fn configured_secrets_are_not_written() {
        let dir = tempfile::tempdir().unwrap();
        let config = Config {
            data_dir: dir.path().to_path_buf(),
            jwt_secret: Some("s".repeat(32)),
            ..Config::default()
        };
        let secrets = config.secrets().unwrap();
        assert_eq!(secrets.jwt_secret, "s".repeat(32));
        let text = std::fs::read_to_string(dir.path().join(SECRETS_FILE)).unwrap();
        assert!(!text.contains("jwt_secret"), "configured secret written: {text}");
        assert!(text.contains("admin_token"));
    }

    #[test]
    fn short_secrets_are_used_with_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        let config = Config {
            jwt_secret: Some("short".into()),
            admin_token: Some("adm".into()),
            data_dir: dir.path().to_path_buf(),
            ..Config::default()
        };
        assert!(config.validate().is_ok());
        let secrets = config.secrets().unwrap();
        assert_eq!(
            (secrets.jwt_secret.as_str(), secrets.admin_token.as_str()),
            ("short", "adm")
        );
        let warnings = secrets.warnings();
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].starts_with("jwt_secret is 5 bytes"), "{warnings:?}");
        assert!(warnings[1].starts_with("admin_token is 3 bytes"), "{warnings:?}");
        let strong = Secrets {
            jwt_secret: "j".repeat(JWT_SECRET_RECOMMENDED_BYTES),
            admin_token: "a".repeat(ADMIN_TOKEN_RECOMMENDED_BYTES),
            file: None,
            jwt_secret_generated: false,
        };
        assert!(strong.warnings().is_empty());
    }
}
