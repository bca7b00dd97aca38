//! The ChatGPT and Claude readers name a skipped conversation or message by its line in the
//! export, as the line-by-line readers do.

use super::{read_chatgpt_export, read_claude_export};
use crate::ingest::import::ReadReport;
use std::path::Path;

/// One of the two readers.
type Reader = fn(&Path) -> crate::Result<(Vec<crate::Item>, ReadReport)>;

/// (line, reason) of each warning of `text` read by `read`.
fn warnings(text: &str, read: Reader) -> Vec<(usize, String)> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("conversations.json");
    std::fs::write(&path, text).unwrap();
    let (_, report) = read(&path).unwrap();
    assert!(report.adds_up(), "{report:?}");
    report.warnings.into_iter().map(|w| (w.line, w.reason)).collect()
}

#[test]
fn chatgpt_skips_are_named_at_their_lines() {
    let text = r#"[
  {"id": "c1", "title": "Atlas", "create_time": 1683018000, "current_node": "m2",
   "mapping": {
     "m1": {"message": {"id": "m1", "author": {"role": "user"}, "create_time": 1683018000,
            "content": {"content_type": "text", "parts": ["when is the atlas cutover?"]}},
            "children": ["m2"]},
     "m2": {"parent": "m1", "message": {"id": "m2", "author": {"role": "assistant"}, "create_time": "soon",
            "content": {"content_type": "text", "parts": ["Friday"]}}}
   }},
  {"id": "c2", "title": "no mapping"},
  {"title": "a Claude conversation", "chat_messages": []}
]"#;
    let w = warnings(text, read_chatgpt_export);
    assert_eq!(w.iter().map(|(line, _)| *line).collect::<Vec<_>>(), vec![7, 10, 11], "{w:?}");
    assert!(w[0].1.contains("create_time"), "{w:?}");
    assert!(w[1].1.starts_with("conversation 2 (c2): no `mapping`"), "{w:?}");
    assert!(w[2].1.contains("import it as format `claude`") && !w[2].1.contains("--"), "{w:?}");
}

#[test]
fn claude_skips_are_named_at_their_lines() {
    let text = r#"{"conversations": [
  {"name": "no id", "chat_messages": []},
  {"uuid": "u1", "name": "Atlas",
   "chat_messages": [
     {"uuid": "x1", "sender": "human", "text": "when is the atlas cutover?"},
     {"uuid": "x2", "sender": "assistant", "text": "On Friday."}
   ]},
  {"mapping": {}}
]}"#;
    let w = warnings(text, read_claude_export);
    assert_eq!(w.iter().map(|(line, _)| *line).collect::<Vec<_>>(), vec![2, 5, 6, 8], "{w:?}");
    assert!(w[1].1.contains("message x1"), "{w:?}");
    assert!(w[3].1.contains("import it as format `chatgpt`") && !w[3].1.contains("--"), "{w:?}");
}
