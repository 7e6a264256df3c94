"""The Textual inspector. ``ctxview.app.launch`` is the entry point; the SDK is loaded lazily.

``app.CtxviewApp`` is a small shell: it owns the shown session (``model.SessionModel``) and hands
it, the config and the timeline down to its parts as attributes and arguments; they answer with
the typed messages of ``messages`` (attributes down, messages up). The parts: ``settings`` (as
sent or simulated, max, strategy, model), ``files`` (open, save, export), ``editing`` (edits and
undo), ``follow`` (a growing transcript), ``chat`` (the agent loop's adapter), ``figures`` (the
workers behind the panes), ``dialogs`` and ``screens/``, ``widgets/``; ``shell`` is the app's
base (visible text, crashes, signals, the typing guard), ``keys`` its bindings and help, and
``proxy`` the separate app of ``ctxview proxy``. What the first screen does not need is imported
after it.
"""
