//! The delaying explorers of the paper: round robin, run to completion and
//! probabilistic round robin.
#![deny(missing_docs)]
