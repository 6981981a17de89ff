import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// electron-builder cannot run here (it downloads Electron), so check that everything its
// configuration names is really there, and that the package points at what the build makes.
const root = process.cwd();
const config = JSON.parse(readFileSync(join(root, 'electron-builder.json'), 'utf8')) as Record<string, any>;
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Record<string, any>;

describe('packaging configuration', () => {
  it('names icons that exist for every platform', () => {
    for (const platform of ['linux', 'mac', 'win']) {
      const icon = config[platform]?.icon as string | undefined;
      expect(icon, `${platform} icon`).toBeTruthy();
      expect(existsSync(join(root, icon!)), icon).toBe(true);
    }
    expect(existsSync(join(root, config.directories.buildResources))).toBe(true);
  });

  it('builds the four targets we ship', () => {
    expect(config.linux.target).toEqual(expect.arrayContaining(['AppImage', 'deb']));
    expect(config.mac.target).toContain('dmg');
    expect(config.win.target).toContain('nsis');
  });

  it('packs files whose folders exist, and a main entry that the build produces', () => {
    for (const pattern of config.files as string[]) {
      if (pattern.startsWith('!')) continue;
      const base = pattern.split(/[*{]/)[0]!.replace(/\/$/, '');
      expect(existsSync(join(root, base)), pattern).toBe(true);
    }
    expect(config.extraMetadata.main).toBe(pkg.main);
    expect(existsSync(join(root, pkg.main)), `${pkg.main} (run npm run build)`).toBe(true);
    expect(existsSync(join(root, 'dist', 'electron', 'preload.cjs'))).toBe(true);
    expect(existsSync(join(root, 'dist', 'renderer', 'index.html'))).toBe(true);
  });

  it('declares the CLI bin and the scripts the README promises', () => {
    expect(pkg.bin['spade-workbench']).toBe('bin/spade-workbench.mjs');
    expect(existsSync(join(root, pkg.bin['spade-workbench']))).toBe(true);
    for (const s of ['start', 'serve', 'test', 'bench', 'dist', 'lint', 'typecheck', 'build']) expect(pkg.scripts[s], s).toBeTruthy();
    expect(pkg.dependencies['better-sqlite3']).toMatch(/^12\./);
  });

  it('installs where the Electron binary cannot be downloaded, and npm start says how to get it', () => {
    // Optional: npm install carries on when electron's postinstall cannot fetch the binary.
    expect(pkg.optionalDependencies?.electron).toBeTruthy();
    expect(pkg.devDependencies?.electron).toBeUndefined();
    expect(pkg.dependencies?.electron).toBeUndefined();
    // electron-builder takes the version from its config (it read devDependencies) and leaves the module out of the app.
    expect(config.electronVersion).toBe(pkg.optionalDependencies.electron);
    expect(config.files).toContain('!node_modules/electron{,/**/*}');
    const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, { optional?: boolean; dev?: boolean; optionalDependencies?: Record<string, string> }> };
    expect(lock.packages['']!.optionalDependencies?.electron).toBe(pkg.optionalDependencies.electron);
    expect(lock.packages['node_modules/electron']?.optional).toBe(true);
    // No binary (here: pointed at a folder without one): a clear way forward, no stack trace.
    const r = spawnSync(process.execPath, [join(root, 'scripts', 'start-electron.mjs')], {
      encoding: 'utf8',
      env: { ...process.env, ELECTRON_OVERRIDE_DIST_PATH: join(root, 'no-electron-here') },
      timeout: 30_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('node node_modules/electron/install.js');
    expect(r.stderr).toContain('npm run serve');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
