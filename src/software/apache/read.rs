//! Apache httpd (mod_ssl): `apache2ctl -t -D DUMP_INCLUDES` (or `apache2 -t -D
//! DUMP_INCLUDES -f FILE` for a file under review) names every file the server
//! loads, `Include`s followed by Apache itself; their `SSLProtocol`,
//! `SSLCipherSuite` (and its `TLSv1.3` form), `SSLOpenSSLConfCmd
//! Curves|Groups|Ciphersuites|MinProtocol|MaxProtocol` and `SSLHonorCipherOrder`
//! lines decide what is offered. The last one read wins, as in the server's global
//! scope; a server that does not load mod_ssl serves no TLS and is not diffed.
use crate::discover::installed::{self as inst, read_config, run, scan_directives, Directive, Installed, Parsed, TlsConfig};
use anyhow::Result;
use std::path::{Path, PathBuf};

/// The installed server's main configuration file (Debian's), what `apache2ctl` reads.
const INSTALLED_MAIN: &str = "/etc/apache2/apache2.conf";

pub const KEYWORDS: &[&str] = &[
    "sslprotocol",
    "sslciphersuite tlsv1.3",
    "sslciphersuite",
    "sslopensslconfcmd curves",
    "sslopensslconfcmd groups",
    "sslopensslconfcmd ciphersuites",
    "sslopensslconfcmd minprotocol",
    "sslopensslconfcmd maxprotocol",
    "sslhonorcipherorder",
];

/// Files from `apache2ctl -t -D DUMP_INCLUDES`, in load order.
pub fn parse_includes(text: &str) -> Vec<PathBuf> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim();
            l.starts_with('(')
                .then(|| l.split_once(") ").map(|(_, p)| PathBuf::from(p.trim())))?
        })
        .collect()
}

/// `SSLProtocol` words → enabled protocols (`all` is SSLv3 to TLSv1.3).
pub fn protocols(words: &[&str]) -> Vec<String> {
    let all: Vec<String> = inst::TLS_VERSIONS.iter().map(|s| s.to_string()).collect();
    let mut on: Vec<String> = Vec::new();
    for w in words {
        let (sign, name) = match w.chars().next() {
            Some('+') => ('+', &w[1..]),
            Some('-') => ('-', &w[1..]),
            _ => ('=', *w),
        };
        let set: Vec<String> = if name.eq_ignore_ascii_case("all") {
            all.clone()
        } else {
            vec![inst::normalise_version(name)]
        };
        for v in set {
            if sign == '-' {
                on.retain(|x| *x != v);
            } else if !on.contains(&v) {
                on.push(v);
            }
        }
    }
    let mut v: Vec<String> = all.into_iter().filter(|x| on.contains(x)).collect();
    v.dedup();
    v
}

/// The configuration from the loaded files' texts. mod_ssl applies
/// `SSLOpenSSLConfCmd` after its own directives, so a `Ciphersuites`, `Groups` or
/// `MinProtocol` given that way wins over `SSLCipherSuite TLSv1.3` and `SSLProtocol`.
pub fn from_files(files: &[(PathBuf, String)]) -> Parsed {
    let mut last: Vec<Directive> = Vec::new();
    for (f, t) in files {
        for d in scan_directives(f, t, KEYWORDS, '#') {
            last.retain(|x| x.keyword != d.keyword);
            last.push(d);
        }
    }
    let words = |k: &str| -> Option<Vec<String>> {
        let d = last.iter().find(|d| d.keyword == k)?;
        Some(d.text.split_whitespace().skip(k.split(' ').count()).map(str::to_string).collect())
    };
    let joined = |k: &str| words(k).map(|w| w.join(" "));
    let mut protocols = protocols(
        &words("sslprotocol")
            .unwrap_or_else(|| vec!["all".into(), "-SSLv3".into()])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    let pos = |v: &str| inst::TLS_VERSIONS.iter().position(|x| *x == inst::normalise_version(v));
    if let Some(min) = joined("sslopensslconfcmd minprotocol").and_then(|v| pos(&v)) {
        protocols.retain(|p| pos(p) >= Some(min));
    }
    if let Some(max) = joined("sslopensslconfcmd maxprotocol").and_then(|v| pos(&v)) {
        protocols.retain(|p| pos(p) <= Some(max));
    }
    // `SSLCipherSuite SSL LIST` names the TLS ≤ 1.2 list explicitly.
    let ciphers = words("sslciphersuite").map(|w| match w.first() {
        Some(p) if p.eq_ignore_ascii_case("SSL") => w[1..].join(" "),
        _ => w.join(" "),
    });
    let config = TlsConfig {
        server: true,
        protocols: Some(protocols),
        cipher_string: Some(ciphers.unwrap_or_else(|| "DEFAULT".into())),
        ciphersuites: joined("sslopensslconfcmd ciphersuites").or_else(|| joined("sslciphersuite tlsv1.3")),
        groups: joined("sslopensslconfcmd groups").or_else(|| joined("sslopensslconfcmd curves")),
        server_order: joined("sslhonorcipherorder").is_some_and(|v| v.eq_ignore_ascii_case("on")),
        endpoint: files.iter().find_map(|(_, t)| vhost_endpoint(t)),
        ..Default::default()
    };
    let main = files
        .iter()
        .find(|(_, t)| t.to_ascii_lowercase().contains("sslciphersuite"))
        .map(|(f, _)| f.clone());
    let insert_at = last.iter().filter(|d| Some(&d.file) == main.as_ref()).map(|d| d.line).max();
    Parsed::new(config, last, insert_at, Vec::new())
}

/// The first `<VirtualHost ADDR:PORT>` with `SSLEngine on` in `text` whose address
/// is one of this machine (`endpoint::local`: `*:443` is asked on the loopback
/// one), with its `ServerName` as SNI.
fn vhost_endpoint(text: &str) -> Option<inst::Endpoint> {
    let mut open: Option<(Vec<String>, bool, Option<String>)> = None;
    for line in text.lines().map(str::trim).filter(|l| !l.starts_with('#')) {
        let w: Vec<&str> = line.split_whitespace().collect();
        let first = w.first().map(|x| x.to_ascii_lowercase()).unwrap_or_default();
        if first == "<virtualhost" {
            let addrs = w[1..].iter().map(|a| a.trim_end_matches('>').to_string()).collect();
            open = Some((addrs, false, None));
        } else if first == "</virtualhost>" {
            if let Some((addrs, true, name)) = open.take() {
                if let Some(address) = addrs.iter().find_map(|a| inst::endpoint::local(a)) {
                    return Some(inst::Endpoint {
                        address,
                        server_name: name.filter(|n| !n.contains(['*', '?'])),
                    });
                }
            }
        } else if let Some((_, ssl, name)) = open.as_mut() {
            match (first.as_str(), w.get(1)) {
                ("sslengine", Some(v)) => *ssl = v.eq_ignore_ascii_case("on"),
                ("servername", Some(v)) => *name = Some(v.to_string()),
                _ => {}
            }
        }
    }
    None
}

/// Whether one of the loaded files loads mod_ssl (without it Apache serves no TLS).
fn loads_mod_ssl(files: &[(PathBuf, String)]) -> bool {
    files.iter().any(|(_, t)| {
        t.lines().any(|l| {
            let w: Vec<&str> = l.split_whitespace().take(2).collect();
            w.len() == 2 && w[0].eq_ignore_ascii_case("LoadModule") && w[1] == "ssl_module"
        })
    })
}

/// The files Apache loads: `apache2ctl -t -D DUMP_INCLUDES` for the installed
/// server, `apache2 -t -D DUMP_INCLUDES -f FILE` for a file under review (so its
/// `Include`s are followed by Apache itself). Returns (files, source, dumped).
fn loaded_files(config_from: Option<&Path>, notes: &mut Vec<String>) -> Result<Option<(Vec<PathBuf>, String, bool)>> {
    let Some(p) = config_from else {
        let Some(ctl) = inst::find_program(&["apache2ctl", "apachectl"]) else {
            return Ok(None);
        };
        // The installed server's main file is the one named; its includes are not.
        let ran = run(&ctl, &["-t", "-D", "DUMP_INCLUDES"])?.about(Path::new(INSTALLED_MAIN));
        if !ran.ok {
            return Err(crate::error::UsageError::Invalid(format!(
                "Apache cannot load its configuration (`{ctl} -t -D DUMP_INCLUDES`: {}); no findings or patch are made from a configuration Apache itself refuses",
                ran.why()
            ))
            .into());
        }
        return Ok(Some((
            parse_includes(&ran.out),
            format!("{ctl} -t -D DUMP_INCLUDES and the files it names"),
            true,
        )));
    };
    let f = p.display().to_string();
    let parsed = (vec![p.to_path_buf()], format!("parsed {f}"), false);
    let Some(httpd) = inst::find_program(&["apache2", "httpd"]) else {
        notes.push("Apache is not installed: the file is parsed by itself, without its includes".into());
        return Ok(Some(parsed));
    };
    // What Apache says may quote a file the configuration includes: relayed as
    // that file's name and line only.
    let inst::Ran { ok, out, err, .. } = run(&httpd, &["-t", "-D", "DUMP_INCLUDES", "-f", &f])?.about(p);
    let files = parse_includes(&out);
    let error = err
        .lines()
        .find(|l| !l.trim().is_empty() && !l.contains("Syntax OK"))
        .unwrap_or("no output");
    if files.is_empty() {
        notes.push(format!(
            "`{httpd} -t -f {f}` failed ({}): the file is parsed by itself, without its includes",
            error.trim()
        ));
        return Ok(Some(parsed));
    }
    // Apache lists the includes before it checks the rest (a file under review may
    // name certificates that do not exist yet): the list is good either way.
    if !ok {
        notes.push(format!("`{httpd} -t -f {f}` refused the file: {}", error.trim()));
    }
    Ok(Some((
        files,
        format!("{httpd} -t -D DUMP_INCLUDES -f {f} and the files it names"),
        true,
    )))
}

pub fn read(config_from: Option<&Path>) -> Result<Option<Installed>> {
    let mut notes = Vec::new();
    let Some((paths, source, dumped)) = loaded_files(config_from, &mut notes)? else {
        return Ok(None);
    };
    let mut files = Vec::new();
    for p in &paths {
        match read_config(p) {
            Ok(t) => files.push((p.clone(), t)),
            Err(e) if config_from.is_none() => notes.push(e.to_string()),
            Err(e) => return Err(e.into()),
        }
    }
    if dumped && !loads_mod_ssl(&files) {
        let msg = "mod_ssl is not loaded (no `LoadModule ssl_module`; `a2enmod ssl` enables it): Apache serves no TLS";
        if config_from.is_none() {
            anyhow::bail!("{msg}");
        }
        notes.push(format!("{msg} with this file"));
    }
    let parsed = from_files(&files);
    let file = parsed
        .directives
        .iter()
        .find(|d| d.keyword == "sslciphersuite")
        .map(|d| d.file.clone())
        .or(config_from.map(Path::to_path_buf));
    notes.extend(parsed.notes.iter().cloned());
    Ok(Some(Parsed { notes, ..parsed }.installed("apache", file, source)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DUMP: &str = "Included configuration files:\n  (*) /etc/apache2/apache2.conf\n    (146) /etc/apache2/mods-enabled/ssl.conf\n    (225) /etc/apache2/sites-enabled/default-ssl.conf\n";

    #[test]
    fn includes_and_directives() {
        assert_eq!(
            parse_includes(DUMP),
            vec![
                PathBuf::from("/etc/apache2/apache2.conf"),
                PathBuf::from("/etc/apache2/mods-enabled/ssl.conf"),
                PathBuf::from("/etc/apache2/sites-enabled/default-ssl.conf")
            ]
        );
        let files = vec![
            (
                PathBuf::from("/etc/apache2/mods-enabled/ssl.conf"),
                "<IfModule mod_ssl.c>\n\tSSLCipherSuite HIGH:!aNULL\n\tSSLProtocol all -SSLv3\n</IfModule>\n".to_string(),
            ),
            (
                PathBuf::from("/etc/apache2/sites-enabled/default-ssl.conf"),
                "SSLCipherSuite RC4-SHA:AES128-SHA\nSSLCipherSuite TLSv1.3 TLS_AES_128_GCM_SHA256\nSSLHonorCipherOrder on\n".to_string(),
            ),
        ];
        let Parsed {
            config: c,
            directives: d,
            insert_at: at,
            ..
        } = from_files(&files);
        assert_eq!(c.cipher_string.as_deref(), Some("RC4-SHA:AES128-SHA"));
        assert_eq!(c.ciphersuites.as_deref(), Some("TLS_AES_128_GCM_SHA256"));
        assert_eq!(c.protocols.unwrap(), vec!["TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"]);
        assert!(c.server_order);
        assert_eq!(d.iter().find(|x| x.keyword == "sslciphersuite").unwrap().line, 1);
        assert_eq!(at, Some(3));
        assert_eq!(protocols(&["-all", "+TLSv1.2", "+TLSv1.3"]), vec!["TLSv1.2", "TLSv1.3"]);
        // mod_ssl applies SSLOpenSSLConfCmd last: its values win.
        let files = vec![(
            PathBuf::from("/a.conf"),
            "SSLCipherSuite SSL AES128-SHA\nSSLCipherSuite TLSv1.3 TLS_AES_128_GCM_SHA256\nSSLOpenSSLConfCmd Ciphersuites TLS_AES_256_GCM_SHA384\nSSLProtocol all\nSSLOpenSSLConfCmd MinProtocol TLSv1.2\n"
                .to_string(),
        )];
        let c = from_files(&files).config;
        assert_eq!(c.cipher_string.as_deref(), Some("AES128-SHA"));
        assert_eq!(c.ciphersuites.as_deref(), Some("TLS_AES_256_GCM_SHA384"));
        assert_eq!(c.protocols.unwrap(), vec!["TLSv1.2", "TLSv1.3"]);
        assert!(loads_mod_ssl(&[(
            PathBuf::from("/m"),
            "LoadModule ssl_module /x/mod_ssl.so\n".into()
        )]));
    }

    /// The real Apache follows `Include` for a file under review, even one it
    /// refuses (no MPM loaded here): the TLS lines come from the included file.
    #[test]
    fn real_apache_follows_includes() {
        let Some(httpd) = inst::find_program(&["apache2", "httpd"]) else {
            crate::testing::missing("Apache is not installed");
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let site = d.join("site.conf");
        std::fs::write(
            &site,
            "<VirtualHost *:443>\n  SSLCipherSuite AES128-SHA\n  SSLProtocol -all +TLSv1.2\n</VirtualHost>\n",
        )
        .unwrap();
        let main = d.join("main.conf");
        std::fs::write(&main, format!("ServerRoot {}\nInclude {}\n", d.display(), site.display())).unwrap();
        let i = read(Some(&main)).unwrap().unwrap();
        assert!(i.source.starts_with(&httpd) && i.source.contains("DUMP_INCLUDES"), "{i:?}");
        let inst::Config::Tls(c) = &i.config else { panic!() };
        assert_eq!(c.cipher_string.as_deref(), Some("AES128-SHA"));
        assert_eq!(c.protocols.as_deref(), Some(&["TLSv1.2".to_string()][..]));
        assert_eq!(i.file.as_deref(), Some(site.as_path()));
        assert_eq!(i.insert_at, Some(3));
        assert!(i.notes.iter().any(|n| n.contains("refused the file")), "{:?}", i.notes);
        assert!(i.notes.iter().any(|n| n.contains("mod_ssl is not loaded")), "{:?}", i.notes);
    }

    /// `check` asks the first TLS virtual host of this machine, with its name as
    /// SNI; a plain one, a wildcard name or another machine's address is not used.
    #[test]
    fn the_first_tls_virtual_host_is_the_endpoint() {
        let text = "Listen 80\n<VirtualHost *:80>\n  ServerName plain\n</VirtualHost>\n\
                    <VirtualHost 192.0.2.3:443>\n  SSLEngine on\n</VirtualHost>\n\
                    <VirtualHost _default_:8443 [::]:8443>\n  # SSLEngine off\n  ServerName www.example.org\n  SSLEngine on\n</VirtualHost>\n";
        let e = vhost_endpoint(text).unwrap();
        assert_eq!(e.address, "127.0.0.1:8443");
        assert_eq!(e.server_name.as_deref(), Some("www.example.org"));
        assert_eq!(vhost_endpoint("<VirtualHost *:443>\nSSLEngine off\n</VirtualHost>\n"), None);
        let wild = vhost_endpoint("<VirtualHost *:443>\nServerName *.example.org\nSSLEngine on\n</VirtualHost>\n").unwrap();
        assert_eq!((wild.address.as_str(), wild.server_name), ("127.0.0.1:443", None));
    }
}
