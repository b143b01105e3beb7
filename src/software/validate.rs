//! Running a target's own parser over lines: a throw-away file in a private
//! temporary directory, the program's check mode, and what it said.

use crate::discover::installed::{find_program, run};
use anyhow::{Context, Result};
use std::path::PathBuf;

/// What a target's parser made of its lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Checked {
    /// The parser accepted them; how it was run.
    Parsed(String),
    /// Nothing checked them, and why (no parser on this machine, or none that
    /// reads the lines alone).
    Unchecked(String),
}

/// The parser ran and refused the lines: what it said (escaped), as an error a
/// caller can tell apart from a parser that could not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refused {}

/// A private temporary directory holding `file` with `text`.
pub(super) struct Scratch {
    pub dir: tempfile::TempDir,
    pub file: PathBuf,
}

impl Scratch {
    pub fn new(name: &str, text: &str) -> Result<Scratch> {
        let dir = tempfile::Builder::new().prefix("cipherbench-validate-").tempdir()?;
        let file = dir.path().join(name);
        std::fs::write(&file, text).with_context(|| format!("cannot write {}", file.display()))?;
        Ok(Scratch { dir, file })
    }
    pub fn path(&self) -> String {
        self.file.display().to_string()
    }
}

/// Runs `program args` (found in sbin or bin): `Parsed` when it succeeds, an
/// error with its status and stderr when it refuses the lines, `Unchecked` when
/// it is not installed.
pub(super) fn parse_with(program: &[&str], args: &[&str]) -> Result<Checked> {
    let Some(p) = find_program(program) else {
        return Ok(Checked::Unchecked(format!("{} is not installed", program[0])));
    };
    let ran = run(&p, args)?;
    let how = format!("{p} {}", args.join(" "));
    if ran.ok {
        Ok(Checked::Parsed(how))
    } else {
        Err(Refused(format!("`{how}` refused the lines ({})", ran.why())).into())
    }
}

/// `Unchecked`, for a target without a parser that reads its lines alone.
pub(super) fn unchecked(why: &str) -> Result<Checked> {
    Ok(Checked::Unchecked(why.to_string()))
}

/// The value after `key:` on the line that starts with it (the openssl emitter's
/// `ciphersuites: X` lines).
pub(super) fn labelled<'a>(lines: &'a [String], key: &str) -> Option<&'a str> {
    lines
        .iter()
        .find_map(|l| l.strip_prefix(key))
        .map(|v| v.trim_start_matches(':').trim())
}
