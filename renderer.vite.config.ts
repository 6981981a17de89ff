import { defineConfig } from 'vite';
import { fileURLToPath } from 'node:url';

// The renderer is a plain static bundle: served by the web host, or by Electron's app:// protocol.
// `base: './'` keeps every asset URL relative so both origins work; Monaco's worker is emitted as
// its own file (no blob: or data: workers, which the CSP forbids).
export default defineConfig({
  root: fileURLToPath(new URL('./renderer/', import.meta.url)),
  base: './',
  publicDir: 'public',
  oxc: { jsx: { runtime: 'automatic' } },
  build: {
    outDir: fileURLToPath(new URL('./dist/renderer', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    chunkSizeWarningLimit: 6000,
    modulePreload: { polyfill: false },
  },
  worker: { format: 'es' },
});
