"""What a run is started with when its preset says nothing: the defaults a preset
(`settings.schema.AgentPreset`) and the core's config (`settings.provider_config.AcpProviderConfig`)
share, apart from both, so that declaring the presets (the app's first frame) declares no config of
the core."""

from __future__ import annotations

from typing import Literal

HANDSHAKE_TIMEOUT = 60.0  # spawn -> initialize -> session/new; slow agents need seconds
RUN_TIMEOUT: float | None = None  # no limit to a run's time
IDLE_TIMEOUT: float | None = None  # nor to an agent's silence
SANDBOX: Literal["none", "workspace"] = "none"  # unconfined
SANDBOX_NETWORK = True  # a confined agent's network: all of it
