//! NZBGet is a TLS *client* of news servers: `ServerN.Cipher` (an OpenSSL cipher
//! string or a GnuTLS priority, depending on how NZBGet was built) is the list it
//! offers for server N, and a news server usually takes the client's first choice.
//! The first server with `ServerN.Encryption=yes` is read.
//!
//! NZBGet before 25.4 takes its TLS 1.3 order and groups from OpenSSL's
//! configuration only: the `OPENSSL_CONF` that nzbget.service's systemd drop-ins
//! (`/etc/systemd/system/nzbget.service.d/*.conf`, in name order, the last
//! assignment winning) give it, and the file that names ([`openssl_env`]). Its
//! TLS 1.3 suites are what the real OpenSSL makes of that file (`OPENSSL_CONF=FILE
//! openssl ciphers -tls1_3`), its groups the file's `Groups` (or `Curves`).
//! A configuration read as `ROOT/etc/nzbget.conf` (`--config-from`) is a system
//! under ROOT: its drop-ins and the file they name are read under ROOT too.

use crate::discover::installed::{self as inst, read_config, scan_directives, value_after, Config, Installed, OpensslEnv, TlsConfig};
use anyhow::Result;
use std::path::{Path, PathBuf};

pub fn from_text(file: &Path, text: &str) -> Option<(TlsConfig, Vec<inst::Directive>, Option<usize>, String)> {
    // ServerN.Encryption=yes, first N.
    let n = text.lines().find_map(|l| {
        let l = l.trim();
        let rest = l.strip_prefix("Server")?;
        let (num, v) = rest.split_once(".Encryption=")?;
        (v.trim().eq_ignore_ascii_case("yes") && num.chars().all(|c| c.is_ascii_digit())).then(|| num.to_string())
    })?;
    let key = format!("server{n}.cipher");
    let d = scan_directives(file, text, &[key.as_str()], '#');
    let cipher = d
        .first()
        .and_then(|x| value_after(&x.text, &key))
        .filter(|v| !v.is_empty())
        .map(str::to_string);
    let enc = text
        .lines()
        .position(|l| l.trim().to_ascii_lowercase().starts_with(&format!("server{n}.encryption")))
        .map(|p| p + 1);
    let host_key = format!("server{n}.host");
    let host = scan_directives(file, text, &[host_key.as_str()], '#')
        .first()
        .and_then(|x| value_after(&x.text, &host_key))
        .filter(|v| !v.is_empty())
        .map(str::to_string);
    let config = TlsConfig {
        server: false,
        cipher_string: cipher,
        connects_to: Some(match host {
            Some(h) => format!("Server{n} ({h})"),
            None => format!("Server{n}"),
        }),
        ..Default::default()
    };
    Some((config, d, enc, n))
}

pub fn read(config_from: Option<&Path>) -> Result<Option<Installed>> {
    let candidates: Vec<PathBuf> = match config_from {
        Some(p) => vec![p.to_path_buf()],
        None => {
            let mut v = vec![PathBuf::from("/etc/nzbget.conf")];
            if let Some(h) = dirs::home_dir() {
                v.push(h.join(".nzbget"));
            }
            v
        }
    };
    let Some(file) = candidates.into_iter().find(|p| p.exists() || config_from.is_some()) else {
        return Ok(None);
    };
    let text = read_config(&file)?;
    let Some((mut config, directives, insert_at, n)) = from_text(&file, &text) else {
        let source = format!("parsed {}", file.display());
        return Ok(Some(
            Installed::new("nzbget", Some(file), source, Config::Tls(TlsConfig::default()))
                .with_notes(vec!["no ServerN.Encryption=yes: NZBGet does not use TLS here".into()]),
        ));
    };
    let mut notes = Vec::new();
    if config.cipher_string.is_none() {
        notes.push(format!("Server{n}.Cipher is empty: the TLS library's default list applies"));
    }
    let mut source = format!("parsed {} (Server{n})", file.display());
    let (env, more) = openssl_env(&root_of(&file));
    notes.extend(more);
    if let Some((p, line, v)) = &env.drop_in {
        source.push_str(&format!("; OPENSSL_CONF={v} from {}:{line}", p.display()));
        if let Some((conf, text)) = &env.conf {
            match tls13_of(conf, text) {
                Ok((suites, groups)) => {
                    config.ciphersuites = suites;
                    config.groups = groups;
                }
                Err(e) => notes.push(format!("{e:#}; its TLS 1.3 order was not read")),
            }
            let (min, max) = (last_value(text, "MinProtocol"), last_value(text, "MaxProtocol"));
            if min.is_some() || max.is_some() {
                config.protocols = Some(inst::version_range(min.as_deref(), max.as_deref()));
            }
        }
    }
    // Without a file of its own, the system's OpenSSL configuration applies.
    if env.conf.is_none() {
        if let Ok(Some(sys)) = crate::software::openssl::read::read(None) {
            if let Config::Tls(t) = sys.config {
                config.protocols = t.protocols;
            }
        }
    }
    let mut i = Installed::new("nzbget", Some(file), source, Config::Tls(config))
        .with_lines(directives, insert_at)
        .with_notes(notes);
    i.openssl_env = Some(env);
    Ok(Some(i))
}

/// Where nzbget.service's drop-ins are, under a root.
pub const DROP_IN_DIR: &str = "etc/systemd/system/nzbget.service.d";

/// The root a configuration file's system is read under: ROOT for
/// `ROOT/etc/nzbget.conf`, else `/`.
pub fn root_of(file: &Path) -> PathBuf {
    match file.to_string_lossy().strip_suffix("/etc/nzbget.conf") {
        Some(r) if !r.is_empty() => PathBuf::from(r),
        _ => PathBuf::from("/"),
    }
}

/// `path` (a path on the system) under `root`.
pub fn under(root: &Path, path: &str) -> PathBuf {
    root.join(path.trim_start_matches('/'))
}

/// The `OPENSSL_CONF` nzbget.service's drop-ins under `root` set (the last
/// assignment, drop-ins in name order; an empty `Environment=` resets), and the
/// file it names; notes say what could not be read.
pub fn openssl_env(root: &Path) -> (OpensslEnv, Vec<String>) {
    let mut env = OpensslEnv {
        root: root.to_path_buf(),
        ..Default::default()
    };
    let mut notes = Vec::new();
    let dir = root.join(DROP_IN_DIR);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "conf"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    for f in files {
        match read_config(&f) {
            Ok(text) => {
                if let Some(set) = assignment(&text) {
                    env.drop_in = set.map(|(line, v)| (f.clone(), line, v));
                }
            }
            Err(e) => notes.push(format!("the drop-in {} could not be read: {e}", f.display())),
        }
    }
    if let Some((f, _, v)) = &env.drop_in {
        let conf = under(root, v);
        match read_config(&conf) {
            Ok(text) => env.conf = Some((conf, text)),
            Err(e) => notes.push(format!(
                "{} sets OPENSSL_CONF={v}, which could not be read ({e}): OpenSSL's defaults apply",
                f.display()
            )),
        }
    }
    (env, notes)
}

/// The last `OPENSSL_CONF` assignment of a drop-in's `[Service]` section:
/// `Some(Some((line, value)))`, `Some(None)` when an empty `Environment=`
/// resets it, `None` when the drop-in says nothing of it.
fn assignment(text: &str) -> Option<Option<(usize, String)>> {
    let mut section = String::new();
    let mut out = None;
    for (k, l) in text.lines().enumerate() {
        let l = l.trim();
        if l.starts_with('[') {
            section = l.to_string();
            continue;
        }
        if section != "[Service]" || l.starts_with('#') || l.starts_with(';') {
            continue;
        }
        let Some((key, value)) = l.split_once('=') else { continue };
        if key.trim() != "Environment" {
            continue;
        }
        if value.trim().is_empty() {
            out = Some(None);
            continue;
        }
        for a in words(value) {
            if let Some(v) = a.strip_prefix("OPENSSL_CONF=") {
                out = Some(Some((k + 1, v.to_string())));
            }
        }
    }
    out
}

/// systemd's `Environment=` words: blank-separated, a double-quoted word whole.
pub fn words(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut cur, mut quoted, mut any) = (String::new(), false, false);
    for c in value.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            c => {
                cur.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(cur);
    }
    out
}

/// The last value a configuration text gives `key` (any section, case aside).
fn last_value(text: &str, key: &str) -> Option<String> {
    text.lines().rev().find_map(|l| {
        let (k, v) = l.split('#').next()?.split_once('=')?;
        k.trim().eq_ignore_ascii_case(key).then(|| v.trim().to_string())
    })
}

/// The TLS 1.3 suites OpenSSL takes from the configuration `conf` (the real
/// OpenSSL reads it: `OPENSSL_CONF=conf openssl ciphers -s -stdname -tls1_3`),
/// and its `Groups` (or `Curves`) value as written; `None` where it sets none.
fn tls13_of(conf: &Path, text: &str) -> Result<(Option<String>, Option<String>)> {
    let sets = |key: &str| last_value(text, key);
    let suites = match sets("Ciphersuites") {
        None => None,
        Some(_) => {
            let c = conf.to_string_lossy();
            let ran = inst::run_env("openssl", &["ciphers", "-s", "-stdname", "-tls1_3"], &[("OPENSSL_CONF", &c)])?;
            if !ran.ok {
                anyhow::bail!("OpenSSL refuses {} ({}): NZBGet cannot connect with it", conf.display(), ran.why());
            }
            let names: Vec<&str> = ran.out.lines().filter_map(|l| l.split_whitespace().next()).collect();
            (!names.is_empty()).then(|| names.join(":"))
        }
    };
    Ok((suites, sets("Groups").or_else(|| sets("Curves"))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_encrypted_server() {
        let text = "MainDir=~/downloads\nServer1.Host=news.example\nServer1.Encryption=no\nServer2.Host=secure.example\nServer2.Encryption=yes\nServer2.Cipher=RC4-MD5\n";
        let (c, d, at, n) = from_text(Path::new("/etc/nzbget.conf"), text).unwrap();
        assert_eq!(n, "2");
        assert_eq!(c.cipher_string.as_deref(), Some("RC4-MD5"));
        assert!(!c.server);
        assert_eq!(d[0].line, 6);
        assert_eq!(at, Some(5));
        assert_eq!(c.connects_to.as_deref(), Some("Server2 (secure.example)"));
        assert!(from_text(Path::new("/x"), "Server1.Encryption=no\n").is_none());
    }

    /// The drop-ins in name order, the last `OPENSSL_CONF` winning (an empty
    /// `Environment=` resets, another section does not count), quoted words
    /// whole; the file it names read under the root, and its TLS 1.3 order and
    /// groups as the real OpenSSL and the file say.
    #[test]
    fn the_drop_in_and_the_file_it_names_under_a_root() {
        assert_eq!(
            words(r#"A=1 "B=two words"  OPENSSL_CONF=/x"#),
            ["A=1", "B=two words", "OPENSSL_CONF=/x"]
        );
        assert_eq!(assignment("[Unit]\nEnvironment=OPENSSL_CONF=/u\n"), None);
        assert_eq!(
            assignment("[Service]\nEnvironment=OPENSSL_CONF=/a\nEnvironment=\"X=1\" OPENSSL_CONF=/b\n"),
            Some(Some((3, "/b".into())))
        );
        assert_eq!(assignment("[Service]\nEnvironment=OPENSSL_CONF=/a\nEnvironment=\n"), Some(None));
        let root = tempfile::tempdir().unwrap();
        assert_eq!(root_of(&root.path().join("etc/nzbget.conf")), root.path());
        assert_eq!(root_of(Path::new("/etc/nzbget.conf")), Path::new("/"));
        assert_eq!(root_of(Path::new("/home/u/.nzbget")), Path::new("/"));
        let (env, notes) = openssl_env(root.path());
        assert!(env.drop_in.is_none() && notes.is_empty(), "{env:?} {notes:?}");
        let d = root.path().join(DROP_IN_DIR);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::create_dir_all(root.path().join("etc/nzbget")).unwrap();
        std::fs::write(d.join("a.conf"), "[Service]\nEnvironment=OPENSSL_CONF=/etc/nzbget/a.cnf\n").unwrap();
        std::fs::write(d.join("b.conf"), "[Service]\nEnvironment=OPENSSL_CONF=/etc/nzbget/b.cnf\n").unwrap();
        std::fs::write(d.join("c.txt"), "[Service]\nEnvironment=OPENSSL_CONF=/etc/nzbget/c.cnf\n").unwrap();
        let sys = environment();
        let cnf = format!(
            ".include {}\n[ {} ]\nssl_conf = s\n[ s ]\nsystem_default = t\n[ t ]\nCiphersuites = TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256\nGroups = X25519:P-256\n",
            sys.system_cnf, sys.init_section
        );
        std::fs::write(root.path().join("etc/nzbget/b.cnf"), &cnf).unwrap();
        let (env, notes) = openssl_env(root.path());
        assert_eq!(env.drop_in, Some((d.join("b.conf"), 2, "/etc/nzbget/b.cnf".into())), "{notes:?}");
        let (p, text) = env.conf.clone().unwrap();
        assert_eq!(p, root.path().join("etc/nzbget/b.cnf"));
        let (suites, groups) = tls13_of(&p, &text).unwrap();
        assert_eq!(suites.as_deref(), Some("TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256"));
        assert_eq!(groups.as_deref(), Some("X25519:P-256"));
        // Read with nzbget.conf: the offer's TLS 1.3 list and groups are the file's.
        let conf = root.path().join("etc/nzbget.conf");
        std::fs::write(
            &conf,
            "Server1.Host=news.example\nServer1.Encryption=yes\nServer1.Cipher=ECDHE-RSA-AES128-GCM-SHA256\n",
        )
        .unwrap();
        let i = read(Some(&conf)).unwrap().unwrap();
        let Config::Tls(t) = &i.config else { panic!() };
        assert_eq!(
            t.ciphersuites.as_deref(),
            Some("TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256")
        );
        assert!(i.source.contains("OPENSSL_CONF=/etc/nzbget/b.cnf"), "{}", i.source);
        // A drop-in naming a file that is not there: said, and the defaults apply.
        std::fs::remove_file(root.path().join("etc/nzbget/b.cnf")).unwrap();
        let (env, notes) = openssl_env(root.path());
        assert!(env.conf.is_none() && notes[0].contains("could not be read"), "{notes:?}");
    }
}

/// The installed NZBGet's version and the system OpenSSL configuration its own
/// OpenSSL file builds on (read once).
pub fn environment() -> crate::model::NzbgetInstalled {
    static ENV: std::sync::OnceLock<crate::model::NzbgetInstalled> = std::sync::OnceLock::new();
    ENV.get_or_init(|| {
        let version = inst::find_program(&["nzbget"])
            .and_then(|p| inst::run(&p, &["-v"]).ok())
            .and_then(|r| version_of(&r.out));
        let dir = inst::run("openssl", &["version", "-d"])
            .ok()
            .and_then(|r| r.out.split('"').nth(1).map(str::to_string))
            .unwrap_or_else(|| "/usr/lib/ssl".into());
        let system_cnf = format!("{dir}/openssl.cnf");
        let text = std::fs::read_to_string(&system_cnf).ok();
        let init_section = text.as_deref().and_then(init_section).unwrap_or_else(|| "openssl_init".into());
        let system_default = text
            .as_deref()
            .and_then(crate::software::openssl::read::system_default)
            .map(|(_, entries)| kept(&entries))
            .unwrap_or_default();
        crate::model::NzbgetInstalled {
            version,
            system_cnf,
            init_section,
            system_default,
        }
    })
    .clone()
}

/// The keys the file for NZBGet sets itself, not copied from the system's section.
const OWN_KEYS: [&str; 5] = ["ciphersuites", "groups", "curves", "minprotocol", "maxprotocol"];

/// The system `system_default` entries the file for NZBGet keeps.
fn kept(entries: &crate::software::openssl::read::Entries) -> Vec<(String, String)> {
    entries
        .iter()
        .filter(|(_, k, _)| !OWN_KEYS.contains(&k.to_ascii_lowercase().as_str()))
        .map(|(_, k, v)| (k.clone(), v.clone()))
        .collect()
}

/// `nzbget version: 21.0` → `21.0`.
pub fn version_of(out: &str) -> Option<String> {
    let v = out.lines().find_map(|l| l.trim().strip_prefix("nzbget version:"))?.trim();
    (!v.is_empty()).then(|| v.to_string())
}

/// The section a configuration's top-level `openssl_conf` names.
fn init_section(text: &str) -> Option<String> {
    text.lines().take_while(|l| !l.trim_start().starts_with('[')).find_map(|l| {
        let (k, v) = l.split('#').next()?.split_once('=')?;
        (k.trim() == "openssl_conf").then(|| v.trim().to_string())
    })
}

#[cfg(test)]
mod environment_tests {
    #[test]
    fn version_and_init() {
        assert_eq!(super::version_of("nzbget version: 21.0\n").as_deref(), Some("21.0"));
        assert_eq!(super::version_of("x"), None);
        assert_eq!(
            super::init_section("HOME = .\nopenssl_conf = openssl_init # x\n[openssl_init]\n").as_deref(),
            Some("openssl_init")
        );
    }
}
