//! Coverage hooks of the machine runtime (ARCHITECTURE.md,
//! "Coverage and reachability"): what a step exercises, by machine kind and message
//! kind, before it executes.

use super::delivery::Action;
use super::network::Source;
use super::program::Machines;
use super::world::{MachineId, World};
use super::{MachineModel, Receive};
use crate::coverage::{Hit, How};
use crate::program::ActorId;
use hashbrown::HashMap;
use std::cell::Cell;
use std::fmt::Debug;
use std::sync::{OnceLock, RwLock};

/// Names of message kinds by (type, enum variant), computed once.
type KindNames = RwLock<HashMap<(&'static str, u64), &'static str, ahash::RandomState>>;

/// Fixed keys: the maps and hashes here never depend on the run.
fn hasher() -> ahash::RandomState {
    ahash::RandomState::with_seeds(1, 2, 3, 4)
}

/// The kind of `msg`: its `Debug` text up to the first `(`, `{` or space
/// (`Prepare(tx=1)` is `Prepare`), computed once per type and enum variant
/// and kept for the life of the process. Each thread remembers the last
/// few kinds it looked up, so a step reads no lock (ARCHITECTURE.md,
/// "Coverage and reachability").
pub(crate) fn debug_kind<T: Debug>(msg: &T) -> &'static str {
    static NAMES: OnceLock<KindNames> = OnceLock::new();
    thread_local! {
        static RECENT: Cell<[(usize, u64, &'static str); RECENT_KINDS]> =
            const { Cell::new([(0, 0, ""); RECENT_KINDS]) };
    }
    let variant = hasher().hash_one(std::mem::discriminant(msg));
    // The type by its name's address: the same type may have two (one per
    // codegen unit), which only costs a second look-up.
    let ty = std::any::type_name::<T>();
    let key = (ty.as_ptr() as usize, variant);
    let recent = RECENT.get();
    if let Some(&(_, _, name)) = recent.iter().find(|r| (r.0, r.1) == key) {
        return name;
    }
    let names = NAMES.get_or_init(|| RwLock::new(HashMap::with_hasher(hasher())));
    let cached = names
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(&(ty, variant))
        .copied();
    let name = match cached {
        Some(name) => name,
        None => {
            let text = format!("{msg:?}");
            let end = text.find(['(', '{', ' ']).unwrap_or(text.len());
            let mut names = names.write().unwrap_or_else(|e| e.into_inner());
            *names
                .entry((ty, variant))
                .or_insert_with(|| Box::leak(text[..end].to_string().into_boxed_str()))
        }
    };
    let mut next = recent;
    next.rotate_right(1);
    next[0] = (key.0, key.1, name);
    RECENT.set(next);
    name
}

/// How many kinds each thread remembers ([`debug_kind`]).
const RECENT_KINDS: usize = 8;

impl<M: MachineModel> Machines<M> {
    /// What the step of `actor` with `alt` at `s` exercises: the message
    /// it takes (handled, duplicated, ignored, dropped or unhandled), the
    /// FIFO messages it passes over because it defers them, or the
    /// handler it continues after a choice.
    pub(crate) fn step_hits(&self, s: &World<M>, actor: ActorId, alt: u32, out: &mut Vec<Hit>) {
        let id = MachineId(actor.0);
        let Some(slot) = s.slots.get(id.0 as usize) else {
            return;
        };
        let kind = self.0.kind(&slot.machine);
        if let Some(p) = &s.pending {
            if p.machine == id {
                out.push(Hit::new(kind, self.0.message_kind(&p.msg), How::Chose));
            }
            return;
        }
        let Some((c, action)) = self.pick(s, id, alt) else {
            return;
        };
        let msg = match c.source {
            Source::Fifo(i) => {
                let (lo, _) = s.range(id);
                for (_, m) in &s.queue[lo..i] {
                    out.push(Hit::new(kind, self.0.message_kind(m), How::Deferred));
                }
                &s.queue[i].1
            }
            Source::Unordered(j) => match s.net.as_deref() {
                Some(net) => &net.flights[j].msg,
                None => return,
            },
        };
        let item = self.0.message_kind(msg);
        let how = match (action, c.receive) {
            (Action::Drop, _) => How::Dropped,
            (_, Receive::Ignore) => How::Ignored,
            (_, Receive::Defer | Receive::Unhandled) => How::Unhandled,
            (_, Receive::Handle) => How::Handled,
        };
        out.push(Hit::new(kind, item, how));
        if action == Action::Duplicate {
            out.push(Hit::new(kind, item, How::Duplicated));
        }
    }

    /// The monitors' states in `s`.
    pub(crate) fn state_hits(&self, s: &World<M>, out: &mut Vec<Hit>) {
        for (monitor, state) in self.0.monitor_states(&s.monitor) {
            out.push(Hit::new(monitor, state, How::Visited));
        }
    }

    /// The model's declared handlers.
    pub(crate) fn declared_hits(&self) -> Vec<Hit> {
        self.0
            .handlers()
            .into_iter()
            .map(|(kind, msg)| Hit::new(kind, msg, How::Handled))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::debug_kind;

    #[derive(Debug)]
    #[allow(dead_code)]
    enum Msg {
        Prepare(u32),
        Vote { yes: bool },
        Done,
    }

    #[test]
    fn kinds_are_the_variant_names() {
        assert_eq!(debug_kind(&Msg::Prepare(3)), "Prepare");
        assert_eq!(debug_kind(&Msg::Prepare(4)), "Prepare");
        assert_eq!(debug_kind(&Msg::Vote { yes: true }), "Vote");
        assert_eq!(debug_kind(&Msg::Done), "Done");
    }
}
