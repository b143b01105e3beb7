//! Judge: security levels for everything cipherbench can measure.
//!
//! Why this module looks the way it does:
//!
//! - **Security knowledge is data.** What is weak or insecure changes faster than the
//!   code, and every claim must cite its source. So the ratings live in versioned TOML
//!   under `data/knowledge/` and the policies under `data/policies/`; this module only
//!   parses, validates and queries them. The files are embedded with `include_str!`, so
//!   the binary is self-contained. `data/README.md` documents the schema.
//! - **Named fields, never positional lists.** Every table is a serde struct with
//!   `deny_unknown_fields`, so a typo in a data file or in a user's policy is an error
//!   that names the line, not a silently ignored key.
//! - **Reasons are named and reused** (like ssh-audit's reason constants), and every
//!   reason cites at least one source. An entry's level is exactly the lowest
//!   `ceiling` of its reasons, which the loader checks.
//! - **Disagreements are kept.** Each entry may carry per-source opinions (ssh-audit
//!   fails the NIST curves, NIST approves them); the project's own level says which
//!   source it follows.
//! - **The database is never mutated.** [`Knowledge::judge`] returns a fresh
//!   [`Verdict`] value; [`Policy::allows`] turns a verdict into a [`Decision`].
//! - **Unknown is not secure.** A name the knowledge base does not know gets
//!   [`Level::Unrated`], which sorts below `insecure`, so every policy except `none`
//!   refuses it.

pub mod admitted;
mod entries;
mod grade;
mod knowledge;
mod policy;
mod primitives;
mod verdict;

pub use entries::{Group, GroupKind, KexMethod, TlsSuite};
pub use grade::Grader;
pub use knowledge::Knowledge;
pub use policy::{Policy, BUILTIN_POLICIES, DEFAULT_POLICY};
pub use primitives::primitive_verdicts;
pub use verdict::{Domain, Level, Verdict};

use std::path::PathBuf;

/// The only schema version of the knowledge and policy files this build understands.
pub const SCHEMA_VERSION: u32 = 1;

/// Errors users can read: every parse error names the file, line and column.
#[derive(Debug, thiserror::Error)]
pub enum JudgeError {
    /// A TOML file did not parse or did not match the schema (unknown key, unknown
    /// level, wrong type...).
    #[error("{location}: {message}{snippet}")]
    Parse {
        /// `file:line:column`, or just the file when the parser gave no position.
        location: String,
        /// 1-based line of the error, when known.
        line: Option<usize>,
        /// The parser's message, e.g. ``unknown field `bogus` ``.
        message: String,
        /// The offending line, indented, or empty.
        snippet: String,
    },
    /// A file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file declares a schema version this build does not understand.
    #[error("{origin}: schema_version {found} is not supported (this build reads version {expected})")]
    SchemaVersion { origin: String, found: u32, expected: u32 },
    /// The knowledge base parsed but breaks one of its invariants.
    #[error("{origin}: invalid knowledge data:\n  - {}", problems.join("\n  - "))]
    Invalid { origin: String, problems: Vec<String> },
    /// `--policy NAME` named neither a built-in policy nor an existing file.
    #[error("unknown policy `{name}`: not a built-in policy ({}) and no such file", BUILTIN_POLICIES.join(", "))]
    UnknownPolicy { name: String },
}

/// Parses one TOML document into `T`, turning the parser's byte span into a
/// `file:line:column` location and quoting the offending line.
pub(crate) fn parse_toml<T: serde::de::DeserializeOwned>(text: &str, origin: &str) -> Result<T, JudgeError> {
    toml::from_str(text).map_err(|err| {
        let message = err.message().trim_end().to_string();
        match err.span() {
            Some(span) => {
                let start = span.start.min(text.len());
                let before = &text[..start];
                let line = before.matches('\n').count() + 1;
                let line_start = before.rfind('\n').map_or(0, |i| i + 1);
                let column = text[line_start..start].chars().count() + 1;
                let line_text = text[line_start..].lines().next().unwrap_or("").trim_end();
                JudgeError::Parse {
                    location: format!("{origin}:{line}:{column}"),
                    line: Some(line),
                    message,
                    snippet: format!("\n  {line} | {line_text}"),
                }
            }
            None => JudgeError::Parse {
                location: origin.to_string(),
                line: None,
                message,
                snippet: String::new(),
            },
        }
    })
}

/// Rejects files written for another schema version.
pub(crate) fn check_schema(found: u32, origin: &str) -> Result<(), JudgeError> {
    if found == SCHEMA_VERSION {
        Ok(())
    } else {
        Err(JudgeError::SchemaVersion {
            origin: origin.to_string(),
            found,
            expected: SCHEMA_VERSION,
        })
    }
}
