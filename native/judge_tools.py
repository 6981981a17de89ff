"""Tool-use checks (docs/spade-formats.md section 4)."""

from __future__ import annotations

from judge_channel import Hang, LoadError, clip
from judge_context import plain_obs, is_win
from judge_play import get_solution, rollout_turn, solution_fn
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from judge_channel import Env
    from judge_context import Audit


JSON_TYPES = {"string", "number", "integer", "boolean", "array", "object", "null"}


def _schema_problem(schema: Any, path: str="parameters") -> Any:
    if not isinstance(schema, dict):
        return f"{path} is not an object"
    t = schema.get("type")
    ts = t if isinstance(t, list) else [t] if t is not None else []
    if t is not None and (not ts or any(x not in JSON_TYPES for x in ts)):
        return f"{path}.type {t!r} is not a JSON Schema type"
    props = schema.get("properties")
    if props is not None:
        if not isinstance(props, dict):
            return f"{path}.properties is not an object"
        for k, v in props.items():
            p = _schema_problem(v, f"{path}.properties.{k}")
            if p:
                return p
    req = schema.get("required")
    if req is not None:
        if not isinstance(req, list) or not all(isinstance(r, str) for r in req):
            return f"{path}.required is not a list of names"
        missing = [r for r in req if not isinstance(props, dict) or r not in props]
        if missing:
            return f"{path}.required names {missing} that are not in properties"
    if "items" in schema:
        return _schema_problem(schema["items"], f"{path}.items")
    if "enum" in schema and not isinstance(schema["enum"], list):
        return f"{path}.enum is not a list"
    return None


def tool_checks(audit: Audit, env: Env) -> None:
    audit.reset(env, 0)
    tools = audit.value("attr", env=env.id, name="_tools")
    if not isinstance(tools, dict) or not tools:
        audit.put("tool.schema", "fail", "reset() leaves self._tools empty or not a dict", seed=0, observed=audit.harness.type_name(tools), line=audit.line_of("reset"))
        for c in ("tool.methods", "tool.params"):
            audit.put(c, "skip", "No tools to check")
    else:
        bad = []
        for name, spec in tools.items():
            if not isinstance(spec, dict) or not isinstance(spec.get("description", ""), str):
                bad.append((name, "entry must be {description: str, parameters: schema}"))
                continue
            params = spec.get("parameters", {"type": "object", "properties": {}})
            p = _schema_problem(params)
            if p is None and params.get("type") not in (None, "object"):
                p = "parameters.type must be 'object'"
            if p:
                bad.append((name, p))
        if bad:
            audit.put("tool.schema", "fail", f"Invalid tool schema for {bad[0][0]}: {bad[0][1]}", seed=0, observed=[f"{n}: {p}" for n, p in bad[:10]], line=audit.line_of("reset"))
        else:
            audit.put("tool.schema", "pass", f"{len(tools)} tool schemas are valid", seed=0)
        methods = audit.value("tool_methods", env=env.id, names=[str(n) for n in tools])
        missing = [n for n in tools if not methods[str(n)]["callable"]]
        if missing:
            audit.put("tool.methods", "fail", f"No method for tool(s): {', '.join('tool_' + n for n in missing)}", observed=missing, line=audit.line_of("reset"))
        else:
            audit.put("tool.methods", "pass", "Every tool has its tool_<name> method")
        mism = []
        for n, spec in tools.items():
            m = methods[str(n)]
            if not m["callable"] or not isinstance(spec, dict) or m.get("params") is None:
                continue
            ps = m["params"]  # [name, kind, required]
            if any(kind == "VAR_KEYWORD" for _, kind, _ in ps):
                continue
            named = ("POSITIONAL_OR_KEYWORD", "KEYWORD_ONLY")
            accepted = {p for p, kind, _ in ps if kind in named}
            needed = {p for p, kind, req in ps if kind in named and req}
            props = set(((spec.get("parameters") or {}).get("properties") or {}).keys()) if isinstance(spec.get("parameters"), dict) else set()
            extra, lacking = sorted(props - accepted), sorted(needed - props)
            if extra or lacking:
                mism.append({"tool": n, "schemaOnly": extra, "methodOnly": lacking, "line": m.get("line")})
        if mism:
            m = mism[0]
            audit.put("tool.params", "fail", f"tool_{m['tool']}: schema parameters {m['schemaOnly']} vs method keywords {m['methodOnly']} do not match (every call fails)",
                  expected=m["methodOnly"], observed=m["schemaOnly"], line=m["line"], mismatches=mism)
        else:
            audit.put("tool.params", "pass", "Schema parameter names match the methods' keywords")

    crit_errors: dict[int, list[Any]] = {}
    true_at_reset: dict[int, list[Any]] = {}
    have_criteria = False
    for seed in (0, 1, 2):
        audit.reset(env, seed)
        results = audit.value("criteria", env=env.id, limit=audit.call_limit)
        if not results:
            continue
        have_criteria = True
        for i, r in enumerate(results):
            if "hang" in r:
                raise Hang("criterion", None, seed, audit.call_limit)
            if "raise" in r:
                crit_errors.setdefault(i, []).append((seed, r["raise"]))
                continue
            if "load" in r:
                raise LoadError(r["load"].get("stage"), r["load"].get("message", ""))
            if r.get("v"):
                true_at_reset.setdefault(i, []).append(seed)
    if not have_criteria:
        audit.put("tool.reset_gate", "skip", "No _message_criteria (single-answer tool use)")
        audit.put("tool.criteria_at_reset", "skip", "No _message_criteria")
    else:
        always = [i for i, errs in crit_errors.items() if len(errs) == 3]
        if always:
            i = always[0]
            info = crit_errors[i][0][1]
            audit.put("tool.reset_gate", "fail", f"Criterion {i} raises at reset for seeds 0, 1, 2 (SPADE's reset gate rejects)", seed=[0, 1, 2], observed=f"{info.get('type')}: {clip(info.get('message', ''), 200)}", line=info.get("line"), traceback=clip(info.get("traceback", ""), 3000))
        elif crit_errors:
            i = next(iter(crit_errors))
            audit.put("tool.reset_gate", "warn", f"Criterion {i} raises at reset for some seeds", seed=[s for s, _ in crit_errors[i]])
        else:
            audit.put("tool.reset_gate", "pass", "No criterion raises at reset (seeds 0, 1, 2)")
        if true_at_reset:
            i = next(iter(true_at_reset))
            audit.put("tool.criteria_at_reset", "fail" if i == 0 else "warn", f"Criterion {i} is already satisfied at reset", seed=true_at_reset[i], observed=sorted(true_at_reset))
        else:
            audit.put("tool.criteria_at_reset", "pass", "No criterion is satisfied at reset")

    seed = 0
    audit.reset(env, seed)
    acts = get_solution(audit, env, seed) if solution_fn(audit, env) is not None else None
    how = "solution()"
    if not acts:
        how = "the expected answer"
        acts = [f"<answer>{audit.value('attr', env=env.id, name='_expected_answer')}</answer>"]
    played: list[str] = []
    last: Any = None
    for a in acts[: 200]:
        last = rollout_turn(audit, env, a, seed, played)
        played.append(a)
        if last[2] or last[3]:
            break
    if last and is_win(last[1], last[2]):
        audit.put("tool.done_reachable", "pass", f"Playing {how} finishes the task", seed=seed)
    else:
        audit.put("tool.done_reachable", "fail", f"Playing {how} does not finish the task", seed=seed, actions=[clip(a, 200) for a in played],
              expected="terminated with reward > 0", observed=None if last is None else f"obs={clip(plain_obs(last[0]), 300)!r} reward={last[1]}")
