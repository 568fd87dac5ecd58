//! A plane's metadata: stat names (with the well-known ones recognized),
//! event names, and the stats shared through event metadata, resolved
//! once per plane so the per-event path only looks ids up.

use std::borrow::Cow;
use std::io::Read;

use xprof_format::hash::FxHashMap;
use xprof_format::{Interner, StatValue, Sym};

use super::scan::Span;
use crate::codec::pb::{Cursor, PbError, PbResult, WireType, utf8};

/// Well-known stats, by name (`formats/xplane-names.txt`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StatKind {
    Other,
    HloOp,
    HloModule,
    ProgramId,
    TfOp,
    HloCategory,
    Flops,
    ModelFlops,
    BytesAccessed,
    CorrelationId,
    GroupId,
    StepNum,
    DeviceOffsetPs,
    DeviceDurationPs,
    Flow,
    CounterValue,
    ShapeWithLayout,
    Source,
    SelfDurationPs,
}

impl StatKind {
    fn of(name: &str) -> StatKind {
        match name {
            "hlo_op" => StatKind::HloOp,
            "hlo_module" => StatKind::HloModule,
            "program_id" => StatKind::ProgramId,
            "tf_op" => StatKind::TfOp,
            "hlo_category" => StatKind::HloCategory,
            "flops" => StatKind::Flops,
            "model_flops" => StatKind::ModelFlops,
            "bytes_accessed" => StatKind::BytesAccessed,
            "correlation_id" => StatKind::CorrelationId,
            "group_id" => StatKind::GroupId,
            "step_num" => StatKind::StepNum,
            "device_offset_ps" => StatKind::DeviceOffsetPs,
            "device_duration_ps" => StatKind::DeviceDurationPs,
            "flow" => StatKind::Flow,
            "counter_value" => StatKind::CounterValue,
            "shape_with_layout" => StatKind::ShapeWithLayout,
            "source" => StatKind::Source,
            "self_duration_ps" => StatKind::SelfDurationPs,
            _ => StatKind::Other,
        }
    }
}

/// One stat-metadata entry.
#[derive(Debug, Clone)]
pub(crate) struct StatInfo<'a> {
    pub name: Cow<'a, str>,
    pub description: Cow<'a, str>,
    pub sym: Sym,
    pub kind: StatKind,
}

/// A stat value as on the wire, before `ref` resolution and inflation.
#[derive(Debug, Clone, Copy)]
pub(crate) enum RawValue<'a> {
    None,
    Double(f64),
    Uint(u64),
    Int(i64),
    Str(&'a [u8]),
    Bytes(&'a [u8]),
    Ref(u64),
    Compressed(&'a [u8], u64),
}

/// One decoded XStat.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawStat<'a> {
    pub metadata_id: u64,
    pub value: RawValue<'a>,
}

#[inline]
pub(crate) fn decode_stat(span: Span<'_>) -> PbResult<RawStat<'_>> {
    let mut c = span.cursor();
    let mut s = RawStat {
        metadata_id: 0,
        value: RawValue::None,
    };
    while !c.is_empty() {
        let (field, wire) = c.tag()?;
        s.value = match field {
            1 => {
                s.metadata_id = c.uint64(wire)?;
                continue;
            }
            2 => {
                if wire != WireType::Fixed64 {
                    return Err(PbError {
                        offset: c.offset(),
                        what: "double_value is not fixed64",
                    });
                }
                RawValue::Double(f64::from_bits(c.fixed64()?))
            }
            3 => RawValue::Uint(c.uint64(wire)?),
            4 => RawValue::Int(c.int64(wire)?),
            5 => RawValue::Str(c.len_field(wire)?.0),
            6 => RawValue::Bytes(c.len_field(wire)?.0),
            7 => RawValue::Ref(c.uint64(wire)?),
            8 => {
                let (b, off) = c.len_field(wire)?;
                RawValue::Compressed(b, off)
            }
            _ => {
                c.skip(wire)?;
                continue;
            }
        };
    }
    Ok(s)
}

/// The promoted columns of an event, from its metadata's stats and then
/// its own (its own win).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Promoted {
    pub hlo_op: Option<Sym>,
    pub hlo_module: Option<Sym>,
    pub tf_op: Option<Sym>,
    pub hlo_category: Option<Sym>,
    pub program_id: Option<u64>,
    pub flops: Option<i64>,
    pub model_flops: Option<i64>,
    pub bytes_accessed: Option<i64>,
    pub correlation_id: Option<i64>,
    pub group_id: Option<i64>,
    pub step_num: Option<i64>,
    pub device_offset_ps: Option<i64>,
    pub device_duration_ps: Option<i64>,
    pub self_duration_ps: Option<i64>,
    pub flow: Option<u64>,
    pub counter_value: Option<f64>,
    pub shape: Option<Sym>,
    pub source: Option<Sym>,
}

fn sym_of(v: &StatValue<'_>, ref_sym: Option<Sym>, interner: &mut Interner) -> Option<Sym> {
    if ref_sym.is_some() {
        return ref_sym;
    }
    match v.as_str() {
        Some(s) => Some(interner.intern(s)),
        None => match v {
            StatValue::Int(i) => Some(interner.intern(&i.to_string())),
            StatValue::Uint(u) => Some(interner.intern(&u.to_string())),
            StatValue::Double(d) => Some(interner.intern(&d.to_string())),
            _ => None,
        },
    }
}

impl Promoted {
    /// Takes a stat into account. `ref_sym` is the symbol of a `ref`
    /// value's string when the caller knows it (the stat metadata's own
    /// symbol), so the string is not hashed again.
    #[inline]
    pub fn apply(
        &mut self,
        kind: StatKind,
        v: &StatValue<'_>,
        ref_sym: Option<Sym>,
        interner: &mut Interner,
    ) {
        match kind {
            StatKind::Other => {}
            StatKind::HloOp => self.hlo_op = sym_of(v, ref_sym, interner).or(self.hlo_op),
            StatKind::HloModule => {
                self.hlo_module = sym_of(v, ref_sym, interner).or(self.hlo_module)
            }
            StatKind::TfOp => self.tf_op = sym_of(v, ref_sym, interner).or(self.tf_op),
            StatKind::HloCategory => {
                self.hlo_category = sym_of(v, ref_sym, interner).or(self.hlo_category)
            }
            StatKind::ShapeWithLayout => self.shape = sym_of(v, ref_sym, interner).or(self.shape),
            StatKind::Source => self.source = sym_of(v, ref_sym, interner).or(self.source),
            StatKind::ProgramId => self.program_id = v.as_u64().or(self.program_id),
            StatKind::Flops => self.flops = v.as_i64().or(self.flops),
            StatKind::ModelFlops => self.model_flops = v.as_i64().or(self.model_flops),
            StatKind::BytesAccessed => self.bytes_accessed = v.as_i64().or(self.bytes_accessed),
            StatKind::CorrelationId => self.correlation_id = v.as_i64().or(self.correlation_id),
            StatKind::GroupId => self.group_id = v.as_i64().or(self.group_id),
            StatKind::StepNum => self.step_num = v.as_i64().or(self.step_num),
            StatKind::DeviceOffsetPs => {
                self.device_offset_ps = v.as_i64().or(self.device_offset_ps)
            }
            StatKind::DeviceDurationPs => {
                self.device_duration_ps = v.as_i64().or(self.device_duration_ps)
            }
            StatKind::SelfDurationPs => {
                self.self_duration_ps = v.as_i64().or(self.self_duration_ps)
            }
            StatKind::Flow => {
                self.flow = match v {
                    StatValue::Uint(u) => Some(*u),
                    StatValue::Int(i) => Some(*i as u64),
                    _ => self.flow,
                }
            }
            StatKind::CounterValue => self.counter_value = v.as_f64().or(self.counter_value),
        }
    }

    /// Whether any cost-model stat marks the metadata as an HLO op.
    pub fn has_cost_model(&self) -> bool {
        self.hlo_category.is_some() || self.flops.is_some() || self.bytes_accessed.is_some()
    }
}

/// One event-metadata entry, resolved.
#[derive(Debug, Clone)]
pub(crate) struct EventMetaInfo<'a> {
    pub name: Cow<'a, str>,
    pub display_name: Cow<'a, str>,
    pub name_sym: Sym,
    pub display_sym: Sym,
    pub metadata: &'a [u8],
    pub child_ids: Vec<i64>,
    pub stats: Vec<Span<'a>>,
    pub promoted: Promoted,
}

/// Everything a plane's events are resolved against.
#[derive(Debug, Default)]
pub(crate) struct PlaneMeta<'a> {
    pub stats: FxHashMap<u64, StatInfo<'a>>,
    pub events: FxHashMap<i64, EventMetaInfo<'a>>,
    /// Metadata ids in file order (for deterministic output).
    pub event_order: Vec<i64>,
    pub stat_order: Vec<u64>,
    /// `(sym, kind)` of stat ids below its length (ids are small and
    /// dense in practice): the per-stat lookup is an index, not a hash.
    stat_dense: Vec<Option<(Sym, StatKind)>>,
    pub empty_sym: Sym,
}

/// A map entry `{key: int64 = 1, value: message = 2}`.
fn map_entry(span: Span<'_>) -> PbResult<(i64, Option<Span<'_>>)> {
    let mut c = span.cursor();
    let (mut key, mut value) = (0, None);
    while !c.is_empty() {
        let (field, wire) = c.tag()?;
        match field {
            1 => key = c.int64(wire)?,
            2 => {
                let (bytes, offset) = c.len_field(wire)?;
                value = Some(Span { bytes, offset });
            }
            _ => c.skip(wire)?,
        }
    }
    Ok((key, value))
}

impl<'a> PlaneMeta<'a> {
    pub fn load(
        stat_meta: &[Span<'a>],
        event_meta: &[Span<'a>],
        interner: &mut Interner,
        warnings: &mut Vec<String>,
    ) -> PbResult<Self> {
        let mut m = PlaneMeta {
            empty_sym: interner.intern(""),
            ..PlaneMeta::default()
        };
        for span in stat_meta {
            let (key, value) = map_entry(*span)?;
            let (mut name, mut description) = (Cow::Borrowed(""), Cow::Borrowed(""));
            if let Some(v) = value {
                let mut c = v.cursor();
                while !c.is_empty() {
                    let (field, wire) = c.tag()?;
                    match field {
                        2 => name = utf8(c.len_field(wire)?.0),
                        3 => description = utf8(c.len_field(wire)?.0),
                        _ => c.skip(wire)?,
                    }
                }
            }
            let info = StatInfo {
                sym: interner.intern(&name),
                kind: StatKind::of(&name),
                name,
                description,
            };
            if m.stats.insert(key as u64, info).is_none() {
                m.stat_order.push(key as u64);
            }
        }
        let dense_len = m
            .stats
            .keys()
            .copied()
            .filter(|id| *id < 1 << 16)
            .max()
            .map_or(0, |id| id as usize + 1);
        m.stat_dense = vec![None; dense_len];
        for (id, s) in &m.stats {
            if let Some(slot) = m.stat_dense.get_mut(*id as usize) {
                *slot = Some((s.sym, s.kind));
            }
        }
        let mut unknown_stats = 0usize;
        for span in event_meta {
            let (key, value) = map_entry(*span)?;
            let mut info = EventMetaInfo {
                name: Cow::Borrowed(""),
                display_name: Cow::Borrowed(""),
                name_sym: m.empty_sym,
                display_sym: m.empty_sym,
                metadata: &[],
                child_ids: Vec::new(),
                stats: Vec::new(),
                promoted: Promoted::default(),
            };
            if let Some(v) = value {
                let mut c = v.cursor();
                while !c.is_empty() {
                    let (field, wire) = c.tag()?;
                    match field {
                        2 => info.name = utf8(c.len_field(wire)?.0),
                        3 => info.metadata = c.len_field(wire)?.0,
                        4 => info.display_name = utf8(c.len_field(wire)?.0),
                        5 => {
                            let (bytes, offset) = c.len_field(wire)?;
                            info.stats.push(Span { bytes, offset });
                        }
                        6 => c.packed_int64(wire, &mut info.child_ids)?,
                        _ => c.skip(wire)?,
                    }
                }
            }
            info.name_sym = interner.intern(&info.name);
            info.display_sym = if info.display_name.is_empty() {
                info.name_sym
            } else {
                interner.intern(&info.display_name)
            };
            for s in &info.stats {
                let raw = decode_stat(*s)?;
                let Some(st) = m.stats.get(&raw.metadata_id) else {
                    unknown_stats += 1;
                    continue;
                };
                let kind = st.kind;
                let v = m.resolve(raw.value)?;
                info.promoted
                    .apply(kind, &v, m.ref_sym(raw.value), interner);
            }
            if m.events.insert(key, info).is_none() {
                m.event_order.push(key);
            }
        }
        if unknown_stats > 0 {
            warnings.push(format!(
                "{unknown_stats} event-metadata stats with unknown stat-metadata ids"
            ));
        }
        Ok(m)
    }

    /// Symbol and kind of stat-metadata id `id`.
    #[inline]
    pub fn stat_key(&self, id: u64) -> Option<(Sym, StatKind)> {
        match self.stat_dense.get(id as usize) {
            Some(entry) => *entry,
            None => self.stats.get(&id).map(|s| (s.sym, s.kind)),
        }
    }

    /// The symbol of a `ref` value's string (its stat metadata's name).
    #[inline]
    pub fn ref_sym(&self, raw: RawValue<'_>) -> Option<Sym> {
        match raw {
            RawValue::Ref(id) => self.stat_key(id).map(|(sym, _)| sym),
            _ => None,
        }
    }

    /// Resolves `ref_value` against the stat metadata and inflates
    /// `compressed_str_value`.
    pub fn resolve<'v>(&'v self, raw: RawValue<'v>) -> PbResult<StatValue<'v>> {
        Ok(match raw {
            RawValue::None => StatValue::None,
            RawValue::Double(d) => StatValue::Double(d),
            RawValue::Uint(u) => StatValue::Uint(u),
            RawValue::Int(i) => StatValue::Int(i),
            RawValue::Str(b) => StatValue::Str(utf8(b)),
            RawValue::Bytes(b) => StatValue::Bytes(b),
            RawValue::Ref(id) => StatValue::Ref {
                id,
                name: self.stats.get(&id).map(|s| s.name.as_ref()),
            },
            RawValue::Compressed(b, offset) => {
                let mut out = String::new();
                flate2::read::GzDecoder::new(b)
                    .read_to_string(&mut out)
                    .map_err(|_| PbError {
                        offset,
                        what: "compressed_str_value is not gzip of UTF-8",
                    })?;
                StatValue::CompressedStr(Cow::Owned(out))
            }
        })
    }
}

/// Reads packed or single stats of a message body (`field` = stats field).
pub(crate) fn for_each_stat<'a>(
    body: Span<'a>,
    field_no: u32,
    mut f: impl FnMut(Span<'a>) -> PbResult<()>,
) -> PbResult<()> {
    let mut c: Cursor<'a> = body.cursor();
    while !c.is_empty() {
        let (field, wire) = c.tag()?;
        if field == field_no {
            let (bytes, offset) = c.len_field(wire)?;
            f(Span { bytes, offset })?;
        } else {
            c.skip(wire)?;
        }
    }
    Ok(())
}
