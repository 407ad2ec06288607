//! Element types and reductions: XLA's element type names to ccc's
//! [`DType`], and a `to_apply` computation recognised by its root to ccc's
//! [`ReduceOp`].

use super::error::HloError;
use super::text::{Computation, Instruction};
use ccc_ir::spec::{DType, ReduceOp};
use std::collections::BTreeMap;

/// A reduction computation, recognised by its root: the root applied to the
/// computation's two parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combiner {
    /// `add`.
    Add,
    /// `maximum`.
    Max,
    /// `minimum`.
    Min,
    /// `multiply`: recognised, but the device has no product reduction.
    Multiply,
    /// `and`: on `pred`, a minimum over 0 and 1.
    And,
    /// `or`: on `pred`, a maximum over 0 and 1.
    Or,
}

/// The root opcodes recognised, and what they are.
const ROOTS: [(&str, Combiner); 6] = [
    ("add", Combiner::Add),
    ("maximum", Combiner::Max),
    ("minimum", Combiner::Min),
    ("multiply", Combiner::Multiply),
    ("and", Combiner::And),
    ("or", Combiner::Or),
];

/// The reduction of a reducing collective's `to_apply`.
///
/// # Errors
///
/// An [`HloError`] at `to_apply` when it is missing, names no computation
/// of the module, or its root is not one of the recognised opcodes applied to the two
/// parameters (naming the computation and its root).
pub fn combiner<'a>(
    by_name: &BTreeMap<&'a str, &Computation<'a>>,
    ins: &Instruction<'a>,
) -> Result<Combiner, HloError> {
    let accepted =
        "accepted: a computation whose root is add, maximum, minimum (or, on pred, and / or) of its two parameters";
    let attr = ins.attr("to_apply").ok_or_else(|| {
        HloError::at(ins.opcode_at, ins.opcode.len(), format!("`{}` has no `to_apply` reduction", ins.name), accepted)
    })?;
    let name = attr.value.trim_start_matches('%');
    let computation = by_name.get(name).ok_or_else(|| {
        HloError::at(
            attr.at,
            attr.value.len(),
            format!("`{}`: to_apply names `{name}`, which the module does not define", ins.name),
            "the module looks truncated",
        )
    })?;
    let root = computation.root();
    let recognised = root.and_then(|r| recognise(computation, r));
    recognised.ok_or_else(|| {
        let what = root.map_or_else(|| "is empty".to_owned(), |r| format!("has root `{}` ({})", r.name, r.opcode));
        HloError::at(
            attr.at,
            attr.value.len(),
            format!("`{}`: to_apply computation `{name}` is not a recognised reduction: it {what}", ins.name),
            accepted,
        )
    })
}

/// The reduction `root` applies to `computation`'s two parameters: a
/// recognised opcode of the two ([`ROOTS`]), or `select(compare(x, y,
/// direction), x, y)`, a maximum (`GT`, `GE`) or minimum (`LT`, `LE`), as
/// XLA writes one where a backend has no such opcode; seen through value
/// conversions (`convert`, `copy`), as a reduction of bf16 carried out in
/// f32 is written (`convert(add(convert(x), convert(y)))`), and at the
/// root through JAX's `Sharding` annotation.
fn recognise(computation: &Computation<'_>, root: &Instruction<'_>) -> Option<Combiner> {
    let params: Vec<&str> =
        computation.instructions.iter().filter(|i| i.opcode == "parameter").map(|i| i.name).collect();
    // The instruction named `name`, through copies and conversions that
    // keep every value (`widens`): a reduction of values converted
    // otherwise (to pred, to a narrower integer, float to integer) is not
    // that reduction of the parameters.
    let through = |name: &str| -> Option<&Instruction<'_>> {
        let mut at = computation.get(name)?;
        // Each step goes to an operand; a cycle (not HLO) ends at the cap.
        for _ in 0..computation.instructions.len() {
            match (at.opcode, at.operands.as_slice()) {
                ("copy", [operand]) => at = computation.get(operand)?,
                ("convert", [operand]) => {
                    let from = computation.get(operand)?;
                    if !widens(elem(from)?, elem(at)?) {
                        return None;
                    }
                    at = from;
                }
                _ => return Some(at),
            }
        }
        None
    };
    let param = |name: &str| through(name).filter(|i| i.opcode == "parameter").map(|i| i.name);
    // The two parameters, each once, in the order given.
    let both = |a: &str, b: &str| {
        let (a, b) = (param(a)?, param(b)?);
        (a != b && params.len() == 2 && params.contains(&a) && params.contains(&b)).then_some((a, b))
    };
    // The root may convert the result back to the parameters' type from
    // one that holds it (a bf16 sum carried out in f32, rounded once).
    // It may also be wrapped in JAX's `Sharding` annotation (a custom call
    // that passes its operand through), as a shard_map's reduction is in
    // text before SPMD partitioning.
    let mut root = root;
    while let ("convert" | "copy" | "custom-call", [operand]) = (root.opcode, root.operands.as_slice()) {
        if root.opcode == "custom-call" && root.custom_call_target() != Some("Sharding") {
            break;
        }
        let from = computation.get(operand)?;
        if root.opcode == "convert" && !widens(elem(root)?, elem(from)?) {
            return None;
        }
        root = from;
    }
    if let Some((_, c)) = ROOTS.iter().find(|(op, _)| *op == root.opcode) {
        let [a, b] = root.operands.as_slice() else { return None };
        return both(a, b).map(|_| *c);
    }
    let ("select", [predicate, on_true, on_false]) = (root.opcode, root.operands.as_slice()) else { return None };
    let compare = through(predicate).filter(|i| i.opcode == "compare")?;
    let [x, y] = compare.operands.as_slice() else { return None };
    let (x, y) = both(x, y)?;
    let picks = (param(on_true)?, param(on_false)?);
    let larger = match compare.attr("direction")?.value {
        "GT" | "GE" => true,
        "LT" | "LE" => false,
        _ => return None,
    };
    // `x > y ? x : y` is the maximum; `x > y ? y : x` the minimum.
    match picks {
        p if p == (x, y) => Some(if larger { Combiner::Max } else { Combiner::Min }),
        p if p == (y, x) => Some(if larger { Combiner::Min } else { Combiner::Max }),
        _ => None,
    }
}

/// The element type of a scalar (or any array) instruction.
fn elem<'i>(ins: &'i Instruction<'_>) -> Option<&'i str> {
    match &ins.shape {
        super::text::Shape::Array { elem, .. } => Some(elem),
        super::text::Shape::Tuple(_) => None,
    }
}

/// Whether converting XLA element type `from` to `to` keeps every value:
/// the same type, a float to a float of at least its range and precision
/// (f8 and bf16 and f16 to f32, f32 to f64), an integer to an integer
/// that holds all of its values.
fn widens(from: &str, to: &str) -> bool {
    const FLOATS: [(&str, u32, u32); 6] =
        [("f8e4m3fn", 4, 3), ("f8e5m2", 5, 2), ("bf16", 8, 7), ("f16", 5, 10), ("f32", 8, 23), ("f64", 11, 52)];
    const INTS: [(&str, bool, u32); 8] = [
        ("s8", true, 8),
        ("u8", false, 8),
        ("s16", true, 16),
        ("u16", false, 16),
        ("s32", true, 32),
        ("u32", false, 32),
        ("s64", true, 64),
        ("u64", false, 64),
    ];
    if from == to {
        return true;
    }
    let float = |t: &str| FLOATS.iter().find(|f| f.0 == t).map(|&(_, e, m)| (e, m));
    let int = |t: &str| INTS.iter().find(|i| i.0 == t).map(|&(_, signed, bits)| (signed, bits));
    match ((float(from), float(to)), (int(from), int(to))) {
        ((Some((e1, m1)), Some((e2, m2))), _) => e2 >= e1 && m2 >= m1,
        (_, (Some((s1, b1)), Some((s2, b2)))) => match (s1, s2) {
            (true, true) | (false, false) => b2 >= b1,
            (false, true) => b2 > b1,
            (true, false) => false,
        },
        _ => false,
    }
}

/// The ccc element type (and reduce, for a reducing collective) of an XLA
/// element type `elem` on instruction `ins`.
///
/// `pred` travels as `U8`; reduced with `and` it is a `Min`, with `or` a
/// `Max`. ccc's `F8E4M3` is taken to be XLA's `f8e4m3fn` (OCP E4M3); the
/// other E4M3 variants (`f8e4m3`, `f8e4m3fnuz`, `f8e4m3b11fnuz`) are refused.
///
/// # Errors
///
/// An [`HloError`] at the instruction's shape naming a type ccc has no
/// element type for (f64, complex, 4-bit, the fnuz FP8 variants, ...), or a
/// reduction the device cannot perform on it (multiply; bitwise and/or).
pub fn dtype(
    ins: &Instruction<'_>,
    elem: &str,
    combiner: Option<Combiner>,
) -> Result<(DType, Option<ReduceOp>), HloError> {
    let dtype = match elem {
        "f32" => DType::F32,
        "f16" => DType::F16,
        "bf16" => DType::Bf16,
        "f8e4m3fn" => DType::F8E4M3,
        "f8e5m2" => DType::F8E5M2,
        "s8" => DType::I8,
        "u8" | "pred" => DType::U8,
        "s16" => DType::I16,
        "u16" => DType::U16,
        "s32" => DType::I32,
        "u32" => DType::U32,
        "s64" => DType::I64,
        "u64" => DType::U64,
        other => {
            return Err(HloError::at(
                ins.shape_at,
                1,
                format!("`{}` is of element type `{other}`, which the device has no collective for", ins.name),
                "accepted: f32, f16, bf16, f8e4m3fn, f8e5m2, pred, s8, u8, s16, u16, s32, u32, s64, u64",
            ));
        }
    };
    let refuse = |why: &str| {
        HloError::at(
            ins.shape_at,
            1,
            format!("`{}` reduces {elem} with {why}, which the device cannot do", ins.name),
            "accepted: add, maximum, minimum; and / or on pred",
        )
    };
    let reduce = match (combiner, elem) {
        (None, _) => None,
        (Some(Combiner::Add), "pred") => return Err(refuse("add")),
        (Some(Combiner::Add), _) => Some(ReduceOp::Add),
        (Some(Combiner::Max), _) | (Some(Combiner::Or), "pred") => Some(ReduceOp::Max),
        (Some(Combiner::Min), _) | (Some(Combiner::And), "pred") => Some(ReduceOp::Min),
        (Some(Combiner::Multiply), _) => return Err(refuse("multiply")),
        (Some(Combiner::And | Combiner::Or), _) => return Err(refuse("a bitwise and/or")),
    };
    Ok((dtype, reduce))
}
