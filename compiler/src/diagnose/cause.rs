//! The likely causes of a difference and the one table of their wording.

use serde::{Deserialize, Serialize};

/// The likely cause of a difference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// `count`, `dtype`.
    TensorShapes,
    /// `arch`, `topology`.
    Machine,
    /// `channels`, `algorithm`.
    Selection,
    /// `format_version`.
    Versions,
    /// `groups`.
    Groups,
    /// `op`, `reduce`, `root`, `peers`, `counts`; a missing or extra
    /// collective.
    ProgramDiverged,
    /// `schedule` alone, with the same format version.
    Builds,
    /// `barrier`, `send_credits`.
    Runtime,
    /// `schedule`, when input fields of the same collective differ too.
    FollowsFromInputs,
    /// `algorithm`, when both sides said `Auto` and it chose differently.
    AutoChoice,
    /// `algorithm`, when both sides run the same one, chosen differently:
    /// by `Auto` on one side and written on the other, or with different
    /// legs left to `Auto`.
    HowChosen,
    /// A field this ccc does not know.
    UnknownField,
    /// A collective equal on both sides at another place in the program.
    Reordered,
    /// `collective_n`, named only when it is not the number of collectives
    /// a manifest lists.
    EditedCount,
    /// `peers`, when one renumbering of the ranks makes one side's pairs
    /// the other's.
    Renumbered,
}

/// The cause table: each cause, the fields that point to it, and what to
/// tell the user. The one place the wording lives.
pub(super) const CAUSES: [(Cause, &[&str], &str); 15] = [
    (Cause::TensorShapes, &["count", "dtype"], "the ranks traced different tensors (their shapes or element types)"),
    (
        Cause::Machine,
        &["arch", "topology"],
        "different instance types or launcher settings (architecture, ranks per node, node or pod count)",
    ),
    (
        Cause::Selection,
        &["channels", "algorithm"],
        "different selection inputs: the algorithm or channel choice was made from different settings or tuning",
    ),
    (Cause::Versions, &["format_version"], "different ccc versions"),
    (Cause::Groups, &["groups"], "the replica groups were built differently"),
    (
        Cause::ProgramDiverged,
        &["op", "reduce", "root", "peers", "counts"],
        "a different collective was traced (the program diverged)",
    ),
    (Cause::Builds, &[], "different ccc builds: the same format version and inputs, but a different lowering"),
    (Cause::Runtime, &["barrier", "send_credits"], "different runtime or launcher settings"),
    (Cause::FollowsFromInputs, &[], "follows from the differing input fields of the same collective"),
    (
        Cause::AutoChoice,
        &[],
        "Auto chose differently: the cost model was given different inputs (those its note names)",
    ),
    (
        Cause::HowChosen,
        &[],
        "the same algorithm, chosen differently: left (in whole or in part) to Auto on one side and written on the \
         other, or different parts of it left to Auto; the signature records how the algorithm was chosen, so the \
         runtime refuses the pair",
    ),
    (Cause::UnknownField, &[], "a field this ccc does not know: the inputs were written by another ccc version"),
    (
        Cause::Reordered,
        &[],
        "the same collective issued at another place in the program (collectives issued in another order); every \
         rank must issue its collectives in one order",
    ),
    (
        Cause::EditedCount,
        &["collective_n"],
        "a manifest edited by hand: its collective count is not the number of collectives it lists",
    ),
    (
        Cause::Renumbered,
        &[],
        "the same pairs over ranks numbered differently: the device-to-rank map (an HLO target's `devices`) or the \
         launcher's rank order differs, unless the program built another permutation of the same shape",
    ),
];

impl Cause {
    /// What to tell the user.
    pub fn text(self) -> &'static str {
        CAUSES.iter().find(|(c, _, _)| *c == self).map_or("", |(_, _, text)| text)
    }

    /// The cause a field points to on its own (`schedule` depends on the
    /// other fields and is decided by the comparison).
    pub fn of_field(field: &str) -> Cause {
        CAUSES.iter().find(|(_, fields, _)| fields.contains(&field)).map_or(Cause::UnknownField, |(c, _, _)| *c)
    }
}

impl std::fmt::Display for Cause {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.text())
    }
}
