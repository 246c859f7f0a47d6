//! What a channel is and what a member may do in it (version 1.2, §13.1):
//! [`ChannelKind`], [`Visibility`] and [`Role`].
//!
//! Each is written on the wire by its lower-case name. Read from the wire, a
//! name this version does not know (one a newer server added) is read as the
//! type's default, which is also the least it allows: `group`, `private`,
//! `member`. A client built today then keeps decoding a newer server's
//! `HELLO` and `MEMBER` frames instead of failing on them, and never shows
//! more than it should (no moderator controls for an unknown role). The
//! server never reads these through serde: it parses what a client sends with
//! `parse`, which refuses an unknown name.

use serde::de::{Deserializer, Visitor};
use serde::{Deserialize, Serialize};

/// A channel's kind (version 1.2, §13.1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChannelKind {
    /// A channel of any number of members, made by the backend or a user.
    #[default]
    Group,
    /// The one channel between two users (`PUT /v1/me/direct/{userId}`).
    Direct,
}

impl ChannelKind {
    /// The kind's name on the wire and in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            ChannelKind::Group => "group",
            ChannelKind::Direct => "direct",
        }
    }

    /// The kind named `text`, or `None`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "group" => Some(ChannelKind::Group),
            "direct" => Some(ChannelKind::Direct),
            _ => None,
        }
    }
}

/// Who may find and join a channel (version 1.2, §13.1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Visibility {
    /// Only its members see it; members are added.
    #[default]
    Private,
    /// Listed in the directory; any user may join.
    Public,
}

impl Visibility {
    /// The visibility's name on the wire and in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            Visibility::Private => "private",
            Visibility::Public => "public",
        }
    }

    /// The visibility named `text`, or `None`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "private" => Some(Visibility::Private),
            "public" => Some(Visibility::Public),
            _ => None,
        }
    }
}

/// A member's role in a channel, from least to most allowed (`Ord` follows
/// it; version 1.2, §13.1). What each may do is the server's
/// `permissions` module.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Sends, edits and deletes its own entries, reacts, types, leaves.
    #[default]
    Member,
    /// Also deletes anyone's message, adds and removes members, mutes and
    /// bans members (not owners or other moderators).
    Moderator,
    /// Also sets roles, changes and deletes the channel, mutes and bans
    /// moderators.
    Owner,
}

impl Role {
    /// The role's name on the wire and in the database (`"member"`,
    /// `"moderator"`, `"owner"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Member => "member",
            Role::Moderator => "moderator",
            Role::Owner => "owner",
        }
    }

    /// The role named `text`, or `None` for any other text.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "member" => Some(Role::Member),
            "moderator" => Some(Role::Moderator),
            "owner" => Some(Role::Owner),
            _ => None,
        }
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Reads a name with `parse`, and an unknown name as `T::default()`.
fn lenient<'de, D: Deserializer<'de>, T: Default>(
    deserializer: D,
    parse: fn(&str) -> Option<T>,
) -> Result<T, D::Error> {
    struct Name<T>(fn(&str) -> Option<T>);
    impl<T: Default> Visitor<'_> for Name<T> {
        type Value = T;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a name")
        }
        fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<T, E> {
            Ok((self.0)(text).unwrap_or_default())
        }
    }
    deserializer.deserialize_str(Name(parse))
}

macro_rules! lenient_deserialize {
    ($($kind:ty),*) => {$(
        impl<'de> Deserialize<'de> for $kind {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                lenient(deserializer, <$kind>::parse)
            }
        }
    )*};
}
lenient_deserialize!(ChannelKind, Visibility, Role);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_names_read_as_themselves() {
        for role in [Role::Member, Role::Moderator, Role::Owner] {
            let text = serde_json::to_string(&role).unwrap();
            assert_eq!(serde_json::from_str::<Role>(&text).unwrap(), role);
        }
        assert_eq!(
            serde_json::from_str::<ChannelKind>("\"direct\"").unwrap(),
            ChannelKind::Direct
        );
        assert_eq!(
            serde_json::from_str::<Visibility>("\"public\"").unwrap(),
            Visibility::Public
        );
    }

    #[test]
    fn a_name_from_a_newer_server_reads_as_the_least_allowed() {
        assert_eq!(serde_json::from_str::<Role>("\"admin\"").unwrap(), Role::Member);
        assert_eq!(
            serde_json::from_str::<ChannelKind>("\"thread\"").unwrap(),
            ChannelKind::Group
        );
        assert_eq!(
            serde_json::from_str::<Visibility>("\"unlisted\"").unwrap(),
            Visibility::Private
        );
    }

    #[test]
    fn a_value_that_is_not_a_name_is_still_refused() {
        assert!(serde_json::from_str::<Role>("3").is_err());
        assert!(serde_json::from_str::<Visibility>("null").is_err());
    }
}
