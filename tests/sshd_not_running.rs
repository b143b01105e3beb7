//! sshd installed but not running (issue 38): no /run/sshd, which only sshd's
//! unit makes. As root, `sshd -T` then refuses to run ("Missing privilege
//! separation directory"), yet the installed configuration does not depend on
//! sshd running. Each test runs the real cipherbench in a private mount
//! namespace (`unshare -m`) whose /run is an empty tmpfs, so the host's /run is
//! never touched.

mod common;

use std::path::PathBuf;
use std::process::Command;

fn sshd() -> Option<PathBuf> {
    ["/usr/sbin/sshd", "/usr/local/sbin/sshd"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

/// `script` run by sh in a private mount namespace whose /run is an empty tmpfs
/// (`ro`: read-only), with $CB the cipherbench binary and $SSHD sshd: (exit
/// code, stdout, stderr). `None` (after saying why) where this cannot run.
fn in_private_run(ro: bool, script: &str) -> Option<(i32, String, String)> {
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: not root (sshd needs /run/sshd only as root)");
        return None;
    }
    let Some(sshd) = sshd() else {
        common::missing("sshd (openssh-server)");
        return None;
    };
    let opts = if ro { "-o ro " } else { "" };
    let out = Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c"])
        .arg(format!("mount -t tmpfs {opts}tmpfs /run || exit 99\n{script}"))
        .env("CB", env!("CARGO_BIN_EXE_cipherbench"))
        .env("SSHD", sshd)
        .output()
        .expect("unshare");
    let code = out.status.code().unwrap_or(-1);
    if code == 99 {
        eprintln!("skipped: no private mount namespace here (unshare -m / mount tmpfs refused)");
        return None;
    }
    Some((
        code,
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

/// Without /run/sshd the real `sshd -T` refuses; `check --for sshd` still reads
/// sshd's configuration (making /run/sshd, 0755 root, as the unit would).
#[test]
fn check_reads_sshd_without_its_privsep_dir() {
    let Some((code, out, err)) = in_private_run(
        false,
        r#"test -e /run/sshd && { echo "/run/sshd present" >&2; exit 98; }
"$SSHD" -T >/dev/null 2>/tmp/cb-sshd-T.err && { echo "sshd -T ran without /run/sshd" >&2; exit 97; }
grep -q "privilege separation" /tmp/cb-sshd-T.err || { cat /tmp/cb-sshd-T.err >&2; exit 96; }
"$CB" --no-store check --json --for sshd --budget 3s
code=$?
stat -c 'privsep %a %U %F' /run/sshd >&2
exit $code"#,
    ) else {
        return;
    };
    assert!(code == 0 || code == 1, "check exited {code}:\n{err}");
    let r: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    let d = r["diffs"].as_array().unwrap_or_else(|| panic!("no diffs: {r:#}"));
    let sshd = d
        .iter()
        .find(|d| d["software"] == "sshd")
        .unwrap_or_else(|| panic!("sshd not read: {r:#}\n{err}"));
    let offered = sshd["offered"].as_array().unwrap();
    assert!(offered.iter().any(|g| g["list"] == "ssh_ciphers"), "{sshd:#}");
    assert!(err.contains("privsep 755 root directory"), "{err}");
    assert!(!format!("{r}").contains("privilege separation"), "{r:#}");
}

/// Where sshd cannot be read at all (/run read-only: no /run/sshd can be made),
/// the ssh client's configuration is still read (`ssh -G` does not need sshd),
/// and what is said about it blames sshd, never ssh.
#[test]
fn ssh_is_read_when_sshd_cannot_be() {
    let Some((code, out, err)) = in_private_run(true, r#""$CB" --no-store check --json --for ssh --budget 3s"#) else {
        return;
    };
    // Measuring needs a private sshd, which as root cannot start without
    // /run/sshd either: exit 3 then, saying so; the reading is what is tested.
    assert!(
        code == 0 || code == 1 || (code == 3 && err.contains("/run/sshd")),
        "check exited {code}:\n{out}\n{err}"
    );
    let r: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    let ssh = r["diffs"]
        .as_array()
        .and_then(|d| d.iter().find(|d| d["software"] == "ssh"))
        .unwrap_or_else(|| panic!("ssh not read: {r:#}\n{err}"));
    assert!(ssh["offered"].as_array().is_some_and(|o| !o.is_empty()), "{ssh:#}");
    let notes = format!("{}", ssh["notes"]);
    assert!(notes.contains("sshd, could not be read") && notes.contains("/run/sshd"), "{ssh:#}");
    // Not a finding that ssh negotiates nothing: that is not known.
    let findings = r["findings"].as_array().unwrap();
    assert!(!findings.iter().any(|f| f["kind"] == "negotiation"), "{r:#}");
    assert!(!notes.contains("negotiate nothing"), "{ssh:#}");
}

/// The sshd lines of a fresh `recommend --json --for sshd` (and the document).
fn sshd_lines(doc: &serde_json::Value) -> Vec<String> {
    let recs = doc["recommendations"].as_array().unwrap_or_else(|| panic!("{doc:#}"));
    let r = recs
        .iter()
        .find(|r| r["target"] == "sshd")
        .unwrap_or_else(|| panic!("no sshd lines: {recs:#?}"));
    r["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().to_string())
        .collect()
}

/// Where sshd's own defaults cannot be read (/run read-only: `sshd -T` as root
/// has no /run/sshd), the sshd block configures no list at all: one built from
/// the client's lists re-added finite-field Diffie-Hellman that OpenSSH 10's
/// sshd no longer offers. Its one comment names the real cause, never "needs
/// root" (this runs as root).
#[test]
fn without_sshd_defaults_the_sshd_block_sets_no_list_and_names_why() {
    let Some((code, out, err)) = in_private_run(
        true,
        r#""$CB" --no-store --db /tmp/cb-h3-recommend.sqlite recommend --json --for sshd --no-validate --budget 3s"#,
    ) else {
        return;
    };
    assert_eq!(code, 0, "{out}\n{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    let lines = sshd_lines(&doc);
    assert!(
        !lines.iter().any(|l| !l.starts_with('#')),
        "a list configured without sshd's defaults: {lines:#?}"
    );
    assert!(!lines.iter().any(|l| l.contains("needs root")), "{lines:#?}");
    let caps = &doc["run"]["capabilities"];
    assert!(caps["sshd_defaults"].is_null(), "{caps:#}");
    let why = caps["sshd_defaults_unread"]
        .as_str()
        .unwrap_or_else(|| panic!("no cause recorded: {caps:#}"));
    assert!(why.contains("/run/sshd"), "{why}");
    assert!(lines.iter().any(|l| l.contains("left out") && l.contains(why)), "{lines:#?}");
}

/// Where `sshd -t` cannot run at all (as root, no /run/sshd can be made), the
/// emitted sshd lines are "not checked", with that cause: never "rejected", as
/// if sshd had refused the lines themselves, and no warning saying so.
#[test]
fn sshd_t_that_cannot_run_is_not_a_rejection() {
    let Some((code, out, err)) = in_private_run(
        true,
        r#"D=$(mktemp -d)
"$CB" --db "$D/h.sqlite" --quiet run --budget 3s >/dev/null 2>&1
"$CB" --db "$D/h.sqlite" recommend --json --for sshd
code=$?
rm -rf "$D"
exit $code"#,
    ) else {
        return;
    };
    assert_eq!(code, 0, "{out}\n{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    let r = doc["recommendations"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["target"] == "sshd"))
        .unwrap_or_else(|| panic!("{doc:#}"));
    let v = &r["validated"];
    assert_eq!(v["status"], "not checked", "{r:#}");
    assert!(v["detail"].as_str().is_some_and(|d| d.contains("/run/sshd")), "{v:#}");
    assert!(!err.contains("refused the emitted lines"), "{err}");
}
