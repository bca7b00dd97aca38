//! Canonical entity ids: `<kind>:<normalised surface>` (SPEC §1).

use crate::types::{EntityId, EntityKind};

/// Normalise a surface for its kind: trim, fold inner white space, strip a leading `@` or
/// `#`, lower-case everything but URLs (whose paths are case-sensitive).
pub fn normalise_surface(kind: EntityKind, surface: &str) -> String {
    let s = surface.trim();
    let s = s.strip_prefix('@').or_else(|| s.strip_prefix('#')).unwrap_or(s);
    let folded = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if kind == EntityKind::Url { folded } else { folded.to_lowercase() }
}

/// The canonical id of a surface of a kind; `None` when nothing is left after normalising.
pub fn canonical_id(kind: EntityKind, surface: &str) -> Option<EntityId> {
    let n = normalise_surface(kind, surface);
    (!n.is_empty()).then(|| EntityId(format!("{}:{n}", kind.as_str())))
}

/// `s` with its diacritics removed (canonical decomposition, combining marks dropped):
/// "Tomás" → "Tomas". For matching only: canonical ids keep their accents.
pub fn fold_diacritics(s: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    if s.is_ascii() {
        return s.to_string();
    }
    s.nfd().filter(|c| !unicode_normalization::char::is_combining_mark(*c)).nfc().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalisation_follows_spec() {
        assert_eq!(canonical_id(EntityKind::Person, "  Alice  Smith ").unwrap().0, "person:alice smith");
        assert_eq!(canonical_id(EntityKind::Handle, "@Alice").unwrap().0, "handle:alice");
        assert_eq!(canonical_id(EntityKind::Hashtag, "#Launch-Q2").unwrap().0, "hashtag:launch-q2");
        assert_eq!(
            canonical_id(EntityKind::Url, "https://Example.com/Path").unwrap().0,
            "url:https://Example.com/Path"
        );
        assert!(canonical_id(EntityKind::Person, "  @ ").is_none());
        assert_eq!(canonical_id(EntityKind::Person, "Tomás Reyes").unwrap().0, "person:tomás reyes");
        assert_eq!(fold_diacritics("tomás pastéis ç"), "tomas pasteis c");
    }
}
