//! Mosaic GPU profiler traces (JAX Pallas kernels on GPU) to the
//! normalized tables.
//!
//! `plgpu.CompilerParams(profile_space=…, profile_dir=…)` makes a Pallas
//! kernel record, for each warpgroup, when it enters and leaves each named
//! region, and writes `<func>-<time_ns>-trace.json`: a Chrome trace
//! (`{"displayTimeUnit": "ns", "traceEvents": [...]}`) of `B`/`E` pairs
//! with `pid` = 1 + the SM id and `tid` = 1 + the warpgroup's index in the
//! grid. `ts` is the warpgroup's start on the GPU's global timer (ns) plus
//! the SM clock cycles since its first record, over 1000: differences
//! within a warpgroup are clock cycles.
//!
//! The file is read by the Chrome reader ([`super`], this module's parent); this reader
//! only names its lanes (`SM <n>` devices of kind `other`, `warpgroup <n>`
//! tracks) and marks `traces.source_format` as `mosaic_gpu`, which is what
//! the `kernel_scopes` view looks for. The kernel is the `<func>` of the
//! file name.

use std::path::Path;

use crate::assembler::{TraceAssembler, TraceInfo};
use crate::conversion::ConvertOptions;
use crate::error::Result;
use crate::input::InputBytes;
use crate::reader::{PlaneInfo, ProfileReader};
use crate::readers::chrome::{self, Flavor};

/// Mosaic GPU profiler traces in the reader registry.
#[derive(Debug, Clone, Copy, Default)]
pub struct MosaicGpuReader;

/// Whether a file name is the profiler's: `<func>-<time_ns>-trace.json`
/// (optionally `.gz`), with at least 10 digits of time.
pub fn is_mosaic_gpu_name(name: &str) -> bool {
    kernel_of_file_name(name).is_some()
}

/// The kernel (`<func>`) of a profiler file name.
pub fn kernel_of_file_name(name: &str) -> Option<&str> {
    let name = name.strip_suffix(".gz").unwrap_or(name);
    let stem = name.strip_suffix("-trace.json")?;
    let (func, time) = stem.rsplit_once('-')?;
    (time.len() >= 10 && time.bytes().all(|b| b.is_ascii_digit()) && !func.is_empty())
        .then_some(func)
}

impl ProfileReader for MosaicGpuReader {
    fn name(&self) -> &'static str {
        "mosaic_gpu"
    }

    fn owns_file_name(&self, file_name: &str) -> bool {
        is_mosaic_gpu_name(file_name)
    }

    fn file_suffixes(&self) -> &'static [&'static str] {
        // As any JSON trace: the host keeps the kernel and the time
        // (`<func>-<time_ns>-trace`).
        &[".json.gz", ".json"]
    }

    /// The profiler's own layout, as `json.dump` writes it: the display
    /// unit first, then `B`/`E` events of exactly `name`, `ph`, `ts`,
    /// `pid`, `tid`.
    fn sniff(&self, _path: &Path, head: &[u8]) -> bool {
        let text = String::from_utf8_lossy(head);
        let Some(rest) = text
            .trim_start()
            .strip_prefix(r#"{"displayTimeUnit": "ns", "traceEvents": [{"name": "#)
        else {
            return false;
        };
        let first = rest.split('}').next().unwrap_or("");
        first.contains(r#", "ph": "B", "ts": "#)
            && first.contains(r#", "pid": "#)
            && first.contains(r#", "tid": "#)
            && !first.contains(r#""cat""#)
    }

    fn convert(
        &self,
        input: &InputBytes,
        options: &ConvertOptions,
        asm: &mut TraceAssembler<'_>,
    ) -> Result<TraceInfo> {
        chrome::convert(input, options, asm, Flavor::MosaicGpu)
    }

    fn inspect(&self, input: &InputBytes) -> Result<Vec<PlaneInfo>> {
        chrome::inspect(input, Flavor::MosaicGpu)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_names() {
        assert_eq!(
            kernel_of_file_name("matmul_kernel-1733012345678901234-trace.json"),
            Some("matmul_kernel")
        );
        assert_eq!(
            kernel_of_file_name("a-b-1733012345678901234-trace.json.gz"),
            Some("a-b")
        );
        assert_eq!(kernel_of_file_name("x-12-trace.json"), None);
        assert_eq!(kernel_of_file_name("x.trace.json"), None);
        assert_eq!(kernel_of_file_name("-1733012345678901234-trace.json"), None);
    }

    #[test]
    fn sniffs_the_profilers_layout_only() {
        let r = MosaicGpuReader;
        let p = Path::new("t.json");
        let own = br#"{"displayTimeUnit": "ns", "traceEvents": [{"name": "compute", "ph": "B", "ts": 1.5, "pid": 3, "tid": 1}, "#;
        assert!(r.sniff(p, own));
        let kineto = br#"{"displayTimeUnit": "ns", "traceEvents": [{"name": "k", "ph": "B", "ts": 1.5, "pid": 3, "tid": 1, "cat": "kernel"}"#;
        assert!(!r.sniff(p, kineto));
        assert!(!r.sniff(p, br#"{"traceEvents": [{"name": "k", "ph": "X"}]}"#));
    }
}
