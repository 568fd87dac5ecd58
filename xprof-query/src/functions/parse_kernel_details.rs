//! `parse_kernel_details(text)`: the GPU `kernel_details` stat as a struct.
//!
//! The profiler writes it as space-separated `key:value` pairs, e.g.
//! `regs:126 static_shared:0 dynamic_shared:49176 grid:256,1,1
//! block:128,1,1 occ_pct:25`. The struct's fields are named as XProf's
//! kernel report names them: `registers_per_thread`,
//! `static_shmem_bytes`, `dynamic_shmem_bytes`, `grid_x`..`grid_z`,
//! `block_x`..`block_z`, `occupancy_pct`. A key that is absent or not a
//! number gives a NULL field (`grid` and `block` need all three numbers,
//! as XProf's parser does); unknown keys are ignored; a NULL text gives a
//! NULL struct.
//!
//! ```sql
//! SELECT parse_kernel_details(str_value)['registers_per_thread']
//! FROM event_args WHERE key = 'kernel_details'
//! ```

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, Float64Builder, Int64Builder, StructArray};
use arrow::datatypes::{DataType, Field, Fields};
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDFImpl, Signature, Volatility,
};

/// The integer fields, in struct order (the last field, `occupancy_pct`,
/// is a double).
const INT_FIELDS: [&str; 9] = [
    "registers_per_thread",
    "static_shmem_bytes",
    "dynamic_shmem_bytes",
    "grid_x",
    "grid_y",
    "grid_z",
    "block_x",
    "block_y",
    "block_z",
];

/// The parsed values of one `kernel_details` text.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct KernelDetails {
    /// `INT_FIELDS` in order.
    pub ints: [Option<i64>; 9],
    /// `occ_pct`.
    pub occupancy_pct: Option<f64>,
}

impl KernelDetails {
    /// Parses a `kernel_details` text; never fails, unknown or bad parts
    /// are left NULL.
    pub fn parse(text: &str) -> Self {
        let mut out = Self::default();
        for part in text.split_ascii_whitespace() {
            let Some((key, value)) = part.split_once(':') else {
                continue;
            };
            // Dimensions count only as a whole: three numbers, or none.
            let dims = |out: &mut Self, first: usize| {
                let parsed: Vec<Option<i64>> =
                    value.split(',').map(|v| v.trim().parse().ok()).collect();
                if parsed.len() == 3 && parsed.iter().all(Option::is_some) {
                    out.ints[first..first + 3].copy_from_slice(&parsed);
                }
            };
            match key {
                "regs" => out.ints[0] = value.parse().ok(),
                "static_shared" => out.ints[1] = value.parse().ok(),
                "dynamic_shared" => out.ints[2] = value.parse().ok(),
                "grid" => dims(&mut out, 3),
                "block" => dims(&mut out, 6),
                "occ_pct" => out.occupancy_pct = value.parse().ok(),
                _ => {}
            }
        }
        out
    }
}

/// The `parse_kernel_details` scalar function.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ParseKernelDetails {
    signature: Signature,
}

impl Default for ParseKernelDetails {
    fn default() -> Self {
        Self {
            signature: Signature::exact(vec![DataType::Utf8], Volatility::Immutable),
        }
    }
}

fn fields() -> Fields {
    let mut fields: Vec<Field> = INT_FIELDS
        .iter()
        .map(|name| Field::new(*name, DataType::Int64, true))
        .collect();
    fields.push(Field::new("occupancy_pct", DataType::Float64, true));
    fields.into()
}

impl ScalarUDFImpl for ParseKernelDetails {
    fn name(&self) -> &str {
        "parse_kernel_details"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Struct(fields()))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let text = arrow::compute::cast(&arrays[0], &DataType::Utf8)?;
        let text = text.as_string::<i32>();
        let mut ints: Vec<Int64Builder> = INT_FIELDS
            .iter()
            .map(|_| Int64Builder::with_capacity(text.len()))
            .collect();
        let mut occupancy = Float64Builder::with_capacity(text.len());
        for row in 0..text.len() {
            let parsed = if text.is_null(row) {
                KernelDetails::default()
            } else {
                KernelDetails::parse(text.value(row))
            };
            for (builder, value) in ints.iter_mut().zip(parsed.ints) {
                builder.append_option(value);
            }
            occupancy.append_option(parsed.occupancy_pct);
        }
        let mut columns: Vec<ArrayRef> = ints
            .iter_mut()
            .map(|b| Arc::new(b.finish()) as ArrayRef)
            .collect();
        columns.push(Arc::new(occupancy.finish()));
        let nulls = text.nulls().cloned();
        let out = StructArray::try_new(fields(), columns, nulls)?;
        Ok(ColumnarValue::Array(Arc::new(out)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_profilers_text_and_leaves_bad_parts_null() {
        let k = KernelDetails::parse(
            "regs:126 static_shared:0 dynamic_shared:49176 grid:256,1,1 block:128,2,1 occ_pct:12.5",
        );
        assert_eq!(
            k.ints,
            [126, 0, 49176, 256, 1, 1, 128, 2, 1].map(Some),
            "{k:?}"
        );
        assert_eq!(k.occupancy_pct, Some(12.5));
        let k = KernelDetails::parse("regs:x grid:4 block:1,2,z junk occ_pct:");
        assert_eq!(k.ints, [None; 9]);
        assert_eq!(k.occupancy_pct, None);
        assert_eq!(KernelDetails::parse(""), KernelDetails::default());
    }
}
