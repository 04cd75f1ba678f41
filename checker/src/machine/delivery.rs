//! How the network delivers a message: FIFO, unordered, lossy, duplicating
//! (ARCHITECTURE.md, "The network").

/// How the network delivers a message (ARCHITECTURE.md, "The network").
///
/// A model says it per message with [`super::MachineModel::delivery`]. The
/// receiver's step then has one alternative per way the network can treat
/// each of its candidate messages: deliver it, drop it (when `lossy`), or
/// deliver it and keep it pending (a duplicate, while the message's budget
/// of `duplicates` is not used up).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Delivery {
    /// Any pending message of this kind may be handled next; `false`: FIFO
    /// per receiver (the oldest message the machine does not defer).
    pub unordered: bool,
    /// A pending message may be dropped instead of delivered.
    pub lossy: bool,
    /// How many times the network may deliver a message and keep it pending
    /// (a duplicate); 0: never. Bounded so that the state space stays finite.
    pub duplicates: u8,
}

impl Default for Delivery {
    fn default() -> Self {
        Delivery::FIFO
    }
}

/// What the network does with a candidate message in one alternative.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    /// Deliver it (it leaves the network).
    Deliver,
    /// Lose it.
    Drop,
    /// Deliver a copy and keep it pending (one more duplicate used).
    Duplicate,
}

impl Delivery {
    /// Per-receiver FIFO, nothing lost or duplicated (the default).
    pub const FIFO: Delivery = Delivery {
        unordered: false,
        lossy: false,
        duplicates: 0,
    };

    /// A real network: unordered, lossy, and each message duplicated at most
    /// `duplicates` times.
    pub const fn network(duplicates: u8) -> Delivery {
        Delivery {
            unordered: true,
            lossy: true,
            duplicates,
        }
    }

    /// How many alternatives a candidate message with this delivery has when
    /// it was duplicated `used` times already: deliver, drop if lossy,
    /// duplicate if `used < duplicates`.
    #[inline]
    pub fn alternatives(self, used: u8) -> u32 {
        1 + self.lossy as u32 + (used < self.duplicates) as u32
    }

    /// The action of alternative `alt` (below [`Delivery::alternatives`]),
    /// in the order deliver, drop, duplicate.
    #[inline]
    pub(crate) fn action(self, alt: u32) -> Action {
        match alt {
            0 => Action::Deliver,
            1 if self.lossy => Action::Drop,
            _ => Action::Duplicate,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alternatives_and_actions() {
        assert_eq!(Delivery::FIFO.alternatives(0), 1);
        assert_eq!(Delivery::network(0).alternatives(0), 2);
        assert_eq!(Delivery::network(2).alternatives(1), 3);
        assert_eq!(Delivery::network(2).alternatives(2), 2);
        let dup_only = Delivery {
            unordered: true,
            lossy: false,
            duplicates: 1,
        };
        assert_eq!(dup_only.alternatives(0), 2);
        assert_eq!(dup_only.action(1), Action::Duplicate);
        assert_eq!(Delivery::network(1).action(1), Action::Drop);
        assert_eq!(Delivery::network(1).action(2), Action::Duplicate);
        assert_eq!(Delivery::default(), Delivery::FIFO);
    }
}
