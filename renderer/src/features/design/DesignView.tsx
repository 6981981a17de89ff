import { useCallback, useEffect, useState } from 'react';
import type { CallInput, CallOutput } from '../../../../core/api';
import { ALL_SKILLS } from '../../../../core/api/skills';
import type { DesignRoundRow } from '../../../../core/api/calls/design';
import { backend } from '../../store/app';
import { attempt } from '../../store/report';
import { useCall } from '../../store/useCall';
import type { ViewProps } from '../../views/registry';
import { useDesignPick } from './open';
import { RoundView } from './RoundView';
import { EndpointFields, LOCAL_ENDPOINT, type EndpointForm } from './EndpointFields';
import { RunOnPicker, type RunOnTarget } from '../../components/RunOnPicker';
import { SELECTION_PLACEHOLDER } from '../../components/SelectionMatches';
import { DEFAULT_PRESET, presetById, type AcceptanceGate, type DesignPreset, type PresetId } from '../../../../core/api/designPresets';
import { PresetPicker } from './Acceptance';

type Preview = CallOutput<'design.preview'>;

interface Form {
  skills: string[];
  count: number;
  difficulty: 'easy' | 'medium' | 'hard';
  attempts: number;
  playSeeds: number;
  maxTurns: number;
  seed: number;
  seedsQuery: string;
  pins: string;
  bans: string;
  instruction: string;
  /** SPADE's CORPUS_FILE (JSONL with orig_doc or text), sampled per attempt; needs the SPADE checkout in Settings. */
  corpus: string;
  designer: EndpointForm;
  agent: EndpointForm;
  play: boolean;
  /** The preset the values came from (core/api/designPresets.ts) and the acceptance gate. */
  preset: PresetId;
  gate: AcceptanceGate;
  feedback: 'repair' | 'spade';
  designerTemperature: number;
  agentTemperature: number;
}

/** The form's values a preset sets (the rest is the researcher's). */
const fromPreset = (p: DesignPreset, f: Pick<Form, 'designer' | 'agent'>): Partial<Form> => ({
  preset: p.id,
  gate: p.gate,
  maxTurns: p.maxTurns,
  attempts: p.attempts,
  feedback: p.feedback,
  designerTemperature: p.designerTemperature,
  agentTemperature: p.agentTemperature,
  designer: { ...f.designer, maxTokens: p.designerMaxTokens },
  agent: { ...f.agent, maxTokens: p.agentMaxTokens },
});

const FORM_KEY = 'spade.design.form';
const SKILLS = ALL_SKILLS;
const newSeed = () => Math.floor(Math.random() * 100_000);

function savedForm(): Form {
  const start = { skills: ['Logical Deduction'], count: 2, difficulty: 'medium' as const, playSeeds: 2, seed: newSeed(), seedsQuery: '', pins: '', bans: '', instruction: '', corpus: '', designer: LOCAL_ENDPOINT, agent: LOCAL_ENDPOINT, play: true };
  // SPADE's paper defaults unless the researcher chose otherwise (a form saved before presets keeps its values, as "quick, laptop").
  const base = { ...start, ...fromPreset(presetById(DEFAULT_PRESET)!, start) } as Form;
  try {
    const v = JSON.parse(localStorage.getItem(FORM_KEY) ?? 'null') as Partial<Form> | null;
    // The seed is fresh each time the page opens: a new round, new draws (the preview shows them).
    if (!v || typeof v !== 'object') return base;
    const legacy = v.preset === undefined ? { preset: 'quick' as const, gate: 'spade' as const, feedback: 'repair' as const, designerTemperature: 0.6, agentTemperature: 1 } : {};
    const saved = { ...base, ...v, ...legacy, seed: base.seed, instruction: '' };
    return presetById(saved.preset) ? saved : { ...saved, preset: DEFAULT_PRESET };
  } catch {
    return base; // a corrupt saved form: start from the defaults
  }
}

/** "3, 12" -> [3, 12]; anything that is not a whole number is named, not dropped. */
function ids(text: string, what: string): number[] {
  const parts = text.split(/[\s,]+/).filter(Boolean);
  const bad = parts.find((p) => !/^[1-9][0-9]*$/.test(p));
  if (bad !== undefined) throw new Error(`${what}: "${bad}" is not an environment id (ids are whole numbers, e.g. 3, 12)`);
  return parts.map(Number);
}

const endpointOf = (e: EndpointForm, temperature: number) => ({ baseUrl: e.baseUrl.trim(), model: e.model.trim(), retries: 1, concurrency: 1, turnTimeoutSec: 600, maxTokens: e.maxTokens, temperature });

/**
 * A design round as SPADE runs one, on this machine: the form (skills, count, difficulty, the
 * designer and agent endpoints, attempts, which memory the seeds come from, pins and bans), the
 * exact prompt the first attempt would send, and the rounds: live progress, results, the frontier
 * chart and every attempt. As "Make variants", the environment is the round's only seed.
 */
export function DesignView({ tab }: ViewProps<'design'>) {
  const parentId = tab.target.parentEnvId;
  const picked = useDesignPick((s) => s.picked[tab.id] ?? null);
  const pick = useDesignPick((s) => s.pick);
  const [form, setForm] = useState<Form>(savedForm);
  const [preview, setPreview] = useState<Preview | null>(null);
  const [rounds, setRounds] = useState<DesignRoundRow[]>([]);
  const [checksOn, setChecksOn] = useState<RunOnTarget>({ kind: 'local' });
  const { busy, error, run, setError } = useCall('design');
  const set = (patch: Partial<Form>) => {
    setForm((f) => ({ ...f, ...patch }));
    setPreview(null);
  };

  useEffect(() => {
    if (parentId === null) return;
    // A variants round keeps the parent's skill unless the researcher picks another.
    void attempt('design', 'Parent environment', () => backend().call('memory.get', { id: parentId }), { quiet: 'warn' }).then(
      (e) => e?.skill && SKILLS.includes(e.skill) && setForm((f) => ({ ...f, skills: [e.skill!] })),
    );
  }, [parentId]);

  const loadRounds = useCallback(() => {
    void attempt('design', 'Design rounds', () => backend().call('design.list', { limit: 200 }), { show: setError }).then(
      (rs) => rs && setRounds(parentId === null ? rs : rs.filter((r) => (r.config.extra as { parentEnvId?: number } | undefined)?.parentEnvId === parentId)),
    );
  }, [parentId, setError]);
  useEffect(() => {
    loadRounds();
    return backend().on('design.changed', loadRounds);
  }, [loadRounds]);

  const promptInput = (): CallInput<'design.preview'> => ({
    skills: form.skills as CallInput<'design.preview'>['skills'],
    difficulty: form.difficulty,
    maxTurns: form.maxTurns,
    seed: form.seed,
    ...(parentId !== null ? { parentEnvId: parentId } : { pins: ids(form.pins, 'Pins'), bans: ids(form.bans, 'Bans'), ...(form.seedsQuery.trim() ? { seedsQuery: form.seedsQuery.trim() } : {}) }),
    ...(form.instruction.trim() ? { instruction: form.instruction.trim() } : {}),
    ...(form.corpus.trim() ? { corpus: form.corpus.trim() } : {}),
    // Seeds for the agent that will play: its measured numbers where it played a game.
    ...(form.play && form.agent.model.trim() ? { seedsModel: form.agent.model.trim() } : {}),
  });

  const doPreview = () => void run('Preview', async () => setPreview(await backend().call('design.preview', promptInput())));
  const doStart = () =>
    void run('Start', async () => {
      if (parentId === null) localStorage.setItem(FORM_KEY, JSON.stringify({ ...form, instruction: '' }));
      const r = await backend().call('design.start', {
        ...promptInput(),
        count: form.count,
        attempts: form.attempts,
        preset: form.preset,
        gate: form.gate,
        feedback: form.feedback,
        playSeeds: form.playSeeds,
        designer: endpointOf(form.designer, form.designerTemperature),
        agent: form.play ? endpointOf(form.agent, form.agentTemperature) : null,
        ...(checksOn.kind !== 'local' ? { checksOn } : {}),
      });
      pick(tab.id, r.roundId);
      // The next round draws afresh, as SPADE's next rollout would.
      set({ seed: newSeed() });
    });

  const num = (v: string, lo: number, hi: number) => Math.max(lo, Math.min(hi, Math.round(Number(v) || lo)));
  return (
    <div className="design-view" data-testid="design-view">
      <h2>{parentId !== null ? `Variants of ${tab.target.parentName ?? `environment ${parentId}`}` : 'Design environments'}</h2>
      <p className="muted design-lede">
        {parentId !== null
          ? 'A round whose only seed is this environment: the designer sees its code and numbers and writes new games from it. Add an instruction to steer it (harder, another skill).'
          : 'A designer model writes games from memory seeds; each attempt is checked (SPADE\u2019s acceptance, with its random-guess test and the audit as advice), accepted games enter the library and an agent plays them with and without the hint.'}
      </p>
      <div className="design-form" data-testid="design-form">
        <PresetPicker preset={form.preset} gate={form.gate} onPreset={(p) => set(fromPreset(p, form))} onGate={(gate) => set({ gate })} />
        <fieldset className="design-skills">
          <legend>Skills</legend>
          {SKILLS.map((s) => (
            <label key={s} className={form.skills.includes(s) ? 'on' : ''}>
              <input type="checkbox" checked={form.skills.includes(s)} onChange={(e) => set({ skills: e.target.checked ? [...form.skills, s] : form.skills.filter((x) => x !== s) })} data-testid={`design-skill-${s}`} />
              {s}
            </label>
          ))}
        </fieldset>
        <div className="design-fields">
          <label>
            games <input type="number" min={1} max={200} value={form.count} onChange={(e) => set({ count: num(e.target.value, 1, 200) })} data-testid="design-count" />
          </label>
          <label>
            difficulty{' '}
            <select value={form.difficulty} onChange={(e) => set({ difficulty: e.target.value as Form['difficulty'] })} data-testid="design-difficulty">
              <option>easy</option>
              <option>medium</option>
              <option>hard</option>
            </select>
          </label>
          <label title={form.feedback === 'spade' ? 'Attempts per game; a rejected game is re-sampled with a fresh prompt, as SPADE does' : "Attempts per game; a rejection's reason goes back to the designer"}>
            attempts <input type="number" min={1} max={20} value={form.attempts} onChange={(e) => set({ attempts: num(e.target.value, 1, 20) })} data-testid="design-attempts" />
          </label>
          <label title="The game's turn limit, in the prompt and in play">
            max turns <input type="number" min={1} max={1000} value={form.maxTurns} onChange={(e) => set({ maxTurns: num(e.target.value, 1, 1000) })} />
          </label>
          <label title="Seeds are drawn with this number: the same number, the same prompt">
            draw seed <input type="number" min={0} value={form.seed} onChange={(e) => set({ seed: num(e.target.value, 0, 2 ** 31 - 1) })} data-testid="design-seed" />
          </label>
          {parentId === null ? (
            <>
              <label title="A library search: seeds come only from the environments it finds (empty: all of memory)">
                seeds from <input value={form.seedsQuery} placeholder="all of memory" title={`A library search: ${SELECTION_PLACEHOLDER}`} onChange={(e) => set({ seedsQuery: e.target.value })} data-testid="design-seeds-query" />
              </label>
              <label title="Environment ids always offered as seeds">
                pin <input value={form.pins} placeholder="ids" onChange={(e) => set({ pins: e.target.value })} className="design-ids" data-testid="design-pins" />
              </label>
              <label title="Environment ids never offered">
                ban <input value={form.bans} placeholder="ids" onChange={(e) => set({ bans: e.target.value })} className="design-ids" data-testid="design-bans" />
              </label>
            </>
          ) : null}
          <label title="SPADE's CORPUS_FILE: JSONL, one object a line with orig_doc or text; each attempt is grounded on a document SPADE's CorpusLoader draws (needs the SPADE checkout in Settings)">
            corpus <input value={form.corpus} placeholder="none" onChange={(e) => set({ corpus: e.target.value })} className="mono" data-testid="design-corpus" />
          </label>
          <label className="design-instruction">
            instruction <input value={form.instruction} placeholder={parentId !== null ? 'e.g. make it harder' : 'optional'} onChange={(e) => set({ instruction: e.target.value })} data-testid="design-instruction" />
          </label>
        </div>
        <div className="design-endpoints">
          <EndpointFields label="Designer" value={form.designer} onChange={(designer) => set({ designer })} testId="design-designer" />
          <div>
            <label className="design-play">
              <input type="checkbox" checked={form.play} onChange={(e) => set({ play: e.target.checked })} data-testid="design-play" /> play accepted games,{' '}
              <input type="number" min={1} max={100} value={form.playSeeds} onChange={(e) => set({ playSeeds: num(e.target.value, 1, 100) })} aria-label="episodes per arm" /> episodes per arm
            </label>
            {form.play ? <EndpointFields label="Agent" value={form.agent} onChange={(agent) => set({ agent })} testId="design-agent" /> : null}
          </div>
        </div>
        <div className="row design-checks-on" title="Where each attempt's checks and the accepted games' plays run, as a pool audit's and a regret sweep's do; the designer is called from here, the agent from where the games are played">
          <RunOnPicker label="Checks and plays run on" testPrefix="design-checks" onChange={setChecksOn} />
        </div>
        <div className="row design-buttons">
          <button onClick={doPreview} disabled={!!busy || !form.skills.length} data-testid="design-preview">
            Preview prompt
          </button>
          <button className="primary" onClick={doStart} disabled={!!busy || !form.skills.length} data-testid="design-start">
            {parentId !== null ? 'Make variants' : 'Start round'}
          </button>
          {!form.skills.length ? <span className="muted">Choose at least one skill.</span> : null}
          {error ? (
            <span className="ep-error" data-testid="design-error">
              {error}
            </span>
          ) : null}
        </div>
      </div>
      {preview ? <PromptPreview p={preview} /> : null}
      <RoundsTable rows={rounds} picked={picked} pick={(id) => pick(tab.id, id)} />
      {picked ? <RoundView id={picked} parentEnvId={parentId} /> : null}
    </div>
  );
}

const two = (x: number | null) => (x === null ? '–' : x.toFixed(2));

function PromptPreview({ p }: { p: Preview }) {
  const seed = (s: Preview['positives'][number]) => `${s.name}${s.envId !== null ? ` (#${s.envId})` : ''} · win ${two(s.winRate)} · regret ${two(s.regret)}`;
  return (
    <section className="design-preview" data-testid="design-preview-box">
      <h3>
        Prompt of the first attempt <span className="muted">({p.skill}, draw seed {p.seed}, from {p.memory} environments in memory)</span>
      </h3>
      <div className="design-seeds" data-testid="design-preview-seeds">
        <div>
          <b>Shown as examples:</b> {p.positives.length ? p.positives.map(seed).join('; ') : <span className="muted">none (no game of this skill in the band 0.15-0.85)</span>}
        </div>
        <div>
          <b>Named to avoid:</b> {p.negatives.length ? p.negatives.map(seed).join('; ') : <span className="muted">none</span>}
        </div>
      </div>
      <div className="muted" data-testid="design-preview-builder">
        {p.builder.startsWith('spade:') ? `SPADE's prompt, built by ${p.builder.slice(6)} from the checkout in Settings` : p.builder.replace(/^workbench:/, '')}
        {p.system !== null ? ', after SPADE\u2019s system message' : ', no system message'}
        {p.document ? ` · grounded on document #${p.document.docId}` : ''}
      </div>
      {p.system !== null ? (
        <details>
          <summary>System message</summary>
          <pre className="design-prompt mono">{p.system}</pre>
        </details>
      ) : null}
      <pre className="design-prompt mono" data-testid="design-prompt">
        {p.prompt}
      </pre>
    </section>
  );
}

function RoundsTable({ rows, picked, pick }: { rows: DesignRoundRow[]; picked: string | null; pick(id: string): void }) {
  if (!rows.length) return <p className="muted">No round yet.</p>;
  return (
    <table className="design-table design-rounds" data-testid="design-rounds">
      <thead>
        <tr>
          <th>round</th>
          <th>started</th>
          <th>skills</th>
          <th>status</th>
          <th className="num">accepted</th>
          <th className="num">attempts</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.id} className={r.id === picked ? 'picked' : ''} onClick={() => pick(r.id)} data-testid="design-round-row" data-round={r.id}>
            <td>
              <button className="link" onClick={() => pick(r.id)}>
                round {r.seq}
              </button>
            </td>
            <td>{r.startedAt.slice(0, 16).replace('T', ' ')}</td>
            <td className="design-cell-skills">{((r.config.skills as string[] | undefined) ?? []).join(', ')}</td>
            <td data-testid="design-round-status" title={r.error ?? undefined}>
              {r.status}
              {r.status === 'running' && !r.live ? (r.elsewhere ? ` (in ${r.elsewhere})` : ' (interrupted)') : ''}
              {r.error ? <span className="muted"> · {r.error}</span> : null}
            </td>
            <td className="num">
              {r.accepted} of {(r.config.count as number | undefined) ?? r.games}
            </td>
            <td className="num">{r.attempts}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
