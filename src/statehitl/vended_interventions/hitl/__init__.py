"""Human in the loop (Strands' ``strands.vended_interventions.hitl``): approval before tool calls.

``Agent(interventions=[HumanInTheLoop(allowed_tools=["read_file"])])``: every other tool call stops the
agent with an interrupt until a human answers it, in this process or in any other.
"""

from __future__ import annotations

from statehitl.vended_interventions.hitl.classifier import HumanInTheLoopClassifier, LLMClassifierConfig
from statehitl.vended_interventions.hitl.hitl import HumanInTheLoop

__all__ = ["HumanInTheLoop", "HumanInTheLoopClassifier", "LLMClassifierConfig"]
