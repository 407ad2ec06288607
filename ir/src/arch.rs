//! The per-architecture parameter table and the semaphore address
//! computation (wire-contract §5, §6; `docs/wire-format.md` §6, §9).
//!
//! The cc_op record schema is identical on every architecture; what differs
//! is in [`ArchParams`]. Cayman's numbers are \[seed\]; the other arches reuse
//! them where the seeds are silent (\[project\]), except for the mesh event
//! limit, which is \[seed\] for all four.

use serde::{Deserialize, Serialize};

/// A Trainium-class NeuronCore generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Arch {
    /// NC-v2, arch id 0x05.
    Sunda,
    /// NC-v3, arch id 0x0c.
    Cayman,
    /// NC-v4, arch id 0x14.
    Mariana,
    /// NC-v4+, arch id 0x1c.
    MarianaPlus,
}

impl Arch {
    /// Every architecture.
    pub const ALL: [Arch; 4] = [Arch::Sunda, Arch::Cayman, Arch::Mariana, Arch::MarianaPlus];

    /// The largest CTRL SPAD and SLOT SPAD of any arch, bytes: no emitted
    /// image of either region is larger (the encoder refuses to overflow
    /// a region), so a decoder reads no more.
    pub fn largest_spads() -> (u32, u32) {
        let largest = |size: fn(&ArchParams) -> u32| Arch::ALL.iter().map(|a| size(a.params())).max().unwrap_or(0);
        (largest(|p| p.ctrl_spad_size), largest(|p| p.slot_spad_size))
    }

    /// The ccc spelling (as in RON specs).
    pub const fn name(self) -> &'static str {
        match self {
            Arch::Sunda => "Sunda",
            Arch::Cayman => "Cayman",
            Arch::Mariana => "Mariana",
            Arch::MarianaPlus => "MarianaPlus",
        }
    }

    /// This architecture's parameters.
    pub const fn params(self) -> &'static ArchParams {
        match self {
            Arch::Sunda => &SUNDA,
            Arch::Cayman => &CAYMAN,
            Arch::Mariana => &MARIANA,
            Arch::MarianaPlus => &MARIANA_PLUS,
        }
    }
}

impl std::fmt::Display for Arch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An EVT_SEM semaphore window of a TOP_SP.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum SemWindow {
    /// Read / wait (`+0x1000` on Cayman).
    Read,
    /// Set (`+0x1400`).
    Set,
    /// Increment: the address a producer writes to signal (`+0x1800`).
    Inc,
    /// Decrement: consume (`+0x1C00`).
    Dec,
}

impl SemWindow {
    /// The window's name as the runtime writes it (`READ`, `SET`, `INC`,
    /// `DEC`).
    pub const fn name(self) -> &'static str {
        match self {
            SemWindow::Read => "READ",
            SemWindow::Set => "SET",
            SemWindow::Inc => "INC",
            SemWindow::Dec => "DEC",
        }
    }
}

impl std::fmt::Display for SemWindow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One architecture's numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArchParams {
    /// Which architecture.
    pub arch: Arch,
    /// The runtime's arch id \[seed\].
    pub arch_id: u8,
    /// NeuronCore generation label \[seed\].
    pub neuron_core: &'static str,
    /// TOP_SPs per NeuronCore \[project\].
    pub topsp_n: u8,
    /// SoC address of TOP_SP 0's SP base (`0x8280000000` on Cayman \[seed\]).
    pub sp_base: u64,
    /// Distance between consecutive TOP_SPs' bases \[project\].
    pub topsp_stride: u64,
    /// READ/WAIT window offset from the SP base.
    pub sem_read: u64,
    /// SET window offset.
    pub sem_set: u64,
    /// INC window offset.
    pub sem_inc: u64,
    /// DEC window offset.
    pub sem_dec: u64,
    /// Semaphores per window (256 \[seed\]).
    pub sem_n: u16,
    /// CTRL SPAD size in bytes (`0x1000` on Cayman \[seed\]).
    pub ctrl_spad_size: u32,
    /// SLOT SPAD size in bytes (`0x8000` on Cayman \[seed\]).
    pub slot_spad_size: u32,
    /// Offset of the CTRL SPAD load address from the SP base \[project\].
    pub ctrl_spad_offset: u64,
    /// Offset of the SLOT SPAD load address from the SP base \[project\].
    pub slot_spad_offset: u64,
    /// Offset of the persistent DMA ring from the SP base \[project\].
    pub pring_offset: u64,
    /// Mesh events per TOP_SP (50 on Sunda, 108 elsewhere \[seed\]).
    pub mesh_event_max: u8,
}

/// The Cayman numbers every arch starts from.
const CAYMAN: ArchParams = ArchParams {
    arch: Arch::Cayman,
    arch_id: 0x0c,
    neuron_core: "NC-v3",
    topsp_n: 8,
    sp_base: 0x82_8000_0000,
    topsp_stride: 0x10_0000,
    sem_read: 0x1000,
    sem_set: 0x1400,
    sem_inc: 0x1800,
    sem_dec: 0x1C00,
    sem_n: 256,
    ctrl_spad_size: 0x1000,
    slot_spad_size: 0x8000,
    ctrl_spad_offset: 0x2_0000,
    slot_spad_offset: 0x4_0000,
    pring_offset: 0x8_0000,
    mesh_event_max: 108,
};

const SUNDA: ArchParams =
    ArchParams { arch: Arch::Sunda, arch_id: 0x05, neuron_core: "NC-v2", topsp_n: 4, mesh_event_max: 50, ..CAYMAN };

const MARIANA: ArchParams =
    ArchParams { arch: Arch::Mariana, arch_id: 0x14, neuron_core: "NC-v4", topsp_n: 16, ..CAYMAN };

const MARIANA_PLUS: ArchParams =
    ArchParams { arch: Arch::MarianaPlus, arch_id: 0x1c, neuron_core: "NC-v4+", topsp_n: 16, ..CAYMAN };

/// A semaphore index that is not below the window size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("semaphore index {index} is outside the {window} window (0..{limit})")]
pub struct SemIndexError {
    /// The window asked for.
    pub window: SemWindow,
    /// The refused index.
    pub index: u32,
    /// The window size.
    pub limit: u16,
}

impl ArchParams {
    /// SoC address of TOP_SP `topsp`'s SP base.
    pub const fn topsp_base(&self, topsp: u8) -> u64 {
        self.sp_base + (topsp as u64) * self.topsp_stride
    }

    /// Offset of a window from the SP base.
    pub const fn window_offset(&self, window: SemWindow) -> u64 {
        match window {
            SemWindow::Read => self.sem_read,
            SemWindow::Set => self.sem_set,
            SemWindow::Inc => self.sem_inc,
            SemWindow::Dec => self.sem_dec,
        }
    }

    /// The address of semaphore `index` of `window` on TOP_SP `topsp`:
    /// `base + window + 4 * index`.
    ///
    /// # Errors
    ///
    /// [`SemIndexError`] when `index` is not below [`ArchParams::sem_n`].
    pub fn sem_addr(&self, topsp: u8, window: SemWindow, index: u32) -> Result<u64, SemIndexError> {
        if index >= u32::from(self.sem_n) {
            return Err(SemIndexError { window, index, limit: self.sem_n });
        }
        Ok(self.topsp_base(topsp) + self.window_offset(window) + 4 * u64::from(index))
    }

    /// The (TOP_SP, window, index) an address names, if it names one.
    pub fn sem_of_addr(&self, addr: u64) -> Option<(u8, SemWindow, u32)> {
        let rel = addr.checked_sub(self.sp_base)?;
        let topsp = u8::try_from(rel / self.topsp_stride).ok()?;
        if topsp >= self.topsp_n {
            return None;
        }
        let within = rel % self.topsp_stride;
        let span = 4 * u64::from(self.sem_n);
        for window in [SemWindow::Read, SemWindow::Set, SemWindow::Inc, SemWindow::Dec] {
            let start = self.window_offset(window);
            if within >= start && within < start + span && (within - start).is_multiple_of(4) {
                let index = u32::try_from((within - start) / 4).ok()?;
                return Some((topsp, window, index));
            }
        }
        None
    }

    /// CTRL SPAD load address of TOP_SP `topsp`.
    pub const fn ctrl_spad_addr(&self, topsp: u8) -> u64 {
        self.topsp_base(topsp) + self.ctrl_spad_offset
    }

    /// SLOT SPAD load address of TOP_SP `topsp`.
    pub const fn slot_spad_addr(&self, topsp: u8) -> u64 {
        self.topsp_base(topsp) + self.slot_spad_offset
    }

    /// Persistent DMA ring base of TOP_SP `topsp`.
    pub const fn pring_addr(&self, topsp: u8) -> u64 {
        self.topsp_base(topsp) + self.pring_offset
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Cayman's numbers are [seed]: written from wire-contract §6 by hand.
    #[test]
    fn cayman_semaphore_windows_are_the_seed_ones() {
        let p = Arch::Cayman.params();
        assert_eq!(p.sem_addr(0, SemWindow::Read, 0), Ok(0x82_8000_1000));
        assert_eq!(p.sem_addr(0, SemWindow::Set, 0), Ok(0x82_8000_1400));
        assert_eq!(p.sem_addr(0, SemWindow::Inc, 1), Ok(0x82_8000_1804));
        assert_eq!(p.sem_addr(0, SemWindow::Dec, 255), Ok(0x82_8000_1C00 + 4 * 255));
        assert_eq!(
            p.sem_addr(0, SemWindow::Read, 256),
            Err(SemIndexError { window: SemWindow::Read, index: 256, limit: 256 })
        );
        assert_eq!((p.ctrl_spad_size, p.slot_spad_size), (0x1000, 0x8000));
    }

    #[test]
    fn arch_ids_and_mesh_limits_are_the_seed_ones() {
        let ids: Vec<(u8, u8)> = Arch::ALL.iter().map(|a| (a.params().arch_id, a.params().mesh_event_max)).collect();
        assert_eq!(ids, vec![(0x05, 50), (0x0c, 108), (0x14, 108), (0x1c, 108)]);
        for a in Arch::ALL {
            assert_eq!(a.params().arch, a);
        }
    }

    // docs/wire-format.md §6 by hand: address = base + window + 4 * idx.
    #[test]
    fn every_window_is_its_offset_plus_four_per_index() {
        let p = Arch::Cayman.params();
        #[rustfmt::skip]
        let rows: &[(SemWindow, u32, u64)] = &[
            // window          idx   address
            (SemWindow::Read,  1,    0x82_8000_1004),
            (SemWindow::Read,  255,  0x82_8000_13FC),
            (SemWindow::Set,   1,    0x82_8000_1404),
            (SemWindow::Set,   255,  0x82_8000_17FC),
            (SemWindow::Inc,   0,    0x82_8000_1800),
            (SemWindow::Inc,   255,  0x82_8000_1BFC),
            (SemWindow::Dec,   0,    0x82_8000_1C00),
            (SemWindow::Dec,   1,    0x82_8000_1C04),
        ];
        for &(window, index, addr) in rows {
            assert_eq!(p.sem_addr(0, window, index), Ok(addr), "{window:?} {index}");
        }
        for window in [SemWindow::Set, SemWindow::Inc, SemWindow::Dec] {
            assert_eq!(p.sem_addr(0, window, 256), Err(SemIndexError { window, index: 256, limit: 256 }));
        }
        let refused = p.sem_addr(0, SemWindow::Inc, 256).unwrap_err();
        assert_eq!(refused.to_string(), "semaphore index 256 is outside the INC window (0..256)");
    }

    // docs §9: the other arches reuse Cayman's windows and region sizes
    // [project]; arch ids, core labels and mesh limits are [seed], TOP_SP
    // counts [project].
    #[test]
    fn every_arch_has_its_counts_and_the_cayman_windows() {
        #[rustfmt::skip]
        let rows: &[(Arch, &str, &str, u8)] = &[
            // arch               name            core      TOP_SPs
            (Arch::Sunda,         "Sunda",        "NC-v2",  4),
            (Arch::Cayman,        "Cayman",       "NC-v3",  8),
            (Arch::Mariana,       "Mariana",      "NC-v4",  16),
            (Arch::MarianaPlus,   "MarianaPlus",  "NC-v4+", 16),
        ];
        for &(arch, name, core, topsp_n) in rows {
            let p = arch.params();
            assert_eq!((arch.to_string().as_str(), p.neuron_core, p.topsp_n), (name, core, topsp_n));
            assert_eq!((p.ctrl_spad_size, p.slot_spad_size, p.sem_n), (0x1000, 0x8000, 256), "{arch}");
            assert_eq!(p.sem_addr(0, SemWindow::Read, 0), Ok(0x82_8000_1000), "{arch}");
            assert_eq!(p.sem_addr(0, SemWindow::Set, 0), Ok(0x82_8000_1400), "{arch}");
            assert_eq!(p.sem_addr(0, SemWindow::Inc, 1), Ok(0x82_8000_1804), "{arch}");
            assert_eq!(p.sem_addr(0, SemWindow::Dec, 0), Ok(0x82_8000_1C00), "{arch}");
        }
    }

    // docs §6: TOPSP_STRIDE = 0x10_0000; CTRL SPAD, SLOT SPAD and the
    // persistent ring at base + 0x2_0000, 0x4_0000, 0x8_0000 [project].
    #[test]
    fn topsp_stride_and_load_addresses() {
        let p = Arch::Cayman.params();
        assert_eq!(p.sem_addr(1, SemWindow::Inc, 1), Ok(0x82_8010_1804));
        assert_eq!(p.sem_addr(7, SemWindow::Read, 0), Ok(0x82_8070_1000));
        assert_eq!(p.ctrl_spad_addr(0), 0x82_8002_0000);
        assert_eq!(p.slot_spad_addr(0), 0x82_8004_0000);
        assert_eq!(p.pring_addr(0), 0x82_8008_0000);
        assert_eq!(p.ctrl_spad_addr(3), 0x82_8032_0000);
        assert_eq!(p.slot_spad_addr(3), 0x82_8034_0000);
        assert_eq!(p.pring_addr(3), 0x82_8038_0000);
    }

    #[test]
    fn addresses_between_semaphores_name_none() {
        let p = Arch::Cayman.params();
        assert_eq!(p.sem_of_addr(0x82_8000_1002), None, "not 4-byte aligned");
        assert_eq!(p.sem_of_addr(0x82_8000_0FFC), None, "below the READ window");
        assert_eq!(p.sem_of_addr(0x82_8000_2000), None, "past the DEC window");
        assert_eq!(p.sem_of_addr(0x82_7FFF_FFFC), None, "below the SP base");
        assert_eq!(p.sem_of_addr(0x82_8080_1000), None, "TOP_SP 8 of 8");
        assert_eq!(p.sem_of_addr(0x82_8000_1400), Some((0, SemWindow::Set, 0)), "READ 255 + 4 is SET 0");
        assert_eq!(Arch::Sunda.params().sem_of_addr(0x82_8040_1000), None, "TOP_SP 4 of 4");
    }

    #[test]
    fn addresses_map_back_to_their_semaphore() {
        for a in Arch::ALL {
            let p = a.params();
            for topsp in [0, p.topsp_n - 1] {
                for w in [SemWindow::Read, SemWindow::Set, SemWindow::Inc, SemWindow::Dec] {
                    for idx in [0, 1, 87, 255] {
                        let addr = p.sem_addr(topsp, w, idx).unwrap_or_default();
                        assert_eq!(p.sem_of_addr(addr), Some((topsp, w, idx)));
                    }
                }
            }
            assert_eq!(p.sem_of_addr(p.ctrl_spad_addr(0)), None);
        }
    }
}
