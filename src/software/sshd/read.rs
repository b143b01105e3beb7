//! sshd: `sshd -T` prints the effective configuration (defaults, `Include`s and
//! `+`/`-`/`^` list edits resolved). It refuses to run without a loadable host key,
//! which an ordinary user never has (`/etc/ssh/ssh_host_*_key` is 0600 root): then
//! it is run again with a throw-away host key added, and the keys it could not read
//! are named in the notes. The algorithm lists do not depend on the host keys.
//! As root, sshd also insists on its privilege-separation directory (/run/sshd),
//! which its unit makes when it starts: it is made here, as the unit would, when
//! sshd is installed but not running.

use crate::discover::installed::{self as inst, read_config, run, scan_directives, Config, Installed, SshConfig};
use anyhow::Result;
use std::path::{Path, PathBuf};

pub const DEFAULT_FILE: &str = "/etc/ssh/sshd_config";
/// The keywords that decide what is negotiated, as `sshd -T` prints them.
pub const KEYWORDS: &[&str] = &["ciphers", "macs", "kexalgorithms", "hostkeyalgorithms"];

pub use crate::backend::openssh::dump_value;

/// The four lists from `sshd -T` / `ssh -G` output (`keyword value` lines,
/// keywords in any case).
pub fn parse_dump(text: &str, server: bool) -> SshConfig {
    let list = |k: &str| -> Vec<String> {
        dump_value(text, k)
            .map(|v| v.split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect())
            .unwrap_or_default()
    };
    SshConfig {
        server,
        ciphers: list("ciphers"),
        macs: list("macs"),
        kex: list("kexalgorithms"),
        hostkeys: list("hostkeyalgorithms"),
    }
}

/// The directives in `text` before the first `Match`/`Host` block (where global
/// values live), so a diff never edits a block that applies to some peers only.
pub fn global_directives(file: &Path, text: &str) -> Vec<inst::Directive> {
    let end = text
        .lines()
        .position(|l| {
            let t = l.trim_start().to_ascii_lowercase();
            t.starts_with("match ") || t.starts_with("host ")
        })
        .unwrap_or(usize::MAX);
    scan_directives(file, text, KEYWORDS, '#')
        .into_iter()
        .filter(|d| d.line <= end)
        .collect()
}

pub fn read(config_from: Option<&Path>) -> Result<Option<Installed>> {
    let file = config_from.map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from(DEFAULT_FILE));
    let sshd = crate::discover::openssh::find_sshd().ok();
    if sshd.is_none() && config_from.is_none() {
        return Ok(None);
    }
    let text = if file.exists() || config_from.is_some() {
        Some(read_config(&file)?)
    } else {
        None
    };
    let mut notes = Vec::new();
    let Some(sshd) = sshd else {
        notes.push("sshd is not installed: the lists are read from the file, without sshd's defaults".into());
        let t = text.unwrap_or_default();
        return Ok(Some(from_text(&file, &t, notes)));
    };
    // As root, `sshd -T` refuses to run without its privilege-separation
    // directory, which only sshd's unit makes: a host where sshd is installed but
    // not running (a container, a fresh boot with sshd disabled) lacks it.
    crate::backend::openssh::daemon::ensure_privsep_dir()?;
    let sshd_s = sshd.display().to_string();
    let f = file.display().to_string();
    let mut args: Vec<&str> = vec!["-T"];
    if text.is_some() {
        args.extend(["-f", &f]);
    }
    // What sshd says may quote a file the configuration includes: relayed as
    // that file's name and line only.
    let inst::Ran { ok, mut out, err, .. } = run(&sshd_s, &args)?.about(&file);
    let mut source = format!("{} {}", sshd_s, args.join(" "));
    if !ok {
        // No loadable host key (not root, or a file under review): add a throw-away one.
        let (again, again_err) = with_throwaway_key(&sshd_s, &args, &source, &f, &err)?;
        out = again;
        source = format!("{source} (with a throw-away host key)");
        notes.extend(hostkey_notes(text.as_deref(), &[&err, &again_err]));
    }
    let config = parse_dump(&out, true);
    if config.ciphers.is_empty() {
        anyhow::bail!("`{source}` printed no ciphers line");
    }
    let directives = text.as_deref().map(|t| global_directives(&file, t)).unwrap_or_default();
    let insert_at = text.as_deref().map(insert_line);
    Ok(Some(
        Installed::new("sshd", text.is_some().then_some(file), source, Config::Ssh(config))
            .with_lines(directives, insert_at)
            .with_notes(notes),
    ))
}

/// `sshd ARGS` again with a throw-away host key: what it printed and said. An
/// error when sshd refuses the configuration even so.
fn with_throwaway_key(sshd: &str, args: &[&str], source: &str, f: &str, first_err: &str) -> Result<(String, String)> {
    let keydir = tempfile::Builder::new().prefix("cipherbench-sshd-T-").tempdir()?;
    let key = keydir.path().join("hostkey");
    let k = key.display().to_string();
    let made = run("ssh-keygen", &["-q", "-t", "ed25519", "-N", "", "-f", &k])?;
    if !made.ok {
        anyhow::bail!("ssh-keygen could not make a throw-away host key: {}", made.err.trim());
    }
    let hk = format!("HostKey={k}");
    let mut retry = args.to_vec();
    retry.extend(["-o", &hk]);
    let again = run(sshd, &retry)?.about(Path::new(f));
    if !again.ok {
        // sshd cannot load this configuration: no findings or patch from it.
        let why = if again.err.trim().is_empty() {
            format!("{}: {}", again.status, crate::untrusted::shown(first_err.trim()))
        } else {
            again.why()
        };
        return Err(crate::error::UsageError::Invalid(format!(
            "sshd cannot load {} (`{source}`: {why}); no findings or patch are made from a configuration sshd itself refuses",
            crate::untrusted::shown(f)
        ))
        .into());
    }
    Ok((again.out, again.err))
}

/// Each host key that could not be read and why (the file's `HostKey` lines,
/// else sshd's default keys), what sshd said (`said`: its stderr), and that
/// a user who is not root reads no host keys.
fn hostkey_notes(text: Option<&str>, said: &[&str]) -> Vec<String> {
    let mut notes = Vec::new();
    let mut keys: Vec<String> = text
        .unwrap_or("")
        .lines()
        .filter_map(|l| inst::value_after(l, "hostkey"))
        .map(str::to_string)
        .collect();
    if keys.is_empty() {
        keys = ["rsa", "ecdsa", "ed25519"]
            .iter()
            .map(|t| format!("/etc/ssh/ssh_host_{t}_key"))
            .collect();
    }
    for hk in keys.iter().filter(|p| std::path::Path::new(p).exists()) {
        if let Err(e) = std::fs::File::open(hk) {
            notes.push(format!("cannot read the host key {hk}: {e}"));
        }
    }
    for l in said.iter().flat_map(|s| s.lines()).map(str::trim).filter(|l| !l.is_empty()) {
        let note = format!("sshd said: {}", crate::untrusted::shown(l));
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    if unsafe { libc::geteuid() } != 0 {
        notes.push("not running as root: the lists are sshd's, but its host keys were not read (HostKeyAlgorithms may list types it has no key for)".into());
    }
    notes
}

/// The lists as written in the file (first value wins, as in sshd), without defaults.
fn from_text(file: &Path, text: &str, mut notes: Vec<String>) -> Installed {
    let directives = global_directives(file, text);
    let get = |k: &str| -> Vec<String> {
        directives
            .iter()
            .find(|d| d.keyword == k)
            .and_then(|d| inst::value_after(&d.text, k))
            .map(|v| v.split(',').map(str::to_string).collect())
            .unwrap_or_default()
    };
    let config = SshConfig {
        server: true,
        ciphers: get("ciphers"),
        macs: get("macs"),
        kex: get("kexalgorithms"),
        hostkeys: get("hostkeyalgorithms"),
    };
    if [&config.ciphers, &config.macs, &config.kex]
        .iter()
        .any(|l| l.iter().any(|a| a.starts_with(['+', '-', '^'])))
    {
        notes.push("the file edits the default lists (+/-/^), which only sshd -T can resolve".into());
    }
    Installed::new(
        "sshd",
        Some(file.to_path_buf()),
        format!("parsed {}", file.display()),
        Config::Ssh(config),
    )
    .with_lines(directives, Some(insert_line(text)))
    .with_notes(notes)
}

/// New global lines go before the first `Match` block (after it they would apply
/// to matching connections only), else at the end.
pub fn insert_line(text: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    let m = lines.iter().position(|l| l.trim_start().to_ascii_lowercase().starts_with("match "));
    let mut at = m.unwrap_or(lines.len());
    // Keep the comment block that introduces the Match (and the blank lines
    // before it) with it: new lines follow the last global one.
    while at > 0 && m.is_some() && (lines[at - 1].trim_start().starts_with('#') || lines[at - 1].trim().is_empty()) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape of real `sshd -T` output (OpenSSH 9.2, Debian 12).
    const DUMP: &str = "port 22\naddressfamily any\nlistenaddress 0.0.0.0:22\nusepam yes\n\
ciphers aes128-cbc,aes256-cbc,aes128-ctr\nmacs hmac-sha1,hmac-sha2-256\n\
kexalgorithms diffie-hellman-group14-sha1,curve25519-sha256\nhostkeyalgorithms ssh-ed25519,rsa-sha2-512\n\
casignaturealgorithms ssh-ed25519\n";

    /// `sshd -T` of OpenSSH 10.6 (Debian forky): the same lines, keywords
    /// capitalised, the defaults without finite-field Diffie-Hellman.
    pub const DUMP_10_6: &str = "Port 22\nAddressFamily any\nListenAddress [::]:22\nListenAddress 0.0.0.0:22\nUsePam yes\n\
HostKey /etc/ssh/ssh_host_ecdsa_key\nHostKey /etc/ssh/ssh_host_ed25519_key\n\
Ciphers chacha20-poly1305@openssh.com,aes128-gcm@openssh.com,aes256-gcm@openssh.com,aes128-ctr,aes192-ctr,aes256-ctr\n\
Macs umac-64-etm@openssh.com,umac-128-etm@openssh.com,hmac-sha2-256-etm@openssh.com,hmac-sha2-512-etm@openssh.com,hmac-sha1-etm@openssh.com,umac-64@openssh.com,umac-128@openssh.com,hmac-sha2-256,hmac-sha2-512,hmac-sha1\n\
KexAlgorithms mlkem768x25519-sha256,sntrup761x25519-sha512,sntrup761x25519-sha512@openssh.com,curve25519-sha256,curve25519-sha256@libssh.org,ecdh-sha2-nistp256,ecdh-sha2-nistp384,ecdh-sha2-nistp521\n\
HostKeyAlgorithms ssh-ed25519-cert-v01@openssh.com,ecdsa-sha2-nistp256-cert-v01@openssh.com,ssh-ed25519,ecdsa-sha2-nistp256,rsa-sha2-512,rsa-sha2-256\n\
CASignatureAlgorithms ssh-ed25519,ecdsa-sha2-nistp256,rsa-sha2-512,rsa-sha2-256\n\
PubkeyAcceptedAlgorithms ssh-ed25519,ecdsa-sha2-nistp256,rsa-sha2-512,rsa-sha2-256\n";

    /// OpenSSH 10.6 prints `Ciphers`, `Macs`, `KexAlgorithms`: read in any case,
    /// and a keyword that only begins like another (`CASignatureAlgorithms`) is not it.
    #[test]
    fn parses_the_capitalised_dump_of_openssh_10_6() {
        let c = parse_dump(DUMP_10_6, true);
        assert_eq!(c.ciphers[0], "chacha20-poly1305@openssh.com");
        assert_eq!(c.ciphers.len(), 6);
        assert_eq!(c.macs.len(), 10);
        assert_eq!(c.kex[0], "mlkem768x25519-sha256");
        assert!(!c.kex.iter().any(|k| k.starts_with("diffie-hellman")), "{:?}", c.kex);
        assert_eq!(c.hostkeys[0], "ssh-ed25519-cert-v01@openssh.com");
        let l = crate::discover::openssh::parse_sshd_lists(DUMP_10_6).expect("all four lists");
        assert_eq!((l.ciphers, l.macs, l.kex, l.hostkeys), (c.ciphers, c.macs, c.kex, c.hostkeys));
        assert_eq!(dump_value(DUMP_10_6, "port"), Some("22"));
    }

    #[test]
    fn parses_the_dump() {
        let c = parse_dump(DUMP, true);
        assert_eq!(c.ciphers, vec!["aes128-cbc", "aes256-cbc", "aes128-ctr"]);
        assert_eq!(c.macs, vec!["hmac-sha1", "hmac-sha2-256"]);
        assert_eq!(c.kex[0], "diffie-hellman-group14-sha1");
        assert_eq!(c.hostkeys, vec!["ssh-ed25519", "rsa-sha2-512"]);
    }

    #[test]
    fn directives_stop_at_match() {
        let text = "Port 22\nCiphers aes128-cbc\n# MACs hmac-md5\nMACs hmac-sha1\nMatch User bob\n  Ciphers aes256-ctr\n";
        let d = global_directives(Path::new("/etc/ssh/sshd_config"), text);
        assert_eq!(d.len(), 2);
        assert_eq!((d[0].keyword.as_str(), d[0].line), ("ciphers", 2));
        assert_eq!((d[1].keyword.as_str(), d[1].line), ("macs", 4));
        let i = from_text(Path::new("/x"), text, vec![]);
        let Config::Ssh(c) = i.config else { panic!() };
        assert_eq!(c.ciphers, vec!["aes128-cbc"]);
    }

    /// The real sshd on this machine: `sshd -T -f FILE` resolves a file's lists.
    #[test]
    fn real_sshd_dump_of_a_file() {
        if crate::discover::openssh::find_sshd().is_err() {
            crate::testing::missing("sshd is not installed");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("sshd_config");
        std::fs::write(
            &f,
            "Ciphers aes128-cbc,aes128-ctr\nMACs hmac-sha1\nKexAlgorithms diffie-hellman-group14-sha1\nUsePAM no\n",
        )
        .unwrap();
        let i = read(Some(&f)).unwrap().unwrap();
        let Config::Ssh(c) = &i.config else { panic!() };
        assert_eq!(c.ciphers, vec!["aes128-cbc", "aes128-ctr"], "{i:?}");
        assert_eq!(c.macs, vec!["hmac-sha1"]);
        assert_eq!(c.kex, vec!["diffie-hellman-group14-sha1"]);
        assert!(!c.hostkeys.is_empty(), "sshd's default host-key algorithms");
        assert_eq!(i.directives.len(), 3);
        assert!(i.source.contains("-T"), "{}", i.source);
    }
}
