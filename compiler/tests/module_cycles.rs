//! No import cycles between the modules of `compiler/src` (issue 11): data
//! flows one way, parse → validate → algorithms → schedule → lower → encode
//! → verify → sign, and a newcomer can read the modules in that order.
//!
//! How it is checked: the test reads every `.rs` file of the library (from
//! `lib.rs`, following `mod name;` declarations) and of the `ccc` binary
//! (from `bin/ccc/main.rs`), with comments, string and char literals blanked
//! out. Each file is one module; an inline `mod name { ... }` is a module of
//! its own, a child of the file's. A module depends on another when its
//! text names it:
//!
//! - a `use` tree (`use crate::a::{b, c::D}`, `use super::*`, `use self::x`,
//!   `use child::Y`), or
//! - a path in code (`crate::a::f()`, `super::super::X`, `child::f()`, or a
//!   path through a name a `use` brought in).
//!
//! A path is resolved to the module that defines its item: down through
//! child modules, then through the `use` declarations of the module it
//! reached (so `super::Cause`, when the parent only re-exports
//! `cause::Cause`, is an edge to `cause`). A glob (`use super::*`) is an
//! edge to the module globbed. Intra-doc links are comments and do not
//! count.
//!
//! Two rules keep the graph about concepts, not Rust idiom: `#[cfg(test)]`
//! modules are left out (tests sit on top of the graph and may use any
//! pass to build their inputs), and an edge between a module and its own
//! ancestor is dropped (a `mod.rs` is the facade of its children: it
//! declares them, re-exports their items and holds what they share). Every
//! other edge is an edge between siblings (`a::x::y -> a::z` counts as
//! `a::x -> a::z`), and the siblings of every module must form a DAG. The
//! test fails naming one cycle per strongly connected component, with the
//! file and line of each edge and every edge inside the component.
//!
//! Checked by running it on the tree before `schedule.rs` was split
//! (commit c6fb15d): it reports `algorithms -> schedule
//! (algorithms/mod.rs:14) -> algorithms (schedule.rs:786)`; before
//! `Compiled` moved to `compiled.rs` it reported `manifest <-> pipeline`.
//! The allow-list is empty: this tree has no cycle.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Known edges that close a cycle, tolerated while the change that removes
/// them is under way. Each entry is `(from, to)` as the test names modules.
/// An entry whose edge is gone does no harm; delete it.
const ALLOWED: &[(&str, &str)] = &[];

/// One module: its file, its text (comments and literals blanked), the
/// lines its text starts at, and what it declares.
struct Module {
    file: PathBuf,
    /// 1-based line of the text's first char in `file`.
    first_line: usize,
    text: String,
    /// A `#[cfg(test)]` module, or inside one.
    test: bool,
    children: BTreeSet<String>,
    /// Items defined here (fn, struct, enum, ...).
    items: BTreeSet<String>,
    /// Names brought in by `use`: name → path (as written).
    uses: BTreeMap<String, Vec<String>>,
    /// Paths of glob imports (`use a::b::*` → `a::b`).
    globs: Vec<Vec<String>>,
}

type Name = Vec<String>;

fn show(name: &[String]) -> String {
    if name.is_empty() { "crate".to_owned() } else { name.join("::") }
}

/// `src` with comments, string literals and char literals replaced by
/// spaces (newlines kept, so line numbers stay right).
fn blank(src: &str) -> String {
    let b: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    let keep = |c: char| if c == '\n' { '\n' } else { ' ' };
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(keep(b[i]));
                    i += 1;
                }
            }
        } else if (c == 'r' || (c == 'b' && next == Some('r')))
            && !i.checked_sub(1).is_some_and(|p| b[p].is_alphanumeric() || b[p] == '_')
            && {
                let s = if c == 'b' { i + 2 } else { i + 1 };
                let mut j = s;
                while b.get(j) == Some(&'#') {
                    j += 1;
                }
                b.get(j) == Some(&'"')
            }
        {
            let s = if c == 'b' { i + 2 } else { i + 1 };
            let mut j = s;
            while b.get(j) == Some(&'#') {
                j += 1;
            }
            let hashes = j - s;
            for _ in i..=j {
                out.push(' ');
            }
            i = j + 1;
            while i < b.len() {
                if b[i] == '"' && (1..=hashes).all(|h| b.get(i + h) == Some(&'#')) {
                    for _ in 0..=hashes {
                        out.push(' ');
                    }
                    i += hashes + 1;
                    break;
                }
                out.push(keep(b[i]));
                i += 1;
            }
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < b.len() {
                if b[i] == '\\' {
                    out.push(' ');
                    out.push(keep(*b.get(i + 1).unwrap_or(&' ')));
                    i += 2;
                    continue;
                }
                let end = b[i] == '"';
                out.push(keep(b[i]));
                i += 1;
                if end {
                    break;
                }
            }
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{..}'); a lifetime is left alone.
            let close = if next == Some('\\') {
                (i + 2..b.len().min(i + 12)).find(|&j| b[j] == '\'')
            } else if b.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match close {
                Some(j) => {
                    for _ in i..=j {
                        out.push(' ');
                    }
                    i = j + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Tokens of blanked text: identifiers, `::`, and single punctuation, each
/// with its byte offset.
fn tokens(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_alphanumeric() || c == b'_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push((s, text[s..i].to_owned()));
        } else if c == b':' && b.get(i + 1) == Some(&b':') {
            out.push((i, "::".to_owned()));
            i += 2;
        } else if c.is_ascii_whitespace() {
            i += 1;
        } else {
            out.push((i, (c as char).to_string()));
            i += 1;
        }
    }
    out
}

/// The leaf paths of a `use` tree starting at `toks[i]` (after `use`), each
/// with its local name (`None` for a glob); returns the index after `;`.
fn use_tree(toks: &[(usize, String)], mut i: usize, prefix: &[String], out: &mut Vec<(Name, Option<String>)>) -> usize {
    let mut path = prefix.to_vec();
    while let Some((_, t)) = toks.get(i) {
        match t.as_str() {
            "::" => i += 1,
            "{" => {
                i += 1;
                while toks.get(i).is_some_and(|t| t.1 != "}") {
                    i = use_tree(toks, i, &path, out);
                    if toks.get(i).is_some_and(|t| t.1 == ",") {
                        i += 1;
                    }
                }
                return i + 1;
            }
            "*" => {
                out.push((path, None));
                return i + 1;
            }
            "as" => {
                let alias = toks.get(i + 1).map(|t| t.1.clone());
                out.push((path, alias));
                return i + 2;
            }
            "," | "}" | ";" => {
                let name = path.last().cloned();
                if name.as_deref() == Some("self") {
                    path.pop();
                    let name = path.last().cloned();
                    out.push((path, name));
                } else {
                    out.push((path, name));
                }
                return i;
            }
            id => {
                path.push(id.to_owned());
                i += 1;
            }
        }
    }
    i
}

/// The module files of the crate rooted at `root`, by module name.
fn load(root: &Path) -> BTreeMap<Name, Module> {
    let mut modules = BTreeMap::new();
    let mut todo = vec![(Vec::<String>::new(), root.to_path_buf(), false)];
    while let Some((name, file, test)) = todo.pop() {
        let src = fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let text = blank(&src);
        let dir = match file.file_name().and_then(|f| f.to_str()) {
            Some("lib.rs" | "main.rs" | "mod.rs") => file.parent().unwrap().to_path_buf(),
            _ => file.with_extension(""),
        };
        // Split off inline `mod x { ... }` blocks as child modules.
        let toks = tokens(&text);
        let mut own = text.clone().into_bytes();
        let mut inline = Vec::new();
        let mut children = BTreeSet::new();
        for (k, (_, t)) in toks.iter().enumerate() {
            if t != "mod" {
                continue;
            }
            let (Some((_, child)), Some((at, after))) = (toks.get(k + 1), toks.get(k + 2)) else { continue };
            children.insert(child.clone());
            let before: String = toks[k.saturating_sub(12)..k].iter().map(|t| t.1.as_str()).collect();
            let before =
                ["pub(crate)", "pub(super)", "pub"].iter().find_map(|v| before.strip_suffix(v)).unwrap_or(&before);
            let child_test = test || before.ends_with("#[cfg(test)]");
            if after == ";" {
                let a = dir.join(format!("{child}.rs"));
                let b = dir.join(child).join("mod.rs");
                let path = if a.exists() { a } else { b };
                assert!(path.exists(), "{}: mod {child} has no file", file.display());
                let mut n = name.clone();
                n.push(child.clone());
                todo.push((n, path, child_test));
            } else if after == "{" {
                let mut depth = 0;
                let end = text[*at..]
                    .char_indices()
                    .find_map(|(j, c)| {
                        match c {
                            '{' => depth += 1,
                            '}' => depth -= 1,
                            _ => {}
                        }
                        (depth == 0).then_some(at + j + 1)
                    })
                    .unwrap_or(text.len());
                let body = &text[*at..end];
                let first_line = text[..*at].matches('\n').count() + 1;
                let mut n = name.clone();
                n.push(child.clone());
                inline.push((n, body.to_owned(), first_line, child_test));
                for byte in &mut own[*at..end] {
                    if *byte != b'\n' {
                        *byte = b' ';
                    }
                }
            }
        }
        let own = String::from_utf8(own).unwrap();
        for (n, body, first_line, child_test) in inline {
            modules.insert(n, module(file.clone(), first_line, body, child_test, BTreeSet::new()));
        }
        modules.insert(name, module(file, 1, own, test, children));
    }
    modules
}

fn module(file: PathBuf, first_line: usize, text: String, test: bool, children: BTreeSet<String>) -> Module {
    let toks = tokens(&text);
    let mut items = BTreeSet::new();
    let mut uses = BTreeMap::new();
    let mut globs = Vec::new();
    for (k, (_, t)) in toks.iter().enumerate() {
        match t.as_str() {
            "fn" | "struct" | "enum" | "const" | "static" | "type" | "trait" | "union" => {
                if let Some((_, n)) = toks.get(k + 1) {
                    items.insert(n.clone());
                }
            }
            "use" => {
                let mut leaves = Vec::new();
                use_tree(&toks, k + 1, &[], &mut leaves);
                for (path, local) in leaves {
                    match local {
                        Some(local) => {
                            uses.insert(local, path);
                        }
                        None => globs.push(path),
                    }
                }
            }
            _ => {}
        }
    }
    Module { file, first_line, text, test, children, items, uses, globs }
}

/// The crate's module graph: `(from, to)` → where the first reference is.
struct Graph<'a> {
    modules: &'a BTreeMap<Name, Module>,
}

impl Graph<'_> {
    /// The module a path names, or `None` when it leaves the crate.
    fn resolve(&self, at: &[String], path: &[String], depth: u32) -> Option<Name> {
        let (first, rest) = path.split_first()?;
        let mut cur: Name = match first.as_str() {
            "crate" => Vec::new(),
            "self" => at.to_vec(),
            "super" => at.get(..at.len().checked_sub(1)?)?.to_vec(),
            _ => {
                let m = self.modules.get(at)?;
                if m.children.contains(first) {
                    let mut n = at.to_vec();
                    n.push(first.clone());
                    n
                } else if let Some(target) = m.uses.get(first).filter(|_| depth < 8) {
                    let mut full = target.clone();
                    full.extend(rest.iter().cloned());
                    return self.resolve(at, &full, depth + 1);
                } else {
                    return None;
                }
            }
        };
        let mut rest = rest;
        while let Some((seg, tail)) = rest.split_first() {
            let m = self.modules.get(&cur)?;
            if seg == "super" {
                cur.pop();
            } else if seg == "self" {
            } else if m.children.contains(seg) {
                cur.push(seg.clone());
            } else {
                // An item: defined here, or brought in by a `use` here.
                if m.items.contains(seg) || depth >= 8 {
                    return Some(cur);
                }
                if let Some(target) = m.uses.get(seg) {
                    let mut full = target.clone();
                    full.extend(tail.iter().cloned());
                    return self.resolve(&cur, &full, depth + 1);
                }
                for glob in &m.globs {
                    let mut full = glob.clone();
                    full.push(seg.clone());
                    if let Some(found) = self.resolve(&cur, &full, depth + 1)
                        && self.modules.get(&found).is_some_and(|f| f.items.contains(seg) || f.uses.contains_key(seg))
                    {
                        return Some(found);
                    }
                }
                return Some(cur);
            }
            rest = tail;
        }
        Some(cur)
    }

    fn edges(&self) -> BTreeMap<(Name, Name), String> {
        let mut edges = BTreeMap::new();
        for (name, m) in self.modules.iter().filter(|(_, m)| !m.test) {
            let toks = tokens(&m.text);
            let line_of = |at: usize| m.first_line + m.text[..at].matches('\n').count();
            let mut add = |to: Option<Name>, at: usize| {
                if let Some(to) = to
                    && to != *name
                    && self.modules.contains_key(&to)
                {
                    let here = format!("{}:{}", m.file.display(), line_of(at));
                    edges.entry((name.clone(), to)).or_insert(here);
                }
            };
            let mut k = 0;
            while k < toks.len() {
                let (at, t) = &toks[k];
                // `use<..>` after `impl Trait +` is a precise-capture
                // bound, not a declaration: its tokens are not a use tree.
                if t == "use" && toks.get(k + 1).is_none_or(|n| n.1 != "<") {
                    let mut leaves = Vec::new();
                    let end = use_tree(&toks, k + 1, &[], &mut leaves);
                    for (path, local) in leaves {
                        let _ = local;
                        add(self.resolve(name, &path, 0), *at);
                    }
                    k = end.max(k + 1);
                    continue;
                }
                // A path: `a :: b (:: c)*`, not preceded by `::`.
                let starts_path = toks.get(k + 1).is_some_and(|n| n.1 == "::")
                    && (k == 0 || toks[k - 1].1 != "::")
                    && t.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_');
                if starts_path {
                    let mut path = vec![t.clone()];
                    let mut j = k + 1;
                    while toks.get(j).is_some_and(|n| n.1 == "::")
                        && let Some((_, seg)) = toks.get(j + 1)
                        && seg.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_')
                    {
                        path.push(seg.clone());
                        j += 2;
                    }
                    add(self.resolve(name, &path, 0), *at);
                    k = j;
                    continue;
                }
                k += 1;
            }
        }
        edges
    }
}

/// Every cycle of the graph, one per strongly connected component, each as
/// `a -> b (file:line) -> ... -> a (file:line)` followed by every edge
/// inside the component (what would have to go to break it).
fn cycles(edges: &BTreeMap<(Name, Name), String>) -> Vec<String> {
    let mut next: BTreeMap<&Name, Vec<&Name>> = BTreeMap::new();
    for (a, b) in edges.keys() {
        next.entry(a).or_default().push(b);
    }
    let reach = |from: &Name| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from];
        while let Some(n) = todo.pop() {
            for &m in next.get(n).into_iter().flatten() {
                if seen.insert(m) {
                    todo.push(m);
                }
            }
        }
        seen
    };
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for start in next.keys().copied() {
        if done.contains(start) || !reach(start).contains(start) {
            continue;
        }
        // The shortest path back to `start`, by breadth-first search.
        let mut prev: BTreeMap<&Name, &Name> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([start]);
        'search: while let Some(n) = queue.pop_front() {
            for &m in next.get(n).into_iter().flatten() {
                if m == start {
                    prev.insert(start, n);
                    break 'search;
                }
                if !prev.contains_key(m) {
                    prev.insert(m, n);
                    queue.push_back(m);
                }
            }
        }
        let mut path = vec![start];
        let mut cur = prev[start];
        while cur != start {
            path.push(cur);
            cur = prev[cur];
        }
        path.reverse();
        let mut text = show(start);
        let mut from = start;
        for &to in &path {
            text.push_str(&format!(" -> {} ({})", show(to), edges[&(from.clone(), to.clone())]));
            from = to;
        }
        let component: BTreeSet<&Name> = reach(start).into_iter().filter(|n| reach(n).contains(start)).collect();
        for ((a, b), place) in edges {
            if component.contains(a) && component.contains(b) {
                text.push_str(&format!("\n    edge {} -> {} ({place})", show(a), show(b)));
            }
        }
        done.extend(component);
        out.push(text);
    }
    out
}

/// The edges between siblings: an edge from `a::x::y` to `a::z` is the
/// edge `a::x -> a::z` of the children of `a`. An edge between a module and
/// its own ancestor or descendant is dropped: a parent's file is the facade
/// of its children (it declares them, re-exports their items and holds the
/// types they share), so a child naming `super::X` and the parent calling
/// into the child is one unit, not a cycle between concepts.
fn siblings(edges: BTreeMap<(Name, Name), String>) -> BTreeMap<(Name, Name), String> {
    let mut out = BTreeMap::new();
    for ((a, b), place) in edges {
        let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
        if common == a.len() || common == b.len() {
            continue;
        }
        out.entry((a[..=common].to_vec(), b[..=common].to_vec())).or_insert(place);
    }
    out
}

fn check(root: &str) -> Vec<String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let modules = load(&src.join(root));
    let mut edges = siblings(Graph { modules: &modules }.edges());
    edges.retain(|(a, b), _| !ALLOWED.contains(&(show(a).as_str(), show(b).as_str())));
    // Report paths relative to the crate.
    for place in edges.values_mut() {
        if let Some(rel) = place.strip_prefix(&format!("{}/", env!("CARGO_MANIFEST_DIR"))) {
            *place = rel.to_owned();
        }
    }
    cycles(&edges)
}

#[test]
fn the_library_modules_have_no_import_cycle() {
    let found = check("lib.rs");
    assert!(found.is_empty(), "import cycles in compiler/src:\n{}", found.join("\n"));
}

#[test]
fn the_cli_modules_have_no_import_cycle() {
    let found = check("bin/ccc/main.rs");
    assert!(found.is_empty(), "import cycles in compiler/src/bin/ccc:\n{}", found.join("\n"));
}

/// The checker finds what it should: a cycle through `super::`, a use
/// tree, a re-export and a path in code; and no cycle where a child only
/// uses its parent.
#[test]
fn the_checker_sees_each_kind_of_reference() {
    let dir = tempfile::tempdir().unwrap();
    let w = |p: &str, s: &str| {
        let path = dir.path().join(p);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, s).unwrap();
    };
    w("lib.rs", "mod a;\nmod b;\n// crate::b::X in a comment\nfn f() -> impl Sized + use<> { b::Other }\n");
    w("a/mod.rs", "mod inner;\npub use inner::Thing;\n");
    w("a/inner.rs", "use super::super::b::{self, Other};\npub struct Thing;\n");
    w("b.rs", "pub struct Other;\nfn g() { let _ = crate::a::Thing; let _ = \"crate::lib\"; }\n");
    let modules = load(&dir.path().join("lib.rs"));
    let edges = Graph { modules: &modules }.edges();
    let names: Vec<(String, String)> = edges.keys().map(|(a, b)| (show(a), show(b))).collect();
    let pair = |a: &str, b: &str| (a.to_owned(), b.to_owned());
    let first = [pair("crate", "b"), pair("a", "a::inner"), pair("a::inner", "b"), pair("b", "a::inner")];
    assert_eq!(names, first, "{edges:?}");
    let found = cycles(&edges);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].starts_with("a::inner -> b ("), "{found:?}");

    // Lifted to siblings, the same cycle is `a -> b -> a`.
    let lifted = cycles(&siblings(edges));
    assert!(lifted.len() == 1 && lifted[0].starts_with("a -> b ("), "{lifted:?}");

    // A child using its parent's own item while the parent calls into the
    // child is the facade, not a cycle; a test module's edges do not count.
    w("a/mod.rs", "mod inner;\npub struct Shared;\nfn f() { inner::g(); }\n");
    w("a/inner.rs", "use super::Shared;\npub fn g() {}\n");
    w("b.rs", "#[cfg(test)]\nmod tests {\n    use crate::a::Shared;\n}\n");
    w("lib.rs", "mod a;\nmod b;\nfn f() { b::x(); }\n");
    let modules = load(&dir.path().join("lib.rs"));
    let edges = Graph { modules: &modules }.edges();
    let names: Vec<(String, String)> = edges.keys().map(|(a, b)| (show(a), show(b))).collect();
    assert_eq!(names, [pair("crate", "b"), pair("a", "a::inner"), pair("a::inner", "a")], "{edges:?}");
    assert_eq!(cycles(&edges).len(), 1);
    assert!(cycles(&siblings(edges)).is_empty());
}
