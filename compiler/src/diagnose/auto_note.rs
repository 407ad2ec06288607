//! The sentence `diagnose` writes when `Auto` chose differently on two
//! sides: what each side chose, and the inputs to the choice that differ.
//!
//! A signed `algorithm` says what the model chose and what was written:
//! `Auto(<choice>)` for a whole `Auto`, `Hier(leg=Auto(<choice>), leg=X)`
//! for a `Hier((...))` with legs left to the model (`leg=X` is written).
//! When the two sides left different legs to `Auto`, or wrote a leg
//! differently, those legs are inputs to the choice that differ, and are
//! named leg by leg; the other differing fields of the collective follow;
//! when nothing signed differs, the inputs that differ are the `model:`
//! overrides, which are not signed, or, when a collective before it
//! differs, the mesh events those collectives take (`Auto` holds each
//! collective to what the ones before it leave of a TOP_SP's events), or,
//! when any other collective differs, the CTRL SPAD slots and mesh
//! events the program's collectives share (`Auto` fits a program's
//! choices into them together when the cheapest do not fit, or leave
//! written collectives after them too few events: `cost::auto::fit`).

/// One side's `algorithm`, as far as `Auto` is concerned.
enum Choice<'a> {
    /// `Auto(<choice>)`: every leg (or the flat algorithm) the model's.
    Whole(&'a str),
    /// A Hier with at least one leg left to the model: per leg in run
    /// order, its name, its algorithm and whether the model chose it.
    Legs(Vec<(&'a str, &'a str, bool)>),
}

impl<'a> Choice<'a> {
    fn of(value: &'a str) -> Option<Choice<'a>> {
        if let Some(inner) = value.strip_prefix("Auto(") {
            return inner.strip_suffix(')').map(Choice::Whole);
        }
        let inner = value.strip_prefix("Hier(")?.strip_suffix(')')?;
        let legs: Vec<(&str, &str, bool)> = inner
            .split(", ")
            .filter_map(|part| {
                let (leg, alg) = part.split_once('=')?;
                Some(match alg.strip_prefix("Auto(").and_then(|a| a.strip_suffix(')')) {
                    Some(chosen) => (leg, chosen, true),
                    None => (leg, alg, false),
                })
            })
            .collect();
        legs.iter().any(|&(_, _, auto)| auto).then_some(Choice::Legs(legs))
    }

    /// How a `Hier((...))` with legs left to the model was written:
    /// `written as Hier((...)) with a and b left to Auto`, or `with every
    /// leg left to Auto`.
    fn written(&self) -> String {
        let Choice::Legs(legs) = self else { return "left to Auto".to_owned() };
        let auto: Vec<&str> = legs.iter().filter(|l| l.2).map(|l| l.0).collect();
        if auto.len() == legs.len() {
            return "written as Hier((...)) with every leg left to Auto".to_owned();
        }
        format!("written as Hier((...)) with {} left to Auto", and_list(&auto))
    }

    /// A leg's algorithm and whether the model chose it (`None`: no such
    /// leg, or a whole `Auto`, where every leg is the model's).
    fn leg(&self, name: &str) -> Option<(&'a str, bool)> {
        match self {
            Choice::Whole(_) => None,
            Choice::Legs(legs) => legs.iter().find(|l| l.0 == name).map(|&(_, alg, auto)| (alg, auto)),
        }
    }
}

/// A signed `algorithm` without its `Auto` marks: what runs
/// (`Auto(Ring)` and `Ring` both run `Ring`; `Hier(a=Auto(Ring), b=Mesh)`
/// runs `Hier(a=Ring, b=Mesh)`).
fn runs(value: &str) -> String {
    if let Some(chosen) = value.strip_prefix("Auto(").and_then(|v| v.strip_suffix(')')) {
        return chosen.to_owned();
    }
    let Some(inner) = value.strip_prefix("Hier(").and_then(|v| v.strip_suffix(')')) else { return value.to_owned() };
    let legs: Vec<String> = inner
        .split(", ")
        .map(|part| match part.split_once('=') {
            Some((leg, alg)) => {
                let alg = alg.strip_prefix("Auto(").and_then(|a| a.strip_suffix(')')).unwrap_or(alg);
                format!("{leg}={alg}")
            }
            None => part.to_owned(),
        })
        .collect();
    format!("Hier({})", legs.join(", "))
}

/// How one side's `algorithm` was given, for the sentence.
fn how(value: &str) -> String {
    match Choice::of(value) {
        Some(Choice::Whole(_)) => "left to Auto".to_owned(),
        Some(c @ Choice::Legs(_)) => c.written(),
        None => "written".to_owned(),
    }
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// When the two sides' `algorithm` run the same algorithm, chosen
/// differently (by `Auto` here, written there, or with different legs
/// left to `Auto`): the sentence that says so. `alone`: no other input of
/// the collective differs, so the two run the same schedule.
pub(super) fn how_chosen_note(here: &str, there: &str, alone: bool) -> Option<String> {
    let same = here != there && runs(here) == runs(there);
    let tail = if alone { ", so the runtime refuses the pair though they run the same schedule" } else { "" };
    same.then(|| {
        format!(
            "both run {}, {} here and {} there: the signature records how the algorithm was chosen{tail}",
            runs(here),
            how(here),
            how(there)
        )
    })
}

/// How a leg was given on one side, for the sentence.
fn given(leg: Option<(&str, bool)>, whole: bool) -> String {
    match leg {
        Some((alg, true)) => format!("left to Auto (chose {alg})"),
        Some((alg, false)) => format!("written {alg}"),
        None if whole => "left to Auto (the whole algorithm was Auto)".to_owned(),
        None => "not used".to_owned(),
    }
}

/// The legs given differently on the two sides (one left to `Auto`, the
/// other written, or written differently): `algorithm.<leg> (<here>
/// here, <there> there)`, in `a`'s run order, then `b`'s extras.
fn leg_inputs(a: &Choice<'_>, b: &Choice<'_>) -> Vec<String> {
    let names = |c: &Choice<'_>| -> Vec<String> {
        match c {
            Choice::Whole(_) => Vec::new(),
            Choice::Legs(legs) => legs.iter().map(|l| l.0.to_owned()).collect(),
        }
    };
    // A whole `Auto` chooses among the flat algorithms and every Hier;
    // a `Hier((...))` with legs left to it, among that Hier's legs only.
    let mut inputs = Vec::new();
    match (a, b) {
        (Choice::Whole(_), Choice::Legs(_)) => {
            inputs.push(format!("algorithm (left to Auto here, {} there)", b.written()));
        }
        (Choice::Legs(_), Choice::Whole(_)) => {
            inputs.push(format!("algorithm ({} here, left to Auto there)", a.written()));
        }
        _ => {}
    }
    let mut legs = names(a);
    for leg in names(b) {
        if !legs.contains(&leg) {
            legs.push(leg);
        }
    }
    let whole = |c: &Choice<'_>| matches!(c, Choice::Whole(_));
    inputs.extend(legs.iter().filter_map(|leg| {
        let (x, y) = (a.leg(leg), b.leg(leg));
        let differ = match (x, y) {
            (Some((xa, false)), Some((ya, false))) => xa != ya,
            (Some((_, xauto)), Some((_, yauto))) => xauto != yauto,
            // A written leg against a whole `Auto`.
            (Some((_, xauto)), None) => !xauto || !whole(b),
            (None, Some((_, yauto))) => !yauto || !whole(a),
            (None, None) => false,
        };
        differ.then(|| format!("algorithm.{leg} ({} here, {} there)", given(x, whole(a)), given(y, whole(b))))
    }));
    inputs
}

/// The other differences of the program, as far as an `Auto` choice is
/// concerned, in words (`collective 3 differs`, `the other side's
/// collective 4 is extra`): the first before it (whose mesh events it was
/// held to) and the first anywhere else (whose CTRL SPAD slots it was
/// fitted with).
#[derive(Clone, Debug, Default)]
pub(super) struct Elsewhere {
    /// The first difference before it.
    pub earlier: Option<String>,
    /// The first other difference, before or after it.
    pub other: Option<String>,
}

/// Whether the two sides left the same legs of a `Hier((...))` to `Auto`
/// and `Auto` chose the same for each: then what differs is a leg written
/// differently, a selection, not `Auto`'s choice (a leg's phases cost the
/// same whichever algorithms the other legs run).
fn same_auto_choices(a: &Choice<'_>, b: &Choice<'_>) -> bool {
    let (Choice::Legs(x), Choice::Legs(y)) = (a, b) else { return false };
    let auto = |legs: &[(&str, &str, bool)]| -> Vec<(String, String)> {
        legs.iter().filter(|l| l.2).map(|l| (l.0.to_owned(), l.1.to_owned())).collect()
    };
    auto(x) == auto(y)
}

/// When both sides' `algorithm` was chosen (at least in part) by `Auto`
/// and `Auto` chose differently: the sentence that says what each chose
/// and which inputs to the choice differ. `others` are the collective's
/// other differing fields (signed inputs); `elsewhere` the program's other
/// collectives that differ; `unsigned` the unsigned inputs that differ
/// ([`Unsigned::differences`](super::Unsigned::differences)) where both
/// sides were read from specs (`None`: a side is a manifest, which does
/// not record them, so they may differ too).
pub(super) fn auto_note(
    here: &str,
    there: &str,
    others: &[&str],
    elsewhere: Elsewhere,
    unsigned: Option<&[String]>,
) -> Option<String> {
    let (a, b) = (Choice::of(here)?, Choice::of(there)?);
    if same_auto_choices(&a, &b) {
        return None;
    }
    let mut inputs = leg_inputs(&a, &b);
    // The algorithm given differently is a sure cause; another signed
    // field that differs may not move the choice at all.
    let given_alike = inputs.is_empty();
    inputs.extend(others.iter().map(|f| (*f).to_owned()));
    // `choices: Wide` widens `inter_all_reduce` when a `Hier((...))`
    // leaves it to `Auto` (the only leg it widens).
    let widened = |c: &Choice<'_>| matches!(c, Choice::Legs(_)) && c.leg("inter_all_reduce").is_some_and(|l| l.1);
    let legs = widened(&a) || widened(&b);
    let model = if legs {
        "model or choices (the `model:` overrides of the cost model, or `choices: Wide` in a `Hier((...))`, \
         which widens the set its legs left to Auto choose from; the signature holds neither)"
    } else {
        "model (the `model:` overrides of the cost model, which the signature does not hold)"
    };
    // The program's other collectives, where this one's own inputs agree.
    let program = |elsewhere: Elsewhere| {
        let mut program = Vec::new();
        if let Some(k) = elsewhere.earlier {
            program.push(format!(
                "the mesh events the collectives before it take ({k}, and `Auto` holds each collective to what \
                 the ones before it leave of a TOP_SP's)"
            ));
        }
        if let Some(k) = elsewhere.other {
            program.push(format!(
                "the CTRL SPAD slots and mesh events the program's collectives share ({k}, and `Auto` fits a \
                 program's choices into a TOP_SP's slots and events together when the cheapest do not fit)"
            ));
        }
        program
    };
    let inputs = match unsigned {
        // Both sides read from specs: what they hold unsigned is known,
        // and named with the signed inputs.
        Some(unsigned) => {
            inputs.extend(unsigned.iter().cloned());
            let program = program(elsewhere);
            match (inputs.is_empty(), program.is_empty()) {
                (false, _) => inputs.join(", "),
                (true, false) => program.join(", or "),
                (true, true) => "none that either spec holds (were they validated by ccc builds of different \
                                 cost models?)"
                    .to_owned(),
            }
        }
        None if inputs.is_empty() => {
            let mut program = program(elsewhere);
            program.push(model.to_owned());
            program.join(", or ")
        }
        // A manifest does not record the unsigned inputs: where the
        // algorithm was given alike, they may be what moved the choice.
        None if given_alike => format!("{}, and perhaps {model}", inputs.join(", ")),
        None => inputs.join(", "),
    };
    // A whole `Auto` by its choice; a Hier as signed, its chosen legs
    // marked `Auto(<choice>)`.
    let side = |c: &Choice<'_>, value: &str| match c {
        Choice::Whole(chosen) => (*chosen).to_owned(),
        Choice::Legs(_) => value.to_owned(),
    };
    let (here, there) = (side(&a, here), side(&b, there));
    Some(format!("Auto chose {here} here and {there} there: the inputs to the choice differ: {inputs}"))
}

#[cfg(test)]
mod tests {
    use super::Choice;
    use crate::build::build;
    use crate::cost::auto::display;
    use crate::sign::sign;
    use crate::validate::validate;
    use ccc_ir::arch::Arch;
    use ccc_ir::enums::{AlgType, OpType};
    use ccc_ir::spec::{Algorithm, Collective, DType, HierLegs, Leg, LegAlgorithm, Program, ReduceOp, Topology};

    /// The signed `algorithm` of every choice `Auto` lists, whole or with
    /// some legs left to it, read back by [`Choice::of`]: a whole `Auto`
    /// gives `cost::auto::display`'s text of the choice; a per-leg one
    /// every leg in run order, its algorithm, and whether the model chose
    /// it.
    #[test]
    fn every_signed_choice_reads_back() {
        let mut read = 0;
        for op in [OpType::AllReduce, OpType::AllGather, OpType::ReduceScatter] {
            let mut c = Collective::new(op, DType::Bf16, 1 << 20, Arch::Cayman, Topology::new(32, 16)).channels(4);
            if op.is_reducing() {
                c = c.reduce(ReduceOp::Add);
            }
            let legs = crate::algorithms::hier_legs(op).unwrap_or(&[]);
            // Whole `Auto`; every leg but the first left to it; only the first.
            let mut specs = vec![Algorithm::Auto];
            if let Some((&first, rest)) = legs.split_first() {
                let written = rest.iter().fold(HierLegs::new(), |h, &l| h.with(l, LegAlgorithm::Auto));
                specs.push(Algorithm::Hier(written.with(first, AlgType::Ring)));
                let auto_first = rest.iter().fold(HierLegs::new(), |h, &l| h.with(l, AlgType::Ring));
                specs.push(Algorithm::Hier(auto_first.with(first, LegAlgorithm::Auto)));
            }
            for algorithm in specs {
                let program =
                    validate(&Program::from(Collective { algorithm, ..c.clone() })).unwrap_or_else(|e| panic!("{e}"));
                let Some(auto) = program.collectives()[0].auto().cloned() else { panic!("no Auto choice") };
                for (i, alternative) in auto.alternatives.iter().enumerate() {
                    let mut one = program.clone();
                    one.collectives[0].algorithm = alternative.algorithm;
                    one.collectives[0].auto = Some(crate::valid::AutoChoice { chosen: i, ..auto.clone() });
                    let Ok(schedule) = build(&one) else { continue };
                    let signature = sign(&one, &schedule);
                    let field = signature.fields.iter().find(|f| f.name.ends_with("algorithm"));
                    let value = field.map(|f| f.value.as_str()).unwrap_or_default();
                    match (Choice::of(value), &alternative.algorithm) {
                        (Some(Choice::Whole(chosen)), _) if auto.auto_legs.is_empty() => {
                            assert_eq!(chosen, display(&alternative.algorithm), "{value}");
                        }
                        (Some(Choice::Legs(read_legs)), crate::valid::ResolvedAlgorithm::Hier(chosen)) => {
                            let expected: Vec<(&str, &str, bool)> = chosen
                                .iter()
                                .map(|&(leg, alg): &(Leg, AlgType)| {
                                    (leg.field(), alg.name(), auto.auto_legs.contains(&leg))
                                })
                                .collect();
                            assert_eq!(read_legs, expected, "{value}");
                        }
                        _ => panic!("{value} does not read back as {}", display(&alternative.algorithm)),
                    }
                    read += 1;
                }
            }
        }
        assert!(read >= 40, "{read}");
    }
}
