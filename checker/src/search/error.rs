//! Why a search could not give an answer.

use std::fmt;

/// Why a search could not give an answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SearchError {
    /// The explorer broke its soundness contract: any `verified` would be
    /// false, so the search refuses to answer.
    UnsoundExplorer {
        /// The explorer's name.
        explorer: String,
        /// What it did.
        message: String,
    },
    /// Bad settings (zero or absurd budgets, an impossible shard...).
    Input(String),
    /// An internal invariant failed: a bug in mcheck.
    Internal(String),
    /// `--symmetry` on a program whose declaration does not hold: a
    /// sampled state and its image differ (ARCHITECTURE.md, "Symmetry").
    Symmetry(crate::program::SymmetryMismatch),
    /// A distributed run lost a process, or one never connected: the
    /// message names it.
    Cluster(String),
}

impl fmt::Display for SearchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SearchError::UnsoundExplorer { explorer, message } => write!(
                f,
                "explorer {explorer} is unsound: {message}; its next/delay must offer every enabled actor once before repeating (see Explorer's soundness contract)"
            ),
            SearchError::Input(m) => f.write_str(m),
            SearchError::Internal(m) => write!(f, "internal error (a bug in mcheck, please report it): {m}"),
            SearchError::Symmetry(m) => m.fmt(f),
            SearchError::Cluster(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for SearchError {}
