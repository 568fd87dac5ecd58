//! XProf's `source_for_bundle` mode, for every bundle at once: the source
//! lines of the instructions scheduled in a bundle.
//!
//! The rule (XProf 2.24.2, checked on hand-made payloads; docs/llo_proto.md):
//! an instruction's source is the last frame of the source-map entry that
//! names it last, written `file:line`, or `file` alone when the line is 0;
//! an entry whose file index is out of the string table gives none. A
//! bundle's sources are those of its scheduled instructions, each once,
//! sorted. XProf prints them twice (`sources` and `frames`); the two were
//! equal on every payload tried.

use std::collections::BTreeMap;

use super::raw_instruction::RawInstruction;

/// One source line of one bundle.
#[derive(Debug, Clone, PartialEq)]
pub struct BundleSource {
    /// Bundle.
    pub bundle: i64,
    /// `file:line` (or `file`) as XProf prints it.
    pub source: String,
    /// The file.
    pub source_file: String,
    /// The line; `None` when written as 0.
    pub source_line: Option<i64>,
    /// Instructions of the bundle with this source.
    pub instructions: i64,
}

/// Sources by bundle, then by source text.
pub fn derive(raw: &[RawInstruction]) -> Vec<BundleSource> {
    let mut by: BTreeMap<(i64, String), BundleSource> = BTreeMap::new();
    for i in raw {
        let (Some(bundle), Some((file, line))) = (i.bundle, &i.frame) else {
            continue;
        };
        let line = (*line != 0).then_some(*line as i64);
        let source = match line {
            Some(l) => format!("{file}:{l}"),
            None => file.clone(),
        };
        by.entry((bundle as i64, source.clone()))
            .or_insert_with(|| BundleSource {
                bundle: bundle as i64,
                source,
                source_file: file.clone(),
                source_line: line,
                instructions: 0,
            })
            .instructions += 1;
    }
    by.into_values().collect()
}
