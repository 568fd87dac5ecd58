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

/// `label` cut to `max_chars` characters by an ellipsis in the middle:
/// its start and its end are kept, so that names sharing a long prefix
/// (`void split_embedding_backward_codegen_rowwise_adagrad_…` kernels,
/// `COMPUTATION overlapping …` kernel types) stay apart. Charts put the
/// whole label in the mark's tooltip.
pub(super) fn truncate_label(label: &str, max_chars: usize) -> String {
    let count = label.chars().count();
    if count <= max_chars {
        return label.to_string();
    }
    let kept = max_chars.saturating_sub(1);
    let tail = kept / 2;
    let head = kept - tail;
    let mut truncated: String = label.chars().take(head).collect();
    truncated.push('…');
    truncated.extend(label.chars().skip(count - tail));
    truncated
}

/// A file path cut to at most `max_chars` characters with its file name
/// whole: whole folders are dropped from the middle, those at both ends
/// kept (the one holding the file first), and an ellipsis put in their
/// place (`/home/…/ops/pallas/matmul/pallas_matmul_tiled.py`), so that a
/// table of source lines never cuts off which file a line is in. A file
/// name too long for any folder to fit is shown whole after `…/`, even
/// past `max_chars`; a path with no folder is returned as it is. Show the
/// whole path on hover.
pub fn elide_path(path: &str, max_chars: usize) -> String {
    let len = |s: &str| s.chars().count();
    if len(path) <= max_chars {
        return path.to_string();
    }
    let Some(cut) = path.rfind(['/', '\\']) else {
        return path.to_string();
    };
    let sep = &path[cut..=cut];
    let file = &path[cut + 1..];
    let folders: Vec<&str> = path[..cut].split(sep).collect();
    // `head…tail`: folders[..head], the ellipsis, folders[tail..].
    let shown = |head: usize, tail: usize| -> usize {
        let kept: usize = folders[..head]
            .iter()
            .chain(&folders[tail..])
            .map(|f| len(f) + 1)
            .sum();
        kept + 2 + len(file)
    };
    let (mut head, mut tail) = (0, folders.len());
    let mut from_end = true;
    while head < tail {
        let one_more = |from_end: bool| {
            if from_end {
                (head, tail - 1)
            } else {
                (head + 1, tail)
            }
        };
        let (h, t) = one_more(from_end);
        if h <= t && shown(h, t) <= max_chars {
            (head, tail) = (h, t);
            from_end = !from_end;
            continue;
        }
        let (h, t) = one_more(!from_end);
        if h <= t && shown(h, t) <= max_chars {
            (head, tail) = (h, t);
            continue;
        }
        break;
    }
    let mut out = String::new();
    for folder in &folders[..head] {
        out.push_str(folder);
        out.push_str(sep);
    }
    out.push('…');
    for folder in &folders[tail..] {
        out.push_str(sep);
        out.push_str(folder);
    }
    out.push_str(sep);
    out.push_str(file);
    out
}

/// Each of `labels` cut to `max_chars` as [`truncate_label`] cuts it, and
/// where two would read alike, around where they differ: C++ kernel names
/// of one family share both their start (`void split_embedding_backward_`)
/// and their end (`…float, float, long)`), so such a label shows its start,
/// the stretch where it parts from the others, and its end, with an
/// ellipsis for each cut.
pub(super) fn distinct_labels(labels: &[String], max_chars: usize) -> Vec<String> {
    let first: Vec<String> = labels
        .iter()
        .map(|l| truncate_label(l, max_chars))
        .collect();
    let mut shown = first.clone();
    let chars: Vec<Vec<char>> = labels.iter().map(|l| l.chars().collect()).collect();
    for i in 0..labels.len() {
        let alike: Vec<usize> = (0..labels.len())
            .filter(|&j| j != i && first[j] == first[i] && labels[j] != labels[i])
            .collect();
        if alike.is_empty() {
            continue;
        }
        // Where this label first parts from every label that reads alike.
        let parts_at = alike
            .iter()
            .map(|&j| {
                chars[i]
                    .iter()
                    .zip(&chars[j])
                    .take_while(|(a, b)| a == b)
                    .count()
            })
            .max()
            .unwrap_or(0);
        shown[i] = elide_around(&chars[i], max_chars, parts_at);
    }
    shown
}

/// `label` cut to `max_chars`: a quarter from its start, a window around
/// the character at `at`, a quarter from its end, an ellipsis at each cut.
fn elide_around(label: &[char], max_chars: usize, at: usize) -> String {
    if label.len() <= max_chars || max_chars < 12 {
        return truncate_label(&label.iter().collect::<String>(), max_chars);
    }
    let head = max_chars / 4;
    let tail = max_chars / 4;
    let window = max_chars - head - tail - 2;
    let start = at
        .saturating_sub(window / 3)
        .clamp(head, label.len() - tail - window);
    let mut out: String = label[..head].iter().collect();
    if start > head {
        out.push('…');
    }
    out.extend(&label[start..start + window]);
    if start + window < label.len() - tail {
        out.push('…');
    }
    out.extend(&label[label.len() - tail..]);
    out
}

/// Estimated rendered width of `text` at 12px sans-serif, by the kind of
/// each character: capitals and wide letters take more than the average
/// [`CHAR_WIDTH`], spaces and narrow punctuation less. For layouts where a
/// label of capitals (`COMMUNICATION overlapping MEMORY`) must not run into
/// what follows it.
pub(super) fn label_width(text: &str) -> f64 {
    text.chars()
        .map(|c| match c {
            'M' | 'W' | 'm' | 'w' | '@' | '%' => 11.0,
            'I' => 3.8,
            'A'..='Z' => 8.7,
            '0'..='9' => 7.0,
            ' ' | 'i' | 'j' | 'l' | '.' | ',' | ':' | ';' | '\'' | '!' | '|' => 3.8,
            'f' | 'r' | 't' | '(' | ')' | '[' | ']' | '-' => 4.8,
            _ => CHAR_WIDTH,
        })
        .sum()
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
    fn long_labels_keep_their_start_and_end() {
        let a = "void split_embedding_backward_codegen_rowwise_adagrad_kernel<float, 1>";
        let b = "void split_embedding_backward_codegen_rowwise_adagrad_kernel<half, 2>";
        let (ta, tb) = (truncate_label(a, 40), truncate_label(b, 40));
        assert_eq!(ta.chars().count(), 40);
        assert_ne!(ta, tb);
        assert!(
            ta.starts_with("void split_embedding") && ta.ends_with("<float, 1>"),
            "{ta}"
        );
        assert_eq!(ta.chars().filter(|c| *c == '…').count(), 1);
        assert_eq!(truncate_label("short", 40), "short");
        // Two that read alike cut at both ends show where they part.
        let family = [
            "void split_embedding_backward_codegen_rowwise_adagrad_kernel_cta_per_row_1<float, float, float, long>(at::PackedTensorAccessor64<float, 1ul, at::RestrictPtrTraits>, float, float, long)",
            "void split_embedding_backward_codegen_rowwise_adagrad_kernel_warp_per_row_1<float, float, float, long>(at::PackedTensorAccessor64<float, 1ul, at::RestrictPtrTraits>, float, float, long)",
            "ampere_sgemm_128x64_nn",
        ]
        .map(String::from);
        let shown = distinct_labels(&family, 48);
        assert_eq!(
            truncate_label(&family[0], 48),
            truncate_label(&family[1], 48)
        );
        assert_ne!(shown[0], shown[1], "{shown:?}");
        assert!(
            shown[0].contains("cta") && shown[1].contains("warp"),
            "{shown:?}"
        );
        assert!(shown.iter().all(|s| s.chars().count() <= 48), "{shown:?}");
        assert_eq!(shown[2], "ampere_sgemm_128x64_nn");
        assert!(label_width("COMMUNICATION") > text_width("COMMUNICATION".len()));
    }

    #[test]
    fn long_paths_keep_their_file_name_whole() {
        let path =
            "/home/kernel_author/projects/tpu_kernels/src/ops/pallas/matmul/pallas_matmul_tiled.py";
        assert_eq!(
            elide_path(path, 48),
            "/home/…/ops/pallas/matmul/pallas_matmul_tiled.py"
        );
        // The file name is never cut, however long.
        let long_name = "/a/b/c/an_uncommonly_long_kernel_file_name_of_fifty_characters.py";
        assert_eq!(
            elide_path(long_name, 20),
            "…/an_uncommonly_long_kernel_file_name_of_fifty_characters.py"
        );
        assert_eq!(
            elide_path("/work/pallas_matmul.py", 48),
            "/work/pallas_matmul.py"
        );
        assert_eq!(
            elide_path("no_folder_at_all_but_long.py", 8),
            "no_folder_at_all_but_long.py"
        );
        assert_eq!(
            elide_path("C:\\Users\\me\\projects\\deep\\kernel.py", 20),
            "C:\\…\\deep\\kernel.py"
        );
    }

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
