#!/usr/bin/env python3
"""Reproduces, on loopback with real sockets, each pathology docs/diagnosis.md describes, and prints
what `ss -tmi` shows for it (the reference). One case per run, bounded in time:

  diagnosis-study.py CASE [SECONDS]
  CASE: pinned-sndbuf   a sender with SO_SNDBUF 16384 (tb 32 KiB) writing 256 KiB messages to a reader that reads
        pinned-sndbuf-quickack   the same, the reader setting TCP_QUICKACK after every read
        pinned-rcvbuf   a reader with SO_RCVBUF 16384 before listen, a sender flooding
        stalled         an autotuned reader that stops reading
        stalled-pinned  a pinned (SO_RCVBUF 16384) reader that stops reading
        auto            both autotuned, reader reading (the baseline)
The server listens on 127.0.0.1:PORT (env PORT, default 47001) so that `ss` can filter on it."""
import os, socket, subprocess, sys, threading, time

case = sys.argv[1]
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 4
port = int(os.environ.get('PORT', '47001'))
MSG = 256 * 1024
moved = {'rx': 0, 'tx': 0}
stop = threading.Event()

srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
if case in ('pinned-rcvbuf', 'stalled-pinned'):
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
srv.bind(('127.0.0.1', port))
srv.listen(8)

def reader():
    c, _ = srv.accept()
    if case.startswith('stalled'):
        stop.wait()
        return
    while not stop.is_set():
        b = c.recv(65536)
        if not b:
            return
        moved['rx'] += len(b)
        if case == 'pinned-sndbuf-quickack':
            c.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)

def writer():
    s = socket.socket()
    if case.startswith('pinned-sndbuf'):
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 16384)
    s.connect(('127.0.0.1', port))
    s.settimeout(0.2)
    msg = b'x' * MSG
    while not stop.is_set():
        try:
            moved['tx'] += s.send(msg)
        except socket.timeout:
            pass

threading.Thread(target=reader, daemon=True).start()
threading.Thread(target=writer, daemon=True).start()
t0 = time.time()
time.sleep(seconds)
print(f'case {case}: {moved["tx"] / (time.time() - t0) / 1e6:.2f} MB/s written, {moved["rx"] / (time.time() - t0) / 1e6:.2f} MB/s read')
print(subprocess.run(['ss', '-tmieon', 'state', 'established', f'( sport = :{port} or dport = :{port} )'],
                     capture_output=True, text=True).stdout)
if os.environ.get('HOLD'):
    time.sleep(float(os.environ['HOLD']))
stop.set()
