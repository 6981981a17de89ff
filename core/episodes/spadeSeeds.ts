/**
 * The seeds of SPADE's hinted plays. SPADE resets hinted play i of a game with
 * `hash(game_file + str(i)) % (2**31)` (spade/core/orchestrator.py:1951, :1962, :1973 at 9b2b813),
 * Python's built-in str hash of the game file's path. That hash is keyed by the interpreter's hash
 * secret: random per process unless PYTHONHASHSEED is set, and SPADE's scripts set none (only its
 * vendored spade/external/rlve/Gym/environment.py:40 does), so SPADE's own runs draw different seeds
 * in every trainer process. The workbench derives them as CPython does under a chosen
 * PYTHONHASHSEED (0 by default: the secret is all zeros), so they repeat and can be checked against
 * a Python started with the same setting; every episode records the seed it was reset with.
 *
 * CPython's str hash (Python/pyhash.c, Python/bootstrap_hash.c): SipHash-1-3 from 3.11 on
 * (SipHash-2-4 up to 3.10) over the string's internal buffer (1, 2 or 4 bytes a character, little
 * endian), keyed with the secret's first 16 bytes; PYTHONHASHSEED=N > 0 fills the 24-byte secret
 * with an LCG of N; a hash of -1 reads -2; the empty string hashes to 0.
 */

export type PyHashAlgo = 'siphash13' | 'siphash24';

const M64 = (1n << 64n) - 1n;
const rotl = (x: bigint, b: bigint): bigint => ((x << b) | (x >> (64n - b))) & M64;

/** The 24 bytes of CPython's hash secret for PYTHONHASHSEED=seed (0: zeros, randomization off). */
export function pyHashSecret(seed: number): Uint8Array {
  if (!Number.isInteger(seed) || seed < 0 || seed > 4294967295) throw new Error(`PYTHONHASHSEED must be an integer in [0, 4294967295], not ${seed}`);
  const out = new Uint8Array(24);
  if (seed === 0) return out;
  let x = seed >>> 0;
  for (let i = 0; i < 24; i++) {
    x = (Math.imul(x, 214013) + 2531011) >>> 0;
    out[i] = (x >>> 16) & 0xff;
  }
  return out;
}

function le64(b: Uint8Array, at: number): bigint {
  let v = 0n;
  for (let i = 7; i >= 0; i--) v = (v << 8n) | BigInt(b[at + i] ?? 0);
  return v;
}

function sipHash(k0: bigint, k1: bigint, data: Uint8Array, cRounds: number, dRounds: number): bigint {
  let v0 = k0 ^ 0x736f6d6570736575n;
  let v1 = k1 ^ 0x646f72616e646f6dn;
  let v2 = k0 ^ 0x6c7967656e657261n;
  let v3 = k1 ^ 0x7465646279746573n;
  const round = (): void => {
    v0 = (v0 + v1) & M64;
    v2 = (v2 + v3) & M64;
    v1 = rotl(v1, 13n) ^ v0;
    v3 = rotl(v3, 16n) ^ v2;
    v0 = rotl(v0, 32n);
    v2 = (v2 + v1) & M64;
    v0 = (v0 + v3) & M64;
    v1 = rotl(v1, 17n) ^ v2;
    v3 = rotl(v3, 21n) ^ v0;
    v2 = rotl(v2, 32n);
  };
  const n = data.length;
  let at = 0;
  for (; n - at >= 8; at += 8) {
    const m = le64(data, at);
    v3 ^= m;
    for (let i = 0; i < cRounds; i++) round();
    v0 ^= m;
  }
  let t = 0n;
  for (let i = n - at - 1; i >= 0; i--) t = (t << 8n) | BigInt(data[at + i]!);
  const b = ((BigInt(n) << 56n) & M64) | t;
  v3 ^= b;
  for (let i = 0; i < cRounds; i++) round();
  v0 ^= b;
  v2 ^= 0xffn;
  for (let i = 0; i < dRounds; i++) round();
  return (v0 ^ v1 ^ v2 ^ v3) & M64;
}

/** A str's internal buffer as CPython hashes it (PEP 393: the narrowest kind that holds every character). */
function pyStrBuffer(s: string): Uint8Array {
  const cps = Array.from(s, (c) => c.codePointAt(0)!);
  const kind = cps.every((c) => c < 0x100) ? 1 : cps.every((c) => c < 0x10000) ? 2 : 4;
  const out = new Uint8Array(cps.length * kind);
  cps.forEach((c, i) => {
    for (let k = 0; k < kind; k++) out[i * kind + k] = (c >>> (8 * k)) & 0xff;
  });
  return out;
}

/** Python's `hash(s)` for a str under PYTHONHASHSEED=hashSeed, as a signed 64-bit BigInt. */
export function pyStrHash(s: string, hashSeed = 0, algo: PyHashAlgo = 'siphash13'): bigint {
  const buf = pyStrBuffer(s);
  if (buf.length === 0) return 0n;
  const secret = pyHashSecret(hashSeed);
  const u = algo === 'siphash13' ? sipHash(le64(secret, 0), le64(secret, 8), buf, 1, 3) : sipHash(le64(secret, 0), le64(secret, 8), buf, 2, 4);
  const signed = u >= 1n << 63n ? u - (1n << 64n) : u;
  return signed === -1n ? -2n : signed;
}

/** The seed SPADE resets hinted play i of the game at `gamePath` with: `hash(path + str(i)) % 2**31` (Python's modulo, never negative). */
export function spadeHintSeed(gamePath: string, i: number, hashSeed = 0, algo: PyHashAlgo = 'siphash13'): number {
  const m = 1n << 31n;
  const h = pyStrHash(gamePath + String(i), hashSeed, algo);
  return Number(((h % m) + m) % m);
}

/** The seeds of SPADE's n hinted plays of one game, in play order. */
export function spadeHintSeeds(gamePath: string, n: number, hashSeed = 0, algo: PyHashAlgo = 'siphash13'): number[] {
  return Array.from({ length: n }, (_, i) => spadeHintSeed(gamePath, i, hashSeed, algo));
}
