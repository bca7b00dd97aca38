//! A mail's own words (issue 47 item 4): what a reply quotes and its signature stay in its
//! text but are not its words for ranking nor ever its snippet, so the message a thread
//! quotes ranks above the replies for its own words. The shape is that of a patch series on
//! lkml (notmuch's test corpus): a cover letter, replies that quote it whole, each signed.

use crate::tests::common::*;
use crate::{Config, EmailMessage, Item, Memory, Scope, WalkArgs, walk};

const COVER: &str = "This patchset adds persistent local caching for CIFS using the FS-Cache interface.\n\n\
The server index object is keyed by hostname. The superblock index object is keyed by the sharename \
and the inode object by the UniqueId; cache coherency is ensured by checking LastWriteTime and the size.\n\n\
To use this, apply this patchset in order, mount the share with rsize=4096 and try copying a huge file \
from the mount point to the local filesystem. During the first time, the cache will be initialized. When \
you copy the second time, it should read from the local cache.\n\n\
Known issues: some servers do not update mtime until the filehandle is closed, and not all servers \
provide a unique UniqueId under all circumstances.\n\n\
Todo: improvements to avoid potential key collisions; address the above known issues.\n\n\
Suresh";

/// The paragraph of `COVER` the replies quote (replies trim what they quote).
const QUOTED: &str = "The server index object is keyed by hostname. The superblock index object is keyed by the sharename \
and the inode object by the UniqueId; cache coherency is ensured by checking LastWriteTime and the size.";

fn mail(id: &str, from: &str, ts: i64, subject: &str, body: &str) -> Item {
    Item::Email(EmailMessage {
        source_id: "mbox:cover@example.com".into(),
        source_ref: Some(format!("mid:{id}")),
        message_id: Some(id.into()),
        from: from.into(),
        to: vec!["linux-cifs@vger.kernel.org".into()],
        cc: vec![],
        subject: subject.into(),
        date_ms: ts,
        body: body.into(),
    })
}

/// `QUOTED` quoted under an attribution, a short reply and a signature.
fn reply(own: &str, sign: &str) -> String {
    let quoted: String = QUOTED.lines().map(|l| format!("> {l}\n")).collect();
    format!("On Tue, 22 Jun 2010, Suresh Jayaraman wrote:\n{quoted}\n{own}\n\n{sign}\n")
}

fn store() -> (Fixture, Memory) {
    let fx = Fixture::new(Config::default());
    let mut mem = fx.open();
    let subject = "[RFC][PATCH 00/10] cifs: local caching support using FS-Cache";
    let re = format!("Re: {subject}");
    let items = vec![
        mail("cover@example.com", "Suresh Jayaraman <sj@example.com>", T0, subject, COVER),
        mail("r1@example.com", "Carl Worth <cw@example.com>", T0 + HOUR, &re, &reply("Looks good to me, pushed.", "-Carl")),
        mail("r2@example.com", "Jeff Layton <jl@example.com>", T0 + 2 * HOUR, &re, &reply("Nice work, a few nits inline later.", "-- \nJeff Layton <jl@example.com>")),
        mail("r3@example.com", "Steve French <sf@example.com>", T0 + 3 * HOUR, &re, &reply("Merged into the cifs tree.", "Thanks!\nSteve")),
    ];
    mem.ingest(items).unwrap();
    mem.flush().unwrap();
    (fx, mem)
}

#[test]
fn the_quoted_original_ranks_above_the_replies_that_quote_it() {
    let (_fx, mem) = store();
    // Before, a reply quoting the paragraph ranked first (the quote's words, entities and
    // vector were the reply's).
    for q in ["cache coherency LastWriteTime UniqueId", "When is cache coherency checked by LastWriteTime?"] {
        let r = walk(mem.as_reader(), &WalkArgs::new(q), &Scope::all()).unwrap();
        let first = r.hits.first().unwrap_or_else(|| panic!("{q}: no hit"));
        assert!(first.content.contains("This patchset adds"), "{q}: first is {:?}", first.content);
    }
}

#[test]
fn a_quote_or_a_signature_is_never_the_snippet() {
    let (_fx, mem) = store();
    for q in ["Carl superblock index object", "Jeff Layton", "Steve cache coherency"] {
        let r = walk(mem.as_reader(), &WalkArgs::new(q), &Scope::all()).unwrap();
        for h in r.hits.iter().filter(|h| h.content.contains("wrote:")) {
            if let Some(s) = &h.snippet {
                assert!(!s.text.contains("> ") && !s.text.contains("-Carl") && !s.text.contains("Jeff Layton <"), "{q}: {:?}", s.text);
            }
        }
    }
    // The reply's text is whole: what it quotes is kept, for a reader.
    let r = walk(mem.as_reader(), &WalkArgs::new("pushed"), &Scope::all()).unwrap();
    let pushed = r.hits.iter().find(|h| h.content.contains("Looks good to me, pushed.")).expect("the reply is found by its own words");
    assert!(pushed.content.contains("> The server index object") && pushed.content.trim_end().ends_with("-Carl"), "{:?}", pushed.content);
}
