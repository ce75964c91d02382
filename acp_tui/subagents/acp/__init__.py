"""The ACP subagent backend: each run is a child process driven over stdio as an ACP client.

Nothing is imported here on purpose: a child started with `python -m acp_tui.demo.agent`, or the
`sdk` helper, must not pay for the whole backend.
"""
