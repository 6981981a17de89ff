#!/usr/bin/env node
// Renders resources/icons/icon.svg to the PNG, ICO and ICNS files electron-builder wants, using
// Debian's Chromium for the rasterising. Run by hand after changing the SVG; outputs are committed.
import { chromium } from 'playwright-core';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'resources', 'icons');
const svg = readFileSync(join(dir, 'icon.svg'), 'utf8');
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
async function render(size) {
  const page = await browser.newPage({ viewport: { width: size, height: size } });
  await page.setContent(`<html><body style="margin:0;background:transparent">${svg.replace('<svg ', `<svg width="${size}" height="${size}" `)}</body></html>`);
  const png = await page.screenshot({ omitBackground: true, clip: { x: 0, y: 0, width: size, height: size } });
  await page.close();
  return png;
}
const png512 = await render(512);
const png256 = await render(256);
const png1024 = await render(1024);
await browser.close();
writeFileSync(join(dir, 'icon.png'), png512);

// ICO with one embedded 256x256 PNG (width/height byte 0 means 256).
const icoHeader = Buffer.alloc(6 + 16);
icoHeader.writeUInt16LE(0, 0);
icoHeader.writeUInt16LE(1, 2);
icoHeader.writeUInt16LE(1, 4);
icoHeader.writeUInt8(0, 6);
icoHeader.writeUInt8(0, 7);
icoHeader.writeUInt16LE(1, 10);
icoHeader.writeUInt16LE(32, 12);
icoHeader.writeUInt32LE(png256.length, 14);
icoHeader.writeUInt32LE(22, 18);
writeFileSync(join(dir, 'icon.ico'), Buffer.concat([icoHeader, png256]));

// ICNS with PNG payloads: ic09 (512) and ic10 (1024).
const chunk = (type, data) => {
  const h = Buffer.alloc(8);
  h.write(type, 0, 'ascii');
  h.writeUInt32BE(data.length + 8, 4);
  return Buffer.concat([h, data]);
};
const body = Buffer.concat([chunk('ic09', png512), chunk('ic10', png1024)]);
const head = Buffer.alloc(8);
head.write('icns', 0, 'ascii');
head.writeUInt32BE(body.length + 8, 4);
writeFileSync(join(dir, 'icon.icns'), Buffer.concat([head, body]));
console.log('icons written');
