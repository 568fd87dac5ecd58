//! SVG markup every chart writes: escaping, coordinates printed with one
//! decimal, the `<svg>` frame with its titles, grid and axis lines, text
//! elements, a mark's `data-label`/`data-value` attributes, and labels cut
//! to fit with their estimated width.

use super::style::{AXIS_COLOUR, CHAR_WIDTH, GRID_COLOUR, MARGIN};

/// Escapes `s` for XML/HTML text and attribute values: `&`, `<`, `>`, `"`
/// and `'` become entities. Control characters other than tab, newline and
/// carriage return (not allowed in XML) become U+FFFD.
pub fn escape(s: &str) -> String {
    let mut escaped = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            '\t' | '\n' | '\r' => escaped.push(c),
            c if c.is_control() => escaped.push('\u{FFFD}'),
            c => escaped.push(c),
        }
    }
    escaped
}

/// `base`, then `extra` on its own line when there is any.
pub(super) fn with_extra(base: &str, extra: &str) -> String {
    if extra.is_empty() {
        base.to_string()
    } else {
        format!("{base}\n{extra}")
    }
}

/// `label` cut to `max_chars` characters, the last one an ellipsis.
pub(super) fn truncate_label(label: &str, max_chars: usize) -> String {
    if label.chars().count() <= max_chars {
        return label.to_string();
    }
    let mut truncated: String = label.chars().take(max_chars.saturating_sub(1)).collect();
    truncated.push('…');
    truncated
}

/// The most characters among `texts`.
pub(super) fn max_chars(texts: &[String]) -> usize {
    texts
        .iter()
        .map(|text| text.chars().count())
        .max()
        .unwrap_or(0)
}

/// Estimated rendered width of `chars` characters.
pub(super) fn text_width(chars: usize) -> f64 {
    chars as f64 * CHAR_WIDTH
}

/// A coordinate rounded to one decimal, as printed.
pub(super) fn round_px(value: f64) -> f64 {
    (value * 10.0).round() / 10.0
}

/// A coordinate with one decimal; non-finite values print as 0 and -0.0 as
/// 0.0.
pub(super) fn px(value: f64) -> String {
    let value = if value.is_finite() { value } else { 0.0 };
    let text = format!("{value:.1}");
    if text == "-0.0" {
        "0.0".to_string()
    } else {
        text
    }
}

/// The `data-label` and `data-value` attributes of a mark, with a leading
/// space.
pub(super) fn mark_attributes(label: &str, value: f64) -> String {
    format!(" data-label=\"{}\" data-value=\"{value}\"", escape(label))
}

/// The opening `<svg>` tag, the accessible title and the visible title line.
pub(super) fn open_svg(width: f64, height: f64, title: &str) -> String {
    let title = escape(title);
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {width} {height}\" width=\"{width}\" height=\"{height}\" role=\"img\" aria-label=\"{title}\" font-family=\"sans-serif\" font-size=\"12\">\n<title>{title}</title>\n<text x=\"{MARGIN:.1}\" y=\"18.0\" font-weight=\"bold\">{title}</text>\n",
        width = px(width),
        height = px(height),
    )
}

pub(super) fn close_svg(mut svg: String) -> String {
    svg.push_str("</svg>\n");
    svg
}

pub(super) fn grid_line(x1: f64, y1: f64, x2: f64, y2: f64) -> String {
    line_element(x1, y1, x2, y2, GRID_COLOUR)
}

pub(super) fn axis_line(x1: f64, y1: f64, x2: f64, y2: f64) -> String {
    line_element(x1, y1, x2, y2, AXIS_COLOUR)
}

fn line_element(x1: f64, y1: f64, x2: f64, y2: f64, colour: &str) -> String {
    format!(
        "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{colour}\" stroke-width=\"1\"/>\n",
        px(x1),
        px(y1),
        px(x2),
        px(y2)
    )
}

/// A `<text>` element; `anchor` is start, middle or end.
pub(super) fn text_element(x: f64, y: f64, anchor: &str, content: &str) -> String {
    format!(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"{anchor}\">{}</text>\n",
        px(x),
        px(y),
        escape(content)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_replaces_markup_characters() {
        assert_eq!(
            escape("<a href=\"x\">Tom & Jerry's</a>"),
            "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;"
        );
        assert_eq!(escape("plain µs\tok\n"), "plain µs\tok\n");
        assert_eq!(escape("a\u{0}b\u{7}"), "a\u{FFFD}b\u{FFFD}");
        assert_eq!(escape(""), "");
    }
}
