//! Authentication: user JWTs (RFC 7519) and the admin bearer token.
//!
//! Users present `Authorization: Bearer <jwt>` or, for browsers that cannot
//! set headers on a WebSocket, `?access_token=<jwt>`; the header wins when both
//! are present. A token is HS256 with `jwt_secret`, or RS256/ES256 from an
//! identity provider, verified with the public key its `kid` names
//! ([`KeySet`]: `jwt_public_keys`, `jwt_jwks_file`). The algorithm is
//! decided by the key, never by the token alone: `alg: none` and every other
//! algorithm are refused, an HS256 token is only ever checked with
//! `jwt_secret` (so one signed with a public key's bytes fails), and a `kid`
//! must name a key of the token's `alg`. `exp` and `sub` are required, `nbf`
//! is checked when present, `iss` and `aud` when configured, with a leeway of
//! at most 60 s, whatever the algorithm. A token for an erased user issued
//! before its erasure (§19, by `iat`) is refused ([`ErasedUsers`]).

use axum::http::{header, HeaderMap};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use serde::{Deserialize, Deserializer, Serialize};
use subtle::ConstantTimeEq;

use crate::ids::{now_ms, UserId};

mod erased;
mod keys;
pub use erased::ErasedUsers;
pub use keys::{KeyError, KeySet};

/// Longest lifetime of a minted token, seconds (ten years); defined with the
/// settings, which bound `token_ttl_secs` by it.
pub use crate::config::MAX_TOKEN_TTL_SECS;

/// Claims of a chatd user token, as [`Auth::mint`] writes them (verification
/// reads its own, [`Checked`]).
#[derive(Debug, Clone, Serialize)]
pub struct Claims {
    /// The user id.
    pub sub: String,
    /// Expiry, seconds since the Unix epoch.
    pub exp: u64,
    /// Issued at, seconds since the Unix epoch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iat: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iss: Option<String>,
    /// A string or an array of strings (RFC 7519 §4.1.3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aud: Option<serde_json::Value>,
}

/// The claims [`Auth::verify`] reads, `exp` to the millisecond. Other claims
/// (`iat` among them) are not read here: jsonwebtoken checks `nbf`, `iss`
/// and `aud`.
#[derive(Deserialize)]
struct Checked {
    sub: String,
    /// Expiry, ms since the Unix epoch ([`numeric_date_ms`]).
    #[serde(deserialize_with = "numeric_date_ms")]
    exp: u64,
    /// Issued at, as given: read only for an erased user ([`ErasedUsers`]),
    /// where one that is not a NumericDate counts as issued before.
    #[serde(default)]
    iat: Option<serde_json::Value>,
}

/// A NumericDate (RFC 7519 §2): seconds since the Unix epoch, "which may be
/// non-integer" (PyJWT writes `time.time() + ttl` as it is), here in
/// milliseconds, rounded down. Negative or non-numeric values are refused
/// (the token is `malformed`); a number past what a `u64` of seconds holds
/// (`1e300`) is refused as [`EXP_OUT_OF_RANGE`], which names it, rather than
/// left to jsonwebtoken, which cannot read it and calls `exp` missing.
fn numeric_date_ms<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    let number = serde_json::Number::deserialize(deserializer)?;
    // jsonwebtoken reads a float as seconds only below u64::MAX (as f64).
    if number.as_u64().is_none() && number.as_f64().is_some_and(|f| f >= u64::MAX as f64) {
        return Err(serde::de::Error::custom(EXP_OUT_OF_RANGE));
    }
    millis(&number).ok_or_else(|| serde::de::Error::custom("not a NumericDate (seconds since the epoch, >= 0)"))
}

/// The decoder's message, and the refusal's words, for an `exp` too large
/// to be a time ([`numeric_date_ms`]).
const EXP_OUT_OF_RANGE: &str = "exp out of range";

fn millis(number: &serde_json::Number) -> Option<u64> {
    if let Some(whole) = number.as_u64() {
        return Some(whole.saturating_mul(1000));
    }
    // `as` saturates at u64::MAX; NaN and infinities cannot come from JSON.
    number
        .as_f64()
        .filter(|f| *f >= 0.0)
        .map(|f| (f * 1000.0).floor() as u64)
}

/// Why a token was refused. Never includes the token.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("missing bearer token")]
    Missing,
    /// Refused by the JWT checks; the message says which in a few stable
    /// words ([`refusal`]), never the decoder's internals.
    #[error("invalid token: {}", refusal(.0))]
    Invalid(jsonwebtoken::errors::ErrorKind),
    #[error("token subject is not a valid user id")]
    BadSubject,
    /// An RS256/ES256 token without a `kid`, or whose `kid` names no key.
    #[error("invalid token: unknown key id (kid)")]
    UnknownKey,
    #[error("could not sign token")]
    Sign(#[source] jsonwebtoken::errors::Error),
    /// The user was erased (§19) after this token was issued (by `iat`).
    #[error("invalid token: issued before the user was erased")]
    Erased,
}

/// The reason a client is told for a refused JWT (RFC 7519 claim names):
/// expiry and `nbf` apart, since a client acts on them (refresh the token,
/// check its clock); a parse or decode failure only as `malformed`, without
/// the decoder's message.
fn refusal(kind: &jsonwebtoken::errors::ErrorKind) -> &'static str {
    use jsonwebtoken::errors::ErrorKind as K;
    match kind {
        K::ExpiredSignature => "expired",
        K::ImmatureSignature => "not yet valid (nbf)",
        K::InvalidSignature => "bad signature",
        K::InvalidAlgorithm | K::InvalidAlgorithmName => "algorithm not accepted",
        K::InvalidIssuer => "issuer not accepted",
        K::InvalidAudience => "audience not accepted",
        K::MissingRequiredClaim(_) => "a required claim is missing",
        K::Json(e) if e.to_string().starts_with(EXP_OUT_OF_RANGE) => EXP_OUT_OF_RANGE,
        // Our claims type needs `sub` and `exp`: without one, decoding the
        // payload fails before the validation would name it.
        K::Json(e)
            if ["missing field `sub`", "missing field `exp`"]
                .iter()
                .any(|m| e.to_string().starts_with(m)) =>
        {
            "a required claim is missing"
        }
        _ => "malformed",
    }
}

/// A verified user.
#[derive(Debug, Clone)]
pub struct AuthUser {
    pub user_id: UserId,
    /// Token expiry (`exp`), milliseconds since the Unix epoch (a fractional
    /// `exp` keeps its milliseconds).
    pub expires_at_ms: u64,
    /// Token issue time (`iat`), ms since the Unix epoch; `None` when the
    /// token has no usable `iat` (which an erasure treats as earlier, §19).
    pub issued_at_ms: Option<u64>,
}

/// Keys and rules for both kinds of credentials.
#[derive(Clone)]
pub struct Auth {
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
    /// The identity provider's public keys; empty unless configured.
    keys: std::sync::Arc<KeySet>,
    admin_token: Vec<u8>,
    issuer: Option<String>,
    audience: Option<String>,
    /// Erased users' watermarks (§19), shared with `crate::erasure`.
    erased: std::sync::Arc<ErasedUsers>,
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Auth").finish_non_exhaustive()
    }
}

impl Auth {
    /// Builds the verifier. `jwt_secret`'s UTF-8 bytes are the HS256 key.
    pub fn new(
        jwt_secret: &str,
        admin_token: &str,
        issuer: Option<String>,
        audience: Option<String>,
        leeway_secs: u64,
    ) -> Self {
        let mut validation = Validation::new(Algorithm::HS256);
        // jsonwebtoken checks iss/aud only when present unless they are required.
        let mut required = vec!["exp", "sub"];
        required.extend(issuer.as_ref().map(|_| "iss"));
        required.extend(audience.as_ref().map(|_| "aud"));
        validation.set_required_spec_claims(&required);
        validation.leeway = leeway_secs.min(60);
        validation.validate_nbf = true;
        match &issuer {
            Some(iss) => validation.set_issuer(&[iss]),
            None => validation.iss = None,
        }
        match &audience {
            Some(aud) => validation.set_audience(&[aud]),
            None => validation.validate_aud = false,
        }
        Self {
            encoding: EncodingKey::from_secret(jwt_secret.as_bytes()),
            decoding: DecodingKey::from_secret(jwt_secret.as_bytes()),
            validation,
            keys: std::sync::Arc::new(KeySet::default()),
            admin_token: admin_token.as_bytes().to_vec(),
            issuer,
            audience,
            erased: std::sync::Arc::default(),
        }
    }

    /// The erased users' watermarks this verifier refuses tokens by.
    pub fn erased(&self) -> &std::sync::Arc<ErasedUsers> {
        &self.erased
    }

    /// The same verifier, also accepting RS256/ES256 tokens whose `kid`
    /// names one of `keys`.
    pub fn with_keys(mut self, keys: KeySet) -> Self {
        self.keys = std::sync::Arc::new(keys);
        self
    }

    /// The verifier for a configuration and its resolved secrets, with the
    /// identity provider's keys of `jwt_public_keys` and `jwt_jwks_file`.
    ///
    /// # Errors
    /// [`KeyError`] naming the file that cannot be read or holds no usable key.
    pub fn from_config(config: &crate::config::Config, secrets: &crate::secrets::Secrets) -> Result<Self, KeyError> {
        let keys = KeySet::load(
            &config.jwt_public_keys,
            config.jwt_jwks_file.as_deref().map(std::path::Path::new),
        )?;
        Ok(Self::new(
            &secrets.jwt_secret,
            &secrets.admin_token,
            config.jwt_issuer.clone(),
            config.jwt_audience.clone(),
            config.jwt_leeway_secs,
        )
        .with_keys(keys))
    }

    /// Verifies a user token.
    ///
    /// # Errors
    /// [`AuthError::Invalid`] (bad signature, algorithm, expiry, `nbf`, `iss`,
    /// `aud`, shape), [`AuthError::BadSubject`], or [`AuthError::Erased`]
    /// for a token issued before its user's erasure.
    pub fn verify(&self, token: &str) -> Result<AuthUser, AuthError> {
        let header = jsonwebtoken::decode_header(token).map_err(|e| AuthError::Invalid(e.into_kind()))?;
        let data = match header.alg {
            // Only ever the shared secret: an HS256 token "signed" with a
            // public key's bytes fails here as any wrong key does. A `kid`
            // naming a public key means the token claims that key, whose
            // algorithm is not HS256: refused as such.
            Algorithm::HS256 => {
                if header.kid.as_deref().is_some_and(|kid| self.keys.contains(kid)) {
                    return Err(AuthError::Invalid(jsonwebtoken::errors::ErrorKind::InvalidAlgorithm));
                }
                jsonwebtoken::decode::<Checked>(token, &self.decoding, &self.validation)
            }
            // Only the identity provider's algorithms name a key; any
            // other (HS384, HS512, PS256, …) is refused as an algorithm,
            // whatever its `kid`.
            alg @ (Algorithm::RS256 | Algorithm::ES256) => {
                let kid = header.kid.as_deref().ok_or(AuthError::UnknownKey)?;
                let key = self.keys.get(kid).ok_or(AuthError::UnknownKey)?;
                if key.alg != alg {
                    return Err(AuthError::Invalid(jsonwebtoken::errors::ErrorKind::InvalidAlgorithm));
                }
                let mut validation = self.validation.clone();
                validation.algorithms = vec![key.alg];
                jsonwebtoken::decode::<Checked>(token, &key.decoding, &validation)
            }
            _ => return Err(AuthError::Invalid(jsonwebtoken::errors::ErrorKind::InvalidAlgorithm)),
        }
        .map_err(|e| AuthError::Invalid(e.into_kind()))?;
        // jsonwebtoken compares whole seconds (and rounds a fraction), which
        // accepts a token up to a second after its `exp`; RFC 7519 §4.1.4:
        // the token must not be accepted "on or after" it. Checked again to
        // the millisecond, so a fractional `exp` is not stretched by rounding.
        let now = u64::try_from(now_ms()).unwrap_or(0);
        let leeway_ms = self.validation.leeway.saturating_mul(1000);
        if data.claims.exp.saturating_add(leeway_ms) <= now {
            return Err(AuthError::Invalid(jsonwebtoken::errors::ErrorKind::ExpiredSignature));
        }
        let user_id = UserId::parse(&data.claims.sub).map_err(|_| AuthError::BadSubject)?;
        // An `iat` past now (and the leeway) is not a time the token was
        // issued at: it counts as no usable `iat`, so it cannot outlive an
        // erasure (a token dated a year ahead did).
        let issued_at_ms = data
            .claims
            .iat
            .as_ref()
            .and_then(serde_json::Value::as_number)
            .and_then(millis)
            .filter(|&iat| iat <= now.saturating_add(leeway_ms));
        if self.erased.refuses(&user_id, issued_at_ms) {
            return Err(AuthError::Erased);
        }
        Ok(AuthUser {
            user_id,
            expires_at_ms: data.claims.exp,
            issued_at_ms,
        })
    }

    /// Signs a token for `user_id` valid for `ttl_secs`. Returns the token and
    /// its expiry in ms since the Unix epoch.
    ///
    /// # Errors
    /// [`AuthError::Sign`] (not expected with an HMAC key).
    pub fn mint(&self, user_id: &UserId, ttl_secs: u64) -> Result<(String, i64), AuthError> {
        // Whole seconds, `exp - iat` = `ttl_secs` exactly; `iat` is never in
        // the future (PyJWT refuses such a token as not yet valid).
        let now = u64::try_from(now_ms() / 1000).unwrap_or(0);
        let exp = now.saturating_add(ttl_secs);
        let claims = Claims {
            sub: user_id.as_str().to_owned(),
            exp,
            iat: Some(now),
            iss: self.issuer.clone(),
            aud: self.audience.clone().map(serde_json::Value::String),
        };
        let token =
            jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding).map_err(AuthError::Sign)?;
        Ok((token, i64::try_from(exp.saturating_mul(1000)).unwrap_or(i64::MAX)))
    }

    /// Whether `token` is the admin token, compared in constant time
    /// (for tokens of the right length).
    pub fn is_admin_token(&self, token: &str) -> bool {
        bool::from(token.as_bytes().ct_eq(&self.admin_token))
    }
}

/// The bearer token of the `Authorization` header, if any.
pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then_some(token.trim())
}

#[cfg(test)]
mod tests;
