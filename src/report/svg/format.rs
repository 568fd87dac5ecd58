//! Numbers as charts print them: [`format_si`] (three significant digits
//! with an SI or time prefix, percentages, "–" for NaN) and the shorter
//! tick labels of axes.

/// SI prefixes for plain quantities (counts, bytes, FLOP/s, ...).
const SI_SCALES: [(f64, &str); 7] = [
    (1.0, ""),
    (1e3, "k"),
    (1e6, "M"),
    (1e9, "G"),
    (1e12, "T"),
    (1e15, "P"),
    (1e18, "E"),
];

/// Time units below one second, in picoseconds.
const TIME_SCALES_PS: [(f64, &str); 5] = [
    (1.0, "ps"),
    (1e3, "ns"),
    (1e6, "µs"),
    (1e9, "ms"),
    (1e12, "s"),
];
const PS_PER_SECOND: f64 = 1e12;

/// Formats `value` with three significant digits and a unit prefix.
///
/// - `""` and other units use SI prefixes k, M, G, T, P, E:
///   `format_si(1234.0, "s") == "1.23 ks"`, `format_si(2.5e9, "") == "2.50G"`
///   (no space when the unit is empty); values below 1 keep the plain unit
///   (`"0.500"`).
/// - Time units `"ps"`, `"ns"`, `"us"`/`"µs"`, `"ms"` and `"s"` are shown in
///   the best of ps, ns, µs, ms and s (`format_si(2_500_000.0, "ps") ==
///   "2.50 µs"`); from 1000 s on, SI prefixes on seconds (`"1.23 ks"`).
/// - `"%"` is printed as given, with one decimal: `format_si(45.26, "%") ==
///   "45.3%"`.
/// - Zero prints as `"0"` with the unit (`"0 s"` for time units), negative
///   values get a leading `-`, infinities print as `"∞"`, and NaN prints as
///   `"–"` (an en dash).
pub fn format_si(value: f64, unit: &str) -> String {
    if value.is_nan() {
        return "–".to_string();
    }
    if unit == "%" {
        return format_percent(value);
    }
    match time_unit_in_ps(unit) {
        Some(ps_per_unit) => format_time_ps(value * ps_per_unit),
        None => format_scaled(value, &SI_SCALES, unit, !unit.is_empty()),
    }
}

/// A tick label: [`format_si`] without trailing zeros ("2.50 ms" → "2.5 ms").
pub(super) fn tick_label(value: f64, unit: &str) -> String {
    trim_trailing_zeros(&format_si(value, unit))
}

/// Drops trailing zeros after the decimal point of the number a formatted
/// value starts with ("1.00k" → "1k", "0.500" → "0.5", "1.00e-5" → "1e-5").
fn trim_trailing_zeros(text: &str) -> String {
    let number_end = text
        .char_indices()
        .find(|&(index, c)| !(c.is_ascii_digit() || c == '.' || (index == 0 && c == '-')))
        .map_or(text.len(), |(index, _)| index);
    let (number, rest) = text.split_at(number_end);
    if !number.contains('.') {
        return text.to_string();
    }
    let trimmed = number.trim_end_matches('0').trim_end_matches('.');
    format!("{trimmed}{rest}")
}

/// Picoseconds per `unit` for the time units [`format_si`] converts.
fn time_unit_in_ps(unit: &str) -> Option<f64> {
    match unit {
        "ps" => Some(1.0),
        "ns" => Some(1e3),
        "us" | "µs" | "μs" => Some(1e6),
        "ms" => Some(1e9),
        "s" => Some(PS_PER_SECOND),
        _ => None,
    }
}

/// Formats a duration in picoseconds in the best time unit.
fn format_time_ps(value_ps: f64) -> String {
    if value_ps == 0.0 {
        return "0 s".to_string();
    }
    if value_ps.is_finite() && value_ps.abs() < PS_PER_SECOND {
        format_scaled(value_ps, &TIME_SCALES_PS, "", true)
    } else {
        format_scaled(value_ps / PS_PER_SECOND, &SI_SCALES, "s", true)
    }
}

fn format_percent(value: f64) -> String {
    if value.is_infinite() {
        return format!("{}∞%", sign_prefix(value));
    }
    let text = format!("{value:.1}%");
    if text == "-0.0%" {
        "0.0%".to_string()
    } else {
        text
    }
}

/// Formats `value` (not NaN) with three significant digits in the largest
/// of `scales` (ascending `(factor, prefix)` pairs) that does not exceed
/// it, followed by prefix and unit; `spaced` puts a space before them.
fn format_scaled(value: f64, scales: &[(f64, &str)], unit: &str, spaced: bool) -> String {
    let with_suffix = |number: &str, prefix: &str| {
        let suffix = format!("{prefix}{unit}");
        if spaced && !suffix.is_empty() {
            format!("{number} {suffix}")
        } else {
            format!("{number}{suffix}")
        }
    };
    if value == 0.0 {
        return with_suffix("0", "");
    }
    if value.is_infinite() {
        return with_suffix(&format!("{}∞", sign_prefix(value)), "");
    }
    let magnitude = value.abs();
    let mut index = scales
        .iter()
        .rposition(|(factor, _)| magnitude >= *factor)
        .unwrap_or(0);
    if let Some((factor, _)) = scales.get(index)
        && round_sig3(magnitude / factor) >= 1000.0
        && index + 1 < scales.len()
    {
        index += 1;
    }
    let (factor, prefix) = scales.get(index).copied().unwrap_or((1.0, ""));
    with_suffix(&format_sig3(value / factor), prefix)
}

fn sign_prefix(value: f64) -> &'static str {
    if value < 0.0 { "-" } else { "" }
}

/// `value` (finite) with three significant digits; scientific notation
/// below 0.001 and from 1 000 000 on.
fn format_sig3(value: f64) -> String {
    if value == 0.0 || !value.is_finite() {
        return "0".to_string();
    }
    let magnitude = value.abs();
    if !(1e-3..1e6).contains(&magnitude) {
        return format!("{value:.2e}");
    }
    let rounded = round_sig3(magnitude);
    let decimals = if rounded >= 100.0 {
        0
    } else if rounded >= 10.0 {
        1
    } else if rounded >= 1.0 {
        2
    } else {
        // rounded is in [0.001, 1): 3 to 5 decimals.
        (2.0 - rounded.log10().floor()).clamp(3.0, 5.0) as usize
    };
    let signed = if value < 0.0 { -rounded } else { rounded };
    format!("{signed:.decimals$}")
}

/// `magnitude` (positive) rounded to three significant digits.
fn round_sig3(magnitude: f64) -> f64 {
    if !magnitude.is_normal() {
        return magnitude;
    }
    let exponent = magnitude.log10().floor().clamp(-300.0, 300.0) as i32;
    let factor = 10f64.powi(2 - exponent);
    let rounded = (magnitude * factor).round() / factor;
    if rounded.is_finite() {
        rounded
    } else {
        magnitude
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_si_picks_time_units() {
        assert_eq!(format_si(2_500_000.0, "ps"), "2.50 µs");
        assert_eq!(format_si(999.0, "ps"), "999 ps");
        assert_eq!(format_si(999_600.0, "ps"), "1.00 µs");
        assert_eq!(format_si(12_345.0, "ps"), "12.3 ns");
        assert_eq!(format_si(7.5e9, "ps"), "7.50 ms");
        assert_eq!(format_si(1.5e12, "ps"), "1.50 s");
        assert_eq!(format_si(999.9e9, "ps"), "1.00 s");
        assert_eq!(format_si(0.5, "ps"), "0.500 ps");
        assert_eq!(format_si(1234.0, "s"), "1.23 ks");
        assert_eq!(format_si(0.0015, "s"), "1.50 ms");
        assert_eq!(format_si(250.0, "ns"), "250 ns");
        assert_eq!(format_si(2500.0, "us"), "2.50 ms");
    }

    #[test]
    fn format_si_uses_si_prefixes() {
        assert_eq!(format_si(1500.0, ""), "1.50k");
        assert_eq!(format_si(2.5e6, ""), "2.50M");
        assert_eq!(format_si(3e9, ""), "3.00G");
        assert_eq!(format_si(4.56e12, ""), "4.56T");
        assert_eq!(format_si(7e15, ""), "7.00P");
        assert_eq!(format_si(12.0, ""), "12.0");
        assert_eq!(format_si(999.96, ""), "1.00k");
        assert_eq!(format_si(0.5, ""), "0.500");
        assert_eq!(format_si(0.0123, ""), "0.0123");
        assert_eq!(format_si(1234.0, "B"), "1.23 kB");
        assert_eq!(format_si(3.35e12, "B/s"), "3.35 TB/s");
        assert_eq!(format_si(1e30, ""), "1.00e12E");
    }

    #[test]
    fn format_si_handles_zero_negative_nan_and_percent() {
        assert_eq!(format_si(0.0, ""), "0");
        assert_eq!(format_si(-0.0, ""), "0");
        assert_eq!(format_si(0.0, "B"), "0 B");
        assert_eq!(format_si(0.0, "ps"), "0 s");
        assert_eq!(format_si(-1234.0, ""), "-1.23k");
        assert_eq!(format_si(-2_500_000.0, "ps"), "-2.50 µs");
        assert_eq!(format_si(f64::NAN, ""), "–");
        assert_eq!(format_si(f64::NAN, "%"), "–");
        assert_eq!(format_si(f64::NAN, "ps"), "–");
        assert_eq!(format_si(f64::INFINITY, ""), "∞");
        assert_eq!(format_si(f64::NEG_INFINITY, "ps"), "-∞ s");
        assert_eq!(format_si(45.26, "%"), "45.3%");
        assert_eq!(format_si(100.0, "%"), "100.0%");
        assert_eq!(format_si(-0.01, "%"), "0.0%");
        assert_eq!(format_si(f64::MAX, "ps"), "1.80e278 Es");
        assert_eq!(format_si(5e-324, ""), "4.94e-324");
    }
}
