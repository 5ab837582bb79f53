"""LangGraph's functional API (``langgraph.func``): ``@entrypoint`` and ``@task``, on statehitl's runner.

A workflow is a machine whose one node is the entrypoint's function; its tasks' results are kept in the
thread's checkpoint, so a workflow resumed after an interrupt (in this process or another) does not run
finished tasks again.
"""

from __future__ import annotations

from statehitl.func.tasks import task
from statehitl.func.workflow import Workflow, entrypoint

__all__ = ["Workflow", "entrypoint", "task"]
