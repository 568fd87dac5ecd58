//! `byte_length(bytes)`: the number of bytes of a binary value (NULL for
//! NULL), for the `bytes_value` columns that DataFusion's `octet_length`
//! (strings only) does not take.
//!
//! ```sql
//! -- how big the static LLO modules of a profile are
//! SELECT key, byte_length(bytes_value) FROM device_args WHERE key = 'llo_proto'
//! ```

use arrow::array::{Array, ArrayRef, AsArray, Int64Array};
use arrow::datatypes::DataType;
use datafusion::common::{Result, exec_err};
use datafusion::logical_expr::{Signature, Volatility};

int64_function! {
    /// The `byte_length` scalar function.
    ByteLength,
    name: "byte_length",
    signature: Signature::uniform(
        1,
        vec![
            DataType::Binary,
            DataType::LargeBinary,
            DataType::BinaryView,
        ],
        Volatility::Immutable,
    ),
    eval: byte_lengths,
}

/// The length of each of `rows` values of `args[0]`.
fn byte_lengths(args: &[ArrayRef], rows: usize) -> Result<Int64Array> {
    let a = &args[0];
    let len = |row: usize| -> Option<i64> {
        if a.is_null(row) {
            return None;
        }
        Some(match a.data_type() {
            DataType::Binary => a.as_binary::<i32>().value(row).len(),
            DataType::LargeBinary => a.as_binary::<i64>().value(row).len(),
            _ => a.as_binary_view().value(row).len(),
        } as i64)
    };
    if !matches!(
        a.data_type(),
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView
    ) {
        return exec_err!("byte_length takes bytes, not {}", a.data_type());
    }
    Ok((0..rows).map(len).collect())
}
