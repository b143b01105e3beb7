//! NZBGet as it is installed: `check` on a real nzbget.conf read with the real
//! OpenSSL parser.

mod common;

use common::check::check;

/// The 2015 advice, `ServerX.Cipher=RC4-MD5`, is refused by today's OpenSSL:
/// NZBGet cannot connect to that server at all. `check` says so as a finding
/// (exit 1) naming the server, and its fix is a line the real OpenSSL takes.
#[test]
fn refused_cipher_list_is_a_finding_with_its_fix() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("nzbget.conf");
    std::fs::write(
        &conf,
        "MainDir=/tmp/nzbget-never\nServer1.Active=yes\nServer1.Host=plain.example.com\nServer1.Encryption=no\n\
         Server2.Active=yes\nServer2.Name=secure\nServer2.Host=news.example.com\nServer2.Port=563\n\
         Server2.Encryption=yes\nServer2.Cipher=RC4-MD5\n",
    )
    .unwrap();
    let (code, r) = check(&conf, "nzbget", "6");
    assert_eq!(code, 1, "{r:#}");
    let findings = r["findings"].as_array().unwrap();
    let f = findings
        .iter()
        .find(|f| f["kind"] == "negotiation")
        .unwrap_or_else(|| panic!("no negotiation finding: {r:#}"));
    let msg = f["message"].as_str().unwrap();
    for want in [
        "Server2 (news.example.com)",
        "NZBGet cannot connect to it",
        "`RC4-MD5`",
        "no cipher match",
        "fix: Server2.Cipher=",
    ] {
        assert!(msg.contains(want), "{want:?} missing from {msg}");
    }
    let d = &r["diffs"][0];
    assert_eq!(d["nothing_to_change"], false, "{d:#}");
    let fix = d["fix"][0].as_str().unwrap();
    let value = fix.strip_prefix("Server2.Cipher=").unwrap_or_else(|| panic!("{fix}"));
    // The value NZBGet gives SSL_set_cipher_list: the real OpenSSL takes it.
    let out = std::process::Command::new("openssl")
        .args(["ciphers", "-s", "--", value])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "openssl refuses {value}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
