//! What was asked, as plain typed options: one struct per subcommand, each with the
//! defaults of the command line (`cli.rs` parses into these and checks, in its
//! tests, that the two cannot drift apart). Everything below `app` takes these;
//! none of it sees the argument parser, and no code builds an argv to parse.

use crate::catalog::Library;
use crate::units::{Bytes, Seconds};
use std::path::PathBuf;

/// What every subcommand understands: outputs, history, budget, policy, targets.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CommonOptions {
    /// The JSON document on stdout, and nothing else.
    pub json: bool,
    pub export_json: Option<PathBuf>,
    pub export_csv: Option<PathBuf>,
    pub export_markdown: Option<PathBuf>,
    /// The history database (default: `store::default_path`).
    pub db: Option<PathBuf>,
    pub no_store: bool,
    /// The whole run's budget (each subcommand has its default).
    pub budget: Option<Seconds>,
    /// No progress bar and no terminal summary.
    pub quiet: bool,
    /// A policy name or TOML file (default: intermediate).
    pub policy: Option<String>,
    /// Config targets (default: all, or what is installed).
    pub targets: Vec<String>,
    /// Do not check the emitted lines with each software's own parser.
    pub no_validate: bool,
}

/// `run`: the main job.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunOptions {
    /// Measure as if the CPU lacked these features (`no-aesni`).
    pub cpu_caps: Option<String>,
}

/// `speed`: primitives by block size.
#[derive(Debug, Clone, PartialEq)]
pub struct SpeedOptions {
    /// Algorithm names (default: the catalogue's default set).
    pub algorithms: Vec<String>,
    /// Block sizes (default: `plans::DEFAULT_SIZES`).
    pub bytes: Vec<Bytes>,
    /// Copies run at once (1..=1024).
    pub threads: u16,
    pub cpu_caps: Option<String>,
    /// Every primitive in the catalogue.
    pub all: bool,
    pub libraries: Vec<Library>,
}

impl Default for SpeedOptions {
    fn default() -> Self {
        SpeedOptions {
            algorithms: Vec::new(),
            bytes: Vec::new(),
            threads: 1,
            cpu_caps: None,
            all: false,
            libraries: vec![Library::DEFAULT],
        }
    }
}

/// What `list` lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ListWhat {
    /// Ciphers, AEADs, digests and MACs, and whether the library (`--lib`) can run them.
    #[default]
    Primitives,
    /// CPU features that --cpu-caps can mask.
    CpuCaps,
    /// What the local OpenSSH supports.
    Ssh,
    /// The TLS suites the local library can offer, with grades.
    Tls,
}

/// `list`.
#[derive(Debug, Clone, PartialEq)]
pub struct ListOptions {
    pub what: ListWhat,
    /// `list tls`, `list primitives`: which library's suites or primitives.
    pub library: Library,
    /// `list tls --lib gnutls`: what this GnuTLS priority string resolves to.
    pub priority: Option<String>,
}

impl Default for ListOptions {
    fn default() -> Self {
        ListOptions {
            what: ListWhat::default(),
            library: Library::DEFAULT,
            priority: None,
        }
    }
}

/// `history`.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryOptions {
    /// How many runs to show.
    pub limit: usize,
}

impl Default for HistoryOptions {
    fn default() -> Self {
        HistoryOptions { limit: 20 }
    }
}

/// A whole-document format for `report --format` (and `-o FILE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One self-contained HTML file with charts.
    Html,
    /// Markdown tables.
    Md,
    /// The cipherbench/1 JSON document.
    Json,
    /// One row per result.
    Csv,
    /// The terminal summary, without colours.
    Text,
}

/// `report`: a stored run shown again.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportOptions {
    /// Run id (or unique prefix), or `latest`.
    pub run: String,
    /// Default: the terminal summary, or what `output`'s extension names.
    pub format: Option<Format>,
    /// `-` for stdout.
    pub output: Option<PathBuf>,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            run: "latest".into(),
            format: None,
            output: None,
        }
    }
}

/// `compare A B`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CompareOptions {
    /// The baseline: a run id (or prefix, or `latest`), or an exported JSON document.
    pub a: String,
    /// Compared with the baseline.
    pub b: String,
    pub fail_on_regression: bool,
    /// The smallest change that counts, as a fraction (default: the ranking's threshold).
    pub threshold: Option<f64>,
}

/// `ssh`: OpenSSH transfers and handshakes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SshOptions {
    /// OpenSSH names; empty: every one `ssh -Q` lists.
    pub ciphers: Vec<String>,
    pub macs: Vec<String>,
    pub kex: Vec<String>,
    pub hostkeys: Vec<String>,
    /// Fixed volume per sample (default: adaptive).
    pub bytes: Option<Bytes>,
    /// Bulk over cipher × MAC × kex.
    pub full_matrix: bool,
    pub no_handshakes: bool,
    /// Check on the far side that every byte arrived intact.
    pub verify: bool,
    /// A remote `[USER@]HOST` instead of the private loopback sshd.
    pub host: Option<String>,
    pub port: Option<u16>,
    pub identity: Option<PathBuf>,
    /// Extra `-o` options for the remote host.
    pub ssh_options: Vec<String>,
    pub cpu_caps: Option<String>,
    /// Start the private sshd and wait (for bench scripts).
    pub serve: bool,
    /// Two `--json` documents to compare (for bench scripts).
    pub compare_sweeps: Vec<PathBuf>,
}

/// Where the timed region of a file pass ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum IoMode {
    /// CPU only: the file is already in RAM (page cache), output is not written.
    #[default]
    Memory,
    /// Read the file and write the output file (with fsync), so I/O counts.
    Disk,
}

impl IoMode {
    pub fn as_str(self) -> &'static str {
        match self {
            IoMode::Memory => "memory",
            IoMode::Disk => "disk",
        }
    }
}

/// `file`: whole files encrypted and decrypted.
#[derive(Debug, Clone, PartialEq)]
pub struct FileOptions {
    /// Files to encrypt and decrypt (never modified).
    pub paths: Vec<PathBuf>,
    /// Sizes of generated random inputs.
    pub size: Vec<Bytes>,
    /// Cipher names (default: the study's set).
    pub ciphers: Vec<String>,
    /// Every cipher that can encrypt a file.
    pub all: bool,
    pub mode: IoMode,
    /// Timed passes per cipher and operation (1..=1000).
    pub reps: u16,
    /// Derive keys with PBKDF2 from this password (default: random keys).
    pub password: Option<String>,
    pub pbkdf2_iter: usize,
    /// Also time `openssl enc` processes.
    pub via_openssl_cli: bool,
    /// Where outputs and generated inputs go (default: the temporary directory).
    pub output_dir: Option<PathBuf>,
    /// Chunk size for streaming.
    pub chunk: Bytes,
}

impl Default for FileOptions {
    fn default() -> Self {
        FileOptions {
            paths: Vec::new(),
            size: Vec::new(),
            ciphers: Vec::new(),
            all: false,
            mode: IoMode::Memory,
            reps: 3,
            password: None,
            pbkdf2_iter: 600_000,
            via_openssl_cli: false,
            output_dir: None,
            chunk: Bytes(1 << 20),
        }
    }
}

/// `recommend`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecommendOptions {
    /// Run id (or unique prefix), or `latest`; default: the latest, measured now if none.
    pub run: Option<String>,
    /// Rank the run's figures alone (no pooling with the history's comparable runs).
    pub no_pool: bool,
}

/// `tls`: TLS handshakes and bulk transfers per suite, group and certificate.
#[derive(Debug, Clone, PartialEq)]
pub struct TlsOptions {
    /// IANA or OpenSSL names; empty: the default sweep.
    pub suites: Vec<String>,
    pub groups: Vec<String>,
    pub certs: Vec<String>,
    /// `1.2`, `1.3` ...
    pub protocols: Vec<String>,
    /// Size of each write in the bulk transfer (1 byte to 16 MiB).
    pub write_size: Bytes,
    /// Fixed volume per bulk sample (default: adaptive).
    pub bytes: Option<Bytes>,
    /// Concurrent connections (1..=256).
    pub threads: u16,
    pub full_matrix: bool,
    pub both_directions: bool,
    pub no_handshakes: bool,
    pub no_bulk: bool,
    pub verify: bool,
    /// `HOST:PORT` of a server to measure instead of loopback.
    pub connect: Option<String>,
    pub sni: Option<String>,
    pub http_get: Option<String>,
    /// For every connect, read and write.
    pub timeout: Seconds,
    pub libraries: Vec<Library>,
    /// A GnuTLS priority string for every GnuTLS end.
    pub priority: Option<String>,
    /// Only serve on this address until Ctrl-C.
    pub serve: Option<String>,
}

impl Default for TlsOptions {
    fn default() -> Self {
        TlsOptions {
            suites: Vec::new(),
            groups: Vec::new(),
            certs: Vec::new(),
            protocols: Vec::new(),
            write_size: Bytes(16 << 10),
            bytes: None,
            threads: 1,
            full_matrix: false,
            both_directions: false,
            no_handshakes: false,
            no_bulk: false,
            verify: false,
            connect: None,
            sni: None,
            http_get: None,
            timeout: Seconds(5.0),
            libraries: vec![Library::DEFAULT],
            priority: None,
            serve: None,
        }
    }
}

/// `fleet`: many hosts' exports merged.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FleetOptions {
    /// Host exports, or directories of them.
    pub paths: Vec<PathBuf>,
    /// Where group_vars/ and host_vars/ go.
    pub ansible_vars: Option<PathBuf>,
    pub export_html: Option<PathBuf>,
    /// Refuse an export larger than this (default: `fleet::merge::DEFAULT_MAX_EXPORT`).
    pub max_export_size: Option<Bytes>,
}

/// `check`: the installed configuration against the policy and the measured best.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckOptions {
    /// Check this file instead of the installed configuration.
    pub config_from: Option<PathBuf>,
    /// Gains below this fraction are not findings.
    pub min_gain: f64,
    /// Also write the findings in the Prometheus text format here.
    pub export_prom: Option<PathBuf>,
    /// One line per finding.
    pub verbose: bool,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            config_from: None,
            min_gain: 0.10,
            export_prom: None,
            verbose: false,
        }
    }
}
