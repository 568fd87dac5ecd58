//! What the static analyses (register pressure, BDI stalls, bundle
//! sources) read of each instruction, shared by the program walk that
//! fills it and the analyses that read it.

/// What the static analyses read of an instruction, in full-walk order.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct RawInstruction {
    pub ordinal: i32,
    pub bundle: Option<i32>,
    pub register: i32,
    pub register_type: i32,
    pub operand_ids: Vec<i32>,
    pub comment_index: Option<i32>,
    /// File and line of its source (the last frame of its provenance).
    pub frame: Option<(String, i32)>,
}

/// The name XProf prints for a register type value.
pub(super) fn register_type(v: i32) -> Option<&'static str> {
    match v {
        1 => Some("PREG"),
        2 => Some("SREG"),
        3 => Some("VMREG"),
        4 => Some("VREG"),
        5 => Some("RPREG"),
        6 => Some("DREG"),
        7 => Some("CBREG"),
        _ => None,
    }
}
