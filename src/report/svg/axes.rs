//! Axes: linear ticks at 1, 2 or 5 × 10^k from zero ([`nice_ticks`]), the
//! ticks of a start–end range ([`range_ticks`]), log10 axes of whole
//! decades ([`LogAxis`]), and where a value falls along an axis.

use super::format::tick_label;

/// Most labelled decades on a log axis.
const MAX_DECADE_LABELS: usize = 12;

/// Axis ticks from 0 to at least `max_value`: 4–6 ticks a "nice" step apart
/// (1, 2 or 5 × 10^k). A `max_value` that is not positive and finite counts
/// as 1.
pub(super) fn nice_ticks(max_value: f64) -> Vec<f64> {
    let max_value = if is_positive_finite(max_value) {
        max_value
    } else {
        1.0
    };
    let step = nice_step(max_value);
    // At least three intervals keep 4-6 ticks even at rounding edges.
    let intervals = (max_value / step - 1e-9).ceil().clamp(3.0, 5.0);
    let ticks: Vec<f64> = if step > 0.0 && intervals.is_finite() {
        (0..=intervals as usize)
            .map(|index| index as f64 * step)
            .collect()
    } else {
        Vec::new()
    };
    let usable = ticks.len() >= 2 && ticks.iter().all(|tick| tick.is_finite());
    if usable {
        ticks
    } else {
        (0..=4)
            .map(|index| max_value / 4.0 * f64::from(index))
            .collect()
    }
}

/// The smallest step of 1, 2 or 5 × 10^k that covers `max_value` (positive,
/// finite) in at most five intervals.
fn nice_step(max_value: f64) -> f64 {
    let raw_step = max_value / 5.0;
    let magnitude = 10f64.powf(raw_step.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|multiple| multiple * magnitude)
        .find(|step| max_value / step <= 5.0 + 1e-9)
        .unwrap_or(10.0 * magnitude)
}

/// The top of a linear axis given its ticks; always positive.
pub(super) fn domain_top(ticks: &[f64]) -> f64 {
    ticks
        .last()
        .copied()
        .filter(|top| is_positive_finite(*top))
        .unwrap_or(1.0)
}

/// `value / domain_max` clamped to `[0, 1]`; NaN gives 0.
pub(super) fn unit_fraction(value: f64, domain_max: f64) -> f64 {
    let fraction = value / domain_max;
    if fraction.is_nan() {
        0.0
    } else {
        fraction.clamp(0.0, 1.0)
    }
}

/// The largest positive, finite value, or 0.
pub(super) fn max_positive(values: impl Iterator<Item = f64>) -> f64 {
    values
        .filter(|value| is_positive_finite(*value))
        .fold(0.0, f64::max)
}

pub(super) fn is_positive_finite(value: f64) -> bool {
    value.is_finite() && value > 0.0
}

/// X ticks of a range axis as (fraction along the axis, label). Labels are
/// absolute values; if three significant digits make two neighbours equal,
/// ticks after the first are labelled as offsets ("+100 ns").
pub(super) fn range_ticks(x_start: f64, x_end: f64, unit: &str) -> Vec<(f64, String)> {
    let span = x_end - x_start;
    if !is_positive_finite(span) {
        return vec![
            (0.0, tick_label(x_start, unit)),
            (1.0, tick_label(x_end, unit)),
        ];
    }
    let offsets: Vec<f64> = nice_ticks(span)
        .into_iter()
        .filter(|offset| *offset <= span * (1.0 + 1e-9))
        .collect();
    let absolute: Vec<String> = offsets
        .iter()
        .map(|offset| tick_label(x_start + offset, unit))
        .collect();
    let distinct = absolute.windows(2).all(|pair| pair[0] != pair[1]);
    offsets
        .iter()
        .zip(absolute)
        .enumerate()
        .map(|(index, (offset, label))| {
            let label = if distinct || index == 0 {
                label
            } else {
                format!("+{}", tick_label(*offset, unit))
            };
            ((offset / span).clamp(0.0, 1.0), label)
        })
        .collect()
}

/// A log10 axis spanning whole decades `[10^low_exponent, 10^high_exponent]`.
pub(super) struct LogAxis {
    pub(super) low_exponent: i32,
    pub(super) high_exponent: i32,
}

impl LogAxis {
    /// The smallest whole-decade range holding all of `values` (positive and
    /// finite), at least one decade wide.
    pub(super) fn spanning(values: &[f64]) -> LogAxis {
        let positive = values
            .iter()
            .copied()
            .filter(|value| is_positive_finite(*value));
        let min_value = positive.clone().fold(f64::INFINITY, f64::min);
        let max_value = positive.fold(0.0, f64::max);
        if !is_positive_finite(min_value) || !is_positive_finite(max_value) {
            return LogAxis {
                low_exponent: 0,
                high_exponent: 1,
            };
        }
        // log10 of a positive finite f64 lies within [-324, 309].
        let low_exponent = min_value.log10().floor() as i32;
        let high_exponent = (max_value.log10().ceil() as i32).max(low_exponent + 1);
        LogAxis {
            low_exponent,
            high_exponent,
        }
    }

    /// Where `value` falls along the axis, from 0 (low end) to 1 (high end).
    pub(super) fn fraction(&self, value: f64) -> f64 {
        let span = f64::from(self.high_exponent - self.low_exponent);
        let fraction = (value.log10() - f64::from(self.low_exponent)) / span;
        if fraction.is_nan() {
            0.0
        } else {
            fraction.clamp(0.0, 1.0)
        }
    }

    /// Every decade exponent on the axis, with whether it gets a label (at
    /// most about [`MAX_DECADE_LABELS`] do).
    pub(super) fn decades(&self) -> Vec<(i32, bool)> {
        let count = usize::try_from(self.high_exponent - self.low_exponent)
            .unwrap_or(0)
            .saturating_add(1);
        let label_every = count.div_ceil(MAX_DECADE_LABELS).max(1);
        (self.low_exponent..=self.high_exponent)
            .enumerate()
            .map(|(index, exponent)| (exponent, index % label_every == 0))
            .collect()
    }
}

/// 10^exponent.
pub(super) fn decade(exponent: i32) -> f64 {
    10f64.powi(exponent)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_ticks_use_1_2_5_steps_from_zero() {
        assert_eq!(nice_ticks(7.3), vec![0.0, 2.0, 4.0, 6.0, 8.0]);
        assert_eq!(nice_ticks(1234.0), vec![0.0, 500.0, 1000.0, 1500.0]);
        assert_eq!(nice_ticks(100.0), vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        let mut max_value = 1e-12;
        while max_value < 1e15 {
            for multiple in [1.0, 1.3, 2.0, 2.7, 4.9, 5.0, 7.7, 9.99] {
                let target = max_value * multiple;
                let ticks = nice_ticks(target);
                assert!(
                    (4..=6).contains(&ticks.len()),
                    "{target}: {ticks:?} has {} ticks",
                    ticks.len()
                );
                assert_eq!(ticks[0], 0.0);
                let top = ticks[ticks.len() - 1];
                assert!(top >= target * (1.0 - 1e-9), "{target}: top {top}");
                let step = ticks[1];
                let mantissa = step / 10f64.powf(step.log10().floor());
                assert!(
                    [1.0, 2.0, 5.0, 10.0]
                        .iter()
                        .any(|nice| (mantissa - nice).abs() < 1e-6),
                    "{target}: step {step}"
                );
            }
            max_value *= 10.0;
        }
        for degenerate in [0.0, -5.0, f64::NAN, f64::INFINITY] {
            assert_eq!(nice_ticks(degenerate).last().copied(), Some(1.0));
        }
        assert!(nice_ticks(f64::MAX).iter().all(|tick| tick.is_finite()));
        assert!(nice_ticks(5e-324).len() >= 2);
    }

    #[test]
    fn range_ticks_fall_back_to_offsets_when_labels_collide() {
        let ticks = range_ticks(1e12, 1e12 + 1000.0, "ps");
        let labels: Vec<&str> = ticks.iter().map(|(_, label)| label.as_str()).collect();
        assert_eq!(
            labels,
            vec!["1 s", "+200 ps", "+400 ps", "+600 ps", "+800 ps", "+1 ns"]
        );
        let plain = range_ticks(0.0, 10.0, "");
        assert_eq!(plain.last().map(|(fraction, _)| *fraction), Some(1.0));
        assert_eq!(range_ticks(5.0, 5.0, "").len(), 2);
    }
}
