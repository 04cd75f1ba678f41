//! Checking a machine model's symmetry declaration at a state
//! (ARCHITECTURE.md, "Symmetry": a mistaken declaration): a random
//! permutation π of one declared group is applied to the world with
//! [`MachineModel::rename`], and everything the contract of
//! [`MachineModel::symmetry`] says is invariant is compared between s and
//! π(s). The search runs it at sampled states (`crate::orbits`).

use super::MachineModel;
use super::program::{Machines, guarded};
use super::symmetry::{canonical, renamed};
use super::world::{MachineId, World};
use crate::orbits::SymmetryMismatch;
use crate::program::ProgramExt;
use crate::program::{ActorId, Enabled, Monitors, Program};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// What a step gives, in terms that a permutation keeps: the violation's
/// kind, or the successor's canonical fingerprint (when it is exact, else
/// `None`).
type Outcomes = Vec<Result<Option<u64>, &'static str>>;

impl<M: MachineModel> Machines<M> {
    /// Check the declaration at `s` against the permutation drawn from
    /// `seed` (see the module docs); `Ok` when the model declares no group
    /// of two machines present in `s`.
    pub(crate) fn symmetry_check(&self, s: &World<M>, seed: u64) -> Result<(), SymmetryMismatch> {
        let model = &self.0;
        let n = s.slots.len();
        let groups: Vec<Vec<MachineId>> = model.symmetry();
        let present: Vec<Vec<MachineId>> = (groups.iter())
            .map(|g| g.iter().copied().filter(|id| (id.0 as usize) < n).collect::<Vec<_>>())
            .filter(|g| g.len() > 1)
            .collect();
        if present.is_empty() {
            return Ok(());
        }
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let members = &present[rng.random_range(0..present.len())];
        // A random permutation of the group that moves at least one machine.
        let mut image = members.clone();
        while image == *members {
            for i in (1..image.len()).rev() {
                image.swap(i, rng.random_range(0..=i));
            }
        }
        let mut map: Vec<u32> = (0..n as u32).collect();
        for (from, to) in members.iter().zip(&image) {
            map[from.0 as usize] = to.0;
        }
        let pi = |id: MachineId| MachineId(map[id.0 as usize]);
        let t = renamed(model, s, &map);
        let moved: Vec<String> = (members.iter().zip(&image))
            .filter(|(a, b)| a != b)
            .map(|(&a, &b)| {
                format!(
                    "{} -> {}",
                    self.actor_name(s, ActorId(a.0)),
                    self.actor_name(s, ActorId(b.0))
                )
            })
            .collect();
        let names: Vec<String> = members.iter().map(|&id| self.actor_name(s, ActorId(id.0))).collect();
        let mismatch = |what: String| SymmetryMismatch {
            group: names.join(", "),
            permutation: moved.join(", "),
            what,
        };
        let same = |what: &str, a: bool, b: bool| match a == b {
            true => Ok(()),
            false => Err(mismatch(format!("{what}: {a} at the state, {b} at its image"))),
        };
        let verdict = |w: &World<M>| guarded(|| model.invariant(w).is_ok()).unwrap_or(false);
        same("the invariant holds", verdict(s), verdict(&t))?;
        same("a monitor is hot", Monitors::hot(self, s), Monitors::hot(self, &t))?;
        same(
            "the state is a deadlock",
            self.deadlock(s).is_some(),
            self.deadlock(&t).is_some(),
        )?;
        self.same_messages(s, &t, &pi).map_err(&mismatch)?;
        let (cs, ct) = (canonical(model, &groups, s), canonical(model, &groups, &t));
        let exact = matches!((cs, ct), (Some((_, true)), Some((_, true))));
        if exact && cs.map(|c| c.0) != ct.map(|c| c.0) {
            return Err(mismatch(
                "the canonical fingerprint: the image gets another value than the state (MachineModel::rename misses an id?)"
                    .into(),
            ));
        }
        let (mut es, mut et) = (Vec::new(), Vec::new());
        self.enabled(s, &mut es);
        self.enabled(&t, &mut et);
        let mut renamed_es: Vec<Enabled> = (es.iter())
            .map(|e| Enabled {
                actor: ActorId(pi(MachineId(e.actor.0)).0),
                alternatives: e.alternatives,
            })
            .collect();
        renamed_es.sort_by_key(|e| e.actor.0);
        if renamed_es != et {
            return Err(mismatch(format!(
                "the enabled machines: {} at the state renamed, {} at its image",
                self.enabled_text(s, &renamed_es),
                self.enabled_text(&t, &et)
            )));
        }
        for e in &es {
            let a = self.outcomes(&groups, s, e.actor, e.alternatives, exact);
            let image = ActorId(pi(MachineId(e.actor.0)).0);
            let b = self.outcomes(&groups, &t, image, e.alternatives, exact);
            if a != b {
                return Err(mismatch(format!(
                    "the steps of {} and of {} at the image: {} and {} (a monitor's or the invariant's verdict, or the successor's orbit)",
                    self.actor_name(s, e.actor),
                    self.actor_name(&t, image),
                    outcomes_text(&a),
                    outcomes_text(&b)
                )));
            }
        }
        Ok(())
    }

    /// `receive` and `delivery` of every queued message and every message
    /// in flight agree with those of its image.
    fn same_messages(&self, s: &World<M>, t: &World<M>, pi: &dyn Fn(MachineId) -> MachineId) -> Result<(), String> {
        let model = &self.0;
        let msgs = (s.queue.iter().map(|(to, m)| (*to, m))).chain(
            s.live_net()
                .into_iter()
                .flat_map(|n| n.flights.iter().map(|x| (x.to, &x.msg))),
        );
        for (to, m) in msgs {
            let mut image = m.clone();
            model.rename(super::Renamed::Msg(&mut image), pi);
            let (a, b) = (&s.slots[to.0 as usize].machine, &t.slots[pi(to).0 as usize].machine);
            let (ra, rb) = (model.receive(a, m), model.receive(b, &image));
            if ra != rb {
                return Err(format!(
                    "receive of {m:?} by {}: {ra:?} at the state, {rb:?} for {image:?} at its image",
                    self.actor_name(s, ActorId(to.0))
                ));
            }
            let (da, db) = (model.delivery(m), model.delivery(&image));
            if da != db {
                return Err(format!(
                    "delivery of {m:?}: {da:?} at the state, {db:?} for {image:?} at its image"
                ));
            }
        }
        Ok(())
    }

    /// The outcome of each alternative of `actor` at `s`, sorted (the
    /// network's alternatives may come in another order at an image).
    fn outcomes(&self, groups: &[Vec<MachineId>], s: &World<M>, actor: ActorId, alts: u32, exact: bool) -> Outcomes {
        let mut out: Outcomes = (0..alts)
            .map(|alt| {
                let mut c = s.clone();
                match self.execute(&mut c, actor, alt, &mut Vec::new()) {
                    Err(v) => Err(v.kind.as_str()),
                    // Tie structure is the same on an orbit, so both
                    // sides agree on whether a successor's value is exact.
                    Ok(()) => Ok(exact
                        .then(|| canonical(&self.0, groups, &c).filter(|x| x.1).map(|x| x.0))
                        .flatten()),
                }
            })
            .collect();
        out.sort_unstable();
        out
    }

    fn enabled_text(&self, s: &World<M>, en: &[Enabled]) -> String {
        let names: Vec<String> = en.iter().map(|e| self.actor_name(s, e.actor)).collect();
        format!("[{}]", names.join(", "))
    }
}

fn outcomes_text(o: &Outcomes) -> String {
    let parts: Vec<String> = (o.iter())
        .map(|r| match r {
            Err(kind) => format!("violation {kind}"),
            Ok(_) => "ok".to_string(),
        })
        .collect();
    format!("[{}]", parts.join(", "))
}
