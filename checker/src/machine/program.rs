//! A [`MachineModel`] as a [`Program`].

use super::ctx::{Ctx, Setup};
use super::delivery::Action;
use super::world::{MachineId, Pending, Slot, World};
use super::{MachineModel, Receive};
use crate::coverage::Hit;
use crate::program::{
    ActorId, ActorInfo, ActorView, Covers, Enabled, Event, Hot, Monitors, Program, StateView, StepTrace, Symmetry,
    SymmetryMismatch, Traces, Violation, ViolationKind,
};
use smallvec::SmallVec;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// A machine model as a program: the actors are the machines, a machine is
/// enabled when it has a message it does not defer (one alternative per way
/// the network can deliver, drop or duplicate each candidate message; one in
/// FIFO models), or when it is suspended at a choice among n (then it is the
/// only enabled actor, with n alternatives).
#[derive(Clone, Debug, Default)]
pub struct Machines<M>(pub M);

thread_local! {
    /// True while model code runs under `catch_unwind` on this thread.
    static GUARDED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Run model code, catching a panic (reported as a violation of kind
/// `panic` by the caller).
pub(crate) fn guarded<R>(f: impl FnOnce() -> R) -> Result<R, Box<dyn std::any::Any + Send>> {
    let was = GUARDED.with(|g| g.replace(true));
    let r = catch_unwind(AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(was));
    r
}

/// Install a panic hook that stays silent for panics inside model code
/// (they become `panic` violations with their message) and reports every
/// other panic (a bug in mcheck) as the previous hook did. Call once, from
/// a binary's `main`.
pub fn install_quiet_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !GUARDED.with(|g| g.get()) {
            previous(info);
        }
    }));
}

/// The message of a caught panic.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_string()
    }
}

impl<M: MachineModel> Machines<M> {
    /// The model.
    pub fn model(&self) -> &M {
        &self.0
    }

    fn name_of(&self, s: &World<M>, id: MachineId) -> String {
        match s.slots.get(id.0 as usize) {
            Some(slot) => self.0.name(id, &slot.machine),
            None => format!("machine{}", id.0),
        }
    }

    fn violation(&self, kind: ViolationKind, s: &World<M>, id: MachineId, message: String) -> Violation {
        Violation::new(kind, self.name_of(s, id), message)
    }

    /// The oldest FIFO message of `id` that it does not defer: index in the
    /// buffer and what it does with it.
    pub(crate) fn dequeuable(&self, s: &World<M>, id: MachineId) -> Option<(usize, Receive)> {
        let (lo, hi) = s.range(id);
        let machine = &s.slots[id.0 as usize].machine;
        (lo..hi).find_map(|i| match self.0.receive(machine, &s.queue[i].1) {
            Receive::Defer => None,
            r => Some((i, r)),
        })
    }

    fn step(
        &self,
        s: &mut World<M>,
        actor: ActorId,
        alt: u32,
        events: &mut Vec<Event>,
        mut trace: Option<&mut StepTrace>,
    ) -> Result<(), Violation> {
        let id = MachineId(actor.0);
        if id.0 as usize >= s.slots.len() {
            return Err(Violation::invariant(format!(
                "mcheck bug: step of unknown machine {id}"
            )));
        }
        let (msg, prefix) = match s.pending.take() {
            Some(p) if p.machine == id => {
                let mut prefix = p.choices;
                prefix.push(alt);
                (p.msg, prefix)
            }
            Some(p) => {
                let message = format!("mcheck bug: {id} stepped while {} waits for a choice", p.machine);
                return Err(self.violation(ViolationKind::Assertion, s, id, message));
            }
            None => {
                let Some((candidate, action)) = self.pick(s, id, alt) else {
                    let message = format!("mcheck bug: stepped with no message to handle (alternative {alt})");
                    return Err(self.violation(ViolationKind::Assertion, s, id, message));
                };
                let msg = self.take(s, id, candidate, action);
                if let Some(t) = trace.as_deref_mut() {
                    t.handled = Some(format!("{msg:?}"));
                    t.state_before = self.0.state_name(&s.slots[id.0 as usize].machine);
                    t.notes.extend(self.network_notes(s, id, candidate, action));
                }
                if action == Action::Drop {
                    if let Some(t) = trace.as_deref_mut() {
                        t.state_after = t.state_before.clone();
                    }
                    return self.check_invariant(s, id);
                }
                let receive = candidate.receive;
                match receive {
                    Receive::Handle => (msg, SmallVec::new()),
                    Receive::Ignore => {
                        if let Some(t) = trace.as_deref_mut() {
                            t.notes.push("ignored".into());
                            t.state_after = t.state_before.clone();
                        }
                        return self.check_invariant(s, id);
                    }
                    Receive::Defer | Receive::Unhandled => {
                        let state = self
                            .0
                            .state_name(&s.slots[id.0 as usize].machine)
                            .map(|n| format!(" in state {n}"))
                            .unwrap_or_default();
                        let message = format!("{msg:?} is neither handled, deferred nor ignored{state}");
                        return Err(self.violation(ViolationKind::UnhandledEvent, s, id, message));
                    }
                }
            }
        };
        if let Some(t) = trace.as_deref_mut()
            && t.handled.is_none()
        {
            t.handled = Some(format!("{msg:?}"));
            t.state_before = self.0.state_name(&s.slots[id.0 as usize].machine);
        }
        let mut machine = s.slots[id.0 as usize].machine.clone();
        let mut ctx = Ctx::new(id, s.slots.len() as u32, &prefix, trace.is_some());
        if let Err(payload) = guarded(|| self.0.handle(&mut machine, &msg, &mut ctx)) {
            let message = panic_message(payload.as_ref());
            return Err(self.violation(ViolationKind::Panic, s, id, message));
        }
        if let Some(t) = trace.as_deref_mut() {
            t.choices.append(&mut ctx.labels);
        }
        if let Some(n) = ctx.suspended {
            if let Some(t) = trace.as_deref_mut() {
                t.notes.push(format!("waits for a choice among {n}"));
                t.state_after = t.state_before.clone();
            }
            s.pending = Some(Pending {
                machine: id,
                msg,
                choices: prefix,
                n,
            });
            return Ok(());
        }
        if let Some(message) = ctx.failure {
            return Err(self.violation(ViolationKind::Assertion, s, id, message));
        }
        self.commit(s, id, machine, ctx, events, trace)
    }

    fn commit(
        &self,
        s: &mut World<M>,
        id: MachineId,
        machine: M::Machine,
        ctx: Ctx<'_, M>,
        events: &mut Vec<Event>,
        mut trace: Option<&mut StepTrace>,
    ) -> Result<(), Violation> {
        let actor = ActorId(id.0);
        s.slots[id.0 as usize].machine = machine;
        self.purge_stale(s, id);
        for m in ctx.created {
            let new = MachineId(s.slots.len() as u32);
            let info = ActorInfo {
                id: ActorId(new.0),
                kind: self.0.kind(&m),
                name: self.0.name(new, &m),
            };
            if let Some(t) = trace.as_deref_mut() {
                t.created.push(info.name.clone());
            }
            s.slots.push(Slot {
                machine: m,
                halted: false,
            });
            events.push(Event::Created(info));
        }
        for (to, msg) in ctx.sent {
            let Some(slot) = s.slots.get(to.0 as usize) else {
                let message = format!("sent {msg:?} to {to}, which does not exist");
                return Err(self.violation(ViolationKind::Assertion, s, id, message));
            };
            let halted = slot.halted;
            if let Some(t) = trace.as_deref_mut() {
                let text = if halted {
                    format!("{msg:?} (dropped: receiver halted)")
                } else {
                    format!("{msg:?}")
                };
                t.sent.push((self.name_of(s, to), text));
            }
            if !halted && self.post(s, to, msg) {
                events.push(Event::Sent {
                    from: actor,
                    to: ActorId(to.0),
                });
            }
        }
        for a in &ctx.announced {
            if let Some(t) = trace.as_deref_mut() {
                t.announced.push(format!("{a:?}"));
            }
            let monitor = &mut s.monitor;
            match guarded(|| self.0.observe(monitor, a)) {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(Violation::new(e.kind, e.monitor, e.message)),
                Err(payload) => {
                    let message = format!("monitor panicked: {}", panic_message(payload.as_ref()));
                    return Err(self.violation(ViolationKind::Panic, s, id, message));
                }
            }
        }
        for (tag, value) in ctx.signals {
            events.push(Event::Custom { actor, tag, value });
        }
        if ctx.halt {
            s.slots[id.0 as usize].halted = true;
            s.clear_inbox(id);
            events.push(Event::Halted(actor));
        }
        if let Some(t) = trace {
            t.halted = ctx.halt;
            t.state_after = self.0.state_name(&s.slots[id.0 as usize].machine);
        }
        self.check_invariant(s, id)
    }

    fn check_invariant(&self, s: &World<M>, id: MachineId) -> Result<(), Violation> {
        match guarded(|| self.0.invariant(s)) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(Violation::new(e.kind, e.monitor, e.message)),
            Err(payload) => {
                let message = format!("invariant panicked: {}", panic_message(payload.as_ref()));
                Err(self.violation(ViolationKind::Panic, s, id, message))
            }
        }
    }
}

impl<M: MachineModel> Program for Machines<M> {
    type State = World<M>;

    fn initial(&self) -> World<M> {
        let mut setup = Setup::<M> {
            machines: Vec::new(),
            sent: Vec::new(),
            monitor: M::Monitor::default(),
        };
        self.0.setup(&mut setup);
        let mut w = World {
            slots: setup
                .machines
                .into_iter()
                .map(|machine| Slot { machine, halted: false })
                .collect(),
            queue: Vec::new(),
            monitor: setup.monitor,
            pending: None,
            net: None,
        };
        for (to, msg) in setup.sent {
            if (to.0 as usize) < w.slots.len() {
                self.post(&mut w, to, msg);
            }
        }
        w
    }

    fn actors(&self, s: &World<M>) -> Vec<ActorInfo> {
        s.live()
            .map(|(id, m)| ActorInfo {
                id: ActorId(id.0),
                kind: self.0.kind(m),
                name: self.0.name(id, m),
            })
            .collect()
    }

    fn enabled(&self, s: &World<M>, out: &mut Vec<Enabled>) {
        if let Some(p) = &s.pending {
            out.push(Enabled {
                actor: ActorId(p.machine.0),
                alternatives: p.n,
            });
            return;
        }
        if s.live_net().is_some() {
            for id in 0..s.slots.len() as u32 {
                if s.slots[id as usize].halted {
                    continue;
                }
                let alternatives = self.alternatives(s, MachineId(id));
                if alternatives > 0 {
                    out.push(Enabled {
                        actor: ActorId(id),
                        alternatives,
                    });
                }
            }
            return;
        }
        // Only FIFO messages, none duplicated yet: one pass over the buffer.
        let mut i = 0;
        while i < s.queue.len() {
            let to = s.queue[i].0;
            let machine = &s.slots[to.0 as usize].machine;
            let mut end = i;
            let mut first = None;
            while end < s.queue.len() && s.queue[end].0 == to {
                if first.is_none() && self.0.receive(machine, &s.queue[end].1) != Receive::Defer {
                    first = Some(end);
                }
                end += 1;
            }
            if let Some(f) = first {
                out.push(Enabled {
                    actor: ActorId(to.0),
                    alternatives: self.0.delivery(&s.queue[f].1).alternatives(0),
                });
            }
            i = end;
        }
    }

    fn execute(&self, s: &mut World<M>, actor: ActorId, alt: u32, events: &mut Vec<Event>) -> Result<(), Violation> {
        self.step(s, actor, alt, events, None)
    }

    fn deadlock(&self, s: &World<M>) -> Option<Violation> {
        for (id, m) in s.live() {
            let (inbox, unordered) = (s.inbox(id), s.unordered_to(id));
            if !inbox.is_empty() || !unordered.is_empty() {
                let fifo = inbox.iter().map(|(_, m)| format!("{m:?}"));
                let msgs: Vec<String> = fifo.chain(unordered.iter().map(|f| format!("{:?}", f.msg()))).collect();
                let message = format!("blocked: its queue holds only deferred messages [{}]", msgs.join(", "));
                return Some(self.violation(ViolationKind::Deadlock, s, id, message));
            }
            if self.0.waiting(m) {
                let state = self.0.state_name(m).unwrap_or_else(|| format!("{m:?}"));
                let message = format!("waits in {state} but nothing is enabled");
                return Some(self.violation(ViolationKind::Deadlock, s, id, message));
            }
        }
        None
    }

    fn liveness(&self) -> Option<&dyn Monitors<World<M>>> {
        self.0.has_liveness().then_some(self as &dyn Monitors<World<M>>)
    }

    /// Always offered: the canonical fingerprint is `None` at every state
    /// of a model that declares no group of two machines or more, and the
    /// searches ask for the symmetry at every state they key, so deciding
    /// here would build the model's groups once more per state.
    fn symmetry(&self) -> Option<&dyn Symmetry<World<M>>> {
        Some(self)
    }

    fn coverage(&self) -> Option<&dyn Covers<World<M>>> {
        Some(self)
    }

    fn traces(&self) -> Option<&dyn Traces<World<M>>> {
        Some(self)
    }
}

/// The machines' names, handlers and queues.
impl<M: MachineModel> Traces<World<M>> for Machines<M> {
    fn actor_name(&self, s: &World<M>, actor: ActorId) -> String {
        self.name_of(s, MachineId(actor.0))
    }

    fn execute_traced(
        &self,
        s: &mut World<M>,
        actor: ActorId,
        alt: u32,
        events: &mut Vec<Event>,
        trace: &mut StepTrace,
    ) -> Result<(), Violation> {
        self.step(s, actor, alt, events, Some(trace))
    }

    fn view(&self, s: &World<M>) -> Option<StateView> {
        let pending = s.pending.as_ref().map(|p| p.machine);
        let actors = (0..s.slots.len() as u32)
            .map(MachineId)
            .map(|id| {
                let slot = &s.slots[id.0 as usize];
                let unordered = s.unordered_to(id).iter();
                ActorView {
                    name: self.0.name(id, &slot.machine),
                    state: self.0.show(&slot.machine),
                    inbox: s.inbox(id).iter().map(|(_, m)| format!("{m:?}")).collect(),
                    unordered: unordered
                        .flat_map(|f| std::iter::repeat_n(format!("{:?}", f.msg()), f.count() as usize))
                        .collect(),
                    halted: slot.halted,
                    choosing: pending == Some(id),
                }
            })
            .collect();
        Some(StateView {
            actors,
            monitors: format!("{:?}", s.monitor),
        })
    }
}

/// The model's symmetry ([`MachineModel::symmetry`]).
impl<M: MachineModel> Symmetry<World<M>> for Machines<M> {
    fn canonical_fingerprint(&self, s: &World<M>) -> Option<u64> {
        super::symmetry::canonical_fingerprint(&self.0, &self.0.symmetry(), s)
    }

    fn check(&self, s: &World<M>, seed: u64) -> Result<(), SymmetryMismatch> {
        self.symmetry_check(s, seed)
    }

    fn groups(&self) -> Vec<String> {
        let s0 = self.initial();
        self.0
            .symmetry()
            .iter()
            .filter(|g| g.len() > 1)
            .map(|g| {
                let names: Vec<String> = g.iter().map(|&id| self.name_of(&s0, id)).collect();
                names.join(", ")
            })
            .collect()
    }
}

/// The machines' handlers and monitors, and the model's reachability
/// properties ([`MachineModel::sometimes`]).
impl<M: MachineModel> Covers<World<M>> for Machines<M> {
    fn cover_step(&self, s: &World<M>, actor: ActorId, alt: u32, out: &mut Vec<Hit>) {
        self.step_hits(s, actor, alt, out)
    }

    fn cover_state(&self, s: &World<M>, out: &mut Vec<Hit>) {
        self.state_hits(s, out)
    }

    fn coverage_space(&self) -> Vec<Hit> {
        self.declared_hits()
    }

    fn sometimes(&self) -> Vec<&'static str> {
        self.0.sometimes()
    }

    fn holds(&self, s: &World<M>, property: usize) -> bool {
        self.0.holds(s, property)
    }
}

/// The model's liveness monitors ([`MachineModel::hot`] and
/// [`MachineModel::owed`]). A panic in the model's hook is a bug of the
/// model; it counts as cold here, and the step that reached the state
/// would have reported it.
impl<M: MachineModel> Monitors<World<M>> for Machines<M> {
    #[inline]
    fn hot(&self, s: &World<M>) -> bool {
        guarded(|| self.0.hot(s)).unwrap_or(false)
    }

    fn owed(&self, s: &World<M>) -> Option<Hot> {
        let owed = guarded(|| self.0.owed(s)).ok().flatten()?;
        Some(Hot {
            monitor: owed.monitor.to_string(),
            owed: owed.message,
        })
    }
}
