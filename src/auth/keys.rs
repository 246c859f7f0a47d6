//! An identity provider's public keys, by `kid`: PEM files named in
//! `jwt_public_keys` (read once, at start) and a JWKS document on disk
//! (`jwt_jwks_file`), re-read when it changes.
//!
//! The JWKS file is checked on verification, at most once a second: when its
//! modification time or length differs from the version in use, it is read
//! again. A new version that is not a JWKS document (not JSON, no `keys`
//! array) is logged and the keys in use are kept; within a valid document a
//! key chatd cannot use (another `kty`, curve or `alg`, no `kid`, `use` other
//! than `sig`) is skipped with a warning. A `kid` of `jwt_public_keys` wins
//! over the same `kid` in the JWKS file.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};

use crate::config::{PublicKeyAlg, PublicKeyFile};

/// Shortest time between two looks at the JWKS file's metadata.
const RECHECK_EVERY: Duration = Duration::from_secs(1);

/// A key file that cannot be used; chatd does not start with one.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Read {
        /// The key or JWKS file.
        path: PathBuf,
        /// The file system's error.
        #[source]
        source: std::io::Error,
    },
    /// The file is not a key of the configured algorithm, or not a JWKS document.
    #[error("{path}: {message}")]
    Format {
        /// The key or JWKS file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
}

/// One public key and the one algorithm it verifies.
#[derive(Clone)]
pub struct Key {
    /// `RS256` or `ES256`.
    pub alg: Algorithm,
    /// The key itself.
    pub decoding: DecodingKey,
}

type Keys = HashMap<String, Arc<Key>>;

/// Every public key a token may name by `kid`. The default holds none.
#[derive(Default)]
pub struct KeySet {
    files: Keys,
    jwks: Option<JwksFile>,
}

impl std::fmt::Debug for KeySet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeySet")
            .field("kids", &self.files.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// The JWKS file and the version of it in use.
struct JwksFile {
    path: PathBuf,
    state: Mutex<JwksState>,
}

struct JwksState {
    checked_at: Instant,
    /// Modification time and length of the version last read (or tried).
    stamp: Option<(SystemTime, u64)>,
    keys: Arc<Keys>,
}

impl KeySet {
    /// Reads the PEM files of `files` and the JWKS document at `jwks`.
    ///
    /// # Errors
    /// [`KeyError`] for a file that cannot be read, a PEM that is not a public
    /// key of its `alg`, or a JWKS file that is not a JWKS document.
    pub fn load(files: &[PublicKeyFile], jwks: Option<&Path>) -> Result<Self, KeyError> {
        let mut set = Self::default();
        for file in files {
            let pem = std::fs::read(&file.path).map_err(|source| KeyError::Read {
                path: file.path.clone(),
                source,
            })?;
            let (alg, decoded) = match file.alg {
                PublicKeyAlg::RS256 => (Algorithm::RS256, DecodingKey::from_rsa_pem(&pem)),
                PublicKeyAlg::ES256 => (Algorithm::ES256, DecodingKey::from_ec_pem(&pem)),
            };
            let decoding = decoded.map_err(|_| KeyError::Format {
                path: file.path.clone(),
                message: format!("not a PEM public key for {alg:?}"),
            })?;
            set.files.insert(file.kid.clone(), Arc::new(Key { alg, decoding }));
        }
        if let Some(path) = jwks {
            let stamp = stamp(path).map_err(|source| KeyError::Read {
                path: path.to_path_buf(),
                source,
            })?;
            let keys = read_jwks(path)?;
            tracing::info!(path = %path.display(), keys = keys.len(), "JWKS file loaded");
            set.jwks = Some(JwksFile {
                path: path.to_path_buf(),
                state: Mutex::new(JwksState {
                    checked_at: Instant::now(),
                    stamp: Some(stamp),
                    keys: Arc::new(keys),
                }),
            });
        }
        Ok(set)
    }

    /// The key named `kid`: a `jwt_public_keys` entry, else the JWKS file's
    /// (re-read first when it changed and was last checked a second ago or more).
    pub fn get(&self, kid: &str) -> Option<Arc<Key>> {
        if let Some(key) = self.files.get(kid) {
            return Some(key.clone());
        }
        self.jwks.as_ref()?.current().get(kid).cloned()
    }

    /// Whether some public key is named `kid`.
    pub fn contains(&self, kid: &str) -> bool {
        self.get(kid).is_some()
    }
}

impl JwksFile {
    /// The keys in use, after re-reading the file if it is due and changed.
    fn current(&self) -> Arc<Keys> {
        // A poisoned lock only means a panic elsewhere mid-update; the state
        // is still a whole value.
        let mut state = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if state.checked_at.elapsed() >= RECHECK_EVERY {
            state.checked_at = Instant::now();
            match stamp(&self.path) {
                Ok(now) if state.stamp != Some(now) => {
                    state.stamp = Some(now);
                    match read_jwks(&self.path) {
                        Ok(keys) => {
                            tracing::info!(path = %self.path.display(), keys = keys.len(), "JWKS file reloaded");
                            state.keys = Arc::new(keys);
                        }
                        Err(error) => {
                            tracing::warn!(%error, "JWKS file changed but is not valid; keeping the previous keys")
                        }
                    }
                }
                Ok(_) => {}
                Err(error) if state.stamp.is_some() => {
                    state.stamp = None;
                    tracing::warn!(path = %self.path.display(), %error, "JWKS file unreadable; keeping the previous keys");
                }
                Err(_) => {}
            }
        }
        state.keys.clone()
    }
}

/// What tells one version of a file from the next: modification time and length.
fn stamp(path: &Path) -> std::io::Result<(SystemTime, u64)> {
    let meta = std::fs::metadata(path)?;
    Ok((meta.modified()?, meta.len()))
}

/// Reads a JWKS document: `{"keys": [JWK...]}`; keys chatd cannot use are
/// skipped with a warning.
fn read_jwks(path: &Path) -> Result<Keys, KeyError> {
    let format = |message: String| KeyError::Format {
        path: path.to_path_buf(),
        message,
    };
    let text = std::fs::read(path).map_err(|source| KeyError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    #[derive(serde::Deserialize)]
    struct Document {
        keys: Vec<serde_json::Value>,
    }
    let document: Document =
        serde_json::from_slice(&text).map_err(|e| format(format!("not a JWKS document ({{\"keys\": [...]}}): {e}")))?;
    let mut keys = Keys::new();
    for (index, value) in document.keys.into_iter().enumerate() {
        match jwk_key(value) {
            Ok((kid, key)) => {
                keys.insert(kid, Arc::new(key));
            }
            Err(reason) => tracing::warn!(path = %path.display(), index, reason, "JWKS key skipped"),
        }
    }
    Ok(keys)
}

/// One JWK as a key: an RSA key for RS256 or a P-256 key for ES256, with a
/// `kid`, for signatures.
fn jwk_key(value: serde_json::Value) -> Result<(String, Key), &'static str> {
    let jwk: Jwk = serde_json::from_value(value).map_err(|_| "not a JWK chatd reads")?;
    let kid = jwk.common.key_id.clone().filter(|k| !k.is_empty()).ok_or("no kid")?;
    if jwk
        .common
        .public_key_use
        .as_ref()
        .is_some_and(|u| *u != PublicKeyUse::Signature)
    {
        return Err("use is not sig");
    }
    let family = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => Algorithm::RS256,
        AlgorithmParameters::EllipticCurve(ec) if ec.curve == EllipticCurve::P256 => Algorithm::ES256,
        _ => return Err("neither an RSA key nor a P-256 EC key"),
    };
    let alg = match jwk.common.key_algorithm {
        None => family,
        Some(KeyAlgorithm::RS256) if family == Algorithm::RS256 => family,
        Some(KeyAlgorithm::ES256) if family == Algorithm::ES256 => family,
        Some(_) => return Err("alg is not RS256 for an RSA key or ES256 for a P-256 key"),
    };
    let decoding = DecodingKey::from_jwk(&jwk).map_err(|_| "key parameters not usable")?;
    Ok((kid, Key { alg, decoding }))
}
