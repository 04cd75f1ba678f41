//! What the liveness monitors say is owed (ARCHITECTURE.md, "Liveness"):
//! a state is hot while one of them waits for something that the model's
//! bounds still allow to come.

use super::{Cfg, Client, Machine, Msg, Role, Server};
use mcheck_checker::machine::{MonitorError, World};

/// The first thing owed in `world`, if any:
///
/// * `answered`: the client holds an operation that has been neither
///   answered nor given up. Its timer is never lost and it gives an
///   operation up after its attempts, so a correct client always ends
///   cold, whatever the network lost and however the budgets were spent.
/// * `leader-elected`: no server leads the highest term any server has
///   reached while an election timeout is still pending (the budget is
///   not spent). With the budget spent nothing more is owed: a lost
///   `RequestVote` or a split vote may then leave the cluster without a
///   leader, which no bounded retry could repair. So this monitor can only
///   fail on a fair cycle of leaderless states, which the correct model
///   does not have.
pub fn owed(cfg: &Cfg, world: &World<Cfg>) -> Option<MonitorError> {
    let servers: Vec<&Server> = servers(world).collect();
    client(world)
        .and_then(|c| answered(cfg, c))
        .or_else(|| leader_elected(&servers, timer(world)))
}

/// Whether [`owed`] owes anything: the same verdict, without allocating or
/// formatting (it runs after every sampled step with liveness on).
pub fn hot(cfg: &Cfg, world: &World<Cfg>) -> bool {
    if client(world).is_some_and(|c| owes_answer(cfg, c)) {
        return true;
    }
    let Some(term) = servers(world).map(|s| s.term).max() else {
        return false;
    };
    let led = servers(world).any(|s| s.term == term && matches!(s.role, Role::Leader { .. }));
    !led && timer(world)
}

/// The live servers of `world`.
fn servers(world: &World<Cfg>) -> impl Iterator<Item = &Server> {
    world.live().filter_map(|(_, m)| match m {
        Machine::Server(s) => Some(s),
        _ => None,
    })
}

/// The live client of `world` (the last, were there several).
fn client(world: &World<Cfg>) -> Option<&Client> {
    world
        .live()
        .filter_map(|(_, m)| match m {
            Machine::Client(c) => Some(c),
            _ => None,
        })
        .last()
}

/// Whether an election timeout is in flight.
fn timer(world: &World<Cfg>) -> bool {
    world.in_flight().any(|(_, m)| matches!(m, Msg::Timeout { .. }))
}

/// Whether `client` holds an operation that has been neither answered nor
/// given up.
fn owes_answer(cfg: &Cfg, client: &Client) -> bool {
    (1..=cfg.ops()).contains(&client.cmd)
}

/// `answered`: hot while `client` holds an operation that has been neither
/// answered nor given up.
pub fn answered(cfg: &Cfg, client: &Client) -> Option<MonitorError> {
    owes_answer(cfg, client).then(|| {
        MonitorError::new(
            "answered",
            format!(
                "the client's c{} (attempt {}, last sent to server{}) is neither answered nor given up",
                client.cmd, client.attempts, client.target
            ),
        )
    })
}

/// `leader-elected`: hot while no server leads the highest term of
/// `servers` and an election timeout is pending (`timer`).
pub fn leader_elected(servers: &[&Server], timer: bool) -> Option<MonitorError> {
    let term = servers.iter().map(|s| s.term).max()?;
    let led = servers
        .iter()
        .any(|s| s.term == term && matches!(s.role, Role::Leader { .. }));
    (!led && timer).then(|| {
        MonitorError::new(
            "leader-elected",
            format!("no server leads term {term} and an election timeout is still pending"),
        )
    })
}
