//! A decoded stat value, borrowing from the input where it can.

use std::borrow::Cow;

/// One XStat value (or the like from other formats).
#[derive(Debug, Clone, PartialEq)]
pub enum StatValue<'a> {
    /// No value set on the wire.
    None,
    /// `int64_value`.
    Int(i64),
    /// `uint64_value`.
    Uint(u64),
    /// `double_value`.
    Double(f64),
    /// `str_value` (repaired to UTF-8 when it was not).
    Str(Cow<'a, str>),
    /// `bytes_value`.
    Bytes(&'a [u8]),
    /// `ref_value`: an id into the stat metadata, with that entry's name
    /// when the id is known.
    Ref {
        /// The raw id.
        id: u64,
        /// The resolved string.
        name: Option<&'a str>,
    },
    /// `compressed_str_value`, inflated.
    CompressedStr(Cow<'a, str>),
}

/// A stat value spread over the typed value columns of the `*_args`
/// tables (`int_value`, `uint_value`, `double_value`, `str_value`,
/// `bytes_value`): the one place that mapping is defined.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ValueParts<'v> {
    /// `int_value`.
    pub int: Option<i64>,
    /// `uint_value` (also the raw id of a `ref_value`).
    pub uint: Option<u64>,
    /// `double_value`.
    pub double: Option<f64>,
    /// `str_value` (also a resolved `ref_value` or an inflated string).
    pub str: Option<&'v str>,
    /// `bytes_value`.
    pub bytes: Option<&'v [u8]>,
}

impl StatValue<'_> {
    /// The value as the typed value columns hold it.
    #[inline]
    pub fn parts(&self) -> ValueParts<'_> {
        let mut p = ValueParts::default();
        match self {
            StatValue::None => {}
            StatValue::Int(v) => p.int = Some(*v),
            StatValue::Uint(v) => p.uint = Some(*v),
            StatValue::Double(v) => p.double = Some(*v),
            StatValue::Str(v) | StatValue::CompressedStr(v) => p.str = Some(v),
            StatValue::Bytes(v) => p.bytes = Some(v),
            StatValue::Ref { id, name } => {
                p.uint = Some(*id);
                p.str = *name;
            }
        }
        p
    }

    /// The `value_type` name stored in the `*_args` tables.
    pub fn type_name(&self) -> &'static str {
        match self {
            StatValue::None => "none",
            StatValue::Int(_) => "int",
            StatValue::Uint(_) => "uint",
            StatValue::Double(_) => "double",
            StatValue::Str(_) => "str",
            StatValue::Bytes(_) => "bytes",
            StatValue::Ref { .. } => "ref",
            StatValue::CompressedStr(_) => "compressed_str",
        }
    }

    /// Every `value_type` name, in a fixed order.
    pub const TYPE_NAMES: [&'static str; 8] = [
        "none",
        "int",
        "uint",
        "double",
        "str",
        "bytes",
        "ref",
        "compressed_str",
    ];

    /// Position of [`Self::type_name`] in [`Self::TYPE_NAMES`].
    pub fn type_index(&self) -> usize {
        match self {
            StatValue::None => 0,
            StatValue::Int(_) => 1,
            StatValue::Uint(_) => 2,
            StatValue::Double(_) => 3,
            StatValue::Str(_) => 4,
            StatValue::Bytes(_) => 5,
            StatValue::Ref { .. } => 6,
            StatValue::CompressedStr(_) => 7,
        }
    }

    /// The value as an unsigned integer, when it is numeric and not
    /// negative (doubles rounded).
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            StatValue::Uint(v) => Some(*v),
            StatValue::Int(v) => u64::try_from(*v).ok(),
            StatValue::Double(v) if v.is_finite() && *v >= 0.0 => Some(v.round() as u64),
            _ => None,
        }
    }

    /// The value as a signed integer, when it is numeric (doubles rounded;
    /// an unsigned one above `i64::MAX` wraps).
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            StatValue::Int(v) => Some(*v),
            StatValue::Uint(v) => Some(*v as i64),
            StatValue::Double(v) if v.is_finite() => Some(v.round() as i64),
            _ => None,
        }
    }

    /// The value as a double, when it is numeric.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            StatValue::Int(v) => Some(*v as f64),
            StatValue::Uint(v) => Some(*v as f64),
            StatValue::Double(v) => Some(*v),
            _ => None,
        }
    }

    /// The value as a string, when it is one (plain, ref or compressed).
    pub fn as_str(&self) -> Option<&str> {
        match self {
            StatValue::Str(s) => Some(s),
            StatValue::Ref { name, .. } => *name,
            StatValue::CompressedStr(s) => Some(s),
            _ => None,
        }
    }
}
