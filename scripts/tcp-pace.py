# A paced TCP sender for measuring what a reader costs below its top speed (issue 25's polling):
# connects to 127.0.0.1:PORT and writes CHUNK-byte zeros at RATE bytes/s for SECONDS, then closes.
#   taskset -c 0 python3 scripts/tcp-pace.py PORT RATE SECONDS CHUNK   (e.g. 5999 800e6 3 131072)
import socket, sys, time
port, rate, secs, chunk = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
s = socket.create_connection(('127.0.0.1', port))
buf = b'\0' * chunk
t0 = time.monotonic(); sent = 0
while True:
    now = time.monotonic() - t0
    if now >= secs: break
    ahead = sent / rate - now
    if ahead > 0: time.sleep(ahead)
    s.sendall(buf); sent += chunk
s.close()
