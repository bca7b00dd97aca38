//! The modes of `memory_tree`, one file each (each implements [`Mode`](super::mode::Mode)),
//! and their table in SPEC order. A new mode is its file and one line below.

use super::Request;
use super::mode::row;
use super::spec::{Checks, ModeSpec, ToolSpec, mode_names, name_count};

/// Declares each mode's file and lists its row, so that a mode is named once.
macro_rules! modes {
    ($($file:ident :: $mode:ident),* $(,)?) => {
        $(mod $file;)*
        /// Every mode, in SPEC order.
        pub const MODES: &[ModeSpec] = &[$(row::<$file::$mode>()),*];
    };
}

modes! {
    search_entities::SearchEntities,
    query_source::QuerySource,
    drill_down::DrillDown,
    cover_window::CoverWindow,
    fetch_leaves::FetchLeaves,
    ingest_document::IngestDocument,
    walk::Walk,
}

/// Every accepted mode string, in SPEC order (walk's alias last).
pub const MODE_NAMES: &[&str] = &mode_names::<Request, { name_count(MODES) }>(MODES);

/// The `memory_tree` tool.
pub static TREE: ToolSpec<Request> = ToolSpec {
    name: super::TREE_NAME,
    doc: "Deterministic retrieval over the user's long-term memory (chat, e-mail, documents): pick a `mode`. No language model runs behind it; answers come in milliseconds.",
    selector: "mode",
    default: None,
    checks: Checks::PerMode,
    modes: MODES,
    names: MODE_NAMES,
};

/// The `memory_tree` row of a mode name or alias (`smart_walk` → walk's row).
pub fn mode(name: &str) -> Option<&'static ModeSpec> {
    TREE.find(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::Ty;

    #[test]
    fn names_come_from_the_rows() {
        // Derived, not repeated: every row's name then every alias, each found again.
        let mut want: Vec<&str> = MODES.iter().map(|m| m.mode).collect();
        want.extend(MODES.iter().flat_map(|m| m.aliases.iter().copied()));
        assert_eq!(MODE_NAMES, want);
        assert!(MODE_NAMES.contains(&"walk") && MODE_NAMES.contains(&"ingest_document"));
        for m in MODES {
            assert_eq!(mode(m.mode).map(|r| r.mode), Some(m.mode));
            for a in m.aliases {
                assert_eq!(mode(a).map(|r| r.mode), Some(m.mode));
            }
        }
        assert_eq!(mode("smart_walk").map(|m| m.mode), Some("walk"));
        assert!(mode("WALK").is_none());
    }

    #[test]
    fn a_primary_field_is_one_of_the_rows_fields() {
        let rows = MODES.iter().map(|m| (m.mode, m.primary, m.fields));
        for (mode, primary, fields) in
            rows.chain(super::super::recall::OPS.iter().map(|m| (m.mode, m.primary, m.fields)))
        {
            if let Some(p) = primary {
                assert!(fields.iter().any(|f| f.name == p), "{mode}: primary `{p}` is not a field");
            }
        }
    }

    #[test]
    fn every_mode_says_in_one_line_when_to_use_it_and_the_description_lists_them() {
        let tools = [
            (crate::tool::memory_tree_schema(), MODES.iter().map(|m| (m.mode, m.when)).collect::<Vec<_>>()),
            (crate::tool::memory_recall_schema(), super::super::recall::OPS.iter().map(|m| (m.mode, m.when)).collect()),
        ];
        for (def, rows) in tools {
            let description = def["description"].as_str().unwrap();
            for (mode, when) in rows {
                assert!(!when.trim().is_empty() && !when.contains('\n') && when.len() <= 160, "{mode}: {when:?}");
                let line = description.lines().find(|l| l.starts_with(&format!("- {mode}")));
                assert!(line.is_some_and(|l| l.ends_with(&format!(": {when}"))), "{mode} in:\n{description}");
            }
        }
        assert!(
            crate::tool::memory_tree_schema()["description"].as_str().unwrap().contains("- walk (also smart_walk): ")
        );
    }

    #[test]
    fn every_row_has_distinct_fields_and_integer_rules_only_on_integers() {
        for m in MODES {
            for (i, f) in m.fields.iter().enumerate() {
                assert!(m.fields[..i].iter().all(|g| g.name != f.name), "{}.{} twice", m.mode, f.name);
                if f.default.is_some() || f.cap.is_some() || f.min.is_some() {
                    assert_eq!(f.ty, Ty::Int, "{}.{}", m.mode, f.name);
                }
            }
        }
    }
}
