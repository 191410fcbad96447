"""Benchmarks of mcp-memory, each driving a real ``mcp-memory serve`` over stdio.

Run them from the repository root as modules (``.venv/bin/python -m bench.locomo``); each
prints a markdown table and writes JSON under ``bench/results/``. They are measurements,
not tests: nothing here asserts on a time.
"""
