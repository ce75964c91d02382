"""Hostile children, the supervisor's own death, soak, fuzzing and credentials (issue 6).

    python -m pytest tests/hostile -q              # everything, the 200-cycle soak included
    python -m pytest tests/hostile -m "not soak"   # without the soak
    ACP_TUI_SOAK_CYCLES=5000 python -m pytest -m soak tests/hostile -s   # the long soak, by hand
    ACP_TUI_HOSTILE_NOTES=/tmp/notes.txt python -m pytest tests/hostile/test_matrix.py   # + measurements

test_matrix.py     one scripted misbehaviour per row, through the library and in the app
test_supervisor_death.py  SIGKILL of a real `acp-tui run` and a real app: every child group gone in 1 s
test_soak.py       start-and-dispose cycles at random moments: no process, fd, task or memory left
test_fuzz.py       generated frames replayed by replay_agent.py: the outcome never changes
test_security.py   credentials reach only their own child and never come back out; cwd; no file access
"""
