"""LangGraph's ``langgraph.managed.is_last_step``, where its documentation imports ``RemainingSteps`` and
``IsLastStep`` from: the same names as ``statehitl.managed``, so the import ports by renaming the package."""

from __future__ import annotations

from statehitl.managed import IsLastStep, IsLastStepManager, RemainingSteps, RemainingStepsManager

__all__ = ["IsLastStep", "IsLastStepManager", "RemainingSteps", "RemainingStepsManager"]
