//! A JSON string literal, as the parser left it in the input, turned into its one owned copy.
//! serde_json unescapes a string with escapes into a scratch buffer and then copies that into
//! the `String` it hands over: for a 50 MB chat line, the input, the scratch and the string
//! are three copies at once (issue 28). Borrowing the literal (`RawValue`) and unescaping it
//! here makes two, and the input goes right after.

/// The text of the JSON string literal `lit` (quotes included, as `RawValue::get` gives it),
/// or `None` when `lit` is not a string or holds anything this does not read exactly as
/// serde_json does (a control character, a lone surrogate, a bad escape): the caller then
/// lets serde_json parse it, for the same text or the same error.
pub(crate) fn unescape(lit: &str) -> Option<String> {
    let body = lit.strip_prefix('"')?.strip_suffix('"')?;
    // A control character is an error in a JSON string; a quote inside is one only escaped.
    if body.bytes().any(|b| b < 0x20) {
        return None;
    }
    let mut out = String::with_capacity(body.len());
    let mut rest = body;
    while let Some(at) = rest.find('\\') {
        plain(&mut out, &rest[..at])?;
        let esc = &rest[at + 1..];
        let (c, used) = match esc.as_bytes().first()? {
            b'"' => ('"', 1),
            b'\\' => ('\\', 1),
            b'/' => ('/', 1),
            b'b' => ('\u{8}', 1),
            b'f' => ('\u{c}', 1),
            b'n' => ('\n', 1),
            b'r' => ('\r', 1),
            b't' => ('\t', 1),
            b'u' => {
                let hi = hex4(esc.get(1..5)?)?;
                match hi {
                    0xD800..=0xDBFF => {
                        // A leading surrogate counts only with its trailing half right after.
                        let lo = hex4(esc.get(5..7).filter(|u| *u == "\\u").and(esc.get(7..11))?)?;
                        if !(0xDC00..=0xDFFF).contains(&lo) {
                            return None;
                        }
                        (char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))?, 11)
                    }
                    0xDC00..=0xDFFF => return None,
                    _ => (char::from_u32(hi)?, 5),
                }
            }
            _ => return None,
        };
        out.push(c);
        rest = &esc[used..];
    }
    plain(&mut out, rest)?;
    Some(out)
}

/// Append a run without escapes; `None` if it holds a quote (which would have ended the
/// string).
fn plain(out: &mut String, run: &str) -> Option<()> {
    if run.contains('"') {
        return None;
    }
    out.push_str(run);
    Some(())
}

/// Four hex digits (either case), as a code unit.
fn hex4(s: &str) -> Option<u32> {
    if s.len() != 4 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(s, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What serde_json makes of `lit` as a string, or `None` where it refuses it.
    fn serde(lit: &str) -> Option<String> {
        serde_json::from_str::<String>(lit).ok()
    }

    #[test]
    fn escapes_read_as_serde_json_reads_them() {
        for lit in [
            r#""plain""#,
            r#""""#,
            r#""a\nb\r\tc\"d\\e\/f\bg\fh""#,
            r#""\u00e9\u4E2D\u0000""#,
            r#""\ud83d\ude00 smile""#,
            "\"caf\u{e9} \u{1f600}\"",
        ] {
            assert_eq!(unescape(lit), serde(lit), "{lit}");
            assert!(unescape(lit).is_some(), "{lit}");
        }
    }

    #[test]
    fn what_serde_json_refuses_is_left_to_it() {
        for lit in [
            r#""\ud83d""#,
            r#""\ud83d\u0041""#,
            r#""\ude00""#,
            r#""\x""#,
            r#""\u12""#,
            r#""\u12g4""#,
            r#""ends in \""#,
            "\"tab\tinside\"",
            r#""a"b""#,
            "42",
            "null",
        ] {
            assert_eq!(unescape(lit), None, "{lit}");
        }
    }

    proptest! {
        /// Whatever this reads, serde_json reads the same.
        #[test]
        fn agrees_with_serde_json(body in r#"([a-z "\\/]|\\[\\"/bfnrtxu]|\\u[0-9a-fA-FdD]{0,4}|\\u[dD][89abAB][0-9a-f]{2}(\\u[dD][c-fC-F][0-9a-f]{2})?|é|中)*"#) {
            let lit = format!("\"{body}\"");
            if let Some(s) = unescape(&lit) {
                prop_assert_eq!(Some(s), serde(&lit));
            }
        }

        /// Any string serde_json writes reads back whole.
        #[test]
        fn reads_what_serde_json_writes(s in "\\PC*|[\\x00-\\x1f\"\\\\]*") {
            let lit = serde_json::to_string(&s).unwrap();
            prop_assert_eq!(unescape(&lit), Some(s));
        }
    }
}
