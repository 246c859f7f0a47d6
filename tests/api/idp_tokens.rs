//! Tokens from an identity provider (`jwt_public_keys`, `jwt_jwks_file`):
//! keys made and tokens signed by a real JOSE library, PyJWT with
//! `cryptography` (installed by `.ci/run`), in a Python subprocess; the
//! server must take the good ones on the WebSocket and a user route and
//! refuse every confused, unknown, unsigned or expired one with 401.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

use chatd::config::{PublicKeyAlg, PublicKeyFile};
use chatd_testkit::{spawn_app_with, Backend, TestApp};

/// Makes keys and tokens with PyJWT; one JSON request on stdin, one answer on stdout.
const JOSE: &str = r#"
import sys, json, base64, hmac, hashlib
import jwt
from jwt.algorithms import RSAAlgorithm, ECAlgorithm
from cryptography.hazmat.primitives.asymmetric import rsa, ec
from cryptography.hazmat.primitives import serialization

def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

req = json.load(sys.stdin)
if req["op"] == "keygen":
    if req["kind"] == "rsa":
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        jwk = RSAAlgorithm.to_jwk(key.public_key(), as_dict=True)
    else:
        key = ec.generate_private_key(ec.SECP256R1())
        jwk = ECAlgorithm.to_jwk(key.public_key(), as_dict=True)
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    print(json.dumps({"private": private, "public": public, "jwk": jwk}))
elif req.get("alg") == "HS256-with-bytes":
    # PyJWT refuses a PEM as an HMAC secret (its own confusion guard), so
    # the attacker's token is assembled by hand: HS256 over the public key's bytes.
    header = {"alg": "HS256", "typ": "JWT"}
    if req.get("kid"):
        header["kid"] = req["kid"]
    signing = b64(json.dumps(header).encode()) + "." + b64(json.dumps(req["claims"]).encode())
    mac = hmac.new(req["key"].encode(), signing.encode(), hashlib.sha256).digest()
    print(signing + "." + b64(mac))
else:
    headers = {"kid": req["kid"]} if req.get("kid") else None
    print(jwt.encode(req["claims"], req.get("key"), algorithm=req["alg"], headers=headers))
"#;

fn python(request: &Value) -> String {
    let mut child = Command::new("python3")
        .args(["-c", JOSE])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(request.to_string().as_bytes()).expect("write request");
    }
    let out = child.wait_with_output().expect("python3 finishes");
    assert!(
        out.status.success(),
        "python3: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8").trim().to_owned()
}

fn have_pyjwt() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import jwt, cryptography"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!(
            "\n\n!!!!!!!! SKIPPED: identity-provider token tests need PyJWT and cryptography \
             (python3 -m pip install pyjwt cryptography); .ci/run installs them !!!!!!!!\n\n"
        );
    }
    ok
}

struct KeyPair {
    private: String,
    public: String,
    jwk: Value,
}

fn keygen(kind: &str) -> KeyPair {
    let answer: Value = serde_json::from_str(&python(&json!({"op": "keygen", "kind": kind}))).expect("json");
    KeyPair {
        private: answer["private"].as_str().expect("private").to_owned(),
        public: answer["public"].as_str().expect("public").to_owned(),
        jwk: answer["jwk"].clone(),
    }
}

fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs_f64()
}

/// A token for `sub` valid for a minute, signed with `alg` and `key`.
fn mint(alg: &str, key: Option<&str>, kid: Option<&str>, sub: &str) -> String {
    mint_claims(alg, key, kid, json!({"sub": sub, "exp": now() + 60.0, "iat": now()}))
}

fn mint_claims(alg: &str, key: Option<&str>, kid: Option<&str>, claims: Value) -> String {
    python(&json!({"op": "mint", "alg": alg, "key": key, "kid": kid, "claims": claims}))
}

/// `keys` as a JWKS document, each JWK with its kid.
fn write_jwks(path: &Path, keys: &[(&str, &Value)]) {
    let keys: Vec<Value> = keys
        .iter()
        .map(|(kid, jwk)| {
            let mut jwk = (*jwk).clone();
            jwk["kid"] = json!(kid);
            jwk
        })
        .collect();
    replace_file(path, &json!({ "keys": keys }).to_string());
}

/// Replaces the file at once (as a deployment tool would: write, rename).
fn replace_file(path: &Path, text: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).expect("write");
    std::fs::rename(&tmp, path).expect("rename");
}

/// The status of the history route (a user route) for `token`, and whether
/// the WebSocket upgrade succeeded (101).
async fn try_token(app: &TestApp, token: &str) -> (u16, bool) {
    let (status, _) = app.history("room", token, "").await;
    let upgraded = match app.connect_raw(token).await {
        Ok(_) => true,
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            assert_eq!(response.status().as_u16(), 401, "a refused upgrade is 401");
            false
        }
        Err(other) => panic!("websocket: {other}"),
    };
    (status, upgraded)
}

async fn accepted(app: &TestApp, token: &str, what: &str) {
    assert_eq!(try_token(app, token).await, (200, true), "{what} must be accepted");
}

async fn refused(app: &TestApp, token: &str, what: &str) {
    assert_eq!(try_token(app, token).await, (401, false), "{what} must be refused");
}

/// Waits past the JWKS file's re-check interval (1 s).
async fn past_recheck() {
    tokio::time::sleep(Duration::from_millis(1300)).await;
}

#[tokio::test]
async fn identity_provider_tokens_verify_by_kid_and_confusion_is_refused() {
    if !have_pyjwt() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let rsa = keygen("rsa");
    let ec = keygen("ec");
    let rsa_jwks = keygen("rsa");
    let ec_jwks = keygen("ec");
    let stranger = keygen("rsa");
    let rsa_pem = dir.path().join("rsa.pem");
    let ec_pem = dir.path().join("ec.pem");
    std::fs::write(&rsa_pem, &rsa.public).expect("write");
    std::fs::write(&ec_pem, &ec.public).expect("write");
    let jwks = dir.path().join("jwks.json");
    write_jwks(&jwks, &[("rsa-jwks", &rsa_jwks.jwk), ("ec-jwks", &ec_jwks.jwk)]);

    let (keys, jwks_path) = (
        vec![
            PublicKeyFile {
                kid: "rsa-pem".into(),
                alg: PublicKeyAlg::RS256,
                path: rsa_pem.clone(),
            },
            PublicKeyFile {
                kid: "ec-pem".into(),
                alg: PublicKeyAlg::ES256,
                path: ec_pem.clone(),
            },
        ],
        jwks.to_string_lossy().into_owned(),
    );
    let app = spawn_app_with(Backend::Sqlite, move |config| {
        config.jwt_public_keys = keys;
        config.jwt_jwks_file = Some(jwks_path);
    })
    .await;
    app.create_channel("room", &["alice"]).await;

    // Good tokens, each key in turn; HS256 with jwt_secret keeps working.
    accepted(
        &app,
        &mint("RS256", Some(&rsa.private), Some("rsa-pem"), "alice"),
        "RS256 from a PEM",
    )
    .await;
    accepted(
        &app,
        &mint("ES256", Some(&ec.private), Some("ec-pem"), "alice"),
        "ES256 from a PEM",
    )
    .await;
    accepted(
        &app,
        &mint("RS256", Some(&rsa_jwks.private), Some("rsa-jwks"), "alice"),
        "RS256 from the JWKS",
    )
    .await;
    accepted(
        &app,
        &mint("ES256", Some(&ec_jwks.private), Some("ec-jwks"), "alice"),
        "ES256 from the JWKS",
    )
    .await;
    accepted(&app, &app.token("alice"), "HS256 with jwt_secret").await;
    // A valid token of a non-member is a user, just not of this channel.
    let bob = mint("RS256", Some(&rsa.private), Some("rsa-pem"), "bob");
    assert_eq!(try_token(&app, &bob).await, (403, true));

    // Refused: unsigned; HS256 keyed with a public key's bytes; a kid naming
    // a key of another algorithm; an unknown or missing kid; a wrong key; expired.
    refused(
        &app,
        &mint("none", None, Some("rsa-pem"), "alice"),
        "alg none with a kid",
    )
    .await;
    refused(&app, &mint("none", None, None, "alice"), "alg none").await;
    for kid in [Some("rsa-pem"), None, Some("rsa-jwks")] {
        let public = if kid == Some("rsa-jwks") {
            &rsa_jwks.public
        } else {
            &rsa.public
        };
        let token = mint("HS256-with-bytes", Some(public), kid, "alice");
        refused(
            &app,
            &token,
            &format!("HS256 keyed with the RSA public key, kid {kid:?}"),
        )
        .await;
    }
    let token = mint("HS256-with-bytes", Some(&ec.public), Some("ec-pem"), "alice");
    refused(&app, &token, "HS256 keyed with the EC public key").await;
    refused(
        &app,
        &mint("ES256", Some(&ec.private), Some("rsa-pem"), "alice"),
        "ES256 naming an RS256 key",
    )
    .await;
    refused(
        &app,
        &mint("RS256", Some(&rsa.private), Some("ec-pem"), "alice"),
        "RS256 naming an ES256 key",
    )
    .await;
    refused(
        &app,
        &mint("PS256", Some(&rsa.private), Some("rsa-pem"), "alice"),
        "PS256 with an RS256 key",
    )
    .await;
    refused(
        &app,
        &mint("RS512", Some(&rsa.private), Some("rsa-pem"), "alice"),
        "RS512 with an RS256 key",
    )
    .await;
    refused(
        &app,
        &mint("RS256", Some(&rsa.private), Some("no-such-kid"), "alice"),
        "an unknown kid",
    )
    .await;
    refused(
        &app,
        &mint("RS256", Some(&rsa.private), None, "alice"),
        "RS256 without a kid",
    )
    .await;
    refused(
        &app,
        &mint("RS256", Some(&stranger.private), Some("rsa-pem"), "alice"),
        "another key's signature",
    )
    .await;
    let expired = json!({"sub": "alice", "exp": now() - 120.0, "iat": now() - 180.0});
    refused(
        &app,
        &mint_claims("RS256", Some(&rsa.private), Some("rsa-pem"), expired),
        "an expired RS256",
    )
    .await;
    let early = json!({"sub": "alice", "exp": now() + 600.0, "nbf": now() + 300.0});
    refused(
        &app,
        &mint_claims("ES256", Some(&ec.private), Some("ec-pem"), early),
        "an ES256 before nbf",
    )
    .await;

    // The JWKS file is re-read when it changes: a key added starts working,
    // a key removed stops, without a restart.
    let added = keygen("rsa");
    let added_token = mint("RS256", Some(&added.private), Some("added"), "alice");
    refused(&app, &added_token, "a kid not yet in the JWKS file").await;
    write_jwks(
        &jwks,
        &[
            ("rsa-jwks", &rsa_jwks.jwk),
            ("ec-jwks", &ec_jwks.jwk),
            ("added", &added.jwk),
        ],
    );
    past_recheck().await;
    accepted(&app, &added_token, "a key added to the JWKS file").await;
    write_jwks(&jwks, &[("added", &added.jwk)]);
    past_recheck().await;
    refused(
        &app,
        &mint("RS256", Some(&rsa_jwks.private), Some("rsa-jwks"), "alice"),
        "a key removed from the JWKS file",
    )
    .await;
    accepted(&app, &added_token, "a key still in the JWKS file").await;
    accepted(
        &app,
        &mint("RS256", Some(&rsa.private), Some("rsa-pem"), "alice"),
        "a PEM key, untouched",
    )
    .await;
    // An invalid new version is logged and the keys in use are kept.
    replace_file(&jwks, "{\"keys\": [ not json");
    past_recheck().await;
    accepted(&app, &added_token, "after an invalid JWKS file, the previous keys").await;
    std::fs::remove_file(&jwks).expect("remove");
    past_recheck().await;
    accepted(&app, &added_token, "after the JWKS file is gone, the previous keys").await;
    app.stop().await;
}

#[tokio::test]
async fn a_key_file_that_is_not_a_key_of_its_alg_stops_the_start() {
    if !have_pyjwt() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let ec = keygen("ec");
    let path = dir.path().join("ec.pem");
    std::fs::write(&path, &ec.public).expect("write");
    let db = chatd_testkit::TestDb::new(Backend::Sqlite).await;
    let mut config = chatd_testkit::test_config(&db);
    config.jwt_public_keys = vec![PublicKeyFile {
        kid: "k".into(),
        alg: PublicKeyAlg::RS256,
        path: path.clone(),
    }];
    let error = chatd::startup::Application::build(config.clone())
        .await
        .err()
        .expect("an EC key named RS256 is refused");
    assert!(error.to_string().contains("ec.pem"), "{error}");
    config.jwt_public_keys.clear();
    let jwks = dir.path().join("jwks.json");
    std::fs::write(&jwks, "not json").expect("write");
    config.jwt_jwks_file = Some(jwks.to_string_lossy().into_owned());
    let error = chatd::startup::Application::build(config)
        .await
        .err()
        .expect("an invalid JWKS file is refused");
    assert!(error.to_string().contains("jwks.json"), "{error}");
}
