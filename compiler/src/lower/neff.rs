//! The EXEC config block of each TOP_SP (`docs/wire-format.md` §8), filled
//! once its records are lowered, and the semaphore addresses lowering uses.

use super::{Limit, LowerErrorKind, TopSpProgram};
use crate::placement::{DEVICE_BARRIER_FANOUT, device_barrier_sema, sema};
use crate::schedule::Schedule;
use ccc_ir::arch::{ArchParams, SemWindow};
use ccc_ir::id::TopSp;
use ccc_ir::spec::Barrier;
use ccc_ir::wire::neff_configs::{
    BarrierConfigs, BarrierStep, BasicBlockConfigs, DEVICE_STEPS_N, NeffConfigs, NeffFlags, SLOT_SPAD_BASE_N,
};

/// The address of semaphore `index` of `window` on `topsp`. Every index
/// lowering uses is a named constant of `placement::sema` inside the
/// window; one outside it is refused as a limit, never addressed.
pub(super) fn sem(params: &ArchParams, topsp: TopSp, window: SemWindow, index: u32) -> Result<u64, LowerErrorKind> {
    params.sem_addr(topsp.0, window, index).map_err(|e| LowerErrorKind::Limit {
        limit: Limit::SemaphoreIndex,
        value: u64::from(e.index),
        max: u64::from(e.limit),
        arch: params.arch,
    })
}

/// The EXEC config block of one TOP_SP.
pub(super) fn neff_configs(schedule: &Schedule, tp: &TopSpProgram) -> Result<NeffConfigs, LowerErrorKind> {
    let params = schedule.arch.params();
    let t = tp.topsp;
    let read = |i| sem(params, t, SemWindow::Read, i);
    let limit = |limit, value: u64, max: u64| LowerErrorKind::Limit { limit, value, max, arch: schedule.arch };
    let records = tp.records().count() as u64;
    let op_num = u32::try_from(records).map_err(|_| limit(Limit::Records, records, u64::from(u32::MAX)))?;
    let functions = schedule.collectives.len() as u64;
    let function_n = u16::try_from(functions).map_err(|_| limit(Limit::Functions, functions, u64::from(u16::MAX)))?;
    let ends = tp.segments.len() as u64;
    let tpb_compl_addr_num =
        u8::try_from(ends).map_err(|_| limit(Limit::CompletionAddresses, ends, u64::from(u8::MAX)))?;
    let mut slot_spad_base = [0u64; SLOT_SPAD_BASE_N];
    slot_spad_base[0] = params.slot_spad_addr(t.0);
    let barrier = match schedule.barrier {
        Barrier::Host => {
            BarrierConfigs::Host { barrier_start: read(sema::BARRIER_START)?, barrier_done: read(sema::BARRIER_DONE)? }
        }
        Barrier::Device => BarrierConfigs::Device { steps: device_barrier(schedule, t)? },
    };
    let pring_total_desc_num =
        tp.records().flat_map(|r| &r.tp).fold(0u64, |acc, e| acc.saturating_add(e.total_descriptors()));
    Ok(NeffConfigs {
        trigger: read(sema::TRIGGER)?,
        trigger_next: read(sema::TRIGGER_NEXT)?,
        complete: read(sema::COMPLETE)?,
        complete_prev: read(sema::COMPLETE_PREV)?,
        tpb_stop_sema: read(sema::TPB_STOP)?,
        ctrl_spad: params.ctrl_spad_addr(t.0),
        slot_spad_base,
        op_num,
        function_n,
        tpb_compl_addr_num,
        // At most 32 channels in all.
        channel_n: tp.channels.len() as u8,
        topsp_index: t.0,
        send_credits: schedule.send_credits,
        channel_ids: tp.channels.clone(),
        mesh_events: tp.records().flat_map(|r| r.events.iter().copied()).collect(),
        barrier,
        basic_block: BasicBlockConfigs {
            switch_completed: read(sema::SWITCH_COMPLETED)?,
            pring_base_addr: params.pring_addr(t.0),
            pring_total_desc_num,
        },
        flags: NeffFlags { leader: t.0 == 0, dbg_cc_nop: false, host_cc: false },
    })
}

/// The radix-5 dissemination barrier over every rank (`docs/wire-format.md` §8.2).
fn device_barrier(schedule: &Schedule, t: TopSp) -> Result<Vec<BarrierStep>, LowerErrorKind> {
    let params = schedule.arch.params();
    let rank_n = schedule.shape.rank_n;
    let radix = DEVICE_BARRIER_FANOUT + 1;
    let mut steps = Vec::new();
    let mut span = 1u64;
    while span < u64::from(rank_n) {
        if steps.len() == DEVICE_STEPS_N {
            return Err(LowerErrorKind::DeviceBarrierTooLarge { rank_n });
        }
        let s = steps.len() as u32;
        let mut step = BarrierStep::default();
        let mut used = 0u16;
        for i in 1..=DEVICE_BARRIER_FANOUT {
            if u64::from(i) * span < u64::from(rank_n) {
                let slot = (i - 1) as usize;
                step.barrier_sema[slot] = sem(params, t, SemWindow::Read, device_barrier_sema(s, i - 1))?;
                step.target_sema_val[slot] = 1;
                used += 1;
            }
        }
        step.m2s_val = used;
        step.s2m_val = used;
        steps.push(step);
        span *= u64::from(radix);
    }
    if steps.is_empty() {
        // A single rank still runs one (empty) step: the block needs 1..=4.
        steps.push(BarrierStep::default());
    }
    Ok(steps)
}
