//! Argument definitions. These only validate what was typed; `app` turns them into
//! real objects (libraries, sockets, daemons) afterwards.

use crate::units::{parse_bytes, parse_duration, Bytes, Seconds};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "cipherbench",
    version,
    about = "Which cipher makes this machine fastest without making it insecure?",
    long_about = "cipherbench measures the real crypto libraries on this machine (the system OpenSSL), \
with known-answer tests before every timing, medians with 95% confidence intervals, and a history in SQLite.\n\n\
With no subcommand it runs the main job (`run`)."
)]
pub struct Cli {
    #[command(flatten)]
    pub common: Common,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Flags every subcommand understands.
#[derive(Debug, Clone, Args, Default)]
pub struct Common {
    /// Print the JSON document (schema cipherbench/1) on stdout, and nothing else.
    #[arg(long, global = true)]
    pub json: bool,
    /// Also write the JSON document to FILE (`-` for stdout).
    #[arg(long, global = true, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    /// Write the results as CSV to FILE (`-` for stdout).
    #[arg(long, global = true, value_name = "FILE")]
    pub export_csv: Option<PathBuf>,
    /// Write a Markdown report to FILE (`-` for stdout).
    #[arg(long, global = true, value_name = "FILE")]
    pub export_markdown: Option<PathBuf>,
    /// History database (default: $XDG_DATA_HOME/cipherbench/history.sqlite).
    #[arg(long, global = true, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Do not record this run in the history database.
    #[arg(long, global = true)]
    pub no_store: bool,
    /// Time budget for the whole run, e.g. 90s, 2m.
    #[arg(long, global = true, value_name = "DURATION", value_parser = duration_arg)]
    pub budget: Option<Seconds>,
    /// No progress bar and no terminal summary (exports and --json still work).
    #[arg(long, short, global = true)]
    pub quiet: bool,
}

fn duration_arg(s: &str) -> Result<Seconds, String> {
    parse_duration(s).map_err(|e| e.to_string())
}

fn bytes_arg(s: &str) -> Result<Bytes, String> {
    let b = parse_bytes(s).map_err(|e| e.to_string())?;
    if b.0 > 64 << 20 {
        return Err(format!("'{s}' is larger than the 64 MiB a primitive buffer may use"));
    }
    Ok(b)
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// The main job: a short machine profile that answers which cipher, AEAD and MAC are fastest here.
    Run(RunArgs),
    /// Throughput of OpenSSL primitives (ciphers, AEADs, digests, MACs) by block size.
    Speed(SpeedArgs),
    /// What exists here, and why something is not available.
    List(ListArgs),
    /// Stored runs, newest first.
    History(HistoryArgs),
    /// Show a stored run again (terminal, --json, or any export).
    Report(ReportArgs),
    /// Compare two stored runs result by result.
    Compare(CompareArgs),
}

#[derive(Debug, Clone, Args, Default)]
pub struct RunArgs {}

#[derive(Debug, Clone, Args)]
pub struct SpeedArgs {
    /// Algorithms (OpenSSL EVP names, case-insensitive: aes-128-gcm, chacha20-poly1305, sha256, hmac-sha256, poly1305).
    /// Default: a sensible set of ciphers, AEADs, digests and MACs.
    #[arg(value_name = "ALG")]
    pub algorithms: Vec<String>,
    /// Block sizes, comma-separated (e.g. 16,1k,16k). Default: 16,64,256,1024,8192,16384.
    #[arg(long, value_delimiter = ',', value_parser = bytes_arg, value_name = "SIZES")]
    pub bytes: Vec<Bytes>,
    /// Run N copies at once for aggregate multi-core throughput (like `openssl speed -multi`).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub threads: u16,
    /// Measure as if the CPU lacked features, e.g. no-aesni (see `list cpu-caps`).
    #[arg(long, value_name = "CAPS")]
    pub cpu_caps: Option<String>,
    /// Measure every primitive in the catalogue.
    #[arg(long, conflicts_with = "algorithms")]
    pub all: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListWhat {
    /// Ciphers, AEADs, digests and MACs, and whether this OpenSSL can run them.
    Primitives,
    /// CPU features that --cpu-caps can mask.
    CpuCaps,
}

#[derive(Debug, Clone, Args)]
pub struct ListArgs {
    #[arg(value_enum)]
    pub what: ListWhat,
}

#[derive(Debug, Clone, Args)]
pub struct HistoryArgs {
    /// How many runs to show.
    #[arg(long, default_value_t = 20)]
    pub limit: usize,
}

#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// Run id (or unique prefix), or `latest`.
    #[arg(long, default_value = "latest")]
    pub run: String,
}

#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// Baseline run id (or prefix, or `latest`).
    pub a: String,
    /// Run to compare with the baseline.
    pub b: String,
}
