"""Import and export of work items, through the API."""
