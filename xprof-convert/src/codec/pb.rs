//! Zero-copy protobuf reading: tags, varints and length-delimited fields
//! straight from the input bytes, with absolute offsets for errors.

/// Protobuf wire types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WireType {
    Varint,
    Fixed64,
    Len,
    Fixed32,
}

/// A decoding failure at an absolute byte offset of the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PbError {
    pub offset: u64,
    pub what: &'static str,
}

pub(crate) type PbResult<T> = Result<T, PbError>;

/// A forward reader over one message's bytes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Absolute offset of `buf[0]` in the input.
    base: u64,
}

impl<'a> Cursor<'a> {
    pub fn new(buf: &'a [u8], base: u64) -> Self {
        Self { buf, pos: 0, base }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// Absolute offset of the next byte.
    #[inline]
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    #[inline]
    fn err<T>(&self, what: &'static str) -> PbResult<T> {
        Err(PbError {
            offset: self.offset(),
            what,
        })
    }

    #[inline]
    pub fn varint(&mut self) -> PbResult<u64> {
        // Fast path: one byte.
        if let Some(&b) = self.buf.get(self.pos)
            && b < 0x80
        {
            self.pos += 1;
            return Ok(b as u64);
        }
        let mut value: u64 = 0;
        let mut shift = 0;
        loop {
            let Some(&b) = self.buf.get(self.pos) else {
                return self.err("truncated varint");
            };
            self.pos += 1;
            if shift == 63 && b > 1 {
                return self.err("varint longer than 64 bits");
            }
            value |= ((b & 0x7f) as u64) << shift;
            if b < 0x80 {
                return Ok(value);
            }
            shift += 7;
        }
    }

    /// Next field number and wire type.
    #[inline]
    pub fn tag(&mut self) -> PbResult<(u32, WireType)> {
        let start = self.pos;
        let key = self.varint()?;
        let wire = match key & 7 {
            0 => WireType::Varint,
            1 => WireType::Fixed64,
            2 => WireType::Len,
            5 => WireType::Fixed32,
            _ => {
                self.pos = start;
                return self.err("unsupported wire type (groups or invalid)");
            }
        };
        let field = key >> 3;
        if field == 0 || field > u32::MAX as u64 {
            self.pos = start;
            return self.err("invalid field number");
        }
        Ok((field as u32, wire))
    }

    /// A length-delimited payload and the absolute offset of its first byte.
    #[inline]
    pub fn bytes(&mut self) -> PbResult<(&'a [u8], u64)> {
        let len = self.varint()?;
        let start = self.pos;
        let end = match start.checked_add(len as usize) {
            Some(e) if len <= usize::MAX as u64 && e <= self.buf.len() => e,
            _ => return self.err("length-delimited field runs past the end of its message"),
        };
        self.pos = end;
        Ok((&self.buf[start..end], self.base + start as u64))
    }

    #[inline]
    pub fn fixed64(&mut self) -> PbResult<u64> {
        let Some(b) = self.buf.get(self.pos..self.pos + 8) else {
            return self.err("truncated fixed64");
        };
        self.pos += 8;
        Ok(u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }

    /// Skips a field's value.
    #[inline]
    pub fn skip(&mut self, wire: WireType) -> PbResult<()> {
        match wire {
            WireType::Varint => self.varint().map(|_| ()),
            WireType::Fixed64 => self.fixed64().map(|_| ()),
            WireType::Len => self.bytes().map(|_| ()),
            WireType::Fixed32 => {
                if self.pos + 4 > self.buf.len() {
                    return self.err("truncated fixed32");
                }
                self.pos += 4;
                Ok(())
            }
        }
    }

    /// An int64 varint field, checking its wire type.
    #[inline]
    pub fn int64(&mut self, wire: WireType) -> PbResult<i64> {
        self.uint64(wire).map(|v| v as i64)
    }

    /// A uint64 varint field, checking its wire type.
    #[inline]
    pub fn uint64(&mut self, wire: WireType) -> PbResult<u64> {
        if wire != WireType::Varint {
            return self.err("expected a varint field");
        }
        self.varint()
    }

    /// A length-delimited field, checking its wire type.
    #[inline]
    pub fn len_field(&mut self, wire: WireType) -> PbResult<(&'a [u8], u64)> {
        if wire != WireType::Len {
            return self.err("expected a length-delimited field");
        }
        self.bytes()
    }

    /// Repeated int64 in packed or unpacked form.
    pub fn packed_int64(&mut self, wire: WireType, out: &mut Vec<i64>) -> PbResult<()> {
        match wire {
            WireType::Varint => out.push(self.varint()? as i64),
            WireType::Len => {
                let (b, off) = self.bytes()?;
                let mut c = Cursor::new(b, off);
                while !c.is_empty() {
                    out.push(c.varint()? as i64);
                }
            }
            _ => return self.err("expected a packed or varint int64"),
        }
        Ok(())
    }
}

/// Bytes as UTF-8, replacing invalid sequences (profiles are data: a bad
/// byte in a name is kept, not fatal).
pub(crate) fn utf8(b: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_errors_carry_offsets() {
        let buf = [0x96, 0x01, 0xff];
        let mut c = Cursor::new(&buf, 100);
        assert_eq!(c.varint().unwrap(), 150);
        assert_eq!(c.offset(), 102);
        let e = c.varint().unwrap_err();
        assert_eq!(e.offset, 103);
    }

    #[test]
    fn a_length_past_the_end_is_an_error() {
        let buf = [0x0a, 0x05, 1, 2];
        let mut c = Cursor::new(&buf, 0);
        assert_eq!(c.tag().unwrap(), (1, WireType::Len));
        assert!(c.bytes().is_err());
    }

    fn encode(mut v: u64) -> Vec<u8> {
        let mut out = Vec::new();
        while v >= 0x80 {
            out.push(v as u8 | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
        out
    }

    /// A varint reads the same whether its message ends after it or more
    /// bytes follow: values, lengths and error offsets.
    #[test]
    fn varints_read_the_same_near_the_end_and_far_from_it() {
        let mut values = vec![0, 1, 127, 128, 300, u64::MAX, i64::MIN as u64, -1i64 as u64];
        values.extend((0..64).map(|b| 1u64 << b));
        values.extend((1..64).map(|b| (1u64 << b) - 1));
        for v in values {
            let exact = encode(v);
            let mut padded = exact.clone();
            padded.extend([0x80; 12]);
            for buf in [&exact, &padded] {
                let mut c = Cursor::new(buf, 7);
                assert_eq!(c.varint().unwrap(), v, "{v} from {buf:?}");
                assert_eq!(c.offset(), 7 + exact.len() as u64, "{v}");
            }
        }
        let too_long = [0xff; 10];
        let mut padded = too_long.to_vec();
        padded.extend([0; 10]);
        for buf in [&too_long[..], &padded] {
            let e = Cursor::new(buf, 0).varint().unwrap_err();
            assert_eq!((e.offset, e.what), (10, "varint longer than 64 bits"));
        }
    }

    #[test]
    fn ten_byte_varint_overflow_is_rejected() {
        let buf = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f];
        assert!(Cursor::new(&buf, 0).varint().is_err());
        let ok = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
        assert_eq!(Cursor::new(&ok, 0).varint().unwrap(), u64::MAX);
    }
}
