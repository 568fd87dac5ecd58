//! The fields of one protobuf message, kept undecoded until something
//! asks for them: how the HLO decoder reads the protos zero-copy.

use std::borrow::Cow;

use crate::codec::pb::{Cursor, PbResult, WireType, utf8};

/// A protobuf field value kept undecoded until something asks for it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Raw<'a> {
    /// A varint (also bools and enums).
    Varint(u64),
    /// A fixed-size value.
    Fixed(u64),
    /// A length-delimited payload and its absolute offset.
    Len(&'a [u8], u64),
}

/// Every field of one message, in wire order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Fields<'a>(Vec<(u32, Raw<'a>)>);

impl<'a> Fields<'a> {
    pub(crate) fn decode(buf: &'a [u8], base: u64) -> PbResult<Self> {
        let mut c = Cursor::new(buf, base);
        let mut out = Vec::new();
        while !c.is_empty() {
            let (field, wire) = c.tag()?;
            let v = match wire {
                WireType::Varint => Raw::Varint(c.varint()?),
                WireType::Fixed64 => Raw::Fixed(c.fixed64()?),
                WireType::Fixed32 => {
                    let at = c.offset();
                    c.skip(WireType::Fixed32)?;
                    let b = &buf[(at - base) as usize..(at - base) as usize + 4];
                    Raw::Fixed(u32::from_le_bytes(b.try_into().expect("4 bytes")) as u64)
                }
                WireType::Len => {
                    let (b, off) = c.bytes()?;
                    Raw::Len(b, off)
                }
            };
            out.push((field, v));
        }
        Ok(Self(out))
    }

    /// The last value of a scalar field (protobuf's "last one wins").
    pub(crate) fn get(&self, field: u32) -> Option<Raw<'a>> {
        self.0
            .iter()
            .rev()
            .find(|(f, _)| *f == field)
            .map(|(_, v)| *v)
    }

    pub(crate) fn all(&self, field: u32) -> impl Iterator<Item = Raw<'a>> + '_ {
        self.0
            .iter()
            .filter(move |(f, _)| *f == field)
            .map(|(_, v)| *v)
    }

    pub(crate) fn int(&self, field: u32) -> i64 {
        match self.get(field) {
            Some(Raw::Varint(v) | Raw::Fixed(v)) => v as i64,
            _ => 0,
        }
    }

    pub(crate) fn has(&self, field: u32) -> bool {
        self.get(field).is_some()
    }

    pub(crate) fn str(&self, field: u32) -> Cow<'a, str> {
        match self.get(field) {
            Some(Raw::Len(b, _)) => utf8(b),
            _ => Cow::Borrowed(""),
        }
    }

    pub(crate) fn message(&self, field: u32) -> PbResult<Option<Fields<'a>>> {
        match self.get(field) {
            Some(Raw::Len(b, off)) => Fields::decode(b, off).map(Some),
            _ => Ok(None),
        }
    }

    pub(crate) fn messages(&self, field: u32) -> PbResult<Vec<Fields<'a>>> {
        self.all(field)
            .filter_map(|v| match v {
                Raw::Len(b, off) => Some(Fields::decode(b, off)),
                _ => None,
            })
            .collect()
    }

    pub(crate) fn strings(&self, field: u32) -> Vec<Cow<'a, str>> {
        self.all(field)
            .filter_map(|v| match v {
                Raw::Len(b, _) => Some(utf8(b)),
                _ => None,
            })
            .collect()
    }

    /// A repeated integer field, packed or not.
    pub(crate) fn ints(&self, field: u32) -> PbResult<Vec<i64>> {
        let mut out = Vec::new();
        for v in self.all(field) {
            match v {
                Raw::Varint(x) | Raw::Fixed(x) => out.push(x as i64),
                Raw::Len(b, off) => {
                    let mut c = Cursor::new(b, off);
                    while !c.is_empty() {
                        out.push(c.varint()? as i64);
                    }
                }
            }
        }
        Ok(out)
    }
}
