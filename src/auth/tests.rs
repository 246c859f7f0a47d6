//! Unit tests of verifying and minting tokens, and of the admin token's
//! comparison.

use super::*;

fn auth() -> Auth {
    Auth::new(&"k".repeat(32), "admin-token-0123456789", None, None, 0)
}

#[test]
fn minted_tokens_verify() {
    let a = auth();
    let before = now_ms();
    let (token, exp) = a.mint(&UserId::parse("alice").unwrap(), 60).unwrap();
    let user = a.verify(&token).unwrap();
    assert_eq!(user.user_id.as_str(), "alice");
    // The ttl from the current whole second.
    assert!(exp > before + 59_000 && exp <= now_ms() + 60_000, "{exp}");
    assert_eq!(user.expires_at_ms, exp as u64);
}

#[test]
fn other_algorithms_and_keys_are_refused() {
    let a = auth();
    let other = Auth::new(&"x".repeat(32), "admin-token-0123456789", None, None, 0);
    let (token, _) = other.mint(&UserId::parse("alice").unwrap(), 60).unwrap();
    assert!(a.verify(&token).is_err());
    // alg: none, unsigned.
    let header = "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0"; // {"alg":"none","typ":"JWT"}
    let payload = "eyJzdWIiOiJhbGljZSIsImV4cCI6OTk5OTk5OTk5OX0"; // {"sub":"alice","exp":9999999999}
    assert!(a.verify(&format!("{header}.{payload}.")).is_err());
    let hs512 = jsonwebtoken::encode(
        &Header::new(Algorithm::HS512),
        &Claims {
            sub: "alice".into(),
            exp: 9_999_999_999,
            iat: None,
            iss: None,
            aud: None,
        },
        &EncodingKey::from_secret("k".repeat(32).as_bytes()),
    )
    .unwrap();
    assert!(a.verify(&hs512).is_err());
}

fn signed(claims: serde_json::Value) -> String {
    jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &claims,
        &EncodingKey::from_secret("k".repeat(32).as_bytes()),
    )
    .unwrap()
}

#[test]
fn times_with_a_fraction_are_numeric_dates() {
    let a = auth();
    let now = now_ms() as f64 / 1000.0;
    // What PyJWT writes for `exp=time.time() + 60`.
    let user = a
        .verify(&signed(
            serde_json::json!({"sub": "alice", "exp": now + 60.4, "iat": now}),
        ))
        .unwrap();
    assert_eq!(user.user_id.as_str(), "alice");
    assert_eq!(user.expires_at_ms, ((now + 60.4) * 1000.0).floor() as u64);
    // An iat that is not a date is not checked.
    assert!(a
        .verify(&signed(
            serde_json::json!({"sub": "alice", "exp": now + 60.0, "iat": "yesterday"})
        ))
        .is_ok());
    let refused = a
        .verify(&signed(serde_json::json!({"sub": "alice", "exp": -5.5})))
        .map(|_| ())
        .unwrap_err();
    assert_eq!(refused.to_string(), "invalid token: malformed");
    let past = a
        .verify(&signed(serde_json::json!({"sub": "alice", "exp": now - 120.5})))
        .map(|_| ())
        .unwrap_err();
    assert_eq!(past.to_string(), "invalid token: expired");
    // Expired a moment ago, with no leeway: refused, though jsonwebtoken's
    // whole-second check (it rounds the fraction) would let it through.
    for ago in [0.001, 0.4, 0.9] {
        let now = now_ms() as f64 / 1000.0;
        let refused = a
            .verify(&signed(serde_json::json!({"sub": "alice", "exp": now - ago})))
            .map(|_| ())
            .unwrap_err();
        assert_eq!(refused.to_string(), "invalid token: expired", "{ago} s ago");
    }
}

/// An `exp` too large to be a time (`1e300`, past a `u64` of seconds) is
/// refused saying so: it was refused as "a required claim is missing",
/// since jsonwebtoken, unable to read it, takes it for absent.
#[test]
fn an_exp_out_of_range_is_refused_as_such() {
    let a = auth();
    for exp in [serde_json::json!(1e300), serde_json::json!(1.8446744073709552e19)] {
        let refused = a
            .verify(&signed(serde_json::json!({"sub": "alice", "exp": exp})))
            .map(|_| ())
            .unwrap_err();
        assert_eq!(refused.to_string(), "invalid token: exp out of range", "exp {exp}");
    }
    // The largest whole number of seconds is still a time (far ahead).
    assert!(a
        .verify(&signed(serde_json::json!({"sub": "alice", "exp": u64::MAX})))
        .is_ok());
}

#[test]
fn expired_tokens_are_refused() {
    let a = auth();
    let expired = jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &Claims {
            sub: "alice".into(),
            exp: 1_000,
            iat: None,
            iss: None,
            aud: None,
        },
        &EncodingKey::from_secret("k".repeat(32).as_bytes()),
    )
    .unwrap();
    let refused = a.verify(&expired).map(|_| ()).unwrap_err();
    assert!(matches!(refused, AuthError::Invalid(_)));
    assert_eq!(refused.to_string(), "invalid token: expired");
}

#[test]
fn a_malformed_token_is_refused_without_decoder_details() {
    let a = auth();
    // A header that is base64 of JSON missing its "alg": the decoder's
    // own message names the field, line and column.
    for token in ["not-a-jwt", "eyJ0eXAiOiJKV1QifQ.eyJzdWIiOiJhIn0.c2ln", "a.b.c"] {
        let message = a.verify(token).map(|_| ()).unwrap_err().to_string();
        assert_eq!(message, "invalid token: malformed", "{token}");
    }
}

#[test]
fn issuer_and_audience_are_checked_when_configured() {
    let plain = auth();
    let strict = Auth::new(
        &"k".repeat(32),
        "admin-token-0123456789",
        Some("chatd".into()),
        Some("app".into()),
        0,
    );
    let (token, _) = plain.mint(&UserId::parse("alice").unwrap(), 60).unwrap();
    assert!(strict.verify(&token).is_err());
    let (token, _) = strict.mint(&UserId::parse("alice").unwrap(), 60).unwrap();
    assert!(strict.verify(&token).is_ok());
}

fn sign(claims: &serde_json::Value) -> String {
    jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        claims,
        &EncodingKey::from_secret("k".repeat(32).as_bytes()),
    )
    .unwrap()
}

#[test]
fn exp_and_sub_are_required_and_nbf_is_checked() {
    let a = auth();
    let refusal = |claims: serde_json::Value| a.verify(&sign(&claims)).map(|_| ()).unwrap_err().to_string();
    assert_eq!(
        refusal(serde_json::json!({"sub": "alice"})),
        "invalid token: a required claim is missing",
        "no exp"
    );
    assert_eq!(
        refusal(serde_json::json!({"exp": 9_999_999_999u64})),
        "invalid token: a required claim is missing",
        "no sub"
    );
    assert!(
        a.verify(&sign(&serde_json::json!({"sub": "a b", "exp": 9_999_999_999u64})))
            .is_err(),
        "bad sub"
    );
    let future = serde_json::json!({"sub": "alice", "exp": 9_999_999_999u64, "nbf": 9_999_999_000u64});
    assert!(a.verify(&sign(&future)).is_err(), "not valid yet");
    let past = serde_json::json!({"sub": "alice", "exp": 9_999_999_999u64, "nbf": 1_000u64});
    assert!(a.verify(&sign(&past)).is_ok());
}

#[test]
fn audience_may_be_an_array() {
    let a = auth();
    let claims = serde_json::json!({"sub": "alice", "exp": 9_999_999_999u64, "aud": ["x", "y"]});
    let token = jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &claims,
        &EncodingKey::from_secret("k".repeat(32).as_bytes()),
    )
    .unwrap();
    assert!(
        a.verify(&token).is_ok(),
        "no audience configured: any aud shape is fine"
    );
    let strict = Auth::new(&"k".repeat(32), "admin-token-0123456789", None, Some("y".into()), 0);
    assert!(strict.verify(&token).is_ok(), "configured audience found in the array");
}

#[test]
fn admin_token_comparison() {
    let a = auth();
    assert!(a.is_admin_token("admin-token-0123456789"));
    assert!(!a.is_admin_token("admin-token-0123456788"));
    assert!(!a.is_admin_token(""));
}

#[test]
fn a_token_dated_in_the_future_does_not_outlive_its_users_erasure() {
    let a = auth();
    let alice = UserId::parse("alice").unwrap();
    let now = now_ms() / 1000;
    let token = |iat: i64| signed(serde_json::json!({"sub": "alice", "exp": now + 3600, "iat": iat}));
    let (ahead, current) = (token(now + 365 * 86_400), token(now));
    assert!(a.verify(&ahead).is_ok(), "no erasure: the date is not checked");
    a.erased().record(&alice, now_ms());
    assert!(matches!(a.verify(&ahead), Err(AuthError::Erased)), "a year ahead");
    assert!(matches!(a.verify(&current), Err(AuthError::Erased)), "issued before");
    // Issued after the erasure (and not in the future): accepted.
    let b = auth();
    b.erased().record(&alice, (now - 10) * 1000);
    assert!(b.verify(&current).is_ok());
    assert!(matches!(b.verify(&ahead), Err(AuthError::Erased)));
}

/// An HMAC token of another size (HS384, HS512) signed with the shared
/// secret is refused for its algorithm, with or without a `kid`; it once
/// got "unknown key id (kid)", which sent its sender looking for a key.
#[test]
fn an_hmac_token_of_another_algorithm_is_refused_as_such() {
    let a = auth();
    for alg in [Algorithm::HS384, Algorithm::HS512] {
        for kid in [None, Some("k1")] {
            let mut header = Header::new(alg);
            header.kid = kid.map(str::to_owned);
            let token = jsonwebtoken::encode(
                &header,
                &serde_json::json!({"sub": "alice", "exp": 9_999_999_999u64}),
                &EncodingKey::from_secret("k".repeat(32).as_bytes()),
            )
            .unwrap();
            assert_eq!(
                a.verify(&token).map(|_| ()).unwrap_err().to_string(),
                "invalid token: algorithm not accepted",
                "{alg:?} with kid {kid:?}"
            );
        }
    }
}
