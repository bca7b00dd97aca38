//! Entities: canonical ids, extraction from text (rules + gazetteer of known surfaces), and
//! the Markdown registry of identities.

mod canonical;
mod context;
mod extract;
mod gazetteer;
mod mention;
mod registry;
mod words;

pub use canonical::canonical_id;
pub(crate) use canonical::fold_diacritics;
pub use extract::{ExtractOptions, Extractor};
pub use gazetteer::Gazetteer;
pub use mention::Mention;
pub(crate) use registry::split_front_matter;
pub use registry::{EntityRecord, Handle, Registry, VaultFingerprint};
