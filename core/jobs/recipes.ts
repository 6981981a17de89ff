import { readdirSync, readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { z } from 'zod';
import { packageRoot, unpackedRoot } from '../base/appInfo';
import { DomainError } from '../errors';

const recipeSchema = z.object({
  id: z.string().regex(/^[a-z0-9-]+$/),
  title: z.string(),
  description: z.string(),
  backends: z.array(z.enum(['local', 'ssh', 'slurm', 'ray'])),
  command: z.array(z.string()).min(1),
  env: z.record(z.string(), z.string()),
  requiredEnv: z.array(z.string()),
  optionalEnv: z.array(z.string()),
  secretEnv: z.array(z.string()),
  ship: z.array(z.object({ from: z.string(), to: z.string() })),
  outputs: z.object({
    gamesDir: z.string().optional(),
    cacheDir: z.string().optional(),
    rejectedDir: z.string().optional(),
    metricsFile: z.string().optional(),
  }),
  slurm: z
    .object({
      gpus: z.number().int().optional(),
      gres: z.string().optional(),
      time: z.string().optional(),
      partition: z.string().optional(),
      cpusPerTask: z.number().int().optional(),
      mem: z.string().optional(),
    })
    .optional(),
  /** The Ray head the script submits to, as the job's machine reaches its dashboard: the outcome is that Ray job's status. */
  ray: z.object({ address: z.string() }).optional(),
  /** Said before launching: what the script does that can hurt a shared host, or leaks. */
  warnings: z.array(z.string()).default([]),
  /** The SPADE script (a path in the checkout) this recipe runs: its variables are checked against tests/fixtures/spade-script-env.json. */
  spadeScript: z.string().optional(),
  /** Whether the command passes on arguments appended to it. SPADE's scripts never read "$@", so arguments given to them would be dropped without a word. */
  acceptsArgs: z.boolean().default(true),
  /** The values a variable may take where the script refuses any other (SPADE's `case … *) exit`): a wrong one is refused before launching. */
  envValues: z.record(z.string(), z.array(z.string()).min(1)).default({}),
  /**
   * Variables of `env` the workbench sets itself and a launch may not change, each with why: what
   * makes SPADE's script run as it should (Tinker's AIME 2026 path, which SpadeConfig has no field for).
   */
  fixedEnv: z.record(z.string(), z.string()).default({}),
  /**
   * Lines the command reads on its standard input, each answering a question the script would ask
   * (the Tinker trainer's "log directory exists" prompt). Never secrets: they are in the job script.
   */
  stdin: z.array(z.string().regex(/^[^\n\r\0]*$/)).default([]),
});
export type Recipe = z.infer<typeof recipeSchema>;

/** A recipe file that does not parse is an error here, not a recipe silently missing from the list. */
export class RecipeError extends DomainError {
  constructor(message: string) {
    super('invalid_input', message);
    this.name = 'RecipeError';
  }
}

export function recipesDir(): string {
  return join(packageRoot(), 'resources', 'jobs', 'recipes');
}

/** Launch recipes shipped in resources/jobs/recipes (SPADE's launch commands and the example run). */
export function loadRecipes(dir = recipesDir()): Recipe[] {
  const out: Recipe[] = [];
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.json')).sort()) {
    const parsed = recipeSchema.safeParse(JSON.parse(readFileSync(join(dir, f), 'utf8')));
    if (!parsed.success) throw new RecipeError(`Recipe ${f} is not valid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    out.push(parsed.data);
  }
  return out;
}

export function defaultPoolDir(): string {
  return join(unpackedRoot(), 'resources', 'seed-pack');
}

/** A recipe's ship list with package-relative sources resolved and the pool placeholder filled. */
export function resolveShip(recipe: Recipe, poolDir: string | null): { from: string; to: string }[] {
  const out: { from: string; to: string }[] = [];
  for (const s of recipe.ship) {
    if (s.from === '{{POOL}}') {
      if (poolDir) out.push({ from: poolDir, to: s.to });
      continue;
    }
    out.push({ from: isAbsolute(s.from) ? s.from : join(unpackedRoot(), s.from), to: s.to });
  }
  return out;
}
