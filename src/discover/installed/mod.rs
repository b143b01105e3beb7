//! The installed configuration: what the software on this machine is configured to
//! offer today, so that the answer can be a diff instead of lines pasted blind.
//!
//! This module is what every reader shares: the [`Installed`] value and its parts,
//! the bounded read of a configuration file ([`read_config`]), a config tool run
//! within the run's deadline ([`run`]), the program search, a listen address
//! ([`endpoint`]), the installed libssl's default client and groups ([`libssl`]),
//! and a tool's messages about included files ([`relay`]). Each software's own
//! reader is in its folder, `software/NAME/read.rs`.
//!
//! Why it is read this way:
//! - **Each program's own dump first** (`sshd -T`, `ssh -G`, `nginx -T`,
//!   `apache2ctl -D DUMP_INCLUDES`, `haproxy -c`, `openssl ciphers`, `gnutls-cli -l`):
//!   includes, defaults and `Match`-free effective values are the program's business,
//!   and a re-implementation would drift from it. Where a program cannot dump (not
//!   installed, not root, a file under review whose certificates do not exist yet),
//!   the file itself is parsed and the output says so in `notes`.
//! - **Where each value came from is kept** ([`Directive`]: file and line), so the
//!   recommended lines can be shown as a unified diff against the real file.
//! - **Discovery only looks.** No reader starts a daemon or writes a file other
//!   than a throw-away host key in a private temporary directory for `sshd -T`,
//!   and, as root, sshd's privilege-separation directory /run/sshd (empty, 0755,
//!   as its unit makes it) when sshd is installed but has never run.

pub mod endpoint;
pub mod libssl;
pub mod relay;

use crate::error::UsageError;
use anyhow::{Context, Result};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One software's effective configuration.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Installed {
    /// The `--for` name (`sshd`, `nginx`, ...).
    pub software: &'static str,
    /// The main configuration file, when there is one.
    pub file: Option<PathBuf>,
    /// How the values were obtained, e.g. `sshd -T -f /etc/ssh/sshd_config`.
    pub source: String,
    pub config: Config,
    /// The lines that set the values, for the unified diff.
    pub directives: Vec<Directive>,
    /// The line of `file` after which lines the file lacks are inserted (0: at the
    /// top); `None` when the file is unknown.
    pub insert_at: Option<usize>,
    /// What could not be read, and other caveats, one sentence each.
    pub notes: Vec<String>,
    /// Where the software's OpenSSL configuration comes from a systemd drop-in
    /// (NZBGet before 25.4: `OPENSSL_CONF`), what was read of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub openssl_env: Option<OpensslEnv>,
}

/// The `OPENSSL_CONF` a systemd unit's drop-ins give a service, and the file it
/// names, as read (NZBGet before 25.4 takes its TLS 1.3 order and groups from it).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct OpensslEnv {
    /// The root the system's files were read under: `/`, or ROOT for a
    /// `--config-from ROOT/etc/nzbget.conf` (a system under review, or a test's).
    pub root: PathBuf,
    /// The drop-in that sets `OPENSSL_CONF` last (its path on disk, under
    /// `root`), the line (1-based) and the value as written (a path on the system).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drop_in: Option<(PathBuf, usize, String)>,
    /// The file that value names (on disk, under `root`) and its text, when it
    /// could be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conf: Option<(PathBuf, String)>,
}

impl Installed {
    /// A configuration as its reader found it, before the lines that set it and
    /// the notes are added ([`Installed::with_lines`], [`Installed::with_notes`]).
    pub fn new(software: &'static str, file: Option<PathBuf>, source: impl Into<String>, config: Config) -> Installed {
        Installed {
            software,
            file,
            source: source.into(),
            config,
            directives: Vec::new(),
            insert_at: None,
            notes: Vec::new(),
            openssl_env: None,
        }
    }

    /// The lines that set the values, and where lines the file lacks go.
    pub fn with_lines(mut self, directives: Vec<Directive>, insert_at: Option<usize>) -> Installed {
        self.directives = directives;
        self.insert_at = insert_at;
        self
    }

    /// What could not be read, and other caveats.
    pub fn with_notes(mut self, notes: Vec<String>) -> Installed {
        self.notes = notes;
        self
    }
}

/// What a reader found in a TLS server's files: the settings, the lines that set
/// them, where new lines go, and caveats.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    pub config: TlsConfig,
    pub directives: Vec<Directive>,
    pub insert_at: Option<usize>,
    pub notes: Vec<String>,
}

impl Parsed {
    pub fn new(config: TlsConfig, directives: Vec<Directive>, insert_at: Option<usize>, notes: Vec<String>) -> Parsed {
        Parsed {
            config,
            directives,
            insert_at,
            notes,
        }
    }

    /// The [`Installed`] of `software`, read from `file` as `source` says.
    pub fn installed(self, software: &'static str, file: Option<PathBuf>, source: impl Into<String>) -> Installed {
        Installed::new(software, file, source, Config::Tls(self.config))
            .with_lines(self.directives, self.insert_at)
            .with_notes(self.notes)
    }
}

/// The settings that decide what is negotiated.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "protocol", rename_all = "lowercase")]
pub enum Config {
    Tls(TlsConfig),
    Ssh(SshConfig),
}

/// Which TLS library interprets a [`TlsConfig`].
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LinkedLibrary {
    #[default]
    Openssl,
    Gnutls,
}

/// A TLS endpoint's configuration; `None` means the library's default.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct TlsConfig {
    pub library: LinkedLibrary,
    /// Whether this end is the server (the usual peer is then a default client).
    pub server: bool,
    /// Enabled protocol versions, `TLSv1` ... `TLSv1.3`.
    pub protocols: Option<Vec<String>>,
    /// The OpenSSL cipher string for TLS ≤ 1.2, or the GnuTLS priority string.
    pub cipher_string: Option<String>,
    /// The OpenSSL TLS 1.3 suite list.
    pub ciphersuites: Option<String>,
    /// Key-exchange groups, `:`-separated.
    pub groups: Option<String>,
    /// The server enforces its own order (`ssl_prefer_server_ciphers on`, ...).
    pub server_order: bool,
    /// Where this server listens, from its own configuration (`127.0.0.1:443`,
    /// `[::1]:8443`; a wildcard address as the loopback one) and the name it serves
    /// (SNI): `check` asks it by a real handshake. `None` when not known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<Endpoint>,
    /// A client: the server it connects to, in words (NZBGet's `Server1 (news.example.com)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connects_to: Option<String>,
}

/// A TLS server's address as its configuration gives it.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Endpoint {
    /// `host:port`, resolved when it is asked.
    pub address: String,
    /// The first `server_name`, sent as SNI when it is a name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_name: Option<String>,
}

/// An SSH endpoint's effective algorithm lists, in its own order.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct SshConfig {
    pub server: bool,
    pub ciphers: Vec<String>,
    pub macs: Vec<String>,
    pub kex: Vec<String>,
    pub hostkeys: Vec<String>,
}

/// One configuration line that sets a value.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Directive {
    /// The keyword as the emitters write it, lower-cased (`ssl_ciphers`,
    /// `ssl_conf_command ciphersuites`, `ciphers`, `sslciphersuite tlsv1.3`).
    pub keyword: String,
    pub file: PathBuf,
    /// 1-based line number.
    pub line: usize,
    pub text: String,
}

/// TLS protocol names in order, as OpenSSL-based servers write them.
pub const TLS_VERSIONS: &[&str] = &["SSLv3", "TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"];

/// The protocols from `min` to `max` (inclusive), by [`TLS_VERSIONS`] names.
pub fn version_range(min: Option<&str>, max: Option<&str>) -> Vec<String> {
    let pos = |v: Option<&str>, d: usize| {
        v.and_then(|v| TLS_VERSIONS.iter().position(|x| x.eq_ignore_ascii_case(&normalise_version(v))))
            .unwrap_or(d)
    };
    let (lo, hi) = (pos(min, 1), pos(max, TLS_VERSIONS.len() - 1));
    TLS_VERSIONS[lo.min(hi)..=hi].iter().map(|s| s.to_string()).collect()
}

/// `TLSv1_2`, `tlsv1.2`, `TLS1.2`, `1.2` → `TLSv1.2`.
pub fn normalise_version(v: &str) -> String {
    let v = v.trim().to_ascii_lowercase().replace('_', ".");
    let num = v.trim_start_matches("tlsv").trim_start_matches("tls").trim_start_matches('v');
    match num {
        "sslv3" | "ssl3" | "ssl3.0" => "SSLv3".into(),
        "1" | "1.0" => "TLSv1".into(),
        "1.1" => "TLSv1.1".into(),
        "1.2" => "TLSv1.2".into(),
        "1.3" => "TLSv1.3".into(),
        _ => v,
    }
}

/// The largest configuration file read (docs/commands.md, `check`): a real
/// configuration is a few KiB; a bigger one is refused before it is read.
pub const MAX_CONFIG_BYTES: u64 = 16 << 20;

/// How much of a configuration is read between two looks at the run's deadline.
const READ_CHUNK: usize = 64 << 10;

/// How long a configuration may take to read once the run's deadline has passed.
const READ_AFTER_CUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Reads a configuration file; an unreadable file is bad input that names it.
///
/// Bounded in size and time: the file is opened without blocking (a FIFO or a
/// device does not wait for a writer), and the opened descriptor's metadata (not
/// a second look at the path, which could have changed) must show a regular
/// file of at most [`MAX_CONFIG_BYTES`]; anything else is refused by name before
/// a byte is read. The read itself takes at most that many bytes, in chunks,
/// and stops at the run's deadline (or [`READ_AFTER_CUT`] from its start, when
/// it starts after the run's cut: the report's patch reads the file again).
pub fn read_config(path: &Path) -> Result<String, UsageError> {
    use std::io::Read;
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let refused = |why: String| {
        UsageError::Invalid(format!(
            "cannot read the configuration file {}: {why}",
            crate::untrusted::shown(&path.display().to_string())
        ))
    };
    // The run's deadline; a read after the run's cut (the report's patch reads
    // the file again) gets a few seconds of its own instead.
    let by = match crate::deadline::run() {
        d if d.expired() => crate::deadline::Deadline::after(READ_AFTER_CUT),
        d => d,
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| refused(e.to_string()))?;
    let meta = file.metadata().map_err(|e| refused(e.to_string()))?;
    let t = meta.file_type();
    if !t.is_file() {
        let kind = if t.is_dir() {
            "a directory"
        } else if t.is_fifo() {
            "a FIFO (a pipe)"
        } else if t.is_char_device() {
            "a character device"
        } else if t.is_block_device() {
            "a block device"
        } else if t.is_socket() {
            "a socket"
        } else {
            "not a file"
        };
        return Err(refused(format!("it is {kind}, not a regular file; only a regular file is read")));
    }
    let too_big = |size: String| refused(format!("it holds {size}, over the limit of 16 MiB ({MAX_CONFIG_BYTES} bytes)"));
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(too_big(format!("{} bytes", meta.len())));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    let mut limited = file.take(MAX_CONFIG_BYTES + 1);
    let mut chunk = vec![0u8; READ_CHUNK];
    loop {
        if by.expired() {
            return Err(refused(format!("{} passed while it was read", crate::deadline::describe())));
        }
        match limited.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => bytes.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(refused(e.to_string())),
        }
    }
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        // It grew while it was read.
        return Err(too_big("more bytes than that".into()));
    }
    String::from_utf8(bytes).map_err(|_| refused("stream did not contain valid UTF-8".into()))
}

/// How long a config tool (`nginx -T`, `sshd -T`, `apache2ctl -t`, `haproxy -c`,
/// `ssh -G`) may take, within the run's deadline: a config that makes it hang (an
/// include of a FIFO, say) cannot hold the run.
const TOOL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// What a config tool said, and how it ended.
pub(crate) struct Ran {
    pub ok: bool,
    pub out: String,
    pub err: String,
    /// "exit status 1", "killed by signal 11 (SIGSEGV)".
    pub status: String,
}

impl Ran {
    /// What the tool said about the configuration `named`, with each message
    /// that quotes another file (an `Include`d one) replaced by that file and
    /// line ([`relay::relay`]): only then may it reach a note or an error.
    pub fn about(mut self, named: &Path) -> Ran {
        self.err = relay::relay(&self.err, named);
        self
    }

    /// How it failed, for a message: its status and the last lines of its stderr
    /// (escaped: a config file's contents reach a terminal through this).
    pub fn why(&self) -> String {
        let lines: Vec<&str> = self.err.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        let tail = lines[lines.len().saturating_sub(5)..].join(" / ");
        let said = crate::untrusted::bounded(&tail, 2000);
        if said.is_empty() {
            format!("{}, nothing on stderr", self.status)
        } else {
            format!("{}: {}", self.status, crate::untrusted::shown(&said))
        }
    }
}

/// Runs a config tool until it ends or its timeout (within the run's deadline)
/// passes; a tool that had to be stopped is an error naming it.
pub(crate) fn run(program: &str, args: &[&str]) -> Result<Ran> {
    run_env(program, args, &[])
}

/// [`run`] with these environment variables set.
pub(crate) fn run_env(program: &str, args: &[&str], env: &[(&str, &str)]) -> Result<Ran> {
    let mut cmd = Command::new(program);
    cmd.args(args);
    cmd.envs(env.iter().copied());
    let said = crate::backend::process::output_by(&mut cmd, crate::deadline::op(TOOL_TIMEOUT))
        .with_context(|| format!("cannot run {program}"))?
        .ok_or_else(|| anyhow::anyhow!(stopped(&format!("{program} {}", args.join(" ")), crate::deadline::run_expired())))?;
    Ok(Ran {
        ok: said.status.success(),
        out: String::from_utf8_lossy(&said.stdout).into_owned(),
        err: String::from_utf8_lossy(&said.stderr).into_owned(),
        status: crate::backend::process::describe_status(said.status),
    })
}

/// Why a config tool (`how`, as run) was stopped: the run's budget spent (the
/// tool is not slow; a larger --budget reads it), or the tool's own timeout.
fn stopped(how: &str, budget_spent: bool) -> String {
    if budget_spent {
        format!(
            "`{how}` was stopped at {}, before it finished: the run's budget was spent (raise --budget)",
            crate::deadline::describe()
        )
    } else {
        format!("`{how}` did not finish within {} s and was stopped", TOOL_TIMEOUT.as_secs())
    }
}

/// The first of `candidates` that exists (programs in sbin are not on a user's PATH).
pub(crate) fn find_program(candidates: &[&str]) -> Option<String> {
    for c in candidates {
        if c.contains('/') {
            if Path::new(c).exists() {
                return Some(c.to_string());
            }
        } else {
            for dir in ["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin", "/sbin", "/bin"] {
                let p = Path::new(dir).join(c);
                if p.exists() {
                    return Some(p.display().to_string());
                }
            }
        }
    }
    None
}

/// The first two words of a configuration line, lower-cased (blanks, `=`, `:` or
/// `;` between them): a keyword is one or both.
pub fn leading_words(line: &str) -> Vec<String> {
    line.split(|c: char| c.is_whitespace() || c == '=' || c == ':' || c == ';')
        .filter(|t| !t.is_empty())
        .take(2)
        .map(|t| t.to_ascii_lowercase())
        .collect()
}

/// Lines of `text` (from `file`) whose keyword is one of `keywords` (lower-case;
/// two-word keywords such as `ssl_conf_command ciphersuites` match two tokens).
/// Comments start with `comment`; keyword and value are separated by blanks, `=`
/// or `:`.
pub fn scan_directives(file: &Path, text: &str, keywords: &[&str], comment: char) -> Vec<Directive> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with(comment) {
            continue;
        }
        let tokens = leading_words(line);
        let Some(first) = tokens.first() else { continue };
        let two = tokens.join(" ");
        let hit = keywords
            .iter()
            .find(|k| **k == two)
            .or_else(|| keywords.iter().find(|k| *k == first));
        if let Some(k) = hit {
            out.push(Directive {
                keyword: k.to_string(),
                file: file.to_path_buf(),
                line: i + 1,
                text: raw.to_string(),
            });
        }
    }
    out
}

/// The value after the keyword of a `keyword value` line (blanks, `=` or `:` between).
pub fn value_after<'a>(line: &'a str, keyword: &str) -> Option<&'a str> {
    let l = line.trim();
    let head = l.get(..keyword.len())?;
    if !head.eq_ignore_ascii_case(keyword) {
        return None;
    }
    let rest = &l[keyword.len()..];
    if !rest.is_empty() && !rest.starts_with(|c: char| c.is_whitespace() || c == '=' || c == ':') {
        return None;
    }
    let rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '=' || c == ':');
    let rest = rest.split('#').next().unwrap_or("").trim().trim_end_matches(';').trim();
    Some(rest)
}

/// Guesses the software a configuration file belongs to from its name and content
/// (for `--config-from FILE` without `--for`).
pub fn guess(path: &Path, text: &str) -> Option<&'static str> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let has = |k: &str| text.lines().any(|l| l.trim_start().to_ascii_lowercase().starts_with(k));
    if name.contains("sshd") {
        return Some("sshd");
    }
    if name.starts_with("ssh_config") || name == "config" && has("host ") {
        return Some("ssh");
    }
    if name.contains("nginx") || has("ssl_ciphers") || has("ssl_protocols") || has("server {") {
        return Some("nginx");
    }
    let apache = ["sslciphersuite", "sslprotocol", "loadmodule ", "serverroot ", "<virtualhost "];
    if name.contains("apache") || name.contains("httpd") || apache.iter().any(|k| has(k)) {
        return Some("apache");
    }
    if name.contains("haproxy") || has("ssl-default-bind") {
        return Some("haproxy");
    }
    if name.contains("stunnel") || (has("accept") && has("connect") && has("[")) {
        return Some("stunnel");
    }
    if name.contains("nzbget") || text.contains(".Cipher=") {
        return Some("nzbget");
    }
    if name.contains("openssl") || has("cipherstring") {
        return Some("openssl");
    }
    if name.contains("gnutls") || has("default-priority-string") {
        return Some("gnutls");
    }
    if has("ciphers ") || has("kexalgorithms") || has("macs ") {
        return Some("sshd");
    }
    None
}

#[cfg(test)]
mod tests {
    /// A tool stopped by the run's deadline blames the budget, not the tool (the
    /// main job's `not read: sshd: … did not finish in time` with a small budget).
    #[test]
    fn a_tool_stopped_by_the_budget_says_so() {
        let how = "/usr/sbin/sshd -T -f /etc/ssh/sshd_config";
        let by_budget = super::stopped(how, true);
        assert!(by_budget.contains("the run's budget was spent (raise --budget)"), "{by_budget}");
        assert!(!by_budget.contains("did not finish"), "{by_budget}");
        let by_timeout = super::stopped(how, false);
        assert!(
            by_timeout.contains("did not finish within 60 s") && !by_timeout.contains("budget"),
            "{by_timeout}"
        );
    }

    use super::*;

    #[test]
    fn versions_normalise_and_range() {
        assert_eq!(normalise_version("TLSv1_2"), "TLSv1.2");
        assert_eq!(normalise_version("tls1.3"), "TLSv1.3");
        assert_eq!(normalise_version("TLSv1"), "TLSv1");
        assert_eq!(version_range(Some("TLSv1.2"), None), vec!["TLSv1.2", "TLSv1.3"]);
        assert_eq!(version_range(Some("TLSv1"), Some("TLSv1.2")), vec!["TLSv1", "TLSv1.1", "TLSv1.2"]);
    }

    #[test]
    fn directives_match_one_and_two_word_keywords() {
        let text =
            "  ssl_ciphers HIGH;\n# ssl_ciphers LOW;\nssl_conf_command Ciphersuites TLS_AES_128_GCM_SHA256;\nssl_conf_command Options X;\n";
        let d = scan_directives(Path::new("/x"), text, &["ssl_ciphers", "ssl_conf_command ciphersuites"], '#');
        assert_eq!(d.len(), 2);
        assert_eq!((d[0].keyword.as_str(), d[0].line), ("ssl_ciphers", 1));
        assert_eq!((d[1].keyword.as_str(), d[1].line), ("ssl_conf_command ciphersuites", 3));
        assert_eq!(value_after("ciphers = AES:!aNULL", "ciphers"), Some("AES:!aNULL"));
        assert_eq!(value_after("ciphersuites = X", "ciphers"), None);
    }

    #[test]
    fn guesses_software_from_file() {
        assert_eq!(guess(Path::new("/etc/ssh/sshd_config"), ""), Some("sshd"));
        assert_eq!(guess(Path::new("/tmp/site.conf"), "server {\n ssl_ciphers X;\n}"), Some("nginx"));
        assert_eq!(
            guess(Path::new("/tmp/x.conf"), "global\n ssl-default-bind-ciphers X\n"),
            Some("haproxy")
        );
        assert_eq!(guess(Path::new("/tmp/x.conf"), "Server1.Cipher=RC4-MD5\n"), Some("nzbget"));
        assert_eq!(
            guess(Path::new("/tmp/main.conf"), "ServerRoot /tmp\nInclude /tmp/site.conf\n"),
            Some("apache")
        );
        assert_eq!(
            guess(Path::new("/tmp/tls.conf"), "[https]\naccept = 443\nconnect = 80\n"),
            Some("stunnel")
        );
    }
}
