//! The recommended lines as a unified diff against the real files.
//!
//! Each emitted line replaces the line that sets the same keyword (its
//! indentation kept); lines the file lacks go after the software's anchor (the
//! last TLS directive of the server block, the line before sshd's first `Match`,
//! the top of an ssh client config ...). Headers are `a/PATH` and `b/PATH` with the
//! leading `/` dropped, so `patch -d / -p1` applies the diff where it belongs.

use crate::discover::installed::{read_config, Directive, Installed};
use crate::error::UsageError;
use crate::software::Target;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The keyword a line sets (lower case), as [`Directive::keyword`] spells it.
pub fn keyword_of(target: &dyn Target, line: &str) -> String {
    let tokens = crate::discover::installed::leading_words(line);
    let two = tokens.join(" ");
    if target.keywords().contains(&two.as_str()) {
        return two;
    }
    tokens.first().cloned().unwrap_or_default()
}

/// The files being edited: each one's original text and its lines as edited so far.
#[derive(Default)]
struct Files {
    originals: BTreeMap<PathBuf, String>,
    edited: BTreeMap<PathBuf, Vec<String>>,
    /// Files to create, with their text.
    created: BTreeMap<PathBuf, String>,
}

impl Files {
    /// `path`'s lines, read on first use (unreadable: an error naming it).
    fn lines(&mut self, path: &Path) -> Result<&mut Vec<String>, UsageError> {
        if !self.edited.contains_key(path) {
            let text = read_config(path)?;
            self.edited.insert(path.to_path_buf(), text.lines().map(str::to_string).collect());
            self.originals.insert(path.to_path_buf(), text);
        }
        Ok(self.edited.get_mut(path).expect("loaded"))
    }

    /// The unified diff of every file that changed.
    fn diff(&self) -> String {
        let mut out = String::new();
        for (p, new) in &self.edited {
            let old = &self.originals[p];
            let mut new_text = new.join("\n");
            if old.ends_with('\n') {
                new_text.push('\n');
            }
            if *old == new_text {
                continue;
            }
            let name = p.display().to_string();
            let rel = name.trim_start_matches('/');
            let d = similar::TextDiff::from_lines(old.as_str(), new_text.as_str());
            out.push_str(
                &d.unified_diff()
                    .context_radius(3)
                    .header(&format!("a/{rel}"), &format!("b/{rel}"))
                    .to_string(),
            );
        }
        for (p, text) in &self.created {
            let name = p.display().to_string();
            let rel = name.trim_start_matches('/');
            let d = similar::TextDiff::from_lines("", text.as_str());
            out.push_str(
                &d.unified_diff()
                    .context_radius(3)
                    .header("/dev/null", &format!("b/{rel}"))
                    .to_string(),
            );
        }
        out
    }

    /// `path` set to `text` whole: changed where it is, created where it is not.
    fn set_whole(&mut self, path: &Path, text: &str) -> Result<(), UsageError> {
        if std::fs::symlink_metadata(path).is_err() {
            self.created.insert(path.to_path_buf(), text.to_string());
            return Ok(());
        }
        let lines = self.lines(path)?;
        *lines = text.lines().map(str::to_string).collect();
        Ok(())
    }
}

/// Replaces the lines that set the same keyword as each of `lines` (indentation,
/// and a trailing comment where the target keeps them, kept); returns the lines
/// no directive sets.
fn replace(installed: &Installed, target: &dyn Target, lines: &[String], files: &mut Files) -> Result<Vec<String>, UsageError> {
    let mut missing = Vec::new();
    for l in lines {
        // "the default already does this": an installed line of that directive
        // becomes the note (the default applies); nothing is added where none is.
        let note = crate::recommend::choice::default_note_directive(l);
        let k = keyword_of(target, note.unwrap_or(l));
        let hits: Vec<&Directive> = installed
            .directives
            .iter()
            .filter(|d| target.same_setting(&d.keyword, &k))
            .collect();
        if hits.is_empty() {
            if note.is_none() {
                missing.push(l.clone());
            }
            continue;
        }
        for d in hits {
            if let Some(old) = files.lines(&d.file)?.get_mut(d.line - 1) {
                let indent: String = old.chars().take_while(|c| c.is_whitespace()).collect();
                // A trailing comment is kept only beside the value it was written
                // for: nginx's stock `ssl_prefer_server_ciphers off; # Don't force
                // server cipher order.` must not end up beside `… on;`.
                let comment = old
                    .find(" #")
                    .filter(|_| target.keeps_comments())
                    .filter(|&i| same_value(&old[..i], l))
                    .map(|i| old[i..].to_string())
                    .unwrap_or_default();
                *old = format!("{indent}{}{comment}", l.trim());
            }
        }
    }
    Ok(missing)
}

/// Whether an installed line (its comment cut off) sets what `new` sets, up to
/// spacing.
fn same_value(old: &str, new: &str) -> bool {
    let words = |s: &str| s.split_whitespace().map(str::to_string).collect::<Vec<_>>();
    words(old) == words(new)
}

/// Where lines the file lacks go: after the last directive of the file holding
/// most of them, else after the software's anchor in the main file; `None` when
/// there is neither.
fn insertion_point(installed: &Installed, main: &Path) -> Option<(PathBuf, usize)> {
    let mut count: BTreeMap<&PathBuf, usize> = BTreeMap::new();
    for d in &installed.directives {
        *count.entry(&d.file).or_default() += 1;
    }
    let most = count.iter().max_by_key(|(_, n)| **n).map(|(p, _)| (*p).clone());
    match (most, installed.insert_at) {
        (Some(p), at) if p != main || at.is_none() => {
            let after = installed
                .directives
                .iter()
                .filter(|d| d.file == p)
                .map(|d| d.line)
                .max()
                .unwrap_or(0);
            Some((p, after))
        }
        (_, Some(at)) => Some((main.to_path_buf(), at)),
        _ => None,
    }
}

/// Inserts `missing` after line `after` of `file`, indented like that line.
fn insert(files: &mut Files, file: &Path, after: usize, missing: &[String]) -> Result<(), UsageError> {
    let f = files.lines(file)?;
    let indent: String = match after {
        0 => String::new(),
        _ => f
            .get(after - 1)
            .map(|l| l.chars().take_while(|c| c.is_whitespace()).collect())
            .unwrap_or_default(),
    };
    let at = after.min(f.len());
    for (i, l) in missing.iter().enumerate() {
        f.insert(at + i, format!("{indent}{}", l.trim()));
    }
    Ok(())
}

/// The unified diff (possibly over several files), or `None` when the file is unknown
/// or nothing changes. Unreadable files are an error naming them.
pub fn unified(installed: &Installed, emitted: &[String]) -> Result<Option<String>, UsageError> {
    // Every reader's software is a target.
    let Some(target) = crate::software::find(installed.software) else {
        return Ok(None);
    };
    let lines = target.file_lines(installed, emitted);
    let Some(main) = installed.file.clone() else { return Ok(None) };
    let mut files = Files::default();
    // Every file read before any edit: a file that is not there is an error
    // even when nothing in it would change.
    for p in installed.directives.iter().map(|d| d.file.clone()).chain([main.clone()]) {
        files.lines(&p)?;
    }
    // Replacements first (line numbers stay valid), then the insertions.
    let missing = replace(installed, target, &lines, &mut files)?;
    if !missing.is_empty() {
        let Some((file, after)) = insertion_point(installed, &main) else {
            return Ok(None);
        };
        insert(&mut files, &file, after, &missing)?;
    }
    // Files beside it that the lines set whole (NZBGet's OpenSSL configuration
    // and drop-in).
    for (path, text) in target.whole_files(installed, emitted) {
        files.set_whole(&path, &text)?;
    }
    let out = files.diff();
    Ok((!out.is_empty()).then_some(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover::installed::{Config, SshConfig};

    fn installed(software: &'static str, file: &std::path::Path, directives: Vec<Directive>, insert_at: Option<usize>) -> Installed {
        Installed::new(software, Some(file.to_path_buf()), "test", Config::Ssh(SshConfig::default())).with_lines(directives, insert_at)
    }

    #[test]
    fn replaces_in_place_and_inserts_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("sshd_config");
        let text = "Port 22\nCiphers aes128-cbc,aes128-ctr\nMACs hmac-sha1\n\n# per user\nMatch User bob\n    X11Forwarding no\n";
        std::fs::write(&f, text).unwrap();
        let d = crate::software::sshd::read::global_directives(&f, text);
        let i = installed("sshd", &f, d, Some(crate::software::sshd::read::insert_line(text)));
        let lines = vec![
            "Ciphers aes128-gcm@openssh.com,aes128-ctr".to_string(),
            "MACs hmac-sha2-256-etm@openssh.com".to_string(),
            "KexAlgorithms curve25519-sha256".to_string(),
        ];
        let p = unified(&i, &lines).unwrap().unwrap();
        let rel = f.display().to_string();
        assert!(p.contains(&format!("--- a{rel}")), "{p}");
        assert!(p.contains("\n-Ciphers aes128-cbc,aes128-ctr\n"), "{p}");
        assert!(p.contains("\n+Ciphers aes128-gcm@openssh.com,aes128-ctr\n"), "{p}");
        assert!(p.contains("+KexAlgorithms curve25519-sha256\n"), "{p}");
        // Applied with the real patch program, the kex line lands before the Match comment.
        let st = std::process::Command::new("patch")
            .args(["-s", "-d", "/", "-p1"])
            .stdin(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write;
                c.stdin.take().unwrap().write_all(p.as_bytes())?;
                c.wait()
            })
            .unwrap();
        assert!(st.success());
        let after = std::fs::read_to_string(&f).unwrap();
        assert_eq!(
            after,
            "Port 22\nCiphers aes128-gcm@openssh.com,aes128-ctr\nMACs hmac-sha2-256-etm@openssh.com\nKexAlgorithms curve25519-sha256\n\n# per user\nMatch User bob\n    X11Forwarding no\n"
        );
        // The same lines again: nothing changes.
        let d = crate::software::sshd::read::global_directives(&f, &after);
        let i = installed("sshd", &f, d, Some(crate::software::sshd::read::insert_line(&after)));
        assert_eq!(unified(&i, &lines).unwrap(), None);
    }

    /// Issue 38: Debian's stock nginx.conf line keeps no comment that now says
    /// the opposite of the line; a comment beside an unchanged value stays.
    #[test]
    fn a_changed_value_loses_its_contradicting_comment() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("nginx.conf");
        let text = "http {\n\tssl_protocols TLSv1.2 TLSv1.3; # Dropping SSLv3, ref: POODLE\n\tssl_prefer_server_ciphers off; # Don't force server cipher order.\n}\n";
        std::fs::write(&f, text).unwrap();
        let dir_at = |keyword: &str, line: usize| Directive {
            keyword: keyword.into(),
            file: f.clone(),
            line,
            text: text.lines().nth(line - 1).unwrap().trim().into(),
        };
        let i = installed(
            "nginx",
            &f,
            vec![dir_at("ssl_protocols", 2), dir_at("ssl_prefer_server_ciphers", 3)],
            Some(3),
        );
        let lines = vec![
            "ssl_protocols TLSv1.2 TLSv1.3;".to_string(),
            "ssl_prefer_server_ciphers on;".to_string(),
        ];
        let p = unified(&i, &lines).unwrap().unwrap();
        assert!(p.contains("\n+\tssl_prefer_server_ciphers on;\n"), "{p}");
        assert!(!p.contains("+\tssl_prefer_server_ciphers on; # Don't force"), "{p}");
        assert!(!p.contains("-\tssl_protocols"), "an unchanged line and its comment stay: {p}");
    }

    #[test]
    fn keywords_and_file_syntax() {
        let t = |n: &str| crate::software::find(n).unwrap();
        assert_eq!(
            keyword_of(t("nginx"), "ssl_conf_command Ciphersuites X;"),
            "ssl_conf_command ciphersuites"
        );
        assert_eq!(keyword_of(t("apache"), "SSLCipherSuite TLSv1.3 X"), "sslciphersuite tlsv1.3");
        assert_eq!(keyword_of(t("apache"), "SSLCipherSuite ECDHE"), "sslciphersuite");
        assert_eq!(keyword_of(t("stunnel"), "ciphers = X"), "ciphers");
        assert!(t("apache").same_setting("sslopensslconfcmd ciphersuites", "sslciphersuite tlsv1.3"));
        assert!(!t("apache").same_setting("sslciphersuite", "sslciphersuite tlsv1.3"));
        assert!(!t("nginx").same_setting("sslopensslconfcmd curves", "sslopensslconfcmd groups"));
        let i = installed("openssl", std::path::Path::new("/x"), vec![], None);
        assert_eq!(
            t("openssl").file_lines(
                &i,
                &["cipher list:  ECDHE-RSA-AES128-GCM-SHA256".into(), "groups:       X25519".into()]
            ),
            vec!["CipherString = ECDHE-RSA-AES128-GCM-SHA256", "Groups = X25519"]
        );
    }

    /// NZBGet before 25.4: the OpenSSL file and the drop-in are created under
    /// the root the configuration was read under (`ROOT/etc/nzbget.conf`), the
    /// real `patch` applies them there, and read back they leave nothing to
    /// change; an existing file of ours with other text is changed, not created.
    #[test]
    fn nzbget_files_are_created_under_the_root_and_read_back() {
        use crate::recommend::choice::testdata;
        use crate::software::nzbget::emit;
        let root = tempfile::tempdir().unwrap();
        let conf = root.path().join("etc/nzbget.conf");
        std::fs::create_dir_all(conf.parent().unwrap()).unwrap();
        std::fs::write(
            &conf,
            "Server1.Host=news.example\nServer1.Encryption=yes\nServer1.Cipher=RC4-SHA:AES128-SHA\n",
        )
        .unwrap();
        let read = || crate::software::nzbget::read::read(Some(&conf)).unwrap().unwrap();
        let v21 = crate::model::NzbgetInstalled {
            version: Some("21.0".into()),
            ..crate::software::nzbget::read::environment()
        };
        let lines = emit::lines(&testdata::tls(), &v21);
        let p = unified(&read(), &lines).unwrap().unwrap();
        let r = root.path().display().to_string();
        let r = r.trim_start_matches('/');
        assert!(
            p.contains(&format!("--- /dev/null\n+++ b/{r}/etc/nzbget/openssl-cipherbench.cnf\n")),
            "{p}"
        );
        assert!(
            p.contains(&format!(
                "--- /dev/null\n+++ b/{r}/etc/systemd/system/nzbget.service.d/cipherbench.conf\n"
            )),
            "{p}"
        );
        assert!(p.contains("\n-Server1.Cipher=RC4-SHA:AES128-SHA\n"), "{p}");
        let apply = |p: &str| {
            let st = std::process::Command::new("patch")
                .args(["-s", "-d", "/", "-p1"])
                .stdin(std::process::Stdio::piped())
                .spawn()
                .and_then(|mut c| {
                    use std::io::Write;
                    c.stdin.take().unwrap().write_all(p.as_bytes())?;
                    c.wait()
                })
                .unwrap();
            assert!(st.success(), "{p}");
        };
        apply(&p);
        let (_, cnf, drop_in) = emit::parts(&lines);
        let cnf_file = root.path().join("etc/nzbget/openssl-cipherbench.cnf");
        assert_eq!(std::fs::read_to_string(&cnf_file).unwrap(), cnf.unwrap());
        assert_eq!(
            std::fs::read_to_string(root.path().join("etc/systemd/system/nzbget.service.d/cipherbench.conf")).unwrap(),
            drop_in.unwrap()
        );
        let again = read();
        assert!(
            again.source.contains("OPENSSL_CONF=/etc/nzbget/openssl-cipherbench.cnf"),
            "{}",
            again.source
        );
        assert_eq!(unified(&again, &lines).unwrap(), None);
        // Our file with another order in it: changed in place.
        let old = std::fs::read_to_string(&cnf_file).unwrap();
        std::fs::write(&cnf_file, old.replace("Ciphersuites = ", "Ciphersuites = TLS_AES_256_GCM_SHA384:")).unwrap();
        let p = unified(&read(), &lines).unwrap().unwrap();
        assert!(
            p.contains(&format!("--- a/{r}/etc/nzbget/openssl-cipherbench.cnf\n")) && !p.contains("/dev/null"),
            "{p}"
        );
        apply(&p);
        assert_eq!(unified(&read(), &lines).unwrap(), None);
    }

    /// "The default already does this": an installed line of that directive becomes
    /// the note (sshd's default then applies); where there is none, nothing is added.
    #[test]
    fn a_default_note_replaces_the_installed_line_and_adds_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("sshd_config");
        let text = "Port 22\nCiphers aes128-cbc,aes128-ctr\n";
        std::fs::write(&f, text).unwrap();
        let d = crate::software::sshd::read::global_directives(&f, text);
        let i = installed("sshd", &f, d, Some(crate::software::sshd::read::insert_line(text)));
        let note = crate::recommend::choice::default_note("Ciphers", "");
        let p = unified(&i, std::slice::from_ref(&note)).unwrap().unwrap();
        assert!(p.contains("\n-Ciphers aes128-cbc,aes128-ctr\n"), "{p}");
        assert!(p.contains(&format!("\n+{note}\n")), "{p}");
        let kex = crate::recommend::choice::default_note("KexAlgorithms", "");
        assert_eq!(unified(&i, &[kex]).unwrap(), None);
    }
}
