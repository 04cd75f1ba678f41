//! The packed state of the TwoPhase specification and its field layout.

use crate::twophase::{RmState, TmState};
use serde::{Deserialize, Serialize};

/// The RM state of a 2-bit field.
fn rm_from_bits(b: u64) -> RmState {
    match b & 3 {
        0 => RmState::Working,
        1 => RmState::Prepared,
        2 => RmState::Committed,
        _ => RmState::Aborted,
    }
}

/// One state of the specification, packed into a `u64` for `n` resource
/// managers (`n` is not stored; the program knows it). Layout, from bit 0:
/// `rmState` (2 bits per RM, RM 1 first: 0 working, 1 prepared,
/// 2 committed, 3 aborted), then `tmPrepared` (n bits), then the
/// `Prepared(r)` messages (n bits), then `tmState` (2 bits: 0 init,
/// 1 committed, 2 aborted), then the `Commit` and `Abort` message flags;
/// bits `ROUND_SHIFT`.. hold the number of the transaction (round, from
/// 0) when the program runs several one after the other.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, Serialize, Deserialize)]
pub struct PackedState(pub u64);

/// The field offsets of [`PackedState`] for a given number of RMs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Layout {
    pub(super) n: usize,
    /// Mask of `n` bits.
    pub(super) all: u64,
    /// Mask of the `rmState` fields (`2n` bits).
    pub(super) rm_fields: u64,
    pub(super) tm_prepared: u32,
    pub(super) msg_prepared: u32,
    pub(super) tm_state: u32,
    pub(super) msg_commit: u32,
    pub(super) msg_abort: u32,
}

impl Layout {
    pub(super) fn new(n: usize) -> Layout {
        let n32 = n as u32;
        Layout {
            n,
            all: (1u64 << n) - 1,
            rm_fields: (1u64 << (2 * n)) - 1,
            tm_prepared: 2 * n32,
            msg_prepared: 3 * n32,
            tm_state: 4 * n32,
            msg_commit: 4 * n32 + 2,
            msg_abort: 4 * n32 + 3,
        }
    }
}

/// The first bit of the round counter (6 bits, rounds 0 to 63).
pub(super) const ROUND_SHIFT: u32 = 58;

/// The most resource managers whose fields (`4n + 4` bits) leave the round
/// counter its bits: with more, the program runs one round.
pub const MAX_RMS_WITH_ROUNDS: usize = 13;

impl PackedState {
    /// The current round (transaction), from 0.
    pub(super) fn round(self) -> u64 {
        self.0 >> ROUND_SHIFT
    }

    /// Start the next round: the initial state of the specification, with
    /// the round counter one higher.
    pub(super) fn next_round(&mut self) {
        self.0 = (self.round() + 1) << ROUND_SHIFT;
    }

    pub(super) fn rm(self, i: usize) -> RmState {
        rm_from_bits(self.0 >> (2 * i))
    }

    pub(super) fn set_rm(&mut self, i: usize, st: RmState) {
        let bits = match st {
            RmState::Working => 0,
            RmState::Prepared => 1,
            RmState::Committed => 2,
            RmState::Aborted => 3,
        };
        self.0 = (self.0 & !(3u64 << (2 * i))) | (bits << (2 * i));
    }

    pub(super) fn tm(self, l: &Layout) -> TmState {
        match (self.0 >> l.tm_state) & 3 {
            0 => TmState::Init,
            1 => TmState::Committed,
            _ => TmState::Aborted,
        }
    }

    pub(super) fn set_tm(&mut self, l: &Layout, st: TmState) {
        let bits = match st {
            TmState::Init => 0,
            TmState::Committed => 1,
            TmState::Aborted => 2,
        };
        self.0 = (self.0 & !(3u64 << l.tm_state)) | (bits << l.tm_state);
    }

    pub(super) fn tm_prepared(self, l: &Layout) -> u64 {
        (self.0 >> l.tm_prepared) & l.all
    }

    pub(super) fn msg_prepared(self, l: &Layout) -> u64 {
        (self.0 >> l.msg_prepared) & l.all
    }

    pub(super) fn flag(self, bit: u32) -> bool {
        (self.0 >> bit) & 1 == 1
    }
}
