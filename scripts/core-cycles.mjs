#!/usr/bin/env node
// Folder-level import graph of core/ (issue 45): which top-level folders of core/ import which, and
// every cycle between them. Lint rules check imports file by file; a cycle between folders (audit
// imports episodes, episodes imports audit) is only visible on the whole graph, so this script builds
// it. TypeScript's own pre-processor lists each file's imports (static, `export ... from`, dynamic
// `import()`), so comments and strings that merely look like imports are not counted.
//
//   node scripts/core-cycles.mjs            prints the graph's cycles (exit 0)
//   node scripts/core-cycles.mjs --check    exits 1 when there is any cycle
//   node scripts/core-cycles.mjs --json     prints {"edges": {...}, "cycles": [[...], ...]}
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
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

/** The top-level folder of core/ a file belongs to; files directly in core/ form the folder ".". */
function folderOf(file) {
  const rel = path.relative(coreDir, file).split(path.sep);
  return rel.length > 1 ? rel[0] : '.';
}

const edges = new Map(); // folder -> Map(importedFolder -> example "file -> spec")
for (const file of tsFiles(coreDir)) {
  const from = folderOf(file);
  const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  for (const ref of info.importedFiles) {
    if (!ref.fileName.startsWith('.')) continue; // packages and node: builtins are not core folders
    const target = path.resolve(path.dirname(file), ref.fileName);
    if (!target.startsWith(coreDir + path.sep)) continue;
    const to = folderOf(target);
    if (to === from) continue;
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

const args = process.argv.slice(2);
if (args.includes('--json')) {
  const plain = Object.fromEntries([...edges].map(([k, m]) => [k, [...m.keys()].sort()]));
  console.log(JSON.stringify({ edges: plain, cycles: components }, null, 2));
} else {
  console.log(`core/ folders: ${nodes.size}; folder cycles: ${components.length}; mutual pairs: ${pairs.length}`);
  for (const c of components) console.log(`cycle: ${c.join(' <-> ')}`);
  for (const [a, b, ab, ba] of pairs) console.log(`pair ${a} <-> ${b}\n  ${ab}\n  ${ba}`);
}
if (args.includes('--check') && components.length > 0) process.exit(1);
