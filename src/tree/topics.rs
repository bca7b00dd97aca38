//! Topics of a summary: its most frequent content words across children, as `topic:` ids.

use crate::text::content_words;
use std::collections::HashMap;

/// Up to `k` topics of the children's texts: content words ranked by the number of children
/// using them, then total count, then the word; words used by a single child are kept only
/// when nothing better exists.
pub fn topics_of<'a>(children: impl IntoIterator<Item = &'a str>, k: usize) -> Vec<String> {
    // Word → (children using it, total count, the last child counted): the last child stands
    // in for a per-child set of words seen.
    let mut df: HashMap<String, (usize, usize, usize)> = HashMap::new();
    for (i, c) in children.into_iter().enumerate() {
        for w in content_words(c) {
            if !w.chars().all(|ch| ch.is_alphabetic()) {
                continue;
            }
            let e = df.entry(w).or_insert((0, 0, usize::MAX));
            e.1 += 1;
            if e.2 != i {
                e.2 = i;
                e.0 += 1;
            }
        }
    }
    let mut ranked: Vec<(String, (usize, usize))> = df.into_iter().map(|(w, (d, n, _))| (w, (d, n))).collect();
    ranked.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(b.1.1.cmp(&a.1.1)).then(a.0.cmp(&b.0)));
    ranked.into_iter().take(k).map(|(w, _)| format!("topic:{w}")).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn most_shared_words_first() {
        let t = super::topics_of(["phoenix launch", "phoenix billing", "billing lunch phoenix"], 2);
        assert_eq!(t, vec!["topic:phoenix", "topic:billing"]);
    }
}
