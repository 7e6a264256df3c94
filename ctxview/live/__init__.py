"""Live sources: the recording proxy, following a growing transcript, the sessions list.

``recording``, ``sessions_list`` and ``follow`` are headless (no Textual, no aiohttp); ``proxy``
needs aiohttp (a reply is read by ``ctxview.sessions.replies``, which the cassette reader shares). Their Textual views live in ``ctxview.app`` (``proxy``,
``follow``, ``screens.sessions``).
"""
