"""What every out-of-process run shares, whatever its protocol (ACP today; Codex, A2A, Claude next).

- `base.RunBase`: the run itself, one coroutine in an anyio task group: events, result (never
  raises), dispose (idempotent, any task, any phase), the abort event, the phase, the turn with its
  cancel grace, the one shielded cleanup. A provider subclasses it and writes `launch`, `converse`,
  `wind_down` and `result_fields`; `RunLimits` is what it reads of the provider's config.
- `phase.Phase`: where a run is; it only moves forward.
- `output`: `TextGuard` (secrets masked, surrogates replaced: the one choke point for text from an
  agent), `OutputBuffer` (the answer, streamed under a cap), `StderrTail`.
- `permissions.PermissionBroker`: the policy's decisions, recorded, cancelled when the run stops,
  the idle clock paused while a person decides.
- `deadlines.Deadlines`: the handshake, run, idle and cancel-grace clocks, as cancel scopes.
- `child`: `Launch` (what to start), `Carrier` (where: `LocalCarrier` here, in a process group of
  its own; a remote carrier starts a local ssh, docker or kubectl instead), `ChildProcess` (its
  stderr drained, its exit watched, its end, why it broke).
"""
