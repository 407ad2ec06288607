//! What an error's message says would be accepted, as data: every pass
//! words its errors "...; accepted: ...", and RON's and serde's say
//! "expected ... instead". A leaf module: the passes' errors
//! ([`crate::parse::ParseError::accepted`],
//! [`crate::validate::ValidationError::accepted`],
//! [`crate::pipeline::CompileError::accepted`]) read through it.

/// What an error's message says would be accepted: the text after
/// `accepted: ` (every pass's wording), or between `expected ` and
/// ` instead` (RON's and serde's for an unknown field or variant); `None`
/// when it says neither.
pub fn accepted_in(message: &str) -> Option<String> {
    if let Some(accepted) = accepted_after(message) {
        return Some(accepted);
    }
    // "expected" as a word: RON's "Unexpected variant ..." holds it too.
    let at = message
        .match_indices("expected ")
        .map(|(i, _)| i)
        .find(|&i| message.get(..i).and_then(|m| m.chars().next_back()).is_none_or(|c| !c.is_alphabetic()))?;
    let rest = message.get(at + "expected ".len()..)?;
    Some(rest.strip_suffix(" instead").unwrap_or(rest).to_owned())
}

/// The text after `accepted: ` in a message ccc words itself; `None` when
/// it has none. (RON's "expected ... instead" is for parse errors alone:
/// ccc's other messages use "expected" in their own sense, "N are
/// expected".)
pub fn accepted_after(message: &str) -> Option<String> {
    message.split_once("accepted: ").map(|(_, rest)| rest.to_owned())
}
