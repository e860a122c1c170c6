"""``python -m trajsearch.cli``: the same command as the ``trajsearch`` console script."""

from . import main

main()
