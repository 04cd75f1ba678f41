//! The chain model's custom delaying explorer (paper §4: failures after
//! initialisation), written only against the public [`Explorer`] trait.

use mcheck_checker::cache::fingerprint;
use mcheck_checker::explorers::ActorQueue;
use mcheck_checker::{ActorId, ActorInfo, Event, Explorer};
use serde::{Deserialize, Serialize};

/// Round robin over all machines with a chain-specific initial order.
///
/// * `init`: the actors ranked by kind, servers first, then clients,
///   timers, other kinds, the master, and the fault injector last (ties by
///   id), so that without delays the chain serves the first update before
///   anything fails.
/// * `step`: the first [`Event::Custom`] with tag `"stable"` moves the
///   fault injector and then the master to the front (injector first), so
///   that failures and their repair happen right after initialisation;
///   later ones change nothing. A created actor joins at its kind's place
///   (at the end, or at the front for an injector or master once stable);
///   a halted one leaves.
/// * `next`: the first enabled actor of the order; `delay` moves it to the
///   end, as round robin does.
///
/// Sound: `next` and `delay` are those of [`ActorQueue`], and a delay keeps
/// the relative order of every other actor, so k delays offer each of k
/// enabled actors once and then repeat.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ChainExplorer {
    queue: ActorQueue,
    /// Kinds 'i'njector and 'm'aster, by id, for reordering on stability.
    late: Vec<(ActorId, bool)>,
    stable: bool,
}

/// Rank of a kind in the initial order (lower first).
fn rank(kind: &str) -> u8 {
    match kind {
        "server" => 0,
        "client" => 1,
        "timer" => 2,
        "master" => 4,
        "injector" => 5,
        _ => 3,
    }
}

impl ChainExplorer {
    /// A fresh explorer (call [`Explorer::init`] before use).
    pub fn new() -> Self {
        Self::default()
    }

    /// The current order, first preferred first.
    pub fn order(&self) -> Vec<ActorId> {
        self.queue.to_vec()
    }

    /// Whether the model has signalled stability.
    pub fn is_stable(&self) -> bool {
        self.stable
    }

    fn promote(&mut self) {
        // Masters then injectors pushed to the front: injectors end first.
        for injector in [false, true] {
            for &(id, is_inj) in &self.late {
                if is_inj == injector {
                    self.queue.push_front(id);
                }
            }
        }
    }
}

impl Explorer for ChainExplorer {
    fn name(&self) -> &str {
        "chain-custom"
    }

    // Deterministic: stratified sampling runs its zero-delay execution once.
    fn is_randomized(&self) -> bool {
        false
    }

    fn init(&mut self, actors: &[ActorInfo]) {
        self.queue = ActorQueue::new();
        self.late.clear();
        self.stable = false;
        let mut sorted: Vec<&ActorInfo> = actors.iter().collect();
        sorted.sort_by_key(|a| (rank(a.kind), a.id));
        for a in sorted {
            self.queue.push_back(a.id);
            if matches!(a.kind, "master" | "injector") {
                self.late.push((a.id, a.kind == "injector"));
            }
        }
    }

    #[inline]
    fn next(&self, enabled: &[ActorId]) -> ActorId {
        self.queue.next(enabled)
    }

    fn step(&mut self, events: &[Event]) {
        for e in events {
            match e {
                Event::Created(info) => {
                    let late = matches!(info.kind, "master" | "injector");
                    if late {
                        self.late.push((info.id, info.kind == "injector"));
                    }
                    if late && self.stable {
                        self.queue.push_front(info.id);
                    } else {
                        self.queue.push_back(info.id);
                    }
                }
                Event::Halted(id) => {
                    self.queue.remove(*id);
                    self.late.retain(|(a, _)| a != id);
                }
                Event::Custom { tag: "stable", .. } if !self.stable => {
                    self.stable = true;
                    self.promote();
                }
                Event::Sent { .. } | Event::Custom { .. } => {}
            }
        }
    }

    fn delay(&mut self, enabled: &[ActorId]) {
        self.queue.delay_first_enabled(enabled);
    }

    fn state_hash(&self) -> Option<u64> {
        Some(fingerprint(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcheck_checker::explorer::check_contract;

    fn info(id: u32, kind: &'static str) -> ActorInfo {
        ActorInfo {
            id: ActorId(id),
            kind,
            name: format!("{kind}{id}"),
        }
    }

    fn ids(v: &[u32]) -> Vec<ActorId> {
        v.iter().map(|&i| ActorId(i)).collect()
    }

    #[test]
    fn keeps_the_soundness_contract() {
        check_contract(|_| ChainExplorer::new(), 7, 300).unwrap();
        check_contract(|_| ChainExplorer::new(), 8, 300).unwrap();
    }

    #[test]
    fn servers_first_then_master_and_injector_after_stable() {
        let actors = [
            info(0, "server"),
            info(1, "server"),
            info(2, "master"),
            info(3, "timer"),
            info(4, "client"),
            info(5, "injector"),
        ];
        let mut e = ChainExplorer::new();
        e.init(&actors);
        assert_eq!(e.order(), &ids(&[0, 1, 4, 3, 2, 5])[..]);
        let all = ids(&[0, 1, 2, 3, 4, 5]);
        assert_eq!(e.next(&all), ActorId(0));
        e.delay(&all);
        assert_eq!(e.order(), &ids(&[1, 4, 3, 2, 5, 0])[..]);
        // Unrelated callbacks change nothing.
        e.step(&[Event::Custom {
            actor: ActorId(1),
            tag: "custom",
            value: 0,
        }]);
        assert!(!e.is_stable());
        e.step(&[Event::Custom {
            actor: ActorId(1),
            tag: "stable",
            value: 1,
        }]);
        assert!(e.is_stable());
        assert_eq!(e.order(), &ids(&[5, 2, 1, 4, 3, 0])[..]);
        // A second signal does not reorder again.
        e.delay(&all);
        e.step(&[Event::Custom {
            actor: ActorId(1),
            tag: "stable",
            value: 1,
        }]);
        assert_eq!(e.order(), &ids(&[2, 1, 4, 3, 0, 5])[..]);
        e.step(&[Event::Halted(ActorId(2)), Event::Created(info(6, "master"))]);
        assert_eq!(e.order(), &ids(&[6, 1, 4, 3, 0, 5])[..]);
    }
}
