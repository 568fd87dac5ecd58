//! One stat as the rows read it: its key's meaning to the SQL
//! ([`KeyInfo`]), and its value ([`ValueKind`] and bits), of an event
//! ([`Stat`]) or of an event metadata ([`MetadataStat`]).

use super::inputs::Parser;

/// How a stat's value is written in `trace_args` (by `value_type`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum ValueKind {
    Int,
    Uint,
    Double,
    /// `str`, `ref`, `compressed_str`, `none`: `str_value`.
    Str,
    Bytes,
    /// The value column `value_type` names is NULL: a NULL entry.
    Null,
}

/// One stat: its event (node), key, and value as [`ValueKind`] says.
#[derive(Clone, Copy, Debug)]
pub(super) struct Stat {
    /// The value's bits: an int's, a uint, a double's, an interned string.
    pub(super) value: u64,
    pub(super) node: u32,
    pub(super) key: u32,
    pub(super) kind: ValueKind,
}

/// A stat of an event metadata: its key and value, and the `flow` pivot's
/// reading of it.
#[derive(Clone, Copy)]
pub(super) struct MetadataStat {
    pub(super) key: u32,
    pub(super) kind: ValueKind,
    pub(super) value: u64,
    /// `coalesce(uint_value, CAST(int_value AS BIGINT UNSIGNED))`.
    pub(super) as_uint: Option<u64>,
}

/// What the SQL does with a stat key.
#[derive(Clone, Copy, Default)]
pub(super) struct KeyInfo {
    /// The parsers whose `args` rule leaves the key out
    /// ([`Parser::rule_bit`]).
    pub(super) left_out: u8,
    /// `kernel_details`, `flow` or `source` (the `stats` CTE's columns).
    pub(super) pivot: Option<Pivot>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Pivot {
    KernelDetails,
    Flow,
    Source,
}

impl KeyInfo {
    /// The `args` CTE's exclusion lists and the `stats` CTE's keys.
    pub(super) fn of(key: &str) -> Self {
        let host = ["group_id", "correlation_id", "flow", "source"];
        let gpu_stream = [
            "tf_op",
            "hlo_op",
            "hlo_module",
            "program_id",
            "group_id",
            "correlation_id",
            "kernel_details",
            "tensor_shapes",
            "source_info",
        ];
        let other = ["flops", "bytes_accessed", "tf_op", "source", "source_info"];
        let mut left_out = 0;
        if host.contains(&key) {
            left_out |= Parser::Host.rule_bit();
        }
        if gpu_stream.contains(&key) {
            left_out |= Parser::GpuStream.rule_bit();
        }
        if other.contains(&key) {
            left_out |= Parser::Tpu.rule_bit();
        }
        let pivot = match key {
            "kernel_details" => Some(Pivot::KernelDetails),
            "flow" => Some(Pivot::Flow),
            "source" => Some(Pivot::Source),
            _ => None,
        };
        Self { left_out, pivot }
    }
}
