//! `format_g(x)`: a `DOUBLE` as C's `printf("%g")` writes it, six
//! significant digits (`0.25`, `123457`, `3.72662e-05`, `1e+06`); NULL for
//! NULL. XProf's Events DB writes the double stats of an event this way
//! (`absl::StrCat` of a double), so `events_db.trace_args` uses it.
//!
//! The rounding comes first and picks the notation: 999999.7 rounds to
//! 1.00000e+06, whose exponent 6 is out of `%g`'s fixed range, so it is
//! `1e+06`, not `1000000`.
//!
//! ```sql
//! SELECT format_g(999999.7), format_g(9.9999996e-05)  -- '1e+06', '0.0001'
//! ```

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, StringArray};
use arrow::datatypes::{DataType, Float64Type};
use datafusion::common::{Result, exec_err};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDFImpl, Signature, Volatility,
};

/// Significant digits of `%g` without a precision.
const SIGNIFICANT_DIGITS: i32 = 6;

/// `value` as `printf("%g", value)` writes it in the C locale.
pub fn format_g(value: f64) -> String {
    if value.is_nan() {
        return if value.is_sign_negative() {
            "-nan"
        } else {
            "nan"
        }
        .to_owned();
    }
    if value.is_infinite() {
        return if value < 0.0 { "-inf" } else { "inf" }.to_owned();
    }
    if value == 0.0 {
        return if value.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    // Rounded to six significant digits first: Rust's `{:e}` rounds the
    // exact binary value half to even, as glibc does, and its exponent is
    // the one after rounding (the carry of 999999.7 into 1.00000e6).
    let scientific = format!("{:.*e}", (SIGNIFICANT_DIGITS - 1) as usize, value);
    let (mantissa, exponent) = scientific
        .split_once('e')
        .expect("`{:e}` always writes an exponent");
    let exponent: i32 = exponent.parse().expect("`{:e}` writes an integer exponent");
    if (-4..SIGNIFICANT_DIGITS).contains(&exponent) {
        let decimals = (SIGNIFICANT_DIGITS - 1 - exponent) as usize;
        trim_fraction_zeros(&format!("{value:.decimals$}")).to_owned()
    } else {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!(
            "{}e{sign}{:02}",
            trim_fraction_zeros(mantissa),
            exponent.unsigned_abs()
        )
    }
}

/// `text` without the zeros ending its fraction, nor a bare `.`.
fn trim_fraction_zeros(text: &str) -> &str {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        text
    }
}

/// The `format_g` scalar function.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct FormatG {
    signature: Signature,
}

impl Default for FormatG {
    fn default() -> Self {
        Self {
            signature: Signature::exact(vec![DataType::Float64], Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for FormatG {
    fn name(&self) -> &str {
        "format_g"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let values = &arrays[0];
        if values.data_type() != &DataType::Float64 {
            return exec_err!("format_g takes a DOUBLE, not {}", values.data_type());
        }
        let text: StringArray = values
            .as_primitive::<Float64Type>()
            .iter()
            .map(|value| value.map(format_g))
            .collect();
        Ok(ColumnarValue::Array(Arc::new(text) as ArrayRef))
    }
}

#[cfg(test)]
mod tests {
    use super::format_g;

    /// glibc's `printf("%g")` of the same values (`printf '%g\n' …`).
    #[test]
    fn writes_what_printf_writes() {
        for (value, printf) in [
            (0.25, "0.25"),
            (123456.7, "123457"),
            (3.726_621e-5, "3.72662e-05"),
            (1_234_567.0, "1.23457e+06"),
            (999_999.7, "1e+06"),
            (9.999_999_6e-5, "0.0001"),
            (99_999.95, "99999.9"),
            (0.000_123_456_7, "0.000123457"),
            (100.0, "100"),
            (-2.5e-10, "-2.5e-10"),
            (1e100, "1e+100"),
            (0.0, "0"),
            (f64::INFINITY, "inf"),
        ] {
            assert_eq!(format_g(value), printf, "{value:?}");
        }
    }
}
