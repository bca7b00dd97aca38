//! Which passages of a long leaf get a vector of their own: those the model's window does not
//! reach, each stored under its passage number as its slot (slot 0 is the leaf's own vector).

use super::Embedder;
use crate::error::Result;
use crate::text::{PassageLimits, passages, quoted_spans};
use crate::types::SourceKind;

/// What a passage's cosine with a question gives up against a whole leaf's: a passage is a
/// few focused sentences, a leaf's own vector the mean of all it says, so the same question
/// finds a passage nearer; and a leaf of six passages has six chances where a turn of one
/// has one. Taken at its face value (0), the best passage crowded BEAM's long assistant
/// replies ahead of its evidence (dense R@10 57.7 → 47.0); 0.1 is the one of 0, 0.03, 0.06
/// and 0.1 at which walk lost no dev corpus or category (BENCHMARKS.md, "Passage vectors").
pub const PASSAGE_DISCOUNT: f32 = 0.1;

/// At most this many slots a leaf (its own vector and its passages'). A leaf is at most
/// `max_leaf_tokens` long (1,024 by default: five or six passages), so only a store
/// configured for much longer leaves reaches it; the rest of such a leaf is found by its
/// words alone.
pub(crate) const PASSAGE_SLOTS: usize = 16;

/// The passages of `content` (a leaf's text, from a source of `kind`) that get a vector of
/// their own, with the slot each is stored under: passage `i` of [`passages`] with the
/// default limits (the ones a hit's snippet is chosen from) is slot `i`.
///
/// Passage 0 is what the leaf's own vector reads. A later one gets a vector when it ends past
/// what the model reads of the text ([`Embedder::reads`]: all-MiniLM-L6-v2 reads 256 word
/// pieces, about 190 English words), and, in a mail, when it is mostly the mail's own words
/// (a quote is the quoted mail's, a signature nobody's; the mail's own vector reads its own
/// words). Empty for a text of one passage, so a chat turn costs no more than before.
pub fn passage_slots<'a>(emb: &dyn Embedder, content: &'a str, kind: SourceKind) -> Result<Vec<(u16, &'a str)>> {
    let ps = passages(content, PassageLimits::default());
    if ps.len() < 2 {
        return Ok(Vec::new());
    }
    let read = emb.reads(content)?;
    let quoted = if kind == SourceKind::Email { quoted_spans(content) } else { Vec::new() };
    Ok(ps
        .iter()
        .enumerate()
        .take(PASSAGE_SLOTS)
        .skip(1)
        .filter(|(_, p)| p.byte_start + p.text.len() > read && p.mostly_outside(&quoted))
        .map(|(i, p)| (i as u16, p.text))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::HashEmbedder;

    fn paragraph(word: &str, n: usize) -> String {
        vec![word; n].join(" ") + "."
    }

    #[test]
    fn only_passages_past_the_window_get_a_slot() {
        // Three paragraphs of 120 words: three passages (200-token limit).
        let text = [paragraph("alpha", 120), paragraph("beta", 120), paragraph("gamma", 120)].join("\n\n");
        let wide = HashEmbedder::new(16);
        assert!(passage_slots(&wide, &text, SourceKind::Chat).unwrap().is_empty(), "the model reads it all");
        // A window of 150 words ends inside the second passage: it and the third get slots.
        let narrow = HashEmbedder::windowed(16, 150);
        let slots = passage_slots(&narrow, &text, SourceKind::Chat).unwrap();
        assert_eq!(slots.iter().map(|s| s.0).collect::<Vec<_>>(), [1, 2]);
        assert!(slots[1].1.starts_with("gamma"));
        // A window of 250 words reads the second passage whole.
        let slots = passage_slots(&HashEmbedder::windowed(16, 250), &text, SourceKind::Chat).unwrap();
        assert_eq!(slots.iter().map(|s| s.0).collect::<Vec<_>>(), [2]);
    }

    #[test]
    fn a_short_text_has_none_and_a_quote_gets_none() {
        let narrow = HashEmbedder::windowed(16, 5);
        assert!(passage_slots(&narrow, "one two three four five six seven", SourceKind::Chat).unwrap().is_empty());
        let quoted: String = (0..120).map(|i| format!("> quoted line {i} of the earlier mail\n")).collect();
        let mail = format!("{}\n\nOn Monday Bob wrote:\n{quoted}", paragraph("mine", 160));
        let slots = passage_slots(&narrow, &mail, SourceKind::Email).unwrap();
        assert!(slots.iter().all(|(_, t)| !t.contains("> quoted")), "{slots:?}");
        assert!(!passage_slots(&narrow, &mail, SourceKind::Chat).unwrap().is_empty(), "in a chat it is text");
    }
}
