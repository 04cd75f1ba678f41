//! The mcheck command line, as a library over a registry of models and
//! explorers.
#![deny(missing_docs)]
