//! XProf's `bdi_stalls` mode: the stall codes the compiler writes in
//! instruction comments.
//!
//! The rule (XProf 2.24.2, checked on hand-made payloads; docs/llo_proto.md):
//! in an instruction's comment, the text after the first `bdi:` up to a
//! space is split on `,`; of each part the text before `:` is a code, kept
//! when it is one of `A B F H O R`, once per instruction, in the order
//! written. An instruction with at least one code is annotated.

use super::raw_instruction::RawInstruction;

/// The codes XProf counts.
const CODES: [&str; 6] = ["A", "B", "F", "H", "O", "R"];

/// One stall code of one instruction.
#[derive(Debug, Clone, PartialEq)]
pub struct BdiStall {
    /// The instruction.
    pub instruction_id: i64,
    /// Its bundle (`None` when unscheduled).
    pub bundle: Option<i64>,
    /// The code (`A`, `B`, `F`, `H`, `O` or `R`).
    pub code: &'static str,
    /// Its place among the instruction's codes, from 1.
    pub position: i32,
    /// Index of the instruction in the full walk (its row in
    /// `llo_program_instructions` order), for the region it is in.
    pub walk_index: usize,
}

/// The codes of one comment, in order, each once.
pub fn codes(comment: &str) -> Vec<&'static str> {
    let Some(at) = comment.find("bdi:") else {
        return Vec::new();
    };
    let rest = &comment[at + 4..];
    let field = rest.split(' ').next().unwrap_or("");
    let mut out: Vec<&'static str> = Vec::new();
    for part in field.split(',') {
        let code = part.split(':').next().unwrap_or("");
        if let Some(c) = CODES.iter().find(|c| **c == code)
            && !out.contains(c)
        {
            out.push(c);
        }
    }
    out
}

/// Every code of every annotated instruction, in walk order.
pub fn derive(raw: &[RawInstruction], comments: &[String]) -> Vec<BdiStall> {
    let mut out = Vec::new();
    for (walk_index, i) in raw.iter().enumerate() {
        let Some(comment) = i
            .comment_index
            .and_then(|c| usize::try_from(c).ok())
            .and_then(|c| comments.get(c))
        else {
            continue;
        };
        for (n, code) in codes(comment).into_iter().enumerate() {
            out.push(BdiStall {
                instruction_id: i.ordinal as i64,
                bundle: i.bundle.map(|b| b as i64),
                code,
                position: n as i32 + 1,
                walk_index,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::codes;

    #[test]
    fn codes_follow_xprofs_rule() {
        assert_eq!(codes("x bdi:A:3,F:2,Z:1 y"), ["A", "F"]);
        assert_eq!(codes("bdi:R:1,F:2,A"), ["R", "F", "A"]);
        assert_eq!(codes("bdi:A:1,A:2 bdi:F"), ["A"]);
        assert!(codes("bdi:Z:1").is_empty());
        assert!(codes("bdi:").is_empty());
        assert_eq!(codes("bdi:R,"), ["R"]);
        assert!(codes("no stall here").is_empty());
    }
}
