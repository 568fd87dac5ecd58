//! `length(x)` and `octet_length(x)` over strings *and* bytes.
//!
//! DataFusion's own take strings only: given a `bytes_value` column they
//! cast it to text and fail on the first payload that is not UTF-8 (an
//! `llo_proto`, an `Hlo Proto`). These replace them with the same answers
//! on strings (characters for `length`, bytes for `octet_length`, `INT`
//! for `Utf8`/`Utf8View` and `BIGINT` for `LargeUtf8`, as DataFusion types
//! them) and, as PostgreSQL does for `bytea`, the number of bytes of a
//! binary value.
//!
//! ```sql
//! SELECT key, length(bytes_value) FROM metadata_args WHERE key = 'llo_proto'
//! ```

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Int32Array, Int64Array};
use arrow::datatypes::DataType;
use datafusion::common::{Result, exec_err, plan_err};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDFImpl, Signature, Volatility,
};

/// What is counted in a string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Unit {
    Chars,
    Bytes,
}

/// `length` (characters of a string, bytes of a binary value) or
/// `octet_length` (bytes of either).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Length {
    name: &'static str,
    unit: Unit,
    signature: Signature,
}

impl Length {
    fn new(name: &'static str, unit: Unit) -> Self {
        Self {
            name,
            unit,
            signature: Signature::uniform(
                1,
                vec![
                    DataType::Utf8,
                    DataType::LargeUtf8,
                    DataType::Utf8View,
                    DataType::Binary,
                    DataType::LargeBinary,
                    DataType::BinaryView,
                ],
                Volatility::Immutable,
            ),
        }
    }

    /// `length(x)`: characters of a string, bytes of a binary value.
    pub fn characters() -> Self {
        Self::new("length", Unit::Chars)
    }

    /// `octet_length(x)`: bytes of either.
    pub fn octets() -> Self {
        Self::new("octet_length", Unit::Bytes)
    }
}

fn count<'a>(values: impl Iterator<Item = Option<&'a [u8]>>, unit: Unit) -> Vec<Option<i64>> {
    values
        .map(|v| {
            v.map(|b| match unit {
                // Only string arrays are counted in characters, and
                // their values are UTF-8.
                Unit::Chars => std::str::from_utf8(b).map_or(b.len(), |s| s.chars().count()),
                Unit::Bytes => b.len(),
            } as i64)
        })
        .collect()
}

impl ScalarUDFImpl for Length {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, args: &[DataType]) -> Result<DataType> {
        match args.first() {
            Some(DataType::LargeUtf8 | DataType::LargeBinary) => Ok(DataType::Int64),
            Some(_) => Ok(DataType::Int32),
            None => plan_err!("{} takes one argument", self.name),
        }
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let a = &arrays[0];
        let counts = match a.data_type() {
            DataType::Utf8 => count(
                a.as_string::<i32>().iter().map(|s| s.map(str::as_bytes)),
                self.unit,
            ),
            DataType::LargeUtf8 => count(
                a.as_string::<i64>().iter().map(|s| s.map(str::as_bytes)),
                self.unit,
            ),
            DataType::Utf8View => count(
                a.as_string_view().iter().map(|s| s.map(str::as_bytes)),
                self.unit,
            ),
            DataType::Binary => count(a.as_binary::<i32>().iter(), Unit::Bytes),
            DataType::LargeBinary => count(a.as_binary::<i64>().iter(), Unit::Bytes),
            DataType::BinaryView => count(a.as_binary_view().iter(), Unit::Bytes),
            other => return exec_err!("{} takes a string or bytes, not {other}", self.name),
        };
        let out: ArrayRef = match self.return_type(&[a.data_type().clone()])? {
            DataType::Int64 => Arc::new(counts.into_iter().collect::<Int64Array>()),
            _ => Arc::new(
                counts
                    .into_iter()
                    .map(|c| c.map(|c| c as i32))
                    .collect::<Int32Array>(),
            ),
        };
        Ok(ColumnarValue::Array(out))
    }
}
