//! Helpers shared by the model tests: building a configuration and an
//! independent BFS over full states (no engine code: its own `HashSet`).

use mcheck_checker::{Enabled, Model, Params, Program};
use std::collections::{HashSet, VecDeque};

/// `model` built with `set` overriding its default parameters.
pub fn program<M: Model>(model: &M, set: &[(&str, &str)], bug: Option<u32>) -> M::Program {
    let info = model.info();
    let overrides: Vec<(String, String)> = set.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let params = Params::resolve(info.name, &info.params, &overrides).unwrap();
    model.build(&params, bug)
}

/// Reachable states and transitions by a plain BFS over full states.
pub fn bfs<P: Program>(p: &P) -> (u64, u64) {
    let s0 = p.initial();
    let mut seen = HashSet::from([s0.clone()]);
    let mut todo = VecDeque::from([s0]);
    let (mut en, mut ev, mut transitions) = (Vec::<Enabled>::new(), Vec::new(), 0);
    while let Some(s) = todo.pop_front() {
        en.clear();
        p.enabled(&s, &mut en);
        for e in &en {
            for alt in 0..e.alternatives {
                let mut t = s.clone();
                ev.clear();
                p.execute(&mut t, e.actor, alt, &mut ev).unwrap();
                transitions += 1;
                if seen.insert(t.clone()) {
                    todo.push_back(t);
                }
            }
        }
    }
    (seen.len() as u64, transitions)
}
