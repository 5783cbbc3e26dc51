"""ForgeEnv: the typed OpenEnv client for a ForgeEnv server (`forgeenv serve`, or its Docker image).

    from forge_env import ForgeEnv, ForgeAction, BreakageAction, RepairAction
    with ForgeEnv(base_url="http://localhost:7860").sync() as env:
        r = env.reset(task_id="distilbert_sst2", seed=1)
        r = env.step(ForgeAction(breakage=BreakageAction(primitive_type="RenameApiCall",
                                                         params={"old_name": "AutoTokenizer", "new_name": "AutoTokeniser"})))
        print(r.observation.error_trace)
        r = env.step(ForgeAction(repair=RepairAction(unified_diff=my_diff)))
        print(r.reward, r.done)

A server started with a token (`forgeenv serve --token`, or FORGEENV_TOKEN) needs it from the client:
`ForgeEnv(base_url=..., token="...")`, or the FORGEENV_TOKEN environment variable. It travels as
`?token=` on the /ws handshake (openenv-core's client sets no headers); use https/wss beyond a
trusted network.
"""

from __future__ import annotations

import os
from typing import Any, Dict, Optional
from urllib.parse import quote

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient

from .models import ForgeAction, ForgeObservation, ForgeState


class ForgeEnv(EnvClient[ForgeAction, ForgeObservation, ForgeState]):
    def __init__(self, base_url: str, *args: Any, token: Optional[str] = None, **kwargs: Any):
        super().__init__(base_url, *args, **kwargs)
        token = token if token is not None else os.environ.get("FORGEENV_TOKEN", "").strip()
        if token:
            # EnvClient connects to self._ws_url as is: the query rides on the handshake.
            self._ws_url = f"{self._ws_url}?token={quote(token, safe='')}"

    def _step_payload(self, action: ForgeAction | Dict[str, Any]) -> Dict[str, Any]:
        if isinstance(action, dict):
            return action
        return action.model_dump(exclude_none=True, exclude_defaults=False)

    def _parse_result(self, payload: Dict[str, Any]) -> StepResult[ForgeObservation]:
        obs = ForgeObservation(**payload.get("observation", {}), reward=payload.get("reward"), done=payload.get("done", False))
        return StepResult(observation=obs, reward=payload.get("reward"), done=payload.get("done", False))

    def _parse_state(self, payload: Dict[str, Any]) -> ForgeState:
        return ForgeState(**payload)
