//! One argument of a tool's mode: its name, JSON type, default, cap and doc (the rows that
//! the argument checks, the JSON Schema and the REPL read).

/// JSON type of a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    /// A string.
    Str,
    /// An integer (integral floats accepted; clamped to the cap).
    Int,
    /// A number.
    Num,
    /// An array of strings.
    StrArray,
    /// `true` or `false`.
    Bool,
}

impl Ty {
    /// The JSON Schema type name.
    pub fn json_type(self) -> &'static str {
        match self {
            Ty::Str => "string",
            Ty::Int => "integer",
            Ty::Num => "number",
            Ty::StrArray => "array",
            Ty::Bool => "boolean",
        }
    }
}

/// One argument of a mode.
#[derive(Debug, Clone, Copy)]
pub struct FieldSpec {
    /// The key in the call's JSON object.
    pub name: &'static str,
    /// Its JSON type.
    pub ty: Ty,
    /// Whether a call must give it.
    pub required: bool,
    /// Default of an integer field (0 in the input means this).
    pub default: Option<i64>,
    /// Largest accepted integer; larger values are clamped.
    pub cap: Option<i64>,
    /// Smallest accepted integer; smaller values are an error.
    pub min: Option<i64>,
    /// What it means, for the JSON Schema.
    pub doc: &'static str,
}

/// A field with no integer rules.
pub(crate) const fn f(name: &'static str, ty: Ty, required: bool, doc: &'static str) -> FieldSpec {
    FieldSpec { name, ty, required, default: None, cap: None, min: None, doc }
}

/// An optional integer field with a default and a cap.
pub(crate) const fn int(name: &'static str, default: i64, cap: i64, doc: &'static str) -> FieldSpec {
    FieldSpec { name, ty: Ty::Int, required: false, default: Some(default), cap: Some(cap), min: None, doc }
}
