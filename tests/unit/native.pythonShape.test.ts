import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { probePython } from '../../core/runtime/native';
import { packageRoot } from '../../core/base/appInfo';

// The shape issue 35 asks of native/ and its subfolders: no module over 500 lines, and every def annotated (the
// parameters, `self`/`cls` of a method aside, and the return), so that mypy (.ci/run, mypy.ini)
// checks every body. Read with Python's own parser, by a plain python3: no mypy needed here.
const SHAPE = String.raw`
import ast, json, os, sys
root = sys.argv[1]
long, untyped, seen = [], [], []
# Subfolders too (native/dispatch/ runs on cluster nodes and is checked by mypy the same).
names = sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs if f.endswith(".py"))
seen.extend(names)
for name in names:
    text = open(os.path.join(root, name), encoding="utf-8").read()
    lines = len(text.splitlines())
    if lines > 500:
        long.append([name, lines])
    tree = ast.parse(text)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        a = node.args
        params = a.posonlyargs + a.args
        static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list)
        if isinstance(parents.get(node), ast.ClassDef) and not static and params:
            params = params[1:]
        params += a.kwonlyargs + [p for p in (a.vararg, a.kwarg) if p is not None]
        missing = [p.arg for p in params if p.annotation is None] + (["return"] if node.returns is None else [])
        if missing:
            untyped.append(f"{name}:{node.lineno} {node.name} ({', '.join(missing)})")
print(json.dumps({"long": long, "untyped": untyped, "seen": seen}))
`;

test('native/**/*.py: no module over 500 lines, no def without type hints', () => {
  const python = probePython();
  expect(python, 'a python3 to read native/ with').not.toBeNull();
  const r = spawnSync(python!.path, ['-c', SHAPE, join(packageRoot(), 'native')], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  const got = JSON.parse(r.stdout) as { long: [string, number][]; untyped: string[]; seen: string[] };
  // The walk reaches the subfolders: a check that read only the top level would pass them unread.
  expect(got.seen).toContain(join('dispatch', 'shard_audit.py'));
  expect(got.long).toEqual([]);
  expect(got.untyped).toEqual([]);
});
