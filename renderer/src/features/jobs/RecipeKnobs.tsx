import type { JobRecipe } from '../../../../core/api/calls/jobs';

/**
 * What a recipe's script allows, shown before launching: a choice for each variable the script checks
 * against a fixed list (SPADE's `case … *) exit`, which differs per size: REWARD_VARIANT), the variables
 * the workbench sets itself and why, and whether the script reads arguments at all.
 */
export function RecipeKnobs({ recipe, values, onChange }: { recipe: JobRecipe; values: Record<string, string>; onChange: (name: string, value: string) => void }) {
  const choices = Object.entries(recipe.envValues);
  const fixed = Object.entries(recipe.fixedEnv);
  if (choices.length === 0 && fixed.length === 0 && recipe.acceptsArgs) return null;
  return (
    <div className="jobs-wide jobs-knobs" data-testid="jobs-knobs">
      {choices.map(([name, allowed]) => (
        <label key={name} className="jobs-inline">
          {name}
          <select value={values[name] ?? ''} onChange={(e) => onChange(name, e.target.value)} data-testid={`jobs-knob-${name}`}>
            <option value="">(the script&apos;s default)</option>
            {allowed.map((v) => (
              <option key={v} value={v}>
                {v}
              </option>
            ))}
          </select>
          <span className="muted">{recipe.spadeScript ?? 'the script'} accepts only these</span>
        </label>
      ))}
      {fixed.map(([name, why]) => (
        <p key={name} className="muted jobs-fixed" data-testid={`jobs-fixed-${name}`}>
          <code>
            {name}={recipe.env[name] ?? ''}
          </code>{' '}
          is set by the workbench and cannot be changed: {why}
        </p>
      ))}
      {!recipe.acceptsArgs ? (
        <p className="muted jobs-fixed" data-testid="jobs-no-args">
          {recipe.spadeScript ?? 'This script'} reads no arguments: set its variables instead.
        </p>
      ) : null}
    </div>
  );
}

/**
 * The variables a launch sends: the knobs' choices, then the lines typed. A line naming a knob with
 * another value is an error, not a silent winner.
 */
export function mergeKnobs(knobs: Record<string, string>, typed: Record<string, string>): { env: Record<string, string>; errors: string[] } {
  const env: Record<string, string> = {};
  const errors: string[] = [];
  for (const [k, v] of Object.entries(knobs)) if (v) env[k] = v;
  for (const [k, v] of Object.entries(typed)) {
    if (k in env && env[k] !== v) errors.push(`${k} is chosen as ${env[k]} above and typed as ${v}`);
    else env[k] = v;
  }
  return { env, errors };
}
