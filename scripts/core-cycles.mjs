#!/usr/bin/env node
// Folder-level import graph of core/ (issue 45): which top-level folders of core/ import which, and
// every cycle between them. Lint rules check imports file by file (spade/core-layers holds each folder
// to its row of scripts/coreLayers.mjs); a cycle between folders (audit imports episodes, episodes
// imports audit) is only visible on the whole graph, so this script builds it. TypeScript's own
// pre-processor lists each file's imports (static, `export ... from`, dynamic `import()`, `import('x').T`
// types), so comments and strings that merely look like imports are not counted.
//
//   node scripts/core-cycles.mjs             prints the graph's cycles; exits 1 when there is any
//   node scripts/core-cycles.mjs --json      prints {"edges": {...}, "cycles": [[...], ...]}; exits 1 on a cycle
//   node scripts/core-cycles.mjs --root DIR  scans DIR/core instead of this repository's (tests use it)
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { coreFolderOf } from './coreLayers.mjs';

const args = process.argv.slice(2);
const rootArg = args.indexOf('--root');
const root = rootArg >= 0 ? path.resolve(args[rootArg + 1] ?? '.') : path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const coreDir = path.join(root, 'core');

function tsFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) out.push(...tsFiles(full));
    else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) out.push(full);
  }
  return out;
}

const edges = new Map(); // folder -> Map(importedFolder -> example "file -> spec")
for (const file of tsFiles(coreDir)) {
  const from = coreFolderOf(coreDir, file);
  const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  for (const ref of info.importedFiles) {
    if (!ref.fileName.startsWith('.')) continue; // packages and node: builtins are not core folders
    const to = coreFolderOf(coreDir, path.resolve(path.dirname(file), ref.fileName));
    if (to === null || to === from) continue;
    if (!edges.has(from)) edges.set(from, new Map());
    const seen = edges.get(from);
    if (!seen.has(to)) seen.set(to, `${path.relative(root, file)} -> ${ref.fileName}`);
  }
}

// Tarjan's strongly connected components: a component of more than one folder is a cycle.
const index = new Map();
const low = new Map();
const onStack = new Set();
const stack = [];
const components = [];
let counter = 0;
const nodes = new Set([...edges.keys(), ...[...edges.values()].flatMap((m) => [...m.keys()])]);
function visit(v) {
  index.set(v, counter);
  low.set(v, counter);
  counter += 1;
  stack.push(v);
  onStack.add(v);
  for (const w of edges.get(v)?.keys() ?? []) {
    if (!index.has(w)) {
      visit(w);
      low.set(v, Math.min(low.get(v), low.get(w)));
    } else if (onStack.has(w)) {
      low.set(v, Math.min(low.get(v), index.get(w)));
    }
  }
  if (low.get(v) === index.get(v)) {
    const component = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) components.push(component.sort());
  }
}
for (const v of [...nodes].sort()) if (!index.has(v)) visit(v);

// Pairs that import each other directly name the files to start untangling from.
const pairs = [];
for (const [a, targets] of edges) {
  for (const b of targets.keys()) {
    if (a < b && edges.get(b)?.has(a)) pairs.push([a, b, targets.get(b), edges.get(b).get(a)]);
  }
}

if (args.includes('--json')) {
  const plain = Object.fromEntries([...edges].map(([k, m]) => [k, [...m.keys()].sort()]));
  console.log(JSON.stringify({ edges: plain, cycles: components }, null, 2));
} else {
  console.log(`core/ folders: ${nodes.size}; folder cycles: ${components.length}; mutual pairs: ${pairs.length}`);
  for (const c of components) console.log(`cycle: ${c.join(' <-> ')}`);
  for (const [a, b, ab, ba] of pairs) console.log(`pair ${a} <-> ${b}\n  ${ab}\n  ${ba}`);
}
// Any cycle fails the scan (--check, its old flag, is still accepted and changes nothing).
if (components.length > 0) process.exit(1);
