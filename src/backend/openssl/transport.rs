//! The bulk transport under a TLS library: TCP writes gathered into large
//! `send(2)` calls, reads served from large `recv(2)` calls.

use std::io::{Read, Write};
use std::net::TcpStream;

/// A TCP stream under libssl for bulk transfers, in both directions buffered as a
/// buffering BIO would be:
/// - what libssl writes (whole TLS records) is gathered into `send(2)` calls of up
///   to `send_limit` bytes. Records keep their size (each `SSL_write` of 16 KiB is
///   one 16 KiB record); only the number of system calls and TCP segments changes.
///   Anything gathered goes out before every read and on `flush` (libssl flushes
///   after each handshake flight and alert), so a peer never waits for bytes that
///   sit here;
/// - reads are served from one `recv(2)` of up to `recv_buffer` bytes. With
///   libssl's read-ahead off (see `plain_reads`), libssl asks for a record header,
///   then its body, and never moves unread records around in its own buffer (with
///   read-ahead and a large buffer, OpenSSL 3.0 moves everything still unread to
///   the front of that buffer before each record).
///
/// `Coalesced::new(tcp, 0, 0)` is a plain TCP stream.
#[derive(Debug)]
pub struct Coalesced {
    tcp: TcpStream,
    out: Vec<u8>,
    send_limit: usize,
    inbuf: Vec<u8>,
    pos: usize,
    end: usize,
    /// `send(2)` and `recv(2)` calls that moved data.
    pub sends: u64,
    pub recvs: u64,
}

impl Coalesced {
    pub fn new(tcp: TcpStream, send_limit: usize, recv_buffer: usize) -> Coalesced {
        Coalesced {
            tcp,
            out: Vec::with_capacity(send_limit),
            send_limit,
            inbuf: vec![0u8; recv_buffer],
            pos: 0,
            end: 0,
            sends: 0,
            recvs: 0,
        }
    }

    /// The TCP stream underneath.
    pub fn tcp(&self) -> &TcpStream {
        &self.tcp
    }

    /// Whether received bytes wait in the read buffer.
    pub fn has_buffered(&self) -> bool {
        self.pos < self.end
    }

    fn drain(&mut self) -> std::io::Result<()> {
        if !self.out.is_empty() {
            self.sends += 1;
            let r = self.tcp.write_all(&self.out);
            self.out.clear();
            r?;
        }
        Ok(())
    }
}

impl Read for Coalesced {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.drain()?;
        if self.pos == self.end {
            self.recvs += 1;
            if buf.len() >= self.inbuf.len() {
                return self.tcp.read(buf);
            }
            self.pos = 0;
            self.end = self.tcp.read(&mut self.inbuf)?;
        }
        let k = buf.len().min(self.end - self.pos);
        buf[..k].copy_from_slice(&self.inbuf[self.pos..self.pos + k]);
        self.pos += k;
        Ok(k)
    }
}

impl Write for Coalesced {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.out.is_empty() && buf.len() >= self.send_limit {
            self.sends += 1;
            return self.tcp.write(buf);
        }
        if self.out.len() + buf.len() > self.send_limit {
            self.drain()?;
        }
        self.out.extend_from_slice(buf);
        if self.out.len() >= self.send_limit {
            self.drain()?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.drain()?;
        self.tcp.flush()
    }
}
