"""ForgeEnv's action, observation and state as pydantic models (openenv-core's Action/Observation/State).

Field names are the original ForgeEnv's, snake_case. The observation forbids unknown fields, so a
server that sends anything else fails loudly here.
"""

from __future__ import annotations

from typing import Any, Dict, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

from openenv.core.env_server.types import Action, Observation, State

Phase = Literal["drift_gen", "repair", "verify", "done"]


class BreakageAction(BaseModel):
    """Break the working script with a primitive (phase drift_gen), e.g. RenameApiCall."""

    model_config = ConfigDict(extra="forbid")
    primitive_type: str = Field(min_length=1)
    params: Dict[str, Any] = Field(default_factory=dict)


class RepairAction(BaseModel):
    """Repair the broken script with a unified diff (phase repair)."""

    model_config = ConfigDict(extra="forbid")
    unified_diff: str


class ForgeAction(Action):
    """Exactly one of `breakage` or `repair` (the server rejects anything else with VALIDATION_ERROR)."""

    breakage: Optional[BreakageAction] = None
    repair: Optional[RepairAction] = None


class ForgeObservation(Observation):
    current_phase: Phase
    task_id: str
    task_description: str = ""
    target_category: str = ""
    script_content: str
    error_trace: Optional[str] = None
    library_versions: Dict[str, str] = Field(default_factory=dict)
    reward_breakdown: Dict[str, float] = Field(default_factory=dict)
    held_out_breakdown: Dict[str, float] = Field(default_factory=dict)
    episode_step: int = 0
    info: Dict[str, Any] = Field(default_factory=dict)


class ForgeState(State):
    """OpenEnv's state (episode_id, step_count); `forgeenv serve` adds the whole episode state."""

    model_config = ConfigDict(extra="allow")
    phase: Optional[Phase] = None
    task_id: Optional[str] = None
