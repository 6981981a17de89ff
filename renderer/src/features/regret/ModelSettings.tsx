import { useState } from 'react';
import type { CallOutput } from '../../../../core/api';
import { backend } from '../../store/app';
import { attempt } from '../../store/report';
import { SPADE_SAMPLING } from '../../../../core/api/spadeSampling';
import type { ModelPolicy } from './savedModels';

/** What a person may change of a served model's play in a sweep; '' keeps the saved model's value, else SPADE's. */
export interface ModelSettingsValue {
  turnTimeoutSec: number | '';
  retries: number | '';
  temperature: number | '';
  maxTokens: number | '';
}

export const NO_CHANGES: ModelSettingsValue = { turnTimeoutSec: '', retries: '', temperature: '', maxTokens: '' };

/** The value a field stands for when left empty: the saved model's, else SPADE's default. */
function fallback(m: ModelPolicy | undefined): Record<keyof ModelSettingsValue, number> {
  return {
    turnTimeoutSec: m?.turnTimeoutSec ?? SPADE_SAMPLING.turnTimeoutMs / 1000,
    retries: m?.retries ?? SPADE_SAMPLING.retries,
    temperature: m?.temperature ?? SPADE_SAMPLING.temperature,
    maxTokens: m?.maxTokens ?? SPADE_SAMPLING.maxTokens,
  };
}

/** The saved model with the fields the person filled in (the call's schema judges them). */
export function withSettings(m: ModelPolicy, v: ModelSettingsValue): ModelPolicy {
  const out: ModelPolicy = { ...m };
  for (const k of Object.keys(v) as (keyof ModelSettingsValue)[]) {
    const x = v[k];
    if (x !== '') out[k] = x;
  }
  return out;
}

const FIELDS: { key: keyof ModelSettingsValue; label: string; step: string }[] = [
  { key: 'turnTimeoutSec', label: 'Turn timeout (s)', step: 'any' },
  { key: 'retries', label: 'Retries', step: '1' },
  { key: 'temperature', label: 'Temperature', step: 'any' },
  { key: 'maxTokens', label: 'Max tokens', step: '1' },
];

/**
 * A served model's settings for a sweep, collapsed: each field shows, greyed, the value it keeps when
 * left empty (the model as Play saved it, else SPADE's). The API key is the one Play keeps with the
 * endpoint, named by its secret; the key itself never reaches this page.
 */
export function ModelSettings({ model, value, onChange, local }: { model: ModelPolicy | undefined; value: ModelSettingsValue; onChange(v: ModelSettingsValue): void; local: boolean }) {
  // The secrets this session holds (names only), read at each opening: Play may have set the key since.
  const [secrets, setSecrets] = useState<CallOutput<'jobs.secrets'> | null>(null);
  const dflt = fallback(model);
  const changed = FIELDS.filter((f) => value[f.key] !== '').length;
  const key = model?.apiKeySecret ?? null;
  const held = key !== null && secrets !== null && secrets.names.includes(key);
  return (
    <details
      className="regret-model-settings"
      data-testid="regret-model-settings-form"
      onToggle={(e) => {
        if (e.currentTarget.open) void attempt('runs', 'Secrets held', () => backend().call('jobs.secrets', {})).then((x) => x && setSecrets(x));
      }}
    >
      <summary>
        Model settings{changed ? ` (${changed} changed)` : ''}
      </summary>
      <div className="regret-model-settings-body">
        {FIELDS.map((f) => (
          <label key={f.key}>
            {f.label}
            <input
              className="regret-num"
              type="number"
              step={f.step}
              value={value[f.key]}
              placeholder={String(dflt[f.key])}
              onChange={(e) => onChange({ ...value, [f.key]: e.target.value === '' ? '' : Number(e.target.value) })}
              data-testid={`regret-setting-${f.key}`}
            />
          </label>
        ))}
        <p className="muted regret-key" data-testid="regret-key">
          {key === null ? (
            <>API key: none. A server that wants one: give it in Episodes → Play with a model (key secret, key).</>
          ) : (
            <>
              API key: secret <code>{key}</code>
              {!local ? `: each node reads it from its own variable ${key}; the key is not sent to the cluster.` : secrets === null ? '.' : held ? ', held in this session (sent as a bearer token).' : <b className="regret-key-missing">, not held in this session: set it in Episodes → Play with a model.</b>}
            </>
          )}
        </p>
      </div>
    </details>
  );
}

/** A sweep's model settings in words, as its card shows them. */
export function settingsText(m: NonNullable<CallOutput<'runs.sweeps'>[number]['modelSettings']>): string {
  return [
    `temperature ${m.temperature}`,
    `top-p ${m.topP}`,
    m.topK === null ? 'no top-k' : `top-k ${m.topK}`,
    `max tokens ${m.maxTokens}`,
    `${m.turnTimeoutSec} s a turn`,
    `${m.retries} retr${m.retries === 1 ? 'y' : 'ies'}`,
    m.apiKeySecret ? `key: secret ${m.apiKeySecret}` : 'no key',
  ].join(' · ');
}
