//! A pull parser over JSON bytes, for the JSON formats (Chrome trace,
//! Proton): it walks a mapped document in place, returning strings that
//! borrow from the input where they have no escapes, numbers as their
//! literal text (so times can be converted exactly), and the byte span of
//! any value, so a reader can note where an event is in a first pass and
//! parse it again in a second. Nothing is built for the document as a
//! whole.
//!
//! Every error carries the byte offset where the input stopped making
//! sense. Nesting is limited to [`MAX_DEPTH`], so hostile input cannot
//! exhaust the stack or the heap.

use std::borrow::Cow;

/// The deepest nesting of arrays and objects accepted.
pub const MAX_DEPTH: usize = 512;

/// Where and why the bytes are not the JSON expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    /// Byte offset of the problem.
    pub offset: usize,
    /// What was wrong.
    pub what: String,
}

/// Shorthand.
pub type JsonResult<T> = Result<T, JsonError>;

/// The kind of the next value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `{`.
    Object,
    /// `[`.
    Array,
    /// `"`.
    String,
    /// A number.
    Number,
    /// `true` or `false`.
    Bool,
    /// `null`.
    Null,
}

/// What [`Json::next_element_or_end`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrayStep {
    /// Another element, positioned at it.
    Element,
    /// The array's `]` (consumed).
    Close,
    /// The end of the input where a `,` or `]` was due.
    EndOfInput,
}

impl From<bool> for ArrayStep {
    fn from(more: bool) -> Self {
        if more { Self::Element } else { Self::Close }
    }
}

/// A scalar or the span of a composite value.
#[derive(Debug, Clone, PartialEq)]
pub enum Scalar<'a> {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A number, as written.
    Number(&'a str),
    /// A string, unescaped.
    String(Cow<'a, str>),
    /// An object or array: its text.
    Composite(&'a str),
}

/// The error of a JSON reader: `e` in the input at `path`, read as
/// `format`.
pub(crate) fn malformed(
    path: &std::path::Path,
    format: &'static str,
    e: JsonError,
) -> crate::error::ConvertError {
    crate::error::ConvertError::Malformed {
        path: path.to_path_buf(),
        format,
        offset: e.offset as u64,
        what: e.what,
    }
}

/// `input` checked to be UTF-8, its pages released behind the check (the
/// readers' passes touch them again).
pub(crate) fn document<'a>(
    input: &'a crate::input::InputBytes,
    format: &'static str,
) -> crate::error::Result<Utf8Doc<'a>> {
    Utf8Doc::check(input, |start, end| input.release(start, end))
        .map_err(|e| malformed(&input.path, format, e))
}

/// The UTF-8 byte-order mark, read as nothing at the start of a document.
pub const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// The parser: a position in `bytes`.
#[derive(Debug, Clone)]
pub struct Json<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// The whole of `bytes` is known to be UTF-8: strings are not checked
    /// one by one.
    utf8: bool,
}

/// Where the next `"` or `\` is in `b` from `i` (or `b.len()`), eight
/// bytes at a time.
#[inline]
fn find_quote_or_backslash(b: &[u8], mut i: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    while let Some(chunk) = b.get(i..i + 8) {
        let w = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        let q = w ^ (ONES * b'"' as u64);
        let s = w ^ (ONES * b'\\' as u64);
        // A zero byte of q or s is a match; the lowest flagged byte is
        // always a true one.
        let hits = (q.wrapping_sub(ONES) & !q | s.wrapping_sub(ONES) & !s) & HIGH;
        if hits != 0 {
            return i + (hits.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&c) = b.get(i) {
        if c == b'"' || c == b'\\' {
            break;
        }
        i += 1;
    }
    i
}

/// Bytes checked to be UTF-8 as a whole: parsers over them
/// ([`Utf8Doc::at`]) do not check strings one by one.
#[derive(Debug, Clone, Copy)]
pub struct Utf8Doc<'a>(&'a [u8]);

impl<'a> Utf8Doc<'a> {
    /// Checks `bytes`, 16 MiB at a time, calling `after(start, end)` after
    /// each span is checked (to drop its pages from memory, say).
    pub fn check(bytes: &'a [u8], mut after: impl FnMut(usize, usize)) -> JsonResult<Self> {
        const CHUNK: usize = 16 << 20;
        let mut pos = 0;
        while pos < bytes.len() {
            let end = (pos + CHUNK).min(bytes.len());
            let next = match std::str::from_utf8(&bytes[pos..end]) {
                Ok(_) => end,
                // A character cut by the chunk's end: check it with the
                // next chunk (a character is at most 4 bytes, so this
                // moves on).
                Err(e) if e.error_len().is_none() && end < bytes.len() => pos + e.valid_up_to(),
                Err(e) => {
                    return Err(JsonError {
                        offset: pos + e.valid_up_to(),
                        what: "the input is not valid UTF-8".into(),
                    });
                }
            };
            after(pos, next);
            pos = next;
        }
        Ok(Self(bytes))
    }

    /// A parser at `pos`.
    pub fn at(&self, pos: usize) -> Json<'a> {
        Json {
            bytes: self.0,
            pos,
            utf8: true,
        }
    }
}

impl<'a> Json<'a> {
    /// A parser at the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Self {
            bytes,
            pos: 0,
            utf8: false,
        }
    }

    /// A parser at `pos` of `bytes`.
    pub fn at(bytes: &'a [u8], pos: usize) -> Self {
        Self {
            bytes,
            pos,
            utf8: false,
        }
    }

    /// A parser at the start of a whole document, checked to be UTF-8 at
    /// once (much faster than string by string).
    pub fn document(bytes: &'a [u8]) -> JsonResult<Self> {
        Ok(Utf8Doc::check(bytes, |_, _| {})?.at(0))
    }

    /// A parser at `pos` of the same input (and what is known of it).
    pub fn resume(&self, pos: usize) -> Self {
        Self {
            bytes: self.bytes,
            pos,
            utf8: self.utf8,
        }
    }

    /// `bytes[start..end]` as text; `start` and `end` are next to quotes
    /// (ASCII), so in a document known to be UTF-8 they are character
    /// boundaries.
    fn text(&self, start: usize, end: usize) -> JsonResult<&'a str> {
        let raw = &self.bytes[start..end];
        if self.utf8 {
            // SAFETY: `utf8` is only set by `Utf8Doc`, which checked the
            // whole input, and both ends of `raw` are next to an ASCII
            // quote or escape, so `raw` is whole characters.
            Ok(unsafe { std::str::from_utf8_unchecked(raw) })
        } else {
            std::str::from_utf8(raw).map_err(|e| JsonError {
                offset: start + e.valid_up_to(),
                what: "a string is not valid UTF-8".into(),
            })
        }
    }

    /// The whole input.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The current byte offset.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// An error at the current offset.
    pub fn error(&self, what: impl Into<String>) -> JsonError {
        JsonError {
            offset: self.pos,
            what: what.into(),
        }
    }

    fn skip_ws(&mut self) {
        // A UTF-8 byte-order mark opens some files written on Windows: it
        // is not part of the document.
        if self.pos == 0 && self.bytes.starts_with(UTF8_BOM) {
            self.pos = UTF8_BOM.len();
        }
        while let Some(&b) = self.bytes.get(self.pos) {
            if matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    /// The next non-blank byte, not consumed.
    pub fn peek(&mut self) -> Option<u8> {
        self.skip_ws();
        self.bytes.get(self.pos).copied()
    }

    /// Whether only blanks are left.
    pub fn at_end(&mut self) -> bool {
        self.peek().is_none()
    }

    fn eat(&mut self, byte: u8) -> JsonResult<()> {
        match self.peek() {
            Some(b) if b == byte => {
                self.pos += 1;
                Ok(())
            }
            Some(b) => Err(self.error(format!(
                "expected '{}', found {}",
                byte as char,
                describe(b)
            ))),
            None => Err(self.error(format!(
                "expected '{}', found the end of the input (truncated?)",
                byte as char
            ))),
        }
    }

    /// The kind of the next value.
    pub fn kind(&mut self) -> JsonResult<Kind> {
        match self.peek() {
            Some(b'{') => Ok(Kind::Object),
            Some(b'[') => Ok(Kind::Array),
            Some(b'"') => Ok(Kind::String),
            Some(b'-' | b'0'..=b'9') => Ok(Kind::Number),
            Some(b't' | b'f') => Ok(Kind::Bool),
            Some(b'n') => Ok(Kind::Null),
            Some(b) => Err(self.error(format!("expected a value, found {}", describe(b)))),
            None => Err(self.error("expected a value, found the end of the input (truncated?)")),
        }
    }

    /// Enters an object: `{`.
    pub fn begin_object(&mut self) -> JsonResult<()> {
        self.eat(b'{')
    }

    /// The next key of the object being read, or `None` at its `}`
    /// (consumed). `first` is true for the first call after
    /// [`Self::begin_object`].
    pub fn next_key(&mut self, first: bool) -> JsonResult<Option<Cow<'a, str>>> {
        match self.peek() {
            Some(b'}') => {
                self.pos += 1;
                return Ok(None);
            }
            Some(b',') if !first => self.pos += 1,
            _ if first => {}
            Some(b) => {
                return Err(self.error(format!(
                    "expected ',' or '}}' in an object, found {}",
                    describe(b)
                )));
            }
            None => return Err(self.error("the input ends inside an object (truncated?)")),
        }
        if self.peek() != Some(b'"') {
            return Err(match self.peek() {
                Some(b) => self.error(format!("expected a key string, found {}", describe(b))),
                None => self.error("the input ends inside an object (truncated?)"),
            });
        }
        let key = self.string()?;
        self.eat(b':')?;
        Ok(Some(key))
    }

    /// Enters an array: `[`.
    pub fn begin_array(&mut self) -> JsonResult<()> {
        self.eat(b'[')
    }

    /// Whether the array being read has another element (positioned at
    /// it), or `false` at its `]` (consumed).
    pub fn next_element(&mut self, first: bool) -> JsonResult<bool> {
        match self.peek() {
            Some(b']') => {
                self.pos += 1;
                Ok(false)
            }
            Some(b',') if !first => {
                self.pos += 1;
                Ok(true)
            }
            _ if first => Ok(true),
            Some(b) => Err(self.error(format!(
                "expected ',' or ']' in an array, found {}",
                describe(b)
            ))),
            None => Err(self.error("the input ends inside an array (truncated?)")),
        }
    }

    /// [`Json::next_element`] for an array whose closing `]` may be
    /// missing: the end of the input after an element, or after a
    /// trailing `,`, ends the array as `]` would
    /// ([`ArrayStep::EndOfInput`]).
    pub fn next_element_or_end(&mut self, first: bool) -> JsonResult<ArrayStep> {
        match self.peek() {
            None => Ok(ArrayStep::EndOfInput),
            Some(b',') if !first => {
                let mut after = self.clone();
                after.pos += 1;
                if after.at_end() {
                    *self = after;
                    return Ok(ArrayStep::EndOfInput);
                }
                self.next_element(first).map(ArrayStep::from)
            }
            _ => self.next_element(first).map(ArrayStep::from),
        }
    }

    /// A string value, unescaped (borrowed when it has no escapes).
    /// Control characters are taken as they are (JSON forbids them raw;
    /// some writers do not care).
    pub fn string(&mut self) -> JsonResult<Cow<'a, str>> {
        self.eat(b'"')?;
        let start = self.pos;
        let i = find_quote_or_backslash(self.bytes, start);
        match self.bytes.get(i) {
            Some(b'"') => {
                let s = self.text(start, i)?;
                self.pos = i + 1;
                Ok(Cow::Borrowed(s))
            }
            Some(_) => {
                let mut out = self.text(start, i)?.to_string();
                self.pos = i;
                self.escaped_rest(&mut out)?;
                Ok(Cow::Owned(out))
            }
            None => Err(JsonError {
                offset: start.saturating_sub(1),
                what: "a string is not closed (truncated?)".into(),
            }),
        }
    }

    /// Reads the rest of a string from an escape on, into `out`.
    fn escaped_rest(&mut self, out: &mut String) -> JsonResult<()> {
        let bytes = self.bytes;
        loop {
            let run = self.pos;
            self.pos = find_quote_or_backslash(bytes, run);
            out.push_str(self.text(run, self.pos)?);
            match bytes.get(self.pos) {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(_) => {
                    let at = self.pos;
                    self.pos += 1;
                    let c = match bytes.get(self.pos) {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => {
                            let hi = self.hex4(self.pos + 1)?;
                            self.pos += 4;
                            let code = if (0xD800..0xDC00).contains(&hi)
                                && bytes.get(self.pos + 1) == Some(&b'\\')
                                && bytes.get(self.pos + 2) == Some(&b'u')
                            {
                                let lo = self.hex4(self.pos + 3)?;
                                if (0xDC00..0xE000).contains(&lo) {
                                    self.pos += 6;
                                    0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                                } else {
                                    0xFFFD
                                }
                            } else {
                                hi
                            };
                            // Lone surrogates become U+FFFD.
                            char::from_u32(code).unwrap_or('\u{FFFD}')
                        }
                        Some(_) => {
                            return Err(JsonError {
                                offset: at,
                                what: "an unknown escape in a string".into(),
                            });
                        }
                        None => {
                            return Err(JsonError {
                                offset: at,
                                what: "a string is not closed (truncated?)".into(),
                            });
                        }
                    };
                    out.push(c);
                    self.pos += 1;
                }
                None => return Err(self.error("a string is not closed (truncated?)")),
            }
        }
    }

    fn hex4(&self, at: usize) -> JsonResult<u32> {
        let digits = self
            .bytes
            .get(at..at + 4)
            .and_then(|d| std::str::from_utf8(d).ok())
            .and_then(|d| u32::from_str_radix(d, 16).ok());
        digits.ok_or_else(|| JsonError {
            offset: at,
            what: "a \\u escape needs four hex digits".into(),
        })
    }

    /// A number, as its literal text (checked against JSON's grammar).
    pub fn number(&mut self) -> JsonResult<&'a str> {
        self.skip_ws();
        let start = self.pos;
        let b = self.bytes;
        let mut i = start;
        if b.get(i) == Some(&b'-') {
            i += 1;
        }
        let int_start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == int_start {
            return Err(self.error("expected a number"));
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            let f = i;
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            if i == f {
                return Err(JsonError {
                    offset: i,
                    what: "a number has no digits after its '.'".into(),
                });
            }
        }
        if matches!(b.get(i), Some(b'e' | b'E')) {
            i += 1;
            if matches!(b.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            let e = i;
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            if i == e {
                return Err(JsonError {
                    offset: i,
                    what: "a number has no digits in its exponent".into(),
                });
            }
        }
        self.pos = i;
        let lit = &b[start..i];
        debug_assert!(lit.is_ascii());
        // SAFETY: every byte of `lit` was matched above as one of
        // `-+.eE0-9`: ASCII, so UTF-8.
        Ok(unsafe { std::str::from_utf8_unchecked(lit) })
    }

    fn literal(&mut self, word: &str) -> JsonResult<()> {
        self.skip_ws();
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(self.error(format!("expected `{word}`")))
        }
    }

    /// A scalar value; an object or array is skipped and returned as its
    /// text.
    pub fn scalar(&mut self) -> JsonResult<Scalar<'a>> {
        Ok(match self.kind()? {
            Kind::Null => {
                self.literal("null")?;
                Scalar::Null
            }
            Kind::Bool => {
                if self.peek() == Some(b't') {
                    self.literal("true")?;
                    Scalar::Bool(true)
                } else {
                    self.literal("false")?;
                    Scalar::Bool(false)
                }
            }
            Kind::Number => Scalar::Number(self.number()?),
            Kind::String => Scalar::String(self.string()?),
            Kind::Object | Kind::Array => {
                let (start, end) = self.skip()?;
                // Checked as UTF-8 string by string while skipping.
                Scalar::Composite(std::str::from_utf8(&self.bytes[start..end]).map_err(|e| {
                    JsonError {
                        offset: start + e.valid_up_to(),
                        what: "not valid UTF-8".into(),
                    }
                })?)
            }
        })
    }

    /// Skips the next value, checking its grammar; returns its byte span.
    /// Nesting deeper than [`MAX_DEPTH`] is an error.
    pub fn skip(&mut self) -> JsonResult<(usize, usize)> {
        self.skip_ws();
        let start = self.pos;
        // The stack of open composites: true for an object.
        let mut open: Vec<bool> = Vec::new();
        let mut first = true;
        loop {
            // At a value position (or a close of the innermost composite).
            if let Some(&is_obj) = open.last() {
                if is_obj {
                    match self.next_key(first)? {
                        Some(_) => {}
                        None => {
                            open.pop();
                            first = false;
                            if open.is_empty() {
                                return Ok((start, self.pos));
                            }
                            continue;
                        }
                    }
                } else if !self.next_element(first)? {
                    open.pop();
                    first = false;
                    if open.is_empty() {
                        return Ok((start, self.pos));
                    }
                    continue;
                }
            }
            match self.kind()? {
                Kind::Object | Kind::Array => {
                    if open.len() >= MAX_DEPTH {
                        return Err(
                            self.error(format!("values nest deeper than {MAX_DEPTH} levels"))
                        );
                    }
                    open.push(self.peek() == Some(b'{'));
                    self.pos += 1;
                    first = true;
                    continue;
                }
                Kind::String => {
                    self.string()?;
                }
                Kind::Number => {
                    self.number()?;
                }
                Kind::Bool | Kind::Null => {
                    self.scalar()?;
                }
            }
            first = false;
            if open.is_empty() {
                return Ok((start, self.pos));
            }
        }
    }
}

fn describe(b: u8) -> String {
    if b.is_ascii_graphic() {
        format!("'{}'", b as char)
    } else {
        format!("byte 0x{b:02x}")
    }
}

/// A decimal literal of microseconds (`ts`, `dur`) as exact picoseconds:
/// up to six fractional digits are exact; more are rounded (half away
/// from zero); an exponent goes through `f64`. `i128`, so that a Unix
/// time in µs (10^21 ps) still fits; `None` when even that overflows.
pub fn micros_to_ps(lit: &str) -> Option<i128> {
    if lit.bytes().any(|b| b == b'e' || b == b'E') {
        let v: f64 = lit.parse().ok()?;
        let ps = (v * 1e6).round();
        return (ps.is_finite() && ps.abs() < 1e37).then_some(ps as i128);
    }
    let (neg, body) = match lit.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, lit),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let mut ps: i128 = 0;
    for d in int.bytes() {
        ps = ps.checked_mul(10)?.checked_add((d - b'0') as i128)?;
    }
    ps = ps.checked_mul(1_000_000)?;
    let mut scale = 100_000;
    let mut digits = frac.bytes();
    for d in digits.by_ref().take(6) {
        ps = ps.checked_add((d - b'0') as i128 * scale)?;
        scale /= 10;
    }
    if digits.next().is_some_and(|d| d >= b'5') {
        ps = ps.checked_add(1)?;
    }
    Some(if neg { -ps } else { ps })
}

/// A number literal as a typed value: an integer when it has no fraction
/// or exponent and fits (`i64`, else `u64`), otherwise a double.
pub fn number_value(lit: &str) -> NumberValue {
    if !lit.bytes().any(|b| matches!(b, b'.' | b'e' | b'E')) {
        if let Ok(v) = lit.parse::<i64>() {
            return NumberValue::Int(v);
        }
        if let Ok(v) = lit.parse::<u64>() {
            return NumberValue::Uint(v);
        }
    }
    NumberValue::Double(lit.parse().unwrap_or(f64::NAN))
}

/// A JSON number, typed (see [`number_value`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NumberValue {
    /// Fits `i64`.
    Int(i64),
    /// Fits only `u64`.
    Uint(u64),
    /// Has a fraction or exponent, or fits neither.
    Double(f64),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn micros_are_exact_picoseconds() {
        assert_eq!(micros_to_ps("0"), Some(0));
        assert_eq!(micros_to_ps("1.5"), Some(1_500_000));
        assert_eq!(
            micros_to_ps("5136703178744.055"),
            Some(5_136_703_178_744_055_000)
        );
        assert_eq!(micros_to_ps("0.000001"), Some(1));
        assert_eq!(micros_to_ps("0.0000015"), Some(2));
        assert_eq!(micros_to_ps("-2.25"), Some(-2_250_000));
        assert_eq!(micros_to_ps("1e3"), Some(1_000_000_000));
        assert_eq!(
            micros_to_ps("1790857026000000.5"),
            Some(1_790_857_026_000_000_500_000)
        );
        assert_eq!(micros_to_ps(&"9".repeat(60)), None);
    }

    #[test]
    fn strings_unescape_and_borrow() {
        let mut j = Json::new(br#""plain" "a\"b\u00e9\ud83d\ude00\n""#);
        assert!(matches!(j.string().unwrap(), Cow::Borrowed("plain")));
        assert_eq!(j.string().unwrap(), "a\"b\u{e9}\u{1F600}\n");
        let mut j = Json::new(br#""open"#);
        assert_eq!(j.string().unwrap_err().offset, 0);
    }

    #[test]
    fn skip_returns_spans_and_limits_depth() {
        let text = br#" {"a": [1, 2.5, {"b": null}], "c": "x"} , 3"#;
        let mut j = Json::new(text);
        let (s, e) = j.skip().unwrap();
        assert_eq!(&text[s..e], br#"{"a": [1, 2.5, {"b": null}], "c": "x"}"#);
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        let err = Json::new(deep.as_bytes()).skip().unwrap_err();
        assert_eq!(err.offset, MAX_DEPTH);
        let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(Json::new(ok.as_bytes()).skip().is_ok());
        for bad in [
            &b"{\"a\" 1}"[..],
            b"[1 2]",
            b"{\"a\":}",
            b"[1,",
            b"tru",
            b"-",
            b"1.",
        ] {
            assert!(
                Json::new(bad).skip().is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn quote_search_finds_the_first_in_every_position() {
        for len in 0..20 {
            for at in 0..=len {
                let mut b = vec![b'a'; len];
                if at < len {
                    b[at] = if at % 2 == 0 { b'"' } else { b'\\' };
                    // A later match must not win.
                    if at + 1 < len {
                        b[at + 1] = b'"';
                    }
                }
                assert_eq!(find_quote_or_backslash(&b, 0), at, "{len} {at}");
            }
        }
        // Bytes just around the searched values are not matches.
        assert_eq!(find_quote_or_backslash(b"!#[]\x21\x23abc\"", 0), 9);
        let doc = Json::document("\"h\u{e9}llo\" \"\\u00e9\"".as_bytes()).unwrap();
        let mut j = doc.resume(0);
        assert_eq!(j.string().unwrap(), "h\u{e9}llo");
        assert_eq!(j.string().unwrap(), "\u{e9}");
        assert_eq!(Json::document(b"\"\xff\"").unwrap_err().offset, 1);
        // A character cut by a chunk boundary is checked whole.
        let mut big = vec![b' '; (16 << 20) - 1];
        big.extend_from_slice("\u{e9}".as_bytes());
        assert!(Utf8Doc::check(&big, |_, _| {}).is_ok());
    }

    #[test]
    fn numbers_are_typed() {
        assert_eq!(number_value("12"), NumberValue::Int(12));
        assert_eq!(
            number_value("18446744073709551615"),
            NumberValue::Uint(u64::MAX)
        );
        assert_eq!(number_value("1.25"), NumberValue::Double(1.25));
        assert_eq!(number_value("1e2"), NumberValue::Double(100.0));
    }
}
