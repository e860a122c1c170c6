"""The mini-swe-agent adapter's parts; the adapter itself, and its mapping, is ``adapters.mini_swe_agent``.

Split by what each part knows: the model APIs' message shapes (``messages``),
the harness's command and reply conventions (``commands``), and the order of
a conversation that pairs actions with replies (``steps``).
"""
