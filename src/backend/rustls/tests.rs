//! rustls over real sockets on 127.0.0.1: with itself and with the system
//! libssl, every TLS 1.3 suite and group, resumption, the bulk transport,
//! refusals; and its record protection against OpenSSL's AEADs.

use super::library::Rustls;
use super::record::{self, Record};
use crate::backend::openssl::certs::{CertType, Identity};
use crate::backend::openssl::library::Openssl;
use crate::backend::openssl::tls::{ConnectError, Protocol};
use crate::backend::record::RecordCipher;
use crate::backend::tls::{ClientConfig, Connection, Negotiated, SelectedSuite, Selection, ServerConfig, TlsLibrary};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

const T: Duration = Duration::from_secs(10);

const TLS13_SUITES: [&str; 3] = ["TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"];
const GROUPS: [&str; 4] = ["X25519MLKEM768", "X25519", "P-256", "P-384"];

fn suite(name: &str) -> SelectedSuite {
    let n = crate::catalog::tls_suite_name(name).unwrap_or_else(|| panic!("{name} is in the knowledge base"));
    SelectedSuite {
        iana: n.iana.clone(),
        openssl: n.openssl.clone().expect("an OpenSSL name"),
        tls13: n.iana.starts_with("TLS_AES_") || n.iana.starts_with("TLS_CHACHA20_"),
    }
}

fn sel(p: Option<Protocol>, suites: &[&str], groups: &[&str]) -> Selection {
    Selection {
        protocol: p,
        suites: suites.iter().map(|s| suite(s)).collect(),
        groups: groups.iter().map(|g| g.to_string()).collect(),
        native: None,
    }
}

/// A server on 127.0.0.1 that accepts `n` connections through `server` and runs
/// `job` on each, each in a thread of its own (a client may hold one connection
/// open while it makes the next); what each gave, or why its handshake failed.
fn serve<R: Send + 'static>(
    server: Arc<dyn ServerConfig>,
    n: usize,
    bulk: bool,
    job: impl Fn(&mut dyn Connection) -> R + Send + Sync + 'static,
) -> (SocketAddr, JoinHandle<Vec<Result<R, String>>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let job = Arc::new(job);
    let h = std::thread::spawn(move || {
        let each: Vec<JoinHandle<Result<R, String>>> = (0..n)
            .map(|_| {
                let (tcp, _) = l.accept().unwrap();
                let (server, job) = (server.clone(), job.clone());
                std::thread::spawn(move || {
                    let mut s = server.accept(tcp, T, bulk).map_err(|r| r.why)?;
                    let out = job(&mut *s);
                    s.close();
                    Ok(out)
                })
            })
            .collect();
        each.into_iter().map(|h| h.join().unwrap()).collect()
    });
    (addr, h)
}

/// The server's side of an echo: five bytes in, the same upper-cased back; what
/// the server negotiated.
fn echo(s: &mut dyn Connection) -> Negotiated {
    let mut b = [0u8; 5];
    s.read_exact(&mut b).unwrap();
    s.write_all(&b.map(|x| x.to_ascii_uppercase())).unwrap();
    s.flush().unwrap();
    s.negotiated()
}

/// The client's side of [`echo`].
fn hello(s: &mut dyn Connection) {
    s.write_all(b"hello").unwrap();
    s.flush().unwrap();
    let mut b = [0u8; 5];
    s.read_exact(&mut b).unwrap();
    assert_eq!(&b, b"HELLO");
}

/// One connection: `client` to a server made by `server`; both ends' view.
fn pair(client: Arc<dyn ClientConfig>, server: Arc<dyn ServerConfig>) -> (Negotiated, Negotiated) {
    let (addr, h) = serve(server, 1, false, echo);
    let mut c = match client.connect(addr, Some("localhost"), T, None, false) {
        Ok(c) => c,
        Err(e) => panic!("client: {e}; server: {:?}", h.join().unwrap()),
    };
    hello(&mut *c);
    let ours = c.negotiated();
    c.close();
    let theirs = h.join().unwrap().remove(0).unwrap();
    (ours, theirs)
}

#[test]
fn rustls_names_what_it_has_and_lacks() {
    let r = Rustls;
    let suites = r.suites();
    for s in TLS13_SUITES.iter().chain(&[
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
    ]) {
        assert!(suites.iter().any(|x| x == s), "{s} in {suites:?}");
        assert_eq!(r.lacks(s), None);
    }
    assert_eq!(suites.len(), 9, "{suites:?}");
    let groups = r.groups();
    for g in GROUPS {
        assert!(groups.iter().any(|x| x == g), "{g} in {groups:?}");
    }
    let cbc = r.lacks("TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA").expect("no CBC in rustls");
    assert!(cbc.contains("CBC") && cbc.starts_with("rustls 0.23."), "{cbc}");
    assert!(r.lacks("TLS_DHE_RSA_WITH_AES_128_GCM_SHA256").unwrap().contains("DHE"));
    assert!(r.lacks("TLS_RSA_WITH_AES_128_GCM_SHA256").unwrap().contains("RSA key exchange"));
    assert!(r.lacks("TLS_AES_128_CCM_SHA256").unwrap().contains("CCM"));
    let e = r.client(&Selection::only(Protocol::Tls11), false).err().expect("no TLS 1.1");
    assert!(e.to_string().contains("TLS 1.2 and 1.3 only"), "{e}");
    let e = r.client(&sel(None, &["TLS_RSA_WITH_AES_128_CBC_SHA"], &[]), false).err().unwrap();
    assert!(e.to_string().contains("does not implement"), "{e}");
    let e = r.client(&sel(None, &[], &["ffdhe2048"]), false).err().unwrap();
    assert!(e.to_string().contains("no key-exchange group ffdhe2048"), "{e}");
}

/// The version is the one Cargo.lock pins (the lock the build used).
#[test]
fn rustls_version_is_the_locked_one() {
    let lock = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.lock")).unwrap();
    let block = lock
        .split("[[package]]")
        .find(|b| b.lines().any(|l| l.trim() == "name = \"rustls\""))
        .expect("rustls in Cargo.lock");
    let v = block
        .lines()
        .find_map(|l| l.trim().strip_prefix("version = \""))
        .and_then(|v| v.strip_suffix('"'))
        .unwrap();
    let got = Rustls.version();
    assert!(got.starts_with(&format!("rustls {v} (aws-lc-rs 1.")), "{got} against {v}");
    assert!(!got.contains('?'), "{got}");
}

/// Every TLS 1.3 suite with every group, one end restricted to it and the other
/// offering everything (which takes a HelloRetryRequest where the client's first
/// key share is another group): both ends report exactly that suite and group,
/// and data goes both ways.
#[test]
fn rustls_with_itself_every_tls13_suite_and_group() {
    let id = Identity::generate(CertType::EcdsaP256).unwrap();
    let r = Rustls;
    let everything = sel(Some(Protocol::Tls13), &TLS13_SUITES, &GROUPS);
    for s in TLS13_SUITES {
        for g in GROUPS {
            let one = sel(Some(Protocol::Tls13), &[s], &[g]);
            let want = ("TLSv1.3".to_string(), s.to_string(), Some(g.to_string()));
            for (c, srv) in [(&everything, &one), (&one, &everything)] {
                let (ours, theirs) = pair(r.client(c, false).unwrap(), r.server(srv, &id).unwrap());
                assert_eq!(ours, want);
                assert_eq!(theirs, want);
            }
        }
    }
}

/// rustls against the system libssl, each way, TLS 1.3 and 1.2: the handshake
/// completes, data echoes, and both ends name the same suite and group.
#[test]
fn rustls_and_openssl_agree_both_ways() {
    let id = Identity::generate(CertType::EcdsaP256).unwrap();
    // TLS 1.2: the client's groups also name the curves its peer's ECDSA
    // certificate may use (RFC 8422), so P-256 stays among them.
    let cases: [(Protocol, &str, &[&str]); 4] = [
        (Protocol::Tls13, "TLS_AES_256_GCM_SHA384", &["X25519"]),
        (Protocol::Tls13, "TLS_CHACHA20_POLY1305_SHA256", &["P-256"]),
        (Protocol::Tls12, "ECDHE-ECDSA-AES128-GCM-SHA256", &["P-256"]),
        (Protocol::Tls12, "ECDHE-ECDSA-CHACHA20-POLY1305", &["X25519", "P-256"]),
    ];
    let (r, o): (&dyn TlsLibrary, &dyn TlsLibrary) = (&Rustls, &Openssl);
    for (p, s, g) in cases {
        let x = sel(Some(p), &[s], g);
        let iana = suite(s).iana;
        for (client, server) in [(r, o), (o, r)] {
            let what = format!("{} client, {} server, {s}", client.name(), server.name());
            let (ours, theirs) = pair(client.client(&x, false).unwrap(), server.server(&x, &id).unwrap());
            assert_eq!((ours.0.as_str(), ours.1.as_str()), (p.label(), iana.as_str()), "{what}");
            assert_eq!(ours, theirs, "{what}");
            assert_eq!(ours.2.as_deref(), Some(g[0]), "{what}");
        }
    }
}

/// A second connection offered the first's session resumes it (a third, offered
/// none, does not): TLS 1.3 after waiting for the ticket, TLS 1.2; with a rustls
/// server and with libssl's.
#[test]
fn rustls_resumes_tls13_and_tls12() {
    let id = Identity::generate(CertType::EcdsaP256).unwrap();
    let (r, o): (&dyn TlsLibrary, &dyn TlsLibrary) = (&Rustls, &Openssl);
    for server_lib in [r, o] {
        for p in [Protocol::Tls13, Protocol::Tls12] {
            let what = format!("{} server, {}", server_lib.name(), p.label());
            let x = Selection::only(p);
            let client = r.client(&x, true).unwrap();
            let (addr, h) = serve(server_lib.server(&x, &id).unwrap(), 3, false, echo);
            let mut first = client.connect(addr, None, T, None, false).unwrap();
            assert!(!first.resumed(), "{what}");
            // Before any read, and the first connection stays open and unread
            // while the second resumes: the wait itself takes the TLS 1.3 ticket in.
            assert!(first.await_ticket(T), "{what}: no ticket");
            let session = first.session().expect("a session to offer");
            let mut second = client.connect(addr, None, T, Some(&session), false).unwrap();
            assert!(second.resumed(), "{what}: not resumed");
            hello(&mut *second);
            hello(&mut *first);
            assert_eq!(second.negotiated().0, p.label());
            first.close();
            second.close();
            let mut third = client.connect(addr, None, T, None, false).unwrap();
            hello(&mut *third);
            assert!(!third.resumed(), "{what}: resumed without being offered a session");
            third.close();
            assert!(h.join().unwrap().iter().all(|r| r.is_ok()), "{what}");
        }
    }
}

/// 4 MiB each way over the bulk transport, hashed at the far end; records are
/// gathered into large `send(2)` calls (far fewer calls than 16 KiB records).
#[test]
fn rustls_bulk_moves_4_mib_each_way_intact() {
    const N: usize = 4 << 20;
    let id = Identity::generate(CertType::EcdsaP256).unwrap();
    let data: Arc<Vec<u8>> = Arc::new((0..N).map(|i| (i * 7 + i / 4099) as u8).collect());
    let want = openssl::sha::sha256(&data);
    for p in [Protocol::Tls13, Protocol::Tls12] {
        let x = Selection::only(p);
        let back = data.clone();
        let (addr, h) = serve(Rustls.server(&x, &id).unwrap(), 1, true, move |s| {
            let mut got = vec![0u8; N];
            s.read_exact(&mut got).unwrap();
            s.write_all(&back).unwrap();
            s.flush().unwrap();
            (openssl::sha::sha256(&got), s.io_calls())
        });
        let mut c = Rustls.client(&x, false).unwrap().connect(addr, None, T, None, true).unwrap();
        c.write_all(&data).unwrap();
        c.flush().unwrap();
        let mut got = vec![0u8; N];
        c.read_exact(&mut got).unwrap();
        assert_eq!(openssl::sha::sha256(&got), want, "{}: the server's 4 MiB", p.label());
        let (sends, recvs) = c.io_calls().expect("the bulk transport counts");
        c.close();
        let (theirs, server_calls) = h.join().unwrap().remove(0).unwrap();
        assert_eq!(theirs, want, "{}: the client's 4 MiB", p.label());
        assert!(sends < 64, "{sends} send(2) calls for 4 MiB: records are not gathered");
        assert!(recvs > 0 && server_calls.is_some_and(|(s, _)| s < 64), "{recvs} {server_calls:?}");
    }
}

/// A client offering only ChaCha20 against a server offering only AES-GCM: the
/// client's handshake is refused, the server's fails (not "the client gave up").
#[test]
fn rustls_with_nothing_in_common_is_refused() {
    let id = Identity::generate(CertType::EcdsaP256).unwrap();
    let server = Rustls
        .server(
            &sel(Some(Protocol::Tls13), &["TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384"], &[]),
            &id,
        )
        .unwrap();
    let client = Rustls
        .client(&sel(Some(Protocol::Tls13), &["TLS_CHACHA20_POLY1305_SHA256"], &[]), false)
        .unwrap();
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let h = std::thread::spawn(move || {
        let (tcp, _) = l.accept().unwrap();
        server.accept(tcp, T, false).err()
    });
    let e = client.connect(addr, None, T, None, false).err().expect("no common suite");
    assert!(matches!(&e, ConnectError::Rejected(m) if m.contains("HandshakeFailure")), "{e:?}");
    let refused = h.join().unwrap().expect("the server refuses");
    assert!(!refused.gave_up, "{}", refused.why);
}

/// A peer that answers in plain text is "not TLS"; one that says nothing is
/// "stalled" after the timeout, having sent 0 bytes.
#[test]
fn rustls_tells_not_tls_from_silence() {
    let client = Rustls.client(&Selection::default(), false).unwrap();
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let h = std::thread::spawn(move || {
        let (mut tcp, _) = l.accept().unwrap();
        let _ = tcp.read(&mut [0u8; 512]);
        tcp.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n").unwrap();
        let (silent, _) = l.accept().unwrap();
        std::thread::sleep(Duration::from_millis(1500));
        drop(silent);
    });
    let e = client.connect(addr, None, T, None, false).err().expect("not TLS");
    assert!(matches!(e, ConnectError::NotTls(_)), "{e:?}");
    let t0 = std::time::Instant::now();
    let e = client
        .connect(addr, None, Duration::from_millis(400), None, false)
        .err()
        .expect("silence");
    assert!(matches!(e, ConnectError::Stalled { bytes: Some(0), .. }), "{e:?}");
    assert!(t0.elapsed() < Duration::from_millis(1400), "{:?}", t0.elapsed());
    h.join().unwrap();
}

/// rustls's sealed records are OpenSSL's: the same AEAD, key, the nonce rustls
/// derives (IV XOR sequence number) and TLS 1.3's additional data (the record
/// header `17 03 03 len`) over data || content type 0x17 give the same bytes,
/// for two records in a row; OpenSSL opens rustls's record; rustls opens it
/// back to the data; a flipped ciphertext byte fails the open. (A fixed vector
/// with its own additional data cannot pass through rustls's record: rustls
/// makes the additional data itself. OpenSSL's AEADs are checked against NIST's
/// GCM vector in `backend::record`.)
#[test]
fn rustls_records_are_openssls_records() {
    assert_eq!(record::AEADS.len(), 3);
    assert!(!record::has("aes-128-ccm"));
    assert!(
        Record::new("aes-128-gcm", &[0u8; 32], &[0u8; 12], b"x").is_err(),
        "a 32-byte AES-128 key"
    );
    for name in record::AEADS {
        assert!(record::has(name));
        let passed = record::known_answer(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(passed.len(), 1, "{name}");
    }
    // The check can fail: a record sealed under another key is not OpenSSL's.
    let mut r = Record::new("aes-128-gcm", &[1u8; 16], &[0u8; 12], &[7u8; 100]).unwrap();
    r.seal(&[], &[]).unwrap();
    r.open(&[], &[]).unwrap();
    assert_eq!(r.opened(), &[7u8; 100][..]);
    r.sealed_mut()[0] ^= 1;
    let e = r.open(&[], &[]).unwrap_err().to_string();
    assert!(e.starts_with("tag verification failed"), "{e}");
}
