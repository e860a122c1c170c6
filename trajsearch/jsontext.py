"""JSON text that is safe to print on a terminal, with non-ASCII text kept as it is.

Run text is untrusted (a web page the agent read, a tool's output). ``json.dumps(ensure_ascii=False)`` escapes C0
controls but leaves DEL and C1 raw, and U+009B is a CSI to a terminal that reads 8-bit controls: JSON printed on
one (``--json``, ``trajsearch export`` to stdout) could drive it (probe I, I3; review 2, D7). Here they are
``\\uNNNN`` escapes too: JSON text holds them only inside strings, where the escape reads back as the same character.
So are the characters that print as nothing yet change what is seen (:data:`INVISIBLE`): a rejected value holding
U+202E printed the rest of the error line reversed, and an ``outcome`` of ``"success"`` followed by a zero-width
space (a value copied from a web page) was refused as ``got "success"`` (probe 52, NC3).
"""

from __future__ import annotations

import json
import re
from typing import Any

#: Characters shown as nothing that change what the text around them looks like, for a character class: Unicode's
#: bidirectional embeddings, overrides and isolates (U+202A-202E, U+2066-2069: the Trojan Source set rustc's
#: ``text_direction_codepoint`` lints flag; after U+202E a line reads backwards), the zero-width space, word joiner
#: and U+FEFF (they hide where a word ends: ``"success\u200b"``), and the line and paragraph separators (a line break
#: to some viewers, none to others). Not the marks U+200E, U+200F and U+061C: Hebrew and Arabic text holds them to
#: place punctuation and numbers, and they reorder no more than a letter of their direction would (review RNC3, D4);
#: nor the zero-width (non-)joiners: words of Persian or Hindi and emoji sequences need them.
INVISIBLE = "\u200b\u2028\u2029\u202a-\u202e\u2060\u2066-\u2069\ufeff"
#: What ``json.dumps(ensure_ascii=False)`` leaves raw that a terminal may act on or hide: DEL, C1, :data:`INVISIBLE`.
_RAW = re.compile(f"[\x7f-\x9f{INVISIBLE}]")


def dumps(data: Any, **kwargs: Any) -> str:
    """``json.dumps(data, ensure_ascii=False, **kwargs)`` with DEL, C1 and invisible characters escaped."""
    return _RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(data, ensure_ascii=False, **kwargs))
