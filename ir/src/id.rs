//! Typed identifiers. Each prints the same way everywhere it appears: in
//! errors, logs, DOT and JSON (`rank 5`, `TOP_SP 2`, `step 12`,
//! `chunk 4`, `collective 1`).

use serde::{Deserialize, Serialize};

macro_rules! id {
    ($(#[$meta:meta])* $name:ident($inner:ty), $label:literal) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub $inner);

        impl $name {
            /// The raw number.
            pub const fn get(self) -> $inner {
                self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, concat!($label, " {}"), self.0)
            }
        }
    };
}

id!(
    /// A global rank, `0..rank_n`.
    Rank(u32),
    "rank"
);
id!(
    /// A TOP_SP of a rank's NeuronCore.
    TopSp(u8),
    "TOP_SP"
);
id!(
    /// A step of one collective's schedule (global across its phases).
    Step(u32),
    "step"
);
id!(
    /// A chunk (block) of a rank's buffer.
    Chunk(u32),
    "chunk"
);
id!(
    /// A collective's position in its program, from 0.
    CollectiveIdx(u32),
    "collective"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_print_with_their_label() {
        assert_eq!(Rank(5).to_string(), "rank 5");
        assert_eq!(TopSp(2).to_string(), "TOP_SP 2");
        assert_eq!(Step(12).to_string(), "step 12");
        assert_eq!(Chunk(4).to_string(), "chunk 4");
        assert_eq!(CollectiveIdx(1).to_string(), "collective 1");
    }
}
