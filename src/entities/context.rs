//! The kind of a name found in prose, read from the words around it: a person is what says,
//! asks or owns; an organisation ends in `Labs`, `Inc`, `Logistics`…; a place is where one
//! lands, lives or has an office, or a name headed by `Hotel`, `Street`, `Rua`…; a project
//! is what has a migration, a beta, a launch ("the Atlas migration"). Anything
//! else stays `misc:`. Small closed word lists, no list of names or cities.

use crate::types::EntityKind;

/// Lower-case words that may sit inside a name between capitalised words ("Casa do Rio",
/// "Bank of America", "Ludwig van Beethoven").
pub(super) const CONNECTORS: &[&str] =
    &["of", "do", "da", "das", "dos", "de", "del", "della", "di", "du", "van", "von"];

/// Verbs that, right after a name, say the name is a person's: what people say, ask, own,
/// decide or feel. Deliberately no `is`, `has`, `was` or motion verbs: "Heron is the driver
/// app", "Atlas moves the database".
const PERSON_VERBS: &[&str] = &[
    "said",
    "says",
    "asked",
    "asks",
    "told",
    "tells",
    "owns",
    "owned",
    "leads",
    "wrote",
    "writes",
    "joined",
    "joins",
    "thinks",
    "thought",
    "wants",
    "wanted",
    "agreed",
    "agrees",
    "decided",
    "decides",
    "suggested",
    "suggests",
    "mentioned",
    "mentions",
    "reported",
    "reports",
    "approved",
    "approves",
    "signed",
    "took",
    "covers",
    "covered",
    "replied",
    "replies",
    "emailed",
    "called",
    "met",
    "meets",
    "loves",
    "likes",
    "feels",
    "felt",
    "knows",
    "knew",
    "believes",
    "promised",
    "promises",
    "prefers",
    "explained",
    "explains",
    "answered",
    "admitted",
    "recommended",
    "recommends",
    "complained",
    "laughed",
    "smiled",
    "hired",
    "quit",
];

/// Nouns right after a name that make it a project or product's code name ("the Atlas
/// migration", "Heron beta").
const PROJECT_NOUNS: &[&str] = &[
    "project",
    "app",
    "migration",
    "beta",
    "release",
    "cutover",
    "rollout",
    "kickoff",
    "launch",
    "prototype",
    "runbook",
    "roadmap",
    "initiative",
    "programme",
    "program",
    "codebase",
    "repo",
    "repository",
    "alpha",
];

/// Titles before a person's name.
const HONORIFICS: &[&str] = &["mr", "mrs", "ms", "dr", "prof", "sir", "madam", "aunt", "uncle"];

/// Last words of an organisation's name.
pub(super) const ORG_SUFFIXES: &[&str] = &[
    "labs",
    "lab",
    "inc",
    "ltd",
    "llc",
    "gmbh",
    "corp",
    "corporation",
    "logistics",
    "systems",
    "technologies",
    "group",
    "bank",
    "university",
    "college",
    "institute",
    "foundation",
    "company",
    "airlines",
    "partners",
    "studios",
    "cloud",
    "consulting",
    "agency",
    "industries",
    "holdings",
    "ventures",
];

/// Words that head or end a place's name.
const PLACE_HEADS: &[&str] = &[
    "hotel",
    "street",
    "road",
    "avenue",
    "rua",
    "plaza",
    "square",
    "airport",
    "station",
    "beach",
    "lake",
    "river",
    "museum",
    "cafe",
    "café",
    "restaurant",
    "taberna",
    "casa",
    "bay",
    "island",
    "mountains",
    "valley",
    "city",
    "county",
];

/// Words before `in`/`to`/`from`/`at` + a name that make the name a place ("office in Porto",
/// "landed in Lisbon", "moved to Sweden").
const PLACE_CUES: &[&str] = &[
    "offsite",
    "office",
    "trip",
    "travel",
    "travelled",
    "traveled",
    "flight",
    "flew",
    "landed",
    "moved",
    "move",
    "moving",
    "based",
    "live",
    "lives",
    "lived",
    "living",
    "born",
    "hotel",
    "vacation",
    "holiday",
    "went",
    "going",
    "gone",
    "drove",
    "stay",
    "stayed",
    "staying",
    "headquartered",
    "relocated",
    "arrived",
];

/// Verbs right before a name that make it a place ("visited Lisbon").
const PLACE_VERBS: &[&str] = &["visit", "visited", "visiting", "visits"];

/// What is known around a name: the two words before it in the same clause (lower-cased),
/// the word right after it, and whether the clause ends with it.
pub(super) struct Around<'a> {
    pub before: [Option<String>; 2],
    pub after: Option<&'a str>,
    pub ends_clause: bool,
}

/// True for a lower-cased word that heads or ends names but is a common noun alone
/// ("Hotel", "Labs", "Migration").
pub(super) fn is_head_noun(w: &str) -> bool {
    ORG_SUFFIXES.contains(&w) || PLACE_HEADS.contains(&w) || PROJECT_NOUNS.contains(&w)
}

/// True when `w` (as written) is a verb that marks a person right after a name.
pub(super) fn is_person_verb(w: &str) -> bool {
    PERSON_VERBS.contains(&w)
}

/// The kind the words of a name and its context give it; `Misc` when they say nothing.
pub(super) fn kind_of(name: &[&str], around: &Around<'_>) -> EntityKind {
    let lower: Vec<String> = name.iter().map(|w| w.to_lowercase()).collect();
    let (first, last) = match (lower.first(), lower.last()) {
        (Some(f), Some(l)) => (f.as_str(), l.as_str()),
        _ => return EntityKind::Misc,
    };
    let [b1, b2] = &around.before;
    let b1 = b1.as_deref();
    if name.len() > 1 && ORG_SUFFIXES.contains(&last) {
        return EntityKind::Organization;
    }
    if name.len() > 1 && (PLACE_HEADS.contains(&first) || PLACE_HEADS.contains(&last)) {
        return EntityKind::Location;
    }
    // "Ruth from Bluefin asked": after a preposition the name is not the one who asks.
    let after_prep = b1.is_some_and(|w| crate::text::is_stop_word(w) && !matches!(w, "and" | "but" | "so"));
    // "Winning was amazing": a lone gerund before a verb is the action, not someone acting
    // (LoCoMo: `person:winning` sent "how many games has John mentioned winning?" local).
    let gerund = name.len() == 1 && first.chars().count() > 5 && first.ends_with("ing");
    if (around.after.is_some_and(is_person_verb) && !after_prep && !gerund)
        || b1.is_some_and(|w| HONORIFICS.contains(&w))
    {
        return EntityKind::Person;
    }
    if around.after.is_some_and(|w| PROJECT_NOUNS.contains(&w)) {
        return EntityKind::Product;
    }
    let prep = b1.is_some_and(|w| matches!(w, "in" | "to" | "from" | "at" | "near"));
    let cued = b2.as_deref().is_some_and(|w| PLACE_CUES.contains(&w));
    if (prep && cued) || b1.is_some_and(|w| PLACE_VERBS.contains(&w)) {
        return EntityKind::Location;
    }
    // "… in Lisbon." / "… at Taberna da Rua.": a name closing a clause after `in`/`at` is
    // where something happens.
    if b1.is_some_and(|w| matches!(w, "in" | "at")) && around.ends_clause && !is_acronym(name) {
        return EntityKind::Location;
    }
    EntityKind::Misc
}

/// All capitals ("TLS", "API"): a technology or an abbreviation, never a place.
fn is_acronym(name: &[&str]) -> bool {
    name.iter().all(|w| w.chars().all(|c| !c.is_alphabetic() || c.is_uppercase()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(name: &[&str], before: [&str; 2], after: Option<&str>, ends_clause: bool) -> EntityKind {
        let b = |w: &str| (!w.is_empty()).then(|| w.to_string());
        kind_of(name, &Around { before: [b(before[0]), b(before[1])], after, ends_clause })
    }

    #[test]
    fn context_gives_the_kind() {
        use EntityKind::*;
        let cases = [
            (kind(&["Bob"], ["", ""], Some("owns"), false), Person),
            (kind(&["Winning"], ["", ""], Some("was"), false), Misc),
            (kind(&["Heron"], ["", ""], Some("is"), false), Misc),
            (kind(&["Bluefin"], ["from", "Ruth"], Some("asked"), false), Misc),
            (kind(&["Bob"], ["and", "Ann"], Some("said"), false), Person),
            (kind(&["Atlas"], ["the", ""], Some("migration"), false), Product),
            (kind(&["Bluefin", "Logistics"], ["", ""], Some("pilots"), false), Organization),
            (kind(&["Hotel", "Miradouro"], ["and", ""], None, true), Location),
            (kind(&["Porto"], ["in", "office"], None, true), Location),
            (kind(&["Lisbon"], ["in", "meeting"], None, true), Location),
            (kind(&["Sweden"], ["to", "moved"], Some("last"), false), Location),
            (kind(&["Figma"], ["in", "are"], None, false), Misc),
            (kind(&["Postgres"], ["to", "app"], None, true), Misc),
            (kind(&["TLS"], ["in", "errors"], None, true), Misc),
        ];
        for (i, (got, want)) in cases.into_iter().enumerate() {
            assert_eq!(got, want, "case {i}");
        }
    }
}
