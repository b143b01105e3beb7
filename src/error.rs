//! Errors users read, and the one table of exit codes every subcommand uses
//! (docs/exit-codes.md):
//!
//! | code | meaning |
//! |------|---------|
//! | 0    | success; also a run the deadline cut (status `partial`, said in a warning) |
//! | 1    | a finding: a regression (`compare --fail-on-regression`), a policy failure |
//! | 2    | bad input ([`UsageError`]): names, sizes, paths, policies, malformed files |
//! | 3    | could not measure: a peer unreachable, silent, too slow or not speaking the protocol, a missing tool, the run's deadline |
//! | 4    | measured, but the history or an export could not be written ([`NotSaved`]); everything else was still written |
//! | 130  | interrupted (Ctrl-C, SIGTERM) after keeping the results so far |

/// Input the user can fix: unknown names, bad sizes, unwritable paths.
#[derive(Debug, thiserror::Error)]
pub enum UsageError {
    #[error("unknown {what} '{given}'{}", suggestion_text(.suggestions))]
    Unknown {
        what: &'static str,
        given: String,
        suggestions: Vec<String>,
    },
    #[error("{0}")]
    Invalid(String),
}

/// The run was stopped by Ctrl-C or SIGTERM after keeping what it had.
#[derive(Debug, thiserror::Error)]
#[error("interrupted; {kept} result(s) kept")]
pub struct Interrupted {
    pub kept: usize,
}

/// A finding the user asked to fail on (a regression, a policy failure): exit 1.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Finding(pub String);

/// The run measured and reported, but some of its outputs could not be written
/// (the history database, an export): exit 4. The message lists what failed.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct NotSaved(pub String);

/// Exit codes, by name.
pub mod code {
    pub const FINDING: i32 = 1;
    pub const BAD_INPUT: i32 = 2;
    pub const NOT_MEASURED: i32 = 3;
    pub const NOT_SAVED: i32 = 4;
    pub const INTERRUPTED: i32 = 130;
}

fn suggestion_text(s: &[String]) -> String {
    match s.len() {
        0 => String::new(),
        1 => format!(" (did you mean '{}'?)", s[0]),
        _ => format!(" (did you mean one of: {}?)", s.join(", ")),
    }
}

impl UsageError {
    /// An unknown name, with the closest known names as suggestions.
    pub fn unknown<'a>(what: &'static str, given: &str, known: impl IntoIterator<Item = &'a str>) -> UsageError {
        UsageError::Unknown {
            what,
            given: given.to_string(),
            suggestions: closest(given, known),
        }
    }
}

/// Up to three known names close to `given`.
pub fn closest<'a>(given: &str, known: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let g = given.to_ascii_lowercase();
    let mut scored: Vec<(f64, &str)> = known
        .into_iter()
        .map(|k| {
            let lev = strsim::levenshtein(&g, k) as f64;
            let jw = strsim::jaro_winkler(&g, k);
            let prefix = if k.starts_with(&g) || g.starts_with(k) { 0.5 } else { 0.0 };
            (jw + prefix - lev * 0.02, k)
        })
        .filter(|(s, k)| *s > 0.8 || strsim::levenshtein(&g, k) <= 2)
        .collect();
    scored.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap_or(std::cmp::Ordering::Equal));
    let mut out: Vec<String> = Vec::new();
    for (_, k) in scored {
        if !out.iter().any(|o| o == k) {
            out.push(k.to_string());
        }
        if out.len() == 3 {
            break;
        }
    }
    out
}

/// Exit code for an error chain. A run the user interrupted exits 130 whatever
/// error the interruption caused on its way out (a system call cut short).
pub fn exit_code(e: &anyhow::Error) -> i32 {
    let has = |f: &dyn Fn(&(dyn std::error::Error + 'static)) -> bool| e.chain().any(f);
    if has(&|c| c.downcast_ref::<UsageError>().is_some()) {
        code::BAD_INPUT
    } else if has(&|c| c.downcast_ref::<Interrupted>().is_some()) || crate::interrupt::by_user() {
        code::INTERRUPTED
    } else if has(&|c| c.downcast_ref::<Finding>().is_some()) {
        code::FINDING
    } else if has(&|c| c.downcast_ref::<NotSaved>().is_some()) {
        code::NOT_SAVED
    } else {
        code::NOT_MEASURED
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names() {
        let known = ["aes-128-gcm", "aes-256-gcm", "chacha20-poly1305", "sha256"];
        let e = UsageError::unknown("algorithm", "aes-128-gmc", known);
        let msg = e.to_string();
        assert!(msg.starts_with("unknown algorithm 'aes-128-gmc'"), "{msg}");
        assert!(msg.contains("aes-128-gcm"), "{msg}");
        let none = UsageError::unknown("algorithm", "zzzzzz", known).to_string();
        assert_eq!(none, "unknown algorithm 'zzzzzz'");
        assert_eq!(closest("chacha", known), vec!["chacha20-poly1305".to_string()]);
    }

    #[test]
    fn exit_codes() {
        assert_eq!(exit_code(&anyhow::Error::new(UsageError::Invalid("x".into()))), 2);
        assert_eq!(exit_code(&anyhow::Error::new(Interrupted { kept: 3 })), 130);
        assert_eq!(exit_code(&anyhow::anyhow!("boom")), 3);
        assert_eq!(exit_code(&anyhow::Error::new(Finding("slower".into()))), 1);
        assert_eq!(exit_code(&anyhow::Error::new(NotSaved("db".into())).context("x")), 4);
        let wrapped = anyhow::Error::new(UsageError::Invalid("x".into())).context("while parsing");
        assert_eq!(exit_code(&wrapped), 2);
    }
}
