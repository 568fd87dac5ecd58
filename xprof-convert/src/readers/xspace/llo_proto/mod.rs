//! `llo_proto` payloads: the compiled LLO program of one HLO op, as a TPU
//! kernel-profiling capture stores it in `/host:metadata` (libtpu's
//! `--xla_xprof_register_llo_debug_info`).
//!
//! [`decode`] reads a payload ([`messages`], the schema XProf 2.24.2
//! compiles in) into a [`Program`]: the region tree with XProf's node names and
//! kinds, the static slot use of each unit per bundle, every instruction
//! with its opcode, category, unit, region and provenance, and the buffer
//! allocations, derived as XProf's `get_llo_dump_analysis` and
//! `get_llo_analysis` derive them (the facts sheet,
//! `shared/formats/tpu_kernel_profiling_capture.md` §7.6). Everything here
//! is static: what the compiler scheduled, not what ran.
//!
//! `program.rs` decodes; `opcodes.rs` is XProf's opcode table; the rest of
//! XProf's static analysis is one file per mode: `registers.rs`
//! (`register_pressure`), `bdi_stalls.rs`, `bundle_sources.rs`
//! (`source_for_bundle`) and `target.rs` (`target_info`). `rows.rs` makes
//! the `llo_*` rows of a decoded program.

mod bdi_stalls;
mod bundle_sources;
pub mod messages;
mod opcodes;
mod program;
mod raw_instruction;
mod registers;
mod rows;
mod target;

pub use bdi_stalls::BdiStall;
pub use bundle_sources::BundleSource;
pub use program::{
    Allocation, BundleUnit, Instruction, LloDecodeError, Program, Provenance, RegionNode, decode,
    opcode_info,
};
pub use registers::{BundlePressure, LiveRange};
pub(crate) use rows::llo_program_rows;
pub use target::TargetInfo;
