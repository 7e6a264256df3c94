"""Opening, saving and exporting the open session in the TUI (``ctrl+o``, ``ctrl+s``, ``S``,
``x``): the dialogs, the checks before writing, and the loading worker. A file read is posted to
the app as :class:`~ctxview.app.messages.SessionOpened`; a save under a new name as
:class:`~ctxview.app.messages.NameChanged`."""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxview.app.messages import NameChanged, SessionOpened
from ctxview.app.safe import one_line
from ctxview.app.skipped import skipped_note
from ctxview.sessions.store import check_output
from ctxview.textfmt import counted, fmt_tokens, plural, visible

if TYPE_CHECKING:
    from textual.app import App

    from ctxview.app.model import SessionModel
    from ctxview.config import Config


def free_session_name(path: str) -> str:
    """``dir/name.ctxview.json`` for ``dir/name.json`` (``name-2.ctxview.json``… when taken)."""
    p = Path(path)
    stem = p.name
    for suffix in (".jsonl", ".json"):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    stem = stem.removesuffix(".ctxview")
    candidate = p.with_name(stem + ".ctxview.json")
    n = 2
    while os.path.lexists(candidate) or str(candidate) == path:
        candidate = p.with_name(f"{stem}-{n}.ctxview.json")
        n += 1
    return str(candidate)


def _safe_char(c: str) -> bool:
    return c not in "\n\t\u2028\u2029" and visible(c) == c


def safe_path(path: str) -> str:
    """``path`` as a save dialog can propose it: every character a terminal would act on or
    cannot show (a control, an escape sequence, a bidi control, a byte of a name that is not
    UTF-8) replaced by ``_`` in the file's name, and a folder whose name holds one given up for
    the working folder. What the dialog shows is then the name that is written (it showed such
    a name made visible, ``␛[31m``, and saved under that)."""
    if all(_safe_char(c) for c in path):
        return path
    folder, name = os.path.split(path)
    name = "".join(c if _safe_char(c) else "_" for c in name)
    if not all(_safe_char(c) for c in folder):
        folder = os.getcwd()
    return os.path.join(folder, name)


class SessionFiles:
    """The files of the open session (``model``, kept current by the app). ``document`` and
    ``request_body`` build what is written; ``app`` serves dialogs, workers and notices
    (Textual's services only)."""

    def __init__(
        self,
        app: App[Any],
        model: SessionModel,
        config: Config,
        document: Callable[[], dict[str, Any]],
        request_body: Callable[[], dict[str, Any]],
    ) -> None:
        self.app = app
        self.model = model
        self.config = config
        self.document = document
        self.request_body = request_body
        #: files this session wrote (or was allowed to overwrite): ctrl+s saves over them quietly
        self.owned: set[str] = set()
        #: what to do once the save under way has succeeded (quit, open another file)
        self._after_save: Callable[[], None] | None = None
        self._asking = False  #: the unsaved-changes question is up

    def show(self, model: SessionModel) -> None:
        """Another session (or view of it) is shown."""
        self.model = model

    # -- opening --------------------------------------------------------------------------------
    def open_dialog(self) -> None:
        from ctxview.app.screens.files import OpenFileScreen

        model = self.model
        start = Path(model.path).parent if model.path else Path.cwd()

        def chosen(path: str | None) -> None:
            if path:
                self.load(path)

        self.app.push_screen(
            OpenFileScreen(
                start if start.is_dir() else Path.cwd(), subagents=model.session.subagents
            ),
            chosen,
        )

    def confirm_leave(self, what: str, then: Callable[[], None]) -> None:
        """``then()`` at once when the session has no unsaved changes; else ask first: save
        (then, once saved), discard (then) or cancel (nothing)."""
        if not self.model.unsaved:
            then()
            return
        if self._asking:
            return  # (ctrl+q pressed again while asked)
        from ctxview.app.screens.modals import UnsavedScreen

        def answered(choice: str | None) -> None:
            self._asking = False
            if choice == "discard":
                then()
            elif choice == "save":
                self._after_save = then
                self.save()

        self._asking = True
        self.app.push_screen(UnsavedScreen(self.model.name, what), answered)

    def load(self, path: str, follow: bool = False) -> None:
        """Read and replay ``path`` in a worker thread (a newer open cancels an older one),
        after asking about unsaved changes."""
        self.confirm_leave("open another file", lambda: self._start_load(path, follow))

    def _start_load(self, path: str, follow: bool) -> None:
        self.app.run_worker(
            lambda: self._load(path, follow),
            thread=True,
            exclusive=True,
            group="open",
            description="open a file",
        )

    def _load(self, path: str, follow: bool) -> None:
        from ctxview.app.model import SessionModel
        from ctxview.sessions import SessionError, load_session, replay

        app = self.app
        try:
            session = load_session(path)
            rep = replay(session, defaults=self.config.as_defaults(), as_sent=True)
        except (SessionError, ValueError) as exc:
            message = str(exc) if isinstance(exc, SessionError) else f"{path}: {exc}"
            app.call_from_thread(
                app.notify,
                message,
                title="cannot open",
                severity="error",
                markup=False,
                timeout=10,
            )
            return
        # the file's model, else the open chat's: a Claude model, never another API's session's
        model = SessionModel(rep, path, rep.model_name({"model": self.model.model}))
        app.post_message(SessionOpened(model, follow=follow))
        skipped = skipped_note(model.session.skipped())
        note = f" · {skipped}" if skipped else ""
        if len(model.session.conversations) > 1:  # a proxy recording of several
            note += (
                f" · conversation #{model.session.conversation} of "
                f"{len(model.session.conversations)} (open another as FILE#N)"
            )
        unplaced, dangling = model.session.unplaced_lines, model.session.dangling_parents
        note += f" · {plural(len(unplaced), 'line')} on no branch" if unplaced else ""
        note += f" · {plural(len(dangling), 'parent')} not in the file" if dangling else ""
        # what the reader says of the file (inspect prints them too)
        note += "".join(f"\n{one_line(w, 200)}" for w in model.session.warnings[:3])
        app.call_from_thread(
            app.notify,
            f"opened {model.name}: {counted(len(model.transcript), 'message')} ({model.session.format}){note}",
            markup=False,
        )

    # -- saving ---------------------------------------------------------------------------------
    def _path_default(self) -> str:
        if self.model.path and self.model.session.format == "ctxview":
            return self.model.path
        if self.model.path:
            return free_session_name(safe_path(self.model.path))
        return str(Path.cwd() / time.strftime("chat-%Y%m%d-%H%M%S.ctxview.json"))

    def _owns(self, path: str) -> bool:
        """True when saving to ``path`` overwrites nothing this session did not write."""
        return not os.path.lexists(path) or os.path.abspath(path) in self.owned

    def _ask_path(self, title: str, default: str, then: Callable[[str], None]) -> None:
        from ctxview.app.screens.files import SavePathScreen

        def chosen(path: str | None) -> None:
            if path:
                then(path)
            else:
                self._after_save = None  # not saved: nothing goes on after it

        self.app.push_screen(SavePathScreen(title, default), chosen)

    def save(self) -> None:
        if self.model.path and self.model.session.format == "ctxview":
            self.save_checked(self.model.path)
            return
        self._ask_path("Save the session (ctxview format)", self._path_default(), self.save_checked)

    def save_as(self) -> None:
        model = self.model
        default = free_session_name(safe_path(model.path)) if model.path else self._path_default()
        self._ask_path("Save the session as… (ctxview format)", default, self.save_checked)

    def save_checked(self, path: str) -> None:
        """Save, but never silently over a file this session did not create: ask first. A
        folder typed as the target gets the file inside it, under the session's name."""
        if os.path.isdir(path):
            inside = os.path.join(path, Path(self._path_default()).name)
            path = inside if self._owns(inside) else free_session_name(inside)
        if self._owns(path) or _not_a_file(path):
            # (a FIFO or a device: save_to refuses it, said at once rather than after asking
            # whether to overwrite it)
            self.save_to(path)
            return
        from ctxview.app.screens.files import OverwriteScreen

        suggestion = free_session_name(path)

        def answered(choice: str | None) -> None:
            if choice == "overwrite":
                self.save_to(path)
            elif choice == "new":
                self.save_checked(suggestion)
            elif choice == "choose":
                self._ask_path(
                    "Save the session as… (ctxview format)", suggestion, self.save_checked
                )
            else:
                self._after_save = None

        self.app.push_screen(OverwriteScreen(path, suggestion), answered)

    def save_to(self, path: str) -> bool:
        from ctxview.sessions.store import save_session

        try:
            save_session(path, self.document(), make_parents=False)  # a typed path
            self.owned.add(os.path.abspath(path))
        except (OSError, ValueError) as exc:
            self._after_save = None
            self.app.notify(
                f"{path}: not saved: {exc}",
                title="save failed",
                severity="error",
                markup=False,
                timeout=10,
            )
            return False
        self.model.unsaved = False
        if self.model.path != path:
            self.model.path = path
            session = self.model.session
            if session.provider != "anthropic" and session.format != "ctxview":
                # the body it exports stays in its API's form (as the saved file reopens)
                session.wire_format = session.wire_format or session.format
            session.format = "ctxview"
        self.app.post_message(NameChanged())
        self.app.notify(f"saved {path}", markup=False, timeout=3)
        then, self._after_save = self._after_save, None
        if then is not None:
            then()
        return True

    # -- exporting the next request -------------------------------------------------------------
    def _export_default(self) -> str:
        if self.model.path:
            p = Path(self.model.path)
            return str(p.with_name(p.stem.removesuffix(".ctxview") + ".request.json"))
        return str(Path.cwd() / "request.json")

    def export(self) -> None:
        self._ask_path(
            "Export the next request body (JSON)", self._export_default(), self.export_to
        )

    def export_to(self, path: str) -> None:
        from ctxview.sessions.store import save_request

        if os.path.isdir(path):  # a folder: the file goes inside it
            path = os.path.join(path, Path(self._export_default()).name)
        app, model = self.app, self.model
        body = self.request_body()
        try:  # like autosave: never the API key; controls escaped; atomic
            check_output(path, (model.path,))  # a request body never replaces the open file
            save_request(path, body)
        except (OSError, ValueError) as exc:
            app.notify(
                f"{path}: not written: {exc}",
                title="export failed",
                severity="error",
                markup=False,
                timeout=10,
            )
            return
        # (counted from the window: an OpenAI Responses body has ``input``, a Gemini one
        # ``contents``, not ``messages``)
        n = len(model.replay.window_messages())
        app.notify(
            f"wrote {path}: {plural(n, 'message')}, ~{fmt_tokens(model.window_tokens)} tokens",
            markup=False,
        )
        state, short, first = model.verdict()
        if state == "bad":  # the same contract as `ctxview export`: written, but said
            app.notify(
                f"the API would reject this request ({short.removeprefix('✗ ')}): {first}",
                title="exported a request the API will reject",
                severity="warning",
                markup=False,
                timeout=10,
            )


def _not_a_file(path: str) -> bool:
    """``path`` is there and is neither a regular file nor a folder (a FIFO, a device, a
    socket): nothing a session is saved over."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)
