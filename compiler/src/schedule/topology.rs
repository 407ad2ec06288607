//! Topology relations of global ranks: the neighbour kind of a transfer and the mesh sub-type of a set of ranks.

use crate::valid::Shape;
use ccc_ir::arch::Arch;
use ccc_ir::enums::{MeshType, Neigh};
use ccc_ir::id::Rank;

/// Which relation two global ranks have: the neighbour kind of a non-ring
/// transfer (`docs/algorithms.md`).
pub fn relation(shape: &Shape, a: Rank, b: Rank) -> Neigh {
    if a == b {
        Neigh::Local
    } else if shape.node(a.0) == shape.node(b.0) {
        Neigh::PeerLocal
    } else if shape.pod(a.0) == shape.pod(b.0) {
        Neigh::PeerRmtv
    } else {
        Neigh::PeerRmtv2
    }
}

/// The mesh sub-type of a set of global ranks on `arch`.
pub fn mesh_type(arch: Arch, shape: &Shape, ranks: impl IntoIterator<Item = Rank>) -> MeshType {
    let mut ranks = ranks.into_iter();
    let Some(first) = ranks.next() else {
        return within_node_mesh(arch);
    };
    let (mut nodes, mut pods) = (false, false);
    for r in ranks {
        nodes |= shape.node(r.0) != shape.node(first.0);
        pods |= shape.pod(r.0) != shape.pod(first.0);
    }
    if pods {
        MeshType::MeshSwitch
    } else if nodes {
        MeshType::GroupedMesh
    } else {
        within_node_mesh(arch)
    }
}

/// Inside one node: MESH_TRN2 on Cayman (NeuronCore-v3 is Trainium2's
/// core), FULL_MESH on the others.
fn within_node_mesh(arch: Arch) -> MeshType {
    match arch {
        Arch::Cayman => MeshType::MeshTrn2,
        Arch::Sunda | Arch::Mariana | Arch::MarianaPlus => MeshType::FullMesh,
    }
}
