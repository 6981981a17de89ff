"""SPADE's designer texts, read at run time from a SPADE checkout the user points to.

Trusted helper work (the user's own checkout), run as a plain `python3 -I -S` child by
core/design/spadeCheckout.ts: one JSON request on stdin, one JSON answer on stdout. Nothing of
SPADE's text is kept in the workbench's tree; every text comes from the files named below.

SPADE's modules are never imported (spade/core/__init__ and game_generator pull heavy deps):
- literal constants (system prompts, COGNITIVE_SKILLS, hint and validator prompts) are taken from
  the file's syntax tree with ast.literal_eval;
- the prompt builders (generate_corpus_grounded_prompt, generate_multiturn_game_generation_prompt,
  generate_tool_use_prompt[_multiturn]) and the corpus loader are SPADE's own functions: their file
  is compiled from its syntax tree and run in a namespace whose `import` answers only the standard
  modules they name; `random` is a seeded stand-in, so a preview and the round draw the same
  examples, domain and task type (SPADE draws them from the process's unseeded `random`).
"""
import ast
import json
import os
import random
import sys
import typing
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

TEMPLATE = "spade/core/prompts/template.py"
CORPUS_TEMPLATE = "spade/core/prompts/corpus_template.py"
TOOL_USE_TEMPLATE = "spade/core/prompts/tool_use_template.py"
GAME_GENERATOR = "spade/core/game_generator.py"
HINT_GENERATOR = "spade/core/hint_generator.py"
ENV_VALIDATOR = "spade/core/env_validator.py"
CORPUS = "spade/core/corpus.py"
ORCHESTRATOR = "spade/core/orchestrator.py"
ENV_MEMORY = "spade/core/env_memory.py"


class CheckoutError(Exception):
    """A checkout that is missing, moved a file, or lacks a constant or function we read."""


class SeededRandom(random.Random):
    """`import random as _rng` inside SPADE's prompt builders: a seeded instance, with `Random` for corpus.py."""

    Random = random.Random


def read_source(src: str, rel: str) -> str:
    path = Path(src) / rel
    if not path.is_file():
        raise CheckoutError(f"The SPADE checkout {src} has no {rel} (moved or renamed in this SPADE version?)")
    return path.read_text(encoding="utf-8")


def parse(src: str, rel: str) -> ast.Module:
    try:
        return ast.parse(read_source(src, rel), filename=rel)
    except SyntaxError as e:
        raise CheckoutError(f"{rel} in the SPADE checkout {src} does not parse: {e.msg} (line {e.lineno})") from None


def literal(src: str, rel: str, name: str, in_class: Optional[str] = None) -> Any:
    """The value of `name = <literal>` at module level (or in class `in_class`) of a checkout file."""
    body: List[ast.stmt] = parse(src, rel).body
    if in_class is not None:
        cls = [n for n in body if isinstance(n, ast.ClassDef) and n.name == in_class]
        if not cls:
            raise CheckoutError(f"{rel} in the SPADE checkout {src} defines no class {in_class}")
        body = cls[0].body
    for node in body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            try:
                return ast.literal_eval(value)
            except ValueError:
                raise CheckoutError(f"{name} in {rel} (line {node.lineno}) is not a plain literal; the workbench reads it without running SPADE") from None
    where = f"class {in_class} in {rel}" if in_class else rel
    raise CheckoutError(f"{where} in the SPADE checkout {src} defines no {name}")


def text(src: str, rel: str, name: str, in_class: Optional[str] = None) -> str:
    v = literal(src, rel, name, in_class)
    if not isinstance(v, str) or not v.strip():
        raise CheckoutError(f"{name} in {rel} is not a text (got {type(v).__name__})")
    return v


ALLOWED_IMPORTS = ("typing", "re", "json", "logging", "dataclasses", "pathlib")


def load_module(src: str, rel: str, rng: SeededRandom) -> Dict[str, Any]:
    """A checkout file run from its syntax tree with only standard imports; `random` is `rng`."""
    return load_module_nodes(src, rel, parse(src, rel).body, rng)


def load_module_nodes(src: str, rel: str, nodes: List[ast.stmt], rng: Optional[SeededRandom] = None) -> Dict[str, Any]:
    """Only these top-level nodes of a checkout file (a function taken out of a module that imports heavy deps)."""
    tree = ast.Module(body=nodes, type_ignores=[])
    rng = rng or SeededRandom(0)
    real_import = __import__

    def guarded(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
        if level == 0 and name == "random":
            return rng
        if level == 0 and name == "os":
            # get_env_gen_prompt_fn reads os.environ; the workbench chooses the builder itself.
            return type("os", (), {"environ": {}})
        if level == 0 and name.split(".")[0] in ALLOWED_IMPORTS:
            return real_import(name, globals, locals, fromlist, level)
        raise CheckoutError(f"{rel} imports {name}, which the workbench does not load from a checkout (SPADE's prompt files use the standard library only)")

    import builtins

    ns: Dict[str, Any] = {"__name__": f"spade_checkout_{Path(rel).stem}", "__builtins__": {**vars(builtins), "__import__": guarded}}
    exec(compile(tree, str(Path(src) / rel), "exec"), ns)
    return ns


def function(ns: Dict[str, Any], rel: str, name: str) -> Callable[..., Any]:
    fn = ns.get(name)
    if not callable(fn):
        raise CheckoutError(f"{rel} in the SPADE checkout defines no function {name}")
    return typing.cast(Callable[..., Any], fn)


def skill_descriptions(skills: Any, rel: str) -> Dict[str, str]:
    if not isinstance(skills, dict):
        raise CheckoutError(f"The skills table in {rel} is not a dict")
    return {str(k): str(v.get("description", k)) if isinstance(v, dict) else str(k) for k, v in skills.items()}


def texts(src: str) -> Dict[str, Any]:
    """Every text the designer side uses, with where it came from."""
    tool_use = load_module(src, TOOL_USE_TEMPLATE, SeededRandom(0))
    return {
        "systemPrompt": text(src, TEMPLATE, "MULTITURN_GAME_GENERATION_SYSTEM_PROMPT"),
        "skills": skill_descriptions(literal(src, GAME_GENERATOR, "COGNITIVE_SKILLS", "SyntheticGameGenerator"), GAME_GENERATOR),
        "toolUseSkills": skill_descriptions(tool_use.get("TOOL_USE_SKILLS"), TOOL_USE_TEMPLATE),
        "hint": {"cognitive": text(src, HINT_GENERATOR, "HINT_SYSTEM_PROMPT"), "toolUse": text(src, HINT_GENERATOR, "TOOL_USE_HINT_SYSTEM_PROMPT")},
        "validator": {
            "cognitive": {"system": text(src, ENV_VALIDATOR, "ENV_VALIDATION_SYSTEM_PROMPT"), "template": text(src, ENV_VALIDATOR, "ENV_VALIDATION_PROMPT_TEMPLATE")},
            "toolUse": {"system": text(src, ENV_VALIDATOR, "TOOL_USE_ENV_VALIDATION_SYSTEM_PROMPT"), "template": text(src, ENV_VALIDATOR, "TOOL_USE_ENV_VALIDATION_PROMPT_TEMPLATE")},
        },
        "files": [TEMPLATE, CORPUS_TEMPLATE, TOOL_USE_TEMPLATE, GAME_GENERATOR, HINT_GENERATOR, ENV_VALIDATOR, CORPUS],
    }


# Which SPADE function builds a prompt, by kind (the builder's file, its name):
BUILDERS = {
    # corpus_orchestrator.py:102 (a cognitive skill with a corpus document)
    "corpus": (CORPUS_TEMPLATE, "generate_corpus_grounded_prompt"),
    # orchestrator.py:1240-1244 (cognitive, qwen3_multiturn_game_generation, no corpus)
    "multiturn": (TEMPLATE, "generate_multiturn_game_generation_prompt"),
    # tool_use_template.py:757-767 with SPADE_MULTITURN_ENV_GEN=1, as cmd/tool_use/train_spade_4b.sh:182 sets it
    "tool_use_multiturn": (TOOL_USE_TEMPLATE, "generate_tool_use_prompt_multiturn"),
    # tool_use_template.py:104 (SPADE_MULTITURN_ENV_GEN unset)
    "tool_use": (TOOL_USE_TEMPLATE, "generate_tool_use_prompt"),
}


def build_prompt(src: str, req: Dict[str, Any]) -> Dict[str, Any]:
    kind = str(req.get("kind"))
    if kind not in BUILDERS:
        raise CheckoutError(f"Unknown prompt kind {kind}")
    rel, name = BUILDERS[kind]
    rng = SeededRandom(int(req.get("seed", 0)))
    ns = load_module(src, rel, rng)
    fn = function(ns, rel, name)
    skill = str(req["skill"])
    difficulty = str(req["difficulty"])
    document = str(req.get("document") or "")
    if kind.startswith("tool_use"):
        table = ns.get("TOOL_USE_SKILLS")
        if not isinstance(table, dict) or skill not in table:
            raise CheckoutError(f"TOOL_USE_SKILLS in {TOOL_USE_TEMPLATE} has no skill {skill}")
        body = fn(skill, table[skill], difficulty, document)
    else:
        skills = literal(src, GAME_GENERATOR, "COGNITIVE_SKILLS", "SyntheticGameGenerator")
        if not isinstance(skills, dict) or skill not in skills:
            raise CheckoutError(f"SyntheticGameGenerator.COGNITIVE_SKILLS in {GAME_GENERATOR} has no skill {skill}")
        body = fn(skill, skills[skill], difficulty, document) if kind == "corpus" else fn(skill, skills[skill], difficulty, max_turns=int(req.get("maxTurns", 20)))
    if not isinstance(body, str):
        raise CheckoutError(f"{name} in {rel} returned {type(body).__name__}, not a prompt")
    seeds = req.get("seeds")
    if isinstance(seeds, dict):
        body = augment(src, body, skill, seeds)
    return {"body": body, "builder": f"{rel}:{name}"}


def augment(src: str, body: str, skill: str, seeds: Dict[str, Any]) -> str:
    """SPADE's memory appendix on `body`: SpadeOrchestrator._augment_prompt_with_memory
    (orchestrator.py:1204-1228) run alone from its syntax tree, over EnvironmentMemory's own
    format_seeds_for_prompt / format_negative_examples (env_memory.py:125-151) and the seeds the
    workbench drew as SPADE draws them (core/design/seeds.ts): positives, then negatives."""
    fns = [n for c in parse(src, ORCHESTRATOR).body if isinstance(c, ast.ClassDef) for n in c.body if isinstance(n, ast.FunctionDef) and n.name == "_augment_prompt_with_memory"]
    if not fns:
        raise CheckoutError(f"{ORCHESTRATOR} in the SPADE checkout {src} defines no _augment_prompt_with_memory")
    found = load_module(src, ENV_MEMORY, SeededRandom(0)).get("EnvironmentMemory")
    if not isinstance(found, type):
        raise CheckoutError(f"{ENV_MEMORY} in the SPADE checkout {src} defines no EnvironmentMemory")
    memory_cls: Any = found
    ns = load_module_nodes(src, ORCHESTRATOR, [fns[0]])

    def record(r: Dict[str, Any]) -> Any:
        num = lambda v: float("nan") if v is None else float(v)  # noqa: E731 - a number SPADE formats with :.2f
        return type("EnvironmentRecord", (), {"game_file": f"{r['name']}.py", "skill": r.get("skill"), "code_snippet": r["snippet"], "actor_win_rate": num(r.get("winRate")), "regret": num(r.get("regret"))})()

    positives = [record(r) for r in seeds.get("positives", [])]
    negatives = [record(r) for r in seeds.get("negatives", [])]

    class Memory:
        def __len__(self) -> int:
            return 1 + len(positives) + len(negatives)

        def high_regret_seeds(self, n: int = 2, skill: Optional[str] = None) -> List[Any]:
            return positives

        def low_quality_examples(self, n: int = 1, skill: Optional[str] = None) -> List[Any]:
            return negatives

        def format_seeds_for_prompt(self, s: List[Any]) -> str:
            return str(memory_cls.format_seeds_for_prompt(self, s))

        def format_negative_examples(self, s: List[Any]) -> str:
            return str(memory_cls.format_negative_examples(self, s))

    owner = type("SpadeOrchestrator", (), {"env_memory": Memory()})()
    out = function(ns, ORCHESTRATOR, "_augment_prompt_with_memory")(owner, body, skill)
    if not isinstance(out, str):
        raise CheckoutError(f"_augment_prompt_with_memory in {ORCHESTRATOR} returned {type(out).__name__}, not a prompt")
    return out


def corpus(src: str, req: Dict[str, Any]) -> Dict[str, Any]:
    """SPADE's CorpusLoader from the checkout: load (truncating by words), then `draws` samples of one in order."""
    ns = load_module(src, CORPUS, SeededRandom(0))
    loader_cls = ns.get("CorpusLoader")
    if not isinstance(loader_cls, type):
        raise CheckoutError(f"{CORPUS} in the SPADE checkout defines no CorpusLoader")
    path = str(req["path"])
    if not os.path.isfile(path):
        raise CheckoutError(f"The corpus file {path} does not exist or is not a file")
    loader = loader_cls(path, max_doc_tokens=int(req["maxDocTokens"]), seed=int(req["seed"]))
    try:
        loaded = int(loader.load())
    except UnicodeDecodeError as e:
        raise CheckoutError(f"The corpus file {path} is not UTF-8 text ({e.reason} at byte {e.start}); SPADE reads it as UTF-8 JSONL") from None
    if loaded == 0:
        raise CheckoutError(f"The corpus file {path} has no document: SPADE's format is JSONL, one object a line with a non-empty \"orig_doc\" or \"text\"")
    docs = []
    for _ in range(int(req["draws"])):
        d = loader.sample(1)[0]
        # A kept text longer than the limit is one SPADE cut and marked (corpus.py _truncate).
        truncated = len(str(d.text).split()) > int(req["maxDocTokens"])
        docs.append({"docId": int(d.doc_id), "text": str(d.text), "truncated": truncated})
    return {"loaded": loaded, "docs": docs}


def main() -> None:
    try:
        req = json.loads(sys.stdin.read())
        src = str(req["src"])
        if not os.path.isdir(src):
            raise CheckoutError(f"The SPADE checkout {src} is not a folder")
        if not os.path.isfile(os.path.join(src, TEMPLATE)):
            raise CheckoutError(f"{src} does not look like a SPADE checkout: it has no {TEMPLATE}")
        cmd = req.get("cmd")
        if cmd == "texts":
            result: Any = texts(src)
        elif cmd == "prompt":
            result = build_prompt(src, req)
        elif cmd == "corpus":
            result = corpus(src, req)
        else:
            raise CheckoutError(f"Unknown command {cmd}")
        sys.stdout.write(json.dumps({"ok": True, "result": result}))
    except CheckoutError as e:
        sys.stdout.write(json.dumps({"ok": False, "error": str(e)}))
    except Exception as e:  # noqa: BLE001 - one answer whatever SPADE's code raised
        sys.stdout.write(json.dumps({"ok": False, "error": f"{type(e).__name__}: {e}"}))


if __name__ == "__main__":
    main()
