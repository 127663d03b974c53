"""The `sprintboard` command: serve, migrate, create-admin, worker, import, export, mcp,
backup, restore."""

import argparse
import logging
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pydantic import ValidationError
from sqlalchemy.exc import OperationalError

from sprintboard import __version__, backup
from sprintboard.config import Settings
from sprintboard.logs import configure_logging
from sprintboard.transfer import commands as transfer_commands

if TYPE_CHECKING:
    from sprintboard.serverkey import SecretBox


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="sprintboard",
        description="sprintboard: a JSON REST API for workspaces, projects, sprints and work "
        "items. Configuration comes from SPRINTBOARD_* environment variables (see README).",
    )
    parser.add_argument("--version", action="version", version=f"sprintboard {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser(
        "serve",
        help="apply pending migrations, then serve the HTTP API",
        description="Apply pending database migrations, then serve the HTTP API.",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default: %(default)s)")
    serve.add_argument(
        "--port", type=_in_range(0, 65535), default=8000, help="port to bind (default: %(default)s)"
    )
    serve.add_argument(
        "--workers",
        type=_in_range(1, 512),
        default=1,
        help="worker processes (default: %(default)s); each is a complete, stateless server "
        "(set SPRINTBOARD_REDIS_URL so that they share one rate-limit budget)",
    )

    commands.add_parser(
        "migrate",
        help="apply pending database migrations",
        description="Apply pending migrations to SPRINTBOARD_DATABASE_URL (safe to run twice).",
    )

    admin = commands.add_parser(
        "create-admin",
        help="create an organization admin and print a new API key",
        description="Create an organization admin (migrating first) and print a new API key as "
        "the last line of standard output. If an admin with that email exists, a new key is "
        "issued for them.",
    )
    admin.add_argument("--name", default="Admin", help="the admin's name (default: %(default)s)")
    admin.add_argument(
        "--email", default="admin@example.com", help="the admin's email (default: %(default)s)"
    )

    worker = commands.add_parser(
        "worker",
        help="deliver webhook events until stopped (scale-out; `serve` also delivers)",
        description="Deliver webhook events from the database until stopped (Ctrl-C or "
        "SIGTERM). Any number of workers may run beside each other and beside `serve`: each "
        "delivery is sent at least once, by one worker at a time, in order per work item. "
        "Run `sprintboard serve` with SPRINTBOARD_DELIVER_EVENTS=false to leave delivery to "
        "workers alone.",
    )
    worker.add_argument(
        "--batch-size",
        type=int,
        default=50,
        help="deliveries of one webhook in flight at a time, at most (default: %(default)s)",
    )
    worker.add_argument(
        "--poll-interval",
        type=float,
        default=1.0,
        help="seconds to wait when nothing is due, unless Redis brings news (default: %(default)s)",
    )

    transfer_commands.add_commands(commands)
    backup.add_commands(commands)

    args = parser.parse_args(argv)
    if args.command in transfer_commands.COMMANDS:
        return transfer_commands.run(args)
    try:
        settings = Settings()
    except ValidationError as error:
        for problem in error.errors():
            name = "SPRINTBOARD_" + "_".join(str(part) for part in problem["loc"]).upper()
            print(f"sprintboard: {name}: {problem['msg']}", file=sys.stderr)
        return 2
    configure_logging(settings.log_level, settings.log_format)
    if args.command in backup.COMMANDS:  # (before the server key: a copy never needs it)
        return backup.run(args.command, args.file, settings)
    from sprintboard.serverkey import MissingServerKey, SecretBox, server_key

    try:
        box = SecretBox(server_key(settings))
    except (MissingServerKey, ValueError) as error:
        print(f"sprintboard: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"sprintboard: cannot write the server key file: {error}", file=sys.stderr)
        return 1

    try:
        if args.command == "migrate":
            _migrate(settings, box)
            print("database is up to date", file=sys.stderr)
        elif args.command == "serve":
            _serve(settings, box, host=args.host, port=args.port, workers=args.workers)
        elif args.command == "worker":
            _migrate(settings, box)
            _worker(settings, box, batch_size=args.batch_size, poll_interval=args.poll_interval)
        elif args.command == "create-admin":
            _migrate(settings, box)
            print(_create_admin(settings, name=args.name, email=args.email))
    except OperationalError as error:
        reason = str(error.orig).strip().splitlines()[0] if error.orig else str(error)
        print(f"sprintboard: cannot use the database: {reason}", file=sys.stderr)
        return 1
    except _PortInUse as error:
        print(f"sprintboard: {error}", file=sys.stderr)
        return 1
    return 0


def _in_range(low: int, high: int) -> Callable[[str], int]:
    def whole_number(text: str) -> int:
        value = int(text)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is not between {low} and {high}")
        return value

    whole_number.__name__ = "number"  # (what argparse names in its error)
    return whole_number


def _migrate(settings: Settings, box: "SecretBox") -> None:
    """Migrates, then seals any webhook secret still stored in plain text (migration 0005)."""
    from sprintboard.db import Database
    from sprintboard.events.webhooks import seal_legacy_secrets
    from sprintboard.migrations import migrate

    migrate(settings.database_url)
    database = Database(settings.database_url)
    try:
        sealed = seal_legacy_secrets(database, box)
    finally:
        database.dispose()
    if sealed:
        logging.getLogger("sprintboard.serverkey").info(
            "encrypted %d webhook secrets stored in plain text", sealed
        )


class _PortInUse(Exception):
    pass


def _check_port_free(host: str, port: int) -> None:
    """Refuses a port another process listens on, as one line rather than the server's log
    records: bound here the way uvicorn binds it (`SO_REUSEADDR`), then released."""
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as error:
            raise _PortInUse(f"cannot listen on {host}:{port}: {error.strerror}") from None


def _serve(settings: Settings, box: "SecretBox", *, host: str, port: int, workers: int) -> None:
    import uvicorn

    _check_port_free(host, port)
    _migrate(settings, box)
    if workers > 1 and not settings.redis_url:
        logging.getLogger("sprintboard.ratelimit").warning(
            "%d workers without SPRINTBOARD_REDIS_URL: each counts rate limits on its own, "
            "so a key may make up to %d times its limit",
            workers,
            workers,
        )
    from sprintboard.server import HeaderTimeoutProtocol

    uvicorn.run(
        "sprintboard.app:create_app",
        http=HeaderTimeoutProtocol,  # (uvicorn bounds nothing before a request's headers)
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level=settings.log_level.lower(),
        access_log=False,  # sprintboard.logs writes the access line, with the request id
        log_config=None,  # uvicorn's own records go through the JSON handler too
        # Forwarding headers are believed only from SPRINTBOARD_TRUSTED_PROXIES, by the app
        # (sprintboard.addresses); uvicorn's own trusts 127.0.0.1 whatever is configured.
        proxy_headers=False,
        # Open event streams never finish on their own: stopping gives requests in flight
        # this long, then cuts the streams (browsers reconnect elsewhere with Last-Event-ID).
        timeout_graceful_shutdown=5,
    )


def _worker(settings: Settings, box: "SecretBox", *, batch_size: int, poll_interval: float) -> None:
    import asyncio
    import signal

    from sprintboard.db import Database
    from sprintboard.events.delivery import DeliveryOptions, run_worker
    from sprintboard.events.fanout import RedisFanOut
    from sprintboard.mail.delivery import options_from, run_mail_worker

    mail_options = options_from(settings, box)
    options = DeliveryOptions(
        batch_size=batch_size,
        poll_interval=poll_interval,
        box=box,
        allow_private=settings.webhook_allow_private,
    )

    logger = logging.getLogger("sprintboard.webhooks")

    async def run() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()

        def stopping(signum: signal.Signals) -> None:
            logger.info("%s: finishing the deliveries in flight, then stopping", signum.name)
            stop.set()

        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stopping, signum)
        database = Database(settings.database_url)
        fan_out = (
            RedisFanOut(settings.redis_url, settings.rate_limit_prefix)
            if settings.redis_url
            else None
        )
        try:
            await asyncio.gather(
                run_worker(database, options=options, stop=stop, fan_out=fan_out),
                run_mail_worker(database, options=mail_options, stop=stop),
            )
        finally:
            if fan_out is not None:
                await fan_out.close()
            database.dispose()

    logger.info(
        "delivering webhook events and mail" if mail_options.server else "delivering webhook events"
    )
    asyncio.run(run())
    logger.info("worker stopped: no delivery in flight")


def _create_admin(settings: Settings, *, name: str, email: str) -> str:
    from sqlalchemy import select

    from sprintboard.db import Database
    from sprintboard.errors import InvalidRequest
    from sprintboard.identity import service
    from sprintboard.identity.schemas import UserCreate
    from sprintboard.models import User

    try:  # (the checks the API applies to a new user: trimmed, 1-255 characters...)
        fields = UserCreate.model_validate({"name": name, "email": email})
    except ValidationError as error:
        problem = error.errors()[0]
        raise SystemExit(f"--{problem['loc'][0]}: {problem['msg']}") from None
    name, email = fields.name, fields.email
    database = Database(settings.database_url)
    try:
        with database.transaction() as session:
            user = session.scalar(select(User).where(User.email_normalized == email.lower()))
            if user is None:
                user = service.create_user(session, name=name, email=email, is_org_admin=True)
            elif not user.is_org_admin:
                raise SystemExit(f"{email} belongs to a user who is not an organization admin")
            _, secret = service.create_key(
                session,
                caller=None,
                owner=user,
                name="create-admin",
                permissions=None,
                workspace_id=None,
                expires_at=None,
            )
            print(f"organization admin {user.email} ({user.id}); API key:", file=sys.stderr)
    except InvalidRequest as error:
        raise SystemExit(error.message) from None
    finally:
        database.dispose()
    return secret


if __name__ == "__main__":
    sys.exit(main())
