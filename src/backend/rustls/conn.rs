//! A rustls connection over a TCP socket: the handshake (the client's within the
//! operation's timeout and the run's deadline, a slice at a time, as libssl's),
//! application data as `Read`/`Write`, session tickets.
//!
//! rustls does no I/O of its own: it is handed bytes (`read_tls`) and hands
//! records back (`write_tls`). The transport underneath is always `Coalesced`:
//! with `bulk` it gathers records into large `send(2)` calls and serves reads
//! from large `recv(2)` calls; `Coalesced::new(tcp, 0, 0)` is the plain socket.

use super::{group_name, suite_iana};
use crate::backend::openssl::tls::{rearm, Coalesced, ConnectError};
use crate::backend::tls::{Connection, Negotiated, Refused, Resumption};
use ::rustls::client::{ClientSessionMemoryCache, ClientSessionStore};
use ::rustls::pki_types::ServerName;
use ::rustls::{ClientConfig, HandshakeKind, InvalidMessage, ProtocolVersion};
use std::io::{ErrorKind, Read, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A client's saved sessions for one server, and the configuration that offers
/// them: what `Connection::session` hands out, to be given back to `connect`.
/// rustls resumes from a configuration's session store, so the store *is* the
/// session (TLS 1.3 tickets are taken from it once each; the server sends new
/// ones on every connection).
pub struct Session {
    /// The client configuration this session was made with.
    pub(super) base: Arc<ClientConfig>,
    /// `base` with `store` as its resumption store.
    pub(super) config: Arc<ClientConfig>,
    pub(super) store: Arc<ClientSessionMemoryCache>,
}

impl Session {
    /// An empty store under a copy of `base` (the next handshake is a full one).
    pub(super) fn fresh(base: &Arc<ClientConfig>) -> Session {
        Session::with_store(base, Arc::new(ClientSessionMemoryCache::new(16)))
    }

    pub(super) fn with_store(base: &Arc<ClientConfig>, store: Arc<ClientSessionMemoryCache>) -> Session {
        let mut cfg = (**base).clone();
        cfg.resumption = ::rustls::client::Resumption::store(store.clone());
        Session {
            base: base.clone(),
            config: Arc::new(cfg),
            store,
        }
    }
}

/// An established rustls connection.
pub struct Stream {
    conn: ::rustls::Connection,
    io: Coalesced,
    bulk: bool,
    /// Read and write timeout of the socket after the handshake.
    timeout: Duration,
    /// A client with resumption on: its session and the server's name.
    session: Option<(Arc<Session>, ServerName<'static>)>,
}

/// Why a handshake failed, rustls's error in the program's terms: an alert is a
/// refusal, a reply that does not parse as TLS records is not TLS.
pub(super) fn classify(e: &::rustls::Error) -> ConnectError {
    use ::rustls::Error as E;
    match e {
        E::AlertReceived(a) => ConnectError::Rejected(format!("received alert {a:?}")),
        E::InvalidMessage(InvalidMessage::InvalidContentType | InvalidMessage::UnknownProtocolVersion) | E::PeerSentOversizedRecord => {
            ConnectError::NotTls(e.to_string())
        }
        _ => ConnectError::Rejected(e.to_string()),
    }
}

fn timed_out(e: &std::io::Error) -> bool {
    matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut)
}

impl Stream {
    /// Writes out every record rustls has ready (into the transport: `flush`
    /// sends what a gathering transport holds).
    fn push(&mut self) -> std::io::Result<()> {
        while self.conn.wants_write() {
            self.conn.write_tls(&mut self.io)?;
        }
        Ok(())
    }

    /// Sends what rustls has ready and the transport gathered.
    fn push_all(&mut self) -> std::io::Result<()> {
        self.push()?;
        self.io.flush()
    }

    /// A client handshake within `timeout` (and the run's deadline): the socket
    /// blocks a slice at a time, so a peer that drips bytes cannot restart the
    /// clock and Ctrl-C is seen. Afterwards the socket's timeouts are `timeout`,
    /// capped by what is left of the run.
    pub(super) fn client(
        conn: ::rustls::ClientConnection,
        io: Coalesced,
        timeout: Duration,
        bulk: bool,
        session: Option<(Arc<Session>, ServerName<'static>)>,
    ) -> Result<Stream, ConnectError> {
        let dl = crate::deadline::op(timeout);
        let t0 = Instant::now();
        let mut s = Stream {
            conn: conn.into(),
            io,
            bulk,
            timeout,
            session,
        };
        let out_of_time = |bytes: u64| ConnectError::out_of_time(Some(bytes), t0);
        let mut bytes = 0u64;
        loop {
            // False once the time is up (or Ctrl-C): the socket then blocks no more.
            let Some(slice) = dl.slice() else {
                return Err(out_of_time(bytes));
            };
            let _ = s.io.tcp().set_read_timeout(Some(slice));
            let _ = s.io.tcp().set_write_timeout(Some(slice));
            s.push().map_err(|e| ConnectError::Rejected(format!("connection closed: {e}")))?;
            if !s.conn.is_handshaking() {
                break;
            }
            match s.conn.read_tls(&mut s.io) {
                Ok(0) => return Err(ConnectError::Rejected("the server closed the connection".into())),
                Ok(n) => bytes += n as u64,
                Err(e) if timed_out(&e) => continue,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(ConnectError::Rejected(format!("connection closed: {e}"))),
            }
            if let Err(e) = s.conn.process_new_packets() {
                // rustls has queued its alert: send it, as a library does.
                let _ = s.push_all();
                return Err(classify(&e));
            }
        }
        s.io.flush()
            .map_err(|e| ConnectError::Rejected(format!("connection closed: {e}")))?;
        rearm(s.io.tcp(), timeout).map_err(|e| ConnectError::Tcp(e.to_string()))?;
        Ok(s)
    }

    /// A server handshake on an accepted socket whose timeouts are set. A client
    /// that goes away (or times out) has given up; a TLS error is a refusal.
    pub(super) fn server(conn: ::rustls::ServerConnection, io: Coalesced, timeout: Duration, bulk: bool) -> Result<Stream, Refused> {
        let mut s = Stream {
            conn: conn.into(),
            io,
            bulk,
            timeout,
            session: None,
        };
        let gave_up = |why: String| Refused { why, gave_up: true };
        loop {
            s.push().map_err(|e| gave_up(format!("connection closed: {e}")))?;
            if !s.conn.is_handshaking() {
                break;
            }
            match s.conn.read_tls(&mut s.io) {
                Ok(0) => return Err(gave_up("the client closed the connection".into())),
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(gave_up(format!("connection closed: {e}"))),
            }
            if let Err(e) = s.conn.process_new_packets() {
                let _ = s.push_all();
                return Err(Refused {
                    why: e.to_string(),
                    gave_up: false,
                });
            }
        }
        // The last flight (TLS 1.3: the tickets after the client's Finished).
        s.push_all().map_err(|e| gave_up(format!("connection closed: {e}")))?;
        Ok(s)
    }

    fn tls13_tickets(&self) -> u32 {
        match &self.conn {
            ::rustls::Connection::Client(c) => c.tls13_tickets_received(),
            ::rustls::Connection::Server(_) => 0,
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            match self.conn.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                // The peer closed without close_notify (UnexpectedEof), or worse.
                Err(e) => return Err(e),
            }
            self.push()?;
            // Ok(0): the end of the stream, which the reader reports next time round.
            self.conn.read_tls(&mut self.io)?;
            if let Err(e) = self.conn.process_new_packets() {
                let _ = self.push_all();
                return Err(std::io::Error::new(ErrorKind::InvalidData, e));
            }
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.push()?;
        let n = self.conn.writer().write(buf)?;
        self.push()?;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.conn.writer().flush()?;
        self.push_all()
    }
}

impl Connection for Stream {
    fn negotiated(&self) -> Negotiated {
        let protocol = match self.conn.protocol_version() {
            Some(ProtocolVersion::TLSv1_3) => "TLSv1.3".to_string(),
            Some(ProtocolVersion::TLSv1_2) => "TLSv1.2".to_string(),
            Some(v) => format!("{v:?}"),
            None => String::new(),
        };
        let suite = self
            .conn
            .negotiated_cipher_suite()
            .map(|s| suite_iana(s.suite()))
            .unwrap_or_default();
        let group = self.conn.negotiated_key_exchange_group().map(|g| group_name(g.name()));
        (protocol, suite, group)
    }

    fn resumed(&self) -> bool {
        self.conn.handshake_kind() == Some(HandshakeKind::Resumed)
    }

    fn session(&self) -> Option<Resumption> {
        self.session.as_ref().map(|(s, _)| s.clone() as Resumption)
    }

    /// TLS 1.3 tickets come after the handshake and rustls takes them in as it
    /// reads: reads (a slice at a time, within `timeout` and the run's deadline)
    /// until one has come, application data comes (which stays for `read`), or the
    /// peer closes. TLS 1.2: whether the handshake left a session to resume.
    fn await_ticket(&mut self, timeout: Duration) -> bool {
        let Some((session, name)) = &self.session else {
            return false;
        };
        if self.conn.protocol_version() != Some(ProtocolVersion::TLSv1_3) {
            return session.store.tls12_session(name).is_some();
        }
        let dl = crate::deadline::op(timeout);
        let ok = loop {
            if self.tls13_tickets() > 0 {
                break true;
            }
            let Some(slice) = dl.slice() else {
                break false;
            };
            let _ = self.io.tcp().set_read_timeout(Some(slice));
            match self.conn.read_tls(&mut self.io) {
                Ok(0) => {
                    let _ = self.conn.process_new_packets();
                    break self.tls13_tickets() > 0;
                }
                Ok(_) => match self.conn.process_new_packets() {
                    Ok(state) if state.plaintext_bytes_to_read() > 0 => break self.tls13_tickets() > 0,
                    Ok(_) => {}
                    Err(_) => break false,
                },
                Err(e) if timed_out(&e) || e.kind() == ErrorKind::Interrupted => {}
                Err(_) => break false,
            }
        };
        let _ = rearm(self.io.tcp(), self.timeout);
        ok
    }

    fn io_calls(&self) -> Option<(u64, u64)> {
        self.bulk.then_some((self.io.sends, self.io.recvs))
    }

    fn rearm(&self, timeout: Duration) -> std::io::Result<()> {
        rearm(self.io.tcp(), timeout)
    }

    fn close(&mut self) {
        self.conn.send_close_notify();
        let _ = self.push_all();
    }
}
