"""The reset-leak check: state an episode leaves behind that reset() does not clear, and the
source lines that grow it (found by reading the game's source, never by running it)."""

from __future__ import annotations

import json
import re

from judge_channel import StepFailed, clip
from judge_context import plain_obs, plays_ahead
from judge_play import get_solution, script_base, script_for, solution_fn
from typing import TYPE_CHECKING, Any, Iterator

if TYPE_CHECKING:
    from judge_channel import Env
    from judge_context import Audit


def _fields(audit: Audit, env: Env) -> Any:
    """The instance's state as the executor read it: attributes, module globals, and the shared
    state the reset-leak check also compares (audit_exec.fields, `shared`)."""
    return audit.value("fields", env=env.id, globals=env.globals, shared=True)


MUTATORS = frozenset(("append", "extend", "insert", "add", "update", "setdefault", "pop", "popitem", "remove", "discard", "clear", "appendleft", "extendleft", "sort", "reverse"))
SCOPE_ORDER = {"class": 0, "module": 1, "default": 2, "closure": 3, "instance": 4}
_HIDDEN_KEY = re.compile(r"^(default|closure) (.+)\.([^.\s]+)(?: #\d+)?$")


def leak_scope(key: str, class_name: str | None) -> Any:
    """Where a compared key lives: (scope, name, owner). Scopes: "instance" (self.x), "module"
    (global x), "class" (C.x; owner the class's qualified name), "default" (default F.p) and
    "closure" (closure F.v), whose owner is the function's qualified name."""
    if key.startswith("self."):
        return "instance", key[5:], class_name
    if key.startswith("global "):
        return "module", key[7:], None
    m = _HIDDEN_KEY.match(key)
    if m:
        return m.group(1), m.group(3), m.group(2)
    owner, _, name = key.rpartition(".")
    return "class", name, owner or class_name


def _subclasses(tree: Any, name: str) -> Any:
    """`name` and the classes of the source that derive from it (by the names in their bases)."""
    import ast

    bases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            bases[node.name] = {b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else None for b in node.bases}
    out, grew = {name}, True
    while grew:
        grew = False
        for c, bs in bases.items():
            if c not in out and bs & out:
                out.add(c)
                grew = True
    return out


def growth_sites(tree: Any, lines: list[str], scope: str, name: str, class_name: str | None, owner: Any=None) -> Any:
    """The lines that change a leaking value in place or rebind it, found in the game's source
    (parsed once, `tree`; `lines` its text) without running it. Each site is {line, method, text}.

    A change is a mutating method call (`x.append(...)`), an augmented assignment (`x += ...`), an
    item or attribute assignment or deletion (`x[k] = v`), on the value or on anything reached from
    it (`x["k"].update(...)`, `x.entries.setdefault(...)`), also through a local alias (`y = x;
    y.add(...)`); rebinding counts where it changes what is kept: `self.x = ...` outside __init__
    (where instance state starts), a global under `global`, a cell under `nonlocal`. Where the
    value is named: a class attribute as self./cls./type(self)./self.__class__. or by its class
    (or a subclass); a module global by name; a default argument by its parameter inside its
    function; a closure cell by its name inside the functions nested in the one that made it."""
    if scope == "class":
        classes = _subclasses(tree, owner.rsplit(".", 1)[-1]) if owner else set()
        return (_sites(tree, lines, scope, name, class_name, classes, None, False)
                # reached some other way (through another object holding the instance, say)
                or _sites(tree, lines, scope, name, class_name, classes, None, True))
    if scope == "closure":
        # The cell belongs to one of the functions enclosing the closure: the nearest first.
        parts = (owner or "").split(".<locals>.")
        for i in range(len(parts) - 1, 0, -1):
            found = _sites(tree, lines, scope, name, class_name, set(), ".<locals>.".join(parts[:i]), False)
            if found:
                return found
        return []
    return _sites(tree, lines, scope, name, class_name, set(), owner if scope == "default" else None, False)


def _sites(tree: Any, lines: list[str], scope: str, name: str, class_name: str | None, classes: Any, region: Any, loose: Any) -> Any:
    """growth_sites for one reading of the value; `region`: the qualified name of the function
    whose body (default) or nested functions (closure) alone can reach it."""
    import ast

    owners = {"self", "cls"} | ({class_name} if class_name else set()) | classes
    bare = scope in ("module", "default", "closure")  # the value is a plain name there
    scopes = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)

    def owner_expr(node: Any) -> Any:
        if isinstance(node, ast.Name):
            return node.id in owners
        if isinstance(node, ast.Attribute) and node.attr == "__class__":
            return isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type" and len(node.args) == 1:
            return isinstance(node.args[0], ast.Name) and node.args[0].id in ("self", "cls")
        return False

    def names_it(node: Any, ctx: Any) -> Any:
        if isinstance(node, ast.Name):
            return (bare and node.id == name) or node.id in ctx["aliases"]
        return not bare and isinstance(node, ast.Attribute) and node.attr == name and (loose or owner_expr(node.value))

    def reaches(node: Any, ctx: Any) -> Any:
        """The value itself, or something reached from it: its items, attributes, what its own
        methods return (`x.setdefault(k, [])`)."""
        while True:
            if names_it(node, ctx):
                return True
            if isinstance(node, (ast.Subscript, ast.Attribute)):
                node = node.value
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                node = node.func.value
            else:
                return False

    def target_hits(t: Any, ctx: Any, rebind: Any) -> Any:
        if isinstance(t, (ast.Tuple, ast.List)):
            return any(target_hits(x, ctx, rebind) for x in t.elts)
        if isinstance(t, ast.Starred):
            return target_hits(t.value, ctx, rebind)
        if isinstance(t, ast.Name):
            # A bare name is a local unless declared global/nonlocal; a parameter rebound leaves
            # its default as it was.
            return scope in ("module", "closure") and t.id == name and t.id in ctx["declared"]
        if isinstance(t, ast.Attribute) and names_it(t, ctx):
            return rebind
        return isinstance(t, (ast.Subscript, ast.Attribute)) and reaches(t.value, ctx)

    def own(fn: ast.AST) -> Iterator[Any]:
        """The nodes of a function's own body, not those of the functions and classes inside it."""
        todo = list(ast.iter_child_nodes(fn))
        while todo:
            node = todo.pop()
            yield node
            if not isinstance(node, scopes + (ast.ClassDef,)):
                todo.extend(ast.iter_child_nodes(node))

    def context(fn: ast.AST) -> Any:
        """A function's aliases of the value (`seen = self.seen_items`) and declared names."""
        ctx: dict[str, set[str]] = {"aliases": set(), "declared": set()}
        kind = ast.Global if scope == "module" else ast.Nonlocal if scope == "closure" else None
        for node in own(fn):
            if kind is not None and isinstance(node, kind):
                ctx["declared"].update(node.names)
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and not (bare and node.targets[0].id == name):
                v = node.value
                while isinstance(v, ast.Subscript):
                    v = v.value
                if names_it(v, ctx):
                    ctx["aliases"].add(node.targets[0].id)
        return ctx

    sites = []
    # where: 0 outside the region, 1 in the region function's own body, 2 nested inside it
    inside = 2 if region is None else 0
    counts = 1 if scope == "default" else 2

    def visit(node: Any, method: Any, qual: Any, ctx: Any, where: Any) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, scopes):
                fname = "<lambda>" if isinstance(child, ast.Lambda) else child.name
                q = f"{qual}.{fname}" if qual else fname
                w = 2 if where else (1 if q == region else 0)
                visit(child, method if isinstance(child, ast.Lambda) else child.name, q + ".<locals>", context(child), w)
                continue
            if isinstance(child, ast.ClassDef):
                visit(child, method, f"{qual}.{child.name}" if qual else child.name, ctx, where)
                continue
            hit = False
            if where >= counts and method is not None:
                if isinstance(child, ast.AugAssign):
                    hit = target_hits(child.target, ctx, True) or (scope == "default" and isinstance(child.target, ast.Name) and child.target.id == name)
                elif not (scope == "instance" and method == "__init__") and isinstance(child, (ast.Assign, ast.AnnAssign, ast.Delete)):
                    targets = child.targets if isinstance(child, (ast.Assign, ast.Delete)) else [child.target]
                    hit = any(target_hits(t, ctx, not bare) for t in targets)
                elif isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute) and child.func.attr in MUTATORS:
                    hit = reaches(child.func.value, ctx)
            if hit:
                ln = child.lineno  # type: ignore[attr-defined]
                sites.append({"line": ln, "method": method, "text": clip(lines[ln - 1].strip(), 160) if 0 < ln <= len(lines) else ""})
            visit(child, method, qual, ctx, where)

    visit(tree, None, "", {"aliases": set(), "declared": set()}, inside)
    seen, out = set(), []
    for site in sorted(sites, key=lambda x: x["line"]):
        if site["line"] not in seen:
            seen.add(site["line"])
            out.append(site)
    return out


def name_leak(audit: Audit, differing: list[str], links: Any=None) -> Any:
    """The leaking state to name (shared state first: it is what every instance inherits) and
    the lines that change it. `links` (exec_alias.op_links): instance attributes that are an object
    a module global holds; a global named through one also gets that attribute's lines, first."""
    import ast

    try:
        tree = ast.parse(audit.source)
    except SyntaxError:
        tree = None
    lines = audit.source.split("\n")
    best = None
    for key in differing:
        scope, name, owner = leak_scope(key, audit.class_name)
        sites = growth_sites(tree, lines, scope, name, audit.class_name, owner) if tree is not None else []
        rank = (0 if sites else 1, SCOPE_ORDER[scope])
        if best is None or rank < best[0]:
            best = (rank, key, scope, sites)
    if best is None:
        return {}
    _rank, key, scope, sites = best
    via = [x for x in links or [] if isinstance(x, list) and len(x) == 3 and x[1] == key and isinstance(x[0], str) and x[0].startswith("self.")]
    if via and tree is not None:
        # The global changes through an instance attribute that is the same object: those lines
        # (self.cards.remove(...)) are the ones that change it, before the global's own.
        attr = via[0][0]
        rebind = re.compile(rf"^self\.{re.escape(attr[5:])}\s*(:[^=]*)?=(?!=)")
        # Rebinding the attribute points it elsewhere; only changes in place reach the global.
        own = [x for x in growth_sites(tree, lines, "instance", attr[5:], audit.class_name, audit.class_name) if not rebind.match(x["text"])]
        seen = {x["line"] for x in own}
        sites = own + [x for x in sites if x["line"] not in seen]
        return {"attribute": key, "scope": scope, "sites": sites[:5], "sharedWith": f"{attr} is {via[0][2]}"}
    return {"attribute": key, "scope": scope, "sites": sites[:5]}


def _shape(text: str) -> Any:
    """What of a compared value does not depend on which items a fresh instance drew: its
    containers' sizes and its scalars' types (the executor's JSON text, read back)."""
    try:
        v = json.loads(text)
    except Exception:
        return "text"

    def sh(x: Any) -> Any:
        if isinstance(x, list):
            return "[" + ",".join(sh(y) for y in x) + "]"
        if isinstance(x, dict):
            return "{" + ",".join(sorted(sh(y) for y in x.values())) + "}"
        return type(x).__name__

    return sh(v)


def check_reset_leak(audit: Audit) -> None:
    audit.played_ahead(_reset_leak)


def _solution_actions(audit: Audit, env: Env) -> list[str] | None:
    """solution()'s actions from the current state, or None where the game has none."""
    if solution_fn(audit, env) is None:
        return None
    return get_solution(audit, env, None)


def _wrong_actions(audit: Audit, first_obs: Any, own: list[str] | None) -> list[str]:
    """Actions that change a game's state without winning it, to play before the leak check's
    second reset (issue 46: a wrong guess removed a card from a deck cached at module level, and
    the solution alone, one right guess, never did). Another seed's solution first (a legal move,
    most likely wrong for this seed: it exercises the paths a miss takes), then the words and
    numbers of the first observation, then the fixed script's probes; none that the solution of
    this very seed starts with."""
    other = audit.fresh()
    theirs: list[str] = []
    for s in OTHER_SEEDS:
        audit.reset(other, s, preseed=True)
        sol = _solution_actions(audit, other)
        if not sol:
            break
        theirs += [a for a in sol if a not in (own or [])][:2]
        if len(theirs) >= 2:
            break
    words: list[str] = []
    if not audit.tool_use:
        for w in re.findall(r"[A-Za-z0-9]+", first_obs if isinstance(first_obs, str) else ""):
            if w not in words:
                words.append(w)
        words = ["\\boxed{" + w + "}" for w in words[:MAX_WORDS]]
    mine = set(own or [])
    out: list[str] = []
    for a in list(theirs) + words + script_base(audit):
        if isinstance(a, str) and a not in mine and a not in out:
            out.append(a)
    return out


OTHER_SEEDS = (4, 6, 9)  # two seeds may share an answer: up to three are asked
MAX_WORDS = 8


def _play_episode(audit: Audit, env: Env, seed: int, acts: list[str]) -> list[str]:
    """One episode on `env` from reset(seed) (random seeded first), up to its end; the actions played."""
    answers = audit.episodes(env, [{"actions": acts, "stop": True}])[0].get("steps", [])
    played: list[Any] = []
    for i, a in enumerate(acts):
        try:
            _o, _r, te, tr = audit.step(env, a, seed, played, tagged=answers[i] if i < len(answers) else None)
        except StepFailed:
            break  # crash-on-action reports crashes; here only the state left behind matters
        played.append(a)
        if te or tr:
            break
    return played


@plays_ahead
def _reset_leak(audit: Audit) -> Any:
    first_seed, seed = 3, 5

    def snapshot_fresh() -> Any:
        env = audit.fresh()
        obs, _ = audit.reset(env, seed, preseed=True)
        return plain_obs(obs), _fields(audit, env)

    ref_obs, ref = snapshot_fresh()
    ref2_obs, ref2 = snapshot_fresh()
    stable = {k for k in ref if ref2.get(k) == ref[k]}

    def compared(env: Env) -> Any:
        """reset(seed) after an episode: what differs from a fresh instance's, the observation, the state."""
        obs, _ = audit.reset(env, seed, preseed=True)
        after = _fields(audit, env)
        differing = sorted(k for k in stable if after.get(k) != ref[k])
        differing += sorted(k for k in after if k not in ref and k.startswith("self."))
        if audit.tool_use and "_call_history" not in audit.source:
            # SPADE's base class appends every tool call to _call_history and never clears it; a game
            # that never reads it behaves the same, so that is not this game's leak.
            differing = [k for k in differing if k != "self._call_history"]
        return differing, obs, after

    env = audit.fresh()
    audit.reset(env, first_seed, preseed=True)
    own = _solution_actions(audit, env)
    acts = own or script_for(audit, env, audit.turns(env))
    played = _play_episode(audit, env, first_seed, acts[: audit.turns(env) + 2])
    differing, obs, after = compared(env)
    obs_differs = ref_obs == ref2_obs and plain_obs(obs) != ref_obs
    tried = 0
    if not (differing or obs_differs):
        # The solution left nothing behind: the moves that change state without winning, on a
        # fresh instance of their own, so that the evidence replays as one episode.
        wrong = _wrong_actions(audit, ref_obs, own)
        if wrong:
            env = audit.fresh()
            audit.reset(env, first_seed, preseed=True)
            played = _play_episode(audit, env, first_seed, wrong[: audit.turns(env) + 2])
            tried = len(played)
            differing, obs, after = compared(env)
            obs_differs = ref_obs == ref2_obs and plain_obs(obs) != ref_obs
    if differing or obs_differs:
        # State two fresh instances already disagree on (drawn unseeded in __init__, say) cannot
        # be compared by value; where it agrees in size and the episode changed its size, it is
        # named too. It only names a leak the comparisons above found, never makes one.
        unstable = sorted(k for k in ref if k not in stable and k in ref2 and k in after and k not in differing)
        differing += [k for k in unstable if _shape(ref[k]) == _shape(ref2[k]) != _shape(after[k])]
        names = ", ".join(differing) if differing else "(no attribute; the observation differs)"
        named = name_leak(audit, differing, audit.value("links", env=env.id) if any(k.startswith("global ") for k in differing) else None)
        sites = named.get("sites") or []
        where = f"; {sites[0]['text']} (line {sites[0]['line']}, in {sites[0]['method']}) grows it" if sites else ""
        return audit.put(
            "reset-leak", "fail", f"State leaks across reset: {names}{where}", seed=first_seed, actions=played, resetSeed=seed,
            attributes=differing, expected={k: clip(ref.get(k, "(absent)"), 200) for k in differing[:10]} if differing else clip(ref_obs),
            observed={k: clip(after.get(k, "(absent)"), 200) for k in differing[:10]} if differing else clip(plain_obs(obs)),
            line=sites[0]["line"] if sites else audit.line_of("reset"), **{k: v for k, v in named.items() if k != "sites"}, **({"growth": sites} if sites else {}))
    also = f"; so does it after {tried} action(s) that do not win" if tried else ""
    audit.put("reset-leak", "pass", f"After an episode, reset(seed={seed}) matches a fresh instance ({len(stable)} attributes compared){also}", seed=seed)
