//! What XProf derives from an HLO instruction: its category (XLA's
//! `HloInstruction::ToCategory`) and its text (`ToString` with XProf's
//! print options: operand shapes printed, metadata, backend config and
//! large constants not), written from the proto fields.

use std::borrow::Cow;
use std::fmt::Write;

use super::fields::{Fields, Raw};
use super::module::{HloInstruction, HloModule};

/// XProf cuts expressions at this many bytes (`kMaxHlolNameSize`).
const MAX_EXPRESSION_BYTES: usize = 1000;

// `HloInstructionProto` field numbers (xla/service/hlo.proto).
const F_SHAPE: u32 = 3;
const F_LITERAL: u32 = 8;
const F_PARAMETER_NUMBER: u32 = 9;
const F_TUPLE_INDEX: u32 = 13;
const F_DIMENSIONS: u32 = 14;
const F_WINDOW: u32 = 15;
const F_SLICE_DIMENSIONS: u32 = 17;
const F_DYNAMIC_SLICE_SIZES: u32 = 20;
const F_DOT_DIMENSION_NUMBERS: u32 = 30;
const F_COMPARISON_DIRECTION: u32 = 63;
const F_COMPARISON_TYPE: u32 = 72;
const F_PADDING_CONFIG: u32 = 21;
const F_EXPONENT_BITS: u32 = 18;
const F_MANTISSA_BITS: u32 = 19;
const F_DISTRIBUTION: u32 = 23;
const F_PRECISION_CONFIG: u32 = 51;
const F_CUSTOM_CALL_HAS_SIDE_EFFECT: u32 = 65;
const F_CUSTOM_CALL_SCHEDULE: u32 = 76;
const F_FRONTEND_ATTRIBUTES: u32 = 68;
const F_CONTROL_PREDECESSOR_IDS: u32 = 37;
const F_CONSTRAIN_LAYOUT: u32 = 56;
const F_OPERAND_SHAPES_WITH_LAYOUT: u32 = 57;
const F_CUSTOM_CALL_API_VERSION: u32 = 77;
const F_IS_STABLE: u32 = 60;

/// Opcodes XLA's `IsOpElementwise` calls elementwise, plus those whose
/// instruction class always is (`constant`, `rng`, `map`).
const ELEMENTWISE: &[&str] = &[
    // Unary.
    "abs",
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atanh",
    "round-nearest-afz",
    "round-nearest-even",
    "ceil",
    "count-leading-zeros",
    "convert",
    "bitcast-convert",
    "copy",
    "cosine",
    "cosh",
    "erf",
    "exponential",
    "exponential-minus-one",
    "floor",
    "imag",
    "is-finite",
    "log",
    "log-plus-one",
    "not",
    "negate",
    "popcnt",
    "real",
    "reduce-precision",
    "rsqrt",
    "logistic",
    "sign",
    "sine",
    "sinh",
    "sqrt",
    "cbrt",
    "tan",
    "tanh",
    // Binary.
    "add",
    "atan2",
    "compare",
    "complex",
    "divide",
    "maximum",
    "minimum",
    "multiply",
    "power",
    "remainder",
    "subtract",
    "and",
    "or",
    "xor",
    "shift-left",
    "shift-right-arithmetic",
    "shift-right-logical",
    "stochastic-convert",
    // Ternary.
    "select",
    "clamp",
    // Elementwise by their instruction class.
    "constant",
    "rng",
    "map",
];

/// Bits of one element of a `PrimitiveType`.
fn bit_width(element_type: i64) -> i64 {
    match element_type {
        1 | 2 | 6 | 19 | 20 | 23 | 24 | 25 | 28 | 29 | 33 => 8,
        3 | 7 | 10 | 16 => 16,
        4 | 8 | 11 => 32,
        5 | 9 | 12 | 15 => 64,
        18 => 128,
        21 | 22 | 32 => 4,
        26 | 27 => 2,
        30 | 31 => 1,
        _ => 0,
    }
}

fn element_type(instr: &HloInstruction<'_>) -> i64 {
    match instr.fields.message(F_SHAPE) {
        Ok(Some(shape)) => shape.int(2),
        _ => 0,
    }
}

/// XLA's `IsElementwise()` (no operand index) of a non-fusion
/// instruction (a fusion's category never asks: it is its kind's).
fn is_elementwise(module: &HloModule<'_>, instr: &HloInstruction<'_>) -> bool {
    match instr.opcode.as_ref() {
        "bitcast-convert" => instr
            .operand_ids
            .first()
            .and_then(|id| module.instruction(*id))
            .is_some_and(|op| bit_width(element_type(op)) == bit_width(element_type(instr))),
        op => ELEMENTWISE.contains(&op),
    }
}

fn category<'a>(module: &HloModule<'a>, instr: &HloInstruction<'_>) -> Cow<'a, str> {
    let fixed = match instr.opcode.as_ref() {
        "transpose" | "copy" | "reshape" | "dynamic-reshape" => "data formatting",
        "fusion" => match instr.fusion_kind.as_ref() {
            "kLoop" => "loop fusion",
            "kInput" => "input fusion",
            "kOutput" => "output fusion",
            "kCustom" => "custom fusion",
            _ => "fusion",
        },
        "convolution" => {
            let mut category = String::from("convolution");
            let dims = instr
                .fields
                .message(F_WINDOW)
                .ok()
                .flatten()
                .and_then(|w| w.messages(1).ok())
                .unwrap_or_default();
            let dilated = |field: u32| dims.iter().any(|d| d.has(field) && d.int(field) != 1);
            if dilated(6) {
                category.push_str(" base-dilated");
            }
            if dilated(5) {
                category.push_str(" window-dilated");
            }
            return Cow::Owned(category);
        }
        _ if is_elementwise(module, instr) => "non-fusion elementwise",
        _ => return Cow::Owned(instr.opcode.to_string()),
    };
    Cow::Borrowed(fixed)
}

/// Lower-case XLA name of a `PrimitiveType` number.
fn primitive_type(n: i64) -> &'static str {
    match n {
        1 => "pred",
        2 => "s8",
        3 => "s16",
        4 => "s32",
        5 => "s64",
        6 => "u8",
        7 => "u16",
        8 => "u32",
        9 => "u64",
        10 => "f16",
        11 => "f32",
        12 => "f64",
        13 => "tuple",
        14 => "opaque",
        15 => "c64",
        16 => "bf16",
        17 => "token",
        18 => "c128",
        19 => "f8e5m2",
        20 => "f8e4m3fn",
        21 => "s4",
        22 => "u4",
        23 => "f8e4m3b11fnuz",
        24 => "f8e5m2fnuz",
        25 => "f8e4m3fnuz",
        26 => "s2",
        27 => "u2",
        28 => "f8e4m3",
        29 => "f8e3m4",
        30 => "s1",
        31 => "u1",
        32 => "f4e2m1fn",
        33 => "f8e8m0fnu",
        _ => "invalid",
    }
}

/// `ShapeUtil::HumanStringWithLayout` of a `ShapeProto`.
fn shape_text(out: &mut String, shape: &Fields<'_>) {
    let element_type = shape.int(2);
    if element_type == 13 {
        out.push('(');
        for (i, s) in shape.messages(4).unwrap_or_default().iter().enumerate() {
            separator(out, i);
            shape_text(out, s);
        }
        out.push(')');
        return;
    }
    out.push_str(primitive_type(element_type));
    out.push('[');
    let dims = shape.ints(3).unwrap_or_default();
    let dynamic = shape.ints(6).unwrap_or_default();
    for (i, d) in dims.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        if dynamic.get(i).is_some_and(|x| *x != 0) {
            out.push_str("<=");
        }
        let _ = write!(out, "{d}");
    }
    out.push(']');
    if let Ok(Some(layout)) = shape.message(5) {
        let mut text = String::from("{");
        join_ints(&mut text, &layout.ints(1).unwrap_or_default(), ",");
        let mut suffix = String::new();
        for t in layout.messages(6).unwrap_or_default() {
            if suffix.is_empty() {
                suffix.push('T');
            }
            suffix.push('(');
            let dims: Vec<String> = t
                .ints(1)
                .unwrap_or_default()
                .iter()
                .map(|d| {
                    if *d == i64::MIN {
                        "*".into()
                    } else {
                        d.to_string()
                    }
                })
                .collect();
            suffix.push_str(&dims.join(","));
            suffix.push(')');
        }
        let alignment = layout.int(16);
        if alignment > 1 {
            let _ = write!(suffix, "L({alignment})");
        }
        if layout.int(7) != 0 {
            let _ = write!(suffix, "E({})", layout.int(7));
        }
        if layout.int(8) != 0 {
            let _ = write!(suffix, "S({})", layout.int(8));
        }
        if !suffix.is_empty() {
            text.push(':');
            text.push_str(&suffix);
        }
        text.push('}');
        if text != "{}" {
            out.push_str(&text);
        }
    }
}

/// The separator before item `i` of an operand or tuple list: `, `, and
/// every fifth item XLA's `/*index=N*/` annotation.
fn separator(out: &mut String, i: usize) {
    if i == 0 {
        return;
    }
    if i.is_multiple_of(5) {
        let _ = write!(out, ", /*index={i}*/");
    } else {
        out.push_str(", ");
    }
}

fn join_ints(out: &mut String, values: &[i64], sep: &str) {
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        let _ = write!(out, "{v}");
    }
}

fn shape_of(instr: &HloInstruction<'_>) -> String {
    let mut out = String::new();
    if let Ok(Some(shape)) = instr.fields.message(F_SHAPE) {
        shape_text(&mut out, &shape);
    }
    out
}

impl<'a> HloModule<'a> {
    /// The instruction's result shape with layout (`f32[1024]{0}`).
    pub fn shape_text(&self, instr: &HloInstruction<'_>) -> String {
        shape_of(instr)
    }

    /// XLA's category of the instruction (`HloInstruction::ToCategory`).
    pub fn category(&self, instr: &HloInstruction<'_>) -> Cow<'a, str> {
        category(self, instr)
    }

    /// The instruction as HLO text, as XProf prints it (`ToString` with
    /// operand shapes, without metadata and backend config), cut at 1000
    /// bytes.
    pub fn expression(&self, instr: &HloInstruction<'_>) -> String {
        expression(self, instr)
    }
}

/// C's `%.<precision>g`.
fn format_g(x: f64, precision: usize) -> String {
    if x.is_nan() {
        return if x.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if x.is_infinite() {
        return if x < 0.0 { "-inf" } else { "inf" }.into();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let precision = precision.max(1);
    let exponent = format!("{:.*e}", precision - 1, x);
    let (mantissa, exp) = exponent.split_once('e').expect("exponent");
    let exp: i32 = exp.parse().expect("exponent");
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if exp < -4 || exp >= precision as i32 {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa), exp.abs())
    } else {
        let decimals = (precision as i32 - 1 - exp).max(0) as usize;
        trim(&format!("{x:.decimals$}"))
    }
}

/// An IEEE half as f64.
fn f16_to_f64(bits: u16) -> f64 {
    let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exponent = ((bits >> 10) & 0x1f) as i32;
    let mantissa = (bits & 0x3ff) as f64;
    sign * match exponent {
        0 => mantissa * 2f64.powi(-24),
        31 if mantissa == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        e => (1.0 + mantissa / 1024.0) * 2f64.powi(e - 15),
    }
}

/// XLA's float printing: `%.6g`, or `%.9g` when that does not read back
/// (f32); `%.15g` / `%.17g` for f64.
fn float_text(x: f64, is_f32: bool) -> String {
    let (short, long) = if is_f32 { (6, 9) } else { (15, 17) };
    let s = format_g(x, short);
    let round_trips = if is_f32 {
        s.parse::<f32>().ok() == Some(x as f32)
    } else {
        s.parse::<f64>().ok() == Some(x)
    };
    if round_trips || !x.is_finite() {
        s
    } else {
        format_g(x, long)
    }
}

/// The elements of a literal as text, when its type is one printed here.
fn literal_elements(literal: &Fields<'_>, element_type: i64) -> Option<Vec<String>> {
    let ints = |field: u32| literal.ints(field).ok();
    let floats32 = || -> Option<Vec<f32>> {
        let mut out = Vec::new();
        for v in literal.all(8) {
            match v {
                Raw::Fixed(bits) => out.push(f32::from_bits(bits as u32)),
                Raw::Len(b, _) => out.extend(
                    b.chunks_exact(4)
                        .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes"))),
                ),
                Raw::Varint(_) => return None,
            }
        }
        Some(out)
    };
    let floats64 = || -> Option<Vec<f64>> {
        let mut out = Vec::new();
        for v in literal.all(9) {
            match v {
                Raw::Fixed(bits) => out.push(f64::from_bits(bits)),
                Raw::Len(b, _) => out.extend(
                    b.chunks_exact(8)
                        .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes"))),
                ),
                Raw::Varint(_) => return None,
            }
        }
        Some(out)
    };
    // Narrow types are bytes fields: little-endian, one element per
    // 1 or 2 bytes.
    let bytes = |field: u32| -> Option<&[u8]> {
        match literal.get(field) {
            Some(Raw::Len(b, _)) => Some(b),
            None => Some(&[]),
            _ => None,
        }
    };
    let halves = |field: u32| -> Option<Vec<u16>> {
        Some(
            bytes(field)?
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect(),
        )
    };
    Some(match element_type {
        1 => ints(2)?.iter().map(|b| (*b != 0).to_string()).collect(),
        2 => bytes(15)?.iter().map(|b| (*b as i8).to_string()).collect(),
        6 => bytes(3)?.iter().map(|b| b.to_string()).collect(),
        3 => halves(17)?
            .iter()
            .map(|v| (*v as i16).to_string())
            .collect(),
        7 => halves(16)?.iter().map(|v| v.to_string()).collect(),
        // bf16 and f16 print with their max_digits10 (4 and 5) digits.
        16 => halves(13)?
            .iter()
            .map(|v| format_g(f32::from_bits((*v as u32) << 16) as f64, 4))
            .collect(),
        10 => halves(11)?
            .iter()
            .map(|v| format_g(f16_to_f64(*v), 5))
            .collect(),
        4 => ints(4)?.iter().map(|v| (*v as i32).to_string()).collect(),
        5 => ints(5)?.iter().map(|v| v.to_string()).collect(),
        8 => ints(6)?.iter().map(|v| (*v as u32).to_string()).collect(),
        9 => ints(7)?.iter().map(|v| (*v as u64).to_string()).collect(),
        11 => floats32()?
            .iter()
            .map(|v| float_text(*v as f64, true))
            .collect(),
        12 => floats64()?.iter().map(|v| float_text(*v, false)).collect(),
        _ => return None,
    })
}

/// A constant's literal as XLA prints it in an instruction: the value of a
/// scalar, `{a, b}` for a vector, nested braces for higher ranks, for at
/// most 10 elements; else `{...}`.
fn literal_text(instr: &HloInstruction<'_>) -> String {
    let elided = || "{...}".to_string();
    let Ok(Some(literal)) = instr.fields.message(F_LITERAL) else {
        return elided();
    };
    let Ok(Some(shape)) = literal.message(1) else {
        return elided();
    };
    let element_type = shape.int(2);
    let dims = shape.ints(3).unwrap_or_default();
    let count: i64 = dims.iter().product();
    if element_type == 13 || count > 10 || dims.len() > 2 {
        return elided();
    }
    let Some(mut elements) = literal_elements(&literal, element_type) else {
        return elided();
    };
    if elements.len() as i64 != count {
        return elided();
    }
    if element_type == 1 && !dims.is_empty() {
        for e in &mut elements {
            *e = if e == "true" { "1" } else { "0" }.into();
        }
    }
    match dims.as_slice() {
        [] => elements.remove(0),
        [_] => format!("{{{}}}", elements.join(", ")),
        [rows, cols] => {
            let cols = (*cols).max(0) as usize;
            let rows: Vec<String> = (0..*rows as usize)
                .map(|r| {
                    let row = &elements[r * cols..(r + 1) * cols];
                    if cols <= 1 {
                        format!("{{{}}}", row.join(", "))
                    } else {
                        format!("{{ {} }}", row.join(", "))
                    }
                })
                .collect();
            format!("{{ {} }}", rows.join(", "))
        }
        _ => elided(),
    }
}

fn expression(module: &HloModule<'_>, instr: &HloInstruction<'_>) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "%{} = {} {}(",
        instr.name,
        shape_of(instr),
        instr.opcode
    );
    match instr.opcode.as_ref() {
        "parameter" => {
            let _ = write!(out, "{}", instr.fields.int(F_PARAMETER_NUMBER));
        }
        "constant" => out.push_str(&literal_text(instr)),
        _ => {
            for (i, id) in instr.operand_ids.iter().enumerate() {
                separator(&mut out, i);
                match module.instruction(*id) {
                    Some(op) => {
                        let _ = write!(out, "{} %{}", shape_of(op), op.name);
                    }
                    None => {
                        let _ = write!(out, "%#{id}");
                    }
                }
            }
        }
    }
    out.push(')');
    attributes(&mut out, module, instr);
    if out.len() > MAX_EXPRESSION_BYTES {
        let mut cut = MAX_EXPRESSION_BYTES;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
    }
    out
}

/// `window={size=3x3 stride=2x2 pad=0_1x0_1 ...}` (window_util's text).
fn window_text(window: &Fields<'_>) -> String {
    let dims = window.messages(1).unwrap_or_default();
    let join = |f: &dyn Fn(&Fields<'_>) -> String| -> String {
        dims.iter().map(f).collect::<Vec<_>>().join("x")
    };
    let any = |f: &dyn Fn(&Fields<'_>) -> bool| dims.iter().any(f);
    let mut out = format!("size={}", join(&|d| d.int(1).to_string()));
    if any(&|d| d.int(2) != 1) {
        let _ = write!(out, " stride={}", join(&|d| d.int(2).to_string()));
    }
    if any(&|d| d.int(3) != 0 || d.int(4) != 0) {
        let _ = write!(
            out,
            " pad={}",
            join(&|d| format!("{}_{}", d.int(3), d.int(4)))
        );
    }
    if any(&|d| d.has(6) && d.int(6) != 1) {
        let _ = write!(
            out,
            " lhs_dilate={}",
            join(&|d| d.int(6).max(1).to_string())
        );
    }
    if any(&|d| d.has(5) && d.int(5) != 1) {
        let _ = write!(
            out,
            " rhs_dilate={}",
            join(&|d| d.int(5).max(1).to_string())
        );
    }
    if any(&|d| d.int(7) != 0) {
        let _ = write!(out, " rhs_reversal={}", join(&|d| d.int(7).to_string()));
    }
    out
}

fn attributes(out: &mut String, module: &HloModule<'_>, instr: &HloInstruction<'_>) {
    let f = &instr.fields;
    let ints = |field: u32| f.ints(field).unwrap_or_default();
    let braces = |out: &mut String, name: &str, values: &[i64]| {
        let _ = write!(out, ", {name}={{");
        join_ints(out, values, ",");
        out.push('}');
    };
    match instr.opcode.as_ref() {
        "broadcast" | "transpose" | "reduce" | "concatenate" | "reverse" | "sort" | "map"
        | "get-dimension-size" | "set-dimension-size" => {
            braces(out, "dimensions", &ints(F_DIMENSIONS));
        }
        "reshape" => {
            if let Some(d) = ints(F_DIMENSIONS).first().filter(|d| **d != -1) {
                let _ = write!(out, ", inferred_dimension={d}");
            }
        }
        "get-tuple-element" => {
            let _ = write!(out, ", index={}", f.int(F_TUPLE_INDEX));
        }
        "slice" => {
            let dims = f.messages(F_SLICE_DIMENSIONS).unwrap_or_default();
            let strided = dims.iter().any(|d| d.int(3) != 1);
            out.push_str(", slice={");
            for (i, d) in dims.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let _ = write!(out, "[{}:{}", d.int(1), d.int(2));
                if strided {
                    let _ = write!(out, ":{}", d.int(3));
                }
                out.push(']');
            }
            out.push('}');
        }
        "dynamic-slice" => braces(out, "dynamic_slice_sizes", &ints(F_DYNAMIC_SLICE_SIZES)),
        "pad" => {
            if let Ok(Some(config)) = f.message(F_PADDING_CONFIG) {
                let dims = config.messages(1).unwrap_or_default();
                let interior = dims.iter().any(|d| d.int(3) != 0);
                let text: Vec<String> = dims
                    .iter()
                    .map(|d| {
                        if interior {
                            format!("{}_{}_{}", d.int(1), d.int(2), d.int(3))
                        } else {
                            format!("{}_{}", d.int(1), d.int(2))
                        }
                    })
                    .collect();
                let _ = write!(out, ", padding={}", text.join("x"));
            }
        }
        "iota" => {
            let _ = write!(
                out,
                ", iota_dimension={}",
                ints(F_DIMENSIONS).first().unwrap_or(&0)
            );
        }
        "compare" => {
            let _ = write!(out, ", direction={}", f.str(F_COMPARISON_DIRECTION));
            let operand_type = instr
                .operand_ids
                .first()
                .and_then(|id| module.instruction(*id))
                .map(element_type)
                .unwrap_or(0);
            let default = match operand_type {
                10..=12 | 15 | 16 | 18..=20 | 23..=25 | 28 | 29 | 32 | 33 => "FLOAT",
                2..=5 | 21 | 26 | 30 => "SIGNED",
                _ => "UNSIGNED",
            };
            let ty = f.str(F_COMPARISON_TYPE);
            if !ty.is_empty() && ty != default {
                let _ = write!(out, ", type={ty}");
            }
        }
        "reduce-window" | "select-and-scatter" => {
            if let Ok(Some(w)) = f.message(F_WINDOW) {
                let _ = write!(out, ", window={{{}}}", window_text(&w));
            }
        }
        "reduce-precision" => {
            let _ = write!(
                out,
                ", exponent_bits={}, mantissa_bits={}",
                f.int(F_EXPONENT_BITS),
                f.int(F_MANTISSA_BITS)
            );
        }
        "rng" => {
            let d = match f.int(F_DISTRIBUTION) {
                1 => "rng_uniform",
                2 => "rng_normal",
                _ => "rng_invalid",
            };
            let _ = write!(out, ", distribution={d}");
        }
        "dot" => {
            if let Ok(Some(d)) = f.message(F_DOT_DIMENSION_NUMBERS) {
                for (field, name, always) in [
                    (3, "lhs_batch_dims", false),
                    (1, "lhs_contracting_dims", true),
                    (4, "rhs_batch_dims", false),
                    (2, "rhs_contracting_dims", true),
                ] {
                    let v = d.ints(field).unwrap_or_default();
                    if always || !v.is_empty() {
                        braces(out, name, &v);
                    }
                }
            }
            precision(out, f);
        }
        "fusion" => {
            let _ = write!(out, ", kind={}", instr.fusion_kind);
        }
        "custom-call" => {
            let _ = write!(
                out,
                ", custom_call_target=\"{}\"",
                instr.custom_call_target.escape_default()
            );
            if f.int(F_CONSTRAIN_LAYOUT) != 0 {
                out.push_str(", operand_layout_constraints={");
                for (i, s) in f
                    .messages(F_OPERAND_SHAPES_WITH_LAYOUT)
                    .unwrap_or_default()
                    .iter()
                    .enumerate()
                {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    shape_text(out, s);
                }
                out.push('}');
            }
            if f.int(F_CUSTOM_CALL_HAS_SIDE_EFFECT) != 0 {
                out.push_str(", custom_call_has_side_effect=true");
            }
            let schedule = match f.int(F_CUSTOM_CALL_SCHEDULE) {
                1 => Some("SCHEDULE_LATEST"),
                2 => Some("SCHEDULE_EARLIEST"),
                _ => None,
            };
            if let Some(schedule) = schedule {
                let _ = write!(out, ", schedule={schedule}");
            }
            let api = match f.int(F_CUSTOM_CALL_API_VERSION) {
                2 => Some("API_VERSION_STATUS_RETURNING"),
                3 => Some("API_VERSION_STATUS_RETURNING_UNIFIED"),
                4 => Some("API_VERSION_TYPED_FFI"),
                _ => None,
            };
            if let Some(api) = api {
                let _ = write!(out, ", api_version={api}");
            }
        }
        _ => {}
    }
    if instr.opcode == "sort" && f.int(F_IS_STABLE) != 0 {
        out.push_str(", is_stable=true");
    }
    // Called computations by name.
    let called = &instr.called_computation_ids;
    let name = |id: &i64| format!("%{}", module.computation_name(*id));
    match (instr.opcode.as_ref(), called.as_slice()) {
        (_, []) => {}
        // XLA stores a while loop's body before its condition.
        ("while", [body, condition, ..]) => {
            let _ = write!(out, ", condition={}, body={}", name(condition), name(body));
        }
        ("select-and-scatter", [select, scatter, ..]) => {
            let _ = write!(out, ", select={}, scatter={}", name(select), name(scatter));
        }
        ("conditional", _) => {
            let names: Vec<String> = called.iter().map(name).collect();
            let _ = write!(out, ", branch_computations={{{}}}", names.join(", "));
        }
        (
            "call" | "map" | "reduce-window" | "reduce" | "all-reduce" | "reduce-scatter"
            | "all-reduce-start" | "scatter" | "sort" | "scan",
            [first, ..],
        ) => {
            let _ = write!(out, ", to_apply={}", name(first));
        }
        ("custom-call", _) => {
            let names: Vec<String> = called.iter().map(name).collect();
            let _ = write!(out, ", called_computations={{{}}}", names.join(", "));
        }
        _ => {
            let names: Vec<String> = called.iter().map(name).collect();
            let _ = write!(out, ", calls={}", names.join(", "));
        }
    }
    if let Ok(Some(attrs)) = f.message(F_FRONTEND_ATTRIBUTES) {
        let mut pairs: Vec<(String, String)> = attrs
            .messages(1)
            .unwrap_or_default()
            .iter()
            .map(|e| (e.str(1).to_string(), e.str(2).to_string()))
            .collect();
        if !pairs.is_empty() {
            pairs.sort();
            let text: Vec<String> = pairs
                .iter()
                .map(|(k, v)| {
                    if v.starts_with('{') && v.ends_with('}') {
                        format!("{k}={v}")
                    } else {
                        format!("{k}=\"{}\"", v.escape_default())
                    }
                })
                .collect();
            let _ = write!(out, ", frontend_attributes={{{}}}", text.join(","));
        }
    }
    let predecessors = ints(F_CONTROL_PREDECESSOR_IDS);
    if !predecessors.is_empty() {
        let names: Vec<String> = predecessors
            .iter()
            .map(|id| format!("%{}", module.instruction_name(*id)))
            .collect();
        let _ = write!(out, ", control-predecessors={{{}}}", names.join(", "));
    }
}

/// `operand_precision={default,high}` when any is not DEFAULT.
fn precision(out: &mut String, f: &Fields<'_>) {
    let Ok(Some(config)) = f.message(F_PRECISION_CONFIG) else {
        return;
    };
    let values = config.ints(1).unwrap_or_default();
    if values.iter().any(|v| *v != 0) {
        let names: Vec<&str> = values
            .iter()
            .map(|v| match v {
                1 => "high",
                2 => "highest",
                _ => "default",
            })
            .collect();
        let _ = write!(out, ", operand_precision={{{}}}", names.join(","));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_as_c_printf_g() {
        for (x, precision, want) in [
            (0.0009995, 4, "0.0009995"),
            (9.5367431640625e-07, 4, "9.537e-07"),
            (1.4140625, 4, "1.414"),
            (-1.0, 6, "-1"),
            (100000.0, 6, "100000"),
            (1000000.0, 6, "1e+06"),
            (0.0001, 6, "0.0001"),
            (0.00001, 6, "1e-05"),
            (1.23456789, 6, "1.23457"),
        ] {
            assert_eq!(format_g(x, precision), want, "{x}");
        }
    }
}
