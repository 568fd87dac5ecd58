//! The stats of one event, as the SQL's `stats` (the `kernel_details`,
//! `flow` and `source` pivot) and `args` (`trace_args`) CTEs give them.

use std::io::Write as _;

use arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use arrow::datatypes::{DataType, Float64Type, Int32Type, Int64Type, UInt64Type};
use datafusion::common::Result;

use crate::functions::format_g::format_g;

use super::inputs::{Parser, StringIds, column};
use super::lookups::Lookups;
use super::stat_values::{KeyInfo, MetadataStat, Pivot, Stat, ValueKind};

/// The value columns (`value_type`, int, uint, double, str) of a stats
/// batch, from column `at` on.
pub(super) struct StatValueColumns {
    pub(super) kinds: Vec<Option<u32>>,
    pub(super) int: ArrayRef,
    pub(super) uint: ArrayRef,
    pub(super) double: ArrayRef,
    pub(super) strs: Vec<Option<u32>>,
}

impl StatValueColumns {
    pub(super) fn read(
        batch: &RecordBatch,
        at: usize,
        types: &mut StringIds,
        strs: &mut StringIds,
    ) -> Result<Self> {
        Ok(Self {
            kinds: types.column(batch.column(at))?,
            int: column(batch, at + 1, &DataType::Int64)?,
            uint: column(batch, at + 2, &DataType::UInt64)?,
            double: column(batch, at + 3, &DataType::Float64)?,
            strs: strs.column(batch.column(at + 4))?,
        })
    }

    /// Row `row`'s kind and value bits, and its uint reading.
    pub(super) fn value(
        &self,
        row: usize,
        type_kinds: &[ValueKind],
    ) -> (ValueKind, u64, Option<u64>) {
        let int = self.int.as_primitive::<Int64Type>();
        let uint = self.uint.as_primitive::<UInt64Type>();
        let double = self.double.as_primitive::<Float64Type>();
        let as_uint = if uint.is_valid(row) {
            Some(uint.value(row))
        } else {
            int.is_valid(row).then(|| int.value(row) as u64)
        };
        let kind = self.kinds[row].map_or(ValueKind::Str, |k| type_kinds[k as usize]);
        let (kind, bits) = match kind {
            ValueKind::Int if int.is_valid(row) => (ValueKind::Int, int.value(row) as u64),
            ValueKind::Uint if uint.is_valid(row) => (ValueKind::Uint, uint.value(row)),
            ValueKind::Double if double.is_valid(row) => {
                (ValueKind::Double, double.value(row).to_bits())
            }
            ValueKind::Bytes => (ValueKind::Bytes, 0),
            ValueKind::Str => match self.strs[row] {
                Some(id) => (ValueKind::Str, u64::from(id)),
                None => (ValueKind::Null, 0),
            },
            _ => (ValueKind::Null, 0),
        };
        (kind, bits, as_uint)
    }
}

/// The kind each interned `value_type` is, as the `args` CTE's CASE reads it.
pub(super) fn type_kinds(types: &StringIds) -> Vec<ValueKind> {
    types
        .values
        .iter()
        .map(|t| match &**t {
            "int" => ValueKind::Int,
            "uint" => ValueKind::Uint,
            "double" => ValueKind::Double,
            "bytes" => ValueKind::Bytes,
            _ => ValueKind::Str,
        })
        .collect()
}

/// The `stats` and `args` CTEs' columns for one event.
#[derive(Default)]
pub(super) struct EventStats {
    pub(super) kernel_details: Option<u32>,
    pub(super) flow: Option<u64>,
    pub(super) source: Option<u32>,
    /// Whether `trace_args` is not NULL: its text is then in
    /// [`ArgsBuffers::text`].
    pub(super) trace_args: bool,
}

/// Reused buffers for one batch's `trace_args`.
#[derive(Default)]
pub(super) struct ArgsBuffers {
    pub(super) text: Vec<u8>,
    pub(super) own: Vec<u8>,
    pub(super) entries: Vec<u8>,
    pub(super) spans: Vec<(usize, usize)>,
}

impl Lookups {
    /// The key ids of a stats batch's `key` column, each key's
    /// [`KeyInfo`] known.
    pub(super) fn key_ids(&mut self, keys: &ArrayRef) -> Result<Vec<Option<u32>>> {
        let ids = self.keys.column(keys)?;
        let known = self.key_info.len();
        let new = self.keys.values[known..].iter().map(|k| KeyInfo::of(k));
        self.key_info.extend(new.collect::<Vec<_>>());
        Ok(ids)
    }

    pub(super) fn read_event_args(
        &mut self,
        batch: &RecordBatch,
        types: &mut StringIds,
    ) -> Result<()> {
        let trace = column(batch, 0, &DataType::Int32)?;
        let trace = trace.as_primitive::<Int32Type>();
        let event = column(batch, 1, &DataType::Int64)?;
        let event = event.as_primitive::<Int64Type>();
        let keys = self.key_ids(batch.column(2))?;
        let values = StatValueColumns::read(batch, 3, types, &mut self.strs)?;
        let kinds = type_kinds(types);
        for (row, &key) in keys.iter().enumerate() {
            let Some(key) = key else { continue };
            if !self.need.trace_args && self.key_info[key as usize].pivot.is_none() {
                continue;
            }
            let node = self.nodes.node((trace.value(row), event.value(row)));
            let (kind, value, as_uint) = values.value(row, &kinds);
            if self.key_info[key as usize].pivot == Some(Pivot::Flow)
                && let Some(flow) = as_uint
            {
                self.flows.push((node, flow));
            }
            self.stats.push(Stat {
                value,
                node,
                key,
                kind,
            });
        }
        Ok(())
    }

    pub(super) fn read_metadata_args(
        &mut self,
        batch: &RecordBatch,
        types: &mut StringIds,
    ) -> Result<()> {
        let trace = column(batch, 0, &DataType::Int32)?;
        let trace = trace.as_primitive::<Int32Type>();
        let device = column(batch, 1, &DataType::Int32)?;
        let device = device.as_primitive::<Int32Type>();
        let metadata = column(batch, 2, &DataType::Int64)?;
        let metadata = metadata.as_primitive::<Int64Type>();
        let keys = self.key_ids(batch.column(3))?;
        let values = StatValueColumns::read(batch, 4, types, &mut self.strs)?;
        let kinds = type_kinds(types);
        for (row, &key) in keys.iter().enumerate() {
            let Some(key) = key else { continue };
            let (kind, value, as_uint) = values.value(row, &kinds);
            self.metadata
                .entry((trace.value(row), device.value(row), metadata.value(row)))
                .or_default()
                .push(MetadataStat {
                    key,
                    kind,
                    value,
                    as_uint,
                });
        }
        Ok(())
    }

    /// The stats ordered by node (a counting sort: their order within a
    /// node does not matter), with each node's start.
    pub(super) fn settle_stats(&mut self) {
        self.flows.sort_unstable();
        let count = self.nodes.count();
        let mut at = vec![0u32; count + 1];
        for s in &self.stats {
            at[s.node as usize + 1] += 1;
        }
        for n in 0..count {
            at[n + 1] += at[n];
        }
        if !self.stats.is_sorted_by_key(|s| s.node) {
            let mut fill = at.clone();
            let mut sorted = vec![
                Stat {
                    value: 0,
                    node: 0,
                    key: 0,
                    kind: ValueKind::Null,
                };
                self.stats.len()
            ];
            for s in &self.stats {
                let slot = &mut fill[s.node as usize];
                sorted[*slot as usize] = *s;
                *slot += 1;
            }
            self.stats = sorted;
        }
        self.stats_at = at;
    }

    /// The event's own stats.
    pub(super) fn own_stats(&self, node: Option<u32>) -> &[Stat] {
        match node {
            Some(n) if (n as usize) + 1 < self.stats_at.len() => {
                &self.stats
                    [self.stats_at[n as usize] as usize..self.stats_at[n as usize + 1] as usize]
            }
            _ => &[],
        }
    }

    /// Writes one stat's `trace_args` entry (`key` U+0001 value) to
    /// `out`; false for a NULL entry.
    pub(super) fn write_entry(
        &self,
        out: &mut Vec<u8>,
        key: u32,
        kind: ValueKind,
        value: u64,
    ) -> bool {
        out.extend_from_slice(self.keys.get(key).as_bytes());
        out.push(1);
        match kind {
            ValueKind::Int => write!(out, "{}", value as i64).is_ok(),
            ValueKind::Uint => write!(out, "{value}").is_ok(),
            ValueKind::Double => {
                out.extend_from_slice(format_g(f64::from_bits(value)).as_bytes());
                true
            }
            ValueKind::Bytes => {
                out.extend_from_slice(b"<opaque bytes>");
                true
            }
            ValueKind::Str => {
                out.extend_from_slice(self.strs.get(value as u32).as_bytes());
                true
            }
            ValueKind::Null => false,
        }
    }

    /// The `stats` CTE's columns and the `args` CTE's `trace_args` of one
    /// event (`Parser` picks the `args` rule; `None` for `trace_args` when
    /// not needed).
    pub(super) fn event_stats(
        &self,
        node: Option<u32>,
        metadata: Option<&[MetadataStat]>,
        parser: Parser,
        scratch: &mut ArgsBuffers,
    ) -> EventStats {
        let own = self.own_stats(node);
        let metadata = metadata.unwrap_or(&[]);
        // The metadata's stats the event does not override (event_stats).
        let inherited = |m: &&MetadataStat| !own.iter().any(|s| s.key == m.key);
        let mut stats = EventStats::default();
        let larger_str = |best: &mut Option<u32>, kind: ValueKind, value: u64| {
            if kind == ValueKind::Str {
                let id = value as u32;
                if best.is_none_or(|b| self.strs.get(id) > self.strs.get(b)) {
                    *best = Some(id);
                }
            }
        };
        let pivot = |key: u32, kind: ValueKind, value: u64, stats: &mut EventStats| match self
            .key_info[key as usize]
            .pivot
        {
            Some(Pivot::KernelDetails) => larger_str(&mut stats.kernel_details, kind, value),
            Some(Pivot::Source) => larger_str(&mut stats.source, kind, value),
            _ => {}
        };
        for s in own {
            pivot(s.key, s.kind, s.value, &mut stats);
        }
        if let Some(n) = node {
            let first = self.flows.partition_point(|f| f.0 < n);
            stats.flow = self.flows[first..]
                .iter()
                .take_while(|f| f.0 == n)
                .map(|f| f.1)
                .max();
        }
        for m in metadata.iter().filter(inherited) {
            pivot(m.key, m.kind, m.value, &mut stats);
            if self.key_info[m.key as usize].pivot == Some(Pivot::Flow)
                && let Some(flow) = m.as_uint
            {
                stats.flow = stats.flow.max(Some(flow));
            }
        }
        if !self.need.trace_args {
            return stats;
        }
        // args: on the host the event's own stats only; elsewhere the
        // metadata's (sorted), then the event's (sorted), joined by ','.
        let bit = parser.rule_bit();
        let kept = |key: u32| self.key_info[key as usize].left_out & bit == 0;
        let text = &mut scratch.text;
        text.clear();
        let mut any = false;
        if parser != Parser::Host {
            let entries = metadata
                .iter()
                .filter(inherited)
                .filter(|m| kept(m.key))
                .map(|m| (m.key, m.kind, m.value));
            any |= self.write_sorted(entries, text, &mut scratch.entries, &mut scratch.spans);
        }
        let entries = own
            .iter()
            .filter(|s| kept(s.key))
            .map(|s| (s.key, s.kind, s.value));
        let own_text = &mut scratch.own;
        own_text.clear();
        let own_any =
            self.write_sorted(entries, own_text, &mut scratch.entries, &mut scratch.spans);
        if own_any {
            if any {
                text.push(b',');
            }
            text.extend_from_slice(own_text);
        }
        any |= own_any;
        if any && !text.is_empty() {
            for b in text.iter_mut() {
                if *b == 1 {
                    *b = b'=';
                }
            }
            stats.trace_args = true;
        }
        stats
    }

    /// Writes `entries` sorted and joined by ',' to `out` (the SQL's
    /// `array_to_string(array_sort(array_agg(entry)), ',')`, NULL entries
    /// skipped); false when there are none (a NULL list).
    pub(super) fn write_sorted(
        &self,
        entries: impl Iterator<Item = (u32, ValueKind, u64)>,
        out: &mut Vec<u8>,
        buffer: &mut Vec<u8>,
        spans: &mut Vec<(usize, usize)>,
    ) -> bool {
        buffer.clear();
        spans.clear();
        let mut any = false;
        for (key, kind, value) in entries {
            any = true;
            let start = buffer.len();
            if self.write_entry(buffer, key, kind, value) {
                spans.push((start, buffer.len()));
            } else {
                buffer.truncate(start);
            }
        }
        spans.sort_by(|a, b| buffer[a.0..a.1].cmp(&buffer[b.0..b.1]));
        for (i, &(from, to)) in spans.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(&buffer[from..to]);
        }
        any
    }
}
