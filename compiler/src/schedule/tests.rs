use super::*;
use ccc_ir::enums::HalfChunk;

#[test]
fn scopes_decompose_the_group_index() {
    // 2 pods x 3 nodes x 4 locals = 24 members.
    let r = Radices([4, 3, 2]);
    let node = Scope::WHOLE.node_part();
    let cross = Scope::WHOLE.cross_part();
    assert_eq!((node.size(&r), cross.size(&r)), (4, 6));
    // Member 17 = local 1, node 1, pod 1.
    let s = node.around(&r, 17);
    assert_eq!((s.base, s.stride, s.k, s.pos), (16, 1, 4, 1));
    let c = cross.around(&r, 17);
    assert_eq!((c.base, c.stride, c.k, c.pos), (1, 4, 6, 4));
    assert_eq!((0..6).map(|q| c.member(q)).collect::<Vec<_>>(), vec![1, 5, 9, 13, 17, 21]);
    // Inside the cross scope: nodes of one pod, then pods.
    let in_pod = cross.pod_part();
    let pods = cross.cross_pod_part();
    assert_eq!((in_pod.size(&r), pods.size(&r)), (3, 2));
    assert_eq!(cross.node_part().size(&r), 1);
    let p = pods.around(&r, 17);
    assert_eq!((p.base, p.stride, p.k, p.pos), (5, 12, 2, 1));
}

/// A span is the product of the radices of its digits, for every range
/// of digits (empty ones give 1), as the array's slice gives it.
#[test]
fn spans_multiply_their_digits() {
    let r = Radices([4, 3, 2]);
    let digits = u8::try_from(DIGITS).unwrap();
    for lo in 0..=digits {
        for hi in lo..=digits {
            let product: u32 = r.0[usize::from(lo)..usize::from(hi)].iter().product();
            assert_eq!(r.span(lo, hi), product, "{lo}..{hi}");
        }
    }
}

#[test]
fn pieces_interleave() {
    let all = BlockSet::all(12);
    let p = all.piece(4, 1);
    assert_eq!(p.iter().collect::<Vec<_>>(), vec![1, 5, 9]);
    assert_eq!(p.piece(3, 2).iter().collect::<Vec<_>>(), vec![9]);
    assert_eq!(all.range(3, 6).iter().collect::<Vec<_>>(), vec![3, 4, 5]);
}

/// The tabulated count equals the walk over every block, channel and
/// half it replaces, for every op's layout (uniform or not).
#[test]
fn descriptor_tables_count_as_the_block_walk_does() {
    use crate::testing::Case;
    use ccc_ir::enums::{AlgType, OpType};
    for op in [OpType::AllReduce, OpType::AllGather, OpType::ReduceScatter, OpType::AllToAll, OpType::AllToAllV] {
        for (count, channels) in [(4096 + 7, 3u8), (10, 4), (1 << 20, 1), (3 * 65536 + 5, 2)] {
            let mut case = Case::flat(op, AlgType::Mesh, 6, 6);
            case.count = count;
            case.channels = channels;
            let schedule = crate::build::build(&case.valid()).unwrap();
            let plan = &schedule.collectives[0];
            let layout = plan.layout();
            let block_n = layout.block_n();
            for hosted in [vec![0u8], (0..channels).collect::<Vec<_>>()] {
                let table = DescTable::new(plan, &hosted);
                for member in 0..6 {
                    for (start, stride, n) in [(0, 1, block_n), (1, 2, block_n / 2), (block_n - 1, 1, 1), (2, 3, 1)] {
                        let blocks = BlockSet { start, stride, count: n };
                        for halves in [Halves::Both, Halves::Only(HalfChunk::H0), Halves::Only(HalfChunk::H1)] {
                            let walk: u64 = hosted
                                .iter()
                                .flat_map(|&c| blocks.iter().flat_map(move |b| halves.iter().map(move |h| (c, b, h))))
                                .map(|(c, b, h)| layout.descriptors(member, c, b, h))
                                .sum();
                            assert_eq!(
                                table.count(member, blocks, halves),
                                walk,
                                "{op:?} {count} {blocks:?} {halves:?}"
                            );
                            // And the bytes mesh events count, as lowering
                            // summed them block by block.
                            let walked = hosted
                                .iter()
                                .flat_map(|&c| blocks.iter().flat_map(move |b| halves.iter().map(move |h| (c, b, h))))
                                .fold(0u64, |sum, (c, b, h)| sum.saturating_add(layout.bytes(member, c, b, h)));
                            assert_eq!(
                                table.bytes(member, blocks, halves),
                                walked,
                                "bytes: {op:?} {count} {blocks:?} {halves:?}"
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn split_spreads_the_remainder_first() {
    let parts: Vec<u64> = (0..4).map(|i| split(10, 4, i)).collect();
    assert_eq!(parts, vec![3, 3, 2, 2]);
    assert_eq!(parts.iter().sum::<u64>(), 10);
    assert_eq!(split(5, 0, 0), 0);
}

/// Tables the protocol proof lets share counts (`counts_alike`) count
/// every transfer alike; and channels whose halves straddle a descriptor
/// boundary differently are not alike.
#[test]
fn tables_alike_count_alike() {
    use crate::testing::Case;
    use ccc_ir::enums::{AlgType, OpType};
    let (mut alike, mut unlike) = (0, 0);
    for op in [OpType::AllReduce, OpType::AllToAllV] {
        let mut case = Case::flat(op, AlgType::Mesh, 6, 6);
        case.channels = 2;
        let size = crate::build::build(&case.valid()).unwrap().collectives[0].dtype.size();
        // Elements one descriptor moves: a block of 4 of them and 3 more
        // has halves of one too many on channel 0 only.
        let per_desc = MAX_DESC_BYTES / size;
        for count in [6 * (4 * per_desc + 3), 6 * 4 * per_desc, 60] {
            case.count = count;
            let schedule = crate::build::build(&case.valid()).unwrap();
            let plan = &schedule.collectives[0];
            let block_n = plan.layout().block_n();
            let tables = [DescTable::new(plan, &[0]), DescTable::new(plan, &[1]), DescTable::new(plan, &[0])];
            for a in &tables {
                for b in &tables {
                    if !a.counts_alike(b) {
                        unlike += 1;
                        continue;
                    }
                    alike += 1;
                    for member in 0..6 {
                        for blocks in
                            [BlockSet::all(block_n), BlockSet::one(1), BlockSet { start: 1, stride: 2, count: 2 }]
                        {
                            for halves in [Halves::Both, Halves::Only(HalfChunk::H0), Halves::Only(HalfChunk::H1)] {
                                assert_eq!(
                                    a.count(member, blocks, halves),
                                    b.count(member, blocks, halves),
                                    "{op:?} {count}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(alike > 0 && unlike > 0, "{alike} alike, {unlike} not");
}

/// A placer gives every member, phase after phase, what `instance` does
/// (phases placed alike take the placement before them), on every
/// pairing; and alike phases do occur (recursive halving's rounds).
#[test]
fn placers_place_as_instance_does() {
    use crate::build::build;
    use crate::testing::Case;
    let mut reused = 0;
    for case in Case::pairings(&[2, 3, 6, 8, 12]) {
        let schedule = build(&case.valid()).unwrap();
        for plan in &schedule.collectives {
            for m in 0..plan.groups.size() {
                let mut placer = plan.placer(m);
                for (i, phase) in plan.phases.iter().enumerate() {
                    assert_eq!(placer.place(phase), plan.instance(phase, m), "{:?} member {m}", phase.kind);
                    reused += u32::from(i > 0 && phase.placed_as(&plan.phases[i - 1]));
                }
            }
        }
    }
    assert!(reused > 100, "{reused}");
}
