//! The HLO text grammar, as far as ccc reads it: a module header, computations,
//! and one instruction per line (`[ROOT] name = shape opcode(operands), attr=value, ...`).
//!
//! XLA prints every instruction on one line, and this reader relies on it:
//! an attribute's value runs to the next `,` outside brackets, quotes and
//! comments, or to the end of the line. Values are kept as raw text with
//! their byte offset; only the attributes of collectives are interpreted
//! (in `import`), so fusions, metadata, layouts, sharding, frontend
//! attributes and backend configs are skipped without being read.
//! `/* ... */` comments (`/*index=5*/`) and `//` line comments (XLA's
//! lexer reads both; its printer writes only the first) are blanked before
//! parsing, keeping every byte offset.
//!
//! Top level: the `HloModule` line, the stack-frame sections of compiled
//! dumps (`FileNames`, `FunctionNames`, `FileLocations`, `StackFrames` and
//! their numbered entries) and computations (`[ENTRY] name [(params) -> shape] {`
//! ... `}`). Anything else is an error at its line.

use super::error::HloError;
use std::collections::{BTreeMap, BTreeSet};

/// Refuses a list of attributes that gives a key twice (`whose` names the
/// header or the instruction). A set of the keys seen, so that a list of
/// many attributes is checked in O(n log n), not O(n^2).
fn once(attrs: &[Attr<'_>], whose: &str, accepted: &str) -> Result<(), HloError> {
    let mut keys = BTreeSet::new();
    match attrs.iter().find(|a| !keys.insert(a.key)) {
        Some(again) => {
            Err(HloError::at(again.at, again.value.len(), format!("{whose} gives `{}` twice", again.key), accepted))
        }
        None => Ok(()),
    }
}

/// A parsed module: its header attributes and its computations, in file order.
#[derive(Clone, Debug)]
pub struct Module<'a> {
    /// The module's name (`HloModule NAME, ...`), if there is a header.
    pub name: Option<&'a str>,
    /// The header's attributes (`num_partitions=8`, ...).
    pub header: Vec<Attr<'a>>,
    /// The computations.
    pub computations: Vec<Computation<'a>>,
}

/// One computation.
#[derive(Clone, Debug)]
pub struct Computation<'a> {
    /// Its name, without `%`.
    pub name: &'a str,
    /// Byte offset of the name.
    pub at: usize,
    /// Marked `ENTRY`?
    pub entry: bool,
    /// Its instructions, in the order written (for a scheduled module, the
    /// order they run).
    pub instructions: Vec<Instruction<'a>>,
    /// Where each instruction sits in `instructions`, by name: a name is
    /// looked up, never iterated, in O(log n) (a computation of tens of
    /// thousands of instructions is looked up once per operand).
    by_name: BTreeMap<&'a str, usize>,
    /// Where each `*-done` sits in `instructions`, by the name of its first
    /// operand (the start it completes).
    dones: BTreeMap<&'a str, Vec<usize>>,
}

impl<'a> Computation<'a> {
    /// The instruction called `name`.
    pub fn get(&self, name: &str) -> Option<&Instruction<'a>> {
        self.instructions.get(*self.by_name.get(name)?)
    }

    /// The `*-done` instructions whose first operand is `start`, in the
    /// order written.
    pub fn dones_of(&self, start: &str) -> impl Iterator<Item = &Instruction<'a>> {
        self.dones.get(start).into_iter().flatten().filter_map(|&i| self.instructions.get(i))
    }

    /// The instruction an async chain through `operand` starts from: back
    /// through every `*-update` (XLA's `async-update`, or the short form
    /// of one, `reduce-scatter-update`) to the first instruction that is
    /// not one. Each step goes to an instruction defined earlier, so the
    /// walk ends.
    pub fn start_of(&self, mut operand: &'a str) -> &'a str {
        while let Some(update) = self.get(operand).filter(|i| i.opcode.ends_with("-update")) {
            match update.operands.first() {
                Some(&earlier) if self.by_name.get(earlier) < self.by_name.get(operand) => operand = earlier,
                _ => break,
            }
        }
        operand
    }

    /// The `ROOT` instruction (the last one when none is marked, as XLA reads it).
    pub fn root(&self) -> Option<&Instruction<'a>> {
        self.instructions.iter().find(|i| i.root).or(self.instructions.last())
    }
}

/// One instruction.
#[derive(Clone, Debug)]
pub struct Instruction<'a> {
    /// Its name, without `%`.
    pub name: &'a str,
    /// Byte offset of the name.
    pub at: usize,
    /// Marked `ROOT`?
    pub root: bool,
    /// The result shape.
    pub shape: Shape,
    /// Byte offset of the shape.
    pub shape_at: usize,
    /// The opcode (`all-reduce`, `fusion`, ...).
    pub opcode: &'a str,
    /// Byte offset of the opcode.
    pub opcode_at: usize,
    /// The operands' names (without `%`; a constant's literal as written).
    pub operands: Vec<&'a str>,
    /// The attributes, in order.
    pub attrs: Vec<Attr<'a>>,
}

impl<'a> Instruction<'a> {
    /// The attribute `key`, if given.
    pub fn attr(&self, key: &str) -> Option<&Attr<'a>> {
        self.attrs.iter().find(|a| a.key == key)
    }

    /// A `custom-call`'s target, unquoted (`Sharding`,
    /// `SPMDFullToShardShape`); `None` for any other instruction.
    pub fn custom_call_target(&self) -> Option<&'a str> {
        let target = self.attr("custom_call_target").filter(|_| self.opcode == "custom-call")?;
        Some(target.value.trim_matches('"'))
    }
}

/// One `key=value` attribute; the value is raw text.
#[derive(Clone, Copy, Debug)]
pub struct Attr<'a> {
    /// The key.
    pub key: &'a str,
    /// The value as written (trimmed).
    pub value: &'a str,
    /// Byte offset of the value.
    pub at: usize,
}

/// A shape: an array of an element type, or a tuple.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `f32[8,128]{1,0}`: the element type as XLA spells it, and the dimensions.
    Array {
        /// `f32`, `bf16`, `pred`, `token`, ...
        elem: String,
        /// The dimensions (bounds of dynamic ones, `<=8`, as their bound).
        dims: Vec<u64>,
    },
    /// `(shape, shape, ...)`.
    Tuple(Vec<Shape>),
}

impl Shape {
    /// Elements of an array shape (1 for a scalar); `None` for a tuple or on overflow.
    pub fn elements(&self) -> Option<u64> {
        match self {
            Shape::Array { dims, .. } => dims.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d)),
            Shape::Tuple(_) => None,
        }
    }

    /// The arrays of a shape, flattened (a tuple's leaves in order; an array is its own one leaf).
    pub fn leaves(&self) -> Vec<&Shape> {
        match self {
            Shape::Array { .. } => vec![self],
            Shape::Tuple(items) => items.iter().flat_map(Shape::leaves).collect(),
        }
    }
}

impl std::fmt::Display for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Shape::Array { elem, dims } => {
                let dims: Vec<String> = dims.iter().map(u64::to_string).collect();
                write!(f, "{elem}[{}]", dims.join(","))
            }
            Shape::Tuple(items) => {
                let items: Vec<String> = items.iter().map(Shape::to_string).collect();
                write!(f, "({})", items.join(", "))
            }
        }
    }
}

/// The deepest a tuple shape may nest (`((f32[8]))` is 2 deep). XLA's
/// tuples nest a few levels (a `while` state holding an async pair's
/// state); the bound keeps the recursive shape reader off the end of the
/// stack on a module of a million `(`.
pub const MAX_SHAPE_DEPTH: usize = 64;

/// How the lines PyTorch/XLA's `XLA_SAVE_TENSORS_FILE` writes around and
/// between its modules start.
const TORCH_XLA_WRAPPERS: [&str; 6] = [
    "[ScheduleSyncTensorsGraph]",
    "TensorsGraphInfo:",
    "Root Hashes:",
    "## BEGIN_GRAPH",
    "## END_GRAPH",
    "Graph Hash:",
];

/// The headers of the stack-frame sections compiled dumps carry.
const SECTIONS: [&str; 4] = ["FileNames", "FunctionNames", "FileLocations", "StackFrames"];

/// `src` with every `/* ... */` and `// ...` comment replaced by spaces
/// (offsets and newlines kept); comments inside `"..."` strings are left
/// alone.
fn blank_comments(src: &str) -> Result<String, HloError> {
    let bytes = src.as_bytes();
    let mut out = bytes.to_vec();
    let mut i = 0;
    let mut in_string = false;
    while i < bytes.len() {
        match (in_string, bytes[i]) {
            (true, b'\\') => i += 1,
            (_, b'"') => in_string = !in_string,
            (false, b'/') if bytes.get(i + 1) == Some(&b'*') => {
                let close = src.get(i + 2..).and_then(|s| s.find("*/")).map(|c| i + 2 + c + 2);
                let Some(end) = close else {
                    return Err(HloError::at(i, 2, "this comment is never closed", "close it with `*/`"));
                };
                // Keep newlines so line numbers stay.
                for b in out.iter_mut().take(end).skip(i) {
                    if *b != b'\n' {
                        *b = b' ';
                    }
                }
                i = end;
                continue;
            }
            (false, b'/') if bytes.get(i + 1) == Some(&b'/') => {
                // A line comment, as XLA's lexer reads one: to the end of
                // the line, the newline kept.
                let end = src[i..].find(['\n', '\r']).map_or(bytes.len(), |e| i + e);
                out[i..end].fill(b' ');
                i = end;
                continue;
            }
            (false, b'\n') => in_string = false,
            _ => {}
        }
        i += 1;
    }
    // Whole characters were replaced (a comment from its ASCII opening to
    // its ASCII close or the line's end), by ASCII spaces, so this stays
    // UTF-8.
    String::from_utf8(out).map_err(|_| HloError::at(0, 0, "the module is not UTF-8 text", "re-save it as UTF-8"))
}

/// Parses an HLO module's text. The returned module borrows `clean`, which
/// must be `src` with comments blanked ([`prepare`]).
///
/// # Errors
///
/// An [`HloError`] at the line and column of the first thing that is not
/// HLO as XLA prints it.
pub fn parse_module(clean: &str) -> Result<Module<'_>, HloError> {
    let mut module = Module { name: None, header: Vec::new(), computations: Vec::new() };
    let mut lines = Lines { src: clean, at: 0 };
    // The computation names seen, and whether one was ENTRY: looked up,
    // never iterated, so their order cannot reach the output.
    let (mut names, mut entry_seen) = (BTreeSet::new(), false);
    while let Some((at, line)) = lines.next_line() {
        let t = line.trim();
        let lead = at + (line.len() - line.trim_start().len());
        if t.is_empty() || SECTIONS.contains(&t) || t.starts_with(|c: char| c.is_ascii_digit()) {
            continue;
        }
        if t.starts_with("HloModule") {
            if module.name.is_some() || !module.computations.is_empty() {
                return Err(HloError::at(
                    lead,
                    "HloModule".len(),
                    "a second `HloModule` header: this text holds more than one module",
                    "import one module per file (each rank's or each program's own)",
                ));
            }
            // XLA prints `origin_recovery_table={` last, its entries (strings
            // holding whole computations) on the lines that follow, closed
            // by a `}` line. ccc reads nothing of it: the header is read
            // without it, and its lines skipped.
            let mut end = lead + t.len();
            if let Some(at) = t.strip_suffix('{').and_then(|h| h.rfind(RECOVERY_TABLE)) {
                let brace = lead + t.len() - 1;
                let mut close = None;
                scan(clean.get(brace..).unwrap_or(""), |i, ch, depth| {
                    if ch == '}' && depth == 1 {
                        close = Some(brace + i);
                    }
                    close.is_none()
                });
                let Some(close) = close else {
                    return Err(HloError::at(
                        brace,
                        1,
                        "the header's `origin_recovery_table={` is never closed",
                        "the file looks truncated; dump the module again",
                    ));
                };
                let line_end = clean.get(close..).and_then(|r| r.find('\n')).map_or(clean.len(), |n| close + n);
                let after = clean.get(close + 1..line_end).unwrap_or("").trim();
                if !after.is_empty() {
                    return Err(HloError::at(
                        close + 1,
                        after.len(),
                        format!("unexpected `{after}` after the header's `origin_recovery_table`"),
                        "XLA prints `origin_recovery_table={...}` last in the header, its `}` alone on a line",
                    ));
                }
                lines.at = line_end + 1;
                end = lead + at;
            }
            let mut c = Cursor { src: clean, at: lead + "HloModule".len(), end };
            c.spaces();
            let name = c.word();
            if name.is_empty() {
                return Err(c.error("expected the module's name after `HloModule`", "e.g. `HloModule jit_step`"));
            }
            module.name = Some(name);
            // XLA's lexer skips spaces between tokens: `jit_f , a=1` is
            // `jit_f, a=1`, and nothing else may follow the name.
            c.spaces();
            module.header = if c.eat(',') { c.attrs()? } else { Vec::new() };
            c.spaces();
            if !c.rest().trim().is_empty() {
                return Err(c.error(
                    format!("unexpected `{}` in the `HloModule` line", c.rest().trim()),
                    "the module's name, then its attributes after a comma: `HloModule jit_f, num_partitions=8`",
                ));
            }
            once(&module.header, "the header", "each header attribute once")?;
            continue;
        }
        if !t.ends_with('{') {
            // PyTorch/XLA's `XLA_SAVE_TENSORS_FILE` wraps each graph's
            // module in lines of its own, one block per sync.
            let torch_xla = TORCH_XLA_WRAPPERS.iter().any(|w| t.starts_with(w));
            return Err(HloError::at(
                lead,
                t.len(),
                match torch_xla {
                    true => {
                        "this is PyTorch/XLA's XLA_SAVE_TENSORS_FILE, not one HLO module: it holds a module per \
                             graph between `## BEGIN_GRAPH` and `## END_GRAPH`, with lines of its own"
                    }
                    false => {
                        "expected a computation (`name {` or `ENTRY name (...) -> shape {`) or the `HloModule` line"
                    }
                },
                match torch_xla {
                    true => {
                        "import the after-optimizations module of XLA_FLAGS=\"--xla_dump_to=DIR \
                             --xla_dump_hlo_as_text\" (DIR/*SyncTensorsGraph*after_optimizations.txt), or cut one \
                             graph's module out (from `HloModule` to its last `}`)"
                    }
                    false => "is this an HLO module as XLA prints it (`Compiled.as_text()`, `--xla_dump_to`)?",
                },
            ));
        }
        let computation = parse_computation(&mut lines, clean, lead, lead + t.len())?;
        let again = |what: &str, help: &str| HloError::at(computation.at, computation.name.len(), what, help);
        if computation.entry && std::mem::replace(&mut entry_seen, true) {
            return Err(again(
                &format!("a second ENTRY computation, `{}`: a module has one", computation.name),
                "import one module per file; only one computation is marked ENTRY",
            ));
        }
        if !names.insert(computation.name) {
            return Err(again(
                &format!("a second computation named `{}`", computation.name),
                "computation names are unique within a module",
            ));
        }
        module.computations.push(computation);
    }
    Ok(module)
}

/// What opens the header attribute XLA prints over several lines.
const RECOVERY_TABLE: &str = ", origin_recovery_table=";

/// `src` with every `/* ... */` and `//` comment blanked (offsets kept):
/// the text [`parse_module`] reads.
///
/// # Errors
///
/// An [`HloError`] at the first carriage return of text whose lines end
/// with one alone, at a `/*` that is never closed, or at a control
/// character XLA never prints where a word is read (a NUL in a damaged
/// file ended a word where it stood, and the module was called truncated
/// lines later). Comments and quoted strings may hold any character
/// (XLA prints a frontend attribute's value as it was given).
pub fn prepare(src: &str) -> Result<String, HloError> {
    // Lines ended by a carriage return alone (as classic Mac OS wrote
    // text; XLA never does): read as one line, the module had "no
    // computations".
    if let Some(at) = src.find('\r').filter(|_| !src.contains('\n')) {
        return Err(HloError::at(
            at,
            1,
            "the module's lines end with a carriage return alone (CR, U+000D), which ccc does not read as a line \
             break",
            "HLO text with LF (or CRLF) line breaks, as XLA prints it: convert the CRs (`tr '\\r' '\\n'`)",
        ));
    }
    let clean = blank_comments(src)?;
    let mut quoted = false;
    let mut escaped = false;
    for (at, c) in clean.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            '\t' | '\n' | '\r' => {}
            c if c.is_control() && !quoted => {
                return Err(HloError::at(
                    at,
                    c.len_utf8(),
                    format!(
                        "a control character (U+{:04X}) where HLO text holds none: the file is damaged, or not text",
                        u32::from(c)
                    ),
                    "HLO text as XLA prints it: printable characters, tabs and line breaks (any character in a \
                     quoted string or a comment)",
                ));
            }
            _ => {}
        }
    }
    Ok(clean)
}

/// Reads a computation whose header line spans `start..end` (ending in `{`).
fn parse_computation<'a>(
    lines: &mut Lines<'a>,
    src: &'a str,
    start: usize,
    end: usize,
) -> Result<Computation<'a>, HloError> {
    let mut c = Cursor { src, at: start, end };
    let entry = c.keyword("ENTRY");
    c.spaces();
    c.eat('%');
    let at = c.at;
    let name = c.word();
    if name.is_empty() {
        return Err(c.error("expected the computation's name", "a computation starts `name {` or `ENTRY name {`"));
    }
    let mut computation =
        Computation { name, at, entry, instructions: Vec::new(), by_name: BTreeMap::new(), dones: BTreeMap::new() };
    while let Some((line_at, line)) = lines.next_line() {
        let t = line.trim();
        let lead = line_at + (line.len() - line.trim_start().len());
        if t.is_empty() {
            continue;
        }
        if t == "}" {
            return Ok(computation);
        }
        // XLA prints a computation of another execution thread closed
        // `}, execution_thread="parallel"` (`host`, `sparsecore`, ...).
        if let Some(thread) = t.strip_prefix('}').and_then(|r| r.trim_start().strip_prefix(',')) {
            let value = thread.trim().strip_prefix("execution_thread=");
            if value.is_some_and(|v| v.len() >= 2 && v.starts_with('"') && v.ends_with('"')) {
                return Ok(computation);
            }
            return Err(HloError::at(
                lead,
                t.len(),
                format!("unexpected `{}` after the `}}` closing computation `{name}`", thread.trim()),
                "a computation closes with `}`, or `}, execution_thread=\"NAME\"` for another thread",
            ));
        }
        let instruction = parse_instruction(src, lead, lead + t.len())?;
        if let Some(first) = computation.get(instruction.name) {
            return Err(HloError::at(
                instruction.at,
                instruction.name.len(),
                format!("instruction `{}` is defined twice in computation `{name}`", instruction.name),
                format!("names are unique inside a computation; the first is at byte {}", first.at),
            ));
        }
        // XLA's parser: "one computation should have only one ROOT".
        if instruction.root
            && let Some(first) = computation.instructions.iter().find(|i| i.root)
        {
            return Err(HloError::at(
                instruction.at,
                instruction.name.len(),
                format!(
                    "`{}` is a second ROOT of computation `{name}` (the first is `{}`)",
                    instruction.name, first.name
                ),
                "a computation has one ROOT instruction",
            ));
        }
        computation.by_name.insert(instruction.name, computation.instructions.len());
        if let Some(&operand) = instruction.operands.first().filter(|_| instruction.opcode.ends_with("-done")) {
            let start = computation.start_of(operand);
            computation.dones.entry(start).or_default().push(computation.instructions.len());
        }
        computation.instructions.push(instruction);
    }
    Err(HloError::at(
        src.len(),
        0,
        format!("the module ends inside computation `{name}`: its closing `}}` is missing"),
        "the file looks truncated; dump the module again",
    ))
}

/// Parses `[ROOT] name = shape opcode(operands)[, attr=value]*` spanning `start..end`.
fn parse_instruction(src: &str, start: usize, end: usize) -> Result<Instruction<'_>, HloError> {
    let mut c = Cursor { src, at: start, end };
    let root = c.keyword("ROOT");
    c.spaces();
    c.eat('%');
    let at = c.at;
    let name = c.word();
    if name.is_empty() {
        return Err(c.error(
            "expected an instruction (`name = shape opcode(operands), ...`)",
            "or `}` to close the computation",
        ));
    }
    c.spaces();
    if !c.eat('=') {
        return Err(c.error(
            format!("expected `=` after the instruction name `{name}`"),
            "an instruction reads `name = shape opcode(operands), attr=value, ...`",
        ));
    }
    c.spaces();
    let shape_at = c.at;
    let shape = c.shape()?;
    c.spaces();
    let opcode_at = c.at;
    let opcode = c.word();
    if opcode.is_empty() {
        return Err(c.error(format!("expected the opcode of `{name}` after its shape"), "e.g. `all-reduce(...)`"));
    }
    c.spaces();
    if !c.eat('(') {
        return Err(c.error(
            format!("expected `(` and the operands of `{name}` after `{opcode}`"),
            "operands are written `opcode(a, b)`",
        ));
    }
    let operands_at = c.at;
    let close = c.balanced_until(&[')'])?;
    let inner = src.get(operands_at..close).unwrap_or("");
    c.at = close;
    if !c.eat(')') {
        return Err(c.error(format!("the operands of `{name}` are not closed with `)`"), "the line looks truncated"));
    }
    let operands = split_top(inner)
        .into_iter()
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().rsplit(' ').next().unwrap_or("").trim_start_matches('%'))
        .collect();
    let attrs = if c.eat(',') { c.attrs()? } else { Vec::new() };
    c.spaces();
    if c.at < c.end {
        return Err(c.error(format!("unexpected text after instruction `{name}`"), "attributes are separated by `,`"));
    }
    // XLA's parser refuses an attribute given twice ("already exists"):
    // which of the two would hold is not said.
    once(&attrs, &format!("`{name}`"), "each attribute of an instruction once")?;
    Ok(Instruction { name, at, root, shape, shape_at, opcode, opcode_at, operands, attrs })
}

/// `text` split at `,` outside brackets and strings.
pub fn split_top(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut from = 0;
    scan(text, |i, ch, depth| {
        if depth == 0 && ch == ',' {
            parts.push(text.get(from..i).unwrap_or(""));
            from = i + 1;
        }
        true
    });
    parts.push(text.get(from..).unwrap_or(""));
    parts
}

/// Walks `text`, calling `visit(offset, char, depth)` for every char outside
/// `"..."` strings (depth: brackets open before it) until `visit` returns
/// false. Returns the depth at the stop (or the end) and whether the text
/// ends inside a string.
fn scan(text: &str, mut visit: impl FnMut(usize, char, i32) -> bool) -> (i32, bool) {
    let (mut depth, mut in_string, mut escaped) = (0i32, false, false);
    for (i, ch) in text.char_indices() {
        if in_string {
            match (escaped, ch) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        if !visit(i, ch, depth) {
            return (depth, false);
        }
        match ch {
            '"' => in_string = true,
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            _ => {}
        }
    }
    (depth, in_string)
}

/// The lines of the source, with their byte offsets.
struct Lines<'a> {
    src: &'a str,
    at: usize,
}

impl<'a> Lines<'a> {
    fn next_line(&mut self) -> Option<(usize, &'a str)> {
        if self.at >= self.src.len() {
            return None;
        }
        let rest = self.src.get(self.at..)?;
        let len = rest.find('\n').unwrap_or(rest.len());
        let line = rest.get(..len)?.trim_end_matches('\r');
        let at = self.at;
        self.at += len + 1;
        Some((at, line))
    }
}

/// A position in one line of the source, up to `end`.
struct Cursor<'a> {
    src: &'a str,
    at: usize,
    end: usize,
}

impl<'a> Cursor<'a> {
    fn rest(&self) -> &'a str {
        self.src.get(self.at..self.end).unwrap_or("")
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn spaces(&mut self) {
        let rest = self.rest();
        self.at += rest.len() - rest.trim_start().len();
    }

    fn eat(&mut self, ch: char) -> bool {
        if self.peek() == Some(ch) {
            self.at += ch.len_utf8();
            true
        } else {
            false
        }
    }

    /// `word` followed by a space, consumed if present.
    fn keyword(&mut self, word: &str) -> bool {
        let rest = self.rest();
        if rest.starts_with(word) && rest.get(word.len()..).is_some_and(|r| r.starts_with(char::is_whitespace)) {
            self.at += word.len();
            true
        } else {
            false
        }
    }

    /// A name or opcode: letters, digits, `_ . - $`.
    fn word(&mut self) -> &'a str {
        let rest = self.rest();
        let len = rest.find(|c: char| !(c.is_ascii_alphanumeric() || "_.-$".contains(c))).unwrap_or(rest.len());
        self.at += len;
        rest.get(..len).unwrap_or("")
    }

    fn error(&self, message: impl Into<String>, help: impl Into<String>) -> HloError {
        let len = self.rest().chars().next().map_or(0, char::len_utf8);
        HloError::at(self.at, len, message, help)
    }

    fn number(&mut self) -> Result<u64, HloError> {
        let rest = self.rest();
        let len = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        let digits = rest.get(..len).unwrap_or("");
        let n = digits.parse().map_err(|_| self.error("expected a dimension (a whole number)", "e.g. `f32[8,128]`"))?;
        self.at += len;
        Ok(n)
    }

    /// A shape: `elem[dims]{layout}` or `(shape, ...)`.
    fn shape(&mut self) -> Result<Shape, HloError> {
        self.shape_in(0)
    }

    /// A shape inside `depth` tuples.
    fn shape_in(&mut self, depth: usize) -> Result<Shape, HloError> {
        if self.peek() == Some('(') && depth >= MAX_SHAPE_DEPTH {
            return Err(self.error(
                format!("the tuple shape nests more than {MAX_SHAPE_DEPTH} deep"),
                "a tuple shape reads `(f32[8], (s32[], u32[]))`; ccc reads tuples nested at most that deep",
            ));
        }
        if self.eat('(') {
            let mut items = Vec::new();
            self.spaces();
            if self.eat(')') {
                return Ok(Shape::Tuple(items));
            }
            loop {
                self.spaces();
                items.push(self.shape_in(depth + 1)?);
                self.spaces();
                if self.eat(')') {
                    return Ok(Shape::Tuple(items));
                }
                if !self.eat(',') {
                    return Err(
                        self.error("expected `,` or `)` in a tuple shape", "a tuple shape reads `(f32[8], s32[])`")
                    );
                }
            }
        }
        let elem = self.word();
        if elem.is_empty() {
            return Err(self.error(
                "expected a shape (`f32[8,128]`, `(f32[], s32[4])`)",
                "an instruction reads `name = shape opcode(...)`",
            ));
        }
        if !self.eat('[') {
            return Err(self.error(
                format!("expected `[` after the element type `{elem}`"),
                "a shape reads `f32[8,128]`, a scalar `f32[]`",
            ));
        }
        let mut dims = Vec::new();
        self.spaces();
        if !self.eat(']') {
            loop {
                self.spaces();
                // A dynamic dimension: `<=8` (its bound), or `?`.
                if self.rest().starts_with("<=") {
                    self.at += 2;
                }
                dims.push(self.number()?);
                self.spaces();
                if self.eat(']') {
                    break;
                }
                if !self.eat(',') {
                    return Err(self.error("expected `,` or `]` in the dimensions", "a shape reads `f32[8,128]`"));
                }
            }
        }
        // A layout, `{1,0}` or `{1,0:T(8,128)}`: skipped.
        if self.peek() == Some('{') {
            self.at += 1;
            let close = self.balanced_until(&['}'])?;
            self.at = close;
            if !self.eat('}') {
                return Err(self.error("the layout is not closed with `}`", "a layout reads `{1,0}`"));
            }
        }
        Ok(Shape::Array { elem: elem.to_owned(), dims })
    }

    /// The offset of the first of `stops` outside brackets and strings, from
    /// here; the line's end when none comes; an error when the line ends
    /// inside a bracket or string.
    fn balanced_until(&self, stops: &[char]) -> Result<usize, HloError> {
        let mut found = None;
        // The brackets still open, and where the last string opened: what
        // an error points at when the line ends inside one.
        let (mut open, mut string_at, mut stray) = (Vec::new(), 0, None);
        let (depth, in_string) = scan(self.rest(), |i, ch, depth| {
            if depth == 0 && stops.contains(&ch) {
                found = Some(self.at + i);
                return false;
            }
            match ch {
                '(' | '[' | '{' => open.push((i, ch)),
                ')' | ']' | '}' if open.pop().is_none() => stray = stray.or(Some((i, ch))),
                '"' => string_at = i,
                _ => {}
            }
            // A stray closing bracket ends the value's scan: nothing after
            // it is balanced.
            found.is_none() && stray.is_none()
        });
        if let Some((at, ch)) = stray {
            return Err(HloError::at(
                self.at + at,
                ch.len_utf8(),
                format!("this `{ch}` closes a bracket the value never opened"),
                "remove it, or open the bracket it closes",
            ));
        }
        match found {
            Some(at) => Ok(at),
            None if depth == 0 && !in_string => Ok(self.end),
            None => {
                let (at, what) = match open.last() {
                    _ if in_string => (string_at, '"'),
                    Some(&(at, ch)) => (at, ch),
                    None => (self.end - self.at, ' '),
                };
                Err(HloError::at(
                    self.at + at,
                    what.len_utf8(),
                    format!("the `{what}` opened here is not closed on its line"),
                    "a value closes its brackets and strings on the line it opens them: the line looks truncated, \
                     or a closing one is missing",
                ))
            }
        }
    }

    /// `key=value, key=value, ...` to the end of the line.
    fn attrs(&mut self) -> Result<Vec<Attr<'a>>, HloError> {
        let mut attrs = Vec::new();
        loop {
            self.spaces();
            let key = self.word();
            if key.is_empty() {
                return Err(self.error(
                    "expected an attribute (`key=value`)",
                    "attributes read `channel_id=1, replica_groups={{0,1}}`",
                ));
            }
            self.spaces();
            if !self.eat('=') {
                return Err(self.error(format!("expected `=` after attribute `{key}`"), "attributes read `key=value`"));
            }
            self.spaces();
            let at = self.at;
            // `to_apply={` closing the line: a computation written inline,
            // over the lines that follow.
            if self.rest().trim_end() == "{" {
                return Err(self.error(
                    format!("`{key}={{` opens a computation written inline, over the lines that follow, which ccc does not read"),
                    format!("ccc reads modules as XLA prints them, naming each computation: `{key}=%add` with `%add` defined apart"),
                ));
            }
            let mut stop = self.balanced_until(&[','])?;
            // A mesh's explicit device order is part of its value:
            // `replica_groups=mesh[x=2,y=4], device_ids=(7,6,...) {y}`.
            if key == "replica_groups" && self.src.get(at..stop).is_some_and(|v| v.starts_with("mesh")) {
                let next = self.src.get(stop + 1..self.end).unwrap_or("");
                if next.trim_start().starts_with("device_ids") {
                    self.at = stop + 1;
                    stop = self.balanced_until(&[','])?;
                }
            }
            let value = self.src.get(at..stop).unwrap_or("").trim_end();
            attrs.push(Attr { key, value, at });
            self.at = stop;
            if !self.eat(',') {
                return Ok(attrs);
            }
        }
    }
}
