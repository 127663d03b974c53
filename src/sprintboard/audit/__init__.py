"""The audit log (contract §19): `service.record` in the change's transaction, read by org
admins through `router.py`."""

from sprintboard.audit.service import Target, at_address, record

__all__ = ["Target", "at_address", "record"]
