// The layer rules of ARCHITECTURE.md, enforced the way VS Code lints its layers: each folder
// lists what it must never import. `npm run lint` fails on a violation; tests/unit/layers.test.ts
// proves each rule fires.
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];
const engineInternals = ['memory', 'server', 'host', 'services', 'handlers', 'runtime', 'jobs', 'audit', 'cli', 'episodes', 'editor'];

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
    rules: {
      'no-restricted-imports': [
        'error',
        {
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
        },
      ],
    },
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
