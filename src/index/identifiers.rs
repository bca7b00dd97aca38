//! The content field's tokenizer (`en_stem_ids`): the words tantivy's `en_stem` cuts (runs of
//! alphanumerics, lower-cased, stemmed), and each identifier of several words whole as well
//! (`0.15`, `setup.py`, `max_leaf_tokens`, `gpt-4`), and each CamelCase word by its parts as
//! well (`FuzzyQuery` → `fuzzy`, `query`), at the position of its first word
//! (`text::identifiers` says what an identifier is). Questions go through the same analyzer,
//! so a question that writes `0.15` asks for the rare term `0.15`, not for "0" and "15".

use crate::text::identifiers::{camel_parts, whole, word_ranges};
use tantivy::tokenizer::{
    Language, LowerCaser, RemoveLongFilter, Stemmer, TextAnalyzer, Token, TokenStream, Tokenizer,
};

/// The name the schema's content field names (`index_schema/tantivy.json`).
pub(crate) const CONTENT_TOKENIZER: &str = "en_stem_ids";

/// A token of this many bytes or more is dropped: runs that long are encoded data (base64 in a
/// mail), not words. A git commit id (40 hex digits) and a SHA-256 (64) are shorter: they are
/// terms, and a question that writes one finds its record (tantivy's own `en_stem` drops
/// from 40, which left every commit id unsearchable).
const LONGEST_TOKEN: usize = 72;

/// `en_stem` with identifiers: what [`super::IndexHandle`] registers on every index it opens.
pub(crate) fn content_analyzer() -> TextAnalyzer {
    TextAnalyzer::builder(IdentifierTokenizer::default())
        .filter(RemoveLongFilter::limit(LONGEST_TOKEN))
        .filter(LowerCaser)
        .filter(Stemmer::new(Language::English))
        .build()
}

/// Words, identifiers whole and CamelCase parts, cut from the whole text at once.
#[derive(Clone, Default)]
pub(crate) struct IdentifierTokenizer {
    tokens: Vec<Token>,
}

/// The tokens of one text, handed out in order.
pub(crate) struct IdentifierTokens<'a> {
    tokens: &'a mut Vec<Token>,
    at: usize,
}

impl Tokenizer for IdentifierTokenizer {
    type TokenStream<'a> = IdentifierTokens<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> IdentifierTokens<'a> {
        self.tokens.clear();
        let words = word_ranges(text);
        let mut ids = whole(text, &words).into_iter().peekable();
        let token = |range: std::ops::Range<usize>, position: usize| Token {
            offset_from: range.start,
            offset_to: range.end,
            position,
            text: text[range].to_string(),
            position_length: 1,
        };
        for (position, w) in words.into_iter().enumerate() {
            // The identifier first: offsets never go back (the snippet chooser counts tokens
            // by the passage their offset falls in). A reference starts at its `#`, before
            // its number's word.
            while let Some(id) = ids.next_if(|id| id.start <= w.start) {
                self.tokens.push(token(id, position));
            }
            self.tokens.push(token(w.clone(), position));
            for p in camel_parts(&text[w.clone()]) {
                self.tokens.push(token(w.start + p.start..w.start + p.end, position));
            }
        }
        IdentifierTokens { tokens: &mut self.tokens, at: 0 }
    }
}

impl TokenStream for IdentifierTokens<'_> {
    fn advance(&mut self) -> bool {
        self.at += 1;
        self.at <= self.tokens.len()
    }

    fn token(&self) -> &Token {
        &self.tokens[self.at - 1]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.at - 1]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(text: &str) -> Vec<(String, usize)> {
        let mut a = content_analyzer();
        let mut s = a.token_stream(text);
        let mut out = Vec::new();
        while s.advance() {
            out.push((s.token().text.clone(), s.token().position));
        }
        out
    }

    #[test]
    fn identifiers_whole_and_by_parts() {
        let t: Vec<String> = terms("Bumped tantivy to 0.15 in setup.py").into_iter().map(|(t, _)| t).collect();
        assert_eq!(t, ["bump", "tantivi", "to", "0.15", "0", "15", "in", "setup.pi", "setup", "py"]);
        let t: Vec<String> = terms("resolves #17").into_iter().map(|(t, _)| t).collect();
        assert_eq!(t, ["resolv", "#17", "17"]);
        let t = terms("FuzzyQuery works");
        assert_eq!(t, [("fuzzyqueri".into(), 0), ("fuzzi".into(), 0), ("queri".into(), 0), ("work".into(), 1)]);
    }
}
