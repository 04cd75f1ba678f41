//! The engine's integration tests, one module per concern in one test
//! binary (each binary would link and instantiate the search again).

mod baselines;
mod contract;
mod coverage;
mod exact_bound;
mod hybrid;
mod lin;
mod liveness;
mod machine;
mod network;
mod plain;
mod portfolio;
mod pos_pctcp;
mod races;
mod ss;
mod strategies;
mod surw;
mod symmetry;

/// `hits` of `n` is within the binomial 99.9% interval around `n * p`
/// (z = 3.29; a correct implementation fails with probability 0.1%, but
/// the seeds are pinned, so the test is deterministic).
pub(crate) fn assert_binomial(hits: u64, n: u64, p: f64, what: &str) {
    let mean = n as f64 * p;
    let sd = (n as f64 * p * (1.0 - p)).sqrt();
    let z = (hits as f64 - mean) / sd;
    assert!(
        z.abs() < 3.29,
        "{what}: {hits} hits of {n}, expected {mean:.1} (p = {p:.5}), z = {z:.2}"
    );
}

/// The program of the shipped model `m` at its default parameters, with
/// `bug` switched on.
pub(crate) fn default_program<M: mcheck_checker::Model>(m: &M, bug: Option<u32>) -> M::Program {
    let info = m.info();
    let params = mcheck_checker::Params::resolve(info.name, &info.params, &[]).unwrap();
    m.build(&params, bug)
}
