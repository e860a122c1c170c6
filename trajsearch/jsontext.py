"""JSON text that is safe to print on a terminal, with non-ASCII text kept as it is.

Run text is untrusted (a web page the agent read, a tool's output). ``json.dumps(ensure_ascii=False)`` escapes C0
controls but leaves DEL and C1 raw, and U+009B is a CSI to a terminal that reads 8-bit controls: JSON printed on
one (``--json``, ``trajsearch export`` to stdout) could drive it (probe I, I3; review 2, D7). Here they are
``\\uNNNN`` escapes too: JSON text holds them only inside strings, where the escape reads back as the same character.
"""

from __future__ import annotations

import json
import re
from typing import Any

#: What ``json.dumps(ensure_ascii=False)`` leaves raw that a terminal may act on: DEL and C1.
_RAW = re.compile(r"[\x7f-\x9f]")


def dumps(data: Any, **kwargs: Any) -> str:
    """``json.dumps(data, ensure_ascii=False, **kwargs)`` with DEL and C1 controls escaped."""
    return _RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(data, ensure_ascii=False, **kwargs))
