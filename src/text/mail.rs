//! A mail's own words: the lines of an e-mail that its writer did not write themselves —
//! what it quotes and its signature — so that ranking and snippets read the mail by what it
//! says. The text itself keeps them (a reader wants the context; export/restore is exact).

use std::borrow::Cow;
use std::ops::Range;

/// The version of these rules: the full-text index reads a mail by its own words, so a
/// change here rebuilds it (`index::commit_version`).
pub(crate) const OWN_WORDS_RULES: u32 = 1;

/// Words a closing line starts with ("Thanks!", "Best regards,", "Cheers").
const CLOSINGS: &[&str] =
    &["thanks", "thank", "thx", "cheers", "regards", "best", "kind", "warm", "sincerely", "yours", "br", "ciao"];

/// The byte ranges of `text`'s lines that are not its writer's own words: quoted lines
/// (`> …`) and the line or two that introduce them ("On Fri, 25 Jun 2010, Ann wrote:"); an
/// Outlook-style quoted original ("-----Original Message-----", or a `From:` line with a
/// `Sent:` or `Date:` line right after it) to the end; a signature (after a `-- ` line) to the
/// end; and a last sign-off ("Thanks! -Carl", "Cheers,\nAnn"): at most three short lines at
/// the end that open with a closing word or a dash.
pub(crate) fn quoted_spans(text: &str) -> Vec<Range<usize>> {
    let mut lines: Vec<(usize, &str)> = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        lines.push((at, line));
        at += line.len();
    }
    let trimmed = |i: usize| lines.get(i).map_or("", |(_, l)| l.trim());
    let attribution = |l: &str| l.ends_with("wrote:") || l.ends_with("writes:") || l.contains(" wrote on ");
    let mut quoted = vec![false; lines.len()];
    let mut rest_from = lines.len();
    for (i, q) in quoted.iter_mut().enumerate() {
        let l = trimmed(i);
        if l == "--" || l.starts_with("-----Original Message") || l.starts_with("----- Original Message") {
            rest_from = i;
            break;
        }
        if l.starts_with("From:") && (1..=2).any(|k| ["Sent:", "Date:"].iter().any(|h| trimmed(i + k).starts_with(h))) {
            rest_from = i;
            break;
        }
        let wrapped_attribution = l.starts_with("On ") && attribution(trimmed(i + 1));
        *q = l.starts_with('>') || attribution(l) || wrapped_attribution;
    }
    quoted[rest_from..].iter_mut().for_each(|q| *q = true);
    mark_sign_off(&mut quoted, &|i| trimmed(i));

    let mut spans: Vec<Range<usize>> = Vec::new();
    for (i, &(start, line)) in lines.iter().enumerate() {
        if !quoted[i] {
            continue;
        }
        match spans.last_mut() {
            Some(last) if last.end == start => last.end = start + line.len(),
            _ => spans.push(start..start + line.len()),
        }
    }
    spans
}

/// Marks the sign-off among the last own lines: a block of at most three short lines
/// (≤ 4 words), after the last line of substance, whose first opens with a closing word or
/// a dash ("-Carl").
fn mark_sign_off<'a>(quoted: &mut [bool], trimmed: &dyn Fn(usize) -> &'a str) {
    let own: Vec<usize> = (0..quoted.len()).filter(|&i| !quoted[i] && !trimmed(i).is_empty()).collect();
    let short = |i: usize| trimmed(i).split_whitespace().count() <= 4;
    let opens = |i: usize| {
        let l = trimmed(i);
        let first = l.split(|c: char| !c.is_alphanumeric()).find(|w| !w.is_empty()).unwrap_or("").to_lowercase();
        (l.starts_with('-') && !l.starts_with("--")) || CLOSINGS.contains(&first.as_str())
    };
    let tail: Vec<usize> = own.iter().rev().take(3).rev().copied().collect();
    // The first line of the tail (taken as late as possible) that opens a sign-off, with
    // only short lines after it; a mail of nothing but a sign-off keeps its words.
    let Some(k) = (0..tail.len()).find(|&k| opens(tail[k]) && tail[k..].iter().all(|&i| short(i))) else { return };
    if own.len() > tail.len() - k {
        for &i in &tail[k..] {
            quoted[i] = true;
        }
    }
}

/// `text` without the lines [`quoted_spans`] finds: what the writer wrote.
pub(crate) fn own_words(text: &str) -> Cow<'_, str> {
    let spans = quoted_spans(text);
    if spans.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for s in spans {
        out.push_str(&text[at..s.start]);
        at = s.end;
    }
    out.push_str(&text[at..]);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_attributions_and_signatures_are_not_own_words() {
        let reply = "Subject: Re: [PATCH 0/3] maildir flags\nFrom: Carl Worth <cworth@cworth.org>\n\
                     On Sun, 22 Nov 2009 00:11:00 +0100, Jan Janak <jan@ryngle.com> wrote:\n\
                     > This series adds maildir flag synchronisation.\n>\n> Jan\n\n\
                     Pushed, thanks.\n\n-Carl\n";
        assert_eq!(
            own_words(reply),
            "Subject: Re: [PATCH 0/3] maildir flags\nFrom: Carl Worth <cworth@cworth.org>\n\nPushed, thanks.\n\n"
        );
        let wrapped = "Fine by me.\nOn Tue, Aug 3, 2010 at 7:17 AM, Ann Lee\n<ann@example.com> wrote:\n> the plan\n";
        assert_eq!(own_words(wrapped), "Fine by me.\n");
        let sig = "The build is green.\n\n-- \nJan Janak\nhttp://ryngle.com\n";
        assert_eq!(own_words(sig), "The build is green.\n\n");
        let outlook =
            "Agreed, ship it.\n\nFrom: Ann Lee\nSent: Tuesday, August 03, 2010 7:17 AM\nSubject: plan\n\nthe plan\n";
        assert_eq!(own_words(outlook), "Agreed, ship it.\n\n");
    }

    #[test]
    fn a_sign_off_is_cut_but_not_a_mail_of_one_line() {
        assert_eq!(own_words("The fix is in master.\nThanks!\n-Carl"), "The fix is in master.\n");
        assert_eq!(own_words("The fix is in master.\n\nCheers,\nAnn Lee\n"), "The fix is in master.\n\n");
        assert_eq!(own_words("Thanks!"), "Thanks!", "a mail that only thanks says that");
        assert_eq!(
            own_words("We met on Friday.\nBest place in town for a meeting, and we should go back there again soon."),
            "We met on Friday.\nBest place in town for a meeting, and we should go back there again soon.",
            "a long line is no sign-off"
        );
        let plain = "Line one.\nLine two.\n";
        assert!(matches!(own_words(plain), Cow::Borrowed(_)));
    }
}
