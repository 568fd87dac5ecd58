//! The report's step time: each step's busy and idle time on the device
//! with the most steps, and their percentiles (`step_stats`).

use xprof_query::ProfileSession;

use super::page::{Result, Section, ask, figure};
use super::svg::{self, Series};

/// The steps of the device with the most steps, per trace.
const STEPS_SQL: &str = "\
WITH per_device AS (
  SELECT trace_id, device_id, count(*) AS steps,
         row_number() OVER (PARTITION BY trace_id ORDER BY count(*) DESC, device_id) AS pick
  FROM step_stats GROUP BY trace_id, device_id)
SELECT s.trace_id, s.device_id, s.step_num, s.step_name, s.dur_ps, s.busy_ps, s.idle_ps
FROM step_stats s JOIN per_device p
  ON s.trace_id = p.trace_id AND s.device_id = p.device_id AND p.pick = 1
ORDER BY s.trace_id, s.step_num, s.start_ps";

/// The nearest-rank percentile `q` (0..1) of `values`.
fn percentile(values: &[f64], q: f64) -> f64 {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[rank - 1]
}

/// At most this many bars in a step-time chart: a 30,000-step profile
/// drew 15 MB of SVG, one bar per step.
const MAX_STEP_BARS: usize = 200;

/// Bars of `per_bar` consecutive steps each: the label "first–last" (or
/// the step's own), and the mean busy and idle time of those steps, so a
/// bar's height is their mean step time.
fn step_bars(
    step_nums: &[String],
    busy: &[f64],
    idle: &[f64],
    per_bar: usize,
) -> Vec<(String, f64, f64)> {
    let per_bar = per_bar.max(1);
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    (0..step_nums.len())
        .step_by(per_bar)
        .map(|start| {
            let end = (start + per_bar).min(step_nums.len());
            let label = if end - start == 1 {
                step_nums[start].clone()
            } else {
                format!("{}–{}", step_nums[start], step_nums[end - 1])
            };
            (label, mean(&busy[start..end]), mean(&idle[start..end]))
        })
        .collect()
}

pub(super) async fn section(session: &ProfileSession) -> Result<Option<Section>> {
    let steps = ask(session, STEPS_SQL).await?;
    if steps.rows() == 0 {
        return Ok(None);
    }
    let trace = steps.f64s("trace_id");
    let step_num = steps.strings("step_num");
    let dur = steps.f64s("dur_ps");
    let busy = steps.f64s("busy_ps");
    let idle = steps.f64s("idle_ps");
    let mut body = String::new();
    let mut traces: Vec<f64> = trace.clone();
    traces.dedup();
    for t in traces {
        let rows: Vec<usize> = (0..steps.rows()).filter(|&i| trace[i] == t).collect();
        let per_bar = rows.len().div_ceil(MAX_STEP_BARS);
        let bars = step_bars(
            &rows
                .iter()
                .map(|&i| step_num[i].clone())
                .collect::<Vec<_>>(),
            &rows.iter().map(|&i| busy[i]).collect::<Vec<_>>(),
            &rows.iter().map(|&i| idle[i]).collect::<Vec<_>>(),
            per_bar,
        );
        let categories: Vec<String> = bars.iter().map(|b| b.0.clone()).collect();
        let series = vec![
            Series {
                name: "busy (ops running)".into(),
                values: bars.iter().map(|b| b.1).collect(),
            },
            Series {
                name: "idle".into(),
                values: bars.iter().map(|b| b.2).collect(),
            },
        ];
        let durations: Vec<f64> = rows.iter().map(|&i| dur[i]).collect();
        let p50 = percentile(&durations, 0.5);
        let p90 = percentile(&durations, 0.9);
        let chart = svg::stacked_bars(
            &format!("Step time, trace {}", t as i64),
            "ps",
            &categories,
            &series,
            &[("p50".to_string(), p50), ("p90".to_string(), p90)],
        );
        body.push_str(&figure(
            "step_stats",
            &chart,
            STEPS_SQL,
            &format!(
                "{} steps; p50 {}, p90 {} (nearest rank). Busy is the union of the step's ops; idle the rest of the step.{}",
                rows.len(),
                svg::format_si(p50, "ps"),
                svg::format_si(p90, "ps"),
                if per_bar > 1 {
                    format!(" Each bar is the mean of {per_bar} consecutive steps (at most {MAX_STEP_BARS} bars).")
                } else {
                    String::new()
                }
            ),
        ));
    }
    Ok(Some(Section {
        id: "steps",
        title: "Step time".into(),
        views: vec!["step_stats"],
        body,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let v = [5.0, 1.0, 3.0, 2.0, 4.0];
        assert_eq!(percentile(&v, 0.5), 3.0);
        assert_eq!(percentile(&v, 0.9), 5.0);
        assert_eq!(percentile(&v, 0.2), 1.0);
        assert!(percentile(&[], 0.5).is_nan());
    }

    #[test]
    fn many_steps_draw_at_most_max_bars_of_their_means() {
        let n: usize = 30_001;
        let nums: Vec<String> = (0..n).map(|i| i.to_string()).collect();
        let busy: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let idle: Vec<f64> = (0..n).map(|i| (2 * i) as f64).collect();
        let per_bar = n.div_ceil(MAX_STEP_BARS);
        let bars = step_bars(&nums, &busy, &idle, per_bar);
        assert!(bars.len() <= MAX_STEP_BARS, "{}", bars.len());
        // Every step in exactly one bar, in order: the bars' means
        // weighted by their sizes give back the totals.
        let sizes: Vec<usize> = (0..bars.len())
            .map(|b| (n - b * per_bar).min(per_bar))
            .collect();
        assert_eq!(sizes.iter().sum::<usize>(), n);
        let busy_total: f64 = bars.iter().zip(&sizes).map(|(b, &k)| b.1 * k as f64).sum();
        let idle_total: f64 = bars.iter().zip(&sizes).map(|(b, &k)| b.2 * k as f64).sum();
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b;
        assert!(close(busy_total, busy.iter().sum::<f64>()), "{busy_total}");
        assert!(close(idle_total, idle.iter().sum::<f64>()), "{idle_total}");
        assert_eq!(bars[0].0, format!("0–{}", per_bar - 1));
        let last_start = (bars.len() - 1) * per_bar;
        assert_eq!(bars.last().unwrap().0, format!("{last_start}–{}", n - 1));
        assert_eq!(bars[0].1, (per_bar - 1) as f64 / 2.0);
        // Few steps: one bar each, their own values.
        let few = step_bars(&nums[..3], &busy[..3], &idle[..3], 1);
        assert_eq!(
            few,
            vec![
                ("0".into(), 0.0, 0.0),
                ("1".into(), 1.0, 2.0),
                ("2".into(), 2.0, 4.0)
            ]
        );
    }
}
