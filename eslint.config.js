// The layer rules of docs/architecture.md, enforced the way VS Code lints its layers: each folder
// lists what it must never import. `npm run lint` fails on a violation; tests/unit/layers.test.ts
// proves each rule fires.
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { layerViolation } from './scripts/coreLayers.mjs';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

// "One way" rules of our own, small enough to live here. tests/unit/layers.test.ts proves each fires.
const SQL = /\b(SELECT\s[\s\S]*\sFROM|INSERT\s+(OR\s+\w+\s+)?INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+(TABLE|INDEX|VIRTUAL\s+TABLE)|DROP\s+(TABLE|INDEX))\b/;
// Whether `node` lies inside `block` with no function boundary between them.
function inBlock(block, node) {
  for (let n = node.parent; n; n = n.parent) {
    if (n === block) return true;
    if (n.type === 'FunctionExpression' || n.type === 'ArrowFunctionExpression' || n.type === 'FunctionDeclaration') return false;
  }
  return false;
}
const spade = {
  rules: {
    // Domain code throws DomainError (core/errors.ts); the dispatcher alone turns it into the wire's ApiError.
    'api-error-at-boundary': {
      meta: { type: 'problem', messages: { boundary: 'Throw a DomainError (core/errors.ts): only core/api, the dispatcher and transports build an ApiError.' } },
      create: (context) => ({
        NewExpression(node) {
          if (node.callee.type === 'Identifier' && node.callee.name === 'ApiError') context.report({ node, messageId: 'boundary' });
        },
      }),
    },
    // One helper says what an unknown thrown value was: errorMessage() in core/api/errorMessage.ts.
    // It reports `e instanceof Error ? e.message : …`, also behind an `||` (`isApiError(e) || e instanceof Error ? …`);
    // a conditional that wants something else of the error (its stack, the error itself) is left alone.
    'error-message-helper': {
      meta: { type: 'suggestion', messages: { helper: "Use errorMessage(e) from core/api instead of `e instanceof Error ? e.message : String(e)`." } },
      create: (context) => {
        const isErrorTest = (t) =>
          (t.type === 'BinaryExpression' && t.operator === 'instanceof' && t.right.type === 'Identifier' && t.right.name === 'Error') ||
          (t.type === 'LogicalExpression' && t.operator === '||' && (isErrorTest(t.left) || isErrorTest(t.right)));
        return {
          ConditionalExpression(node) {
            const c = node.consequent;
            if (isErrorTest(node.test) && c.type === 'MemberExpression' && c.property.type === 'Identifier' && c.property.name === 'message') {
              context.report({ node, messageId: 'helper' });
            }
          },
        };
      },
    },
    // The renderer changes data through one path: store actions (renderer/src/store/
    // environments.ts), useCall or attempt() (renderer/src/store/report.ts), which show a failure
    // one way. A try/catch written around a backend call, or a .catch() chained on one, is a second way; what such a catch did
    // that is not "show it" (a Cancel, a quiet poll, a rollback, a superseded ask) is a named
    // option of the one path (CallOptions in report.ts).
    'call-through-hook': {
      meta: { type: 'suggestion', messages: { hook: 'Call the backend through useCall(), attempt() or a store action (renderer/src/store), not a hand-written try/catch or .catch().' } },
      create: (context) => {
        const isBackendCall = (n) =>
          n.type === 'CallExpression' &&
          n.callee.type === 'MemberExpression' &&
          n.callee.property.type === 'Identifier' &&
          n.callee.property.name === 'call' &&
          n.callee.object.type === 'CallExpression' &&
          n.callee.object.callee.type === 'Identifier' &&
          n.callee.object.callee.name === 'backend';
        // `backend().call(…).then(…).catch(…)`: the chain a .catch (or a .then with a failure handler) hangs on.
        const chainsOnBackendCall = (n) => {
          for (let cur = n; cur.type === 'CallExpression' && cur.callee.type === 'MemberExpression'; cur = cur.callee.object) {
            if (isBackendCall(cur)) return true;
          }
          return false;
        };
        const tries = [];
        return {
          TryStatement(node) {
            if (node.handler) tries.push({ node, reported: false });
          },
          'TryStatement:exit'(node) {
            if (tries.at(-1)?.node === node) tries.pop();
          },
          CallExpression(node) {
            const m = node.callee.type === 'MemberExpression' && node.callee.property.type === 'Identifier' ? node.callee.property.name : null;
            if ((m === 'catch' || (m === 'then' && node.arguments.length > 1)) && chainsOnBackendCall(node.callee.object)) {
              context.report({ node, messageId: 'hook' });
              return;
            }
            if (!isBackendCall(node)) return;
            const t = tries.at(-1);
            // Only a call directly in the try block counts (not in a callback defined there, nor in the catch).
            if (!t || t.reported || !inBlock(t.node.block, node)) return;
            t.reported = true;
            context.report({ node: t.node, messageId: 'hook' });
          },
        };
      },
    },
    // The job backends, the model clients and the editor throw a DomainError (core/errors.ts) the
    // dispatcher maps to a code a person can act on; a plain Error reaches them as `internal` ("a bug").
    // A throw that never reaches the dispatcher (a worker's start-up guard, a message another layer
    // wraps) says so with a `not-user-facing:` comment on its line or the line above.
    'domain-error-thrown': {
      meta: { type: 'problem', messages: { plain: 'Throw a DomainError (core/errors.ts) with the code a person can act on, or mark a throw that never reaches the dispatcher with a `not-user-facing:` comment.' } },
      create: (context) => {
        const marked = new Set(
          context.sourceCode
            .getAllComments()
            .filter((c) => c.value.includes('not-user-facing:'))
            .flatMap((c) => [c.loc.end.line, c.loc.end.line + 1]),
        );
        return {
          ThrowStatement(node) {
            const a = node.argument;
            const plain = (a.type === 'NewExpression' || a.type === 'CallExpression') && a.callee.type === 'Identifier' && a.callee.name === 'Error';
            if (plain && !marked.has(node.loc.start.line)) context.report({ node, messageId: 'plain' });
          },
        };
      },
    },
    // The layers inside core/: each folder imports only what its row of scripts/coreLayers.mjs names
    // (type-only imports too: a type ties the folders together as much as a value does).
    'core-layers': {
      meta: {
        type: 'problem',
        messages: {
          up: 'core/{{from}} may not import core/{{to}} ({{spec}}): its layer may import {{allowed}} (scripts/coreLayers.mjs). Move the code to the layer that owns it or inject it.',
          unknown: 'core/{{from}} has no row in the layer table (scripts/coreLayers.mjs): name what it may import.',
        },
      },
      create: (context) => {
        const coreDir = path.join(context.cwd, 'core');
        const file = path.resolve(context.cwd, context.filename);
        const check = (node, spec) => {
          if (typeof spec !== 'string') return;
          const v = layerViolation(coreDir, file, spec);
          if (v) context.report({ node, messageId: v.kind, data: { ...v, spec } });
        };
        return {
          ImportDeclaration: (node) => check(node, node.source.value),
          ExportNamedDeclaration: (node) => node.source && check(node, node.source.value),
          ExportAllDeclaration: (node) => check(node, node.source.value),
          ImportExpression: (node) => node.source.type === 'Literal' && check(node, node.source.value),
          // `import('x').T` in a type: newer parsers name the specifier `source`, older ones `argument`.
          TSImportType: (node) => {
            const s = 'source' in node ? node.source : node.argument;
            const lit = s?.type === 'TSLiteralType' ? s.literal : s;
            if (lit?.type === 'Literal') check(node, lit.value);
          },
          TSExternalModuleReference: (node) => node.expression.type === 'Literal' && check(node, node.expression.value),
        };
      },
    },
    // SQL text belongs to a repository or store module (or the migrations), never to a handler or service.
    'sql-in-repositories': {
      meta: { type: 'problem', messages: { sql: 'Raw SQL outside a repository: put this query in a repository.ts / *Store.ts / store.ts function.' } },
      create: (context) => {
        const check = (node, text) => {
          if (SQL.test(text)) context.report({ node, messageId: 'sql' });
        };
        return {
          Literal(node) {
            if (typeof node.value === 'string') check(node, node.value);
          },
          TemplateLiteral(node) {
            check(node, node.quasis.map((q) => q.value.cooked ?? '').join(' '));
          },
        };
      },
    },
  },
};
const engineInternals = ['memory', 'server', 'host', 'services', 'handlers', 'runtime', 'jobs', 'audit', 'cli', 'episodes', 'editor', 'runs'];

// What core/ must never import (docs/architecture.md layers).
const coreLayer = {
  paths: [
    { name: 'electron', message: 'core/ runs without Electron: put desktop code in electron/.' },
    { name: 'react', message: 'core/ has no UI: React belongs in renderer/.' },
    { name: 'react-dom', message: 'core/ has no UI: React belongs in renderer/.' },
    { name: 'zustand', message: 'core/ has no UI state.' },
  ],
  patterns: [
    { group: ['**/renderer', '**/renderer/**'], message: 'core/ must not import the renderer.' },
    { group: ['**/electron/**', 'react/*', 'react-dom/*', 'monaco-editor', 'monaco-editor/*'], message: 'core/ must not import UI or desktop code.' },
  ],
};

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', 'build/**', 'release/**', 'scratch/**', 'tests/e2e/artifacts/**', 'resources/**', 'native/**'] },
  {
    files: ['**/*.ts', '**/*.tsx', '**/*.js', '**/*.mjs'],
    languageOptions: { parser: tseslint.parser, ecmaVersion: 2023, sourceType: 'module' },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      'no-debugger': 'error',
      'no-var': 'error',
      'prefer-const': 'error',
      eqeqeq: ['error', 'smart'],
    },
  },
  {
    files: ['core/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', coreLayer] },
  },
  {
    // Handlers translate the contract to a service call; queries and stores stay behind services.
    files: ['core/handlers/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: "MemberExpression[property.name='db']", message: 'Handlers delegate to a service (Services): no database access here.' },
      ],
      'no-restricted-imports': [
        'error',
        {
          paths: coreLayer.paths,
          patterns: [
            ...coreLayer.patterns,
            { group: ['../*/repository', '../*/store', '../*/*Store', '../*/statements', '../memory/db'], message: 'Handlers delegate to a service (Services): no repository, store or database access here.' },
          ],
        },
      ],
    },
  },
  {
    files: ['core/**/*.ts'],
    plugins: { spade },
    rules: { 'spade/core-layers': 'error' },
  },
  {
    files: ['core/**/*.ts', 'electron/**/*.ts'],
    // The wire's edge: the contract itself, the dispatcher, the in-process transport and the
    // Electron IPC adapter.
    ignores: ['core/api/**', 'core/server/**', 'electron/desktop.ts'],
    plugins: { spade },
    rules: { 'spade/api-error-at-boundary': 'error' },
  },
  {
    files: ['core/**/*.ts', 'electron/**/*.ts', 'renderer/**/*.ts', 'renderer/**/*.tsx', 'bench/**/*.ts', 'tests/helpers/**/*.ts'],
    plugins: { spade },
    rules: { 'spade/error-message-helper': 'error' },
  },
  {
    // With the files issue 45 moved out of models/ and editor/ to the layers that own them.
    files: ['core/jobs/**/*.ts', 'core/models/**/*.ts', 'core/editor/**/*.ts', 'core/episodes/agent.ts', 'core/runs/modelService.ts', 'core/runtime/pythonSyntax.ts'],
    plugins: { spade },
    rules: { 'spade/domain-error-thrown': 'error' },
  },
  {
    files: ['core/**/*.ts', 'electron/**/*.ts'],
    ignores: ['core/**/repository.ts', 'core/**/*Store.ts', 'core/memory/db.ts', 'core/memory/migrations.ts', 'core/memory/migrations/*.ts'],
    plugins: { spade },
    rules: { 'spade/sql-in-repositories': 'error' },
  },
  {
    // Every renderer file (issue 35 took the last ten off their exception list), except the one catch
    // itself and the entity store, which keeps a failed load per environment for the view that reads it.
    files: ['renderer/**/*.ts', 'renderer/**/*.tsx'],
    ignores: ['renderer/src/store/report.ts', 'renderer/src/store/useCall.ts', 'renderer/src/store/environments.ts'],
    plugins: { spade },
    rules: { 'spade/call-through-hook': 'error' },
  },
  {
    // core/api is shared with the renderer, so it must stay free of Node and of engine internals.
    files: ['core/api/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [...nodeBuiltins.map((name) => ({ name, message: 'core/api is loaded by the renderer: no Node built-ins.' })), { name: 'electron' }, { name: 'react' }, { name: 'better-sqlite3' }, { name: 'ws' }],
          patterns: [{ group: engineInternals.flatMap((d) => [`../${d}`, `../${d}/**`, `../../${d}`, `../../${d}/**`]), message: 'core/api must not depend on engine internals.' }],
        },
      ],
    },
  },
  {
    files: ['renderer/**/*.ts', 'renderer/**/*.tsx'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            ...nodeBuiltins.map((name) => ({ name, message: 'The renderer is a sandboxed page: no Node built-ins. Ask the backend through the contract.' })),
            { name: 'electron', message: 'The renderer reaches the desktop only through the preload bridge.' },
            { name: 'better-sqlite3', message: 'The renderer reaches the database only through the contract.' },
            { name: 'ws', message: 'Use the browser WebSocket via core/api/wsClient.' },
            { name: 'pyodide', message: 'Python runs in the engine, not in the page.' },
          ],
          patterns: [
            {
              group: ['**/core/**', '!**/core/api', '!**/core/api/**'],
              message: 'The renderer may import core/api (types, schemas, client) only, never engine internals.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['electron/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/renderer', '**/renderer/**', 'react', 'react-dom', 'react/*'], message: 'The Electron shell binds the engine to a window; it must not import UI code.' }] },
      ],
    },
  },
);
