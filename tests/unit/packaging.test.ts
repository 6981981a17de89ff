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
});
