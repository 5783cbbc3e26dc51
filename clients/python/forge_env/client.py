"""ForgeEnv: the typed OpenEnv client for a ForgeEnv server (`forgeenv serve`, or its Docker image).

    from forge_env import ForgeEnv, ForgeAction, BreakageAction, RepairAction
    with ForgeEnv(base_url="http://localhost:7860").sync() as env:
        r = env.reset(task_id="distilbert_sst2", seed=1)
        r = env.step(ForgeAction(breakage=BreakageAction(primitive_type="RenameApiCall",
                                                         params={"old_name": "AutoTokenizer", "new_name": "AutoTokeniser"})))
        print(r.observation.error_trace)
        r = env.step(ForgeAction(repair=RepairAction(unified_diff=my_diff)))
        print(r.reward, r.done)
"""

from __future__ import annotations

from typing import Any, Dict

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient

from .models import ForgeAction, ForgeObservation, ForgeState


class ForgeEnv(EnvClient[ForgeAction, ForgeObservation, ForgeState]):
    def _step_payload(self, action: ForgeAction | Dict[str, Any]) -> Dict[str, Any]:
        if isinstance(action, dict):
            return action
        return action.model_dump(exclude_none=True, exclude_defaults=False)

    def _parse_result(self, payload: Dict[str, Any]) -> StepResult[ForgeObservation]:
        obs = ForgeObservation(**payload.get("observation", {}), reward=payload.get("reward"), done=payload.get("done", False))
        return StepResult(observation=obs, reward=payload.get("reward"), done=payload.get("done", False))

    def _parse_state(self, payload: Dict[str, Any]) -> ForgeState:
        return ForgeState(**payload)
