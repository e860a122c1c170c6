"""The Langfuse adapter's parts; the adapter itself, and its mapping, is ``adapters.langfuse``.

Split by what each part must see: one record's shape (``shapes``), one trace
or observation (``observations``), or a whole trace's nodes at once
(``grouping``).
"""
