//! Test helpers: validated programs built directly, without RON.

use crate::valid::{Groups, ResolvedAlgorithm, Shape, ValidCollective, ValidProgram};
use ccc_ir::arch::Arch;
use ccc_ir::enums::{AlgType, OpType};
use ccc_ir::spec::{Barrier, DType, Leg, ReduceOp};

/// A one-collective program description for tests.
#[derive(Clone, Debug)]
pub(crate) struct Case {
    pub op: OpType,
    pub alg: ResolvedAlgorithm,
    pub rank_n: u32,
    pub local_rank_n: u32,
    pub pod_n: u32,
    pub channels: u8,
    pub count: u64,
    pub root: Option<u32>,
    pub peers: Vec<(u32, u32)>,
    pub counts: Option<Vec<Vec<u64>>>,
    pub groups: Option<Vec<Vec<u32>>>,
    pub arch: Arch,
}

impl Case {
    pub(crate) fn flat(op: OpType, alg: AlgType, rank_n: u32, local_rank_n: u32) -> Case {
        Case {
            op,
            alg: ResolvedAlgorithm::Flat(alg),
            rank_n,
            local_rank_n,
            pod_n: 1,
            channels: 2,
            count: 4096 + 7,
            root: op.is_rooted().then_some(rank_n.saturating_sub(1) / 2),
            peers: Vec::new(),
            counts: None,
            groups: None,
            arch: Arch::Cayman,
        }
    }

    /// A flat case of `alg` on `n` ranks with the node or pod structure the
    /// algorithm needs; `None` where no such case exists (a peer map over one
    /// rank, TwoStepPodMesh over an odd count).
    pub(crate) fn for_alg(op: OpType, alg: AlgType, n: u32) -> Option<Case> {
        if op.takes_peers() && n < 2 {
            return None; // a rank cannot be its own peer
        }
        let local = match alg {
            AlgType::Kangaring | AlgType::IntraRdh => n,
            AlgType::LatencyOptMesh | AlgType::BwOptMesh if n.is_multiple_of(2) => 2,
            _ => 1,
        };
        let mut case = Case::flat(op, alg, n, local);
        if alg == AlgType::TwoStepPodMesh {
            if !n.is_multiple_of(2) {
                return None;
            }
            case.pod_n = 2;
            case.local_rank_n = 1;
        }
        Some(case)
    }

    /// Every Hier composition worth testing: for each op with legs, each
    /// legal choice on each leg (the wide set, `choices: Wide`, so that the
    /// opt-in choices are proven too) with the other legs on Ring.
    pub(crate) fn hier_choices() -> Vec<(OpType, Vec<(Leg, AlgType)>)> {
        let mut out = Vec::new();
        for op in [OpType::AllReduce, OpType::AllGather, OpType::ReduceScatter] {
            let legs = crate::algorithms::hier_legs(op).unwrap_or(&[]);
            for (i, &leg) in legs.iter().enumerate() {
                for &alg in crate::algorithms::leg_choices_in(leg, ccc_ir::spec::LegChoices::Wide) {
                    let choice =
                        legs.iter().enumerate().map(|(j, &l)| (l, if i == j { alg } else { AlgType::Ring })).collect();
                    out.push((op, choice));
                }
            }
        }
        out
    }

    /// Every flat algorithm (all but Hier) with every op it serves, in
    /// the order of `AlgType::ALL` and `flat_ops`.
    pub(crate) fn flat_pairs() -> impl Iterator<Item = (OpType, AlgType)> {
        let flat = AlgType::ALL.iter().copied().filter(|&alg| alg != AlgType::Hier);
        flat.flat_map(|alg| crate::algorithms::flat_ops(alg).iter().map(move |&op| (op, alg)))
    }

    /// Every flat pairing on each of `sizes` ranks (where a case exists),
    /// every Hier composition on 12 ranks of 4 per node, and a ring
    /// all-reduce over two interleaved replica groups: the grid the
    /// symmetry tests compare their watches on.
    pub(crate) fn pairings(sizes: &[u32]) -> Vec<Case> {
        let mut cases: Vec<Case> = Vec::new();
        for (op, alg) in Case::flat_pairs() {
            cases.extend(sizes.iter().filter_map(|&n| Case::for_alg(op, alg, n)));
        }
        cases.extend(Case::hier_choices().into_iter().map(|(op, choice)| Case::hier(op, &choice, 12, 4)));
        let mut grouped = Case::flat(OpType::AllReduce, AlgType::Ring, 8, 4);
        grouped.groups = Some(vec![vec![0, 2, 4, 6], vec![7, 5, 3, 1]]);
        cases.push(grouped);
        cases
    }

    pub(crate) fn hier(op: OpType, legs: &[(Leg, AlgType)], rank_n: u32, local_rank_n: u32) -> Case {
        Case {
            alg: ResolvedAlgorithm::Hier(crate::valid::LegAlgorithms::new(legs).unwrap()),
            ..Case::flat(op, AlgType::Ring, rank_n, local_rank_n)
        }
    }

    pub(crate) fn group_size(&self) -> u32 {
        self.groups.as_ref().and_then(|g| g.first()).map_or(self.rank_n, |g| g.len() as u32)
    }

    pub(crate) fn valid(&self) -> ValidProgram {
        let node_n = self.rank_n / self.local_rank_n;
        let shape = Shape {
            rank_n: self.rank_n,
            local_rank_n: self.local_rank_n,
            pod_n: self.pod_n,
            node_n,
            nodes_per_pod: node_n / self.pod_n,
        };
        let n = self.group_size();
        let peers: Vec<(u32, u32)> = if self.op.takes_peers() && self.peers.is_empty() {
            (0..n).map(|i| (i, (i + 1) % n)).collect()
        } else {
            self.peers.clone()
        };
        // As validation makes them, the costed group chosen.
        let groups = match &self.groups {
            None => Groups::world(self.rank_n),
            Some(g) => Groups::explicit(self.rank_n, g.clone()).modelled_on(&shape, &peers),
        };
        let counts = if self.op == OpType::AllToAllV && self.counts.is_none() {
            let row = |i: u64| (0..u64::from(n)).map(move |j| (i * 7 + j * 3) % 11 + u64::from(i == j)).collect();
            Some((0..u64::from(n)).map(row).collect::<Vec<Vec<u64>>>())
        } else {
            self.counts.clone()
        };
        let count = match (&counts, self.op) {
            (Some(c), _) => c.first().map_or(0, |r| r.iter().sum()),
            (None, OpType::ReduceScatter | OpType::AllToAll) => self.count - self.count % u64::from(n) + u64::from(n),
            _ => self.count,
        };
        let collective = ValidCollective {
            index: 0,
            op: self.op,
            dtype: DType::Bf16,
            reduce: self.op.is_reducing().then_some(ReduceOp::Add),
            count,
            channels: self.channels,
            algorithm: self.alg,
            groups,
            root: self.root,
            peers,
            counts: counts.map(std::sync::Arc::from),
            model: ccc_ir::model::ModelParams::of(self.arch),
            auto: None,
            listed: None,
        };
        ValidProgram {
            collectives: vec![collective],
            arch: self.arch,
            topology: shape,
            barrier: Barrier::Host,
            send_credits: 2,
        }
    }
}
