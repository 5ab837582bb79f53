"""Which registered app runs a thread: the one whose machine is the machine the thread was stopped by.

A worker may serve several apps (``--app a:build --app b:build``). Each thread's index entry and
checkpoints name the machine that wrote them (``machine``: a StateGraph's name, ``agent`` for an
Agent, a Graph's or Swarm's), and an app built by a ``build(thread_id)`` function says which machine it
runs (``ResumableApp.machine_name``).
A build function is asked once which machine it builds (the first time a thread needs an app it might
serve), and remembered: each build function is meant to serve one machine. With a single app every
thread goes to it, as the inbox's ``--app`` does; its own resume then refuses a thread of another
machine with the engine's clear error.
"""

from __future__ import annotations

from collections.abc import Sequence

from statehitl.errors import AppLoadError
from statehitl.inbox.apps import AppBuilder, build_app
from statehitl.resumable import ResumableApp


class Apps:
    """Build functions, routed by machine name.

    ``names`` says how to name each build function in messages (``module:build`` as given on the
    command line); by default its qualified name. ``build`` is the user's code, which may be slow (it may
    open a connection) or fail: the worker calls these methods in a worker thread, off its event loop.
    """

    def __init__(self, builders: Sequence[AppBuilder], *, names: Sequence[str] | None = None) -> None:
        if not builders:
            raise AppLoadError("a worker needs at least one app: --app module:build")
        self.builders = list(builders)
        self.names = list(names) if names is not None else [_name(b) for b in builders]
        if len(self.names) != len(self.builders):
            raise ValueError("one name per build function")
        self._machines: dict[int, str] = {}
        """What each build function builds, by its place in ``builders``, once asked."""

    def app_for(self, thread_id: str, machine: str) -> ResumableApp:
        """The app that runs ``thread_id``, stopped by ``machine``; ``AppLoadError`` if no app serves it."""
        if len(self.builders) == 1:
            return build_app(self.builders[0], thread_id)
        for place, known in self._machines.items():
            if known == machine:
                return build_app(self.builders[place], thread_id)
        for place, builder in enumerate(self.builders):
            if place in self._machines:
                continue
            app = build_app(builder, thread_id)
            self._machines[place] = built = app.machine_name
            if built == machine:
                return app
        served = ", ".join(f"{self.names[p]} builds {m!r}" for p, m in sorted(self._machines.items()))
        raise AppLoadError(f"thread {thread_id!r} was stopped by machine {machine!r}, and no app given to the "
                           f"worker runs it ({served}); add --app module:build for it")

    def sole(self, thread_id: str) -> ResumableApp | None:
        """With a single build function, its app for ``thread_id`` (whichever machine stopped the thread);
        None with several, which are routed by the machine a read of the thread names."""
        return build_app(self.builders[0], thread_id) if len(self.builders) == 1 else None


def _name(builder: AppBuilder) -> str:
    module = getattr(builder, "__module__", None)
    name = getattr(builder, "__qualname__", None) or type(builder).__name__
    return f"{module}:{name}" if module else str(name)
