//! One module per input format, each implementing
//! [`ProfileReader`](crate::reader::ProfileReader):
//!
//! - [`xspace`]: XSpace (`*.xplane.pb`), with the HLO modules
//!   ([`xspace::hlo`]) and LLO programs ([`xspace::llo_proto`]) its
//!   `/host:metadata` plane stores;
//! - [`chrome`]: Chrome Trace Event JSON, and Mosaic GPU profiler traces
//!   read as Chrome traces ([`chrome::mosaic_gpu`]);
//! - [`proton_tree`]: Proton tree profiles (JSON or MessagePack);
//! - [`llo_dump`]: files of the TPU LLO compiler's dump folder.
//!
//! A reader imports the trait ([`crate::reader`]), the codecs
//! ([`crate::codec`]) and the assembler; never the registry
//! ([`crate::registry`]), which lists the readers, nor another reader
//! (Mosaic GPU's uses its parent, the Chrome reader).

pub mod chrome;
pub mod llo_dump;
pub mod proton_tree;
pub mod xspace;
