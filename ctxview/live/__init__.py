"""Live sources: the recording proxy, following a growing transcript, the sessions list.

``ctxview.live.sse``, ``recording``, ``sessions_list`` and ``follow`` are headless (no Textual,
no aiohttp); ``proxy`` needs aiohttp; ``proxy_app`` is the Textual view of the proxy.
"""
