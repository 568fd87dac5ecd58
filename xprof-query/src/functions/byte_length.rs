//! `byte_length(bytes)`: the number of bytes of a binary value (NULL for
//! NULL), for the `bytes_value` columns that DataFusion's `octet_length`
//! (strings only) does not take.
//!
//! ```sql
//! -- how big the static LLO modules of a profile are
//! SELECT key, byte_length(bytes_value) FROM device_args WHERE key = 'llo_proto'
//! ```

use std::sync::Arc;

use arrow::array::{Array, AsArray, Int64Array};
use arrow::datatypes::DataType;
use datafusion::common::{Result, exec_err};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDFImpl, Signature, Volatility,
};

/// The `byte_length` scalar function.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ByteLength {
    signature: Signature,
}

impl Default for ByteLength {
    fn default() -> Self {
        Self {
            signature: Signature::uniform(
                1,
                vec![
                    DataType::Binary,
                    DataType::LargeBinary,
                    DataType::BinaryView,
                ],
                Volatility::Immutable,
            ),
        }
    }
}

impl ScalarUDFImpl for ByteLength {
    fn name(&self) -> &str {
        "byte_length"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Int64)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let a = &arrays[0];
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
        let out: Int64Array = (0..args.number_rows).map(len).collect();
        Ok(ColumnarValue::Array(Arc::new(out)))
    }
}
