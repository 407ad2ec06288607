use super::align::{Edit, align};
use super::cause::CAUSES;
use super::fields::Parsed;
use super::*;
use crate::sign::Field;
use ccc_ir::FORMAT_VERSION;

fn coll(op: &str, count: u64) -> Vec<(String, String)> {
    vec![
        ("op".into(), op.into()),
        ("dtype".into(), "Bf16".into()),
        ("count".into(), count.to_string()),
        ("channels".into(), "4".into()),
        ("schedule".into(), format!("s{op}{count}")),
    ]
}

fn input(name: &str, version: u32, program: &[Vec<(String, String)>]) -> Input {
    let mut fields = vec![
        Field { name: "format_version".into(), value: version.to_string() },
        Field { name: "collective_n".into(), value: program.len().to_string() },
    ];
    for (i, c) in program.iter().enumerate() {
        for (k, v) in c {
            fields.push(Field { name: format!("collectives[{i}].{k}"), value: v.clone() });
        }
    }
    Input::new(name, fields)
}

fn program(counts: &[(&str, u64)]) -> Vec<Vec<(String, String)>> {
    counts.iter().map(|&(op, n)| coll(op, n)).collect()
}

fn base() -> Vec<Vec<(String, String)>> {
    program(&[("AllReduce", 1), ("AllGather", 2), ("AllReduce", 3), ("ReduceScatter", 4), ("AllReduce", 5)])
}

#[test]
fn identical_images_are_reported_only_when_every_member_has_them() {
    let a = input("a", 1, &program(&[("AllReduce", 8)]));
    let b = input("b", 1, &program(&[("AllReduce", 9)]));
    let with = |i: &Input, d: Option<&str>| Input { images: d.map(str::to_owned), ..i.clone() };
    let report = diagnose(&[with(&a, Some("x")), with(&a, Some("x")), with(&b, Some("x"))]);
    assert!(report.differences[0].same_images);
    let report = diagnose(&[with(&a, Some("x")), with(&b, Some("y"))]);
    assert!(!report.differences[0].same_images);
    // A manifest's images are unknown: nothing is claimed.
    let report = diagnose(&[with(&a, Some("x")), with(&a, None), with(&b, Some("x"))]);
    assert!(!report.differences[0].same_images);
}

#[test]
fn equal_inputs_match() {
    let r = diagnose(&[input("a", 1, &base()), input("b", 1, &base()), input("c", 1, &base())]);
    assert!(r.all_match);
    assert_eq!(r.groups.len(), 1);
    assert_eq!(r.groups[0].members, ["a", "b", "c"]);
    assert!(r.odd_ones_out.is_empty() && r.differences.is_empty() && !r.majority_tied);
}

#[test]
fn an_extra_collective_in_the_middle_is_one_extra() {
    let mut b = base();
    b.insert(2, coll("AllGather", 9));
    let r = diagnose(&[input("a", 1, &base()), input("b", 1, &b)]);
    assert!(!r.all_match && r.majority_tied);
    let d = &r.differences[0];
    assert_eq!(d.collectives.len(), 1, "{d:#?}");
    assert_eq!(d.collectives[0].kind, DiffKind::Extra);
    assert_eq!((d.collectives[0].majority_index, d.collectives[0].other_index), (2, 2));
    assert_eq!(d.collectives[0].other.as_deref(), Some("AllGather Bf16 x 9"));
    assert_eq!(d.first, Some(Position { majority_index: 2, majority_n: 5, other_index: 2, other_n: 6 }));
    assert_eq!(d.causes[0].cause, Cause::ProgramDiverged);
}

#[test]
fn a_missing_collective_is_one_missing() {
    let mut b = base();
    b.remove(3);
    let r = diagnose(&[input("a", 1, &base()), input("b", 1, &b)]);
    let d = &r.differences[0];
    assert_eq!(d.collectives.len(), 1, "{d:#?}");
    assert_eq!((d.collectives[0].kind, d.collectives[0].majority_index), (DiffKind::Missing, 3));
}

#[test]
fn a_changed_count_is_changed_with_its_cause() {
    let mut b = base();
    b[1] = coll("AllGather", 3);
    let r = diagnose(&[input("a", 1, &base()), input("b", 1, &b)]);
    let d = &r.differences[0];
    assert_eq!(d.collectives.len(), 1);
    let c = &d.collectives[0];
    assert_eq!(c.kind, DiffKind::Changed);
    let causes: Vec<(&str, Cause)> = c.fields.iter().map(|f| (f.field.as_str(), f.cause)).collect();
    assert_eq!(causes, [("count", Cause::TensorShapes), ("schedule", Cause::FollowsFromInputs)]);
}

#[test]
fn a_shifted_run_reads_as_one_missing_and_one_extra() {
    let a = program(&[("AllReduce", 1), ("AllReduce", 2), ("AllReduce", 3), ("AllReduce", 4)]);
    let b = program(&[("AllReduce", 1), ("AllReduce", 3), ("AllReduce", 4), ("AllReduce", 5)]);
    let r = diagnose(&[input("a", 1, &a), input("b", 1, &b)]);
    let kinds: Vec<(DiffKind, u32, u32)> =
        r.differences[0].collectives.iter().map(|c| (c.kind, c.majority_index, c.other_index)).collect();
    assert_eq!(kinds, [(DiffKind::Missing, 1, 1), (DiffKind::Extra, 4, 3)]);
}

/// A collective moved to another place, equal in every field: one entry
/// with its two places, the reordering its cause (it was one missing and
/// one extra, each blamed on a program that diverged).
#[test]
fn a_moved_collective_is_one_move() {
    let mut b = base();
    let moved = b.remove(1);
    b.push(moved);
    let r = diagnose(&[input("a", 1, &base()), input("b", 1, &b)]);
    let d = &r.differences[0];
    let kinds: Vec<(DiffKind, u32, u32)> =
        d.collectives.iter().map(|c| (c.kind, c.majority_index, c.other_index)).collect();
    assert_eq!(kinds, [(DiffKind::Moved, 1, 4)], "{d:#?}");
    assert_eq!(d.collectives[0].other.as_deref(), Some("AllGather Bf16 x 2"));
    assert_eq!(d.causes.iter().map(|c| c.cause).collect::<Vec<_>>(), [Cause::Reordered]);

    // Moved to the front, with a change after it: the move is listed
    // first, where the programs part (it was listed at its old place).
    let mut b = base();
    let last = b.pop().unwrap_or_default();
    b.insert(0, last);
    b[3] = coll("AllReduce", 30);
    let r = diagnose(&[input("a", 1, &base()), input("b", 1, &b)]);
    let d = &r.differences[0];
    let kinds: Vec<(DiffKind, u32, u32)> =
        d.collectives.iter().map(|c| (c.kind, c.majority_index, c.other_index)).collect();
    assert_eq!(kinds, [(DiffKind::Moved, 4, 0), (DiffKind::Changed, 2, 3)], "{d:#?}");
}

/// The same collectives in an order no single move explains (the two
/// ends swapped) read as changed pairs, blamed on a program that
/// diverged: each that moved is named, the reordering the cause.
#[test]
fn collectives_swapped_are_each_one_move() {
    let mut b = base();
    b.swap(0, 4);
    // Ends of another op each, so that the swap is not one equal pair.
    let mut a = base();
    a[4] = coll("ReduceScatter", 5);
    b[0] = coll("ReduceScatter", 5);
    let r = diagnose(&[input("a", 1, &a), input("b", 1, &b)]);
    let d = &r.differences[0];
    let kinds: Vec<(DiffKind, u32, u32)> =
        d.collectives.iter().map(|c| (c.kind, c.majority_index, c.other_index)).collect();
    assert_eq!(kinds, [(DiffKind::Moved, 0, 4), (DiffKind::Moved, 4, 0)], "{d:#?}");
    assert_eq!(d.causes.iter().map(|c| c.cause).collect::<Vec<_>>(), [Cause::Reordered]);
}

/// A collective moved to the end while the one after it changed in one
/// field: read as that move and that one field, not as the moved one's
/// place taken by its neighbour changed in every field (two alignments of
/// equal structure; the one that says less differs is taken).
#[test]
fn a_move_beside_a_change_names_the_field_that_changed() {
    let with = |op: &str, dtype: &str, count: u64, reduce: &str| {
        let mut c = coll(op, count);
        c[1].1 = dtype.into();
        c.push(("reduce".into(), reduce.into()));
        c
    };
    let a = vec![
        with("AllReduce", "F32", 64, "Add"),
        with("AllReduce", "Bf16", 16384, "Add"),
        with("AllGather", "Bf16", 8, "Add"),
    ];
    let mut b = vec![with("AllReduce", "Bf16", 16384, "Max"), with("AllGather", "Bf16", 8, "Add")];
    b.push(a[0].clone());
    let r = diagnose(&[input("a", 1, &a), input("b", 1, &b)]);
    let d = &r.differences[0];
    let kinds: Vec<(DiffKind, u32, u32)> =
        d.collectives.iter().map(|c| (c.kind, c.majority_index, c.other_index)).collect();
    assert_eq!(kinds, [(DiffKind::Moved, 0, 2), (DiffKind::Changed, 1, 0)], "{d:#?}");
    let changed: Vec<&str> = d.collectives[1].fields.iter().map(|f| f.field.as_str()).collect();
    assert_eq!(changed, ["reduce"]);
}

/// `collective_n` differs as the collectives listed do, and is not named
/// then; a count that is not the number listed (an edited manifest) is.
#[test]
fn a_collective_count_unlike_the_collectives_listed_is_named() {
    let b = input("b", 1, &base());
    let r = diagnose(&[input("a", 1, &base()), input("b", 1, &base()[..4])]);
    assert!(r.differences[0].fields.is_empty(), "{:#?}", r.differences[0]);
    let mut edited = b.clone();
    edited.fields[1].value = "6".into();
    let r = diagnose(&[input("a", 1, &base()), Input::new("b", edited.fields)]);
    let d = &r.differences[0];
    let named: Vec<(&str, Option<&str>, Cause)> =
        d.fields.iter().map(|f| (f.field.as_str(), f.other.as_deref(), f.cause)).collect();
    assert_eq!(named, [("collective_n", Some("6"), Cause::EditedCount)]);
    assert!(d.collectives.is_empty(), "{d:#?}");
}

#[test]
fn the_schedule_alone_is_a_build_or_a_version() {
    let mut b = base();
    b[0][4].1 = "other".into();
    let r = diagnose(&[input("a", 1, &base()), input("b", 1, &b)]);
    assert_eq!(r.differences[0].collectives[0].fields[0].cause, Cause::Builds);
    let r = diagnose(&[input("a", 1, &base()), input("b", 2, &b)]);
    let d = &r.differences[0];
    assert_eq!(d.fields[0].field, "format_version");
    assert_eq!(d.fields[0].cause, Cause::Versions);
    assert_eq!(d.collectives[0].fields[0].cause, Cause::Versions);
    assert_eq!(d.causes.len(), 1);
}

#[test]
fn majority_and_odd_ones_out() {
    let mut odd = base();
    odd[4][3].1 = "2".into();
    let mut inputs: Vec<Input> = (0..7).map(|r| input(&format!("r{r}"), 1, &base())).collect();
    inputs[2] = input("r2", 1, &odd);
    inputs[5] = input("r5", 1, &odd);
    inputs.push(input("r7", 1, &base()[..4]));
    let r = diagnose(&inputs);
    assert_eq!(r.groups.len(), 3);
    assert_eq!(r.groups[0].members, ["r0", "r1", "r3", "r4", "r6"]);
    assert_eq!(r.groups[1].members, ["r2", "r5"]);
    assert_eq!(r.groups[2].members, ["r7"]);
    assert_eq!(r.odd_ones_out, ["r2", "r5", "r7"]);
    assert!(!r.majority_tied);
    assert_eq!(r.differences.iter().map(|d| d.group).collect::<Vec<_>>(), [1, 2]);
    assert_eq!(r.differences[1].collectives[0].kind, DiffKind::Missing);
}

#[test]
fn unknown_and_absent_fields() {
    let mut b = input("b", 1, &base());
    b.fields.push(Field { name: "collectives[0].tp_layout".into(), value: "x".into() });
    let r = diagnose(&[input("a", 1, &base()), b]);
    let f = &r.differences[0].collectives[0].fields[0];
    assert_eq!((f.field.as_str(), f.majority.as_deref(), f.cause), ("tp_layout", None, Cause::UnknownField));
}

#[test]
fn every_signature_field_has_a_cause() {
    for field in crate::sign::COLLECTIVE_FIELDS.iter().chain(&["format_version"]) {
        if *field != "schedule" {
            assert_ne!(Cause::of_field(field), Cause::UnknownField, "{field}");
        }
    }
    for (cause, _, text) in CAUSES {
        assert_eq!(cause.text(), text);
        assert!(!text.is_empty());
    }
}

/// A program of `n` collectives with every field `sign` writes.
fn full(n: usize) -> Vec<Vec<(String, String)>> {
    let one: Vec<(String, String)> =
        crate::sign::COLLECTIVE_FIELDS.iter().map(|f| ((*f).to_owned(), format!("{f}-value"))).collect();
    vec![one; n]
}

/// `a`'s manifest JSON, its signature recomputed after `edit`: what a
/// hand edit that knows the digest leaves.
fn edited(a: &Input, edit: impl FnOnce(&mut Vec<Field>)) -> String {
    let mut fields = a.fields.clone();
    edit(&mut fields);
    let digest = crate::sign::digest_of(&fields);
    serde_json::json!({ "format_version": 1, "signature": digest, "signature_fields": fields }).to_string()
}

fn edited_fields(json: &str) -> (usize, String) {
    match Input::from_manifest_json("m", json) {
        Err(InputError::EditedFields { index, problem, .. }) => (index, problem),
        other => panic!("{other:?}"),
    }
}

#[test]
fn manifests_whose_fields_ccc_does_not_write_are_refused_even_when_resigned() {
    let a = input("a", FORMAT_VERSION, &full(2));
    assert_eq!(Input::from_manifest_json("a", &edited(&a, |_| ())), Ok(a.clone()));
    // collective_n says more collectives than are listed, or fewer.
    let (i, p) = edited_fields(&edited(&a, |f| f[1].value = "5".into()));
    assert_eq!(i, 32, "{p}");
    assert!(p.contains("collective_n is 5, so ccc writes 77 fields; this manifest lists 32"), "{p}");
    let (i, p) = edited_fields(&edited(&a, |f| f[1].value = "1".into()));
    assert_eq!(i, 17, "{p}");
    assert!(p.starts_with("is extra"), "{p}");
    let (i, p) = edited_fields(&edited(&a, |f| f[1].value = "two".into()));
    assert_eq!(i, 1, "{p}");
    // Two fields swapped, a field renamed, a field dropped.
    let (i, p) = edited_fields(&edited(&a, |f| f.swap(3, 4)));
    assert_eq!(i, 3, "{p}");
    assert!(p.contains("is named `collectives[0].reduce`, where format version 1 has `collectives[0].dtype`"), "{p}");
    let (i, _) = edited_fields(&edited(&a, |f| f[20].name = "collectives[1].bogus".into()));
    assert_eq!(i, 20);
    let (i, _) = edited_fields(&edited(&a, |f| drop(f.remove(0))));
    assert_eq!(i, 0);
    // Fields cut down to `format_version` alone, or to nothing; a
    // collective_n past what can be listed (no overflow, in any build).
    let (i, p) = edited_fields(&edited(&a, |f| f.truncate(1)));
    assert_eq!((i, p.as_str()), (1, "is missing: format version 1 writes `collective_n` there"));
    let (i, p) = edited_fields(&edited(&a, Vec::clear));
    assert_eq!((i, p.as_str()), (0, "is missing: format version 1 writes `format_version` there"));
    let (i, p) = edited_fields(&edited(&a, |f| f[1].value = (usize::MAX / 15 + 1).to_string()));
    assert_eq!(i, 1);
    assert!(p.ends_with("more collectives than a manifest can list"), "{p}");
    let (i, p) = edited_fields(&edited(&a, |f| f[1].value = usize::MAX.to_string()));
    assert!(i == 1 && p.ends_with("more collectives than a manifest can list"), "{p}");
    // A line break in a value or a name: the preimage would have a line
    // more than the fields. Refused at any format version, and the long
    // value is cut in the message.
    let (i, p) = edited_fields(&edited(&a, |f| f[5].value = "8\nevil: 1".into()));
    assert_eq!(i, 5, "{p}");
    assert!(p.contains("its value holds a line break"), "{p}");
    let other = input("o", FORMAT_VERSION + 1, &base());
    let json = |fields: &[Field]| {
        serde_json::json!({ "signature": crate::sign::digest_of(fields), "signature_fields": fields }).to_string()
    };
    assert!(Input::from_manifest_json("o", &json(&other.fields)).is_ok(), "another version's fields load as they are");
    let mut broken = other.fields.clone();
    broken[3].name = format!("{}\r", "x".repeat(1000));
    let (i, p) = edited_fields(&json(&broken));
    assert_eq!(i, 3);
    assert!(p.contains("its name holds a line break") && p.len() < 200, "{p}");
}

#[test]
fn manifests_are_checked() {
    let a = input("a", 1, &full(5));
    let json = serde_json::json!({
        "format_version": 1, "signature": a.digest(), "signature_fields": a.fields, "other": 3
    })
    .to_string();
    assert_eq!(Input::from_manifest_json("a", &json), Ok(a.clone()));
    // Saved by an editor that writes a byte-order mark: the same manifest.
    assert_eq!(Input::from_manifest_json("a", &format!("\u{feff}{json}")), Ok(a.clone()));
    let bad = json.replace(&a.digest(), "0123");
    assert!(matches!(Input::from_manifest_json("a", &bad), Err(InputError::DigestMismatch { .. })));
    let v2 = json.replace("\"format_version\":1", "\"format_version\":2");
    assert!(matches!(Input::from_manifest_json("a", &v2), Err(InputError::FormatVersionMismatch { .. })));
    let e = Input::from_manifest_json("a", "{\"signature\": 3").unwrap_err();
    assert!(matches!(e, InputError::NotAManifest { line: 1, .. }), "{e:?}");
    // A list is no manifest, though serde reads a struct's fields from one
    // by position (a list of three read as a manifest of no fields): at
    // the top, or as a field.
    let listed = serde_json::json!([null, crate::sign::digest_of(&[]), []]).to_string();
    let e = Input::from_manifest_json("a", &listed).unwrap_err();
    let said = |e: &InputError| match e {
        InputError::NotAManifest { line, column, message, .. } => (*line, *column, message.clone()),
        _ => panic!("{e:?}"),
    };
    let (line, column, message) = said(&e);
    assert_eq!((line, column), (1, 1), "{e:?}");
    assert!(message.contains("expected a JSON object of named fields"), "{e:?}");
    // A field as a `[name, value]` pair, at its own place (its line).
    let pairs: Vec<serde_json::Value> = a.fields.iter().map(|f| serde_json::json!([f.name, f.value])).collect();
    let paired = serde_json::json!({"format_version": 1, "signature": a.digest(), "signature_fields": pairs});
    let text = serde_json::to_string_pretty(&paired).unwrap();
    let (line, _, message) = said(&Input::from_manifest_json("a", &text).unwrap_err());
    let first_pair = text.lines().position(|l| l.trim() == "[").unwrap() + 1;
    assert_eq!(line, first_pair, "{message}\n{text}");
    assert!(message.contains("expected a JSON object of named fields"), "{message}");
}

#[test]
fn no_inputs_no_panic() {
    let r = diagnose(&[]);
    assert!(r.all_match && r.groups.is_empty());
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
    /// Any edit script: the alignment's cost never exceeds the edit's,
    /// matches are really equal, and every collective appears once.
    #[test]
    fn alignment_is_consistent(
        a in proptest::collection::vec((0u8..3, 0u64..4), 0..12),
        b in proptest::collection::vec((0u8..3, 0u64..4), 0..12),
    ) {
        let ops = ["AllReduce", "AllGather", "ReduceScatter"];
        let pa: Vec<_> = a.iter().map(|&(o, n)| coll(ops[o as usize], n)).collect();
        let pb: Vec<_> = b.iter().map(|&(o, n)| coll(ops[o as usize], n)).collect();
        let (ia, ib) = (input("a", 1, &pa), input("b", 1, &pb));
        let (qa, qb) = (Parsed::of(&ia.fields), Parsed::of(&ib.fields));
        let edits = align(&qa.collectives, &qb.collectives);
        let (mut i, mut j) = (0u32, 0u32);
        for s in &edits {
            match *s {
                Edit::Match(x, y) => {
                    proptest::prop_assert_eq!((x, y), (i, j));
                    proptest::prop_assert_eq!(&pa[x as usize], &pb[y as usize]);
                    i += 1; j += 1;
                }
                Edit::Changed(x, y) => { proptest::prop_assert_eq!((x, y), (i, j)); i += 1; j += 1; }
                Edit::Missing(x, y) => { proptest::prop_assert_eq!((x, y), (i, j)); i += 1; }
                Edit::Extra(x, y) => { proptest::prop_assert_eq!((x, y), (i, j)); j += 1; }
            }
        }
        proptest::prop_assert_eq!((i as usize, j as usize), (pa.len(), pb.len()));
        let r = diagnose(&[ia, ib]);
        proptest::prop_assert_eq!(r.all_match, pa == pb);
        if pa != pb {
            proptest::prop_assert!(!r.differences[0].collectives.is_empty());
        }
    }
}

/// Two sides that left different legs of a `Hier((...))` to `Auto`, with
/// no other signed input different: the note names each leg given
/// differently and what each side did with it, not the `model:` overrides
/// (the algorithm given differently is a sure cause).
#[test]
fn auto_legs_left_differently_are_named_leg_by_leg() {
    let here =
        "Hier(intra_reduce_scatter=Auto(Kangaring), inter_all_reduce=InterRdh, intra_all_gather=Auto(Kangaring))";
    let there = "Hier(intra_reduce_scatter=Kangaring, inter_all_reduce=Auto(Ring), intra_all_gather=Auto(Ring))";
    let note = auto_note::auto_note(here, there, &[], auto_note::Elsewhere::default(), None).unwrap_or_default();
    assert_eq!(
        note,
        format!(
            "Auto chose {here} here and {there} there: the inputs to the choice differ: \
             algorithm.intra_reduce_scatter (left to Auto (chose Kangaring) here, written Kangaring there), \
             algorithm.inter_all_reduce (written InterRdh here, left to Auto (chose Ring) there)"
        )
    );
    // The same legs left to Auto on both sides and nothing else signed
    // differs: the unsigned `model:` overrides are what differ.
    let other = "Hier(intra_reduce_scatter=Auto(Ring), inter_all_reduce=InterRdh, intra_all_gather=Auto(Ring))";
    let note = auto_note::auto_note(here, other, &[], auto_note::Elsewhere::default(), None).unwrap_or_default();
    // (`choices: Wide` widens inter_all_reduce only, written here.)
    assert!(note.ends_with("the inputs to the choice differ: model (the `model:` overrides of the cost model, which the signature does not hold)"), "{note}");
    // Legs named first, then the other differing fields.
    let note = auto_note::auto_note(here, there, &["count"], auto_note::Elsewhere::default(), None).unwrap_or_default();
    assert!(note.ends_with("left to Auto (chose Ring) there), count"), "{note}");
    // The algorithm given alike and another signed field different: from
    // manifests, which do not hold the unsigned inputs, those may differ
    // too, and are named as such (the signed field alone may not move the
    // choice).
    let note = auto_note::auto_note(here, other, &["count"], auto_note::Elsewhere::default(), None).unwrap_or_default();
    assert!(
        note.ends_with(
            "differ: count, and perhaps model (the `model:` overrides of the cost model, which the signature does \
             not hold)"
        ),
        "{note}"
    );
    // A whole Auto against a per-leg one: the written legs differ.
    let whole = "Auto(Hier(intra_reduce_scatter=Ring, inter_all_reduce=Ring, intra_all_gather=Ring))";
    let note = auto_note::auto_note(whole, here, &[], auto_note::Elsewhere::default(), None).unwrap_or_default();
    assert!(
        note.starts_with(
            "Auto chose Hier(intra_reduce_scatter=Ring, inter_all_reduce=Ring, intra_all_gather=Ring) here"
        ),
        "{note}"
    );
    assert!(
        note.ends_with(
            "differ: algorithm (left to Auto here, written as Hier((...)) with intra_reduce_scatter and \
             intra_all_gather left to Auto there), algorithm.inter_all_reduce (left to Auto (the whole algorithm \
             was Auto) here, written InterRdh there)"
        ),
        "{note}"
    );
    // A whole Auto against a Hier with every leg left to Auto: the whole
    // one may choose a flat algorithm, the other only that Hier's legs, so
    // the algorithm as written is what differs (not the `model:`).
    let every = "Hier(intra_reduce_scatter=Auto(Ring), inter_all_reduce=Auto(Mesh), intra_all_gather=Auto(Ring))";
    let note = auto_note::auto_note("Auto(LatencyOptMesh)", every, &[], auto_note::Elsewhere::default(), None);
    assert_eq!(
        note.unwrap_or_default(),
        format!(
            "Auto chose LatencyOptMesh here and {every} there: the inputs to the choice differ: algorithm (left to \
             Auto here, written as Hier((...)) with every leg left to Auto there)"
        )
    );
    // The same legs left to Auto, chosen differently: `choices: Wide`
    // (unsigned) is named with the `model:` overrides.
    let wide =
        "Hier(intra_reduce_scatter=Auto(Ring), inter_all_reduce=Auto(SingleStepMesh), intra_all_gather=Auto(Ring))";
    let note = auto_note::auto_note(every, wide, &[], auto_note::Elsewhere::default(), None).unwrap_or_default();
    assert!(note.ends_with("differ: model or choices (the `model:` overrides of the cost model, or `choices: Wide` in a `Hier((...))`, which widens the set its legs left to Auto choose from; the signature holds neither)"), "{note}");
    // A written algorithm on one side is no Auto choice.
    assert_eq!(auto_note::auto_note("Ring", there, &[], auto_note::Elsewhere::default(), None), None);
}

/// Where both sides were read from specs, the unsigned inputs that differ
/// are named with the signed ones, and are not guessed at when they agree;
/// a Hier whose legs left to `Auto` chose alike on both sides differs by a
/// written leg, which is no `Auto` choice.
#[test]
fn auto_notes_name_the_unsigned_inputs_specs_hold() {
    let (here, there) = ("Auto(Ring)", "Auto(Mesh)");
    let none = auto_note::Elsewhere::default;
    let model = ["model.alpha_intra_ns (1000000 here, not set there)".to_owned()];
    let note = auto_note::auto_note(here, there, &["barrier"], none(), Some(&model)).unwrap_or_default();
    assert_eq!(
        note,
        "Auto chose Ring here and Mesh there: the inputs to the choice differ: barrier, model.alpha_intra_ns \
         (1000000 here, not set there)"
    );
    // Known to agree: the signed field alone, nothing guessed.
    let note = auto_note::auto_note(here, there, &["count"], none(), Some(&[])).unwrap_or_default();
    assert!(note.ends_with("the inputs to the choice differ: count"), "{note}");
    // Only the unsigned ones differ.
    let note = auto_note::auto_note(here, there, &[], none(), Some(&model)).unwrap_or_default();
    assert!(note.ends_with("differ: model.alpha_intra_ns (1000000 here, not set there)"), "{note}");
    // Nothing either spec holds, and no other collective.
    let note = auto_note::auto_note(here, there, &[], none(), Some(&[])).unwrap_or_default();
    assert!(
        note.ends_with(
            "differ: none that either spec holds (were they validated by ccc builds of different cost models?)"
        ),
        "{note}"
    );
    // Another collective before it, with nothing of its own: that alone,
    // not the model.
    let earlier = auto_note::Elsewhere { earlier: Some("collective 0 differs".into()), other: None };
    let note = auto_note::auto_note(here, there, &[], earlier, Some(&[])).unwrap_or_default();
    assert!(note.ends_with("the mesh events the collectives before it take (collective 0 differs, and `Auto` holds each collective to what the ones before it leave of a TOP_SP's)"), "{note}");
    // The legs left to Auto chose alike: a written leg differs.
    let a = "Hier(intra_reduce_scatter=Auto(Kangaring), inter_all_reduce=InterRdh, intra_all_gather=Auto(Kangaring))";
    let b = "Hier(intra_reduce_scatter=Auto(Kangaring), inter_all_reduce=Ring, intra_all_gather=Auto(Kangaring))";
    assert_eq!(auto_note::auto_note(a, b, &[], none(), None), None);
    assert_eq!(auto_note::auto_note(a, b, &[], none(), Some(&[])), None);
}

/// End to end from specs: a side whose `model:` overrides flip `Auto`'s
/// choice and whose `barrier` differs too (which alone would not) names
/// both; the note named the barrier alone. A written leg that differs
/// while the legs left to `Auto` chose alike is a selection.
#[test]
fn a_model_that_flips_auto_is_named_beside_a_signed_field() {
    use crate::build::build;
    use crate::sign::sign;
    use crate::validate::validate;
    use ccc_ir::arch::Arch;
    use ccc_ir::enums::{AlgType, OpType};
    use ccc_ir::model::ModelOverrides;
    use ccc_ir::spec::{Algorithm, Barrier, Collective, DType, HierLegs, LegAlgorithm, Program, ReduceOp, Topology};
    let input = |name: &str, c: Collective| {
        let program = Program::from(c);
        let valid = validate(&program).unwrap_or_else(|e| panic!("{e}"));
        let schedule = build(&valid).unwrap_or_else(|e| panic!("{e}"));
        Input { unsigned: Unsigned::of(&program, &valid), ..Input::new(name, sign(&valid, &schedule).fields) }
    };
    let c = Collective::new(OpType::AllReduce, DType::Bf16, 1 << 20, Arch::Cayman, Topology::new(32, 16))
        .reduce(ReduceOp::Add)
        .channels(4)
        .algorithm(Algorithm::Auto);
    let costly = ModelOverrides { alpha_intra_ns: Some(1_000_000), ..ModelOverrides::default() };
    let other = Collective { model: Some(costly), barrier: Some(Barrier::Device), ..c.clone() };
    let report = diagnose(&[input("a", c.clone()), input("b", other)]);
    let fields = &report.differences[0].collectives[0].fields;
    let algorithm = fields.iter().find(|f| f.field == "algorithm").unwrap_or_else(|| panic!("{fields:?}"));
    assert_eq!(algorithm.cause, Cause::AutoChoice);
    let note = algorithm.note.as_deref().unwrap_or_default();
    assert!(
        note.ends_with("the inputs to the choice differ: barrier, model.alpha_intra_ns (not set here, 1000000 there)"),
        "{note}"
    );
    // The barrier alone does not move the choice (what makes the model
    // the cause worth naming).
    let barrier = Collective { barrier: Some(Barrier::Device), ..c.clone() };
    let alone = diagnose(&[input("a", c), input("c", barrier)]);
    let fields = &alone.differences[0].collectives[0].fields;
    assert!(fields.iter().all(|f| f.field != "algorithm"), "{fields:?}");
    // Legs left to Auto that chose alike, a written leg different.
    let legs = |inter: AlgType| {
        let h = HierLegs::new()
            .intra_reduce_scatter(LegAlgorithm::Auto)
            .inter_all_reduce(inter)
            .intra_all_gather(LegAlgorithm::Auto);
        Collective::new(OpType::AllReduce, DType::Bf16, 1 << 22, Arch::Cayman, Topology::new(32, 16))
            .reduce(ReduceOp::Add)
            .channels(4)
            .algorithm(Algorithm::Hier(h))
    };
    let report = diagnose(&[input("a", legs(AlgType::InterRdh)), input("b", legs(AlgType::Ring))]);
    let fields = &report.differences[0].collectives[0].fields;
    let algorithm = fields.iter().find(|f| f.field == "algorithm").unwrap_or_else(|| panic!("{fields:?}"));
    assert_eq!((algorithm.cause, algorithm.note.as_deref()), (Cause::of_field("algorithm"), None), "{algorithm:?}");
}

/// A program of one all-reduce whose signed `algorithm` is `alg`.
fn with(alg: &str) -> Vec<Vec<(String, String)>> {
    let mut c = coll("AllReduce", 8);
    c.push(("algorithm".into(), alg.into()));
    vec![c]
}

/// End to end through `diagnose`: the per-leg note reaches the algorithm
/// field with the Auto cause.
#[test]
fn diagnose_names_the_auto_leg() {
    let a = "Hier(intra_reduce_scatter=Auto(Kangaring), inter_all_reduce=InterRdh, intra_all_gather=Auto(Kangaring))";
    let b = "Hier(intra_reduce_scatter=Auto(Kangaring), inter_all_reduce=Auto(Ring), intra_all_gather=Auto(Kangaring))";
    let report = diagnose(&[input("a", 1, &with(a)), input("b", 1, &with(b))]);
    let field = report.differences[0].collectives[0].fields.iter().find(|f| f.field == "algorithm");
    let field = field.unwrap_or_else(|| panic!("{report:?}"));
    assert_eq!(field.cause, Cause::AutoChoice);
    let note = field.note.as_deref().unwrap_or_default();
    assert!(
        note.ends_with("differ: algorithm.inter_all_reduce (written InterRdh here, left to Auto (chose Ring) there)"),
        "{note}"
    );
}

/// Both sides run the same algorithm, chosen differently: `Auto` chose
/// what the other side wrote, or different legs were left to it. Nothing
/// chose differently, so the cause is how it was chosen, not `Auto`'s
/// inputs (it once said "Auto chose differently" of two equal choices).
#[test]
fn the_same_algorithm_chosen_differently_says_so() {
    let runs = "Hier(intra_reduce_scatter=Kangaring, inter_all_reduce=Ring, intra_all_gather=Kangaring)";
    let whole = format!("Auto({runs})");
    let leg = "Hier(intra_reduce_scatter=Auto(Kangaring), inter_all_reduce=Ring, intra_all_gather=Kangaring)";
    let cases = [
        (whole.as_str(), runs, "left to Auto here and written there"),
        (
            whole.as_str(),
            leg,
            "left to Auto here and written as Hier((...)) with intra_reduce_scatter left to Auto there",
        ),
        (runs, leg, "written here and written as Hier((...)) with intra_reduce_scatter left to Auto there"),
    ];
    for (a, b, how) in cases {
        let report = diagnose(&[input("a", 1, &with(a)), input("b", 1, &with(b))]);
        let field = report.differences[0].collectives[0].fields.iter().find(|f| f.field == "algorithm");
        let field = field.unwrap_or_else(|| panic!("{report:?}"));
        assert_eq!(field.cause, Cause::HowChosen, "{a} / {b}");
        let note = field.note.as_deref().unwrap_or_default();
        assert!(note.starts_with(&format!("both run {runs}, {how}: the signature records how")), "{note}");
    }
    // Another input differs too: the schedules differ, and the note does
    // not say they are the same.
    let mut other_channels = with(runs);
    for field in other_channels[0].iter_mut().filter(|(k, _)| k == "channels") {
        field.1 = "2".into();
    }
    let report = diagnose(&[input("a", 1, &with(&whole)), input("b", 1, &other_channels)]);
    let field = report.differences[0].collectives[0].fields.iter().find(|f| f.field == "algorithm");
    let note = field.and_then(|f| f.note.as_deref()).unwrap_or_default();
    assert!(note.ends_with("the signature records how the algorithm was chosen"), "{note}");
    // Different algorithms chosen by Auto on both sides: Auto's inputs.
    let other = "Auto(Hier(intra_reduce_scatter=Ring, inter_all_reduce=Ring, intra_all_gather=Kangaring))";
    let report = diagnose(&[input("a", 1, &with(&whole)), input("b", 1, &with(other))]);
    let field = report.differences[0].collectives[0].fields.iter().find(|f| f.field == "algorithm");
    assert_eq!(field.map(|f| f.cause), Some(Cause::AutoChoice));
}

/// Two programs whose first collective differs (a written Hier with a Mesh
/// inter leg against one with a Ring) and whose second is `Auto` with the
/// same signed inputs: `Auto` chose differently because the first took
/// different mesh events, and the note says so rather than blaming the
/// `model:` overrides alone.
#[test]
fn an_auto_choice_moved_by_an_earlier_collective_says_so() {
    use crate::build::build;
    use crate::sign::sign;
    use crate::validate::validate;
    use ccc_ir::arch::Arch;
    use ccc_ir::enums::{AlgType, OpType};
    use ccc_ir::spec::{Algorithm, Collective, DType, HierLegs, Program, ReduceOp, Topology};
    let c = Collective::new(OpType::AllReduce, DType::Bf16, 128, Arch::Cayman, Topology::new(64, 2))
        .reduce(ReduceOp::Add)
        .channels(4);
    let signed = |name: &str, inter: AlgType| {
        let legs =
            HierLegs::new().intra_reduce_scatter(AlgType::Ring).inter_all_reduce(inter).intra_all_gather(AlgType::Ring);
        let first = c.clone().algorithm(Algorithm::Hier(legs));
        let program = Program { collectives: vec![first, c.clone().algorithm(Algorithm::Auto)] };
        let valid = validate(&program).unwrap_or_else(|e| panic!("{e}"));
        let schedule = build(&valid).unwrap_or_else(|e| panic!("{e}"));
        Input::new(name, sign(&valid, &schedule).fields)
    };
    let report = diagnose(&[signed("a", AlgType::Mesh), signed("b", AlgType::Ring)]);
    let second = report.differences[0].collectives.iter().find(|d| d.majority_index == 1);
    let second = second.unwrap_or_else(|| panic!("{report:?}"));
    let field = second.fields.iter().find(|f| f.field == "algorithm").unwrap_or_else(|| panic!("{second:?}"));
    assert_eq!(field.cause, Cause::AutoChoice);
    let note = field.note.as_deref().unwrap_or_default();
    assert!(
        note.contains(
            "the inputs to the choice differ: the mesh events the collectives before it take (collective 0 differs"
        ),
        "{note}"
    );
}

/// What `diagnose` reads as a manifest: a `.json` file whatever it holds,
/// never a `.ron` one, else text that opens with `{` (after a byte-order
/// mark and blanks).
#[test]
fn manifests_are_told_from_specs() {
    use std::path::Path;
    assert!(is_manifest(Some(Path::new("a/manifest.json")), "Collective()"));
    assert!(!is_manifest(Some(Path::new("spec.ron")), "{}"));
    assert!(is_manifest(Some(Path::new("rank-3")), " \n{\"signature\": \"\"}"));
    assert!(is_manifest(None, "\u{feff}{}"));
    assert!(!is_manifest(None, "Collective(op: AllReduce)"));
}
