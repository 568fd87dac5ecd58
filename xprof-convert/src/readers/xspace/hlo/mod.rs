//! HLO modules stored in an XSpace's `/host:metadata` plane.
//!
//! XLA records each compiled program as an `xla.HloProto` in the `Hlo
//! Proto` stat of an event metadata of `/host:metadata`. XProf decodes
//! them to name a device op's category, HLO text, framework op and source
//! line (its `HloModuleMap`). This module does the same on the raw bytes,
//! zero-copy: [`HloModule::decode`] reads the module's computations and
//! instructions, and [`HloInstruction`] derives what XProf derives:
//! [`category`](HloModule::category) (XLA's `ToCategory`),
//! [`expression`](HloModule::expression) (`ToString` with XProf's print
//! options), [`tf_op`](HloInstruction::tf_op) and
//! [`source`](HloModule::source).
//!
//! Field numbers are those of `xla/service/hlo.proto` and
//! `xla/xla_data.proto`; unknown fields are skipped, so newer XLA versions
//! decode too.
//!
//! `fields.rs` keeps a message's fields undecoded, `module.rs` decodes the
//! module and its instructions, `text.rs` writes what XProf prints, and
//! `rows.rs` makes the `hlo_instructions` rows.

mod fields;
mod module;
mod rows;
mod text;

pub use module::{ComputationRole, HloComputation, HloDecodeError, HloInstruction, HloModule};
pub(crate) use rows::hlo_instruction_rows;
