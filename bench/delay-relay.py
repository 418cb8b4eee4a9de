#!/usr/bin/env python3
"""A delaying, counting TCP relay for `npm run bench:cluster` (bench/cluster.ts).

    delay-relay.py --upstream HOST:PORT --delay-ms 0.25 --listen N

Listens on N ports of 127.0.0.1 (one per simulated machine) and relays every connection to
HOST:PORT, holding each chunk for --delay-ms in each direction, as a LAN link would. It
prints the ports it listens on as one JSON line, then answers commands on stdin, one a line:

    stats          one JSON line: per port, bytes up (client -> server), down, connections
    cut I          drops the connections of port I and refuses new ones (a cut link)
    restore I      accepts connections on port I again
    hold I MS      holds every byte of port I for MS more milliseconds (a stalled link)

It exits when stdin closes, so it never outlives the bench that started it.

Why Python and not Node: Node's timers have a resolution of one millisecond, so a Node relay
cannot add 0.25 ms; time.sleep() here uses nanosleep. The kernel of the bench machines has no
netem qdisc (docs/benchmarks-log.md, "Scale-out").
"""
import argparse
import json
import socket
import sys
import threading
import time


class Port:
    def __init__(self, index):
        self.index = index
        self.up = 0
        self.down = 0
        self.connections = 0
        self.cut = False
        self.hold_until = 0.0
        self.socks = set()
        self.lock = threading.Lock()


def pump(src, dst, port, direction, delay):
    """Copies src to dst, each chunk held until `delay` after it was read.

    One thread per direction, no queue: what arrives while a chunk is held waits in the
    socket buffer and is read as one chunk after, so a byte is held between `delay` and
    twice `delay`, and a busy link costs few wake-ups.
    """
    try:
        while True:
            data = src.recv(262144)
            if not data:
                break
            due = time.monotonic() + delay
            while True:
                wait = max(due, port.hold_until) - time.monotonic()
                if wait <= 0:
                    break
                time.sleep(wait)
            with port.lock:
                if direction == 'up':
                    port.up += len(data)
                else:
                    port.down += len(data)
            dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def serve(listener, port, upstream, delay):
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        if port.cut:
            client.close()
            continue
        try:
            server = socket.create_connection(upstream)
        except OSError:
            client.close()
            continue
        for s in (client, server):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with port.lock:
            port.connections += 1
            port.socks.update((client, server))

        def run(c=client, s=server):
            a = threading.Thread(target=pump, args=(c, s, port, 'up', delay), daemon=True)
            a.start()
            pump(s, c, port, 'down', delay)
            a.join()
            for x in (c, s):
                x.close()
            with port.lock:
                port.socks.difference_update((c, s))

        threading.Thread(target=run, daemon=True).start()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--upstream', required=True)
    ap.add_argument('--delay-ms', type=float, default=0.25)
    ap.add_argument('--listen', type=int, default=1)
    a = ap.parse_args()
    host, _, p = a.upstream.rpartition(':')
    upstream = (host, int(p))
    delay = a.delay_ms / 1000.0
    ports = []
    for i in range(a.listen):
        ls = socket.socket()
        ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        ls.bind(('127.0.0.1', 0))
        ls.listen(64)
        port = Port(i)
        ports.append((ls.getsockname()[1], port))
        threading.Thread(target=serve, args=(ls, port, upstream, delay), daemon=True).start()
    print(json.dumps({'ports': [n for n, _ in ports]}), flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == 'stats':
            out = []
            for n, port in ports:
                with port.lock:
                    out.append({'port': n, 'up': port.up, 'down': port.down, 'connections': port.connections})
            print(json.dumps({'stats': out}), flush=True)
        elif words[0] in ('cut', 'restore', 'hold') and len(words) >= 2:
            port = ports[int(words[1])][1]
            if words[0] == 'cut':
                port.cut = True
                with port.lock:
                    socks = list(port.socks)
                for s in socks:
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
            elif words[0] == 'restore':
                port.cut = False
            else:
                port.hold_until = time.monotonic() + float(words[2]) / 1000.0
            print(json.dumps({'ok': words[0]}), flush=True)


if __name__ == '__main__':
    main()
