"""Live sources: the recording proxy, following a growing transcript, the sessions list.

``ctxview.live.sse``, ``recording``, ``sessions_list`` and ``follow`` are headless (no Textual,
no aiohttp); ``proxy`` needs aiohttp. Their Textual views live in ``ctxview.app`` (``proxy``,
``follow``, ``screens.sessions``).
"""
