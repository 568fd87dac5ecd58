//! `parse_tf_op(text)`: a framework op's full name split into name, type
//! and kind, by the rules XProf uses for its framework op statistics.
//!
//! Returns a struct `{name, type, kind}`:
//! - `scope/name:Type` (TensorFlow style: a name of letters, digits and
//!   `_./>-`, a type starting with a capital or `_`) is kind `tensorflow`;
//! - `jit(f)/dot_general:dot_general` or `jit(f)/dot_general:` (a type,
//!   or when empty the last `/` part less a trailing `_<n>`, that is a
//!   lower-case identifier, optionally with `[...]`) is kind `jax`, type
//!   that identifier;
//! - an empty type otherwise gives kind `tensorflow` with that derived type;
//! - `Iterator:...` is kind `dataset` (type `Dataset`);
//! - a name without `:` starting with `MemcpyHToD`/`DToH`/`DToD`/`HToH`
//!   (any case) is kind `memcpy`, type the copy direction;
//! - anything else is kind `unknown`: the whole text as name, type empty.
//!
//! ```sql
//! SELECT parse_tf_op(tf_op)['type'] AS op_type, count(*) FROM events
//! WHERE tf_op IS NOT NULL GROUP BY 1
//! ```

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, StringBuilder, StructArray};
use arrow::datatypes::{DataType, Field, Fields};
use datafusion::common::Result;
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDFImpl, Signature, Volatility,
};

/// A parsed framework op name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TfOp {
    /// Op name (the scope path).
    pub name: String,
    /// Op type; empty for kind `unknown`.
    pub op_type: String,
    /// `tensorflow`, `jax`, `dataset`, `memcpy` or `unknown`.
    pub kind: &'static str,
}

fn is_tf_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '.')
        && chars.all(|c| c.is_ascii_alphanumeric() || "_./>-".contains(c))
}

fn is_tf_type(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_uppercase() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `[a-z_][a-z0-9_]*` optionally followed by `[...]`; returns the part
/// before the bracket.
fn jax_type(s: &str) -> Option<&str> {
    let (ident, rest) = match s.find('[') {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    };
    let mut chars = ident.chars();
    let ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && (rest.is_empty() || rest.ends_with(']'));
    ok.then_some(ident)
}

/// The last `/` part of `name`, less a trailing `_<digits>`.
fn derived_type(name: &str) -> &str {
    let last = name.rsplit('/').next().unwrap_or(name);
    match last.rfind('_') {
        Some(i) if i + 1 < last.len() && last[i + 1..].bytes().all(|b| b.is_ascii_digit()) => {
            &last[..i]
        }
        _ => last,
    }
}

impl TfOp {
    /// Parses a framework op's full name; never fails.
    pub fn parse(full: &str) -> Self {
        let unknown = || TfOp {
            name: full.to_string(),
            op_type: String::new(),
            kind: "unknown",
        };
        let Some((name, op_type)) = full.split_once(':') else {
            let lower = full.to_ascii_lowercase();
            for copy in ["MemcpyHToD", "MemcpyDToH", "MemcpyDToD", "MemcpyHToH"] {
                if lower.starts_with(&copy.to_ascii_lowercase()) {
                    return TfOp {
                        name: full.to_string(),
                        op_type: copy.into(),
                        kind: "memcpy",
                    };
                }
            }
            return unknown();
        };
        if name == "Iterator" {
            return TfOp {
                name: full.to_string(),
                op_type: "Dataset".into(),
                kind: "dataset",
            };
        }
        if is_tf_name(name) && is_tf_type(op_type) {
            return TfOp {
                name: name.into(),
                op_type: op_type.into(),
                kind: "tensorflow",
            };
        }
        // JAX writes `op_name:op_type` with a lower-case type, or no type
        // (then the last scope part names it).
        let given_or_derived = if op_type.is_empty() {
            derived_type(name)
        } else {
            op_type
        };
        if let Some(t) = jax_type(given_or_derived) {
            return TfOp {
                name: name.into(),
                op_type: t.into(),
                kind: "jax",
            };
        }
        if op_type.is_empty() {
            return TfOp {
                name: name.into(),
                op_type: given_or_derived.into(),
                kind: "tensorflow",
            };
        }
        unknown()
    }
}

/// The `parse_tf_op` scalar function.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct ParseTfOp {
    signature: Signature,
}

impl Default for ParseTfOp {
    fn default() -> Self {
        Self {
            signature: Signature::exact(vec![DataType::Utf8], Volatility::Immutable),
        }
    }
}

fn fields() -> Fields {
    ["name", "type", "kind"]
        .map(|n| Field::new(n, DataType::Utf8, false))
        .into_iter()
        .collect()
}

impl ScalarUDFImpl for ParseTfOp {
    fn name(&self) -> &str {
        "parse_tf_op"
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
        let mut builders: [StringBuilder; 3] = Default::default();
        for row in 0..text.len() {
            let op = if text.is_null(row) {
                TfOp::parse("")
            } else {
                TfOp::parse(text.value(row))
            };
            builders[0].append_value(&op.name);
            builders[1].append_value(&op.op_type);
            builders[2].append_value(op.kind);
        }
        let columns: Vec<ArrayRef> = builders
            .iter_mut()
            .map(|b| Arc::new(b.finish()) as ArrayRef)
            .collect();
        let nulls = text.nulls().cloned();
        let out = StructArray::try_new(fields(), columns, nulls)?;
        Ok(ColumnarValue::Array(Arc::new(out)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(s: &str) -> (String, String, &'static str) {
        let op = TfOp::parse(s);
        (op.name, op.op_type, op.kind)
    }

    #[test]
    fn splits_as_xprof_does() {
        let t = |n: &str, ty: &str, k| (n.to_string(), ty.to_string(), k);
        assert_eq!(
            parsed("GetEventForComputeStreamSyncPoint:ThenExecuteCallback"),
            t(
                "GetEventForComputeStreamSyncPoint",
                "ThenExecuteCallback",
                "tensorflow"
            )
        );
        assert_eq!(
            parsed("jit(f)/jit(main)/dot_general:"),
            t("jit(f)/jit(main)/dot_general", "dot_general", "jax")
        );
        assert_eq!(
            parsed("jit(add)/pallas_call_3:"),
            t("jit(add)/pallas_call_3", "pallas_call", "jax")
        );
        assert_eq!(
            parsed("XlaModule:"),
            t("XlaModule", "XlaModule", "tensorflow")
        );
        assert_eq!(
            parsed("jit(train_step)/op_7"),
            t("jit(train_step)/op_7", "", "unknown")
        );
        assert_eq!(
            parsed("ThunkExecutor::Execute"),
            t("ThunkExecutor::Execute", "", "unknown")
        );
        assert_eq!(parsed("end: dot"), t("end: dot", "", "unknown"));
        assert_eq!(
            parsed("Iterator::Prefetch"),
            t("Iterator::Prefetch", "Dataset", "dataset")
        );
        assert_eq!(
            parsed("Iterator:Batch"),
            t("Iterator:Batch", "Dataset", "dataset")
        );
        assert_eq!(
            parsed("jit(f)/dot_general:dot_general"),
            t("jit(f)/dot_general", "dot_general", "jax")
        );
        assert_eq!(
            parsed("jit(f)/reduce:reduce_sum[axes=(0,)]"),
            t("jit(f)/reduce", "reduce_sum", "jax")
        );
        assert_eq!(
            parsed("MEMCPYDToH"),
            t("MEMCPYDToH", "MemcpyDToH", "memcpy")
        );
        assert_eq!(parsed(""), t("", "", "unknown"));
    }
}
