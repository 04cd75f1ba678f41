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
mod pos_pctcp;
mod races;
mod ss;
mod strategies;
mod surw;
mod symmetry;
