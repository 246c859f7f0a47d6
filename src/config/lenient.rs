//! Serde helpers that accept numbers and booleans where text is expected:
//! figment parses `CHATD_JWT_SECRET=1234…` as a number.

use serde::{Deserialize, Deserializer};

#[derive(Deserialize)]
#[serde(untagged)]
enum Scalar {
    S(String),
    I(i64),
    U(u64),
    F(f64),
    B(bool),
}

impl Scalar {
    fn into_string(self) -> String {
        match self {
            Scalar::S(s) => s,
            Scalar::I(n) => n.to_string(),
            Scalar::U(n) => n.to_string(),
            Scalar::F(n) => n.to_string(),
            Scalar::B(b) => b.to_string(),
        }
    }
}

pub fn string<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Scalar::deserialize(d).map(Scalar::into_string)
}

/// A list of text: a sequence, or one text of comma-separated items
/// (how `CHATD_CORS_ALLOWED_ORIGINS` arrives); blank items are dropped.
pub fn list<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum List {
        Many(Vec<String>),
        One(String),
    }
    let items = match List::deserialize(d)? {
        List::Many(items) => items,
        List::One(text) => text.split(',').map(str::to_owned).collect(),
    };
    Ok(items
        .into_iter()
        .map(|item| item.trim().to_owned())
        .filter(|item| !item.is_empty())
        .collect())
}

pub fn opt_string<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(Option::<Scalar>::deserialize(d)?
        .map(Scalar::into_string)
        .filter(|s| !s.is_empty()))
}
