//! The byte-level decoders the readers share: [`json`] (a pull parser over
//! mapped JSON), [`msgpack`] (MessagePack transcribed to JSON text) and
//! `pb` (a protobuf wire cursor).
//!
//! A leaf folder: the codecs know bytes, offsets and errors, never a
//! reader, the assembler or the tables.

pub mod json;
pub mod msgpack;
pub(crate) mod pb;
