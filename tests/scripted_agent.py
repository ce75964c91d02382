"""A scripted ACP agent in the standard library alone, so it can misbehave as no SDK agent would.

    python scripted_agent.py key=value ...

Options (all optional; `${NAME}` in a value is replaced by the environment variable NAME, so a
test can make the agent leak its own credentials without putting them on its command line):
  text=...            the answer, streamed in `chunks` pieces (default "Hello from the scripted agent.")
  chunks=N            how many agent_message_chunk notifications carry the answer (default 1)
  stop=REASON         the stopReason of the prompt response (default end_turn; any string goes)
  hidden=1            interleave thoughts, a plan, tool calls and an image chunk with the answer
  tools=K,L           before the answer, announce one completed tool call of each kind K, L (e.g.
                      edit,execute) and ask no permission for any: an agent in a mode that never asks
  failed_tool=TITLE   before the answer, an `edit` tool call of that title on out.txt that ends
                      `failed`, with an error message as its content (Gemini's failed write)
  early=1             stream the answer before answering session/new (then answer prompt at once)
  foreign=1           also send chunks for another session id (must be ignored)
  permission=SET      ask permission before answering: normal | allow_always_first | no_allow | none
                      | reject_always_first | allow_only (see permission_options() for the lists);
                      the agent then streams `[permission: <the outcome it got, as JSON>]`
  fs=1                call fs/read_text_file, fs/write_text_file and terminal/create; answer with
                      the error codes we got back
  stderr_bytes=N      write N bytes to stderr before answering initialize
  stderr=TEXT         write TEXT as a stderr line before answering initialize
  delay=S             pause between chunks (default 0)
  forever=1           after the answer, keep streaming until cancelled
  on_cancel=MODE      honour (default: end the turn `cancelled`) | end_turn | ignore
  ignore_term=1       ignore SIGTERM
  linger=1            stay up when stdin closes (until signalled), as Codex and Vibe do after a turn
  hang=STEP           never answer `initialize` or `session/new`
  exit=CODE           exit with CODE (after `exit_at`: start | initialize | prompt, mid-stream)
  exit_at=STEP        where to exit (default prompt, after the first chunk)
  exit_message=TEXT   the stderr line written just before `exit=` (default: says the code and step)
  close_stdin=1       close stdin after answering session/new and keep running (a broken pipe)
  close_stdout=1      close stdout after the first chunk and keep running
  wrapper=1           re-run this script as a grandchild with the same options (minus wrapper) and
                      wait for it: the `sh -c` / npx case
  orphan=1            like wrapper, but the parent exits at once, leaving the grandchild on our pipes
  garbage=1           write non-JSON lines, non-object JSON, and invalid UTF-8 before each frame
  garbage=2           as garbage=1, plus object-shaped lines that are not valid messages: broken
                      JSON in braces, invalid UTF-8 in braces, an object that is no JSON-RPC message,
                      a response to an id never sent, an unknown notification
  record=PATH         append every message received to PATH, one JSON per line
  kill=SIGNAL         kill itself with SIGNAL (a name such as SIGTERM, or a number) at `exit_at`
                      (same steps as exit=, plus `permission`: while a permission request is pending)
  fail=METHOD:CODE:MESSAGE
                      answer METHOD (initialize | session/new | session/prompt) with the JSON-RPC
                      error CODE and MESSAGE instead of a result
  echo_env=NAME       the answer is the value of the environment variable NAME, or `<unset>`
  big=N               the answer is one single chunk of N characters: big_text(N) below

Hostile options (tests/hostile/):
  bulk=N              the answer is N characters in chunks of `bulk_chunk` (default 1 MiB)
                      characters: bulk_piece() below, cheap to make even for 100 MB
  bulk_chunk=N        the size of each `bulk` chunk (bulk_chunk >= bulk: one single frame)
  bulk_newlines=1     `bulk` text is made of 73-character lines instead of one endless line
  noise_line=N        before the answer, one line of N bytes that is not JSON ("xxx...")
  stderr_newlines=0   the `stderr_bytes` flood has no newline at all (one endless line)
  unknown_updates=1   before the answer: updates of unknown kinds, chunks of unknown content types,
                      known kinds with invalid fields (each must be dropped or counted, never shown)
  dup=1               every response is sent twice
  stray=1             before each response, responses to ids never asked (a number, a string)
  pause=S             when the prompt arrives, wait S seconds before anything else (a live window)
  storm=N             before the answer, N permission requests at once (ids 5000.., the options of
                      `permission`, default normal); the answer then starts with
                      `storm: A allowed, R rejected, C cancelled, E errors`
  fs_read=PATH        with fs=1: the path read (default /etc/hostname)
  fs_write=PATH       with fs=1: the path written (default x.txt)
  fs_touch=PATH       with fs=1: terminal/create runs `touch PATH` (default y.txt)
  stderr_at_prompt=TEXT  write TEXT as a stderr line when the prompt arrives (a readiness mark)
  env_dump=PATH       at start, write {"env": the environment, "cwd": the working directory} to PATH
  permission_title=T  the title of the `permission=` tool call (default "Write proof.txt")
  permission_kind=K   its kind (default edit)
  permission_raw=JSON its rawInput (a JSON value), as real agents send it
  permission_paths=P,Q  its locations (paths, comma-separated)
  announce=HOW        how the `permission=` tool call is told before the request, which then
                      carries only its toolCallId (Mistral Vibe's way): `start` (one tool_call with
                      every field), `split` (tool_call with title and kind, then a tool_call_update
                      with the rest), `update` (only a tool_call_update); the fields then given
                      to the request are none but the id
  noise=TEXT          before the answer, a stdout line that is not JSON and carries TEXT
  invalid_update=TEXT before the answer, an agent_message_chunk the schema rejects, carrying TEXT
  lone_surrogate=1    the answer is "x\ud800y": valid JSON, but no valid Unicode text (no UTF-8 for it)

Trust options (tests/hostile/test_trust.py):
  bad_error=METHOD    answer METHOD (initialize | session/new | session/prompt) with `"error": "boom"`
                      (a string where JSON-RPC wants an object)
  deep=N              after the first chunk of the answer, one frame nested N deep (then the rest)
  daemon=HOW          at start, leave a grandchild behind that escapes our process group (HOW:
                      setsid, a double fork and a new session; setpgid, a group of its own;
                      leaderless, setsid's daemon that ignores SIGTERM and whose main thread exits
                      while another thread runs on: /proc shows its pid as a zombie) and sleeps,
                      holding our pipes; its pid goes to `daemon_pid=PATH`
  early_bulk=N        before answering session/new, N characters of answer in 1 MiB chunks
  invalid_flood=N     before the answer, N session/update frames the SDK's schema rejects
  read_parent_env=PATH  at start, copy /proc/<parent pid>/environ to PATH (what a child could read)

Session setup options (issue 11; the functions under "Session setup" below):
  session_config=SPEC config options offered by session/new: `id:v1|v2|...;id2:...` (the first value
                      is current; ids `mode` and `model` get those categories, `id@mode:...` gives
                      another id that category; `id:bool` is a boolean option, current false).
                      session/set_config_option answers with them all.
  session_modes=SPEC  the older modes: `m1|m2|...` (the first is current); session/set_mode switches
  config_update=1     after each set_config_option, also send a config_option_update notification
  ask_in_mode=MODE    ask permission (as permission=normal) only when the current mode is MODE
  usage=USED/SIZE[/AMOUNT/CURRENCY]  a usage_update before the answer (usage_twice=1: two, the first
                      with half of each number)
  auth_methods=SET    authMethods in initialize: codex (agent, env_var CODEX_API_KEY, terminal) |
                      opencode (an agent method whose description says to run a command)
  agent_info=N/T/V    agentInfo (name, title, version) in initialize
  can_close=1         advertise sessionCapabilities.close and answer session/close
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from typing import Any

OPTS: dict[str, str] = dict(arg.split("=", 1) for arg in sys.argv[1:])
SESSION = "sess-1"
_write_lock = threading.Lock()
_inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
_responses: dict[int, dict[str, Any]] = {}
_response_ready = threading.Condition()
_next_id = 1000
cancelled = threading.Event()


def opt(name: str, default: str = "") -> str:
    """An option's value; `${NAME}` in it stands for the variable NAME of our environment."""
    value = OPTS.get(name, default)
    if "${" in value:
        value = re.sub(r"\$\{(\w+)\}", lambda m: os.environ.get(m.group(1), ""), value)
    return value


def big_text(n: int) -> str:
    """N characters with no period shorter than the whole: 8-character numbered tokens."""
    return "".join(f"{i:07d}|" for i in range(n // 8 + 1))[:n]


def bulk_piece(i: int, size: int, newlines: bool) -> str:
    """Chunk i of a `bulk` answer: size characters of a pattern naming i, cheap to build."""
    unit = f"{i:07d}|" * 9 + ("\n" if newlines else "|")
    return (unit * (size // len(unit) + 1))[:size]


GARBAGE = b"not json at all\n42\n[1,2]\n\xff\xfe{bad utf8}\n\n"
GARBAGE_OBJECTS = (
    b"{this is not json}\n"
    b'{"text": "\xff\xfe"}\n'
    b'{"hello": "an object, not a JSON-RPC message"}\n'
    b'{"jsonrpc": "2.0", "id": 987654, "result": {}}\n'
    b'{"jsonrpc": "2.0", "method": "acp-tui/unknown", "params": {}}\n'
)


def send(message: dict[str, Any]) -> None:
    data = json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n"
    is_response = "method" not in message
    with _write_lock:
        if opt("garbage"):
            sys.stdout.buffer.write(GARBAGE)
        if opt("garbage") == "2":
            sys.stdout.buffer.write(GARBAGE_OBJECTS)
        if opt("stray") and is_response:
            for stray in (424242, "no-such-id"):
                sys.stdout.buffer.write(json.dumps({"jsonrpc": "2.0", "id": stray, "result": {}}).encode())
                sys.stdout.buffer.write(b"\n")
        sys.stdout.buffer.write(data)
        if opt("dup") and is_response:
            sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()


def notify_chunk(text: str, kind: str = "agent_message_chunk", session: str = SESSION) -> None:
    update = {"sessionUpdate": kind, "content": {"type": "text", "text": text}}
    send({"method": "session/update", "params": {"sessionId": session, "update": update}})


def notify(update: dict[str, Any]) -> None:
    send({"method": "session/update", "params": {"sessionId": SESSION, "update": update}})


def request(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """Call the client and wait for its answer (the reader thread files responses)."""
    global _next_id
    _next_id += 1
    rid = _next_id
    send({"id": rid, "method": method, "params": params})
    with _response_ready:
        while rid not in _responses:
            _response_ready.wait()
        return _responses.pop(rid)


def reader() -> None:
    for raw in sys.stdin.buffer:
        message = json.loads(raw)
        if opt("record"):
            with open(opt("record"), "a") as f:
                f.write(json.dumps(message) + "\n")
        if "method" not in message:
            with _response_ready:
                _responses[message["id"]] = message
                _response_ready.notify_all()
        elif message["method"] == "session/cancel":
            cancelled.set()
        else:
            if opt("close_stdin") and message["method"] == "session/new":
                # Closed by the reading thread itself, before the answer goes out, so the
                # client's next write is sure to hit a closed pipe.
                os.close(0)
                _inbox.put(message)
                return
            _inbox.put(message)
    _inbox.put(None)


def maybe_exit(step: str) -> None:
    if opt("exit") and opt("exit_at", "prompt") == step:
        sys.stderr.write(opt("exit_message", f"scripted agent: exiting with {opt('exit')} at {step}") + "\n")
        sys.stderr.flush()
        os._exit(int(opt("exit")))
    if opt("kill") and opt("exit_at", "prompt") == step:
        name = opt("kill")
        sig = signal.Signals(int(name)) if name.isdigit() else signal.Signals[name]
        sys.stderr.write(f"scripted agent: killing itself with {sig.name} at {step}\n")
        sys.stderr.flush()
        if threading.current_thread() is threading.main_thread() and sig != signal.SIGKILL:
            signal.signal(sig, signal.SIG_DFL)  # only the main thread may, and not for SIGKILL
        os.kill(os.getpid(), sig)
        time.sleep(3600)  # a signal that does not end the process by default: hang, visibly


def failure(method: str) -> Any:
    """The JSON-RPC error `fail=` (or `bad_error=`) asks for at METHOD, if any."""
    if opt("bad_error") == method:
        return "boom"
    if not opt("fail"):
        return None
    failing, code, message = opt("fail").split(":", 2)
    if failing != method:
        return None
    return {"code": int(code), "message": message}


def permission_options() -> list[dict[str, str]]:
    sets = {
        "normal": [("a1", "Allow", "allow_once"), ("r1", "Reject", "reject_once")],
        "allow_always_first": [
            ("aa", "Always allow", "allow_always"),
            ("a1", "Allow once", "allow_once"),
            ("r1", "Reject", "reject_once"),
            ("ra", "Always reject", "reject_always"),
        ],
        "no_allow": [("r1", "Reject", "reject_once"), ("ra", "Always reject", "reject_always")],
        "none": [],
        "reject_always_first": [
            ("a1", "Allow once", "allow_once"),
            ("ra", "Always reject", "reject_always"),
            ("r1", "Reject", "reject_once"),
        ],
        "allow_only": [("aa", "Always allow", "allow_always"), ("a1", "Allow once", "allow_once")],
    }
    return [{"optionId": i, "name": n, "kind": k} for i, n, k in sets[opt("permission", "normal")]]


def unknown_updates() -> None:
    notify({"sessionUpdate": "acp_tui_unknown_kind", "content": {"type": "text", "text": "UNKNOWN-KIND"}})
    notify({"sessionUpdate": "agent_message_chunk", "content": {"type": "hologram", "text": "UNKNOWN-TYPE"}})
    notify({"sessionUpdate": "agent_message_chunk", "content": {"type": "text"}})  # no text
    notify({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": 42}})
    notify({"sessionUpdate": "agent_message_chunk"})  # no content
    notify({"sessionUpdate": "tool_call", "toolCallId": 7, "title": None})  # invalid fields
    notify({"sessionUpdate": "plan", "entries": "not a list"})
    notify({"content": {"type": "text", "text": "NO-KIND"}})  # no sessionUpdate at all
    send({"method": "session/update", "params": {"update": {"sessionUpdate": "agent_message_chunk"}}})
    send({"method": "session/update", "params": "not an object"})


def permission_storm(count: int) -> None:
    call = {"toolCallId": "storm", "title": "Storm", "kind": "execute", "status": "pending"}
    params = {"sessionId": SESSION, "toolCall": call, "options": permission_options()}
    ids = list(range(5000, 5000 + count))
    with _write_lock:  # all at once, as fast as the pipe takes them
        for rid in ids:
            frame = {"jsonrpc": "2.0", "id": rid, "method": "session/request_permission", "params": params}
            sys.stdout.buffer.write(json.dumps(frame).encode() + b"\n")
        sys.stdout.buffer.flush()
    counts = {"allowed": 0, "rejected": 0, "cancelled": 0, "errors": 0}
    kinds = {o["optionId"]: o["kind"] for o in permission_options()}
    for rid in ids:
        with _response_ready:
            while rid not in _responses:
                _response_ready.wait()
            reply = _responses.pop(rid)
        outcome = (reply.get("result") or {}).get("outcome") or {}
        if "error" in reply:
            counts["errors"] += 1
        elif outcome.get("outcome") == "selected":
            allowed = kinds.get(outcome.get("optionId"), "").startswith("allow")
            counts["allowed" if allowed else "rejected"] += 1
        else:
            counts["cancelled"] += 1
    notify_chunk("storm: " + ", ".join(f"{n} {what}" for what, n in counts.items()))


def answer_prompt(rid: Any, prompt_text: str) -> None:
    if opt("stderr_at_prompt"):
        sys.stderr.write(opt("stderr_at_prompt") + "\n")
        sys.stderr.flush()
    if opt("pause"):
        time.sleep(float(opt("pause")))
    maybe_exit("prompt-start")
    setup_at_prompt()
    if opt("noise_line"):
        with _write_lock:
            sys.stdout.buffer.write(b"x" * int(opt("noise_line")) + b"\n")
            sys.stdout.buffer.flush()
    if opt("unknown_updates"):
        unknown_updates()
    if opt("noise"):
        with _write_lock:
            sys.stdout.buffer.write(f"noise: {opt('noise')}\n".encode())
            sys.stdout.buffer.flush()
    for _ in range(int(opt("invalid_flood", "0"))):
        notify({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": 7}})
    if opt("invalid_update"):
        notify(
            {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": [opt("invalid_update")]},
            }
        )
    if opt("storm"):
        permission_storm(int(opt("storm")))
    if opt("permission") or asks_in_this_mode():
        title = opt("permission_title", "Write proof.txt")
        call: dict[str, Any] = {
            "toolCallId": "t1",
            "title": title,
            "kind": opt("permission_kind", "edit"),
            "status": "pending",
        }
        if opt("permission_raw"):
            call["rawInput"] = json.loads(opt("permission_raw"))
        if opt("permission_paths"):
            call["locations"] = [{"path": path} for path in opt("permission_paths").split(",")]
        how = opt("announce")
        if how == "start":
            notify({"sessionUpdate": "tool_call", **call})
        elif how == "split":
            notify({"sessionUpdate": "tool_call", **{k: call[k] for k in ("toolCallId", "title", "kind")}})
            rest = {k: v for k, v in call.items() if k not in ("title", "kind")}
            notify({"sessionUpdate": "tool_call_update", **rest})
        elif how == "update":
            notify({"sessionUpdate": "tool_call_update", **call})
        if how:
            call = {"toolCallId": call["toolCallId"]}
        if opt("exit_at") == "permission":
            params = {"sessionId": SESSION, "toolCall": call, "options": permission_options()}
            send({"id": 1, "method": "session/request_permission", "params": params})
            maybe_exit("permission")
        reply = request(
            "session/request_permission",
            {"sessionId": SESSION, "toolCall": call, "options": permission_options()},
        )
        notify_chunk(f"[permission: {json.dumps(reply.get('result', reply.get('error')))}]")
    if opt("fs"):
        codes = [
            request("fs/read_text_file", {"sessionId": SESSION, "path": opt("fs_read", "/etc/hostname")}),
            request(
                "fs/write_text_file", {"sessionId": SESSION, "path": opt("fs_write", "x.txt"), "content": "x"}
            ),
            request(
                "terminal/create",
                {"sessionId": SESSION, "command": "touch", "args": [opt("fs_touch", "y.txt")]},
            ),
        ]
        notify_chunk(" ".join(str(r.get("error", {}).get("code")) for r in codes))
    for n, kind in enumerate(filter(None, opt("tools", "").split(","))):
        call = {"toolCallId": f"t{n}", "title": f"{kind} tool call", "kind": kind, "status": "completed"}
        notify({"sessionUpdate": "tool_call", **call})
    if opt("failed_tool"):
        call = {"toolCallId": "f1", "title": opt("failed_tool"), "kind": "edit", "status": "in_progress"}
        notify({"sessionUpdate": "tool_call", **call, "locations": [{"path": "out.txt"}]})
        error = {"type": "content", "content": {"type": "text", "text": "EACCES: permission denied, out.txt"}}
        failed = {"toolCallId": "f1", "status": "failed", "content": [error]}
        notify({"sessionUpdate": "tool_call_update", **failed})
    if opt("lone_surrogate"):
        notify_chunk("x\ud800y")  # json.dumps writes the escape `\ud800`
    elif opt("echo_env"):
        notify_chunk(os.environ.get(opt("echo_env"), "<unset>"))
    elif opt("big"):
        notify_chunk(big_text(int(opt("big"))))
    elif opt("bulk"):
        total, size = int(opt("bulk")), int(opt("bulk_chunk", str(1 << 20)))
        for i in range(-(-total // size)):
            notify_chunk(bulk_piece(i, min(size, total - i * size), bool(opt("bulk_newlines"))))
    elif not opt("early"):
        stream_answer(prompt_text)
    if opt("forever"):
        while not cancelled.is_set() or opt("on_cancel") == "ignore":
            notify_chunk(".")
            time.sleep(float(opt("delay", "0.05")))
    stop = opt("stop", "end_turn")
    if cancelled.is_set() and opt("on_cancel", "honour") == "honour":
        stop = "cancelled"
    send({"id": rid, "result": {"stopReason": stop}})


def stream_answer(prompt_text: str) -> None:
    text = opt("text", "Hello from the scripted agent.").replace("{prompt}", prompt_text)
    n = max(1, int(opt("chunks", "1")))
    size = -(-len(text) // n) if text else 0
    pieces = [text[i * size : (i + 1) * size] for i in range(n)]
    for i, piece in enumerate(pieces):
        if cancelled.is_set() and opt("on_cancel", "honour") == "honour":
            return
        if opt("hidden"):
            notify_chunk(f"thinking {i}", kind="agent_thought_chunk")
            notify({"sessionUpdate": "plan", "entries": []})
            notify({"sessionUpdate": "tool_call", "toolCallId": f"c{i}", "title": "Read", "kind": "read"})
            notify({"sessionUpdate": "tool_call_update", "toolCallId": f"c{i}", "status": "completed"})
            notify(
                {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "image", "data": "AA==", "mimeType": "image/png"},
                }
            )
        if opt("foreign"):
            notify_chunk("FOREIGN", session="sess-other")
        notify_chunk(piece)
        if i == 0 and opt("deep"):
            depth = int(opt("deep"))
            with _write_lock:
                sys.stdout.buffer.write(b'{"jsonrpc": "2.0", "method": "x", "params": ' + b"[" * depth)
                sys.stdout.buffer.write(b"]" * depth + b"}\n")
                sys.stdout.buffer.flush()
        if i == 0:
            maybe_exit("prompt")
            if opt("close_stdout"):
                os.close(1)
                time.sleep(3600)
        if opt("delay"):
            time.sleep(float(opt("delay")))


def leave_a_daemon(how: str) -> None:
    """A grandchild that escapes our process group, as daemons and detached Node children do."""
    if os.fork() != 0:
        if how == "setsid":
            os.wait()  # the middle process exits at once: the grandchild is reparented
        return
    if how in ("setsid", "leaderless"):
        os.setsid()
        if os.fork() != 0:
            os._exit(0)
    else:
        os.setpgid(0, 0)
    with open(opt("daemon_pid"), "w") as f:
        f.write(str(os.getpid()))
    if how == "leaderless":
        import ctypes

        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        threading.Thread(target=time.sleep, args=(3600,)).start()
        ctypes.CDLL(None).pthread_exit(None)  # the process lives on in the other thread
    time.sleep(3600)
    os._exit(0)


def serve() -> None:
    if opt("read_parent_env"):
        with open(f"/proc/{os.getppid()}/environ", "rb") as source, open(opt("read_parent_env"), "wb") as f:
            f.write(source.read())
    if opt("daemon"):
        leave_a_daemon(opt("daemon"))
    if opt("env_dump"):
        with open(opt("env_dump"), "w") as f:
            json.dump({"env": dict(os.environ), "cwd": os.getcwd()}, f)
    if opt("ignore_term"):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    maybe_exit("start")
    threading.Thread(target=reader, daemon=True).start()
    while (message := _inbox.get()) is not None:
        method, rid, params = message["method"], message.get("id"), message.get("params") or {}
        if method == "initialize":
            maybe_exit("initialize")
            if opt("stderr_bytes"):
                line = "e" * 99 + ("\n" if opt("stderr_newlines", "1") != "0" else "e")
                block = line * 10_000  # about 1 MB at a time: the flood never sits in memory whole
                left = int(opt("stderr_bytes")) // 100
                while left > 0:
                    sys.stderr.write(block if left >= 10_000 else line * left)
                    left -= 10_000
            if opt("stderr"):
                sys.stderr.write(opt("stderr") + "\n")
            sys.stderr.flush()
            if opt("hang") == "initialize":
                continue
            if error := failure(method):
                send({"id": rid, "error": error})
                continue
            send({"id": rid, "result": initialize_result()})
        elif method == "session/new":
            if opt("hang") == "session/new":
                continue
            if error := failure(method):
                send({"id": rid, "error": error})
                continue
            if opt("early"):
                stream_answer("")
            if opt("early_bulk"):
                total = int(opt("early_bulk"))
                for i in range(-(-total // (1 << 20))):
                    notify_chunk(bulk_piece(i, min(1 << 20, total - i * (1 << 20)), False))
            send({"id": rid, "result": {"sessionId": SESSION, **session_offer()}})
        elif method in SETUP_METHODS:
            send({"id": rid, **SETUP_METHODS[method](params)})
        elif method == "session/prompt" and (error := failure(method)):
            send({"id": rid, "error": error})
        elif method == "session/prompt":
            text = "".join(b.get("text", "") for b in params.get("prompt", []))
            threading.Thread(target=answer_prompt, args=(rid, text), daemon=True).start()
        elif rid is not None:
            send({"id": rid, "error": {"code": -32601, "message": "Method not found"}})
    # stdin closed: a well-behaved agent exits; a stubborn one (ignore_term, linger) does not.
    if not (opt("close_stdin") or opt("ignore_term") or opt("linger")):
        sys.exit(0)
    time.sleep(3600)


# Session setup (issue 11): config options, modes, usage, auth methods, session/close ---------------

_config: list[dict[str, Any]] = []  # the config options, as last answered
_mode: dict[str, Any] = {}  # the modes, as last answered


def _parse_config(spec: str) -> list[dict[str, Any]]:
    options = []
    for part in filter(None, spec.split(";")):
        option_id, _, values = part.partition(":")
        option_id, _, named = option_id.partition("@")  # `id@category:...` names the category
        category = {"category": named or option_id} if (named or option_id) in ("mode", "model") else {}
        if values == "bool":
            options.append(
                {
                    "id": option_id,
                    "name": option_id.title(),
                    "type": "boolean",
                    "currentValue": False,
                    **category,
                }
            )
            continue
        choices = [{"value": v, "name": v.title()} for v in values.split("|")]
        options.append(
            {
                "id": option_id,
                "name": option_id.title(),
                "type": "select",
                "currentValue": choices[0]["value"],
                "options": choices,
                **category,
            }
        )
    return options


def initialize_result() -> dict[str, Any]:
    result: dict[str, Any] = {"protocolVersion": 1, "agentCapabilities": {}}
    if opt("can_close"):
        result["agentCapabilities"] = {"sessionCapabilities": {"close": {}}}
    if opt("agent_info"):
        name, title, version = opt("agent_info").split("/")
        result["agentInfo"] = {"name": name, "title": title, "version": version}
    methods = {
        "codex": [
            {"id": "chatgpt", "name": "Login with ChatGPT", "description": "Sign in with your account"},
            {
                "id": "api-key",
                "name": "Use CODEX_API_KEY",
                "type": "env_var",
                "vars": [{"name": "CODEX_API_KEY"}],
            },
            {"id": "tui", "name": "Log in in a terminal", "type": "terminal", "args": ["--login"]},
        ],
        "opencode": [
            {
                "id": "opencode-login",
                "name": "Login",
                "description": "Run `opencode auth login` in the terminal",
            }
        ],
    }
    if opt("auth_methods"):
        result["authMethods"] = methods[opt("auth_methods")]
    return result


def session_offer() -> dict[str, Any]:
    """What session/new offers beyond the id."""
    offer: dict[str, Any] = {}
    if opt("session_config"):
        _config[:] = _parse_config(opt("session_config"))
        offer["configOptions"] = _config
    if opt("session_modes"):
        modes = opt("session_modes").split("|")
        _mode.update(currentModeId=modes[0], availableModes=[{"id": m, "name": m.title()} for m in modes])
        offer["modes"] = _mode
    return offer


def set_config_option(params: dict[str, Any]) -> dict[str, Any]:
    for option in _config:
        if option["id"] == params.get("configId"):
            option["currentValue"] = params.get("value")
            if opt("config_update"):
                notify({"sessionUpdate": "config_option_update", "configOptions": _config})
            return {"result": {"configOptions": _config}}
    return {"error": {"code": -32602, "message": f"no option {params.get('configId')}"}}


def set_mode(params: dict[str, Any]) -> dict[str, Any]:
    _mode["currentModeId"] = params.get("modeId")
    notify({"sessionUpdate": "current_mode_update", "currentModeId": params.get("modeId")})
    return {"result": {}}


def close_session(params: dict[str, Any]) -> dict[str, Any]:
    if not opt("can_close"):
        return {"error": {"code": -32601, "message": "Method not found"}}
    cancelled.set()
    return {"result": {}}


SETUP_METHODS = {
    "session/set_config_option": set_config_option,
    "session/set_mode": set_mode,
    "session/close": close_session,
}


def current_mode() -> str | None:
    for option in _config:
        if option["id"] == "mode":
            return str(option["currentValue"])
    return _mode.get("currentModeId")


def asks_in_this_mode() -> bool:
    return bool(opt("ask_in_mode")) and current_mode() == opt("ask_in_mode")


def setup_at_prompt() -> None:
    if opt("usage"):
        used, size, *cost = opt("usage").split("/")
        if opt("usage_twice"):
            notify({"sessionUpdate": "usage_update", "used": int(used) // 2, "size": int(size)})
        update: dict[str, Any] = {"sessionUpdate": "usage_update", "used": int(used), "size": int(size)}
        if cost:
            update["cost"] = {"amount": float(cost[0]), "currency": cost[1]}
        notify(update)


def main() -> None:
    if opt("wrapper") or opt("orphan"):
        args = [a for a in sys.argv[1:] if not a.startswith(("wrapper=", "orphan="))]
        child = subprocess.Popen([sys.executable, __file__, *args])
        if opt("orphan"):
            os._exit(0)
        sys.exit(child.wait())
    serve()


if __name__ == "__main__":
    main()
