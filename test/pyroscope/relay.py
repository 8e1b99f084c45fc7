#!/usr/bin/env python3
"""A TCP relay in front of the Pyroscope server, for the upload test's
outage: the agent uploads through it, and the relay, not the server, goes
down and comes back.

  relay.py LISTEN_PORT SERVER_PORT

SIGUSR1 takes it down: the listening socket is closed (new connections
are refused, as by a stopped server) and every open connection is closed
as soon as it is between requests. SIGUSR2 brings it back. It prints "up"
and "down" (flushed) once each change is complete.

Why not stop the server itself: a Pyroscope server stopped and started
again now and then no longer holds what it had acknowledged before it
stopped (a CI run read 2.75% less allocation at the test's site than the
agent had delivered, the share of the periods before the outage), and a
connection cut in the middle of a request can be stored by the server and
retried by the agent. Neither is the agent's to answer for; this relay
cuts a connection only between requests, so what the server holds is
exactly what the agent was told was delivered.

"Between requests": the last bytes relayed were the server's answer, and
nothing has moved for IDLE seconds (HTTP/1.1 without pipelining, as
libcurl sends: one request, then its answer). Bytes a client sends on a
connection the relay has decided to close are never forwarded; the
client sees the connection end with no answer, as from a server that
went away, and has to send again.
"""
import asyncio
import os
import signal
import sys
import time

IDLE = 0.2


class Conn:
    def __init__(self, cw, sw):
        self.cw, self.sw = cw, sw
        self.moved = False
        self.last_from_server = False
        self.last_t = time.monotonic()
        self.closing = False

    def close(self):
        self.closing = True
        for w in (self.cw, self.sw):
            try:
                w.close()
            except Exception:
                pass


class Relay:
    def __init__(self, listen_port, server_port):
        self.listen_port, self.server_port = listen_port, server_port
        self.srv = None
        self.conns = set()
        self.down = False

    async def pump(self, c, reader, writer, from_server):
        try:
            while True:
                data = await reader.read(65536)
                if not data or c.closing:
                    break
                # Marked before the write: while drain() waits, the
                # connection is already not between requests.
                c.moved = True
                c.last_from_server = from_server
                c.last_t = time.monotonic()
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        c.close()

    async def handle(self, cr, cw):
        try:
            sr, sw = await asyncio.open_connection("127.0.0.1", self.server_port)
        except OSError:
            cw.close()
            return
        if self.down:   # accepted just before the relay went down
            cw.close()
            sw.close()
            return
        c = Conn(cw, sw)
        self.conns.add(c)
        try:
            await asyncio.gather(self.pump(c, cr, sw, False), self.pump(c, sr, cw, True))
        finally:
            self.conns.discard(c)

    async def up(self):
        self.srv = await asyncio.start_server(self.handle, "127.0.0.1", self.listen_port)
        self.down = False
        print("up", flush=True)

    async def go_down(self):
        self.down = True
        if self.srv:
            self.srv.close()
            self.srv = None
        while True:
            now = time.monotonic()
            for c in list(self.conns):
                # A connection that never answered anything yet is idle
                # when nothing moved: no request began on it.
                if now - c.last_t >= IDLE and (c.last_from_server or not c.moved):
                    c.close()
                    self.conns.discard(c)
            if not self.conns:
                break
            await asyncio.sleep(0.02)
        print("down", flush=True)

    async def main(self):
        loop = asyncio.get_running_loop()
        tasks = set()   # referenced until done (asyncio keeps weak ones)

        def start(coro):
            t = loop.create_task(coro)
            tasks.add(t)
            t.add_done_callback(tasks.discard)

        loop.add_signal_handler(signal.SIGUSR1, lambda: start(self.go_down()))
        loop.add_signal_handler(signal.SIGUSR2, lambda: start(self.up()))
        await self.up()
        # Ends with the test that started it, even one that failed
        # before stopping it.
        parent = os.getppid()
        while os.getppid() == parent:
            await asyncio.sleep(1)


if __name__ == "__main__":
    asyncio.run(Relay(int(sys.argv[1]), int(sys.argv[2])).main())
