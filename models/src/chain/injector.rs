//! The fault injector: crashes servers, one choice at a time.

use super::{Cfg, Msg};
use mcheck_checker::machine::{Ctx, MachineId};
use serde::{Deserialize, Serialize};

/// The fault injector: `failures` times, it chooses a server to crash, or
/// none.
#[derive(Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Injector {
    /// Attempts left.
    pub left: u8,
    /// Servers it has crashed.
    pub crashed: Vec<MachineId>,
}

/// Not derived: `clone_from` keeps the vector's memory ([`super::Machine`]).
impl Clone for Injector {
    fn clone(&self) -> Self {
        Injector {
            left: self.left,
            crashed: self.crashed.clone(),
        }
    }

    fn clone_from(&mut self, source: &Self) {
        let Injector { left, crashed } = source;
        self.left = *left;
        self.crashed.clone_from(crashed);
    }
}

impl Injector {
    pub(crate) fn handle(&mut self, cfg: &Cfg, ctx: &mut Ctx<Cfg>) {
        let candidates: Vec<MachineId> = (0..cfg.servers as u32)
            .map(MachineId)
            .filter(|s| !self.crashed.contains(s))
            .collect();
        let pick = ctx.choose(candidates.len() as u32 + 1, "crash");
        if let Some(&victim) = candidates.get(pick as usize) {
            self.crashed.push(victim);
            ctx.send(victim, Msg::Fail);
        }
        self.left -= 1;
        if self.left > 0 {
            ctx.send(ctx.me(), Msg::Go);
        }
    }
}
