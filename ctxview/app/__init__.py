"""The Textual inspector. ``ctxview.app.launch`` is the entry point; the SDK is loaded lazily."""
