//! `xprof-testdata`: the test data generators of xprof-sql, for its tests,
//! examples and benchmarks only (a dev-dependency; no shipped crate
//! depends on it, and it is not published).
//!
//! Synthetic, device-shaped profiles: XSpace files with GPU and TPU device
//! planes, TPU planes with LLO lanes ([`llo`]), TPU kernel-profiling
//! captures ([`llo_capture`], with their `llo_proto` payloads
//! ([`llo_proto`]) and LLO dump folders ([`llo_dump`])), and Mosaic GPU
//! profiler traces ([`mosaic_gpu`]); and the XSpace protobuf messages
//! ([`xspace_proto`]) they and the tests write XSpaces with.
//!
//! Real GPU and TPU device planes need the accelerator; these generators
//! build files with the documented plane, line and stat names
//! (`shared/formats/xspace.md`, `xplane-names.txt`) so tests and
//! benchmarks can exercise device paths anywhere. Every value is
//! deterministic for a given spec. Tests that use them say so.
//!
//! ```
//! use prost::Message;
//! use xprof_testdata::{TpuSpec, tpu_space};
//! let bytes = tpu_space(&TpuSpec::default()).encode_to_vec();
//! assert!(!bytes.is_empty());
//! ```

#![warn(missing_docs)]

mod gpu;
pub mod llo;
pub mod llo_capture;
mod llo_capture_truth;
pub mod llo_compile;
pub mod llo_dump;
pub mod llo_proto;
pub mod mosaic_gpu;
mod plane;
mod tpu;
pub mod tpu_async_overlap;
pub mod tpu_self_time;
pub mod xspace_proto;

pub use gpu::{GpuSpec, gpu_space, gpu_space_over_hlo};
pub use plane::{PROFILE_START_NS, PlaneBuilder, Rng, event, line};
pub use tpu::{TpuSpec, tpu_space, write_large_tpu};
pub use tpu_async_overlap::tpu_async_overlap_space;
pub use tpu_self_time::tpu_self_time_space;
