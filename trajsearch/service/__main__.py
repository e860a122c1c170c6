"""``python -m trajsearch.service serve|mcp|keys ...`` (the same commands as ``trajsearch``)."""

from ..cli.service_commands import main

main()
