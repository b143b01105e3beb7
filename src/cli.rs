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
    /// Security policy: modern, intermediate (default), strict, legacy, none, or a TOML file.
    #[arg(long, global = true, value_name = "NAME|FILE")]
    pub policy: Option<String>,
    /// Config targets for `recommend`: openssl, gnutls, apache, nginx, haproxy, stunnel,
    /// curl, nzbget, ssh, sshd (comma-separated; default: all).
    #[arg(long = "for", global = true, value_delimiter = ',', value_name = "TARGET,...")]
    pub targets: Vec<String>,
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
}

#[derive(Debug, Clone, Args, Default)]
pub struct FleetArgs {
    /// Host exports (`--export-json` of `run`), or directories of them (`*.json`;
    /// `HOST.failed`/`HOST.unreachable` markers from profile.yml are reported too).
    #[arg(value_name = "FILES|DIR", required = true)]
    pub paths: Vec<PathBuf>,
    /// Write group_vars/all.yml (the fleet-wide config) and host_vars/HOST.yml (each
    /// host's class lines) under DIR, for deploy/ansible/apply.yml.
    #[arg(long, value_name = "DIR")]
    pub ansible_vars: Option<PathBuf>,
    /// Also write a self-contained HTML report to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_html: Option<PathBuf>,
}

#[derive(Debug, Clone, Args, Default)]
pub struct RecommendArgs {
    /// Run id (or unique prefix), or `latest`. Default: the latest run, measured now if none is stored.
    #[arg(long)]
    pub run: Option<String>,
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
    /// Libraries to measure, side by side: openssl, gnutls or openssl,gnutls.
    #[arg(long = "lib", value_enum, value_delimiter = ',', default_value = "openssl", value_name = "LIBS")]
    pub libraries: Vec<crate::measure::primitive::Library>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListWhat {
    /// Ciphers, AEADs, digests and MACs, and whether this OpenSSL can run them.
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
    /// `list tls`: which library's suites (openssl or gnutls).
    #[arg(long = "lib", value_enum, default_value = "openssl", value_name = "LIB")]
    pub library: crate::measure::primitive::Library,
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
    pub format: Option<crate::report::Format>,
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
    /// Exit non-zero when a result of B is slower than A beyond the 95% intervals.
    #[arg(long)]
    pub fail_on_regression: bool,
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
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub ciphers: Vec<String>,
    /// MACs to measure (OpenSSH names). Default: all. AEAD ciphers ignore them (MAC implicit).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub macs: Vec<String>,
    /// Key exchanges (OpenSSH names). Default: all.
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub kex: Vec<String>,
    /// Host-key algorithms for the handshake sweep. Default: one per key type
    /// (ssh-ed25519, ecdsa-sha2-nistp256, rsa-sha2-512); with --host, the client's default.
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
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
    #[arg(long, value_name = "[USER@]HOST")]
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
    #[arg(long, value_parser = file_size_arg, value_name = "SIZE")]
    pub size: Vec<Bytes>,
    /// Ciphers (OpenSSL EVP names, comma-separated). Default: the study's DES, RC2, Blowfish and
    /// AES-256 in ECB and CBC, plus aes-256-ctr, aes-256-gcm and chacha20-poly1305.
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub ciphers: Vec<String>,
    /// Every cipher and mode that can encrypt a file.
    #[arg(long, conflicts_with = "ciphers")]
    pub all: bool,
    /// memory: CPU only, the file already in RAM; disk: read the file and write the output, so I/O counts.
    #[arg(long, value_enum, default_value = "memory")]
    pub mode: crate::measure::file::IoMode,
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
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub suites: Vec<String>,
    /// Key-exchange groups: X25519, X448, P-256, P-384, P-521, ffdhe2048, ffdhe3072 (default: all).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub groups: Vec<String>,
    /// Certificate types: rsa-2048, rsa-3072, ecdsa-p256, ecdsa-p384, ed25519 (default: all;
    /// the first also serves the bulk sweep).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    pub certs: Vec<String>,
    /// Protocols: 1.2, 1.3 (default on loopback), 1.0, 1.1 (also probed on --connect).
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
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
    #[arg(long, value_name = "HOST:PORT")]
    pub connect: Option<String>,
    /// Server name to send (default: the host of --connect unless it is an address).
    #[arg(long, requires = "connect", value_name = "NAME")]
    pub sni: Option<String>,
    /// Also download PATH over HTTP/1.1 per accepted suite and time MB/s.
    #[arg(long, requires = "connect", value_name = "PATH")]
    pub http_get: Option<String>,
    /// Timeout for every connect, read and write.
    #[arg(long, default_value = "5s", value_parser = duration_arg, value_name = "DURATION")]
    pub timeout: Seconds,
    /// TLS libraries: openssl, gnutls, or openssl,gnutls for every client→server pair
    /// (the interop matrix).
    #[arg(long = "lib", value_enum, value_delimiter = ',', default_value = "openssl", value_name = "LIBS")]
    pub libraries: Vec<crate::measure::primitive::Library>,
    /// GnuTLS priority string for every GnuTLS end (e.g. 'NORMAL:-VERS-TLS1.3'): measures
    /// exactly what it negotiates instead of the suite sweep. Needs --lib gnutls.
    #[arg(long, value_name = "STRING", conflicts_with_all = ["suites", "groups", "protocols", "full_matrix"])]
    pub priority: Option<String>,
    /// Run only the benchmark server on ADDR (e.g. 127.0.0.1:4433) until Ctrl-C, for a
    /// peer such as gnutls-cli or another cipherbench; with --lib gnutls or openssl.
    #[arg(long, value_name = "ADDR", conflicts_with = "connect")]
    pub serve: Option<String>,
}
