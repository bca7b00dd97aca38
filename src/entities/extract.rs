//! Entity extraction: rules for e-mails, URLs, handles and hashtags; the gazetteer for known
//! names (at any position, accents folded); and (optionally) capitalised names not yet known,
//! typed by their context (`person:`, `organization:`, `location:`, else `misc:`).

use super::Mention;
use super::canonical::canonical_id;
use super::context::{Around, CONNECTORS, is_head_noun, kind_of};
use super::gazetteer::Gazetteer;
use super::words::is_not_name;
use super::words::{Word, split_words};
use crate::types::EntityKind;
use regex::Regex;
use std::collections::{BTreeMap, HashSet};
use std::sync::LazyLock;

/// How much to extract.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExtractOptions {
    /// Match gazetteer surfaces in any case (queries), not only capitalised words (content).
    pub case_insensitive: bool,
    /// Turn unknown capitalised mid-sentence words into `misc:` entities.
    pub discover_names: bool,
}

/// The extraction rules. Cheap to build: every extractor shares the one compiled rule set.
#[derive(Debug, Clone)]
pub struct Extractor {
    rules: &'static Rules,
}

/// The rule patterns, compiled once per process on first use: every reader builds an
/// extractor, and compiling the four regexes per reader was waste.
#[derive(Debug)]
struct Rules {
    email: Regex,
    url: Regex,
    handle: Regex,
    hashtag: Regex,
    wiki_link: Regex,
}

static RULES: LazyLock<Rules> = LazyLock::new(|| Rules {
    email: Regex::new(r"(?i)\b[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}\b").expect("valid regex"),
    url: Regex::new(r#"\bhttps?://[^\s<>"'`]+"#).expect("valid regex"),
    handle: Regex::new(r"(?:^|[^\w@.])@([A-Za-z0-9_][A-Za-z0-9_.-]{0,38}[A-Za-z0-9_]|[A-Za-z0-9_])")
        .expect("valid regex"),
    hashtag: Regex::new(r"(?:^|[^\w&#])#([A-Za-z][\w-]{0,63})").expect("valid regex"),
    // An Obsidian wiki link, `[[Note]]`, `[[#Heading]]`, `[[Note#^block|shown]]`: its `#`
    // names a heading or a block of a note, never a tag.
    wiki_link: Regex::new(r"!?\[\[[^\[\]\n]*\]\]").expect("valid regex"),
});

impl Default for Extractor {
    fn default() -> Self {
        Self::new()
    }
}

impl Extractor {
    /// The extractor (the rules are compiled on the first call in the process).
    pub fn new() -> Self {
        Extractor { rules: &RULES }
    }

    /// Extract the entities of `text`, deduplicated by id, sorted by id.
    pub fn extract(&self, text: &str, gaz: &Gazetteer, opts: ExtractOptions) -> Vec<Mention> {
        let rules = self.rules;
        let mut out: BTreeMap<String, Mention> = BTreeMap::new();
        let mut masked = text.to_string();
        // Each rule needs its literal (`://`, `@`, `#` before a letter): a text without it
        // skips the rule's scan, which is much of the cost of a short message, and finds the
        // same mentions.
        if text.contains("://") {
            for m in rules.url.find_iter(text) {
                add(&mut out, EntityKind::Url, trim_url(m.as_str()));
                masked.replace_range(m.range(), &" ".repeat(m.len()));
            }
        }
        if masked.contains('@') {
            for m in rules.email.find_iter(&masked.clone()) {
                add(&mut out, EntityKind::Email, m.as_str());
                masked.replace_range(m.range(), &" ".repeat(m.len()));
            }
        }
        if masked.contains("[[") {
            // `#` inside a wiki link is a heading or block reference: blanked for the hashtag
            // rule only (the link's words are still read for names).
            let links: Vec<std::ops::Range<usize>> = rules.wiki_link.find_iter(&masked).map(|m| m.range()).collect();
            for r in links {
                let blanked = masked[r.clone()].replace('#', " ");
                masked.replace_range(r, &blanked);
            }
        }
        // Code names nothing: handles, hashtags and names are read from the prose only (URLs
        // and e-mails, above, are found in code too: they name a place or a person either way).
        // A question is read whole: a known name in backticks is still the name asked about.
        let prose = if opts.case_insensitive { masked } else { crate::text::blank_code(&masked) };
        if prose.contains('@') {
            for c in rules.handle.captures_iter(&prose) {
                add(&mut out, EntityKind::Handle, &c[1]);
            }
        }
        if prose.as_bytes().windows(2).any(|w| w[0] == b'#' && w[1].is_ascii_alphabetic()) {
            for c in rules.hashtag.captures_iter(&prose) {
                add(&mut out, EntityKind::Hashtag, &c[1]);
            }
        }
        names(&split_words(&prose), gaz, opts, &mut out);
        out.into_values().collect()
    }
}

/// A URL without the prose or Markdown around it: trailing punctuation and emphasis marks
/// (`https://x.org/a/)**` in `**[a](https://x.org/a/)**`), and a closing bracket the URL
/// did not open (`(see https://x.org)`), while `https://en.wikipedia.org/wiki/Rust_(game)`
/// keeps its own.
fn trim_url(url: &str) -> &str {
    let mut u = url;
    loop {
        let before = u.len();
        u = u.trim_end_matches(['.', ',', ';', ':', '!', '?', '*', '_', '~', '|', '\'', '"']);
        for (open, close) in [('(', ')'), ('[', ']'), ('{', '}')] {
            if u.ends_with(close) && u.matches(open).count() < u.matches(close).count() {
                u = &u[..u.len() - 1];
            }
        }
        if u.len() == before {
            return u;
        }
    }
}

fn add(out: &mut BTreeMap<String, Mention>, kind: EntityKind, surface: &str) {
    if let Some(id) = canonical_id(kind, surface) {
        out.entry(id.0.clone()).or_insert(Mention { id, kind, surface: surface.trim().to_string() });
    }
}

/// The names among `words`: gazetteer matches (known names, in any position), then, with
/// `discover_names`, unknown capitalised runs, typed by their context ([`kind_of`]).
fn names(words: &[Word<'_>], gaz: &Gazetteer, opts: ExtractOptions, out: &mut BTreeMap<String, Mention>) {
    let plain: Vec<&str> = words.iter().map(|w| w.text).collect();
    let capital = |i: usize| words[i].text.chars().next().is_some_and(|c| c.is_uppercase());
    let connector = |i: usize| CONNECTORS.contains(&words[i].text);
    // A known name may span a lower-case connector ("Casa do Rio"); it cannot start with one
    // (no surface does) and the scan only continues a match through joined words.
    let in_name = |i: usize| (capital(i) || connector(i)) && (i == 0 || words[i].joins_prev || capital(i));
    let matches = if opts.case_insensitive { gaz.scan(&plain, |_| true) } else { gaz.scan(&plain, in_name) };
    // Words this text also writes in lower case ("use", "summary", "network"): capitalised,
    // such a word is the common word at a sentence start, in a heading or a label, not a
    // name. Content only: a question is written in any case.
    let lower: HashSet<&str> = if opts.case_insensitive {
        HashSet::new()
    } else {
        plain.iter().copied().filter(|w| w.chars().next().is_some_and(char::is_lowercase)).collect()
    };
    let common = |i: usize| lower.contains(plain[i].to_lowercase().as_str());
    let mut covered = vec![false; words.len()];
    for (start, len, ids) in matches {
        let typed = ids.iter().any(|(k, _)| *k != EntityKind::Misc);
        // One word known as a guessed kind (not a person: "Will", "Grace" stay theirs; not an
        // address or a tag) that this text writes in lower case too; or a `misc:` guess in a
        // title-case heading or label. Content only: a question is written in any case and
        // any emphasis.
        let guessed = ids.iter().all(|(k, _)| {
            matches!(k, EntityKind::Misc | EntityKind::Product | EntityKind::Organization | EntityKind::Location)
        });
        let title_case = !opts.case_insensitive && !typed && words[start].title_case;
        if len == 1 && guessed && common(start) || title_case {
            continue;
        }
        // A `misc:` guess made of time words ("Last" in "'Last synced 3 min ago'", known
        // before time words were ruled out) is no match: "last week" names a time.
        if !typed && all_time_words(&plain[start..start + len]) {
            continue;
        }
        // A `misc:` guess that is the head of a longer capitalised run ("Bluefin" in
        // "Bluefin Logistics") leaves the run to discovery, which sees the whole name.
        let end = start + len;
        // Not at a sentence start, where an untyped run is not discovered at all.
        let longer = end < words.len() && words[end].joins_prev && capital(end) && !words[start].sentence_start;
        if !typed && opts.discover_names && longer {
            continue;
        }
        covered[start..end].iter_mut().for_each(|c| *c = true);
        let surface = plain[start..end].join(" ");
        // A surface known only as a `misc:` guess or a tag (`#atlas`) gets the kind its
        // context gives it here ("in Lisbon.", "the Atlas migration").
        let named = ids.iter().any(|(k, _)| !matches!(k, EntityKind::Misc | EntityKind::Hashtag | EntityKind::Handle));
        let mut retyped = false;
        if !named && opts.discover_names && capital(start) {
            let kind = kind_of(&plain[start..end], &around(words, start, end));
            // Not to person: a name known as `misc:` stays one id across its mentions (a
            // second id for "Samantha said" split her posting list and cost LoCoMo recall).
            if !matches!(kind, EntityKind::Misc | EntityKind::Person) {
                add(out, kind, &surface);
                retyped = true;
            }
        }
        // A surface known as a real kind (a person who also wrote messages) shadows the
        // `misc:` guess made before that kind was known.
        for (kind, id) in ids.iter().filter(|(k, _)| !(typed || retyped) || *k != EntityKind::Misc) {
            out.entry(id.0.clone()).or_insert(Mention { id: id.clone(), kind: *kind, surface: surface.clone() });
        }
    }
    if !opts.discover_names {
        return;
    }
    let is_name = |j: usize| {
        let w = words[j].text;
        let lower = w.to_lowercase();
        !covered[j]
            && !words[j].title_line
            && capital(j)
            && w.chars().count() >= 2
            && w.chars().all(|c| c.is_alphabetic() || c == '-' || c == '\'')
            && !is_not_name(&lower)
    };
    let mut i = 0;
    while i < words.len() {
        if !is_name(i) {
            i += 1;
            continue;
        }
        // The run: capitalised words joined by white space only, through connectors.
        let mut j = i + 1;
        while j < words.len() && j - i < 4 && words[j].joins_prev {
            if is_name(j) {
                j += 1;
            } else if connector(j) && j + 1 < words.len() && words[j + 1].joins_prev && is_name(j + 1) {
                j += 2;
            } else {
                break;
            }
        }
        let ctx = around(words, i, j);
        let kind = match kind_of(&plain[i..j], &ctx) {
            // Mid-sentence a capitalised name is found anyway: it stays `misc:` (the recall
            // harness lost questions when "Max loves…" made Max a person whose name then
            // left the question's dense text). At a sentence start the verb is the only
            // evidence there is a name at all.
            EntityKind::Person if !words[i].sentence_start => EntityKind::Misc,
            k => k,
        };
        // "Owner: Lena", "Updated: 2023-05-12": one capitalised word before a colon is a
        // field label.
        let after_word = i > 0
            && words[i].joins_prev
            && !words[i - 1].tag
            && words[i - 1].text.chars().next().is_some_and(char::is_lowercase);
        if j == i + 1 && words[i].label && !after_word {
            i = j;
            continue;
        }
        // At a sentence start capitalisation says nothing: only a typed context counts there
        // ("Bob owns the rollout", "Bluefin Logistics pilots it"). A sentence-initial word
        // known from elsewhere was a gazetteer match above.
        let typed_start = matches!(kind, EntityKind::Person | EntityKind::Organization | EntityKind::Location);
        // A lone common head noun ("Hotel" before a known "Casa do Rio") is no name.
        let head_noun = j == i + 1 && is_head_noun(&plain[i].to_lowercase());
        // In a heading or an emphasised label every word is capitalised ("### Next Steps",
        // "**Physical Activity:**"): as at a sentence start, only a typed context counts.
        if words[i].title_case && !typed_start {
            i = j;
            continue;
        }
        if words[i].sentence_start && !typed_start {
            // Only the sentence-initial word says nothing: the run after it is still read
            // ("Phoenix Quetzal salary…" finds Quetzal).
            i += 1;
            continue;
        }
        // Time words are no `misc:` names ("Last synced", "Spring"); a typed one stays
        // ("Summer said"). Nor is a lone word the text also writes in lower case.
        let time_only = kind == EntityKind::Misc && all_time_words(&plain[i..j]);
        let lone_common = j == i + 1 && kind == EntityKind::Misc && common(i);
        if !head_noun && !time_only && !lone_common {
            add(out, kind, &plain[i..j].join(" "));
        }
        i = j;
    }
}

/// The context of the name `words[start..end]`: up to two words before it in its clause,
/// the word after it in its clause.
fn around<'a>(words: &[Word<'a>], start: usize, end: usize) -> Around<'a> {
    let b1 = (start > 0 && words[start].joins_prev).then(|| words[start - 1].text.to_lowercase());
    let b2 = (start > 1 && words[start].joins_prev && words[start - 1].joins_prev)
        .then(|| words[start - 2].text.to_lowercase());
    let last_ends = end > start && words[end - 1].ends_clause;
    let after = (end < words.len() && words[end].joins_prev && !last_ends).then(|| words[end].text);
    Around { before: [b1, b2], after, ends_clause: last_ends }
}

/// True when every word of `run` is a word of time ("Last", "Next Tuesday").
fn all_time_words(run: &[&str]) -> bool {
    run.iter().all(|w| crate::text::is_time_word(&w.to_lowercase()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::EntityId;

    fn ids(m: &[Mention]) -> Vec<&str> {
        m.iter().map(|m| m.id.as_str()).collect()
    }

    #[test]
    fn rules_find_emails_urls_handles_hashtags() {
        let x = Extractor::new();
        let m = x.extract(
            "Ping @Bob or mail alice@example.com, see https://Example.com/Path. #Launch-Q2 ready",
            &Gazetteer::new(),
            ExtractOptions::default(),
        );
        assert_eq!(
            ids(&m),
            vec!["email:alice@example.com", "handle:bob", "hashtag:launch-q2", "url:https://Example.com/Path"]
        );
    }

    /// Obsidian heading links and block references are links, not tags; a URL loses the
    /// Markdown around it but keeps its own brackets.
    #[test]
    fn wiki_links_are_not_hashtags_and_urls_lose_their_markdown() {
        let x = Extractor::new();
        let found = |t: &str| {
            let m = x.extract(t, &Gazetteer::new(), ExtractOptions::default());
            m.into_iter().map(|m| m.id.0).collect::<Vec<_>>()
        };
        for t in ["See [[#Sync history]].", "See [[Obsidian Sync#Sync history|history]]", "![[Note#^abc123]]"] {
            assert!(found(t).iter().all(|id| !id.starts_with("hashtag:")), "{t}: {:?}", found(t));
        }
        assert_eq!(found("[[Note]] #real-tag"), vec!["hashtag:real-tag"]);
        assert_eq!(
            found("Read **[the guide](https://help.obsidian.md/sync/synchronization/)**."),
            vec!["url:https://help.obsidian.md/sync/synchronization/"]
        );
        assert_eq!(found("(see https://x.org/a)"), vec!["url:https://x.org/a"]);
        assert_eq!(
            found("*https://en.wikipedia.org/wiki/Rust_(game)*"),
            vec!["url:https://en.wikipedia.org/wiki/Rust_(game)"]
        );
    }

    #[test]
    fn gazetteer_matches_capitalised_and_possessive_names() {
        let x = Extractor::new();
        let mut g = Gazetteer::new();
        g.insert(EntityKind::Person, "Caroline", &EntityId::from("person:caroline"));
        let m = x.extract("Yesterday Caroline's sister called.", &g, ExtractOptions::default());
        assert_eq!(ids(&m), vec!["person:caroline"]);
        // Lower-case mentions count only in query mode.
        assert!(x.extract("ask caroline", &g, ExtractOptions::default()).is_empty());
        let q = x.extract("when did caroline go?", &g, ExtractOptions { case_insensitive: true, ..Default::default() });
        assert_eq!(ids(&q), vec!["person:caroline"]);
    }

    #[test]
    fn discovery_skips_sentence_starts_and_common_words() {
        let x = Extractor::new();
        let m = x.extract(
            "Went to Sweden with Jon Snow last May. Then I rested.",
            &Gazetteer::new(),
            ExtractOptions { discover_names: true, ..Default::default() },
        );
        // "went to Sweden": a place; Jon Snow is a name the context does not type.
        assert_eq!(ids(&m), vec!["location:sweden", "misc:jon snow"]);
    }
}

#[cfg(test)]
mod markdown_tests {
    use super::*;

    fn ids(text: &str) -> Vec<String> {
        let opts = ExtractOptions { discover_names: true, ..Default::default() };
        Extractor::new().extract(text, &Gazetteer::new(), opts).into_iter().map(|m| m.id.0).collect()
    }

    /// What an assistant's Markdown answer holds that names nothing (issue 43: these were the
    /// best-connected entities of a pooled store of long chats): words after a bold label,
    /// lone words of title-case headings, code.
    #[test]
    fn labels_headings_and_code_name_nothing() {
        let answer = "### Next Steps\n\n- **Tip:** Use bullet points.\n- **Proofread and Edit**: Ensure \
                      clarity.\n\n```css\n@media (max-width: 600px) {\n  // Ensure Layout works\n}\n```\n\
                      Call `Config.load` first.\n```c\n#include <stdio.h>\n```";
        assert_eq!(ids(answer), Vec::<String>::new(), "{answer}");
        // A name in the prose around them is still found, and so is a heading's run of names.
        let text = "## Final Checklist\n\n**Tip:** ask Maria Lopez at `db.rs` before Friday.\n\
                    # Who's who at Larkspur Labs\nSee https://x.org/a and mail a@b.org.";
        assert_eq!(
            ids(text),
            vec!["email:a@b.org", "misc:maria lopez", "organization:larkspur labs", "url:https://x.org/a"],
            "{text}"
        );
    }
}

#[cfg(test)]
mod prose_tests {
    use super::*;

    fn ids(text: &str, known: &[(EntityKind, &str, &str)]) -> Vec<String> {
        let mut g = Gazetteer::new();
        for (k, surface, id) in known {
            g.insert(*k, surface, &crate::types::EntityId::from(*id));
        }
        let opts = ExtractOptions { discover_names: true, ..Default::default() };
        Extractor::new().extract(text, &g, opts).into_iter().map(|m| m.id.0).collect()
    }

    #[test]
    fn names_in_prose_get_their_kinds() {
        let cases: [(&str, &[&str]); 6] = [
            ("Bob owns the rollout now.", &["person:bob"]),
            (
                "Hotel: Casa do Rio, Rua das Flores 28. Check-in from the evening of",
                &["location:casa do rio", "location:rua das flores"],
            ),
            ("We have a small office in Porto.", &["location:porto"]),
            (
                "Kicking off the Atlas migration with Bluefin Logistics today",
                &["organization:bluefin logistics", "product:atlas"],
            ),
            ("| Person | Role | E-mail |\n|---|---|---|\n| Milestones | Date | Owner |", &[]),
            // One name per line never glues into one entity (only the word after a line's
            // first word is read as a name).
            ("Lindqvist\nRafael Moreno\nAiko", &["misc:moreno"]),
        ];
        for (text, want) in cases {
            assert_eq!(ids(text, &[]), want.to_vec(), "{text}");
        }
        let known = [
            (EntityKind::Location, "Casa do Rio", "location:casa do rio"),
            (EntityKind::Location, "Taberna da Rua", "location:taberna da rua"),
        ];
        assert_eq!(
            ids("Hotel: Casa do Rio, Rua das Flores 28, Lisbon.", &known),
            vec!["location:casa do rio", "location:rua das flores", "misc:lisbon"]
        );
    }
}
