"""``python -m trajsearch.service serve|mcp|keys ...`` (the same commands as ``trajsearch``)."""

from ..cli_service import main

main()
