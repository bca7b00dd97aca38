//! What an entity id becomes on disk: the file stem ("slug") of its canonical path, checked
//! against its kind, and the id as shown in an error (escaped, shortened).

use crate::error::{Error, Result};
use crate::types::{EntityId, EntityKind};

/// Longest slug kept from an id before the hash suffix, in bytes (all ASCII by then).
const SLUG_MAX: usize = 120;
/// Hex digits of `blake3(id)` appended to a slug that is not the id's tail verbatim.
const HASH_HEX: usize = 8;
/// Device names Windows reserves whatever the extension; a slug whose stem is one gets a hash.
const WINDOWS_RESERVED: [&str; 4] = ["con", "prn", "aux", "nul"];

/// The kind and file stem of `id` (see [`Registry::path_for`](super::Registry::path_for)).
pub(super) fn slug_for(id: &EntityId) -> Result<(EntityKind, String)> {
    let full = id.as_str();
    let Some((kind, tail)) = full.split_once(':') else {
        return Err(Error::invalid("id", format!("{} has no `<kind>:` prefix", quote(full))));
    };
    let Some(kind) = EntityKind::parse(kind) else {
        return Err(Error::invalid("id", format!("{} has an unknown entity kind", quote(full))));
    };
    let mut slug = String::with_capacity(SLUG_MAX + 2 + HASH_HEX);
    for c in tail.chars() {
        let c = c.to_ascii_lowercase();
        let c = if matches!(c, 'a'..='z' | '0'..='9' | '.' | '_' | '-') { c } else { '_' };
        // Leading dots and underscores are trimmed, runs of `_` collapsed, as we go.
        if (slug.is_empty() && matches!(c, '.' | '_')) || (c == '_' && slug.ends_with('_')) {
            continue;
        }
        slug.push(c);
        if slug.len() > SLUG_MAX {
            // The rest cannot survive the cap; the hash below still covers the whole id.
            break;
        }
    }
    slug.truncate(SLUG_MAX);
    if slug.is_empty() {
        return Err(Error::invalid("id", format!("{} leaves nothing to name a file after", quote(full))));
    }
    // A verbatim slug never ends like a hashed one, so a hostile id cannot spell out the file
    // of another (`person:alice-<hash of person:Alice>`).
    if slug != tail || looks_hashed(&slug) || is_windows_reserved(&slug) {
        slug.push('-');
        slug.push_str(&blake3::hash(full.as_bytes()).to_hex()[..HASH_HEX]);
    }
    Ok((kind, slug))
}

/// True when `slug` ends with `-` and [`HASH_HEX`] lower-case hex digits.
fn looks_hashed(slug: &str) -> bool {
    let b = slug.as_bytes();
    b.len() > HASH_HEX
        && b[b.len() - HASH_HEX - 1] == b'-'
        && b[b.len() - HASH_HEX..].iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
}

/// True when the part of `slug` before its first dot is a Windows device name (`con`,
/// `com1`, …), which Windows refuses as a file name whatever the extension.
fn is_windows_reserved(slug: &str) -> bool {
    let stem = slug.split('.').next().unwrap_or(slug);
    WINDOWS_RESERVED.contains(&stem)
        || ((stem.starts_with("com") || stem.starts_with("lpt"))
            && stem.len() == 4
            && stem.as_bytes()[3].is_ascii_digit())
}

/// The part of an id after `<kind>:` (the whole id when it has no colon).
pub(super) fn id_tail(id: &EntityId) -> &str {
    id.as_str().split_once(':').map_or(id.as_str(), |(_, tail)| tail)
}

/// `kind` must be the id's own kind: the id, not the record, decides the folder.
pub(super) fn check_kind(id: &EntityId, kind: EntityKind) -> Result<()> {
    let own = id.as_str().split_once(':').and_then(|(k, _)| EntityKind::parse(k));
    if own == Some(kind) {
        Ok(())
    } else {
        Err(Error::invalid("kind", format!("`{kind}` is not the kind of {}", quote(id.as_str()))))
    }
}

/// A hostile id (10 kB, control characters) shown in an error: escaped and shortened.
pub(super) fn quote(s: &str) -> String {
    const MAX_CHARS: usize = 80;
    let mut short: String = s.chars().take(MAX_CHARS).collect();
    if short.len() < s.len() {
        short.push('…');
    }
    format!("{short:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slug(id: &str) -> Result<String> {
        slug_for(&EntityId::from(id)).map(|(_, s)| s)
    }

    fn hash8(id: &str) -> String {
        blake3::hash(id.as_bytes()).to_hex()[..HASH_HEX].to_string()
    }

    #[test]
    fn registry_slug_keeps_clean_tails_verbatim() {
        assert_eq!(slug("person:alice").unwrap(), "alice");
        assert_eq!(
            slug("email:alice@example.com").unwrap(),
            format!("alice_example.com-{}", hash8("email:alice@example.com"))
        );
        assert_eq!(slug("hashtag:launch-q2").unwrap(), "launch-q2");
        assert_eq!(slug("artifact:roadmap.md").unwrap(), "roadmap.md");
    }

    #[test]
    fn registry_slug_marks_every_change_with_a_hash() {
        assert_eq!(slug("person:Alice").unwrap(), format!("alice-{}", hash8("person:Alice")));
        assert_eq!(slug("person:a  b").unwrap(), format!("a_b-{}", hash8("person:a  b")));
        assert_eq!(slug("person:a__b").unwrap(), format!("a_b-{}", hash8("person:a__b")));
        assert_eq!(slug("person:zoë").unwrap(), format!("zo_-{}", hash8("person:zoë")));
        assert_eq!(slug("person:..hidden").unwrap(), format!("hidden-{}", hash8("person:..hidden")));
        // A verbatim tail that looks hashed is hashed again, so it cannot name another's file.
        let forged = format!("person:alice-{}", hash8("person:Alice"));
        assert_ne!(slug(&forged).unwrap(), slug("person:Alice").unwrap());
        assert!(slug("person:con").unwrap().starts_with("con-"));
        assert!(slug("person:com1.txt").unwrap().starts_with("com1.txt-"));
        assert_eq!(slug("person:console").unwrap(), "console");
    }

    #[test]
    fn registry_slug_caps_long_ids_and_refuses_empty_or_unknown() {
        let long = format!("person:{}", "a".repeat(10_000));
        let s = slug(&long).unwrap();
        assert_eq!(s.len(), SLUG_MAX + 1 + HASH_HEX);
        assert_ne!(s, slug(&format!("{long}b")).unwrap(), "ids past the cap still differ");
        let climb = format!("person:{}etc/passwd", "../".repeat(3_400));
        assert_eq!(slug(&climb).unwrap(), format!("etc_passwd-{}", hash8(&climb)));
        for bad in ["person:", "person:...", "person:_", "person:中文", "nokind", "bogus:alice", "Person:alice", ""] {
            assert!(matches!(slug(bad), Err(Error::InvalidArgument { .. })), "{bad:?} should be refused");
        }
    }
}
