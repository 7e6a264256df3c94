"""The figures the app computes off the UI thread, each in a worker: a big window's first
protocol check (``SessionModel.problems_pending``), the token estimates of a newly shown session,
and the request model's cache figures of the sidebar (``ctxview.app.cacheline``). Each result is
installed in the model it was computed for, if that model is still shown, and announced with
:class:`~ctxview.app.messages.FiguresChanged`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ctxview.app.messages import FiguresChanged
from ctxview.app.model import compute_tokens

if TYPE_CHECKING:
    from textual.app import App
    from textual.timer import Timer

    from ctxview.app.model import SessionModel
    from ctxview.config import Config


class Figures:
    """The workers of the shown session (``model``, kept current by the app). ``app`` serves the
    workers, timers, notices and messages (Textual's services only)."""

    def __init__(self, app: App[Any], model: SessionModel, config: Config) -> None:
        self.app = app
        self.model = model
        self.config = config
        self._checking: SessionModel | None = None
        self._predict_key: tuple[Any, ...] | None = None
        #: the quiet spell before the next cache prediction (None when none is waiting)
        self.predict_timer: Timer | None = None
        #: seconds the last cache prediction took in its worker (for benchmarks)
        self.last_prediction_seconds = 0.0

    def show(self, model: SessionModel) -> None:
        """Another session (or view of it) is shown: results for the last one are dropped."""
        self.model = model

    def _shown(self, model: SessionModel) -> bool:
        """Still the shown session, in an app that is not closing (its panes may be gone)."""
        return model is self.model and self.app.is_running and not getattr(self.app, "_exit", False)

    # -- token estimates --------------------------------------------------------------------------
    def estimate_tokens(self, model: SessionModel) -> None:
        self.app.run_worker(
            lambda: self._estimate(model),
            thread=True,
            exclusive=True,
            group="tokens",
            description="count tokens",
        )

    def _estimate(self, model: SessionModel) -> None:
        figures = compute_tokens([r.message for r in model.transcript.records], model.replay)
        self.app.call_from_thread(self._estimated, model, figures)

    def _estimated(self, model: SessionModel, figures: tuple[Any, ...]) -> None:
        if model is not self.model:
            return
        model.install_tokens(*figures)
        self.app.post_message(FiguresChanged(rows=True))

    # -- the protocol check of a big window -------------------------------------------------------
    def schedule_check(self) -> None:
        model = self.model
        if model.problems_pending and self._checking is not model:
            self._checking = model
            entries, system, step = model.check_entries(), model.system, model.context.step
            self.app.run_worker(
                lambda: self._check(model, entries, system, step),
                thread=True,
                exclusive=True,
                group="check",
                description="protocol check",
            )

    def _check(self, model: SessionModel, entries: Any, system: Any, step: int) -> None:
        from ctxview.core.protocol import ProtocolChecker

        # the model's own may be used on the UI thread meanwhile
        checker = ProtocolChecker(rules=model.checker.rules)
        problems = checker.check(entries, system)
        self.app.call_from_thread(self._checked, model, checker, problems, step)

    def _checked(self, model: SessionModel, checker: Any, problems: Any, step: int) -> None:
        self._checking = None
        if model is not self.model:
            return
        if model.install_check(checker, problems, step):
            self.app.post_message(FiguresChanged(rows=True))
        else:
            self.schedule_check()  # the window changed meanwhile: check it again

    # -- the request model's cache figures ----------------------------------------------------------
    def _prediction_key(self) -> tuple[Any, ...]:
        model, ctx = self.model, self.model.context
        return (
            id(model),
            len(model.transcript),
            ctx.step,
            model.model,
            ctx.max_context_messages,
            ctx.strategy,
            ctx.max_context_tokens,
            ctx.low_water_fraction,
            ctx.system_prompt,
        )

    def schedule_prediction(self) -> None:
        """Recompute the sidebar's cache figures when what they depend on changed: at once for
        a newly shown session, else after a quiet spell (a tool loop or a followed transcript
        changes the context many times a second) of at least twice the last run, so that on a
        big session the worker takes at most about a third of the time."""
        key = self._prediction_key()
        if key == self._predict_key:
            return
        self._predict_key = key
        if self.predict_timer is not None:
            self.predict_timer.stop()
        delay = 0.05
        if self.model.cache_prediction is not None:
            delay = max(0.3, 2 * self.last_prediction_seconds)
        self.predict_timer = self.app.set_timer(delay, self._start_prediction)

    def _start_prediction(self) -> None:
        from ctxview.app.cacheline import session_view
        from ctxview.app.request_inputs import price_table

        self.predict_timer = None
        model, key = self.model, self._predict_key
        found = session_view(model)  # the snapshot, on this thread
        if found is None:
            model.cache_prediction = None
            self.app.post_message(FiguresChanged(cache=True))
            return
        view, settings = found
        prices = price_table(self.config)
        self.app.run_worker(
            lambda: self._predict(model, key, view, settings, prices),
            thread=True,
            exclusive=True,
            group="cache",
            description="cache line",
        )

    def _predict(
        self, model: SessionModel, key: Any, view: Any, settings: dict[str, Any], prices: Any
    ) -> None:
        from ctxview.app.cacheline import predict

        app = self.app
        try:
            pred = predict(view, settings, prices)
        except (ValueError, RecursionError) as exc:
            app.call_from_thread(
                app.notify, f"cache figures: {exc}", severity="warning", markup=False
            )
            return
        app.call_from_thread(self._predicted, model, key, pred)

    def _predicted(self, model: SessionModel, key: Any, pred: Any) -> None:
        if not self._shown(model):
            return
        model.cache_prediction = pred
        self.last_prediction_seconds = pred.seconds if pred is not None else 0.0
        self.app.post_message(FiguresChanged(panes=True))
