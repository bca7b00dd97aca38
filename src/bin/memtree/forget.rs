//! `memtree forget`: the grain from the flags (one leaf, one source, a source's leaves in a
//! time range) and the receipt printed as JSON.

use crate::render::time::bound;
use anyhow::{Result, bail};
use memtree::Forget;

/// What to forget, from `--leaf`, `--source`, `--since` and `--until`.
pub(crate) fn grain(
    leaf: Option<&str>,
    source: Option<&str>,
    since: Option<&str>,
    until: Option<&str>,
) -> Result<Forget> {
    match (leaf, source) {
        (Some(l), None) if since.is_none() && until.is_none() => Ok(Forget::Leaf(l.into())),
        (Some(_), _) => bail!("--leaf forgets one leaf: it takes no --source, --since or --until"),
        (None, Some(s)) if since.is_none() && until.is_none() => Ok(Forget::Source(s.into())),
        (None, Some(s)) => Ok(Forget::Range {
            source: s.into(),
            since_ms: since.map(|d| bound(d, false)).transpose()?.unwrap_or(i64::MIN),
            until_ms: until.map(|d| bound(d, true)).transpose()?.unwrap_or(i64::MAX),
        }),
        (None, None) => bail!("say what to forget: --leaf ID, or --source ID [--since DATE] [--until DATE]"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_day_bounds_the_range_from_its_start_to_its_end() {
        let f = grain(None, Some("slack:#a"), Some("2023-05-26"), Some("2023-05-26")).unwrap();
        assert_eq!(
            f,
            Forget::Range { source: "slack:#a".into(), since_ms: 1_685_059_200_000, until_ms: 1_685_145_599_999 }
        );
        assert!(grain(Some("L1"), Some("s"), None, None).is_err());
        assert!(grain(None, None, None, None).is_err());
        assert!(grain(None, Some("s"), Some("yesterday"), None).is_err());
    }
}
