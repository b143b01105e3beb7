//! What the local OpenSSH offers: `ssh -V`, the `ssh -Q` lists, which ciphers are
//! AEAD (their MAC is implicit), and where `sshd` lives. Discovery only looks.

use crate::backend::process::{output_within, QUERY_LIMIT};
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Environment override for the `sshd` binary (absolute path), e.g. for tests.
pub const SSHD_ENV: &str = "CIPHERBENCH_SSHD";
/// Environment override for the `ssh` client binary.
pub const SSH_ENV: &str = "CIPHERBENCH_SSH";

/// Where `sshd` usually is; it is never on an ordinary user's PATH.
const SSHD_CANDIDATES: &[&str] = &[
    "/usr/sbin/sshd",
    "/usr/local/sbin/sshd",
    "/sbin/sshd",
    "/usr/bin/sshd",
    "/usr/local/bin/sshd",
];

pub use crate::backend::openssh::OpenSsh;

/// The host-key algorithms swept by default: one per key type.
pub const DEFAULT_HOSTKEYS: &[&str] = &["ssh-ed25519", "ecdsa-sha2-nistp256", "rsa-sha2-512"];

/// The `ssh` client to run: `$CIPHERBENCH_SSH` or `ssh` on PATH.
pub fn ssh_binary() -> PathBuf {
    std::env::var_os(SSH_ENV).map(PathBuf::from).unwrap_or_else(|| PathBuf::from("ssh"))
}

/// Queries the local client. Fails with the package name when `ssh` is missing.
pub fn discover() -> Result<OpenSsh> {
    let ssh = ssh_binary();
    let v = output_within(Command::new(&ssh).arg("-V"), QUERY_LIMIT)
        .map_err(|e| {
            // Only a program that is not there is a package to install.
            let hint = match e.raw_os_error() {
                Some(libc::ENOENT) => "; install the package openssh-client (e.g. `apt-get install openssh-client`)",
                _ => "",
            };
            anyhow::anyhow!("cannot run the OpenSSH client '{}': {e}{hint}", ssh.display())
        })?
        .ok_or_else(|| anyhow::anyhow!("'{} -V' did not finish in time and was stopped", ssh.display()))?;
    // `ssh -V` prints to stderr.
    let version = String::from_utf8_lossy(if v.stderr.is_empty() { &v.stdout } else { &v.stderr })
        .trim()
        .to_string();
    if !version.starts_with("OpenSSH") {
        bail!("'{}' is not OpenSSH (ssh -V said: {version})", ssh.display());
    }
    let q = |what: &str| -> Result<Vec<String>> {
        let out = output_within(Command::new(&ssh).args(["-Q", what]), QUERY_LIMIT)
            .with_context(|| format!("ssh -Q {what}"))?
            .with_context(|| format!("ssh -Q {what} did not finish in time and was stopped"))?;
        if !out.status.success() {
            return Ok(Vec::new());
        }
        Ok(parse_list(&String::from_utf8_lossy(&out.stdout)))
    };
    let info = OpenSsh {
        version,
        ciphers: q("cipher")?,
        aead: q("cipher-auth")?,
        macs: q("mac")?,
        kex: q("kex")?,
        keys: q("key")?,
        hostkey_algorithms: q("HostKeyAlgorithms")?,
        pubkey_algorithms: q("PubkeyAcceptedAlgorithms")?,
        ssh,
    };
    if info.ciphers.is_empty() || info.kex.is_empty() {
        bail!("'{}' answered no ciphers or key exchanges to `ssh -Q`", info.ssh.display());
    }
    Ok(info)
}

/// The client's lists as a run stores them (`None` without an OpenSSH client).
/// Only the lists `recommend` reads, asked side by side.
pub fn capabilities() -> Option<crate::model::OpenSshCapabilities> {
    let ssh = ssh_binary();
    let q = |what: &str| -> Option<Vec<String>> {
        let out = output_within(Command::new(&ssh).args(["-Q", what]), QUERY_LIMIT).ok()??;
        Some(if out.status.success() {
            parse_list(&String::from_utf8_lossy(&out.stdout))
        } else {
            Vec::new()
        })
    };
    let (version, [ciphers, macs, kex, hostkey_algorithms]) = std::thread::scope(|s| {
        let lists = ["cipher", "mac", "kex", "HostKeyAlgorithms"].map(|w| s.spawn(move || q(w)));
        let v = output_within(Command::new(&ssh).arg("-V"), QUERY_LIMIT).ok().flatten();
        (v, lists.map(|h| h.join().ok().flatten()))
    });
    let v = version?;
    // `ssh -V` prints to stderr.
    let version = String::from_utf8_lossy(if v.stderr.is_empty() { &v.stdout } else { &v.stderr })
        .trim()
        .to_string();
    let (ciphers, kex) = (ciphers?, kex?);
    if !version.starts_with("OpenSSH") || ciphers.is_empty() || kex.is_empty() {
        return None;
    }
    Some(crate::model::OpenSshCapabilities {
        version,
        ciphers,
        macs: macs?,
        kex,
        hostkey_algorithms: hostkey_algorithms?,
    })
}

/// The sshd configuration `server_hostkey_algorithms` reads instead of the
/// system's (`sshd -T -f FILE`), e.g. to ask about another server's keys.
pub const SSHD_CONFIG_ENV: &str = "CIPHERBENCH_SSHD_CONFIG";

/// The host-key algorithms this machine's sshd can serve: one or more per key in
/// its `HostKey` files (an RSA key serves rsa-sha2-512, rsa-sha2-256 and ssh-rsa)
/// and per `HostCertificate`, read from `sshd -T` and the keys' `.pub` files.
/// When sshd or its keys cannot be read (not installed, not root, no /run/sshd),
/// why, in one sentence that names the real cause.
pub fn server_hostkey_algorithms() -> Result<Vec<String>, String> {
    let sshd = find_sshd().map_err(|_| sshd_missing())?;
    crate::backend::openssh::daemon::ensure_privsep_dir().map_err(|e| format!("{e:#}"))?;
    let mut cmd = Command::new(&sshd);
    cmd.arg("-T");
    if let Some(f) = std::env::var_os(SSHD_CONFIG_ENV) {
        cmd.arg("-f").arg(f);
    }
    let out = sshd_t(&sshd, &mut cmd)?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut algs = Vec::new();
    let mut keys = 0;
    for line in text.lines() {
        let mut it = line.splitn(2, ' ');
        let (Some(word), Some(path)) = (it.next(), it.next()) else {
            continue;
        };
        // Keywords in any case: OpenSSH 10.6 prints `HostKey`.
        let hostkey = word.eq_ignore_ascii_case("hostkey");
        if !hostkey && !word.eq_ignore_ascii_case("hostcertificate") {
            continue;
        }
        let path = Path::new(path.trim());
        let public = if hostkey {
            let mut p = path.as_os_str().to_owned();
            p.push(".pub");
            std::fs::read_to_string(&p).ok().or_else(|| {
                let o = output_within(Command::new("ssh-keygen").arg("-y").arg("-f").arg(path), QUERY_LIMIT).ok()??;
                o.status.success().then(|| String::from_utf8_lossy(&o.stdout).into_owned())
            })
        } else {
            std::fs::read_to_string(path).ok()
        };
        let Some(kind) = public.as_deref().and_then(|p| p.split_whitespace().next()).map(str::to_string) else {
            continue;
        };
        keys += 1;
        for a in key_algorithms(&kind) {
            if !algs.contains(&a) {
                algs.push(a);
            }
        }
    }
    if keys == 0 {
        return Err("none of the host keys `sshd -T` names could be read".to_string());
    }
    Ok(algs)
}

/// Why sshd cannot be read when there is none.
const NO_SSHD: &str = "no sshd is installed (openssh-server)";

/// Why no sshd was found: the override that names none, or none installed.
fn sshd_missing() -> String {
    match std::env::var_os(SSHD_ENV) {
        Some(p) => format!("{SSHD_ENV}={} is not an executable sshd", p.to_string_lossy()),
        None => NO_SSHD.to_string(),
    }
}

/// `sshd -T` (`cmd`) run to completion and successful, or why not: sshd's own
/// last line of complaint (one line, hostile characters escaped, bounded), with
/// "not running as root" where sshd wants root (its host keys are root's).
fn sshd_t(sshd: &Path, cmd: &mut Command) -> Result<crate::backend::process::Said, String> {
    let out = output_within(cmd, QUERY_LIMIT)
        .map_err(|e| format!("cannot run {}: {e}", sshd.display()))?
        .ok_or_else(|| "`sshd -T` did not finish in time and was stopped".to_string())?;
    if out.status.success() {
        return Ok(out);
    }
    let said = String::from_utf8_lossy(&out.stderr);
    let last = said.lines().map(str::trim).rfind(|l| !l.is_empty()).unwrap_or("nothing");
    let last = crate::untrusted::shown(&crate::untrusted::bounded(last, 300)).into_owned();
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let who = if root { "" } else { "not running as root: " };
    Err(format!("{who}`sshd -T` refused (it said: {last})"))
}

/// The signature algorithms a key (or certificate) of type `kind` serves.
pub fn key_algorithms(kind: &str) -> Vec<String> {
    match kind {
        "ssh-rsa" => vec!["rsa-sha2-512".into(), "rsa-sha2-256".into(), "ssh-rsa".into()],
        "ssh-rsa-cert-v01@openssh.com" => vec![
            "rsa-sha2-512-cert-v01@openssh.com".into(),
            "rsa-sha2-256-cert-v01@openssh.com".into(),
            "ssh-rsa-cert-v01@openssh.com".into(),
        ],
        other => vec![other.to_string()],
    }
}

/// One name per line; blank lines dropped.
pub fn parse_list(s: &str) -> Vec<String> {
    s.lines().map(str::trim).filter(|l| !l.is_empty()).map(String::from).collect()
}

/// The absolute path of `sshd`: `$CIPHERBENCH_SSHD`, the usual sbin places, then PATH.
/// Missing → an error that names the package.
pub fn find_sshd() -> Result<PathBuf> {
    let missing = |looked: &str| {
        anyhow::anyhow!(
            "sshd not found ({looked}); cipherbench starts a private sshd on 127.0.0.1 for its SSH measurements: \
             install the package openssh-server (e.g. `apt-get install openssh-server`), or use --host to measure a remote server"
        )
    };
    if let Some(p) = std::env::var_os(SSHD_ENV) {
        let p = PathBuf::from(p);
        if !p.is_absolute() {
            bail!(
                "{SSHD_ENV} must be an absolute path (sshd re-executes itself by it), got '{}'",
                p.display()
            );
        }
        return if is_executable(&p) {
            Ok(p)
        } else {
            Err(missing(&format!("{SSHD_ENV}={} does not exist or is not executable", p.display())))
        };
    }
    for c in SSHD_CANDIDATES {
        if is_executable(Path::new(c)) {
            return Ok(PathBuf::from(c));
        }
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let p = dir.join("sshd");
            if p.is_absolute() && is_executable(&p) {
                return Ok(p);
            }
        }
    }
    Err(missing(&format!("looked in {} and PATH", SSHD_CANDIDATES.join(", "))))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The host's sshd's own defaults: `sshd -T` with an empty configuration and a
/// throw-away host key (so that it needs no root). When sshd cannot run, why, in
/// one sentence that names the real cause.
pub fn sshd_defaults() -> Result<crate::model::SshLists, String> {
    let sshd = find_sshd().map_err(|_| sshd_missing())?;
    // As root, `sshd -T` needs /run/sshd even when no sshd runs.
    crate::backend::openssh::daemon::ensure_privsep_dir().map_err(|e| format!("{e:#}"))?;
    let dir = tempfile::tempdir().map_err(|e| format!("no temporary directory for a throw-away host key: {e}"))?;
    let key = dir.path().join("hostkey");
    let made = output_within(
        Command::new("ssh-keygen").args(["-q", "-t", "ed25519", "-N", "", "-f"]).arg(&key),
        QUERY_LIMIT,
    );
    if !matches!(made, Ok(Some(ref m)) if m.status.success()) {
        return Err("`ssh-keygen` could not make a throw-away host key for `sshd -T`".to_string());
    }
    let mut cmd = Command::new(&sshd);
    cmd.args(["-T", "-f", "/dev/null", "-h"]).arg(&key);
    let out = sshd_t(&sshd, &mut cmd)?;
    parse_sshd_lists(&String::from_utf8_lossy(&out.stdout))
        .ok_or_else(|| "`sshd -T` did not print all of Ciphers, MACs, KexAlgorithms and HostKeyAlgorithms".to_string())
}

/// The four lists of `sshd -T` output; `None` when one is missing.
pub fn parse_sshd_lists(text: &str) -> Option<crate::model::SshLists> {
    let list = |word: &str| {
        crate::backend::openssh::dump_value(text, word).map(|v| {
            v.trim()
                .split(',')
                .filter(|x| !x.is_empty())
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
    };
    Some(crate::model::SshLists {
        ciphers: list("ciphers")?,
        macs: list("macs")?,
        kex: list("kexalgorithms")?,
        hostkeys: list("hostkeyalgorithms")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_query_lists() {
        assert_eq!(
            parse_list("aes128-ctr\n\n aes256-gcm@openssh.com \n"),
            vec!["aes128-ctr", "aes256-gcm@openssh.com"]
        );
    }

    #[test]
    fn discovers_the_local_client() {
        let o = discover().expect("openssh-client is installed here");
        assert!(o.version.starts_with("OpenSSH_"), "{}", o.version);
        assert!(o.ciphers.iter().any(|c| c == "aes128-ctr"), "{:?}", o.ciphers);
        // Every AEAD is a cipher, and chacha20-poly1305 is one on every OpenSSH since 6.5.
        assert!(o.aead.iter().all(|a| o.ciphers.contains(a)));
        assert!(o.is_aead("chacha20-poly1305@openssh.com"));
        assert!(!o.is_aead("aes128-ctr"));
        assert!(o.macs.iter().any(|m| m.starts_with("hmac-sha2-256")));
        assert!(o.kex.contains(&o.default_kex()));
        assert!(o.private_hostkeys().contains(&"ssh-ed25519".to_string()));
        // What a run stores is the same client's lists.
        let c = capabilities().expect("the stored lists");
        assert_eq!((c.version, c.ciphers, c.macs), (o.version, o.ciphers, o.macs));
        assert_eq!((c.kex, c.hostkey_algorithms), (o.kex, o.hostkey_algorithms));
    }

    #[test]
    fn sshd_is_found_by_absolute_path() {
        let p = find_sshd().expect("openssh-server is installed here");
        assert!(p.is_absolute());
    }

    #[test]
    fn sshd_t_lists_are_parsed_and_a_missing_one_is_none() {
        let text = "port 22\nciphers chacha20-poly1305@openssh.com,aes128-ctr\nmacs hmac-sha2-256\n\
                    kexalgorithms mlkem768x25519-sha256,curve25519-sha256\nhostkeyalgorithms ssh-ed25519\n\
                    casignaturealgorithms ssh-ed25519\n";
        let l = parse_sshd_lists(text).unwrap();
        assert_eq!(l.kex, ["mlkem768x25519-sha256", "curve25519-sha256"]);
        assert_eq!(l.ciphers, ["chacha20-poly1305@openssh.com", "aes128-ctr"]);
        assert_eq!(l.hostkeys, ["ssh-ed25519"]);
        assert!(parse_sshd_lists("ciphers aes128-ctr\nmacs hmac-sha2-256\n").is_none());
    }

    /// The host's own sshd: its defaults are read without root, and on OpenSSH 9.2
    /// and 10.0 they never list a key exchange with SHA-1.
    #[test]
    fn sshd_defaults_are_read_from_the_installed_sshd() {
        let d = match sshd_defaults() {
            Ok(d) => d,
            Err(why) if why == NO_SSHD => return crate::testing::missing("sshd (openssh-server), to read its defaults"),
            Err(why) => panic!("{why}"),
        };
        assert!(d.kex.iter().any(|k| k == "curve25519-sha256"), "{d:?}");
        assert!(!d.kex.iter().any(|k| k.contains("sha1")), "{d:?}");
        assert!(d.ciphers.iter().any(|c| c == "aes128-gcm@openssh.com"), "{d:?}");
        assert!(!d.macs.is_empty() && !d.hostkeys.is_empty(), "{d:?}");
    }
}
