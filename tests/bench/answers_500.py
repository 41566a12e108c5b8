#!/usr/bin/env python3
"""A server that answers every request with 500, keep-alive: what a broken
server looks like to the benchmark. Usage: answers_500.py PORT"""
import asyncio
import sys

RESPONSE = (b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\n"
            b"Content-Length: 6\r\n\r\nbroken")
REQUEST_END = b"\r\n\r\n"  # the harness's requests have no body


async def serve(reader, writer):
    pending = b""
    try:
        while chunk := await reader.read(65536):
            pending += chunk
            count = pending.count(REQUEST_END)
            if count:
                pending = pending[pending.rfind(REQUEST_END) + len(REQUEST_END):]
                writer.write(RESPONSE * count)
                await writer.drain()
    except ConnectionError:
        pass
    finally:
        writer.close()


async def main(port):
    server = await asyncio.start_server(serve, "127.0.0.1", port, backlog=4096)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1])))
