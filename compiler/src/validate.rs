//! validate: a parsed spec into a [`crate::valid::ValidProgram`] (stub; being written).
