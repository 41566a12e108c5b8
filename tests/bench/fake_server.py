#!/usr/bin/env python3
"""A keep-alive HTTP/1.1 server that answers every request the same way, for
showing what the benchmark makes of a server that is broken or slow to start.

Usage: fake_server.py PORT [--status N] [--body TEXT] [--answer-after S] [--wrong-until S]
                          [--leak-bytes N] [--leak-descriptors]

  --status N, --body TEXT  the answer (default 200 and 'Hello, World!', the plaintext workload's)
  --answer-after S         listen at once, but answer nothing before S seconds after this process
                           started: requests that arrive earlier wait for their answer
  --wrong-until S          before S seconds after this process started, answer 200 with a wrong
                           body ('Hello, Wrong!', the same length); the right answer after
  --leak-bytes N           keep N bytes more for every request answered, never freed (a leak the
                           soak must see)
  --leak-descriptors       open /dev/null for every connection accepted, never closed
"""
import time

STARTED = time.monotonic()  # as early as this process can read the clock: exec is before it

import argparse  # noqa: E402
import asyncio  # noqa: E402

REQUEST_END = b"\r\n\r\n"  # the harness's GETs have no body
WRONG_BODY = b"Hello, Wrong!"
REASONS = {200: "OK", 500: "Internal Server Error"}
LEAKED = []  # what --leak-bytes and --leak-descriptors keep


def response(status, body):
    return (f"HTTP/1.1 {status} {REASONS.get(status, 'Other')}\r\nContent-Type: text/plain\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


async def serve(reader, writer, a):
    right = response(a.status, a.body.encode())
    wrong = response(200, WRONG_BODY)
    pending = b""
    if a.leak_descriptors:
        LEAKED.append(open("/dev/null", "rb"))  # never closed, on purpose
    try:
        while chunk := await reader.read(65536):
            pending += chunk
            count = pending.count(REQUEST_END)
            if not count:
                continue
            pending = pending[pending.rfind(REQUEST_END) + len(REQUEST_END):]
            hold = STARTED + a.answer_after - time.monotonic()
            if hold > 0:
                await asyncio.sleep(hold)  # the slow start this server plays
            early = time.monotonic() < STARTED + a.wrong_until
            if a.leak_bytes:
                LEAKED.append(b"x" * (a.leak_bytes * count))  # written, so resident
            writer.write((wrong if early else right) * count)
            await writer.drain()
    except ConnectionError:
        pass
    finally:
        writer.close()


async def main(a):
    server = await asyncio.start_server(lambda r, w: serve(r, w, a), "127.0.0.1", a.port, backlog=4096)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("port", type=int)
    p.add_argument("--status", type=int, default=200)
    p.add_argument("--body", default="Hello, World!")
    p.add_argument("--answer-after", type=float, default=0.0)
    p.add_argument("--wrong-until", type=float, default=0.0)
    p.add_argument("--leak-bytes", type=int, default=0)
    p.add_argument("--leak-descriptors", action="store_true")
    asyncio.run(main(p.parse_args()))
