//! `replica_groups` and `source_target_pairs` in every spelling XLA prints:
//!
//! - explicit lists: `{{0,1},{2,3}}`, and `{}` (no groups: all devices);
//! - the iota form `[G,S]<=[dims]` and `[G,S]<=[dims]T(perm)`: the ids
//!   `0..prod(dims)` reshaped to `dims`, transposed by `perm`, read in
//!   order as G groups of S;
//! - the mesh-axes form `mesh['x'=2,'y'=4] {'y'}` (optionally with
//!   `, device_ids=(...)` after the axes, and sub-axes `'x':(1)2`): the
//!   mesh's devices with the listed axes moved last, in the order listed,
//!   read in order as groups of the product of their sizes.
//!
//! Values are ids in the collective's id space (replica, partition or
//! global ids; `import` maps them to devices).

use super::error::HloError;

/// The most ids a group list may hold (as many as ccc has ranks, and then some).
const MAX_IDS: u64 = 1 << 20;

/// Parses a `replica_groups` value written at byte `at`. `None` for `{}`
/// (all devices).
///
/// # Errors
///
/// An [`HloError`] at the value when it is none of the spellings above.
pub fn replica_groups(value: &str, at: usize) -> Result<Option<Vec<Vec<u64>>>, HloError> {
    let v = value.trim();
    if v.starts_with("mesh[") {
        return mesh_axes(v, at).map(Some);
    }
    if v.starts_with('[') {
        return iota(v, at).map(Some);
    }
    let groups = list_of_lists(v, at, "replica_groups")?;
    Ok((!groups.is_empty()).then_some(groups))
}

/// Parses `source_target_pairs={{0,1},{1,2}}`.
///
/// # Errors
///
/// An [`HloError`] at the value when it is not a list of pairs.
pub fn pairs(value: &str, at: usize) -> Result<Vec<(u64, u64)>, HloError> {
    let lists = list_of_lists(value.trim(), at, "source_target_pairs")?;
    lists
        .into_iter()
        .map(|p| match p.as_slice() {
            [s, t] => Ok((*s, *t)),
            _ => Err(bad(value, at, "source_target_pairs", "each pair is `{source,target}`: `{{0,1},{1,2}}`")),
        })
        .collect()
}

fn bad(value: &str, at: usize, what: &str, accepted: &str) -> HloError {
    HloError::at(
        at,
        value.len(),
        format!("`{what}` value `{}` is not understood", short(value)),
        format!("accepted: {accepted}"),
    )
}

/// `value`, cut to 60 chars for a message.
fn short(value: &str) -> String {
    match value.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", value.get(..cut).unwrap_or("")),
        None => value.to_owned(),
    }
}

/// `{{0,1},{2,3}}` or `{}`.
fn list_of_lists(v: &str, at: usize, what: &str) -> Result<Vec<Vec<u64>>, HloError> {
    // Pairs have one spelling; replica groups, several.
    let accepted = match what {
        "source_target_pairs" => "pairs of ids `{{0,1},{1,2}}`",
        _ => "`{{0,1},{2,3}}`, `{}`, `[2,4]<=[8]`, `[2,4]<=[4,2]T(1,0)` or `mesh['x'=2,'y'=4] {'y'}`",
    };
    let inner = v.strip_prefix('{').and_then(|s| s.strip_suffix('}')).ok_or_else(|| bad(v, at, what, accepted))?;
    if inner.trim().is_empty() {
        return Ok(Vec::new());
    }
    super::text::split_top(inner)
        .into_iter()
        .map(|g| {
            let g = g.trim();
            let ids =
                g.strip_prefix('{').and_then(|s| s.strip_suffix('}')).ok_or_else(|| bad(v, at, what, accepted))?;
            if ids.trim().is_empty() {
                return Ok(Vec::new());
            }
            ids.split(',').map(|n| n.trim().parse::<u64>().map_err(|_| bad(v, at, what, accepted))).collect()
        })
        .collect()
}

/// A list of whole numbers: `2,4`.
fn numbers(text: &str) -> Option<Vec<u64>> {
    text.split(',').map(|n| n.trim().parse().ok()).collect()
}

/// `[G,S]<=[dims]` or `[G,S]<=[dims]T(perm)`.
fn iota(v: &str, at: usize) -> Result<Vec<Vec<u64>>, HloError> {
    let accepted = "the iota form `[groups,size]<=[dims]` or `[groups,size]<=[dims]T(perm)`";
    let fail = || bad(v, at, "replica_groups", accepted);
    let (head, tail) = v.split_once("<=").ok_or_else(fail)?;
    let shape =
        numbers(head.trim().strip_prefix('[').and_then(|s| s.strip_suffix(']')).ok_or_else(fail)?).ok_or_else(fail)?;
    let (dims_text, perm_text) = match tail.split_once('T') {
        Some((d, p)) => (d, Some(p)),
        None => (tail, None),
    };
    let dims = numbers(dims_text.trim().strip_prefix('[').and_then(|s| s.strip_suffix(']')).ok_or_else(fail)?)
        .ok_or_else(fail)?;
    let perm = match perm_text {
        Some(p) => {
            numbers(p.trim().strip_prefix('(').and_then(|s| s.strip_suffix(')')).ok_or_else(fail)?).ok_or_else(fail)?
        }
        None => (0..dims.len() as u64).collect(),
    };
    let [group_n, size] = shape.as_slice() else { return Err(fail()) };
    let total = dims.iter().try_fold(1u64, |a, &d| a.checked_mul(d)).filter(|&t| t <= MAX_IDS).ok_or_else(fail)?;
    if group_n.checked_mul(*size) != Some(total) {
        return Err(HloError::at(
            at,
            v.len(),
            format!("`replica_groups` {v}: {group_n} groups of {size} is not the {total} ids of {dims:?}"),
            "the group count times the group size must equal the product of the dimensions",
        ));
    }
    let ids = transposed_iota(&dims, &perm).ok_or_else(fail)?;
    Ok(ids.chunks(usize::try_from(*size).unwrap_or(1).max(1)).map(<[u64]>::to_vec).collect())
}

/// The ids `0..prod(dims)` reshaped to `dims` and transposed by `perm`,
/// flattened in row-major order. `None` when `perm` is not a permutation.
fn transposed_iota(dims: &[u64], perm: &[u64]) -> Option<Vec<u64>> {
    let mut sorted: Vec<u64> = perm.to_vec();
    sorted.sort_unstable();
    if perm.len() != dims.len() || sorted != (0..dims.len() as u64).collect::<Vec<_>>() {
        return None;
    }
    // Row-major strides of the untransposed array.
    let mut strides = vec![1u64; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1].checked_mul(dims[i + 1])?;
    }
    let out_dims: Vec<u64> = perm.iter().map(|&p| dims[p as usize]).collect();
    let out_strides: Vec<u64> = perm.iter().map(|&p| strides[p as usize]).collect();
    let total = dims.iter().try_fold(1u64, |a, &d| a.checked_mul(d))?;
    let mut index = vec![0u64; dims.len()];
    let mut out = Vec::with_capacity(usize::try_from(total).ok()?);
    for _ in 0..total {
        out.push(index.iter().zip(&out_strides).map(|(i, s)| i * s).sum());
        // Next index, last dimension fastest.
        for d in (0..index.len()).rev() {
            index[d] += 1;
            if index[d] < out_dims[d] {
                break;
            }
            index[d] = 0;
        }
    }
    Some(out)
}

/// One axis of a mesh-axes group list: a mesh axis, or a sub-axis of it.
struct AxisRef {
    axis: usize,
    /// `(pre_size, size)` of a sub-axis `'x':(pre)size`: `pre_size` is the
    /// product of the axis's factors more major than it.
    sub: Option<(u64, u64)>,
}

/// `mesh['x'=2,'y'=4] {'y'}`, `mesh['x'=2,'y'=4], device_ids=(...) {'x':(1)2}`.
fn mesh_axes(v: &str, at: usize) -> Result<Vec<Vec<u64>>, HloError> {
    let accepted = "the mesh-axes form `mesh['x'=2,'y'=4] {'y'}`, with sub-axes `{'x':(1)2}` and a device order \
                    `mesh[...], device_ids=(0,2,1,3) {...}` or `device_ids=([2,2]T(1,0))`";
    let fail = || bad(v, at, "replica_groups", accepted);
    let body = v.strip_prefix("mesh[").ok_or_else(fail)?;
    let close = body.find(']').ok_or_else(fail)?;
    let mut names = Vec::new();
    let mut sizes = Vec::new();
    for axis in body.get(..close).unwrap_or("").split(',') {
        let (name, size) = axis.split_once('=').ok_or_else(fail)?;
        let name = unquote(name);
        // Each axis once: a second of one name could not be told apart.
        if names.contains(&name) {
            return Err(HloError::at(
                at,
                v.len(),
                format!("`replica_groups` names mesh axis '{name}' twice"),
                "each mesh axis once: `mesh['x'=2,'y'=4] {'y'}`",
            ));
        }
        names.push(name);
        // An axis has at least one device (XLA's rule).
        sizes.push(size.trim().parse::<u64>().ok().filter(|&s| s > 0).ok_or_else(fail)?);
    }
    let rest = body.get(close + 1..).unwrap_or("").trim();
    let (devices, rest) = match rest.strip_prefix(',') {
        Some(r) => {
            let r = r.trim().strip_prefix("device_ids=(").ok_or_else(fail)?;
            // The `)` that closes `device_ids=(`: not the last one, which
            // may close a sub-axis's `(pre)` after it (`{'x':(4)2}`).
            let end = closing_paren(r).ok_or_else(fail)?;
            (Some(r.get(..end).unwrap_or("").trim()), r.get(end + 1..).unwrap_or("").trim())
        }
        None => (None, rest),
    };
    let axes_text = rest.strip_prefix('{').and_then(|s| s.strip_suffix('}')).ok_or_else(fail)?;
    let total = sizes.iter().try_fold(1u64, |a, &d| a.checked_mul(d)).filter(|&t| t <= MAX_IDS).ok_or_else(fail)?;
    let device_ids: Vec<u64> = match devices {
        None => (0..total).collect(),
        // The iota form: the ids `0..total` reshaped and transposed, as
        // XLA prints them, `[4,2]T(1,0)` (or, written as a replica group
        // list's, `[1,8]<=[4,2]T(1,0)`).
        Some(d) if d.starts_with('[') => iota(&format!("[1,{total}]<={}", d.split_once("<=").map_or(d, |x| x.1)), at)
            .ok()
            .and_then(|g| g.into_iter().next())
            .ok_or_else(fail)?,
        Some(d) => numbers(d).ok_or_else(fail)?,
    };
    if device_ids.len() as u64 != total {
        return Err(fail());
    }
    let mut refs = Vec::new();
    for part in axes_text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, sub) = match part.split_once(':') {
            Some((n, s)) => {
                let (pre, size) = s.trim().strip_prefix('(').and_then(|s| s.split_once(')')).ok_or_else(fail)?;
                let (pre, size): (u64, u64) =
                    (pre.trim().parse().map_err(|_| fail())?, size.trim().parse().map_err(|_| fail())?);
                // XLA's own rule: a sub-axis has at least one factor
                // before it and a size of at least 2.
                if pre == 0 || size < 2 {
                    return Err(HloError::at(
                        at,
                        v.len(),
                        format!("`replica_groups` sub-axis `({pre}){size}` is empty"),
                        "a sub-axis `(pre)size` has pre >= 1 and size >= 2, and pre * size divides its axis".to_owned(),
                    ));
                }
                (n, Some((pre, size)))
            }
            None => (part, None),
        };
        let name = unquote(name);
        let axis = names.iter().position(|n| *n == name).ok_or_else(|| {
            HloError::at(
                at,
                v.len(),
                format!("`replica_groups` names axis `{name}`, which the mesh does not have"),
                format!("the mesh's axes are {names:?}"),
            )
        })?;
        refs.push(AxisRef { axis, sub });
    }
    mesh_groups(&sizes, &device_ids, &refs).ok_or_else(fail)
}

/// The position of the `)` closing a `(` just before `s` (its nested
/// pairs skipped); `None` when it is never closed.
fn closing_paren(s: &str) -> Option<usize> {
    let mut depth = 1usize;
    for (i, b) in s.bytes().enumerate() {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

fn unquote(s: &str) -> &str {
    let s = s.trim();
    s.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')).unwrap_or(s)
}

/// The groups of a mesh-axes list: every mesh axis is split into its
/// factors, major first (a sub-axis `(pre)size` of an axis of size n splits
/// it into `pre`, `size`, `n / (pre * size)`, and so on for several), the
/// grouped factors moved last in the order listed, and the devices read in
/// row-major order in groups of the grouped factors' product.
fn mesh_groups(sizes: &[u64], devices: &[u64], refs: &[AxisRef]) -> Option<Vec<Vec<u64>>> {
    // factors[i]: the factor sizes of mesh axis i, major first; grouped[k]:
    // the (axis, factor index) of refs[k].
    let mut factors: Vec<Vec<u64>> = sizes.iter().map(|&s| vec![s]).collect();
    let mut grouped: Vec<(usize, usize)> = vec![(0, 0); refs.len()];
    for (axis, &size) in sizes.iter().enumerate() {
        let mut on_axis: Vec<(usize, u64, u64)> = refs
            .iter()
            .enumerate()
            .filter(|(_, r)| r.axis == axis)
            .map(|(k, r)| {
                let (pre, n) = r.sub.unwrap_or((1, size));
                (k, pre, n)
            })
            .collect();
        if on_axis.is_empty() {
            continue;
        }
        // A sub-axis `(pre)size` leaves `pre` more major than itself: build
        // the factors major first, in ascending `pre`.
        on_axis.sort_by_key(|&(_, pre, _)| pre);
        let mut parts = Vec::new();
        let mut prefix = 1u64;
        for &(k, pre, n) in &on_axis {
            if pre != prefix {
                if pre.checked_rem(prefix)? != 0 {
                    return None;
                }
                parts.push(pre / prefix);
                prefix = pre;
            }
            grouped[k] = (axis, parts.len());
            parts.push(n);
            prefix = prefix.checked_mul(n)?;
        }
        if prefix != size {
            if size.checked_rem(prefix)? != 0 {
                return None;
            }
            parts.push(size / prefix);
        }
        factors[axis] = parts;
    }
    // Flatten the factor dims; the grouped ones go last, in ref order.
    let mut dims = Vec::new();
    let mut index_of = Vec::new();
    for parts in &factors {
        index_of.push(dims.len());
        dims.extend(parts.iter().copied());
    }
    let grouped_dims: Vec<usize> = grouped.iter().map(|&(axis, f)| index_of[axis] + f).collect();
    let mut perm: Vec<u64> = (0..dims.len()).filter(|d| !grouped_dims.contains(d)).map(|d| d as u64).collect();
    perm.extend(grouped_dims.iter().map(|&d| d as u64));
    let order = transposed_iota(&dims, &perm)?;
    let size = grouped_dims.iter().try_fold(1u64, |a, &d| a.checked_mul(*dims.get(d)?))?;
    let ids: Vec<u64> = order.iter().map(|&i| devices.get(i as usize).copied()).collect::<Option<_>>()?;
    Some(ids.chunks(usize::try_from(size).ok()?.max(1)).map(<[u64]>::to_vec).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn groups(v: &str) -> Vec<Vec<u64>> {
        replica_groups(v, 0).unwrap().unwrap()
    }

    #[test]
    fn explicit_and_empty() {
        assert_eq!(groups("{{0,1},{2,3}}"), vec![vec![0, 1], vec![2, 3]]);
        assert_eq!(replica_groups("{}", 0).unwrap(), None);
    }

    #[test]
    fn iota_forms() {
        // XLA's documentation of the iota form: [2,4]<=[8] is {{0..3},{4..7}};
        // [2,4]<=[4,2]T(1,0) is {{0,2,4,6},{1,3,5,7}}.
        assert_eq!(groups("[2,4]<=[8]"), vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]]);
        assert_eq!(groups("[2,4]<=[4,2]T(1,0)"), vec![vec![0, 2, 4, 6], vec![1, 3, 5, 7]]);
        assert_eq!(groups("[4,2]<=[8]"), vec![vec![0, 1], vec![2, 3], vec![4, 5], vec![6, 7]]);
    }

    #[test]
    fn mesh_forms() {
        // Grouping over 'y' of a 2 x 4 mesh: the rows; over 'x': the columns.
        assert_eq!(groups("mesh['x'=2,'y'=4] {'y'}"), vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]]);
        assert_eq!(groups("mesh['x'=2,'y'=4] {'x'}"), vec![vec![0, 4], vec![1, 5], vec![2, 6], vec![3, 7]]);
        assert_eq!(groups("mesh['x'=2,'y'=4] {'y','x'}"), vec![vec![0, 4, 1, 5, 2, 6, 3, 7]]);
        // An axis named twice is refused, not read as two.
        let e = mesh_axes("mesh['x'=2,'x'=4] {'x'}", 0).unwrap_err();
        assert!(e.message.contains("names mesh axis 'x' twice"), "{e}");
        assert_eq!(
            groups("mesh['axis_0'=2,'axis_1'=1,'axis_2'=4] {'axis_0'}"),
            vec![vec![0, 4], vec![1, 5], vec![2, 6], vec![3, 7]]
        );
        // A sub-axis `(pre)size`: 'x':(1)2 of an axis of 4 is its major
        // factor (nothing before it), 'x':(2)2 its minor one.
        assert_eq!(groups("mesh['x'=4] {'x':(1)2}"), vec![vec![0, 2], vec![1, 3]]);
        assert_eq!(groups("mesh['x'=4] {'x':(2)2}"), vec![vec![0, 1], vec![2, 3]]);
        // An explicit device order.
        assert_eq!(groups("mesh['x'=2,'y'=2], device_ids=(3,2,1,0) {'y'}"), vec![vec![3, 2], vec![1, 0]]);
        // The device order as an iota, as JAX's compiled modules print it
        // (`device_ids=([4,4]T(1,0))`): 0..8 as a 4 x 2 array, transposed,
        // is 0, 2, 4, 6, 1, 3, 5, 7, the explicit order's groups.
        let explicit = groups("mesh['x'=2,'y'=4], device_ids=(0,2,4,6,1,3,5,7) {'x'}");
        assert_eq!(explicit, vec![vec![0, 1], vec![2, 3], vec![4, 5], vec![6, 7]]);
        assert_eq!(groups("mesh['x'=2,'y'=4], device_ids=([4,2]T(1,0)) {'x'}"), explicit);
        assert_eq!(groups("mesh['x'=2,'y'=4], device_ids=([1,8]<=[4,2]T(1,0)) {'x'}"), explicit);
        assert_eq!(groups("mesh['x'=2,'y'=4], device_ids=([8]) {'y'}"), groups("mesh['x'=2,'y'=4] {'y'}"));
        // Three dimensions reversed: ids of a 2 x 2 x 2 array at (k, j, i).
        assert_eq!(groups("mesh['x'=8], device_ids=([2,2,2]T(2,1,0)) {'x'}"), vec![vec![0, 4, 2, 6, 1, 5, 3, 7]]);
        // An iota `device_ids` before a sub-axis, whose `(pre)` closed the
        // ids early (JAX's 2-D reshard, checked against XLA running it):
        // devices [4,4,2]T(0,2,1) as an 8 x 4 mesh, the groups of axis_0's
        // minor factor of 2.
        let pairs: Vec<Vec<u64>> = (0..16).map(|g| vec![2 * g, 2 * g + 1]).collect();
        assert_eq!(groups("mesh['axis_0'=8,'axis_1'=4], device_ids=([4,4,2]T(0,2,1)) {'axis_0':(4)2}"), pairs);
        // Explicit ids with a sub-axis.
        assert_eq!(groups("mesh['x'=4], device_ids=(3,2,1,0) {'x':(1)2}"), vec![vec![3, 1], vec![2, 0]]);
    }

    #[test]
    fn bad_values_are_refused() {
        assert!(replica_groups("{{0,1},{2,x}}", 0).is_err());
        assert!(replica_groups("[3,4]<=[8]", 0).is_err());
        assert!(replica_groups("mesh['x'=2] {'z'}", 0).is_err());
        // An axis of no devices, whose sub-axes once multiplied past u64.
        let empty = "mesh['x'=0,'y'=0] {'x':(1)4294967296,'y':(1)4294967296}";
        assert!(replica_groups(empty, 0).is_err());
        assert!(replica_groups("mesh['x'=0] {'x'}", 0).is_err());
        // Empty sub-axes, which once divided by zero.
        for v in ["{'y':(0)2}", "{'y':(1)0}", "{'y':(2)0}", "{'y':(0)4}", "{'y':(1)2,'y':(0)2}", "{'y':(1)1}"] {
            let e = replica_groups(&format!("mesh['x'=2,'y'=4] {v}"), 0).unwrap_err();
            assert!(e.message.contains("is empty"), "{v}: {e}");
        }
        // Sub-axes that do not tile their axis.
        for v in ["{'y':(1)3}", "{'y':(1)4,'y':(2)2}", "{'y':(1)2,'y':(1)2}", "{'y':(3)2}"] {
            assert!(replica_groups(&format!("mesh['x'=2,'y'=4] {v}"), 0).is_err(), "{v}");
        }
        assert!(pairs("{{0,1,2}}", 0).is_err());
    }
}
