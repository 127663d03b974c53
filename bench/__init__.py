"""`make bench`: sprintboard's benchmark, measured side by side with the machine's ceiling.

Run `python -m bench [--quick]` from the repository root. See `bench/README.md`.
"""
