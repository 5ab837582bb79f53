"""A compiled graph's threads as LangGraph reads and edits them: ``get_state``, ``get_state_history`` and
``update_state`` over the checkpoints ``graph.history`` shows.

Two styles meet here. Given a LangGraph config (``{"configurable": {"thread_id": ...}}``), the calls are
LangGraph's: an unknown thread reads as an empty snapshot, and ``update_state`` makes a checkpoint of its
own one step on (on a waiting thread, a branch whose interrupts are asked afresh). Given a thread id (the
native style), an unknown thread reads as None, and an update of a waiting thread keeps it waiting on the
same interrupts (a human editing the state before answering).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from statehitl._sync import iterate_sync, run_sync
from statehitl.checkpoint.answer_records import read_answers
from statehitl.checkpoint.checkpoint_ids import tagged
from statehitl.checkpoint.engine import Checkpointer
from statehitl.checkpoint.reading import Head
from statehitl.checkpoint.record_parts import RunStart
from statehitl.commands import GOTO
from statehitl.errors import CheckpointNotFoundError, InvalidUpdateError, UnknownNodeError
from statehitl.graph.graph_state import StateGraphSchema
from statehitl.graph.history import (
    BEFORE,
    MAIN,
    PART_NAMES,
    StepResults,
    View,
    ViewKey,
    checkpoint_order,
    parse_view,
    results_of,
    step_results,
    view_metadata,
)
from statehitl.graph.run_targets import RunTarget, namespace_of, run_target
from statehitl.graph.snapshots import SnapshotReader, StateSnapshot, empty_snapshot, graph_config
from statehitl.graph.time_travel import ThreadViews
from statehitl.machine import END, START, Machine
from statehitl.run_start import start_position
from statehitl.supersteps import awaited_routes, plan_start, plan_step, schedule_of, stored_schedule

if TYPE_CHECKING:
    from statehitl.graph.subgraph_levels import LevelGraph
    from statehitl.progress import Schedule
    from statehitl.runner import Runner


COPY = "__copy__"
"""``update_state``'s writer that copies a checkpoint (LangGraph's ``as_node="__copy__"``)."""
INPUT_NODE = "__input__"
"""``update_state``'s writer that makes an input checkpoint (LangGraph's ``as_node="__input__"``)."""
_SPECIAL = frozenset({COPY, INPUT_NODE, START, END})


class ThreadState:
    """The reading and editing half of ``CompiledStateGraph`` (which sets these attributes)."""

    machine: Machine
    schema: StateGraphSchema
    checkpointer: Checkpointer
    snapshots: SnapshotReader
    step_limit: int
    subgraphs: Mapping[str, LevelGraph]
    keeps_state: bool
    _runner: Runner
    _functions: Mapping[str, Callable[..., Any]]
    _invoked: dict[str, list[LevelGraph]] | None

    @property
    def invoked(self) -> Mapping[str, Sequence[LevelGraph]]:
        """The compiled graphs each node's function reaches (``graph.subgraph_refs``), those it may invoke:
        read on first need (a stopped call's snapshot), not at every ``compile()``."""
        if self._invoked is None:
            from statehitl.graph.subgraph_refs import graphs_reached  # read with the first subgraph snapshot

            reached = {n: graphs_reached(fn, type(self)) for n, fn in self._functions.items()}
            self._invoked = {n: list(graphs) for n, graphs in reached.items() if graphs}
        return self._invoked

    def _target(self, config: dict[str, Any] | str | None, checkpoint_id: str | None = None) -> RunTarget:
        return run_target(config, None, checkpoint_id, None, self.step_limit)

    def _views(self, thread: str) -> ThreadViews:
        return ThreadViews(self.checkpointer, self.machine, self.schema, thread)

    # -- reading ----------------------------------------------------------------------------------

    async def aget_state(self, config: dict[str, Any] | str, checkpoint_id: str | None = None, *,
                         subgraphs: bool = False) -> StateSnapshot[Any] | None:
        """The thread's current checkpoint (or the one named). A thread never run is an empty snapshot for a
        LangGraph config, None for a thread id. ``subgraphs=True``: a task that is a subgraph stopped inside
        has its snapshot as ``task.state``."""
        target = self._target(config, checkpoint_id)
        head = await self.checkpointer.head(target.thread, pieces=bool(self.schema.append_channels))
        if namespace_of(config):  # a subgraph's checkpoint (``get_state(config, subgraphs=True)``'s task configs)
            from statehitl.graph.subgraph_travel import locate, subgraph_snapshot  # loaded with a subgraph's config

            if head is None:
                return StateSnapshot({}, (), target.config, None, None, None, (), ())
            found = await locate(self, self._views(target.thread), head, target.config["configurable"])
            return subgraph_snapshot(found, target.config, subgraphs=subgraphs)
        if head is None:
            if target.checkpoint_id is not None:
                raise CheckpointNotFoundError(f"thread {target.thread!r} has no checkpoint {target.checkpoint_id}")
            return empty_snapshot(target.thread) if target.named else None
        views = self._views(target.thread)
        key = None if target.checkpoint_id is None else parse_view(target.thread, target.checkpoint_id)
        view = await views.at(key, head)
        snapshot = self.snapshots.snapshot(view, await views.state(view), subgraphs,
                                           applied=target.checkpoint_id is None)
        if view.own and view.record.seq == head.record.seq and head.record.status == "interrupted":
            snapshot.answers.update(await self._stored_answers(head))
        return snapshot

    async def _stored_answers(self, head: Head) -> dict[str, Any]:
        return head.answers if head.answers is not None else await read_answers(self.checkpointer, head.record)

    def get_state(self, config: dict[str, Any] | str, checkpoint_id: str | None = None, *,
                  subgraphs: bool = False) -> StateSnapshot[Any] | None:
        """The thread's current checkpoint (or the one ``config`` or ``checkpoint_id`` names); see ``aget_state``."""
        return run_sync(self.aget_state(config, checkpoint_id, subgraphs=subgraphs))

    async def ahistory(self, config: dict[str, Any] | str) -> list[StateSnapshot[Any]]:
        """Every checkpoint of the thread, newest first."""
        return [s async for s in self.aget_state_history(config)]

    def history(self, config: dict[str, Any] | str) -> list[StateSnapshot[Any]]:
        """Every checkpoint of the thread, newest first."""
        return run_sync(self.ahistory(config))

    async def aget_state_history(self, config: dict[str, Any] | str, *, filter: dict[str, Any] | None = None,
                                 before: dict[str, Any] | None = None, limit: int | None = None
                                 ) -> AsyncIterator[StateSnapshot[Any]]:
        """The thread's checkpoints, newest first (LangGraph's ``get_state_history``): ``before`` a
        checkpoint's config, only those whose metadata has ``filter``'s items, at most ``limit``."""
        target = self._target(config)
        if namespace_of(config):  # a subgraph's checkpoints
            from statehitl.graph.subgraph_travel import subgraph_history  # loaded with a subgraph's config

            head = await self.checkpointer.head(target.thread, pieces=bool(self.schema.append_channels))
            if head is not None:
                async for snapshot in subgraph_history(self, self._views(target.thread), head,
                                                       target.config["configurable"], filter=filter,
                                                       before=before, limit=limit):
                    yield snapshot
            return
        ceiling = None if before is None else before.get("configurable", {}).get("checkpoint_id")
        below = None if ceiling is None else checkpoint_order(parse_view(target.thread, ceiling))
        views = self._views(target.thread)
        count = 0
        results: StepResults = {}
        async with contextlib.aclosing(self._walk(views, target.thread, paged=limit is not None or below is not None)
                                       ) as walk:
            async for view in walk:
                done = step_results(view)
                if done is not None:
                    results[done[0]] = done[1:]
                if below is not None and checkpoint_order(view.id) >= below:
                    continue
                metadata = view_metadata(view)
                if filter and any(metadata.get(k) != v for k, v in filter.items()):
                    continue
                if limit is not None and count >= limit:
                    return
                count += 1
                yield self.snapshots.snapshot(view, await views.state(view), results=results_of(results, view),
                                              applied=False)

    async def _walk(self, views: ThreadViews, thread: str, *, paged: bool) -> AsyncGenerator[View, None]:
        """The checkpoints newest first: read record by record from the newest for a page (its cost is the
        page's), or all at once in the store's bulk read for the whole history (linear in the thread)."""
        if paged:
            head = await self.checkpointer.head(thread, pieces=bool(self.schema.append_channels))
            if head is not None:
                async with contextlib.aclosing(views.newest(head)) as newest:
                    async for view in newest:
                        yield view
            return
        for view in await views.history():
            yield view

    def get_state_history(self, config: dict[str, Any] | str, *, filter: dict[str, Any] | None = None,
                          before: dict[str, Any] | None = None, limit: int | None = None
                          ) -> Iterator[StateSnapshot[Any]]:
        """The thread's checkpoints, newest first; see ``aget_state_history``. The whole history is read in one
        bulk read anyway, so it is built in one call rather than one event-loop turn per checkpoint."""
        snapshots = self.aget_state_history(config, filter=filter, before=before, limit=limit)
        if limit is None and before is None:
            return iter(run_sync(_listed(snapshots)))
        return iterate_sync(snapshots)

    # -- editing ----------------------------------------------------------------------------------

    async def aupdate_state(self, config: dict[str, Any] | str, values: Any, as_node: str | None = None) -> Any:
        """Write a new checkpoint as if a node had returned ``values`` (merged through the reducers).

        With ``as_node`` the thread moves on along that node's transitions; without, it keeps the tasks of
        the checkpoint updated (given a config, where one routing node made it, that node is ``as_node``, as
        LangGraph infers it: ``_last_writer``). LangGraph's special writers: ``"__start__"`` writes ``values``
        as the input does and moves on along START's edges; ``"__input__"`` makes an input checkpoint, whose
        run (``invoke(None, its config)``) applies ``values`` as the input; ``"__copy__"`` copies the checkpoint
        as a sibling
        (``source="fork"``, its tasks asked afresh); ``"__end__"`` with None clears its tasks. A config naming
        an earlier checkpoint forks the thread there. Returns the new checkpoint's config when given a config
        (LangGraph's way), its snapshot when given a thread id.
        """
        target = self._target(config)
        if as_node is not None and as_node not in self.machine.nodes and as_node not in _SPECIAL \
                and not namespace_of(config):
            raise UnknownNodeError(f"as_node {as_node!r} is not a node of {self.machine.name!r} "
                                   f"(its nodes: {sorted(self.machine.nodes)})")
        if as_node == END and values is not None:
            raise InvalidUpdateError("update_state(..., as_node='__end__') takes None as values: it clears the "
                                     "checkpoint's tasks; to write values, name the node that writes them")
        head = await self.checkpointer.head(target.thread, pieces=bool(self.schema.append_channels))
        if head is None:
            if as_node is None or as_node == COPY or target.checkpoint_id is not None:
                raise CheckpointNotFoundError(f"thread {target.thread!r} has no checkpoint to update; name the node "
                                              "that writes its first one (as_node=...)")
            stored = await self._first_update(target.thread, values, as_node)
            return await self._updated(target, stored.seq, as_node)
        self.checkpointer.ensure_free(head, None)
        views = self._views(target.thread)
        if namespace_of(config):
            return await self._update_subgraph(views, head, target.config["configurable"], values, as_node)
        key = None if target.checkpoint_id is None else parse_view(target.thread, target.checkpoint_id)
        view = await views.at(key, head)
        if as_node == COPY:
            stored = await self._copied(view, head, await views.state(view))
            if isinstance(values, list) and values:  # a copy updated in one go: the updates are its next step's
                return await self.abulk_update_state(graph_config(target.thread, str(ViewKey(stored.seq))), [values])
            return await self._updated(target, stored.seq, as_node)
        if as_node is None and target.named:
            as_node = self._last_writer(view)
        writer = as_node or "update_state"
        update = self._update_of(values, writer)
        state = await views.state(view)
        if as_node == END:  # the tasks that finished in the checkpoint's step keep their writes, as in LangGraph
            state = self.schema.apply(state, [(n, self.schema.load_update(n, view.completed[n]))
                                              for n in view.pending if n in view.completed])
        state = self.schema.apply(state, [(writer, update)])
        keeps = not target.named and view.own and view.record.seq == head.record.seq
        at = head if view.own and view.record.seq == head.record.seq else \
            await self.checkpointer.head(target.thread, view.record.seq)
        assert at is not None
        position = await self._updated_position(view, state, as_node, update, keeps=keeps)
        if view.key.part != MAIN:
            position["parent_view"] = PART_NAMES[view.key.part]
        stored = await self._runner.commit_update(at.cursor, position.pop("step"), state, writer, update,
                                                  rewritten=view.key.part != MAIN, **position)
        return await self._updated(target, stored.seq, as_node)

    def _last_writer(self, view: View) -> str | None:
        """The node an update of ``view`` without ``as_node`` is taken as written by, as LangGraph's, where that
        changes what runs next: the one node whose step made it, when one did, it routes by the state (a
        conditional edge, which the update may turn elsewhere, or a ``Command``'s goto, which the update
        drops) and nothing of the checkpoint's own step has happened yet (no task finished or asked). None
        otherwise: the update keeps the checkpoint's tasks (what LangGraph's re-routing gives for a node whose
        edges are fixed)."""
        if not view.own or view.completed or view.interrupts:
            return None
        writes = view.record.writes if view.made_by is None else view.made_by
        nodes = {self.machine.task_node(task) for task in writes}
        node = nodes.pop() if len(nodes) == 1 else START
        if node == START or node not in self.machine.nodes or self.machine.joins_from.get(node):
            return None
        edges, routers = self.machine.transitions[node]
        routed = routers or any(e.condition is not None for e in edges) or any(GOTO in w for w in writes.values())
        return node if routed else None

    async def _update_subgraph(self, views: ThreadViews, head: Head, configurable: dict[str, Any], values: Any,
                               as_node: str | None) -> dict[str, Any]:
        """``update_state`` of a subgraph's checkpoint: a record keeping the subgraph's edited state as its task's
        progress, which restates the parent's checkpoint when that is the thread's current one stopped at a
        breakpoint (a run goes on from there), else begins a branch at it (``invoke(None, the config returned)``
        runs the branch; interrupts asked there are asked afresh, their ids being the branch's). Returns that
        checkpoint's config in the subgraph."""
        from statehitl.graph.subgraph_travel import edited_progress, locate, restating  # with a subgraph's config

        found = await locate(self, views, head, configurable)
        progress = await edited_progress(found, values, as_node)
        state = await views.state(found.view)
        if not head.record.interrupts and found.view.id == (await views.at(None, head)).id:  # at a breakpoint of
            stored = await self._runner.commit_update(  # the current one: restated (LangGraph's stays as it is)
                head.cursor, head.record.step, state, "update_state", {}, **restating(head.record, progress))
        else:
            branch = await views.fork(found.view, state)
            assert branch.cursor is not None, "a branch begins after a record of the thread"
            stored = await self._runner.commit_update(
                branch.cursor, branch.step, state, "update_state", {}, status="executing", pending=branch.pending,
                completed=branch.completed, progress=progress, schedule=stored_schedule(branch.schedule),
                start=branch.start, parent_view=branch.parent_view)
        level = found.level
        assert level is not None
        record_id = tagged(stored.thread_id, stored.checkpoint_id)
        parents = {"": record_id, **dict.fromkeys(level.outer, record_id)}
        return {"configurable": {"thread_id": stored.thread_id, "checkpoint_ns": found.namespace,
                                 "checkpoint_id": record_id, "checkpoint_map": {**parents, found.namespace: record_id}}}

    async def _updated(self, target: RunTarget, seq: int, as_node: str | None) -> Any:
        """What ``update_state`` returns for the checkpoint it wrote (record ``seq``): its config, or for a thread
        id its snapshot; an ``__input__`` update's is its input checkpoint."""
        shown = str(ViewKey(seq, BEFORE if as_node == INPUT_NODE else MAIN))
        if target.named:
            return graph_config(target.thread, shown)
        return await self.aget_state(target.thread, shown)

    def _update_of(self, values: Any, writer: str) -> dict[str, Any]:
        """``values`` as channel writes; a model is a state's fields (those set), but a root-value state's
        value is written as it is (a LangChain message is a pydantic model too)."""
        dumped = isinstance(values, BaseModel) and self.schema.kind.kind != "root"
        given = values.model_dump(exclude_unset=True) if dumped else values
        return self.schema.input_update(given) if writer in (START, INPUT_NODE) else \
            self.schema.normalize_update(writer, given)

    async def _first_update(self, thread: str, values: Any, as_node: str) -> Any:
        """``update_state`` of a thread never run: its first checkpoint, step 0 (an input checkpoint, -1), after
        the empty state."""
        update = self._update_of(values, as_node)
        state = self.schema.apply(ThreadViews.empty(self.schema), [(as_node, update)])
        if as_node in _SPECIAL:
            position = await self._special_position(-2 if as_node == INPUT_NODE else -1, state, as_node, update)
        else:
            pending, schedule = await self._planned(state, as_node, update, None)
            position = {"step": 0, "status": "executing" if pending else "completed", "pending": pending,
                        "schedule": stored_schedule(schedule)}
        at = start_position(None, thread, state, position["pending"])
        assert at.cursor is not None
        return await self._runner.commit_update(at.cursor, position.pop("step"), state, as_node, update, **position)

    async def _planned(self, state: Any, as_node: str, update: dict[str, Any], schedule: Schedule | None
                       ) -> tuple[list[str], Schedule | None]:
        """The tasks after ``as_node`` wrote ``update`` (its async routers awaited)."""
        done = [(as_node, update)]
        routes = await awaited_routes(self.machine, self.schema.apply, state, done)
        return plan_step(self.machine, self.schema.apply, state, done, schedule, routes=routes)

    async def _copied(self, view: View, head: Head, state: Any) -> Any:
        """``update_state(config, None, as_node="__copy__")``: a checkpoint with ``view``'s values and tasks, after
        the checkpoint ``view`` follows (its sibling; when it follows none, stored after it but shown without a
        parent, as LangGraph's), one step on, shown as a ``"fork"``. Its tasks run afresh: what finished or was
        asked in its step is not carried."""
        parent = view.parent
        at = await self.checkpointer.head(head.record.thread_id, view.record.seq if parent is None else parent.seq)
        assert at is not None
        position: dict[str, Any] = {"status": "executing" if view.pending else "completed",
                                    "pending": list(view.pending), "schedule": view.schedule}
        if parent is not None and parent.part != MAIN:
            position["parent_view"] = PART_NAMES[parent.part]
        elif parent is None:
            position["parent_view"] = "root"
        return await self._runner.commit_update(at.cursor, view.step + 1, state, COPY, {}, rewritten=True,
                                                source="fork", **position)

    async def _updated_position(self, view: View, state: Any, as_node: str | None, update: dict[str, Any], *,
                  keeps: bool) -> dict[str, Any]:
        """Where an update of ``view`` leaves the thread. ``keeps``: the native update of a waiting thread,
        which keeps waiting on the same interrupts (their ids derive from the step they were asked in)."""
        record = view.record
        if as_node in (START, INPUT_NODE, END):
            return await self._special_position(view.step, state, as_node, update)
        if as_node is not None:
            kept = schedule_of(view.schedule, f"checkpoint {view.id} of thread {record.thread_id!r}")
            pending, schedule = await self._planned(state, as_node, update, kept)
            return {"step": view.step + 1, "status": "executing" if pending else "completed", "pending": pending,
                    "schedule": stored_schedule(schedule)}
        if keeps:
            return {"step": record.step if record.interrupts else record.step + 1, "status": record.status,
                    "pending": record.pending, "interrupts": record.interrupts, "completed": record.completed,
                    "responses": record.responses, "progress": record.progress, "error": record.error,
                    "schedule": record.schedule}
        return {"step": view.step + 1, "status": "executing" if view.pending else "completed",
                "pending": view.pending, "completed": view.completed, "schedule": view.schedule}

    async def _special_position(self, step: int, state: Any, as_node: str, update: dict[str, Any]) -> dict[str, Any]:
        """Where an update of a checkpoint of ``step`` by START (the input's writes, then START's edges), by
        ``__input__`` (a run's input, shown as its input checkpoint) or by END (no tasks left) leaves the thread."""
        if as_node == END:
            return {"step": step + 1, "status": "completed", "pending": [], "schedule": {}}
        pending, planned = await plan_start(self.machine, state)
        schedule = stored_schedule(planned)
        position: dict[str, Any] = {"step": step + 1, "status": "executing" if pending else "completed",
                                    "pending": pending, "schedule": schedule}
        if as_node == INPUT_NODE:
            step = step + 2
            position.update(step=step, start=RunStart(update=self.schema.dump_input(update), pending=pending,
                                                      schedule=schedule, step=step))
        return position

    def update_state(self, config: dict[str, Any] | str, values: Any, as_node: str | None = None) -> Any:
        """Write a new checkpoint as if a node had returned ``values``; see ``aupdate_state``."""
        return run_sync(self.aupdate_state(config, values, as_node))

    async def abulk_update_state(self, config: dict[str, Any], supersteps: Sequence[Sequence[Any]]) -> Any:
        """Supersteps of ``StateUpdate``-like ``(values, as_node)`` pairs, in order (LangGraph's): each superstep
        is one checkpoint, as if its nodes had run in one step (their writes applied together through the
        reducers, an update as a node with pending Sends taking the next of them). A superstep of several
        updates names a node for each. Every superstep is checked before anything is written."""
        steps = [[(u.values, u.as_node) if hasattr(u, "values") else tuple(u) for u in step] for step in supersteps]
        if not steps:
            raise ValueError("No supersteps provided: bulk_update_state takes a list of supersteps of updates")
        for step in steps:
            if not step:
                raise ValueError("No updates provided: each superstep of bulk_update_state holds one update or more")
            if len(step) > 1 and (named := [n for _, n in step if n is None or n in _SPECIAL]):
                raise InvalidUpdateError(f"a superstep of several updates names a node for each, and not "
                                         f"{named[0]!r}: give that update a superstep of its own")
        result: Any = config
        for step in steps:
            if len(step) == 1:
                result = await self.aupdate_state(result, *step[0])
            else:
                result = await self._superstep_update(result, step)
        return result

    async def _superstep_update(self, config: dict[str, Any], step: list[tuple[Any, str]]) -> Any:
        """One checkpoint for several nodes' updates of the checkpoint ``config`` names, one step on."""
        target = self._target(config)
        for _, as_node in step:
            if as_node not in self.machine.nodes:
                raise UnknownNodeError(f"as_node {as_node!r} is not a node of {self.machine.name!r} "
                                       f"(its nodes: {sorted(self.machine.nodes)})")
        head = await self.checkpointer.head(target.thread, pieces=bool(self.schema.append_channels))
        views = self._views(target.thread)
        view = None if head is None else await views.at(
            None if target.checkpoint_id is None else parse_view(target.thread, target.checkpoint_id), head)
        updates = _by_task([(n, self._update_of(values, n)) for values, n in step], self.machine,
                           [] if view is None else view.pending)
        if head is None or view is None:
            state = self.schema.apply(ThreadViews.empty(self.schema), updates)
            pending, schedule = await self._planned_all(state, updates, None)
            cursor = start_position(None, target.thread, state, pending).cursor
            step_number, position = 0, dict[str, Any]()
        else:
            self.checkpointer.ensure_free(head, None)
            state = self.schema.apply(await views.state(view), updates)
            kept = schedule_of(view.schedule, f"checkpoint {view.id} of thread {target.thread!r}")
            pending, schedule = await self._planned_all(state, updates, kept)
            at = head if view.own and view.record.seq == head.record.seq else \
                await self.checkpointer.head(target.thread, view.record.seq)
            assert at is not None, "the checkpoint viewed is the thread's"
            cursor, step_number = at.cursor, view.step + 1
            position = {} if view.key.part == MAIN else {"parent_view": PART_NAMES[view.key.part]}
        assert cursor is not None, "an update begins after a record of the thread, or a new one"
        stored = await self._runner.commit_updates(
            cursor, step_number, state, _writes(updates), rewritten=view is not None and view.key.part != MAIN,
            status="executing" if pending else "completed", pending=pending, schedule=stored_schedule(schedule),
            **position)
        return await self._updated(target, stored.seq, None)

    async def _planned_all(self, state: Any, done: list[tuple[str, dict[str, Any]]], schedule: Schedule | None
                           ) -> tuple[list[str], Schedule | None]:
        """The tasks after ``done`` (each task and its update) were written in one step (their async routers
        awaited)."""
        routes = await awaited_routes(self.machine, self.schema.apply, state, done)
        return plan_step(self.machine, self.schema.apply, state, done, schedule, routes=routes)

    def bulk_update_state(self, config: dict[str, Any], supersteps: Sequence[Sequence[Any]]) -> Any:
        """Several ``update_state`` calls in order; see ``abulk_update_state``."""
        return run_sync(self.abulk_update_state(config, supersteps))


def _by_task(updates: list[tuple[str, dict[str, Any]]], machine: Machine, pending: list[str]
             ) -> list[tuple[str, dict[str, Any]]]:
    """A superstep's updates, each with the task it stands for: an update as a node with pending Sends is the
    next of those Sends' (``node:0``, ``node:1``...), as LangGraph's is."""
    sends = [t for t in pending if machine.task_node(t) != t]
    by_task = []
    for node, update in updates:
        task = next((t for t in sends if machine.task_node(t) == node), node)
        if task in sends:
            sends.remove(task)
        by_task.append((task, update))
    return by_task


def _writes(updates: list[tuple[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """What a superstep's checkpoint records each task wrote (a node's second update merged into its first)."""
    writes: dict[str, dict[str, Any]] = {}
    for task, update in updates:
        writes[task] = {**writes.get(task, {}), **update}
    return writes


async def _listed(snapshots: AsyncIterator[StateSnapshot[Any]]) -> list[StateSnapshot[Any]]:
    return [snapshot async for snapshot in snapshots]
