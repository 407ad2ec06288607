//! parse: RON text into a [`ccc_ir::spec::Program`] (stub; being written).
