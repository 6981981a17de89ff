#!/usr/bin/env node
// Writes tests/fixtures/spade-script-env.json: for every shell script under SPADE's cmd/ at the pinned
// commit, the names of the environment variables it reads, the values it allows for any of them it
// checks with a `case` whose other arm exits, and whether it forwards its own arguments ("$@").
// Names only: no line of SPADE's code goes into the fixture.
//   node scripts/extract-spade-env.mjs [MIRROR_GIT_DIR] [COMMIT] [SLIME_MIRROR_GIT_DIR] [--out FILE]
// Defaults: /work/.mirror/spade-rl+spade/repo, 9b2b813 (the commit the workbench targets) and
// /work/.mirror/THUDM+slime/repo (read at the commit SPADE's `slime` gitlink pins, bf14dc2).
//
// How a name counts as read (the rule the fixture states in its "method"):
// - `${NAME:-…}`, `${NAME-…}`, `${NAME:=…}`, `${NAME:?…}`, `${NAME+…}`, `${NAME:+…}`: read, even if the
//   script assigns NAME afterwards (`X="${X:-default}"` is how SPADE's scripts take a knob);
// - `$NAME` / `${NAME}` where the script never assigns NAME (NAME=, export/local/declare NAME=, read,
//   for NAME in): read;
// - a script it runs by a literal path (`source`/`.`/`exec`/`bash` with ${SCRIPT_DIR}, ${PROJECT_ROOT}
//   or a relative cmd/ path) adds what that script reads, less what the caller assigns first;
// - names the shell itself provides (BASH_SOURCE, PWD, …) are dropped;
// - names read only by a model-architecture file it sources (…/models/*.sh) are listed apart (modelReads).
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join, posix, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(import.meta.url), '..', '..');
const outAt = process.argv.indexOf('--out');
const outArg = outAt > 0 ? process.argv[outAt + 1] : undefined;
const positional = outAt > 0 ? [...process.argv.slice(2, outAt), ...process.argv.slice(outAt + 2)] : process.argv.slice(2);
const mirror = positional[0] ?? '/work/.mirror/spade-rl+spade/repo';
const commit = positional[1] ?? '9b2b813';
const slimeMirror = positional[2] ?? '/work/.mirror/THUDM+slime/repo';
const git = (...args) => execFileSync('git', ['-C', mirror, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
const full = git('rev-parse', `${commit}^{commit}`).trim();
const files = new Set(git('ls-tree', '-r', '--name-only', full).split('\n').filter(Boolean));
const SHELL_NAMES = new Set(['BASH_SOURCE', 'BASH_REMATCH', 'BASHPID', 'PWD', 'OLDPWD', 'HOME', 'PATH', 'RANDOM', 'SECONDS', 'LINENO', 'HOSTNAME', 'UID', 'EUID', 'PPID', 'IFS', 'FUNCNAME', 'PIPESTATUS', 'OPTARG', 'OPTIND']);

/** The script without comments (a `#` at a line's start or after a blank), so a commented-out knob is not a read. */
const stripComments = (text) => text.split('\n').map((l) => l.replace(/(^|\s)#.*$/, '$1')).join('\n');

/** A file of SPADE at the commit, or of its slime submodule at the commit SPADE pins (`slime/…`). */
const slimeCommit = git('ls-tree', full, 'slime').split(/\s+/)[2];
const slimeFiles = new Set(slimeCommit ? gitIn(slimeMirror, 'ls-tree', '-r', '--name-only', slimeCommit).split('\n').filter(Boolean).map((f) => `slime/${f}`) : []);
function gitIn(dir, ...args) {
  try {
    return execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8', maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return '';
  }
}
const exists = (p) => files.has(p) || slimeFiles.has(p);
const show = (p) => (p.startsWith('slime/') && slimeFiles.has(p) ? gitIn(slimeMirror, 'show', `${slimeCommit}:${p.slice(6)}`) : git('show', `${full}:${p}`));

function analyse(path, seen = new Set()) {
  if (seen.has(path)) return { reads: new Set(), modelReads: new Set(), assigned: new Set(), forwardsArgs: false, values: {} };
  seen.add(path);
  const text = stripComments(show(path));
  const assigned = new Set();
  for (const m of text.matchAll(/(?:^|[\s;(&|{])(?:(?:export|local|readonly|declare(?:\s+-\w+)*)\s+)?([A-Za-z_]\w*)(?:\[[^\]]*\])?\+?=/gm)) assigned.add(m[1]);
  for (const m of text.matchAll(/\bfor\s+([A-Za-z_]\w*)\s+in\b/g)) assigned.add(m[1]);
  for (const m of text.matchAll(/\bread\s+(?:-\w+\s+)*([A-Za-z_]\w*)/g)) assigned.add(m[1]);
  const reads = new Set();
  for (const m of text.matchAll(/\$\{([A-Za-z_]\w*)(:?[-=?+])/g)) reads.add(m[1]);
  // "$@", $*, $1… (not ${ARR[@]}): the script passes on or reads its own arguments. Where "$@" only
  // goes on to a script it runs by literal path, that script decides (set below from the child).
  const ARGS = /\$[@*1-9]|\$\{[@*1-9]/;
  const CHILD_CALL = /(?:^|[\s;&|])(?:source|\.|exec|bash)\s+"\$\{SCRIPT_DIR\}\/[^"$]*"\s+"\$@"/gm;
  let forwardsArgs = ARGS.test(text.replace(CHILD_CALL, ''));
  const passesArgs = CHILD_CALL.test(text);
  // case "${NAME}" in a) … ;; b|c) … ;; *) … exit … esac: NAME allows a, b, c.
  const values = {};
  for (const m of text.matchAll(/\bcase\s+"?\$\{?([A-Za-z_]\w*)\}?"?\s+in\b([\s\S]*?)\besac\b/g)) {
    const arms = [...m[2].matchAll(/(?:^|;;)\s*\(?([^()\s;][^()\n;]*)\)/g)].map((a) => a[1].trim());
    const star = arms.includes('*') ? m[2].slice(m[2].search(/(?:^|;;)\s*\*\)/)) : '';
    if (!/\bexit\b/.test(star)) continue;
    values[m[1]] = arms.filter((a) => a !== '*').flatMap((a) => a.split('|').map((v) => v.trim().replace(/^["']|["']$/g, ''))).sort();
  }
  // if [ "${NAME}" = "a" ]; then … elif [ "${NAME}" = "b" ]; then … else … exit … fi: NAME allows a, b.
  const TEST = (kw) => new RegExp(`\\b${kw}\\s+\\[\\[?\\s+"\\$\\{?([A-Za-z_]\\w*)\\}?"\\s+==?\\s+"?([^"\\s\\]]*)"?\\s+\\]\\]?;?\\s*then\\b`, 'g');
  for (const m of text.matchAll(TEST('if'))) {
    const rest = text.slice(m.index + m[0].length);
    const end = rest.search(/\bfi\b/);
    if (end < 0) continue;
    const body = rest.slice(0, end);
    if (/\bif\b/.test(body)) continue;
    const elifs = [...body.matchAll(TEST('elif'))];
    if (!elifs.every((e) => e[1] === m[1])) continue;
    const elseAt = body.search(/\belse\b/);
    if (elseAt < 0 || !/\bexit\b/.test(body.slice(elseAt))) continue;
    values[m[1]] = [m[2], ...elifs.map((e) => e[2])].sort();
  }
  // Scripts it runs by a literal path inside SPADE (or slime): what they read and the caller does not
  // set first; a sourced one's assignments are the caller's own (MODEL_ARGS from a model file).
  const here = posix.dirname(path);
  const children = [];
  const DIRNAME = '"$(dirname -- "${BASH_SOURCE[0]}")';
  const targets = [];
  for (const m of text.matchAll(/(?:^|[\s;&|])(source|\.|exec|bash)\s+("\$\(dirname -- "\$\{BASH_SOURCE\[0\]\}"\)[^"]*"|"[^"]*"|[^\s;&|]+)/gm)) {
    const raw = m[2].startsWith(DIRNAME) ? here + m[2].slice(DIRNAME.length, -1) : m[2].replace(/^"|"$/g, '');
    // `source "${MODEL_CONFIG}"`: every literal path the script assigns to that variable.
    const via = /^\$\{([A-Za-z_]\w*)\}$/.exec(raw);
    const paths = via ? [...text.matchAll(new RegExp(`(?:^|\\s)${via[1]}="([^"$]*|\\$\\{(?:PROJECT_ROOT|SCRIPT_DIR|SLIME_DIR)\\}[^"$]*)"`, 'gm'))].map((a) => a[1]) : [raw];
    for (const t of paths) targets.push({ kind: m[1], p: t });
  }
  for (const { kind, p: target } of targets) {
    let p = target
      .replace(/\$\(dirname -- "\$\{BASH_SOURCE\[0\]\}"\)/g, here)
      .replace(/\$\{SCRIPT_DIR\}/g, here)
      .replace(/\$\{PROJECT_ROOT\}\//g, '')
      .replace(/\$\{SLIME_DIR\}\//g, 'slime/');
    if (p.includes('$')) continue;
    p = posix.normalize(p);
    if (!exists(p) || !p.endsWith('.sh')) continue;
    children.push({ sourced: kind === 'source' || kind === '.', model: /(^|\/)models\//.test(p), child: analyse(p, seen) });
  }
  for (const { sourced, child } of children) if (sourced) for (const a of child.assigned) assigned.add(a);
  if (passesArgs) forwardsArgs ||= children.some(({ child }) => child.forwardsArgs);
  for (const m of text.matchAll(/\$\{#?([A-Za-z_]\w*)|\$([A-Za-z_]\w*)/g)) {
    const name = m[1] ?? m[2];
    if (!assigned.has(name)) reads.add(name);
  }
  const modelReads = new Set();
  for (const { child, model } of children) {
    for (const r of child.modelReads) if (!assigned.has(r)) modelReads.add(r);
    for (const r of child.reads) if (!assigned.has(r)) (model ? modelReads : reads).add(r);
    for (const [k, v] of Object.entries(child.values)) if (!assigned.has(k)) values[k] ??= v;
  }
  for (const n of SHELL_NAMES) reads.delete(n);
  for (const n of reads) modelReads.delete(n);
  return { reads, modelReads, assigned, forwardsArgs, values };
}

const scripts = {};
for (const path of [...files].filter((f) => f.startsWith('cmd/') && f.endsWith('.sh')).sort()) {
  const a = analyse(path);
  const values = Object.fromEntries(Object.entries(a.values).filter(([k]) => a.reads.has(k)).sort());
  scripts[path] = { reads: [...a.reads].sort(), ...(a.modelReads.size ? { modelReads: [...a.modelReads].sort() } : {}), ...(Object.keys(values).length ? { values } : {}), forwardsArgs: a.forwardsArgs };
}
const out = outArg ? resolve(outArg) : join(root, 'tests', 'fixtures', 'spade-script-env.json');
const fixture = {
  _: 'Environment variable names (and checked values) each SPADE script reads: names only, no SPADE code. Written by scripts/extract-spade-env.mjs; rerun it to refresh.',
  repository: 'github:spade-rl/spade',
  commit: full,
  slimeCommit,
  method: 'git show COMMIT:PATH for every cmd/**/*.sh (slime/… files at the slime gitlink commit); a name is read when it appears in a ${NAME:-|-|:=|:?|+|:+…} expansion, or as $NAME/${NAME} and is never assigned in the script; scripts run by literal path (source/exec/bash) add their reads less what the caller assigns; shell-provided names dropped. modelReads: names read only by a model-architecture file it sources (cmd/models/*, slime/scripts/models/*; a `source "${VAR}"` follows every literal path VAR is given), kept apart because they fix the network shape the checkpoint was saved with. values: the arms of a `case "$NAME"` whose `*)` arm exits. forwardsArgs: the script uses $@, $* or $1..$9 ("$@" handed only to a script it runs by path counts as that script\'s forwardsArgs). values also from an if/elif chain of [ "$NAME" = value ] tests whose else arm exits.',
  scripts,
};
writeFileSync(out, `${JSON.stringify(fixture, null, 2)}\n`);
console.log(`${out}: ${Object.keys(scripts).length} scripts at ${full.slice(0, 7)} (${dirname(mirror)})`);
