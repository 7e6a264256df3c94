"""The APIs ctxview reads sessions of: one :class:`~ctxview.core.providers.base.Provider` each
(``anthropic``, ``openai``, ``gemini``), found by name through
:func:`ctxview.core.providers.registry.provider`."""
