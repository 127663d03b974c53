"""Custom fields: a workspace's own typed fields on its work items (contract §17)."""
