//! MessagePack, transcribed to JSON text for the JSON readers.
//!
//! Proton writes its tree profile either as JSON (`*.hatchet`) or, with
//! the output format `hatchet_msgpack`, as the same tree in MessagePack
//! (`*.hatchet_msgpack`). Trees are small (a node per kernel and scope),
//! so the reader transcribes the whole document to JSON text and reads
//! that with the JSON tree reader; [`Transcript::input_offset`] maps a
//! position of the text back to the MessagePack byte that produced it, so
//! errors found while reading the tree still name the file's own offset.
//!
//! The transcription is total over the format: map keys that are not
//! strings become their JSON text quoted, `bin` and `ext` payloads become
//! hex strings, NaN and infinities `null` (as JSON writers do). Lengths are
//! checked against the bytes left before anything is read, and nesting is
//! limited to [`MAX_DEPTH`], so hostile input costs at most a small
//! multiple of its own size.

use std::fmt::Write as _;

use super::json::{JsonError, JsonResult, MAX_DEPTH};

/// The JSON text of a MessagePack document, with where each value came
/// from.
#[derive(Debug, Default)]
pub struct Transcript {
    /// The JSON text (UTF-8).
    pub json: String,
    /// (text position, input offset) at the start of each value, in text
    /// order.
    starts: Vec<(usize, usize)>,
}

impl Transcript {
    /// The input offset of the value whose text holds `text_pos`.
    pub fn input_offset(&self, text_pos: usize) -> usize {
        match self.starts.partition_point(|&(t, _)| t <= text_pos) {
            0 => 0,
            i => self.starts[i - 1].1,
        }
    }
}

/// Transcribes one MessagePack document (all of `bytes`) to JSON.
pub fn to_json(bytes: &[u8]) -> JsonResult<Transcript> {
    let mut t = Transcriber {
        bytes,
        pos: 0,
        out: Transcript::default(),
    };
    t.value(0)?;
    if t.pos != bytes.len() {
        return Err(t.error(t.pos, "more after the end of the MessagePack document"));
    }
    Ok(t.out)
}

struct Transcriber<'a> {
    bytes: &'a [u8],
    pos: usize,
    out: Transcript,
}

impl<'a> Transcriber<'a> {
    fn error(&self, offset: usize, what: impl Into<String>) -> JsonError {
        JsonError {
            offset,
            what: what.into(),
        }
    }

    fn take(&mut self, n: usize) -> JsonResult<&'a [u8]> {
        let start = self.pos;
        let end = start
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| {
                self.error(
                    start,
                    format!(
                        "truncated: {n} bytes wanted, {} left",
                        self.bytes.len() - start
                    ),
                )
            })?;
        self.pos = end;
        Ok(&self.bytes[start..end])
    }

    fn uint(&mut self, n: usize) -> JsonResult<u64> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0u64, |acc, &b| (acc << 8) | u64::from(b)))
    }

    fn int(&mut self, n: usize) -> JsonResult<i64> {
        let raw = self.uint(n)?;
        let shift = 64 - 8 * n as u32;
        Ok(((raw << shift) as i64) >> shift)
    }

    /// A length, checked to fit in what is left (each item takes at least
    /// `min_item` bytes).
    fn len(&mut self, n: usize, min_item: usize, what: &str) -> JsonResult<usize> {
        let at = self.pos;
        let len = self.uint(n)? as usize;
        let left = self.bytes.len() - self.pos;
        if len.saturating_mul(min_item) > left {
            return Err(self.error(
                at,
                format!("{what} of {len} items cannot fit in the {left} bytes left"),
            ));
        }
        Ok(len)
    }

    fn value(&mut self, depth: usize) -> JsonResult<()> {
        let at = self.pos;
        if depth >= MAX_DEPTH {
            return Err(self.error(at, format!("nested deeper than {MAX_DEPTH} levels")));
        }
        self.out.starts.push((self.out.json.len(), at));
        let tag = self.take(1)?[0];
        match tag {
            0x00..=0x7f => self.number(u64::from(tag)),
            0xe0..=0xff => self.number(i64::from(tag as i8)),
            0x80..=0x8f => self.map(usize::from(tag & 0x0f), depth),
            0x90..=0x9f => self.array(usize::from(tag & 0x0f), depth),
            0xa0..=0xbf => self.string(usize::from(tag & 0x1f), at),
            0xc0 => {
                self.out.json.push_str("null");
                Ok(())
            }
            0xc2 => {
                self.out.json.push_str("false");
                Ok(())
            }
            0xc3 => {
                self.out.json.push_str("true");
                Ok(())
            }
            0xc4..=0xc6 => {
                let n = self.len(1 << (tag - 0xc4), 1, "bin")?;
                let data = self.take(n)?;
                self.hex(data);
                Ok(())
            }
            0xc7..=0xc9 => {
                let n = self.len(1 << (tag - 0xc7), 1, "ext")?;
                self.take(1)?;
                let data = self.take(n)?;
                self.hex(data);
                Ok(())
            }
            0xca => {
                let v = f32::from_bits(self.uint(4)? as u32);
                // The f32's own shortest text, not its f64 widening's.
                self.float(v.is_finite().then(|| v.to_string()));
                Ok(())
            }
            0xcb => {
                let v = f64::from_bits(self.uint(8)?);
                self.float(v.is_finite().then(|| format!("{v:?}")));
                Ok(())
            }
            0xcc..=0xcf => {
                let v = self.uint(1 << (tag - 0xcc))?;
                self.number(v)
            }
            0xd0..=0xd3 => {
                let v = self.int(1 << (tag - 0xd0))?;
                self.number(v)
            }
            0xd4..=0xd8 => {
                self.take(1)?;
                let data = self.take(1 << (tag - 0xd4))?;
                self.hex(data);
                Ok(())
            }
            0xd9..=0xdb => {
                let n = self.len(1 << (tag - 0xd9), 1, "str")?;
                self.string(n, at)
            }
            0xdc | 0xdd => {
                let n = self.len(if tag == 0xdc { 2 } else { 4 }, 1, "array")?;
                self.array(n, depth)
            }
            0xde | 0xdf => {
                let n = self.len(if tag == 0xde { 2 } else { 4 }, 2, "map")?;
                self.map(n, depth)
            }
            0xc1 => Err(self.error(at, "byte 0xc1 is never used in MessagePack")),
        }
    }

    fn number(&mut self, v: impl std::fmt::Display) -> JsonResult<()> {
        let _ = write!(self.out.json, "{v}");
        Ok(())
    }

    fn float(&mut self, text: Option<String>) {
        match text {
            Some(t) if t.contains(['.', 'e', 'E']) => self.out.json.push_str(&t),
            // A whole number stays a double in the tables.
            Some(t) => {
                self.out.json.push_str(&t);
                self.out.json.push_str(".0");
            }
            None => self.out.json.push_str("null"),
        }
    }

    fn hex(&mut self, data: &[u8]) {
        self.out.json.push('"');
        for b in data {
            let _ = write!(self.out.json, "{b:02x}");
        }
        self.out.json.push('"');
    }

    fn string(&mut self, n: usize, at: usize) -> JsonResult<()> {
        let raw = self.take(n)?;
        let text = std::str::from_utf8(raw).map_err(|e| {
            self.error(
                self.pos - n + e.valid_up_to(),
                format!("the string at byte {at} is not UTF-8"),
            )
        })?;
        push_quoted(&mut self.out.json, text);
        Ok(())
    }

    fn array(&mut self, n: usize, depth: usize) -> JsonResult<()> {
        self.out.json.push('[');
        for i in 0..n {
            if i > 0 {
                self.out.json.push(',');
            }
            self.value(depth + 1)?;
        }
        self.out.json.push(']');
        Ok(())
    }

    fn map(&mut self, n: usize, depth: usize) -> JsonResult<()> {
        self.out.json.push('{');
        for i in 0..n {
            if i > 0 {
                self.out.json.push(',');
            }
            // A key that is not a string is its JSON text, quoted.
            let key_at = self.pos;
            let tag = *self
                .bytes
                .get(key_at)
                .ok_or_else(|| self.error(key_at, "truncated: a map key is missing"))?;
            let is_str = matches!(tag, 0xa0..=0xbf | 0xd9..=0xdb);
            if is_str {
                self.value(depth + 1)?;
            } else {
                let mark = self.out.json.len();
                self.value(depth + 1)?;
                let text = self.out.json.split_off(mark);
                push_quoted(&mut self.out.json, &text);
            }
            self.out.json.push(':');
            self.value(depth + 1)?;
        }
        self.out.json.push('}');
        Ok(())
    }
}

/// `text` as a JSON string: quoted, with quotes, backslashes and control
/// characters escaped.
fn push_quoted(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(bytes: &[u8]) -> String {
        to_json(bytes).unwrap().json
    }

    #[test]
    fn scalars() {
        assert_eq!(json(&[0x05]), "5");
        assert_eq!(json(&[0xff]), "-1");
        assert_eq!(json(&[0xd0, 0x80]), "-128");
        assert_eq!(json(&[0xcd, 0x01, 0x00]), "256");
        assert_eq!(
            json(&[0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
            u64::MAX.to_string()
        );
        assert_eq!(
            json(&[0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0]),
            i64::MIN.to_string()
        );
        assert_eq!(json(&[0xc0]), "null");
        assert_eq!(json(&[0xc2]), "false");
        let mut f64_bytes = vec![0xcb];
        f64_bytes.extend_from_slice(&1.5f64.to_be_bytes());
        assert_eq!(json(&f64_bytes), "1.5");
        let mut whole = vec![0xcb];
        whole.extend_from_slice(&3.0f64.to_be_bytes());
        assert_eq!(json(&whole), "3.0");
        let mut f32_bytes = vec![0xca];
        f32_bytes.extend_from_slice(&0.1f32.to_be_bytes());
        assert_eq!(json(&f32_bytes), "0.1");
        let mut nan = vec![0xcb];
        nan.extend_from_slice(&f64::NAN.to_be_bytes());
        assert_eq!(json(&nan), "null");
        assert_eq!(json(&[0xc4, 2, 0xab, 0x01]), "\"ab01\"");
    }

    #[test]
    fn containers_and_strings() {
        // {"a": [1, "x\"y"], 7: true}
        let bytes = [
            0x82, 0xa1, b'a', 0x92, 0x01, 0xa3, b'x', b'"', b'y', 0x07, 0xc3,
        ];
        assert_eq!(json(&bytes), r#"{"a":[1,"x\"y"],"7":true}"#);
        let t = to_json(&bytes).unwrap();
        // The text of `1` came from byte 4.
        let one = t.json.find('1').unwrap();
        assert_eq!(t.input_offset(one), 4);
    }

    #[test]
    fn hostile_input_is_an_error_at_its_offset() {
        // A str 32 claiming 4 GiB.
        let e = to_json(&[0xdb, 0xff, 0xff, 0xff, 0xff, b'a']).unwrap_err();
        assert_eq!(e.offset, 1);
        // An array 32 of 2^32-1 elements in 5 bytes.
        let e = to_json(&[0xdd, 0xff, 0xff, 0xff, 0xff]).unwrap_err();
        assert!(e.what.contains("cannot fit"), "{}", e.what);
        // Truncated in a map.
        let e = to_json(&[0x81, 0xa1, b'k']).unwrap_err();
        assert_eq!(e.offset, 3);
        // Not UTF-8.
        let e = to_json(&[0x91, 0xa2, b'a', 0xff]).unwrap_err();
        assert_eq!(e.offset, 3);
        // Deep nesting.
        let e = to_json(&vec![0x91; 100_000]).unwrap_err();
        assert!(e.what.contains("nested deeper"), "{}", e.what);
        // Trailing bytes; the never-used byte.
        assert!(to_json(&[0x01, 0x02]).is_err());
        assert!(to_json(&[0xc1]).is_err());
    }
}
