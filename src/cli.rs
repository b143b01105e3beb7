//! Argument definitions. These only validate what was typed; at dispatch they become
//! the plain options of `crate::options` (convert.rs), and `app` turns those into
//! real objects (libraries, sockets, daemons) afterwards. Nothing else sees clap.

use crate::units::{parse_bytes, parse_duration, Bytes, Seconds};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

mod convert;
use crate::catalog::Library;
use convert::library_arg;
pub use convert::{FormatArg, IoModeArg};

#[derive(Debug, Parser)]
#[command(
    name = "cipherbench",
    version,
    about = "Which cipher makes this machine fastest without making it insecure?",
    long_about = "cipherbench measures the real crypto libraries on this machine (the system OpenSSL), \
with known-answer tests before every timing, medians with 95% confidence intervals, and a history in SQLite.\n\n\
With no subcommand it runs the main job (`run`).",
    after_long_help = EXAMPLES
)]
pub struct Cli {
    #[command(flatten)]
    pub common: Common,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// What people do with it, in `--help` and the man page (as in the README).
const EXAMPLES: &str = "\
Examples:
  cipherbench                                  profile this machine
  cipherbench check                            what to change here, for CI
  cipherbench recommend --for nginx,sshd       config lines, latest run
  cipherbench --export-json a.json             and b.json on another one
  cipherbench compare a.json b.json --fail-on-regression
  cipherbench tls --connect example.org:443    a remote TLS server
  cipherbench ssh --host me@server             a remote sshd
  cipherbench ssh --full-matrix --bytes 1G     the SSH write-up's sweep
  cipherbench file --size 35.5M --size 100.7M  the file study
  cipherbench tls --lib gnutls --priority 'NORMAL:-VERS-TLS1.3'
  cipherbench report --run latest -o report.html
  cipherbench history";

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
    #[arg(long, alias = "export-md", global = true, value_name = "FILE")]
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
    /// Security policy: modern, intermediate (default), strict, legacy, none, or a TOML file.
    #[arg(long, global = true, value_name = "NAME|FILE")]
    pub policy: Option<String>,
    /// Config targets for `recommend` (the help lists the registry's, `software::ALL`, in its order).
    #[arg(long = "for", aliases = ["target", "targets"], global = true, value_delimiter = ',', value_name = "TARGET,...", help = convert::for_help())]
    pub targets: Vec<String>,
    /// Do not check the emitted config lines with each software's own parser
    /// (sshd -t, nginx -t, haproxy -c, ssh -G, openssl ciphers, gnutls-cli).
    #[arg(long, global = true)]
    pub no_validate: bool,
}

fn duration_arg(s: &str) -> Result<Seconds, String> {
    parse_duration(s).map_err(|e| e.to_string())
}

/// A host name as the user gave it (`--host [USER@]HOST`, `--connect HOST:PORT`,
/// `--sni NAME`), refused before any tool sees it when a program could take it for
/// an option (it starts with '-', also after `USER@`) or it holds a blank or a
/// control character, which no host name does. Exit 2, like every bad value.
fn host_arg(s: &str) -> Result<String, String> {
    let host = s.rsplit_once('@').map_or(s, |(_, h)| h);
    if s.is_empty() || host.is_empty() {
        return Err("a host is needed".into());
    }
    if s.starts_with('-') || host.starts_with('-') {
        return Err("a host must not start with '-' (ssh and openssl would take it for an option)".into());
    }
    if s.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("a host holds no blank or control character".into());
    }
    Ok(s.to_string())
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
    /// Compare two runs result by result (run ids, `latest`, or JSON files exported on other machines).
    Compare(CompareArgs),
    /// Encrypt and decrypt whole files (the symmetric-cipher study, done right).
    File(FileArgs),
    /// Real OpenSSH transfers and handshakes per cipher × MAC × kex, on a private
    /// loopback sshd (default) or a remote host (--host).
    Ssh(SshArgs),
    /// The fastest options that pass the policy, per protocol, with config lines for
    /// each target (from a stored run, or a fresh `run` when there is none).
    Recommend(RecommendArgs),
    /// Real TLS handshakes and bulk transfers per suite, group and certificate with the
    /// system libssl: on loopback (default) or against a server (--connect HOST:PORT).
    Tls(TlsArgs),
    /// Merge many hosts' JSON exports (files or directories) into answers per hardware
    /// class, a fleet-wide config, and group_vars/host_vars for deploy/ansible/apply.yml.
    Fleet(FleetArgs),
    /// The installed (or --config-from) configuration against the policy and the
    /// measured best: one line per finding, exit 1 when there is one (for CI and monitoring).
    Check(CheckArgs),
    /// Print a shell completion script: bash, zsh, fish (e.g. `source <(cipherbench completions bash)`).
    Completions(CompletionsArgs),
    /// Write the man pages made from these same definitions (`make install` uses it).
    #[command(hide = true)]
    Man(ManArgs),
    /// A private NNTP-over-TLS news server on 127.0.0.1 for bench scripts and tests:
    /// prints `listening 127.0.0.1:PORT`, then one `negotiated PROTOCOL SUITE [GROUP]`
    /// line per handshake, and stops by itself.
    #[command(hide = true)]
    ServeNntp(ServeNntpArgs),
}

#[derive(Debug, Clone, Args)]
pub struct ServeNntpArgs {
    /// Serve this many yEnc parts of one generated file.
    #[arg(long, default_value_t = 0)]
    pub articles: usize,
    /// The size of each part, in bytes.
    #[arg(long, default_value_t = 768_000)]
    pub article_size: usize,
    /// Write the NZB that names the parts here.
    #[arg(long, value_name = "FILE")]
    pub nzb: Option<PathBuf>,
    /// Stop once this many connections have ended.
    #[arg(long, default_value_t = 1)]
    pub connections: usize,
    /// Stop after this many seconds in any case.
    #[arg(long, default_value_t = 60)]
    pub seconds: u64,
    /// Speak TLS 1.2 at most.
    #[arg(long)]
    pub tls12_only: bool,
}

#[derive(Debug, Clone, Args, Default)]
pub struct CheckArgs {
    /// Check this configuration file instead of the installed one (review before deploy);
    /// --for names its software when the file name does not.
    #[arg(long, value_name = "FILE")]
    pub config_from: Option<PathBuf>,
    /// Report measured throughput left on the table beyond this gain (and beyond the
    /// 95% intervals), e.g. 10%.
    #[arg(long, default_value = "10%", value_parser = crate::units::parse_gain, value_name = "PERCENT")]
    pub min_gain: f64,
    /// Also write the findings and the gain left on the table in the Prometheus text
    /// format to FILE (atomically), for node_exporter's textfile collector
    /// (e.g. /var/lib/prometheus/node-exporter/cipherbench.prom).
    #[arg(long, value_name = "FILE")]
    pub export_prom: Option<PathBuf>,
    /// One line per finding; by default the terminal groups them per software and
    /// cited reason (--json and --export-prom always list each).
    #[arg(long, short)]
    pub verbose: bool,
}

#[derive(Debug, Clone, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Clone, Args)]
pub struct ManArgs {
    /// Write cipherbench.1 and one page per subcommand (cipherbench-tls.1 ...) into DIR
    /// instead of printing cipherbench.1 on stdout.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[derive(Debug, Clone, Args, Default)]
pub struct FleetArgs {
    /// Host exports (`--export-json` of `run`), or directories of them (`*.json`;
    /// `HOST.failed`/`HOST.unreachable` markers from profile.yml are reported too).
    #[arg(value_name = "FILES|DIR", required = true)]
    pub paths: Vec<PathBuf>,
    /// Write group_vars/all.json (the fleet-wide config) and host_vars/HOST.json (each
    /// host's class lines) under DIR, for deploy/ansible/apply.yml.
    #[arg(long, value_name = "DIR")]
    pub ansible_vars: Option<PathBuf>,
    /// Also write a self-contained HTML report to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_html: Option<PathBuf>,
    /// Refuse (and name) an export larger than SIZE without reading it [default: 64M].
    #[arg(long, value_parser = file_size_arg, value_name = "SIZE")]
    pub max_export_size: Option<Bytes>,
}

#[derive(Debug, Clone, Args, Default)]
pub struct RecommendArgs {
    /// Run id (or unique prefix), or `latest`. Default: the latest run, measured now if none is stored.
    #[arg(long)]
    pub run: Option<String>,
    /// Rank this run's figures alone, without pooling them with the comparable runs of the history.
    #[arg(long)]
    pub no_pool: bool,
}

#[derive(Debug, Clone, Args, Default)]
pub struct RunArgs {
    /// Measure as if the CPU lacked features, e.g. no-aesni (see `list cpu-caps`):
    /// one host of a test fleet can stand in for a CPU without AES instructions.
    #[arg(long, value_name = "CAPS")]
    pub cpu_caps: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub struct SpeedArgs {
    /// Algorithms (OpenSSL EVP names, case-insensitive: aes-128-gcm, chacha20-poly1305, sha256, hmac-sha256, poly1305).
    /// Default: a sensible set of ciphers, AEADs, digests and MACs.
    #[arg(value_name = "ALG")]
    pub algorithms: Vec<String>,
    /// Block sizes, comma-separated (e.g. 16,1k,16k). Default: 16,64,256,1024,8192,16384.
    #[arg(long, aliases = ["size", "sizes", "block-size", "block-sizes"], value_delimiter = ',', value_parser = bytes_arg, value_name = "SIZES")]
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
    /// Libraries to measure, side by side: openssl, gnutls, rustls, or several (openssl,gnutls).
    #[arg(long = "lib", aliases = ["libs", "library", "libraries"], value_parser = library_arg(), value_delimiter = ',', default_value = "openssl", value_name = "LIBS")]
    pub libraries: Vec<Library>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListWhat {
    /// Ciphers, AEADs, digests and MACs, and whether the library (--lib, default OpenSSL) can run them.
    Primitives,
    /// CPU features that --cpu-caps can mask.
    CpuCaps,
    /// What the local OpenSSH supports: ciphers (AEAD or not), MACs, kex, key types.
    Ssh,
    /// The TLS suites the local OpenSSL can offer (like `openssl ciphers -v`), with grades.
    Tls,
}

#[derive(Debug, Clone, Args)]
pub struct ListArgs {
    #[arg(value_enum)]
    pub what: ListWhat,
    /// `list tls`, `list primitives`: which library's suites or primitives (openssl, gnutls or rustls).
    #[arg(long = "lib", aliases = ["libs", "library"], value_parser = library_arg(), default_value = "openssl", value_name = "LIB")]
    pub library: Library,
    /// `list tls --lib gnutls`: what this GnuTLS priority string resolves to (default NORMAL),
    /// like `gnutls-cli --priority STRING -l`.
    #[arg(long, value_name = "STRING")]
    pub priority: Option<String>,
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
    /// Write the whole report in this format (default: the terminal summary, or the
    /// format -o's extension names). Without -o, html goes to
    /// $XDG_DATA_HOME/cipherbench/reports/RUN.html and the others to stdout.
    #[arg(long, value_enum)]
    pub format: Option<FormatArg>,
    /// Write the report to FILE (`-` for stdout), atomically.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// Baseline: a run id (or prefix, or `latest`), or a JSON document from --export-json.
    pub a: String,
    /// Compared with the baseline: a run id, `latest`, or an exported JSON document.
    pub b: String,
    /// Exit non-zero when a result of B is slower than A beyond both runs' intervals
    /// and the threshold, or when the two runs share no result.
    #[arg(long)]
    pub fail_on_regression: bool,
    /// Smallest change that counts, in percent (`2%`). Default: the ranking's
    /// practical threshold, 5%. The two runs' intervals must not overlap either.
    #[arg(long, value_name = "PERCENT", value_parser = percent_arg)]
    pub threshold: Option<f64>,
}

/// `5%` or `5` → 0.05; more than 0 and less than 100.
fn percent_arg(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .trim_end_matches('%')
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a percentage (e.g. 5%)"))?;
    if !(v > 0.0 && v < 100.0) {
        return Err(format!("'{s}': the threshold must be more than 0% and less than 100%"));
    }
    Ok(v / 100.0)
}

fn ssh_bytes_arg(s: &str) -> Result<Bytes, String> {
    let b = parse_bytes(s).map_err(|e| e.to_string())?;
    if b.0 == 0 {
        return Err("the volume must be at least one byte".into());
    }
    Ok(b)
}

#[derive(Debug, Clone, Args, Default)]
pub struct SshArgs {
    /// Ciphers to measure (OpenSSH names, comma-separated). Default: every one `ssh -Q cipher` lists.
    #[arg(long, alias = "cipher", value_delimiter = ',', value_name = "LIST")]
    pub ciphers: Vec<String>,
    /// MACs to measure (OpenSSH names). Default: all. AEAD ciphers ignore them (MAC implicit).
    #[arg(long, alias = "mac", value_delimiter = ',', value_name = "LIST")]
    pub macs: Vec<String>,
    /// Key exchanges (OpenSSH names). Default: all.
    #[arg(long, aliases = ["kexes", "kex-algorithms"], value_delimiter = ',', value_name = "LIST")]
    pub kex: Vec<String>,
    /// Host-key algorithms for the handshake sweep. Default: one per key type
    /// (ssh-ed25519, ecdsa-sha2-nistp256, rsa-sha2-512); with --host, the client's default.
    #[arg(long, aliases = ["hostkey", "host-key", "host-keys"], value_delimiter = ',', value_name = "LIST")]
    pub hostkeys: Vec<String>,
    /// Fixed volume per sample, one fresh session each, e.g. 1G: timed after the
    /// handshake and 4 MiB of untimed priming, until the far side has read every
    /// byte (the handshake is measured on its own). Default: adaptive, each session
    /// one sample of a span of time.
    #[arg(long, value_parser = ssh_bytes_arg, value_name = "SIZE")]
    pub bytes: Option<Bytes>,
    /// The write-up's 3-way sweep: bulk over cipher × MAC × kex (instead of bulk over
    /// cipher × MAC and handshakes over kex × host key).
    #[arg(long)]
    pub full_matrix: bool,
    /// Skip the handshake sweep.
    #[arg(long)]
    pub no_handshakes: bool,
    /// Run `sha256sum` on the far side instead of `cat > /dev/null` and check that
    /// every byte sent arrived intact.
    #[arg(long)]
    pub verify: bool,
    /// Measure against this server instead of a private loopback sshd, with your own
    /// ssh configuration, keys and host-key checking (BatchMode).
    #[arg(long, value_name = "[USER@]HOST", value_parser = host_arg)]
    pub host: Option<String>,
    /// Port of --host.
    #[arg(long, requires = "host")]
    pub port: Option<u16>,
    /// Private key for --host.
    #[arg(long, requires = "host", value_name = "FILE")]
    pub identity: Option<PathBuf>,
    /// Extra ssh option for --host (repeatable), e.g. -o ProxyJump=gw.
    #[arg(short = 'o', long = "ssh-option", requires = "host", value_name = "OPT")]
    pub ssh_options: Vec<String>,
    /// Measure as if the CPU lacked features, e.g. no-aesni (see `list cpu-caps`): the
    /// private sshd and the ssh client run under the same mask.
    #[arg(long, value_name = "CAPS", conflicts_with = "host")]
    pub cpu_caps: Option<String>,
    /// Start the private sshd, print how to reach it, and wait for Ctrl-C (for bench scripts).
    #[arg(long, hide = true, conflicts_with = "host")]
    pub serve: bool,
    /// Compare a decomposed and a full-matrix sweep (two --json documents) by their
    /// top cipher × MAC pairs, up to ties (for bench scripts). Exit 1 when they differ.
    #[arg(long, hide = true, num_args = 2, value_names = ["DECOMPOSED", "FULL"], conflicts_with_all = ["host", "serve"])]
    pub compare_sweeps: Vec<PathBuf>,
}

fn file_size_arg(s: &str) -> Result<Bytes, String> {
    parse_bytes(s).map_err(|e| e.to_string())
}

#[derive(Debug, Clone, Args)]
pub struct FileArgs {
    /// Files to encrypt and decrypt (never modified; outputs go to a private temporary directory).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Generate a file of random data of this size instead (repeatable), e.g. --size 35.5M --size 100.7M.
    #[arg(long, alias = "sizes", value_parser = file_size_arg, value_name = "SIZE")]
    pub size: Vec<Bytes>,
    /// Ciphers (OpenSSL EVP names, comma-separated). Default: the study's DES, RC2, Blowfish and
    /// AES-256 in ECB and CBC, plus aes-256-ctr, aes-256-gcm and chacha20-poly1305.
    #[arg(long, alias = "cipher", value_delimiter = ',', value_name = "LIST")]
    pub ciphers: Vec<String>,
    /// Every cipher and mode that can encrypt a file.
    #[arg(long, conflicts_with = "ciphers")]
    pub all: bool,
    /// memory: CPU only, the file already in RAM; disk: read the file and write the output, so I/O counts.
    #[arg(long, value_enum, default_value = "memory")]
    pub mode: IoModeArg,
    /// Timed passes per cipher and operation (after one warm-up pass), as the study's 3 runs.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub reps: u16,
    /// Derive keys from this password with PBKDF2-HMAC-SHA256 (its cost is reported separately). Default: random keys.
    #[arg(long)]
    pub password: Option<String>,
    /// PBKDF2 iterations for --password.
    #[arg(long, default_value_t = 600_000, requires = "password")]
    pub pbkdf2_iter: usize,
    /// Also time `openssl enc` processes as the study did, to show how much of its figures was start-up.
    #[arg(long)]
    pub via_openssl_cli: bool,
    /// Where outputs and generated inputs go (a private directory inside it is removed at the end).
    #[arg(long, value_name = "DIR")]
    pub output_dir: Option<PathBuf>,
    /// Chunk size for streaming (memory stays constant whatever the file size).
    #[arg(long, default_value = "1M", value_parser = file_size_arg)]
    pub chunk: Bytes,
}

fn tls_size_arg(s: &str) -> Result<Bytes, String> {
    let b = parse_bytes(s).map_err(|e| e.to_string())?;
    if b.0 == 0 || b.0 > 16 << 20 {
        return Err(format!("'{s}' must be between 1 byte and 16 MiB"));
    }
    Ok(b)
}

fn tls_volume_arg(s: &str) -> Result<Bytes, String> {
    let b = parse_bytes(s).map_err(|e| e.to_string())?;
    if b.0 == 0 {
        return Err("the volume must be at least one byte".into());
    }
    Ok(b)
}

#[derive(Debug, Clone, Args)]
pub struct TlsArgs {
    /// Suites (IANA or OpenSSL names, comma-separated). Default: every TLS 1.3 suite and the
    /// TLS 1.2 ECDHE suites for the first certificate type (bulk); on --connect, every suite
    /// this OpenSSL can offer.
    #[arg(long, aliases = ["suite", "cipher-suite", "cipher-suites"], value_delimiter = ',', value_name = "LIST")]
    pub suites: Vec<String>,
    /// Key-exchange groups: X25519MLKEM768, SecP256r1MLKEM768, SecP384r1MLKEM1024, MLKEM512,
    /// MLKEM768, MLKEM1024, X25519, X448, P-256, P-384, P-521, ffdhe2048, ffdhe3072: those this
    /// OpenSSL has (ML-KEM from 3.5 on; `cipherbench list tls` shows them). Default: all it has.
    #[arg(long, aliases = ["group", "curve", "curves"], value_delimiter = ',', value_name = "LIST")]
    pub groups: Vec<String>,
    /// Certificate types: rsa-2048, rsa-3072, ecdsa-p256, ecdsa-p384, ed25519 (default: all;
    /// the first also serves the bulk sweep).
    #[arg(long, aliases = ["cert", "certificate", "certificates"], value_delimiter = ',', value_name = "LIST")]
    pub certs: Vec<String>,
    /// Protocols: 1.2, 1.3 (default on loopback), 1.0, 1.1 (also probed on --connect).
    #[arg(long, aliases = ["protocol", "version", "versions"], value_delimiter = ',', value_name = "LIST")]
    pub protocols: Vec<String>,
    /// Size of each write in the bulk transfer.
    #[arg(long, default_value = "16k", value_parser = tls_size_arg, value_name = "SIZE")]
    pub write_size: Bytes,
    /// Fixed volume per bulk sample, e.g. 64M (default: adaptive).
    #[arg(long, value_parser = tls_volume_arg, value_name = "SIZE")]
    pub bytes: Option<Bytes>,
    /// Concurrent connections (one client and one server thread each).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub threads: u16,
    /// Cross product: every suite × group × certificate for handshakes and bulk.
    #[arg(long)]
    pub full_matrix: bool,
    /// Bulk in both directions (client-to-server, then server-to-client).
    #[arg(long)]
    pub both_directions: bool,
    /// Skip the handshake sweep.
    #[arg(long)]
    pub no_handshakes: bool,
    /// Skip the bulk sweep.
    #[arg(long)]
    pub no_bulk: bool,
    /// Hash every byte on both ends of the bulk transfer and fail on a mismatch.
    #[arg(long)]
    pub verify: bool,
    /// Measure this server instead of loopback: enumerate what it accepts, its suite
    /// order, and handshake times per accepted suite.
    #[arg(long, value_name = "HOST:PORT", value_parser = host_arg)]
    pub connect: Option<String>,
    /// Server name to send (default: the host of --connect unless it is an address).
    #[arg(long, requires = "connect", value_name = "NAME", value_parser = host_arg)]
    pub sni: Option<String>,
    /// Also download PATH over HTTP/1.1 per accepted suite and time MB/s.
    #[arg(long, requires = "connect", value_name = "PATH")]
    pub http_get: Option<String>,
    /// Timeout for every connect, read and write.
    #[arg(long, default_value = "5s", value_parser = duration_arg, value_name = "DURATION")]
    pub timeout: Seconds,
    /// TLS libraries: openssl, gnutls, rustls, or several (openssl,rustls) for every
    /// client→server pair (the interop matrix).
    #[arg(long = "lib", aliases = ["libs", "library", "libraries"], value_parser = library_arg(), value_delimiter = ',', default_value = "openssl", value_name = "LIBS")]
    pub libraries: Vec<Library>,
    /// GnuTLS priority string for every GnuTLS end (e.g. 'NORMAL:-VERS-TLS1.3'): measures
    /// exactly what it negotiates instead of the suite sweep; with --connect, offers its
    /// suites one per handshake. Needs --lib gnutls.
    #[arg(long, value_name = "STRING", conflicts_with_all = ["suites", "groups", "protocols", "full_matrix"])]
    pub priority: Option<String>,
    /// Run only the benchmark server on ADDR (e.g. 127.0.0.1:4433) until Ctrl-C, for a
    /// peer such as gnutls-cli or another cipherbench; with one --lib (any).
    #[arg(long, value_name = "ADDR", conflicts_with = "connect")]
    pub serve: Option<String>,
}

// ---------------------------------------------------------------- parsing, completions, man

/// Parses the command line; on a flag clap does not know, says which flag was meant
/// (clap already suggests near spellings of this subcommand's own flags; this adds
/// the flags that belong to another subcommand, and the other tools' words for them).
pub fn parse() -> Cli {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    use clap::{CommandFactory, FromArgMatches};
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let mut cmd = Cli::command();
    let mut err = match cmd.try_get_matches_from_mut(&args) {
        Ok(m) => match Cli::from_arg_matches(&m) {
            Ok(cli) => return cli,
            Err(e) => e.format(&mut cmd),
        },
        Err(e) => e,
    };
    if err.kind() == ErrorKind::UnknownArgument {
        if let Some(ContextValue::String(flag)) = err.get(ContextKind::InvalidArg).cloned() {
            let used = args
                .iter()
                .skip(1)
                .filter_map(|a| a.to_str())
                .find(|a| cmd.find_subcommand(a).is_some())
                .map(String::from);
            let (tips, replace) = flag_hints(&cmd, used.as_deref(), &flag);
            if !tips.is_empty() && (replace || err.get(ContextKind::SuggestedArg).is_none()) {
                // Ours replace clap's near-spelling guess (`tls --host` is not `--no-store`).
                let mut fresh = clap::Error::new(ErrorKind::UnknownArgument).with_cmd(&cmd);
                fresh.insert(ContextKind::InvalidArg, ContextValue::String(flag));
                fresh.insert(
                    ContextKind::Suggested,
                    ContextValue::StyledStrs(tips.into_iter().map(clap::builder::StyledStr::from).collect()),
                );
                // clap's usage line names its guess; the subcommand's own does not.
                let usage = match used.as_deref().and_then(|u| cmd.find_subcommand_mut(u)) {
                    Some(sub) => Some(ContextValue::StyledStr(sub.render_usage())),
                    None => err.get(ContextKind::Usage).cloned(),
                };
                if let Some(u) = usage {
                    fresh.insert(ContextKind::Usage, u);
                }
                err = fresh;
            }
        }
    }
    err.exit()
}

/// Which flag was meant by `typed` (e.g. `--host=x`) in subcommand `used`, and
/// whether the hint is sure enough to replace clap's near-spelling guess (the flag
/// exists as typed, elsewhere).
fn flag_hints(cmd: &clap::Command, used: Option<&str>, typed: &str) -> (Vec<String>, bool) {
    let name = typed.trim_start_matches('-');
    let name = name.split_once('=').map_or(name, |(n, _)| n).to_ascii_lowercase();
    // Other tools' words, and flags that mean the same thing in another subcommand.
    const SAME: &[(&str, &str, &str)] = &[
        ("tls", "host", "--connect HOST:PORT measures a remote TLS server"),
        ("tls", "port", "--connect HOST:PORT takes the port"),
        ("tls", "ciphers", "TLS suites are chosen with --suites (IANA or OpenSSL names)"),
        ("tls", "cipher", "TLS suites are chosen with --suites (IANA or OpenSSL names)"),
        ("tls", "kex", "TLS key-exchange groups are chosen with --groups"),
        ("tls", "priority-string", "--priority STRING (with --lib gnutls)"),
        ("ssh", "connect", "--host [USER@]HOST (and --port) measures a remote sshd"),
        ("ssh", "suites", "SSH ciphers are chosen with --ciphers (OpenSSH names)"),
        ("ssh", "groups", "SSH key exchanges are chosen with --kex"),
        (
            "speed",
            "ciphers",
            "name the algorithms as arguments: cipherbench speed aes-128-gcm chacha20-poly1305",
        ),
        (
            "speed",
            "cipher",
            "name the algorithms as arguments: cipherbench speed aes-128-gcm chacha20-poly1305",
        ),
        (
            "speed",
            "algorithms",
            "name the algorithms as arguments: cipherbench speed aes-128-gcm sha256",
        ),
        ("speed", "multi", "--threads N runs N copies at once (like openssl speed -multi)"),
        ("file", "iterations", "--pbkdf2-iter N (with --password)"),
        ("file", "iter", "--pbkdf2-iter N (with --password)"),
    ];
    let mut tips: Vec<String> = SAME
        .iter()
        .filter(|(sub, flag, _)| used == Some(*sub) && *flag == name)
        .map(|(_, _, tip)| tip.to_string())
        .collect();
    if !tips.is_empty() {
        return (tips, true);
    }
    {
        let owners: Vec<String> = cmd
            .get_subcommands()
            .filter(|s| !s.is_hide_set() && Some(s.get_name()) != used)
            .filter(|s| {
                s.get_arguments()
                    .any(|a| a.get_long() == Some(name.as_str()) || a.get_all_aliases().is_some_and(|al| al.contains(&name.as_str())))
            })
            .map(|s| format!("cipherbench {}", s.get_name()))
            .collect();
        if !owners.is_empty() {
            tips.push(format!("--{name} is an option of {}", owners.join(", ")));
        }
    }
    let sure = !tips.is_empty();
    (tips, sure)
}

/// `cipherbench completions SHELL`: the script on stdout.
pub fn completions(a: &CompletionsArgs) -> anyhow::Result<()> {
    use clap::CommandFactory;
    let mut buf = Vec::new();
    clap_complete::generate(a.shell, &mut Cli::command(), "cipherbench", &mut buf);
    crate::report::print(&buf)
}

/// The main man page: clap_mangen's sections, and the examples kept as lines
/// (`after_long_help` would be refilled into a paragraph by roff).
fn main_page(cmd: clap::Command) -> std::io::Result<Vec<u8>> {
    let man = clap_mangen::Man::new(cmd.after_long_help(None::<&str>));
    let mut buf = Vec::new();
    man.render_title(&mut buf)?;
    man.render_name_section(&mut buf)?;
    man.render_synopsis_section(&mut buf)?;
    man.render_description_section(&mut buf)?;
    man.render_options_section(&mut buf)?;
    man.render_subcommands_section(&mut buf)?;
    buf.extend_from_slice(b".SH EXAMPLES\n.nf\n");
    for line in EXAMPLES.lines().skip(1) {
        let roff = line.trim_start().replace('\\', "\\e").replace('-', "\\-");
        buf.extend_from_slice(format!("{roff}\n").as_bytes());
    }
    buf.extend_from_slice(b".fi\n");
    man.render_version_section(&mut buf)?;
    Ok(buf)
}

/// `cipherbench man [--dir DIR]`: the man page(s) from these definitions.
pub fn man(a: &ManArgs) -> anyhow::Result<()> {
    use anyhow::Context;
    use clap::CommandFactory;
    let cmd = Cli::command();
    match &a.dir {
        Some(dir) => {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
            clap_mangen::generate_to(cmd.clone().after_long_help(None::<&str>), dir)
                .with_context(|| format!("cannot write man pages to {}", dir.display()))?;
            let page = dir.join("cipherbench.1");
            crate::report::write_output(&page, &main_page(cmd)?)
        }
        None => crate::report::print(&main_page(cmd)?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn definitions_are_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn every_example_parses_and_fits_a_man_page() {
        for line in EXAMPLES.lines().skip(1) {
            assert!(line.len() + 5 <= 80, "too wide for man at 80 columns: {line}");
            let cmd = line.trim().split("  ").next().unwrap();
            let mut words: Vec<String> = Vec::new();
            for (i, part) in cmd.split('\'').enumerate() {
                if i % 2 == 1 {
                    words.push(part.to_string());
                } else {
                    words.extend(part.split_whitespace().map(String::from));
                }
            }
            Cli::try_parse_from(&words).unwrap_or_else(|e| panic!("{cmd}: {e}"));
        }
    }

    #[test]
    fn singular_flags_are_accepted() {
        let cli = Cli::try_parse_from(["cipherbench", "file", "--cipher", "aes-256-cbc", "--size", "1M"]).unwrap();
        match cli.command {
            Some(Command::File(f)) => assert_eq!(f.ciphers, ["aes-256-cbc"]),
            other => panic!("{other:?}"),
        }
        let cli = Cli::try_parse_from(["cipherbench", "tls", "--suite", "TLS_AES_128_GCM_SHA256", "--group", "X25519"]).unwrap();
        match cli.command {
            Some(Command::Tls(t)) => {
                assert_eq!(t.suites, ["TLS_AES_128_GCM_SHA256"]);
                assert_eq!(t.groups, ["X25519"]);
            }
            other => panic!("{other:?}"),
        }
        let cli = Cli::try_parse_from(["cipherbench", "ssh", "--cipher", "aes128-ctr", "--mac", "hmac-sha2-256"]).unwrap();
        match cli.command {
            Some(Command::Ssh(s)) => assert_eq!((s.ciphers, s.macs), (vec!["aes128-ctr".into()], vec!["hmac-sha2-256".into()])),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_flag_of_another_subcommand_is_named() {
        let cmd = Cli::command();
        let (tips, sure) = flag_hints(&cmd, Some("speed"), "--ciphers");
        assert_eq!(
            tips,
            ["name the algorithms as arguments: cipherbench speed aes-128-gcm chacha20-poly1305"]
        );
        assert!(sure);
        assert_eq!(
            flag_hints(&cmd, Some("tls"), "--host=example.org").0,
            ["--connect HOST:PORT measures a remote TLS server"]
        );
        assert_eq!(
            flag_hints(&cmd, Some("run"), "--full-matrix"),
            (
                vec!["--full-matrix is an option of cipherbench ssh, cipherbench tls".to_string()],
                true
            )
        );
        assert_eq!(flag_hints(&cmd, None, "--suites").0, ["--suites is an option of cipherbench tls"]);
        assert_eq!(flag_hints(&cmd, None, "--no-such-flag"), (vec![], false));
    }
}
