//! The HLO modules of an XSpace's `/host:metadata` plane
//! (`xprof_convert::xspace::hlo`), decoded from the real protos of the H200
//! capture: every operand resolves, every derivation runs, and damaged
//! protos are errors, never panics. (Unit tests of `xprof-convert` once;
//! they read the fixture with the XSpace messages of `xprof-testdata`,
//! which that crate's own tests cannot depend on.)

use prost::Message;
use xprof_sql::convert::xspace::hlo::{ComputationRole, HloModule};
use xprof_testdata::xspace_proto::{XSpace, x_stat};

/// The real HLO protos of the H200 capture (tests/fixtures/gpu/jax_gpu).
fn real_protos() -> Vec<Vec<u8>> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/gpu/jax_gpu.xplane.pb"
    );
    let space = XSpace::decode(std::fs::read(path).unwrap().as_slice()).unwrap();
    let plane = space
        .planes
        .iter()
        .find(|p| p.name == "/host:metadata")
        .unwrap();
    plane
        .event_metadata
        .values()
        .flat_map(|m| &m.stats)
        .filter_map(|s| match &s.value {
            Some(x_stat::Value::BytesValue(b)) => Some(b.clone()),
            _ => None,
        })
        .collect()
}

/// Everything derived from one module, touching every code path.
fn derive_all(module: &HloModule<'_>) -> usize {
    let mut n = 0;
    for c in &module.computations {
        for i in &c.instructions {
            let stack = module.stack(i);
            n += module.category(i).len()
                + module.expression(i).len()
                + module.shape_text(i).len()
                + module.source(i, &stack).map_or(0, |s| s.len())
                + i.tf_op().len();
        }
    }
    n + module.computation_roles().len()
}

#[test]
fn real_modules_decode_with_resolvable_operands() {
    let protos = real_protos();
    assert!(protos.len() >= 5);
    for bytes in &protos {
        let module = HloModule::decode(bytes).unwrap();
        assert!(!module.name.is_empty());
        let roles = module.computation_roles();
        assert_eq!(
            roles
                .iter()
                .filter(|r| **r == ComputationRole::Entry)
                .count(),
            1,
            "{}: one entry computation",
            module.name
        );
        for c in &module.computations {
            for i in &c.instructions {
                for id in &i.operand_ids {
                    assert!(
                        module.instruction(*id).is_some(),
                        "{}: operand {id}",
                        i.name
                    );
                }
                let text = module.expression(i);
                assert!(text.starts_with(&format!("%{} = ", i.name)), "{text}");
                assert!(text.len() <= 1000, "XProf's cut");
            }
        }
    }
}

/// Every prefix of a real proto and bytes flipped all over it: an error
/// or a module, never a panic or a hang (stack walks and fusion
/// recursion are bounded).
#[test]
fn truncated_and_corrupted_protos_never_panic() {
    let protos = real_protos();
    let bytes = protos.iter().min_by_key(|b| b.len()).unwrap();
    for cut in 0..bytes.len() {
        if let Ok(m) = HloModule::decode(&bytes[..cut]) {
            derive_all(&m);
        }
    }
    let big = protos.iter().max_by_key(|b| b.len()).unwrap();
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..300 {
        let mut copy = big.clone();
        for _ in 0..8 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let at = (state % copy.len() as u64) as usize;
            copy[at] ^= (state >> 32) as u8 | 1;
        }
        if let Ok(m) = HloModule::decode(&copy) {
            derive_all(&m);
        }
    }
    assert!(HloModule::decode(&[0x0a, 0x05, 0x0a]).is_err());
    assert!(HloModule::decode(&[]).is_err());
}
