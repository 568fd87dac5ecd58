//! What the charts' tests read their SVG with: attribute values, counts
//! of elements, the lightness of a colour.

/// The raw `data-value` attributes of `svg`, parsed.
pub(super) fn data_values(svg: &str) -> Vec<f64> {
    attribute_values(svg, "data-value")
        .iter()
        .map(|text| text.parse::<f64>().expect("data-value parses as f64"))
        .collect()
}

/// Every value of attribute `name` in `svg`, in order.
pub(super) fn attribute_values(svg: &str, name: &str) -> Vec<String> {
    let needle = format!(" {name}=\"");
    svg.match_indices(&needle)
        .map(|(index, _)| {
            let rest = &svg[index + needle.len()..];
            rest[..rest.find('"').expect("attribute is closed")].to_string()
        })
        .collect()
}

/// How often `needle` occurs in `haystack`.
pub(super) fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}

/// Relative luminance (0 dark .. 1 light) of a `#rrggbb` colour.
pub(super) fn luminance(colour: &str) -> f64 {
    let channel =
        |index: usize| f64::from(u8::from_str_radix(&colour[index..index + 2], 16).expect("hex"));
    0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5)
}
