"""
SPADE's agent protocol on a cluster node, for regret sweeps played by a served model
(OpenAI-compatible chat completions): the same requests, byte for byte, as the workbench's agent
(core/models/agent.ts modelPlayer, core/models/client.ts ChatClient) and the same harness calls.
The texts and patterns come from native/spade_rules.py, generated from core/api/spadeRules.ts;
tool calls are read by spade_tool_calls.py. Every request is kept with its answer: the workbench
plays the episode back through its own agent and compares each request body with the one it
would send, so a difference shows as a diverged episode, never as a return.

Tool-use games (a non-empty get_tools()) take SPADE's tool path as agent.ts does: the observation
as the first message, the tools as `tools=`, `<answer>` to step, parsed tool calls to execute_tool
with their outputs back as `tool` messages, anything else to step raw.
"""
# Hints stay unevaluated: a cluster node's python may be older than the one mypy checks for.
from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.request
from typing import Any, Callable

from js_json import js_json
from spade_rules import BOXED_PATTERNS, FIRST_PROMPT_PREFIX, FIRST_PROMPT_SUFFIX, HINT_SEPARATOR, THINK_END
from spade_tool_calls import calls_to_send, has_answer

Json = dict[str, Any]
PATTERNS = [re.compile(p) for p in BOXED_PATTERNS]
RESET_ERROR_OBSERVATION = "Error during reset. Starting new game."


def step_stops(rec: Json) -> bool:
    """Where the rollout loop stops after a step (core/episodes/rollout.ts playPlan)."""
    if rec.get("error") or rec.get("shape") != "tuple5":
        return True
    sp = rec.get("spade")
    if isinstance(sp, dict):
        return bool(sp.get("terminated") or sp.get("truncated"))
    return rec.get("terminated") is True or rec.get("truncated") is True


def boxed_answer(text: str) -> str | None:
    """SPADE's boxed answer, stripped (core/episodes/extract.ts boxedAnswer)."""
    if not text:
        return None
    for p in PATTERNS:
        m = p.search(text)
        if m:
            return m.group(1).strip()
    at = text.rfind("\\boxed")
    start = text.find("{", at) if at >= 0 else -1
    if start < 0:
        return None
    depth = 0
    for i in range(start, len(text)):
        c = text[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                content = text[start + 1:i].strip()
                for _ in range(2):
                    if content.startswith("{") and content.endswith("}"):
                        content = content[1:-1].strip()
                return content
    return None


def extract_action(raw: str, thinking: bool) -> str:
    """The action SPADE sends for an agent text in a cognitive game (extract.ts extractAction)."""
    text = raw.split(THINK_END)[-1] if thinking else raw
    answer = boxed_answer(text)
    return "\\boxed{" + answer + "}" if answer else text.strip()


def calls_as_text(calls: list[Json]) -> str:
    """Structured tool calls as SPADE's text form (extract.ts toolCallsAsText)."""
    out = []
    for c in calls:
        fn = c.get("function") or {}
        args = fn.get("arguments")
        if args is None:
            args = {}
        name = fn.get("name", "")
        # An arguments string that json.loads reads goes in as it is (the model's own 1.0, its big
        # integers); one it refuses stays a JSON string, which SPADE's parser turns into {}.
        text = args if isinstance(args, str) and _reads_as_json(args) else js_json(args)
        out.append('<tool_call>{"name":' + js_json(name) + ',"arguments":' + text + "}</tool_call>")
    return "\n".join(out)


def _reads_as_json(text: str) -> bool:
    try:
        json.loads(text)
    except RecursionError:
        return True  # JSON nested past Python's stack is still JSON: the workbench reads it so (pythonJson.ts)
    except ValueError:
        return False
    return True


class ModelClient:
    """client.ts ChatClient's requests (JSON, not streamed): the same body, retries and limits."""

    def __init__(self, cfg: Json) -> None:
        self.cfg = cfg
        base = str(cfg["baseUrl"]).rstrip("/")
        self.url = base if base.endswith("/chat/completions") else base + "/chat/completions"
        key_env = cfg.get("apiKeyEnv")
        self.key = os.environ.get(key_env) if isinstance(key_env, str) else None

    def body(self, messages: list[Json], tools: list[Any]) -> str:
        c = self.cfg
        b: Json = {"model": c["model"], "messages": messages, "temperature": c["temperature"], "top_p": c["topP"]}
        if c.get("topK") is not None:
            b["top_k"] = c["topK"]
        b["max_tokens"] = c["maxTokens"]
        if tools:
            b["tools"] = tools
        if c.get("thinking") is not None:
            b["chat_template_kwargs"] = {"enable_thinking": c["thinking"]}
        return js_json(b)

    def once(self, body: str) -> tuple[int, str, str | None]:
        headers = {"content-type": "application/json"}
        if self.key:
            headers["authorization"] = "Bearer " + self.key
        req = urllib.request.Request(self.url, data=body.encode("utf8"), headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=float(self.cfg.get("turnTimeoutMs", 300000)) / 1000) as res:
                return res.status, res.read().decode("utf8", "replace"), None
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode("utf8", "replace"), e.headers.get("retry-after")

    def complete(self, messages: list[Json], tools: list[Any], sleep: Callable[[float], None] = time.sleep) -> Json:
        """One model turn: the request body and the final answer (or failure), after retries."""
        body = self.body(messages, tools)
        started = time.time()
        attempt = 0
        while True:
            attempt += 1
            try:
                status, text, retry_after = self.once(body)
                err: Json | None = None if 200 <= status < 300 else {"kind": "http", "status": status, "text": text}
            except TimeoutError:
                err = {"kind": "timeout", "status": None, "text": ""}
                status, text, retry_after = 0, "", None
            except (urllib.error.URLError, OSError) as e:
                err = {"kind": "network", "status": None, "text": str(getattr(e, "reason", e))}
                status, text, retry_after = 0, "", None
            retryable = err is not None and (err["kind"] == "network" or (err["kind"] == "http" and (status == 429 or status >= 500)))
            if not retryable or attempt > int(self.cfg.get("retries", 4)):
                x: Json = {"body": body, "attempts": attempt, "latencyMs": round((time.time() - started) * 1000)}
                if err is None:
                    x["response"] = text
                else:
                    x["error"] = err
                return x
            wait = None
            if retry_after:
                try:
                    wait = max(0.0, float(retry_after))
                except ValueError:
                    wait = None
            sleep(wait if wait is not None else min(30.0, 0.5 * 2 ** (attempt - 1)))


def completion_of(x: Json) -> Json | None:
    """The answer's message and finish reason, or None where the workbench's client fails the turn."""
    if "response" not in x:
        return None
    try:
        j = json.loads(x["response"])
        choice = j["choices"][0]
    except (ValueError, KeyError, IndexError, TypeError):
        return None
    m = choice.get("message") or {}
    return {"text": m.get("content") or "", "toolCalls": m.get("tool_calls") or [], "finishReason": choice.get("finish_reason")}


def tool_output(name: str, r: Json) -> str | None:
    """A tool call's output as session.ts tool() reads the reply; None where the session is gone."""
    if not r.get("ok"):
        err = r.get("error") or {}
        # unreadable_call: the host's session throws there (session.ts tool), and its episode fails
        if err.get("restarted") or err.get("kind") in ("crashed", "unknown_session", "protocol", "not_found", "snapshot_unsupported", "unreadable_call"):
            return None
        return "Error calling %s: %s" % (name, err.get("message", ""))
    out = (r.get("result") or {}).get("output")
    if isinstance(out, str):
        return out
    if out is None:
        return ""
    if isinstance(out, bool):
        return "true" if out else "false"
    return js_json(out) if isinstance(out, (int, float)) else str(out)


def play_model(call: Callable[[Json], Json], dead: Callable[[], bool], load: Json, item: Json, opts: Json) -> list[Json]:
    """agent.ts modelPlayer: the episode's harness calls through `call`; returns each model request with its answer."""
    client = ModelClient(opts["model"])
    budget = int(opts.get("budget", 30))
    hint = item.get("hintText")
    thinking = opts["model"].get("thinking") is True
    # Each step's state, as agent.ts modelPlayer records it with `states` (rollout.ts playPlan).
    states = opts.get("states") is True
    exchanges: list[Json] = []
    tools: Any = []
    if load.get("mayHaveTools") is not False:
        r = call({"cmd": "get_tools"})
        if dead():
            return exchanges
        v = r.get("result") if r.get("ok") else []
        tools = v if isinstance(v, list) else (v.get("tools") if isinstance(v, dict) and isinstance(v.get("tools"), list) else [])
    tool_use = len(tools) > 0
    r = call({"cmd": "reset", "seed": item["seed"]})
    if dead():
        return exchanges
    if states:
        call({"cmd": "state"})
        if dead():
            return exchanges
    res = r.get("result") if r.get("ok") else None
    obs = res["spade"]["observation"] if isinstance(res, dict) and isinstance(res.get("spade"), dict) else RESET_ERROR_OBSERVATION
    first = obs + HINT_SEPARATOR + hint if hint is not None else obs
    messages: list[Json] = [{"role": "user", "content": first if tool_use else FIRST_PROMPT_PREFIX + first + FIRST_PROMPT_SUFFIX}]
    for _ in range(budget):
        x = client.complete(messages, tools)
        exchanges.append(x)
        c = completion_of(x)
        if c is None:
            return exchanges
        text, calls = c["text"], c["toolCalls"]
        raw = text + ("\n" if text else "") + calls_as_text(calls) if calls else text
        messages.append({"role": "assistant", "content": text, "tool_calls": calls} if calls else {"role": "assistant", "content": text})
        if c["finishReason"] == "length" and (tool_use or hint is None):
            return exchanges
        parsed = [] if not tool_use or has_answer(raw) else calls_to_send(raw)
        if parsed:
            for i, pc in enumerate(parsed):
                # session.ts tool(): the block, which the harness reads with SPADE's parser (Python's values)
                out = tool_output(str(pc["name"]), call({"cmd": "tool", "block": pc["block"]}))
                if out is None or dead():
                    return exchanges
                cid = calls[i].get("id") if i < len(calls) and isinstance(calls[i], dict) else None
                messages.append({"role": "tool", "content": out, "tool_call_id": cid} if cid else {"role": "tool", "content": out})
            continue
        action = raw if tool_use else extract_action(raw, thinking and hint is None)
        r = call({"cmd": "play", "actions": [action], "reset": False, "stopWhenDone": True, "state": states})
        if not r.get("ok"):
            return exchanges
        got = (r.get("result") or {}).get("steps") or []
        if not got or step_stops(got[0]):
            return exchanges
        messages.append({"role": "user", "content": got[0]["spade"]["observation"]})
    return exchanges
