#!/usr/bin/env python3
"""A misbehaving peer on 127.0.0.1 for bench/deadlines.sh: accepts connections
and then stays silent, drips one byte every 2 s, or speaks garbage. Stops by
itself after --lifetime seconds. Prints the port on stdout, then serves."""
import argparse, socket, sys, threading, time

ap = argparse.ArgumentParser()
ap.add_argument("mode", choices=["silent", "drip", "garbage"])
ap.add_argument("--lifetime", type=float, default=120)
ap.add_argument("--proto", choices=["tls", "ssh"], default="tls")
a = ap.parse_args()

srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", 0))
srv.listen(64)
srv.settimeout(0.5)
print(srv.getsockname()[1], flush=True)
end = time.time() + a.lifetime

def serve(c):
    try:
        c.settimeout(0.5)
        if a.mode == "silent":
            while time.time() < end:
                try:
                    if c.recv(4096) == b"":
                        return
                except socket.timeout:
                    pass
        elif a.mode == "drip":
            # A TLS record header or an SSH banner, one byte every 2 s, never finished.
            data = b"\x16\x03\x03\x40\x00" + b"\x02" * 100000 if a.proto == "tls" else b"SSH-2.0-" + b"x" * 100000
            for b in data:
                if time.time() >= end:
                    return
                c.sendall(bytes([b]))
                time.sleep(2)
        else:
            c.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n" + bytes(range(256)) + b"\r\n")
            time.sleep(0.5)
    except OSError:
        pass
    finally:
        c.close()

while time.time() < end:
    try:
        c, _ = srv.accept()
    except socket.timeout:
        continue
    threading.Thread(target=serve, args=(c,), daemon=True).start()
