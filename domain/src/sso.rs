//! Single sign-on rules: which role a provider's groups give, and what a member made by a first sign-in is
//! called. Who the person is comes from the provider (issuer and subject); what they may do is decided here.

use crate::people::{MemberName, NAME_MAX, Role};

/// The groups that give each role (`TROVE_OIDC_OWNER_GROUPS`, `..._MEMBER_GROUPS`, `..._VIEWER_GROUPS`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupRoles {
    pub owner: Vec<String>,
    pub member: Vec<String>,
    pub viewer: Vec<String>,
}

impl GroupRoles {
    /// Whether any group is mapped (with none, a first sign-in needs an invitation).
    pub fn is_empty(&self) -> bool {
        self.owner.is_empty() && self.member.is_empty() && self.viewer.is_empty()
    }

    /// The highest role any of `groups` gives, compared exactly (a provider's group names are its own ids).
    ///
    /// ```
    /// use trove_domain::people::Role;
    /// use trove_domain::sso::GroupRoles;
    /// let map = GroupRoles { owner: vec!["admins".into()], member: vec!["family".into()], viewer: vec![] };
    /// assert_eq!(map.role_for(&["family".into(), "admins".into()]), Some(Role::Owner));
    /// assert_eq!(map.role_for(&["Family".into()]), None);
    /// ```
    pub fn role_for(&self, groups: &[String]) -> Option<Role> {
        let has = |mapped: &[String]| groups.iter().any(|g| mapped.iter().any(|m| m == g));
        if has(&self.owner) {
            Some(Role::Owner)
        } else if has(&self.member) {
            Some(Role::Member)
        } else if has(&self.viewer) {
            Some(Role::Viewer)
        } else {
            None
        }
    }
}

/// How an account with no member yet comes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// By the invitation whose link the sign-in started from: its household and role.
    Invitation,
    /// By a mapped group: the single sign-on household, with this role.
    Group(Role),
}

/// How a first sign-in comes in: the invitation it followed (`invitation`, any value) wins over the role its
/// groups map to (`mapped`); with neither, it does not come in.
///
/// ```
/// use trove_domain::people::Role;
/// use trove_domain::sso::{Entry, entry};
/// assert_eq!(entry(Some("code"), Some(Role::Owner)), Some(Entry::Invitation));
/// assert_eq!(entry(None::<&str>, Some(Role::Viewer)), Some(Entry::Group(Role::Viewer)));
/// assert_eq!(entry(None::<&str>, None), None);
/// ```
pub fn entry<T>(invitation: Option<T>, mapped: Option<Role>) -> Option<Entry> {
    match (invitation, mapped) {
        (Some(_), _) => Some(Entry::Invitation),
        (None, Some(role)) => Some(Entry::Group(role)),
        (None, None) => None,
    }
}

/// Whether a member keeps signing in: one a group brought in (`by_group`) only while a mapped group holds them
/// (`mapped`); one an invitation brought in needs no group.
///
/// ```
/// use trove_domain::people::Role;
/// use trove_domain::sso::keeps_access;
/// assert!(keeps_access(true, Some(Role::Member)) && keeps_access(false, None));
/// assert!(!keeps_access(true, None));
/// ```
pub fn keeps_access(by_group: bool, mapped: Option<Role>) -> bool {
    !by_group || mapped.is_some()
}

/// What the provider says of a person, for naming them: each may be missing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Profile<'a> {
    pub username: Option<&'a str>,
    pub name: Option<&'a str>,
    pub email: Option<&'a str>,
}

/// The names to try, in order, for a member a first sign-in makes: the provider's user name, else their full
/// name, else the part of their e-mail before the `@`, else "member"; then the same with " 2", " 3", ... up to
/// `tries` in all (names are unique across the instance). Each is a valid [`MemberName`].
///
/// ```
/// use trove_domain::sso::{Profile, candidate_names};
/// let p = Profile { username: None, name: Some("Ada Lovelace"), email: Some("ada@example.org") };
/// let names: Vec<String> = candidate_names(&p, 3).iter().map(|n| n.to_string()).collect();
/// assert_eq!(names, ["Ada Lovelace", "Ada Lovelace 2", "Ada Lovelace 3"]);
/// ```
pub fn candidate_names(profile: &Profile<'_>, tries: usize) -> Vec<MemberName> {
    let email = profile.email.and_then(|e| e.split('@').next());
    let base = [profile.username, profile.name, email]
        .into_iter()
        .flatten()
        .find_map(|raw| MemberName::new(&clip(raw, NAME_MAX)).ok())
        .map_or_else(|| "member".to_owned(), |n| n.to_string());
    (1..=tries)
        .filter_map(|i| {
            if i == 1 {
                return MemberName::new(&base).ok();
            }
            let suffix = format!(" {i}");
            MemberName::new(&format!("{}{suffix}", clip(&base, NAME_MAX - suffix.len()))).ok()
        })
        .collect()
}

/// `text`'s first `max` characters, without trailing white space.
fn clip(text: &str, max: usize) -> String {
    text.chars().take(max).collect::<String>().trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn groups(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn the_highest_mapped_role_wins_and_unmapped_groups_give_none() {
        let map = GroupRoles {
            owner: groups(&["trove-owners"]),
            member: groups(&["family", "friends"]),
            viewer: groups(&["guests"]),
        };
        assert_eq!(map.role_for(&groups(&["guests", "friends"])), Some(Role::Member));
        assert_eq!(map.role_for(&groups(&["guests"])), Some(Role::Viewer));
        assert_eq!(map.role_for(&groups(&["staff", "trove-owners"])), Some(Role::Owner));
        assert_eq!(map.role_for(&groups(&["staff"])), None);
        assert_eq!(map.role_for(&[]), None);
        assert!(!map.is_empty());
        assert!(GroupRoles::default().is_empty());
        assert_eq!(GroupRoles::default().role_for(&groups(&["trove-owners"])), None);
    }

    #[test]
    fn a_name_comes_from_the_username_then_the_name_then_the_email() {
        let first = |p: Profile<'_>| candidate_names(&p, 1)[0].to_string();
        assert_eq!(first(Profile { username: Some("ada"), name: Some("Ada L"), email: Some("x@y") }), "ada");
        assert_eq!(first(Profile { username: Some("   "), name: Some("Ada L"), email: None }), "Ada L");
        assert_eq!(first(Profile { username: None, name: None, email: Some("ada.l@example.org") }), "ada.l");
        assert_eq!(first(Profile::default()), "member");
    }

    #[test]
    fn long_names_are_clipped_so_every_candidate_is_a_valid_name() {
        let long = "a".repeat(200);
        let names = candidate_names(&Profile { username: Some(&long), ..Profile::default() }, 12);
        assert_eq!(names.len(), 12);
        assert!(names.iter().all(|n| n.as_str().chars().count() <= NAME_MAX));
        assert!(names[11].as_str().ends_with(" 12"));
        let distinct: std::collections::HashSet<_> = names.iter().map(MemberName::key).collect();
        assert_eq!(distinct.len(), 12);
    }
}
