//! The one document model (`schema: "cipherbench/1"`). JSON, CSV, Markdown, the
//! terminal and the SQLite history all serialise these types; none keeps a
//! parallel shape of its own.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod kind;
mod records;
pub use kind::Kind;
pub use records::{
    KeyBitsRecord, Now, OpinionRecord, RankedRecord, RankingRecord, ReasonRecord, RecommendationRecord, RefusedRecord, SourceRecord,
    Validated, VerdictRecord, VerdictSubject,
};

pub const SCHEMA: &str = "cipherbench/1";

/// The shape every measured figure is stored in (the engine, `measure::engine`,
/// makes it; reports, ranking and comparisons read it): one subject's samples,
/// in the metric's own unit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub median: f64,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    pub ci95_low: f64,
    pub ci95_high: f64,
    /// Number of samples.
    pub samples: usize,
    /// Coefficient of variation (stddev / mean).
    pub cv: f64,
}

/// A measured difference smaller than this fraction does not count, even when the
/// intervals do not overlap: nobody configures for a 5% difference, and between two
/// runs on a shared machine figures move by about that much while each run's own
/// samples agree to 1% (a neighbour on the other core, the CPU's clock). The
/// ranking orders by speed only beyond it, and `compare` calls a change only beyond
/// it (unless `--threshold` says otherwise): one rule for both.
pub const PRACTICAL: f64 = 0.05;

/// The reason of a subject a run set out to measure but whose budget ended
/// first (the history may stand in for it: `recommend::pool`).
pub const BUDGET_SKIPPED: &str = "skipped: the budget was spent first (raise --budget)";

/// The `mode` of TLS bulk records measured through a private nginx (HTTP/1.1
/// keep-alive GETs, `measure::tls::through`); that nginx worker's CPU per GB is
/// [`through_cpu_mode`]`("nginx")`.
/// They answer "what would my nginx gain", not "which suite is fastest": the
/// ranking leaves them out, and tables show them beside the loopback figures.
#[cfg_attr(not(test), allow(dead_code))]
pub const THROUGH_NGINX: &str = "through-nginx";

/// The `mode` of TLS bulk records measured through a private `software`
/// (`nginx`, `apache`, `haproxy`, `stunnel`): [`THROUGH_NGINX`] for nginx.
pub fn through_mode(software: &str) -> String {
    format!("through-{software}")
}

/// The `mode` of the server's CPU per GB measured through a private `software`.
pub fn through_cpu_mode(software: &str) -> String {
    format!("server-cpu-per-gb-through-{software}")
}

/// The software a throughput record's `mode` was measured through, if any.
pub fn through_software(mode: Option<&str>) -> Option<&str> {
    mode?.strip_prefix("through-")
}

/// The `mode` of TLS bulk records measured through a private NZBGet (downloads
/// of yEnc articles from a private news server, `measure::tls::nzbget`): like
/// [`THROUGH_NGINX`], NZBGet's figure for the diff, not a suite's; NZBGet is the
/// client, so there is no server CPU under [`through_cpu_mode`]`("nzbget")`.
pub const THROUGH_NZBGET: &str = "through-nzbget";

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Document {
    pub schema: String,
    pub run: RunInfo,
    pub results: Vec<ResultRecord>,
    #[serde(default)]
    pub verdicts: Vec<VerdictRecord>,
    #[serde(default)]
    pub recommendations: Vec<RecommendationRecord>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    Running,
    Complete,
    Interrupted,
    /// The run's deadline cut it: what it measured before is kept (exit 0, with a warning).
    Partial,
    Failed,
    /// Its process was gone (killed outright) when a later run looked.
    Abandoned,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Complete => "complete",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Partial => "partial",
            RunStatus::Failed => "failed",
            RunStatus::Abandoned => "abandoned",
        }
    }
    pub fn parse(s: &str) -> Option<RunStatus> {
        [
            RunStatus::Running,
            RunStatus::Complete,
            RunStatus::Interrupted,
            RunStatus::Partial,
            RunStatus::Failed,
            RunStatus::Abandoned,
        ]
        .into_iter()
        .find(|v| v.as_str() == s)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunInfo {
    pub id: String,
    /// RFC 3339, UTC.
    pub started_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    pub status: RunStatus,
    /// The subcommand that produced the run (`speed`, `run`, ...).
    pub command: String,
    pub host: Host,
    /// Library name -> runtime version.
    pub libraries: BTreeMap<String, String>,
    pub settings: serde_json::Value,
    /// What the host's TLS and SSH software offered during the run (asked once
    /// measuring is done): what `recommend` needs about the host, so that the
    /// document gives that host's answer on any machine. Empty in documents from
    /// before it was stored.
    #[serde(default, skip_serializing_if = "Capabilities::is_empty")]
    pub capabilities: Capabilities,
}

/// What the host's own software can be configured with, as discovery found it.
/// Each part is `None` when it was not known (not installed, not readable, or a
/// document from before capabilities were stored): `recommend` then falls back
/// on the document's own evidence, never on the machine it runs on.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capabilities {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub openssl: Option<OpenSslCapabilities>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub openssh: Option<OpenSshCapabilities>,
    /// The host-key algorithms the host's sshd can serve (`sshd -T` and its key
    /// files); `None` when they could not be read (no sshd, not root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sshd_hostkeys: Option<Vec<String>>,
    /// Why `sshd_hostkeys` is `None`, one sentence naming the real cause (not
    /// root, no /run/sshd, sshd not installed ...); `None` when they were read or
    /// the document does not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sshd_hostkeys_unread: Option<String>,
    /// The host's sshd's own defaults (`sshd -T` with an empty configuration):
    /// what its lines must not undercut nor go beyond; `None` when not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sshd_defaults: Option<SshLists>,
    /// Why `sshd_defaults` is `None`, one sentence naming the real cause.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sshd_defaults_unread: Option<String>,
    /// The TLS groups the host's GnuTLS accepts (`GROUP-…`, `gnutls-cli --list`);
    /// `None` when not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gnutls_groups: Option<Vec<String>>,
}

/// An OpenSSH configuration's four algorithm lists, in its own order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SshLists {
    #[serde(default)]
    pub ciphers: Vec<String>,
    #[serde(default)]
    pub macs: Vec<String>,
    #[serde(default)]
    pub kex: Vec<String>,
    #[serde(default)]
    pub hostkeys: Vec<String>,
}

impl Capabilities {
    pub fn is_empty(&self) -> bool {
        *self == Capabilities::default()
    }
}

/// The host's OpenSSL as a TLS server library.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenSslCapabilities {
    /// Every TLS suite it can offer (`openssl ciphers -V -stdname`, TLS 1.3 first);
    /// `None` when the `openssl` command could not be run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suites: Option<Vec<SuiteName>>,
    /// The TLS group names its libssl accepts, of the spellings discovery tries
    /// (`discover::openssl::GROUP_SPELLINGS`).
    #[serde(default)]
    pub groups: Vec<String>,
    /// Whether its group lists take preference tiers (`/`) and key-share marks
    /// (`*`), as OpenSSL 3.5's do.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tiers: bool,
    /// The groups its default server accepts (nothing configured: what nginx's
    /// `ssl_ecdh_curve auto` gives), canonical names, asked by handshakes;
    /// `None` when not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_groups: Option<Vec<String>>,
}

/// One TLS suite under IANA's and OpenSSL's names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuiteName {
    pub iana: String,
    pub openssl: String,
}

/// The host's OpenSSH client lists (`ssh -Q`), in its own order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenSshCapabilities {
    /// `ssh -V`.
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub ciphers: Vec<String>,
    #[serde(default)]
    pub macs: Vec<String>,
    #[serde(default)]
    pub kex: Vec<String>,
    #[serde(default)]
    pub hostkey_algorithms: Vec<String>,
}

/// The machine fingerprint that goes with every run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Host {
    pub cpu_model: String,
    pub cores: usize,
    /// Crypto-relevant CPU flags only (aes, pclmulqdq, avx2, ... / aes, pmull, sha2).
    pub cpu_flags: Vec<String>,
    pub kernel: String,
    pub arch: String,
    pub hostname: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    BytesPerSec,
    /// Operations per second (ML-KEM, ML-DSA primitives).
    OpsPerSec,
    HandshakesPerSec,
    Seconds,
    Accepted,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Unsupported,
    Failed,
}

/// What was measured. Each kind fills its own fields (`Kind::fields`); the rest
/// stay absent. Typed constructors per kind are in `model/kind.rs`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Subject {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub algorithm: Option<String>,
    /// `encrypt`, `decrypt`, `digest`, `mac`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
    /// TLS between two libraries: the server's library (`library` is the client's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_library: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suite: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub openssl_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cert: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cipher: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mac: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kex: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostkey: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
}

/// One measured subject and metric. Statistics are present when `status` is `ok`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResultRecord {
    pub kind: Kind,
    pub subject: Subject,
    pub metric: Metric,
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95_low: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95_high: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<usize>,
    /// Coefficient of variation of the samples.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cv: Option<f64>,
    /// The same metric over CPU time instead of wall time (median), e.g. bytes per
    /// CPU second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_median: Option<f64>,
    /// 95th percentile of the individual observations (handshake latency).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p95: Option<f64>,
    /// Set when the figure is divided by CPU time (single-thread primitives, as
    /// `openssl speed` does by default): the same metric over wall time (median).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_median: Option<f64>,
    /// The values the interval was made from (one per independent sample), kept
    /// in memory while the run lasts so that a race pools its samples with these
    /// (`measure::engine::race::pool`); not stored.
    #[serde(skip)]
    pub values: Vec<f64>,
    /// How many runs this figure pools (`recommend::pool`; 0 when it is one
    /// run's own): in memory only, for the evidence that needs between-run
    /// variation measured (`recommend::evidence`).
    #[serde(skip)]
    pub pooled_runs: usize,
    /// The per-session values of a subject measured in interleaved rounds (A B C,
    /// A B C …), each with its round's key, unique within the run (e.g.
    /// `ssh-bulk-1#3`): subjects sharing a round key were measured back to back,
    /// so the machine's drift hit them alike, and `recommend` may order them by
    /// their within-round ratios (`recommend::paired`). Empty when not measured
    /// in rounds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rounds: Vec<RoundValue>,
    /// SSH handshakes: CPU per login on each end, beside the wall figure above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handshake_cpu: Option<HandshakeCpu>,
    /// TLS handshakes: the bytes of the client's first flight (its ClientHello
    /// record, header included), as the library under test sends it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_hello_bytes: Option<u64>,
}

/// One session's value in one round of interleaved sessions (see
/// [`ResultRecord::rounds`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundValue {
    pub round: String,
    pub value: f64,
}

/// A CPU time per handshake: the mean over logins and its 95% interval (Student's
/// t). The mean, not the median: the server's figure comes in clock ticks, and the
/// mean of tick-rounded deltas stays unbiased where a median would not. Made by
/// `measure::engine::stats::mean_interval`, the one place it is computed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CpuFigure {
    pub mean: f64,
    pub ci95_low: f64,
    pub ci95_high: f64,
    pub samples: usize,
}

/// CPU seconds per SSH login on each end (`ssh-handshake` results).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HandshakeCpu {
    /// The `ssh` client process (its rusage from wait4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<CpuFigure>,
    /// The private sshd's per-connection processes (absent for a remote server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<CpuFigure>,
    /// Client and server added login by login.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<CpuFigure>,
    /// How each end was read.
    pub method: String,
}

impl ResultRecord {
    pub fn ok(kind: Kind, subject: Subject, metric: Metric, wall: &Summary, cpu: Option<&Summary>) -> Self {
        ResultRecord {
            kind,
            subject,
            metric,
            status: Status::Ok,
            reason: None,
            median: Some(wall.median),
            mean: Some(wall.mean),
            min: Some(wall.min),
            max: Some(wall.max),
            ci95_low: Some(wall.ci95_low),
            ci95_high: Some(wall.ci95_high),
            samples: Some(wall.samples),
            cv: Some(wall.cv),
            cpu_median: cpu.map(|c| c.median),
            p95: None,
            wall_median: None,
            handshake_cpu: None,
            client_hello_bytes: None,
            values: Vec::new(),
            pooled_runs: 0,
            rounds: Vec::new(),
        }
    }

    /// The record with the values its interval was made from (for pooling).
    pub fn with_values(mut self, values: Vec<f64>) -> Self {
        self.values = values;
        self
    }

    /// True for a subject the budget did not reach (recorded as failed, with a
    /// reason that says so): tables show "skipped", not "failed".
    pub fn was_skipped(&self) -> bool {
        self.status == Status::Failed && self.reason.as_deref().is_some_and(|r| r.starts_with("skipped:"))
    }

    pub fn not_ok(kind: Kind, subject: Subject, metric: Metric, status: Status, reason: impl Into<String>) -> Self {
        ResultRecord {
            kind,
            subject,
            metric,
            status,
            reason: Some(reason.into()),
            median: None,
            mean: None,
            min: None,
            max: None,
            ci95_low: None,
            ci95_high: None,
            samples: None,
            cv: None,
            cpu_median: None,
            p95: None,
            wall_median: None,
            handshake_cpu: None,
            client_hello_bytes: None,
            values: Vec::new(),
            pooled_runs: 0,
            rounds: Vec::new(),
        }
    }

    /// A feature-check result (`metric: accepted`): status ok, value 1 when both
    /// sides accept the subject and 0 when one refuses it (with the refusal as
    /// `reason`).
    pub fn accepted(kind: Kind, subject: Subject, accepted: bool, refusal: Option<String>) -> Self {
        let v = if accepted { 1.0 } else { 0.0 };
        ResultRecord {
            kind,
            subject,
            metric: Metric::Accepted,
            status: Status::Ok,
            reason: refusal,
            median: Some(v),
            mean: Some(v),
            min: Some(v),
            max: Some(v),
            ci95_low: Some(v),
            ci95_high: Some(v),
            samples: Some(1),
            cv: Some(0.0),
            cpu_median: None,
            p95: None,
            wall_median: None,
            handshake_cpu: None,
            client_hello_bytes: None,
            values: Vec::new(),
            pooled_runs: 0,
            rounds: Vec::new(),
        }
    }

    /// The wall-time summary back, for tie checks and ranking.
    pub fn summary(&self) -> Option<Summary> {
        Some(Summary {
            median: self.median?,
            mean: self.mean?,
            min: self.min?,
            max: self.max?,
            ci95_low: self.ci95_low?,
            ci95_high: self.ci95_high?,
            samples: self.samples?,
            cv: self.cv.unwrap_or(0.0),
        })
    }
}

/// A short label for a subject: its present fields, in model order.
pub fn subject_label(r: &ResultRecord) -> String {
    serde_json::to_value(&r.subject)
        .ok()
        .and_then(|v| v.as_object().cloned())
        .map(|m| {
            m.values()
                .map(|v| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string()))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

/// The run's noise for `kind` as stored in its settings (`settings.noise`: a
/// fraction per kind, written by `measure::engine::noise::settle`).
pub fn stored_noise(settings: &serde_json::Value, kind: Kind) -> Option<f64> {
    settings.get("noise")?.get(kind.name())?.as_f64()
}

/// The largest noise a run's settings store, over every kind.
pub fn largest_noise(settings: &serde_json::Value) -> Option<f64> {
    settings
        .get("noise")?
        .as_object()?
        .values()
        .filter_map(|v| v.as_f64())
        .fold(None, |acc: Option<f64>, x| Some(acc.map_or(x, |a| a.max(x))))
}

/// What the NZBGet the lines are for does with `ServerX.Cipher`, and the system
/// OpenSSL configuration its own file builds on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NzbgetInstalled {
    /// `nzbget -v`'s version (`21.0`); `None` when not known.
    pub version: Option<String>,
    /// The system openssl.cnf (`OPENSSLDIR/openssl.cnf`).
    pub system_cnf: String,
    /// The section its `openssl_conf` names (`openssl_init`).
    pub init_section: String,
    /// The system's `system_default` entries the file for NZBGet keeps (its
    /// own section replaces that one): Debian's `CipherString =
    /// DEFAULT:@SECLEVEL=2` ...; not those the file sets itself (`Ciphersuites`,
    /// `Groups`, `Curves`, `MinProtocol`, `MaxProtocol`).
    pub system_default: Vec<(String, String)>,
}

impl NzbgetInstalled {
    /// Whether this NZBGet gives ServerX.Cipher to the TLS 1.3 API too (25.4+).
    /// Unknown: no, and the lines that follow work with either.
    pub fn tls13_in_cipher(&self) -> bool {
        let Some(v) = &self.version else { return false };
        let mut parts = v.split(|c: char| !c.is_ascii_digit()).map(|p| p.parse::<u32>().unwrap_or(0));
        let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
        (major, minor) >= (25, 4)
    }
}
