"""The ceiling: a raw ASGI app that answers every request with one fixed small JSON body.

Served by the same uvicorn with the same flags as `sprintboard serve`, it is the most one
server process can do on this machine; every figure in the report is read against it.
"""

import argparse
from collections.abc import Sequence

from starlette.types import Receive, Scope, Send

BODY = b'{"data":{"$id":"0190f0c0a1b2c3d4e5f6a7b8c9d0e1f2","status":"ok"}}'
HEADERS = [
    (b"content-type", b"application/json"),
    (b"content-length", str(len(BODY)).encode()),
]


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] != "http":
        return
    more_body = True
    while more_body:
        message = await receive()
        more_body = message.get("more_body", False)
    await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
    await send({"type": "http.response.body", "body": BODY})


def main(argv: Sequence[str] | None = None) -> None:
    """Serve `app` exactly as `sprintboard.cli._serve` serves the real application."""
    import uvicorn

    parser = argparse.ArgumentParser(prog="python -m bench.ceiling")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args(argv)
    uvicorn.run(
        "bench.ceiling:app",
        host=args.host,
        port=args.port,
        workers=args.workers,
        log_level="warning",
        access_log=False,
        proxy_headers=True,
    )


if __name__ == "__main__":
    main()
