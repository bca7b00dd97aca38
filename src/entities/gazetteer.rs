//! The gazetteer: surfaces of known entities (and registry aliases) → canonical ids, matched
//! against word n-grams of a text. Keys are lower-cased with diacritics folded ("tomas" finds
//! `person:tomás reyes`); a person's first name is a key too ("Maya" finds Maya Okafor).

use crate::types::{EntityId, EntityKind};
use std::collections::{BTreeSet, HashMap};

/// Longest surface, in words, the gazetteer matches.
const MAX_WORDS: usize = 5;

/// The entities one surface names.
pub type Named = BTreeSet<(EntityKind, EntityId)>;

/// One gazetteer match: first word, number of words, the entities named.
pub type Match<'a> = (usize, usize, &'a Named);

/// Known surfaces. Keys are lower-cased, white-space-folded word sequences.
#[derive(Debug, Clone, Default)]
pub struct Gazetteer {
    map: HashMap<String, BTreeSet<(EntityKind, EntityId)>>,
    /// Bumped by every change: lets a writer publish a copy to readers only when needed.
    revision: u64,
}

impl Gazetteer {
    /// An empty gazetteer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of surfaces known (the tests').
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// A counter that changes whenever the gazetteer does.
    #[cfg(test)]
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// Learn that `surface` names `id`. Only word-like surfaces of name-like kinds are kept
    /// (e-mails, URLs and the like are found by rules, not by the gazetteer).
    pub fn insert(&mut self, kind: EntityKind, surface: &str, id: &EntityId) {
        for key in keys(kind, surface) {
            self.add_key(key, kind, id);
        }
    }

    /// Map `key` to `id`; the revision moves only when that is new.
    fn add_key(&mut self, key: String, kind: EntityKind, id: &EntityId) {
        if self.map.entry(key).or_default().insert((kind, id.clone())) {
            self.revision += 1;
        }
    }

    /// Undo [`Gazetteer::insert`] of `surface` for `id`: each key it maps no longer names
    /// `id`, unless `keep` maps that key to `id` as well (a registry name of the entity); a
    /// key left naming nothing goes. The revision moves only when something went.
    pub fn remove(&mut self, kind: EntityKind, surface: &str, id: &EntityId, keep: &Gazetteer) {
        let entry = (kind, id.clone());
        for key in keys(kind, surface) {
            if keep.map.get(&key).is_some_and(|ids| ids.contains(&entry)) {
                continue;
            }
            let Some(ids) = self.map.get_mut(&key) else { continue };
            if ids.remove(&entry) {
                self.revision += 1;
                if ids.is_empty() {
                    self.map.remove(&key);
                }
            }
        }
    }

    /// Every key with the entities it names, in key order: what two gazetteers are compared by
    /// (the revision counts changes, it is no part of the content).
    #[cfg(test)]
    pub(crate) fn entries(&self) -> std::collections::BTreeMap<&str, &Named> {
        self.map.iter().map(|(k, v)| (k.as_str(), v)).collect()
    }

    /// The entities named by exactly this surface (case-insensitive; the tests').
    #[cfg(test)]
    pub fn get(&self, surface: &str) -> impl Iterator<Item = &(EntityKind, EntityId)> {
        self.map.get(&key_of(surface)).into_iter().flatten()
    }

    /// Greedy longest-match over `words` (already split, possessives stripped): returns
    /// `(start, len, matches)` for every match, left to right, non-overlapping. `accept`
    /// decides whether a word may start/continue a match (e.g. only capitalised words).
    pub fn scan<'a>(&'a self, words: &[&str], accept: impl Fn(usize) -> bool) -> Vec<Match<'a>> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < words.len() {
            let mut found = None;
            if accept(i) {
                let max = MAX_WORDS.min(words.len() - i);
                for n in (1..=max).rev() {
                    if !(i..i + n).all(&accept) {
                        continue;
                    }
                    let key = key_of(&words[i..i + n].join(" "));
                    if let Some(ids) = self.map.get(&key) {
                        found = Some((i, n, ids));
                        break;
                    }
                }
            }
            match found {
                Some(m) => {
                    i += m.1;
                    out.push(m);
                }
                None => i += 1,
            }
        }
        out
    }
}

/// The keys [`Gazetteer::insert`] maps `surface` of `kind` to: the surface's own, a person's
/// first name, an organisation's name without its suffix; none for a kind found by rules or a
/// surface that is no name (empty, one letter, more than [`MAX_WORDS`] words).
fn keys(kind: EntityKind, surface: &str) -> Vec<String> {
    if matches!(kind, EntityKind::Email | EntityKind::Url | EntityKind::Quantity | EntityKind::Datetime) {
        return Vec::new();
    }
    let key = key_of(surface);
    if key.is_empty() || key.split(' ').count() > MAX_WORDS || key.len() < 2 {
        return Vec::new();
    }
    let mut out = Vec::with_capacity(2);
    if kind == EntityKind::Person {
        // A first name alone names the person ("Thanks Lena"): people are called by it
        // far more often than by their full name. Stop words and month names are not
        // first names anyone is called by in a question ("Will", "May").
        let mut parts = key.split(' ');
        if let (Some(first), Some(_)) = (parts.next(), parts.next())
            && first.chars().count() >= 2
            && first.chars().all(char::is_alphabetic)
            && !super::words::is_not_name(first)
        {
            out.push(first.to_string());
        }
    }
    if kind == EntityKind::Organization {
        // "Bluefin" names Bluefin Logistics: an organisation is called by its name
        // without the legal or trade suffix.
        if let Some((head, last)) = key.rsplit_once(' ')
            && super::context::ORG_SUFFIXES.contains(&last)
            && head.len() >= 3
        {
            out.push(head.to_string());
        }
    }
    out.push(key);
    out
}

/// Lower-case, fold white space and diacritics: what a person types without accents must
/// find the name written with them.
fn key_of(s: &str) -> String {
    s.split_whitespace().map(|w| super::canonical::fold_diacritics(&w.to_lowercase())).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_match_wins() {
        let mut g = Gazetteer::new();
        g.insert(EntityKind::Person, "Alice", &EntityId::from("person:alice"));
        g.insert(EntityKind::Organization, "Alice Corp", &EntityId::from("organization:alice corp"));
        let words = ["met", "Alice", "Corp", "and", "alice"];
        let m = g.scan(&words, |_| true);
        assert_eq!(m.len(), 2);
        assert_eq!((m[0].0, m[0].1), (1, 2));
        assert_eq!((m[1].0, m[1].1), (4, 1));
    }

    #[test]
    fn remove_undoes_insert_but_keeps_what_another_name_gives() {
        let maya = EntityId::from("person:maya okafor");
        let lena = EntityId::from("person:lena marsh");
        let bluefin = EntityId::from("organization:bluefin logistics");
        let mut before = Gazetteer::new();
        before.insert(EntityKind::Person, "Lena Marsh", &lena);
        before.insert(EntityKind::Organization, "Bluefin Logistics", &bluefin);
        // A registry alias of Maya's, kept when her row's names go.
        let mut keep = Gazetteer::new();
        keep.insert(EntityKind::Person, "Maya", &maya);
        let mut g = before.clone();
        g.insert(EntityKind::Person, "Maya", &maya);
        g.insert(EntityKind::Person, "Maya Okafor", &maya);
        // Another entity on a shared key: only Maya's entry goes from it.
        g.insert(EntityKind::Person, "Maya Lin", &EntityId::from("person:maya lin"));
        before.insert(EntityKind::Person, "Maya Lin", &EntityId::from("person:maya lin"));
        let rev = g.revision();
        g.remove(EntityKind::Person, "Maya Okafor", &maya, &keep);
        assert!(g.revision() > rev);
        let mut expected = before.clone();
        expected.insert(EntityKind::Person, "Maya", &maya);
        assert_eq!(g.entries(), expected.entries());
        // Without the alias, nothing of Maya is left; removing again changes nothing.
        g.remove(EntityKind::Person, "Maya", &maya, &Gazetteer::new());
        assert_eq!(g.entries(), before.entries());
        let rev = g.revision();
        g.remove(EntityKind::Person, "Maya Okafor", &maya, &Gazetteer::new());
        assert_eq!(g.revision(), rev);
        // An organisation's short name goes with it.
        g.remove(EntityKind::Organization, "Bluefin Logistics", &bluefin, &keep);
        assert_eq!(g.get("bluefin").count(), 0);
        assert_eq!(g.get("bluefin logistics").count(), 0);
    }

    #[test]
    fn accents_fold_and_first_names_find_people() {
        let mut g = Gazetteer::new();
        let tomas = EntityId::from("person:tomás reyes");
        g.insert(EntityKind::Person, "Tomás Reyes", &tomas);
        g.insert(EntityKind::Person, "May Lee", &EntityId::from("person:may lee"));
        let ids = |s: &str| g.get(s).map(|(_, id)| id.as_str().to_string()).collect::<Vec<_>>();
        assert_eq!(ids("tomas"), vec!["person:tomás reyes"]);
        assert_eq!(ids("TOMAS reyes"), vec!["person:tomás reyes"]);
        assert_eq!(ids("Tomás"), vec!["person:tomás reyes"]);
        // A month is no first name.
        assert!(ids("may").is_empty());
        assert_eq!(ids("may lee"), vec!["person:may lee"]);
    }
}
