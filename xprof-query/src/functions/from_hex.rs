//! `from_hex(text)`: the integer a hexadecimal string spells (`0x2b4`,
//! `2B4`), NULL for NULL, an empty string, a string that is not
//! hexadecimal, or a value past `BIGINT`. TPU kernel-profiling captures
//! write bundle addresses in hex (`long_name` of the `Tensor Core`
//! markers: `[134217741]  0x2b4: bundle.134217741`).
//!
//! ```sql
//! SELECT from_hex('0x2b4')  -- 692
//! ```

use arrow::array::{Array, ArrayRef, AsArray, Int64Array};
use arrow::datatypes::DataType;
use datafusion::common::{Result, exec_err};
use datafusion::logical_expr::{Signature, Volatility};

int64_function! {
    /// The `from_hex` scalar function.
    FromHex,
    name: "from_hex",
    signature: Signature::string(1, Volatility::Immutable),
    eval: from_hex,
}

/// The value of `text` read as hexadecimal, with an optional `0x`/`0X`.
pub fn parse_hex(text: &str) -> Option<i64> {
    let digits = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))
        .unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    i64::from_str_radix(digits, 16).ok()
}

/// [`parse_hex`] of each value of `args[0]`.
fn from_hex(args: &[ArrayRef], _rows: usize) -> Result<Int64Array> {
    let a = &args[0];
    Ok(match a.data_type() {
        DataType::Utf8 => a
            .as_string::<i32>()
            .iter()
            .map(|s| s.and_then(parse_hex))
            .collect(),
        DataType::LargeUtf8 => a
            .as_string::<i64>()
            .iter()
            .map(|s| s.and_then(parse_hex))
            .collect(),
        DataType::Utf8View => a
            .as_string_view()
            .iter()
            .map(|s| s.and_then(parse_hex))
            .collect(),
        other => return exec_err!("from_hex takes a string, not {other}"),
    })
}

#[cfg(test)]
mod tests {
    use super::parse_hex;

    #[test]
    fn hex_strings_read_as_their_value() {
        assert_eq!(parse_hex("0x2b4"), Some(0x2b4));
        assert_eq!(parse_hex("0X2B4"), Some(0x2b4));
        assert_eq!(parse_hex("ca3"), Some(0xca3));
        assert_eq!(parse_hex("0"), Some(0));
        assert_eq!(parse_hex("0x"), None);
        assert_eq!(parse_hex(""), None);
        assert_eq!(parse_hex("0x2g"), None);
        assert_eq!(parse_hex("-1"), None);
        assert_eq!(parse_hex("0x8000000000000000"), None);
    }
}
