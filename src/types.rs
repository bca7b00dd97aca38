//! Newtype ids and the small closed vocabularies (source, node and entity kinds) every module
//! shares.

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! string_id {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub String);

        impl $name {
            /// The id as a string slice.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                $name(s.to_string())
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> Self {
                $name(s)
            }
        }
    };
}

string_id!(
    /// A leaf or summary id: `L` or `S` followed by 32 hex digits (deterministic hashes).
    NodeId
);
string_id!(
    /// A source such as `slack:#eng`, `gmail:thread-8812`, `locomo:conv-26`.
    SourceId
);
string_id!(
    /// A canonical entity id `<kind>:<normalised surface>`.
    EntityId
);
string_id!(
    /// A tree id: `source:<source_id>` for the per-source trees.
    TreeId
);

impl NodeId {
    /// True when `s` has the shape of a node id; anything else cannot name a node, so callers
    /// can refuse hostile ids before they reach the store.
    pub fn is_well_formed(s: &str) -> bool {
        s.len() == 33
            && matches!(s.as_bytes()[0], b'L' | b'S')
            && s[1..].bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
    }

    /// True when `s` names a leaf (leaf ids start with `L`, summary ids with `S`): the test
    /// for a bare id, such as a vector's key.
    pub fn is_leaf_id(s: &str) -> bool {
        s.starts_with('L')
    }

    /// True when this id names a leaf.
    pub fn is_leaf(&self) -> bool {
        NodeId::is_leaf_id(&self.0)
    }

    /// The id of a node made from `parts`, with `prefix` `L` (leaf) or `S` (summary).
    pub fn derive(prefix: char, parts: &[&[u8]]) -> NodeId {
        let mut h = blake3::Hasher::new();
        for p in parts {
            // Length-prefix every part so ("ab","c") and ("a","bc") hash differently.
            h.update(&(p.len() as u64).to_le_bytes());
            h.update(p);
        }
        let hex = h.finalize().to_hex();
        NodeId(format!("{prefix}{}", &hex[..32]))
    }
}

impl TreeId {
    /// The tree of one source.
    pub fn for_source(source: &SourceId) -> TreeId {
        TreeId(format!("{SOURCE_TREE_PREFIX}{}", source.0))
    }

    /// The scope a tree covers (SPEC `tree_scope`): for a source tree, its source id.
    pub fn scope(&self) -> &str {
        self.0.strip_prefix(SOURCE_TREE_PREFIX).unwrap_or(&self.0)
    }
}

/// How a source tree's id starts: `source:<source_id>`.
const SOURCE_TREE_PREFIX: &str = "source:";

/// What kind of content a source holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    /// Chat messages: one leaf per message.
    Chat,
    /// E-mails: one leaf per message.
    Email,
    /// Documents: token-budget slices.
    Document,
}

impl SourceKind {
    /// Every kind, in a fixed order.
    pub const ALL: [SourceKind; 3] = [SourceKind::Chat, SourceKind::Email, SourceKind::Document];

    /// The lower-case name used in JSON and in the store.
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Chat => "chat",
            SourceKind::Email => "email",
            SourceKind::Document => "document",
        }
    }

    /// Parse the lower-case name.
    pub fn parse(s: &str) -> Option<SourceKind> {
        SourceKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// The kind a platform prefix implies (`slack:` → chat, `gmail:` → email, `notion:` →
    /// document), so a `source_kind` filter also finds sources named only by platform.
    pub fn from_platform_prefix(source_id: &str) -> Option<SourceKind> {
        let platform = source_id.split(':').next()?.to_ascii_lowercase();
        const CHAT: &[&str] = &[
            "slack",
            "discord",
            "telegram",
            "whatsapp",
            "signal",
            "teams",
            "matrix",
            "irc",
            "imessage",
            "sms",
            "chat",
            "locomo",
            "messenger",
            "mattermost",
            "zulip",
        ];
        const EMAIL: &[&str] = &["gmail", "imap", "outlook", "email", "mail", "mbox", "exchange", "fastmail"];
        const DOC: &[&str] = &[
            "notion",
            "drive",
            "gdrive",
            "doc",
            "docs",
            "file",
            "obsidian",
            "confluence",
            "dropbox",
            "web",
            "url",
            "onedrive",
            "markdown",
        ];
        if CHAT.contains(&platform.as_str()) {
            Some(SourceKind::Chat)
        } else if EMAIL.contains(&platform.as_str()) {
            Some(SourceKind::Email)
        } else if DOC.contains(&platform.as_str()) {
            Some(SourceKind::Document)
        } else {
            None
        }
    }
}

impl fmt::Display for SourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Leaf (raw content, level 0) or summary (sealed node, level ≥ 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    /// Raw content.
    Leaf,
    /// A sealed summary over consecutive children.
    Summary,
}

impl NodeKind {
    /// The kind of a node at `level` (0 = leaf).
    pub fn of_level(level: u32) -> NodeKind {
        if level == 0 { NodeKind::Leaf } else { NodeKind::Summary }
    }

    /// The lower-case name used in JSON and in the store.
    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::Leaf => "leaf",
            NodeKind::Summary => "summary",
        }
    }
}

/// What a forget record holds back: one leaf, a whole source, or a source's leaves in a time
/// range (the grains of `Forget`, as the store and an archive name them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ForgetGrain {
    /// One leaf, by id and by the hash of its text.
    Leaf,
    /// A whole source.
    Source,
    /// A source's leaves in a time range.
    Range,
}

impl ForgetGrain {
    /// The lower-case name used in JSON and in the store.
    pub fn as_str(self) -> &'static str {
        match self {
            ForgetGrain::Leaf => "leaf",
            ForgetGrain::Source => "source",
            ForgetGrain::Range => "range",
        }
    }

    /// The grain named `s` (`as_str`'s names), `None` for any other.
    pub fn parse(s: &str) -> Option<ForgetGrain> {
        [ForgetGrain::Leaf, ForgetGrain::Source, ForgetGrain::Range].into_iter().find(|g| g.as_str() == s)
    }
}

/// The closed set of entity kinds (SPEC §1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EntityKind {
    /// `email:alice@example.com`
    Email,
    /// `url:https://Example.com/Path` (case kept)
    Url,
    /// `handle:alice`
    Handle,
    /// `hashtag:launch-q2`
    Hashtag,
    /// `person:alice`
    Person,
    /// `organization:acme`
    Organization,
    /// `location:paris`
    Location,
    /// `event:launch`
    Event,
    /// `product:phoenix`
    Product,
    /// `datetime:2023-05-08`
    Datetime,
    /// `technology:rust`
    Technology,
    /// `artifact:roadmap.md`
    Artifact,
    /// `quantity:5 km`
    Quantity,
    /// Anything else worth indexing, e.g. a capitalised name of unknown kind.
    Misc,
    /// `topic:phoenix`
    Topic,
}

impl EntityKind {
    /// Every kind, in SPEC order.
    pub const ALL: [EntityKind; 15] = [
        EntityKind::Email,
        EntityKind::Url,
        EntityKind::Handle,
        EntityKind::Hashtag,
        EntityKind::Person,
        EntityKind::Organization,
        EntityKind::Location,
        EntityKind::Event,
        EntityKind::Product,
        EntityKind::Datetime,
        EntityKind::Technology,
        EntityKind::Artifact,
        EntityKind::Quantity,
        EntityKind::Misc,
        EntityKind::Topic,
    ];

    /// The lower-case name, also the canonical id's prefix.
    pub fn as_str(self) -> &'static str {
        match self {
            EntityKind::Email => "email",
            EntityKind::Url => "url",
            EntityKind::Handle => "handle",
            EntityKind::Hashtag => "hashtag",
            EntityKind::Person => "person",
            EntityKind::Organization => "organization",
            EntityKind::Location => "location",
            EntityKind::Event => "event",
            EntityKind::Product => "product",
            EntityKind::Datetime => "datetime",
            EntityKind::Technology => "technology",
            EntityKind::Artifact => "artifact",
            EntityKind::Quantity => "quantity",
            EntityKind::Misc => "misc",
            EntityKind::Topic => "topic",
        }
    }

    /// Parse the lower-case name.
    pub fn parse(s: &str) -> Option<EntityKind> {
        EntityKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

impl fmt::Display for EntityKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_ids_are_well_formed_and_length_prefixed() {
        let a = NodeId::derive('L', &[b"ab", b"c"]);
        let b = NodeId::derive('L', &[b"a", b"bc"]);
        assert_ne!(a, b);
        assert!(NodeId::is_well_formed(a.as_str()));
        assert!(!NodeId::is_well_formed("L../../etc/passwd"));
        assert!(!NodeId::is_well_formed(""));
    }

    #[test]
    fn platform_prefixes_map_to_kinds() {
        assert_eq!(SourceKind::from_platform_prefix("slack:#eng"), Some(SourceKind::Chat));
        assert_eq!(SourceKind::from_platform_prefix("gmail:thread-1"), Some(SourceKind::Email));
        assert_eq!(SourceKind::from_platform_prefix("notion:page"), Some(SourceKind::Document));
        assert_eq!(SourceKind::from_platform_prefix("weird"), None);
    }
}
