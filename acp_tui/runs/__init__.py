"""What every out-of-process run shares, whatever its protocol (ACP, A2A, Claude, Codex).

- `base.RunBase`: the run itself, one coroutine in an anyio task group: events, result (never
  raises), dispose (idempotent, any task, any phase), the abort event, the phase, the one
  shielded cleanup. A provider subclasses it and writes `refusal`, `launch`,
  `converse`, `explain`, `wind_down` and `result_fields`; `RunLimits` is what it reads of the
  provider's config. A run of an agent elsewhere (A2A) has no child, and is no less a run.
- `provider`: `RunProvider` (a fresh run of its `run_class` for one config at each start, every
  live one disposed by `aclose`), `ProviderRun` (a run of that config for one request, its trace,
  its failures said in one line) and `Conversation` (what a run keeps of its agent: the agent, its
  options, session, usage and tool calls, for its events and result).
- `tool_calls.ToolCalls`: every tool call of a session in ACP's shape, merged by id: what the
  activity view, the permission log and the policy lab read, whatever the protocol.
- `phase.Phase`: where a run is; it only moves forward.
- `output`: `TextGuard` (secrets masked, surrogates replaced: the one choke point for text from an
  agent), `OutputBuffer` (the answer, streamed under a cap, in parts), `StderrTail`.
- `talk.Talk`: the conversation as a stop reaches it: the stop asked, the turn with its cancel
  grace, how a run told to stop ends.
- `permissions.PermissionBroker`: the policy's decisions, recorded, cancelled when the run stops,
  the idle clock paused while a person decides; `questions.QuestionBroker`: the agent's questions
  to the person, the same way; `waiting.Waits`: what both wait on, which the run's stop cuts short.
- `deadlines.Deadlines`: the handshake, run, idle and cancel-grace clocks, as cancel scopes.
- `child`: `Launch` (what to start: `launch_for` a config), `Carrier` (where: `LocalCarrier` here,
  in a process group of its own, confined when asked; a remote carrier starts a local ssh, docker
  or kubectl instead), `start_child`, `ChildProcess` (its stderr drained, its exit watched, its
  end, why it broke).
- `trace`: the protocol trace, one frame a line, masked (`open_trace`).
- `probe`: what every provider's `acp-tui probe` shares; `extras`: a provider's optional extra.
"""
