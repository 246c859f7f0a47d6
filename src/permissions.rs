//! Who may do what in a channel: the roles of `docs/protocol.md` §13.1 and
//! one decision per action, used alike by the WebSocket commands, the HTTP
//! routes and the log's entry rules (`store/entry_rules.rs`). A new action
//! or role is added here, in [`Action`] and [`may`]; no command or route
//! compares roles itself.
//!
//! The caller finds out who the actor is (the admin token, or a user and its
//! membership and role, read under the channel's lock where the decision
//! must hold in the channel's commit order) and asks [`may`]; the answer
//! says why not, so each surface renders its own refusal (`forbidden` on
//! the WebSocket, 403 or 404 over HTTP).

/// A member's role in a channel (the wire type: `member` < `moderator` <
/// `owner`).
pub use crate::protocol::Role;

/// Who asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Actor {
    /// The admin token: the product's backend, allowed everything.
    Admin,
    /// A user token, with the user's role in the channel, `None` when it is
    /// not a member (or the channel is unknown: the two are answered alike,
    /// so a user cannot learn which private channels exist).
    User(Option<Role>),
}

impl Actor {
    /// A user who is (`true`) or is not a member, with the role every
    /// member has until roles are stored: [`Role::Member`].
    pub fn user(member: bool) -> Self {
        Actor::User(member.then_some(Role::Member))
    }
}

/// What is asked, one per row of the contract's permission table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Read the channel: its history (`SYNC`, `GET …/messages`), its
    /// members, and its live frames.
    Read,
    /// Store an entry of the log: a message, an edit or delete of one's own
    /// message, a reaction (whose own-ness the entry rules check).
    Send,
    /// Send `TYPING`.
    Type,
    /// Move one's delivered or read watermark (`READ`, `DELIVERED`).
    Receipt,
    /// Delete someone else's message.
    DeleteAnyMessage,
    /// Send a message that mentions all (`mentionAll`, §16).
    MentionAll,
    /// Add or remove a member (a moderator may add only `member`s).
    ManageMembers,
    /// Mute or ban a member whose role is `target`.
    Discipline {
        /// The role of the member to mute or ban.
        target: Role,
    },
    /// Set a member's role.
    SetRole,
    /// Change the channel's name, metadata and settings (`PATCH`).
    UpdateChannel,
    /// Delete the channel.
    DeleteChannel,
    /// Create a channel for others, list every channel, or post as another
    /// user: the product's backend only.
    Administer,
}

/// Why an action is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Denied {
    /// The user is not a member of the channel (or it does not exist).
    #[error("not a member of this channel")]
    NotAMember,
    /// The user's role is below what the action needs.
    #[error("needs the role {needed} in this channel")]
    Role {
        /// The least role that may.
        needed: Role,
    },
    /// Only the admin token may.
    #[error("admin token required")]
    AdminOnly,
}

/// Whether `actor` may do `action`, and if not, why.
///
/// # Errors
/// [`Denied::NotAMember`] for a user who is not a member (of a channel that
/// may not exist), [`Denied::Role`] for a member whose role is too low,
/// [`Denied::AdminOnly`] for what only the admin token does.
pub fn may(actor: Actor, action: Action) -> Result<(), Denied> {
    let needed = match action {
        Action::Administer => Role::Owner,
        Action::Read | Action::Send | Action::Type | Action::Receipt => Role::Member,
        Action::DeleteAnyMessage | Action::ManageMembers | Action::MentionAll => Role::Moderator,
        Action::Discipline { target } if target >= Role::Moderator => Role::Owner,
        Action::Discipline { .. } => Role::Moderator,
        Action::SetRole | Action::UpdateChannel | Action::DeleteChannel => Role::Owner,
    };
    match actor {
        Actor::Admin => Ok(()),
        Actor::User(_) if action == Action::Administer => Err(Denied::AdminOnly),
        Actor::User(None) => Err(Denied::NotAMember),
        Actor::User(Some(role)) if role >= needed => Ok(()),
        Actor::User(Some(_)) => Err(Denied::Role { needed }),
    }
}

/// A change of another member asked by a user (the admin token may make any).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberChange {
    /// Add, with this role (`None`: a new member is a `member`, an existing
    /// one keeps its role).
    Add(Option<Role>),
    /// Remove.
    Remove,
    /// Mute or ban (§17).
    Discipline,
}

/// Whether `actor` may make `change` to a member whose role is `target`
/// (`None`: not a member). Adding a new member as a `member` is managing
/// members; any other role, or a change of an existing member's, is setting
/// a role; removing, muting or banning someone is disciplining its role (a
/// non-member's as a `member`'s).
///
/// # Errors
/// As [`may`].
pub fn may_change_member(actor: Actor, change: MemberChange, target: Option<Role>) -> Result<(), Denied> {
    may(actor, Action::ManageMembers)?;
    match (change, target) {
        (MemberChange::Add(Some(role)), current)
            if role != Role::Member || current.is_some_and(|c| c != Role::Member) =>
        {
            may(actor, Action::SetRole)
        }
        (MemberChange::Add(_), _) | (MemberChange::Remove, None) => Ok(()),
        (MemberChange::Remove, Some(target)) => may(actor, Action::Discipline { target }),
        (MemberChange::Discipline, target) => may(
            actor,
            Action::Discipline {
                target: target.unwrap_or(Role::Member),
            },
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROLES: [Role; 3] = [Role::Member, Role::Moderator, Role::Owner];

    /// The contract's table (§13.1), row by row: the least role allowed.
    #[test]
    fn each_action_needs_the_role_of_the_table() {
        let table = [
            (Action::Read, Role::Member),
            (Action::Send, Role::Member),
            (Action::Type, Role::Member),
            (Action::Receipt, Role::Member),
            (Action::DeleteAnyMessage, Role::Moderator),
            (Action::ManageMembers, Role::Moderator),
            (Action::Discipline { target: Role::Member }, Role::Moderator),
            (
                Action::Discipline {
                    target: Role::Moderator,
                },
                Role::Owner,
            ),
            (Action::Discipline { target: Role::Owner }, Role::Owner),
            (Action::SetRole, Role::Owner),
            (Action::UpdateChannel, Role::Owner),
            (Action::DeleteChannel, Role::Owner),
        ];
        for (action, least) in table {
            for role in ROLES {
                let answer = may(Actor::User(Some(role)), action);
                if role >= least {
                    assert_eq!(answer, Ok(()), "{role} may {action:?}");
                } else {
                    assert_eq!(answer, Err(Denied::Role { needed: least }), "{role} may not {action:?}");
                }
            }
            assert_eq!(may(Actor::User(None), action), Err(Denied::NotAMember), "{action:?}");
            assert_eq!(may(Actor::Admin, action), Ok(()), "admin {action:?}");
        }
    }

    #[test]
    fn member_changes_follow_the_table() {
        let moderator = Actor::User(Some(Role::Moderator));
        let owner = Actor::User(Some(Role::Owner));
        let add = MemberChange::Add;
        assert_eq!(may_change_member(moderator, add(None), None), Ok(()));
        assert_eq!(may_change_member(moderator, add(Some(Role::Member)), None), Ok(()));
        let set_role = Err(Denied::Role { needed: Role::Owner });
        assert_eq!(may_change_member(moderator, add(Some(Role::Moderator)), None), set_role);
        // Demoting an owner "to member" is setting a role.
        assert_eq!(
            may_change_member(moderator, add(Some(Role::Member)), Some(Role::Owner)),
            set_role
        );
        assert_eq!(
            may_change_member(moderator, MemberChange::Remove, Some(Role::Member)),
            Ok(())
        );
        assert_eq!(
            may_change_member(moderator, MemberChange::Remove, Some(Role::Moderator)),
            set_role
        );
        assert_eq!(
            may_change_member(owner, MemberChange::Remove, Some(Role::Owner)),
            Ok(())
        );
        assert_eq!(
            may_change_member(owner, add(Some(Role::Owner)), Some(Role::Member)),
            Ok(())
        );
        // Muting or banning: a moderator disciplines members (and
        // non-members), an owner anyone.
        let discipline = MemberChange::Discipline;
        assert_eq!(may_change_member(moderator, discipline, Some(Role::Member)), Ok(()));
        assert_eq!(may_change_member(moderator, discipline, None), Ok(()));
        assert_eq!(
            may_change_member(moderator, discipline, Some(Role::Moderator)),
            set_role
        );
        assert_eq!(may_change_member(owner, discipline, Some(Role::Owner)), Ok(()));
        let member = Actor::User(Some(Role::Member));
        assert_eq!(
            may_change_member(member, discipline, Some(Role::Member)),
            Err(Denied::Role {
                needed: Role::Moderator
            })
        );
        assert_eq!(
            may_change_member(member, add(None), None),
            Err(Denied::Role {
                needed: Role::Moderator
            })
        );
        assert_eq!(
            may_change_member(Actor::User(None), MemberChange::Remove, None),
            Err(Denied::NotAMember)
        );
    }

    #[test]
    fn only_the_admin_token_administers() {
        assert_eq!(may(Actor::Admin, Action::Administer), Ok(()));
        for role in ROLES.map(Some).into_iter().chain([None]) {
            assert_eq!(may(Actor::User(role), Action::Administer), Err(Denied::AdminOnly));
        }
    }

    #[test]
    fn roles_round_trip_by_name() {
        for role in ROLES {
            assert_eq!(Role::parse(role.as_str()), Some(role));
        }
        assert_eq!(Role::parse("Owner"), None);
        assert_eq!(Role::parse(""), None);
    }

    #[test]
    fn a_user_is_a_member_or_not() {
        assert_eq!(Actor::user(true), Actor::User(Some(Role::Member)));
        assert_eq!(Actor::user(false), Actor::User(None));
    }
}
