//! Comparing two signatures: program-wide fields, then collective by collective along an alignment.

use super::align::{Edit, align, moves, reordering};
use super::auto_note::Elsewhere;
use super::fields::{Parsed, summary, value};
use super::{Cause, CauseNote, CollectiveDiff, DiffKind, Difference, FieldDiff, Position, idx};

/// The fields whose values differ between `a` and `b`, in `a`'s order and
/// then `b`'s extras: `(key, a's value, b's value)`.
fn field_diffs<'a>(
    a: &[(&'a str, &'a str)],
    b: &[(&'a str, &'a str)],
) -> Vec<(&'a str, Option<&'a str>, Option<&'a str>)> {
    let mut out = Vec::new();
    for &(key, va) in a {
        let vb = value(b, key);
        if vb != Some(va) {
            out.push((key, Some(va), vb));
        }
    }
    for &(key, vb) in b {
        if value(a, key).is_none() {
            out.push((key, None, Some(vb)));
        }
    }
    out
}

/// The `Auto` sentence of a changed collective (see [`super::auto_note`]):
/// both sides' `algorithm`, the other differing input fields, the first
/// collective before it that differs (`earlier`), and the unsigned inputs
/// that differ where both sides know them.
fn auto_note(
    diffs: &[(&str, Option<&str>, Option<&str>)],
    elsewhere: Elsewhere,
    unsigned: Option<&[String]>,
) -> Option<String> {
    let &(_, here, there) = diffs.iter().find(|(k, _, _)| *k == "algorithm")?;
    let others: Vec<&str> =
        diffs.iter().map(|(k, _, _)| *k).filter(|k| *k != "algorithm" && *k != "schedule").collect();
    super::auto_note::auto_note(here?, there?, &others, elsewhere, unsigned)
}

/// Compares group `group`'s program `b` with the majority's `a`.
pub(super) fn compare(group: u32, a: &Parsed<'_>, b: &Parsed<'_>) -> Difference {
    // `collective_n` differs as the collectives listed do (their missing
    // and extra ones say how), unless a side's count is not the number it
    // lists (an edited manifest): then it is named.
    let listed = |p: &Parsed<'_>| value(&p.program, "collective_n") == Some(p.collectives.len().to_string().as_str());
    let counts_listed = listed(a) && listed(b);
    let fields: Vec<FieldDiff> = field_diffs(&a.program, &b.program)
        .into_iter()
        .filter(|(key, _, _)| *key != "collective_n" || !counts_listed)
        .map(|(key, va, vb)| FieldDiff {
            field: key.to_owned(),
            majority: va.map(str::to_owned),
            other: vb.map(str::to_owned),
            cause: Cause::of_field(key),
            note: None,
        })
        .collect();
    let versions_differ = fields.iter().any(|f| f.field == "format_version");

    let mut collectives: Vec<CollectiveDiff> = Vec::new();
    // Where in `collectives` the first that differs in its own right is
    // (see `first` below).
    let mut own_first: Option<usize> = None;
    let edits = align(&a.collectives, &b.collectives);
    // Each move is reported once, at its end that comes first.
    let moves = moves(&edits, &a.collectives, &b.collectives);
    // Every edit that differs, by its position among the edits, in words:
    // a changed or missing collective by the majority's index, an extra
    // one by the other side's (the majority has none), a moved one as
    // moved.
    let differing: Vec<(usize, String)> = edits
        .iter()
        .enumerate()
        .filter_map(|(at, e)| match *e {
            Edit::Match(..) => None,
            _ if let Some(Some(m)) = moves.get(at) => Some((at, format!("collective {} moved", m.from))),
            Edit::Changed(i, _) | Edit::Missing(i, _) => Some((at, format!("collective {i} differs"))),
            Edit::Extra(_, j) => Some((at, format!("the other side's collective {j} is extra"))),
        })
        .collect();
    let moved = |i: u32, j: u32| CollectiveDiff {
        kind: DiffKind::Moved,
        majority_index: i,
        other_index: j,
        majority: a.collectives.get(i as usize).map(|c| summary(c)),
        other: b.collectives.get(j as usize).map(|c| summary(c)),
        fields: Vec::new(),
        cause: Some(Cause::Reordered),
    };
    for (at, &edit) in edits.iter().enumerate() {
        // The first difference before this one (`Auto` holds a collective
        // to the mesh events the ones before it leave), and the first
        // anywhere else (`Auto` fits a program's choices into the CTRL
        // SPAD together).
        let earlier = differing.iter().find(|(k, _)| *k < at).map(|(_, d)| d.clone());
        let other = differing.iter().find(|(k, _)| *k != at).map(|(_, d)| d.clone());
        let elsewhere = Elsewhere { earlier, other };
        let get = |v: &[Vec<(&str, &str)>], i: u32| v.get(i as usize).map(|c| summary(c));
        let diff = match edit {
            Edit::Match(..) => continue,
            Edit::Changed(i, j) => {
                let (ca, cb) = (a.collectives.get(i as usize), b.collectives.get(j as usize));
                let diffs = field_diffs(ca.map_or(&[][..], Vec::as_slice), cb.map_or(&[][..], Vec::as_slice));
                let inputs_differ = diffs.iter().any(|(k, _, _)| *k != "schedule");
                let alone = diffs.iter().all(|(k, _, _)| matches!(*k, "algorithm" | "schedule"));
                let how_chosen = diffs
                    .iter()
                    .find(|(k, _, _)| *k == "algorithm")
                    .and_then(|&(_, here, there)| super::auto_note::how_chosen_note(here?, there?, alone));
                // What both sides hold unsigned (an `Auto` choice's inputs,
                // long lists), where both were read from specs.
                let both =
                    match (a.unsigned.and_then(|u| u.get(i as usize)), b.unsigned.and_then(|u| u.get(j as usize))) {
                        (Some(x), Some(y)) => Some((x, y)),
                        _ => None,
                    };
                let unsigned = both.map(|(x, y)| super::Unsigned::differences(x, y));
                let other_differs = elsewhere.other.is_some();
                let auto = if how_chosen.is_some() { None } else { auto_note(&diffs, elsewhere, unsigned.as_deref()) };
                // Only its `Auto` choice differs, both specs' unsigned inputs
                // agree, and another collective differs: the program's
                // fit (or the events before it) moved it.
                let knock_on = alone && auto.is_some() && unsigned.as_ref().is_some_and(Vec::is_empty) && other_differs;
                let fields = diffs
                    .into_iter()
                    .map(|(key, va, vb)| {
                        // Groups and pairs: where they differ, and whether
                        // ranks renumbered explain it.
                        let (note, renumbered) = super::lists::note(key, va.zip(vb), both).unzip();
                        (key, va, vb, note, renumbered == Some(true))
                    })
                    .map(|(key, va, vb, listed, renumbered)| FieldDiff {
                        field: key.to_owned(),
                        majority: va.map(str::to_owned),
                        other: vb.map(str::to_owned),
                        cause: match key {
                            "peers" if renumbered => Cause::Renumbered,
                            "schedule" if inputs_differ => Cause::FollowsFromInputs,
                            "schedule" if versions_differ => Cause::Versions,
                            "schedule" => Cause::Builds,
                            "algorithm" if how_chosen.is_some() => Cause::HowChosen,
                            "algorithm" if auto.is_some() => Cause::AutoChoice,
                            _ => Cause::of_field(key),
                        },
                        note: match key {
                            "algorithm" => how_chosen.clone().or_else(|| auto.clone()),
                            _ => listed,
                        },
                    })
                    .collect();
                if !knock_on {
                    own_first = own_first.or(Some(collectives.len()));
                }
                collectives.push(CollectiveDiff {
                    kind: DiffKind::Changed,
                    majority_index: i,
                    other_index: j,
                    majority: get(&a.collectives, i),
                    other: get(&b.collectives, j),
                    fields,
                    cause: None,
                });
                continue;
            }
            // Reported at whichever end of the move comes first.
            _ if let Some(Some(m)) = moves.get(at) => match m.first {
                true => moved(m.from, m.to),
                false => continue,
            },
            Edit::Missing(i, j) => CollectiveDiff {
                kind: DiffKind::Missing,
                majority_index: i,
                other_index: j,
                majority: get(&a.collectives, i),
                other: None,
                fields: Vec::new(),
                cause: Some(Cause::ProgramDiverged),
            },
            Edit::Extra(i, j) => CollectiveDiff {
                kind: DiffKind::Extra,
                majority_index: i,
                other_index: j,
                majority: None,
                other: get(&b.collectives, j),
                fields: Vec::new(),
                cause: Some(Cause::ProgramDiverged),
            },
        };
        own_first = own_first.or(Some(collectives.len()));
        collectives.push(diff);
    }
    // The same collectives in an order no single move explains read above
    // as changed pairs: each that moved is named instead.
    if collectives.iter().any(|c| c.kind != DiffKind::Moved)
        && let Some(moves) = reordering(&a.collectives, &b.collectives, None)
    {
        collectives = moves.into_iter().map(|(i, j)| moved(i, j)).collect();
        own_first = None;
    }

    // The first collective that differs in its own right: one whose
    // `Auto` choice alone moved, because another collective differs
    // (a later one's size moved the program's fit), is not where the
    // programs part (it is still listed, in its place).
    let first = own_first.and_then(|k| collectives.get(k)).or(collectives.first()).map(|d| Position {
        majority_index: d.majority_index,
        majority_n: idx(a.collectives.len()),
        other_index: d.other_index,
        other_n: idx(b.collectives.len()),
    });
    let mut causes: Vec<CauseNote> = Vec::new();
    let all = fields
        .iter()
        .map(|f| f.cause)
        .chain(collectives.iter().flat_map(|c| c.cause.into_iter().chain(c.fields.iter().map(|f| f.cause))));
    for cause in all {
        if !causes.iter().any(|n| n.cause == cause) {
            causes.push(CauseNote { cause, text: cause.text().to_owned() });
        }
    }
    Difference { group, first, fields, collectives, causes, same_images: false }
}
