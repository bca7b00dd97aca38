//! Real mail through the mbox importer (issue #13 §6): messages built the way mail clients
//! write them — multipart/alternative, HTML only, attachments, RFC 2047 headers, windows-1252
//! and ISO-8859-x bodies, quoted-printable and base64 — and a 50 MB mailbox in bounded memory.

use crate::ingest::import::read_mbox;
use crate::{EmailMessage, Item};
use std::path::{Path, PathBuf};

fn write(bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("mail.mbox");
    std::fs::write(&p, bytes).unwrap();
    (dir, p)
}

fn emails_of(path: &Path) -> Vec<EmailMessage> {
    read_mbox(path)
        .unwrap_or_else(|e| panic!("{e}"))
        .0
        .into_iter()
        .map(|i| match i {
            Item::Email(e) => e,
            Item::Chat(_) => panic!("mbox gives e-mails"),
        })
        .collect()
}

fn emails(bytes: &[u8]) -> Vec<EmailMessage> {
    let (_d, p) = write(bytes);
    emails_of(&p)
}

/// One message: the separator, `headers` (each line ending in `\n`), a blank line, `body`.
fn mail(n: u32, headers: impl AsRef<[u8]>, body: &[u8]) -> Vec<u8> {
    let mut m = format!(
        "From sender@example.com Tue May  2 09:{n:02}:00 2023\nFrom: Sender <sender@example.com>\n\
         Date: Tue, 2 May 2023 09:{n:02}:00 +0000\nMessage-ID: <m{n}@example.com>\n"
    )
    .into_bytes();
    m.extend_from_slice(headers.as_ref());
    m.push(b'\n');
    m.extend_from_slice(body);
    m.extend_from_slice(b"\n\n");
    m
}

/// No C1 control character (U+0080..U+009F): what windows-1252 read as Latin-1 leaves.
fn no_c1(s: &str) -> bool {
    !s.chars().any(|c| ('\u{80}'..='\u{9f}').contains(&c))
}

#[test]
fn multipart_alternative_keeps_the_text_part() {
    let m = emails(&mail(
        1,
        "Subject: Plan\nMIME-Version: 1.0\nContent-Type: multipart/alternative; boundary=\"=_alt_42\"\n",
        b"This is a multi-part message in MIME format.\n\n--=_alt_42\n\
          Content-Type: text/plain; charset=\"utf-8\"\nContent-Transfer-Encoding: 7bit\n\n\
          The plain version: ship on Friday.\n\n--=_alt_42\n\
          Content-Type: text/html; charset=\"utf-8\"\n\n\
          <html><body><p>The <b>HTML</b> version: ship on Friday.</p></body></html>\n--=_alt_42--\n",
    ));
    assert_eq!(m[0].body, "The plain version: ship on Friday.");
}

#[test]
fn html_only_mail_is_text_without_tags_styles_or_scripts() {
    let html = "<!DOCTYPE html><html><head><title>Newsletter</title>\
        <style type=\"text/css\">p { color: red; } .x { font-family: Arial; }</style></head>\
        <body><script>alert('tracking');</script><!-- a comment -->\
        <h1>Caf&eacute; opening</h1><p>Tom &amp; Jerry&rsquo;s caf&#233; opens&nbsp;on May&#160;24.<br>\
        Prices &lt; &euro;5 &#x2014; see <a href=\"https://example.com/menu\">the menu</a>.</p>\
        <p>Second paragraph.</p></body></html>";
    let m = emails(&mail(1, "Subject: News\nContent-Type: text/html; charset=utf-8\n", html.as_bytes()));
    let body = &m[0].body;
    for gone in [
        "<p",
        "<b",
        "</",
        "<!",
        "color",
        "font-family",
        "alert",
        "tracking",
        "comment",
        "Newsletter",
        "&amp;",
        "&eacute;",
        "&#",
        "\u{a0}",
    ] {
        assert!(!body.contains(gone), "{gone:?} left in {body:?}");
    }
    for kept in
        ["Café opening\n", "Tom & Jerry’s café opens on May 24.\n", "Prices < €5 — see the menu.", "Second paragraph."]
    {
        assert!(body.contains(kept), "{kept:?} missing from {body:?}");
    }
    assert_eq!(body.lines().count(), 4, "headings, paragraphs and <br> are line breaks: {body:?}");
}

#[test]
fn attachments_are_skipped_and_named() {
    let pdf = "JVBERi0xLjQKJcfsj6IKNSAwIG9iago8PC9MZW5ndGggNiAwIFI+PgpzdHJlYW0K".repeat(40);
    let body = format!(
        "--mix\nContent-Type: multipart/alternative; boundary=\"alt\"\n\n\
         --alt\nContent-Type: text/plain; charset=utf-8\n\nThe signed contract is attached.\n\
         --alt\nContent-Type: text/html; charset=utf-8\n\n<p>The signed contract is attached.</p>\n--alt--\n\n\
         --mix\nContent-Type: application/pdf; name=\"contract.pdf\"\n\
         Content-Disposition: attachment; filename=\"contract.pdf\"\nContent-Transfer-Encoding: base64\n\n{pdf}\n\
         --mix\nContent-Type: image/png\nContent-Disposition: attachment; filename*=UTF-8''pr%C3%A9sentation.png\n\
         Content-Transfer-Encoding: base64\n\niVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk\n\
         --mix\nContent-Type: text/csv\nContent-Disposition: attachment; filename=\"figures.csv\"\n\nmonth,total\nmay,42\n\
         --mix\nContent-Type: message/rfc822\n\n\
         From: Other <other@example.com>\nSubject: The earlier offer\n\nForwarded text.\n\
         --mix--\n"
    );
    let m = emails(&mail(1, "Subject: Contract\nContent-Type: multipart/mixed; boundary=\"mix\"\n", body.as_bytes()));
    let b = &m[0].body;
    assert!(b.starts_with("The signed contract is attached.\n\n"), "{b:?}");
    for name in [
        "[attachment: contract.pdf]",
        "[attachment: présentation.png]",
        "[attachment: figures.csv]",
        "[attachment: message \"The earlier offer\"]",
    ] {
        assert!(b.contains(name), "{name} missing from {b:?}");
    }
    for gone in ["JVBERi0", "iVBORw0", "month,total", "Forwarded text", "<p>"] {
        assert!(!b.contains(gone), "attachment content {gone:?} in {b:?}");
    }
}

#[test]
fn encoded_headers_are_decoded() {
    let headers = "Subject: =?UTF-8?B?UsOpdW5pb24gZOKAmcOpcXVpcGUg4pyT?=\n\
                   From: =?ISO-8859-1?Q?Ren=E9e_D=FCrr?= <renee@example.com>\n\
                   To: =?utf-8?q?Tom=C3=A1s_Reyes?= <tomas@example.com>, \"Okafor, Maya\" <maya@example.com>\n\
                   Cc: =?windows-1252?Q?=93Quoted=94?= <q@example.com>\n";
    // The separator's sender is overridden by the From header the helper writes first, so
    // build this one by hand.
    let text = format!(
        "From renee@example.com Tue May  2 09:14:00 2023\n{headers}Date: Tue, 2 May 2023 09:14:00 +0000\n\
         Message-ID: <h1@example.com>\n\nBody.\n"
    );
    let m = emails(text.as_bytes());
    assert_eq!(m[0].subject, "Réunion d’équipe ✓");
    assert_eq!(m[0].from, "Renée Dürr <renee@example.com>");
    assert_eq!(m[0].to, vec!["Tomás Reyes <tomas@example.com>", "Okafor, Maya <maya@example.com>"]);
    assert_eq!(m[0].cc, vec!["“Quoted” <q@example.com>"]);
}

#[test]
fn windows_1252_bodies_keep_their_smart_quotes_and_euro() {
    // “Quoted” it’s €5 – done…  in windows-1252, and the same bytes labelled ISO-8859-1 (as
    // Outlook often does): both are read as windows-1252, the superset.
    let cp1252 = b"\x93Quoted\x94 it\x92s \x805 \x96 done\x85";
    for label in ["windows-1252", "iso-8859-1", "cp1252"] {
        let m = emails(&mail(1, format!("Subject: q\nContent-Type: text/plain; charset={label}\n"), cp1252));
        assert_eq!(m[0].body, "“Quoted” it’s €5 – done…", "{label}");
        assert!(no_c1(&m[0].body), "{label}: {:?}", m[0].body);
    }
    // Quoted-printable windows-1252.
    let m = emails(&mail(
        2,
        "Subject: q\nContent-Type: text/plain; charset=\"Windows-1252\"\nContent-Transfer-Encoding: quoted-printable\n",
        b"=93Hi=94 =80",
    ));
    assert_eq!(m[0].body, "“Hi” €");
    // A raw 8-bit subject that is not UTF-8 (a client that never encoded it): windows-1252.
    let m = emails(&mail(3, b"Subject: caf\xe9 \x93menu\x94\n", b"body"));
    assert_eq!(m[0].subject, "café “menu”");
}

#[test]
fn iso_8859_2_and_15_bodies_are_decoded() {
    // "Łódź, żółć" in ISO-8859-2.
    let m = emails(&mail(
        1,
        "Subject: pl\nContent-Type: text/plain; charset=ISO-8859-2\n",
        b"\xa3\xf3d\xbc, \xbf\xf3\xb3\xe6",
    ));
    assert_eq!(m[0].body, "Łódź, żółć");
    // "€ œuvre Ÿ" in ISO-8859-15 (bytes that are ¤ ½ ¾ in Latin-1).
    let m = emails(&mail(2, "Subject: fr\nContent-Type: text/plain; charset=iso-8859-15\n", b"\xa4 \xbduvre \xbe"));
    assert_eq!(m[0].body, "€ œuvre Ÿ");
    // A base64 ISO-8859-2 part: the charset applies after the transfer decoding.
    let m = emails(&mail(
        3,
        "Subject: pl\nContent-Type: text/plain; charset=iso-8859-2\nContent-Transfer-Encoding: base64\n",
        b"o/NkvA==",
    ));
    assert_eq!(m[0].body, "Łódź");
}

#[test]
fn quoted_printable_soft_breaks_and_base64_bodies() {
    let m = emails(&mail(
        1,
        "Subject: qp\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: quoted-printable\n",
        b"A long line that the sender's client wrapped at seventy-six characters, so =\nit continues here; caf=C3=A9 =3D coffee.\nSecond line.",
    ));
    assert_eq!(
        m[0].body,
        "A long line that the sender's client wrapped at seventy-six characters, so it continues here; café = coffee.\nSecond line."
    );
    // base64 over several lines, CRLF line ends as some archives keep them.
    let m = emails(&mail(
        2,
        "Subject: b64\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: base64\n",
        b"VGhlIGxhdW5jaCBtb3ZlcyB0byBN\r\nYXkgMTUuIENhZsOpIGF0IG5vb24u\r\n",
    ));
    assert_eq!(m[0].body, "The launch moves to May 15. Café at noon.");
}

#[test]
fn dates_come_from_the_date_header_else_the_fallbacks_else_the_message_is_skipped() {
    let none = b"From a@example.com Wed May  3 08:00:00 2023\nFrom: a@example.com\nSubject: s\n\nbody\n";
    let m = emails(none);
    assert_eq!(m[0].date_ms, 1_683_100_800_000, "the separator's date");
    let zone = b"From a@example.com Wed May  3 08:00:00 2023\nFrom: a@example.com\n\
                 Date: Wed, 3 May 2023 10:00:00 +0200 (CEST)\n\nbody\n";
    assert_eq!(emails(zone)[0].date_ms, 1_683_100_800_000, "the Date header, zone applied");

    // An unreadable `Date:` is dated by the separator, and named.
    let bad =
        b"From a@example.com Wed May  3 08:00:00 2023\nFrom: a@example.com\nSubject: s\nDate: sometime soon\n\nbody\n";
    let (_d, p) = write(bad);
    let (items, report) = read_mbox(&p).unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(report.warnings[0].line, 4);
    assert_eq!(report.warnings[0].reason, "unreadable Date header `sometime soon`: dated by its `From ` line's date");
    let e = report.strict(&p).unwrap_err().to_string();
    assert!(e.contains("mail.mbox:4: unreadable Date header `sometime soon`"), "{e}");

    // No date anywhere and no message before it: skipped and named.
    let neither = b"From a@example.com\nFrom: a@example.com\nSubject: x\n\nbody\n";
    let (_d, p) = write(neither);
    let (items, report) = read_mbox(&p).unwrap();
    assert!(items.is_empty());
    assert_eq!((report.read, report.skipped.values().sum::<u64>()), (1, 1));
    assert_eq!(report.warnings[0].line, 1);
    assert!(report.warnings[0].reason.starts_with("no Date header, no date on its `From ` line"), "{report:?}");
}

#[test]
fn threads_follow_references_and_in_reply_to() {
    let text = "From a Tue May  2 09:00:00 2023\nFrom: A <a@example.com>\nSubject: Launch\n\
        Date: Tue, 2 May 2023 09:00:00 +0000\nMessage-ID: <root@example.com>\n\nroot\n\n\
        From b Tue May  2 10:00:00 2023\nFrom: B <b@example.com>\nSubject: Re: Launch\n\
        Date: Tue, 2 May 2023 10:00:00 +0000\nMessage-ID: <r1@example.com>\nIn-Reply-To: <root@example.com>\n\nreply\n\n\
        From c Tue May  2 11:00:00 2023\nFrom: C <c@example.com>\nSubject: Re: Launch\n\
        Date: Tue, 2 May 2023 11:00:00 +0000\nMessage-ID: <r2@example.com>\nIn-Reply-To: <r1@example.com>\n\nreply to reply\n\n\
        From d Tue May  2 08:00:00 2023\nFrom: D <d@example.com>\nSubject: Re: Elsewhere\n\
        Date: Tue, 2 May 2023 08:00:00 +0000\nMessage-ID: <x2@example.com>\n\
        References: <x0@example.com> <x1@example.com>\nIn-Reply-To: <x1@example.com>\n\nparent not here\n\n\
        From e Tue May  2 12:00:00 2023\nFrom: E <e@example.com>\nSubject: Re: No ids\n\
        Date: Tue, 2 May 2023 12:00:00 +0000\n\nno ids\n";
    let m = emails(text.as_bytes());
    let got: Vec<(&str, &str, Option<&str>)> =
        m.iter().map(|e| (e.body.as_str(), e.source_id.0.as_str(), e.source_ref.as_deref())).collect();
    assert_eq!(
        got,
        vec![
            ("parent not here", "mbox:x0@example.com", Some("mid:x2@example.com")),
            ("root", "mbox:root@example.com", Some("mid:root@example.com")),
            ("reply", "mbox:root@example.com", Some("mid:r1@example.com")),
            ("reply to reply", "mbox:root@example.com", Some("mid:r2@example.com")),
            ("no ids", "mbox:no ids#37", None),
        ],
        "oldest first; a reply's reply joins the root's thread"
    );
    assert_eq!(m[1].from, "A <a@example.com>");
}

#[test]
fn demo_mailbox_imports_as_before() {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo/mail.mbox");
    let m = emails_of(&demo);
    assert_eq!(m.len(), 14);
    let threads: std::collections::BTreeSet<&str> = m.iter().map(|e| e.source_id.0.as_str()).collect();
    assert_eq!(threads.len(), 9);
    for e in &m {
        assert!(!e.body.is_empty() && !e.from.is_empty() && !e.subject.is_empty(), "{e:?}");
        assert!(no_c1(&e.body) && !e.body.contains('\u{fffd}') && !e.body.contains('<'), "{:?}", e.body);
    }
}

/// Write a mailbox of about `bytes` bytes: threads of plain UTF-8, windows-1252,
/// multipart/alternative, base64 and attachment-carrying messages (a 60 kB base64 PDF on one
/// in five, which the importer skips, so the text kept is a few percent of the file).
/// Returns the number of messages.
fn write_mailbox(path: &Path, bytes: u64) -> u64 {
    use std::io::Write;
    let words = ["billing", "migration", "cutover", "review", "invoice", "deploy", "rollback", "latency", "budget"];
    let attachment = "JVBERi0xLjQKJcfsj6IKNSAwIG9iago8PC9MZW5ndGggNiAwIFI+PgpzdHJlYW0KeJwr\n".repeat(850);
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let (mut written, mut n, mut seed) = (0u64, 0u64, 13u64);
    while written < bytes {
        n += 1;
        let mut text = String::new();
        for _ in 0..120 {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            text.push_str(words[(seed >> 33) as usize % words.len()]);
            text.push(' ');
        }
        let (day, min) = (1 + n / 1440 % 28, n % 1440);
        let refs = if n % 4 == 1 { String::new() } else { format!("In-Reply-To: <m{}@example.com>\n", n - n % 4 + 1) };
        let head = format!(
            "From a@example.com Mon May {day:2} {:02}:{:02}:00 2023\nFrom: Maya Okafor <maya@example.com>\n\
             To: Tomás Reyes <tomas@example.com>\nSubject: Thread {}\nDate: {day} May 2023 {:02}:{:02}:00 +0000\n\
             Message-ID: <m{n}@example.com>\n{refs}MIME-Version: 1.0\n",
            min / 60,
            min % 60,
            n / 4,
            min / 60,
            min % 60
        );
        let mut m = head.into_bytes();
        match n % 5 {
            0 => m.extend(format!("Content-Type: text/plain; charset=utf-8\n\n{text}\n>From the archive.\n").bytes()),
            1 => {
                m.extend(b"Content-Type: text/plain; charset=windows-1252\n\n\x93");
                m.extend(text.bytes());
                m.extend(b"\x94 \x805\n");
            }
            2 => m.extend(
                format!(
                    "Content-Type: multipart/alternative; boundary=\"alt\"\n\n--alt\nContent-Type: text/plain\n\n{text}\n\
                     --alt\nContent-Type: text/html\n\n<html><head><style>p{{color:red}}</style></head><body><p>{text}</p></body></html>\n--alt--\n"
                )
                .bytes(),
            ),
            3 => m.extend(format!("Content-Type: text/plain; charset=utf-8\n\n{text}\n").bytes()),
            _ => m.extend(
                format!(
                    "Content-Type: multipart/mixed; boundary=\"mix\"\n\n--mix\nContent-Type: text/plain\n\n{text}\n--mix\n\
                     Content-Type: application/pdf\nContent-Disposition: attachment; filename=\"report-{n}.pdf\"\n\
                     Content-Transfer-Encoding: base64\n\n{attachment}--mix--\n"
                )
                .bytes(),
            ),
        }
        m.push(b'\n');
        f.write_all(&m).unwrap();
        written += m.len() as u64;
    }
    f.flush().unwrap();
    n
}

/// The peak resident size of the largest child process waited for so far, in bytes.
#[cfg(unix)]
fn children_peak_rss() -> u64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) }, 0);
    // Linux reports kilobytes.
    usage.ru_maxrss as u64 * 1024
}

/// A 50 MB mailbox is imported through the CLI in bounded memory: the importer streams it one
/// message at a time, so the peak grows with the text kept, not with the file. Measured as
/// the growth of the child's peak RSS from a 5 MB to a 50 MB mailbox of the same mix (the
/// growth of holding the file whole would be about 45 MB, and more per copy).
/// Ignored in the suite: the peak is read with `getrusage(RUSAGE_CHILDREN)`, the largest of
/// all children of this process, so it must run alone:
/// `cargo test --release --lib tests::mail::fifty_mb -- --ignored --exact` (about 10 s).
#[cfg(unix)]
#[test]
#[ignore = "reads the peak RSS of all child processes: run alone"]
fn fifty_mb_mailbox_in_bounded_memory() {
    use crate::tests::support::memtree;
    let dir = tempfile::tempdir().unwrap();
    let mut peaks = Vec::new();
    for (name, mb) in [("small.mbox", 5u64), ("big.mbox", 50)] {
        let path = dir.path().join(name);
        let n = write_mailbox(&path, mb << 20);
        let store = dir.path().join(format!("store-{name}"));
        let r = memtree(&store, &["ingest".as_ref(), "--format".as_ref(), "mbox".as_ref(), path.as_os_str()], None);
        assert_eq!(r.json()["leaves"], n, "every message is a leaf");
        peaks.push(children_peak_rss());
        eprintln!(
            "{name}: {n} messages, {} bytes, peak RSS {} kB",
            std::fs::metadata(&path).unwrap().len(),
            peaks.last().unwrap() >> 10
        );
    }
    let growth = peaks[1].saturating_sub(peaks[0]);
    assert!(growth < (45 << 20) / 2, "peak RSS grew by {} kB from 5 to 50 MB of mail", growth >> 10);
}
