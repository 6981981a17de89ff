import { useEffect, useMemo, useRef, useState } from 'react';
import type { CallOutput } from '../../../../core/api';
import type { EndpointInput, ModelTurn } from '../../../../core/api/calls/models';
import { LOCAL_SAMPLING } from '../../../../core/api/spadeSampling';
import type { ViewProps } from '../../views/registry';
import { backend, useApp } from '../../store/app';
import { attempt } from '../../store/report';
import { openEpisode } from './store';
import { subscribeJobs, useJobs } from '../jobs/store';
import { fmt, newRunId, RegretRow, RunProgress, SeedRange, useRegretRun } from './regretParts';
import { saveEndpoint, savedEndpoint } from '../../store/savedEndpoint';

type Run = CallOutput<'models.play'>;
type Episode = Run['episodes'][number];

/** Counts of episode returns per bin (SPADE returns lie in [-1, 1]). */
function histogram(values: number[]): number[] {
  const bins = [0, 0, 0, 0, 0];
  for (const v of values) bins[v <= -0.5 ? 0 : v < 0 ? 1 : v === 0 ? 2 : v < 0.5 ? 3 : 4]!++;
  return bins;
}
const BIN_LABELS = ['≤ −0.5', '(−0.5, 0)', '0', '(0, 0.5)', '≥ 0.5'];

function Histogram({ hint, plain }: { hint: number[]; plain: number[] }) {
  const h = histogram(hint);
  const p = histogram(plain);
  const max = Math.max(1, ...h, ...p);
  const W = 56;
  return (
    <div style={{ flexShrink: 0 }}>
    <div className="ep-section-title">returns per episode</div>
    <svg width={BIN_LABELS.length * (W + 12)} height={130} data-testid="llm-histogram" role="img" aria-label="returns per arm">
      {BIN_LABELS.map((label, i) => {
        const x = i * (W + 12);
        const hh = (h[i]! / max) * 80;
        const ph = (p[i]! / max) * 80;
        return (
          <g key={label}>
            <rect x={x} y={100 - hh} width={W / 2 - 2} height={hh} fill="#2e9d4f" />
            <rect x={x + W / 2} y={100 - ph} width={W / 2 - 2} height={ph} fill="#e4572e" />
            <text x={x + W / 2} y={114} fontSize={10} textAnchor="middle" fill="currentColor">
              {label}
            </text>
            <text x={x + W / 4} y={96 - hh} fontSize={10} textAnchor="middle" fill="currentColor">
              {h[i] || ''}
            </text>
            <text x={x + (3 * W) / 4} y={96 - ph} fontSize={10} textAnchor="middle" fill="currentColor">
              {p[i] || ''}
            </text>
          </g>
        );
      })}
      <text x={0} y={128} fontSize={10} fill="#2e9d4f">
        ■ with hint
      </text>
      <text x={80} y={128} fontSize={10} fill="#e4572e">
        ■ without hint
      </text>
    </svg>
    </div>
  );
}

/** Where the unhinted solve rate sits against SPADE's frontier anchor (win rate 0.5; penalty (wr − 0.5)²). */
function FrontierBar({ winRate }: { winRate: number }) {
  const W = 320;
  return (
    <div className="ep-row" data-testid="llm-frontier">
      <svg width={W} height={26} role="img" aria-label="frontier">
        <rect x={0} y={8} width={W} height={10} fill="var(--bg-panel)" stroke="var(--border)" />
        <rect x={W * 0.25} y={8} width={W * 0.5} height={10} fill="#f5d76e" opacity={0.6} />
        <line x1={W / 2} x2={W / 2} y1={4} y2={22} stroke="#b08900" />
        <circle cx={Math.max(4, Math.min(W - 4, winRate * W))} cy={13} r={5} fill="#2f7ed8" />
      </svg>
      <span className="muted">
        unhinted solve rate {fmt(winRate)} · SPADE's frontier anchor 0.5, penalty (wr − 0.5)² = {fmt((winRate - 0.5) ** 2)}
      </span>
    </div>
  );
}

function TurnList({ ep, testId }: { ep: Episode | undefined; testId: string }) {
  if (!ep) return <p className="muted">no episode</p>;
  return (
    <div className="ep-col" data-testid={testId}>
      <div className="ep-col-head">
        {ep.hint ? 'with hint' : 'without hint'} · seed {ep.seed} · {ep.failed ? <b className="ep-error-inline">failed: {ep.error ?? 'no return'}</b> : <>return <b>{fmt(ep.return)}</b></>} · {ep.turns.length} turns · ended by {ep.endedBy}{' '}
        <button className="ep-link" onClick={() => openEpisode({ id: ep.episodeId, envName: null, className: null, seed: ep.seed, hintEnabled: ep.hint })}>
          open #{ep.episodeId}
        </button>
      </div>
      {ep.turns.map((t: ModelTurn) => (
        <div key={t.turn} className="ep-llm-turn">
          <div className="ep-kv muted">
            turn {t.turn} · {t.kind === 'tool' ? `tool: ${t.calls.map((c) => c.name).join(', ')}` : t.kind === 'step' ? 'step' : 'no step'} · {t.usage?.completion_tokens ?? '?'} tokens · {Math.round(t.latencyMs)} ms
            {t.attempts > 1 ? ` · ${t.attempts} attempts` : ''}
            {t.finishReason && t.finishReason !== 'stop' ? ` · finish ${t.finishReason}` : ''}
          </div>
          {t.error ? <div className="ep-error">{t.error}</div> : <pre className="ep-msg">{t.raw}</pre>}
          {t.action !== null ? (
            <div>
              action <code data-testid="llm-action">{t.action}</code>
            </div>
          ) : null}
        </div>
      ))}
    </div>
  );
}

/**
 * A served model as a policy: the hinted and unhinted arms of one environment over seeds, by
 * SPADE's agent protocol, each turn's text, action, tokens and latency, and SPADE's regret.
 */
export function LlmView({ tab }: ViewProps<'episode-llm'>) {
  const [ep, setEp] = useState<EndpointInput>(savedEndpoint);
  const [key, setKey] = useState('');
  const [scope, setScope] = useState<'env' | 'search'>('env');
  const [query, setQuery] = useState('');
  const [shownEnv, setShownEnv] = useState<string | null>(null);
  const [seeds, setSeeds] = useState(1);
  const [start, setStart] = useState(0);
  const [budget, setBudget] = useState<number | ''>('');
  const defaultBudget = useApp((s) => s.settings?.maxTurns ?? null);
  const [ping, setPing] = useState<string | null>(null);
  const [run, setRun] = useState<Run | null>(null);
  const [shownSeed, setShownSeed] = useState<number | null>(null);
  const { runId, progress, setProgress, busy, error, play } = useRegretRun();
  const lastRun = useRef<string | null>(null);
  const set = (patch: Partial<EndpointInput>) => setEp((e) => ({ ...e, ...patch }));
  useEffect(() => subscribeJobs(), []);
  // Jobs whose SSH connection can carry the requests (a server on a cluster node); the chosen one stays listed.
  const jobs = useJobs((st) => st.jobs);
  const sshJobs = jobs.filter((j) => j.ssh || j.id === ep.via?.jobId);

  const go = (resume: boolean) => {
    const id = resume && lastRun.current ? lastRun.current : newRunId('llm');
    lastRun.current = id;
    saveEndpoint(ep);
    return play(id, async () => {
      if (key && ep.apiKeySecret) await backend().call('jobs.setSecret', { name: ep.apiKeySecret, value: key });
      const hashes = scope === 'env' ? [tab.target.hash] : (await backend().call('memory.search', { query, limit: 1000 })).rows.map((e) => e.hash);
      if (hashes.length === 0) throw new Error(`No environment in the library matches "${query}"`);
      setProgress({ runId: id, done: 0, total: seeds * 2 * hashes.length, etaSec: null });
      const r = await backend().call('models.play', { runId: id, hashes, endpoint: ep, seeds, seedStart: start, ...(budget !== '' ? { maxTurns: budget } : {}), estimator: 'paired' });
      setRun(r);
      setShownEnv(r.envs[0]?.hash ?? null);
      setShownSeed(r.episodes[0]?.seed ?? null);
    });
  };

  const env = run?.envs.find((e) => e.hash === shownEnv) ?? run?.envs[0];
  const shown = useMemo(() => (run && env ? run.episodes.filter((e) => e.seed === shownSeed && e.hash === env.hash) : []), [run, env, shownSeed]);
  const allHint = run ? run.envs.flatMap((e) => e.hintReturns) : [];
  const allPlain = run ? run.envs.flatMap((e) => e.noHintReturns) : [];
  const num = (v: string) => (v === '' ? undefined : Number(v));
  return (
    <div className="ep-view" data-testid="llm-view">
      <div className="ep-header">
        <strong>Play with a model</strong> <span className="muted">{tab.target.name} · {tab.target.hash.slice(0, 12)} · SPADE's agent protocol</span>
      </div>
      <div className="ep-runbar">
        <label>
          endpoint <input value={ep.baseUrl} onChange={(e) => set({ baseUrl: e.target.value })} style={{ width: 240 }} data-testid="llm-url" />
        </label>
        <button
          type="button"
          title="The embedded model: SmolLM2-135M-Instruct (GGUF) run on this machine's CPU, no server needed. Set the endpoint to local and the model to a name in the models folder or a .gguf path."
          // The embedded model's defaults fit a CPU model (LOCAL_SAMPLING), not SPADE's served 8192 tokens x 8.
          onClick={() => set({ baseUrl: 'local', model: ep.baseUrl === 'local' && ep.model ? ep.model : 'SmolLM2-135M-Instruct', via: null, ...(ep.baseUrl === 'local' ? {} : { maxTokens: LOCAL_SAMPLING.maxTokens, concurrency: LOCAL_SAMPLING.concurrency }) })}
          data-testid="llm-local"
        >
          local model
        </button>
        <label title="Send the requests through a job's SSH connection: the endpoint is then the server as the job's SSH host sees it (e.g. http://gpu-node-7:30000/v1)">
          through{' '}
          <select value={ep.via?.jobId ?? ''} onChange={(e) => set({ via: e.target.value ? { jobId: e.target.value } : null })} data-testid="llm-via">
            <option value="">this machine (direct)</option>
            {sshJobs.map((j) => (
              <option key={j.id} value={j.id}>
                job {j.name} · {j.host ?? j.backend} · {j.state}
              </option>
            ))}
            {ep.via && !jobs.some((j) => j.id === ep.via?.jobId) ? <option value={ep.via.jobId}>job {ep.via.jobId} (not in the list)</option> : null}
          </select>
        </label>
        <label>
          model <input value={ep.model} onChange={(e) => set({ model: e.target.value })} style={{ width: 160 }} data-testid="llm-model" />
        </label>
        <label>
          key secret <input value={ep.apiKeySecret ?? ''} placeholder="none" onChange={(e) => set({ apiKeySecret: e.target.value || null })} style={{ width: 120 }} />
        </label>
        <label>
          key <input type="password" value={key} placeholder="kept sealed" onChange={(e) => setKey(e.target.value)} style={{ width: 110 }} disabled={!ep.apiKeySecret} />
        </label>
        <button
          onClick={async () => {
            setPing('…');
            // The Test line is where the answer goes, and so is a refusal (an endpoint the engine will not ask).
            const r = await attempt('episodes', 'Test the endpoint', () => backend().call('models.ping', { endpoint: ep }), { show: setPing });
            if (r) setPing(r.ok ? `answers in ${Math.round(r.latencyMs)} ms: ${r.text.slice(0, 40)}` : `no answer: ${r.error}`);
          }}
        >
          Test
        </button>
        {ping ? <span className="muted" data-testid="llm-ping">{ping}</span> : null}
      </div>
      <div className="ep-runbar">
        <label>
          temperature <input type="number" step={0.1} value={ep.temperature ?? 1} onChange={(e) => set({ temperature: num(e.target.value) })} style={{ width: 56 }} />
        </label>
        <label>
          top_p <input type="number" step={0.05} value={ep.topP ?? 0.95} onChange={(e) => set({ topP: num(e.target.value) })} style={{ width: 56 }} />
        </label>
        <label>
          top_k <input type="number" value={ep.topK ?? ''} placeholder="off" onChange={(e) => set({ topK: e.target.value === '' ? null : Number(e.target.value) })} style={{ width: 56 }} />
        </label>
        <label>
          max tokens <input type="number" value={ep.maxTokens ?? 8192} onChange={(e) => set({ maxTokens: num(e.target.value) })} style={{ width: 70 }} />
        </label>
        <label>
          <input type="checkbox" checked={ep.thinking === true} onChange={(e) => set({ thinking: e.target.checked ? true : null })} /> thinking
        </label>
        <label>
          concurrency <input type="number" min={1} value={ep.concurrency ?? 8} onChange={(e) => set({ concurrency: num(e.target.value) })} style={{ width: 50 }} />
        </label>
      </div>
      <div className="ep-runbar">
        <label>
          <input type="radio" checked={scope === 'env'} onChange={() => setScope('env')} /> this environment
        </label>
        <label>
          <input type="radio" checked={scope === 'search'} onChange={() => setScope('search')} data-testid="llm-scope-search" /> library search
        </label>
        {scope === 'search' ? <input value={query} placeholder="query (empty: whole library)" onChange={(e) => setQuery(e.target.value)} style={{ width: 200 }} data-testid="llm-query" /> : null}
        <SeedRange seeds={seeds} setSeeds={setSeeds} start={start} setStart={setStart} testId="llm-seeds" />
        {/* This view compares the two arms seed by seed: the paired estimator, said so (SPADE's is the Runs page's sweep default). */}
        <span className="muted" data-testid="llm-estimator" title="The same seeds with and without the hint; a failed episode is dropped from both arms. Not SPADE's estimator (Runs → Regret sweep measures that).">
          paired-seed regret
        </span>
        <label>
          budget <input type="number" min={1} value={budget} placeholder={defaultBudget !== null ? String(defaultBudget) : ''} onChange={(e) => setBudget(e.target.value === '' ? '' : Number(e.target.value))} style={{ width: 60 }} />
        </label>
        <button className="primary" disabled={busy || !ep.model} onClick={() => void go(false)} data-testid="llm-play">
          {busy ? 'Playing…' : 'Play with and without the hint'}
        </button>
        {busy ? (
          <button
            data-testid="llm-cancel"
            onClick={() => {
              const id = runId.current;
              if (id) void attempt('episodes', 'Cancel the run', () => backend().call('episodes.regretCancel', { runId: id }));
            }}
          >
            Cancel
          </button>
        ) : run?.cancelled ? (
          <button data-testid="llm-resume" onClick={() => void go(true)}>
            Resume
          </button>
        ) : null}
      </div>
      {busy && progress ? <RunProgress progress={progress} testId="llm-progress" /> : null}
      {error ? <div className="ep-error">{error}</div> : null}
      {run && env ? (
        <>
          {run.cancelled ? <p className="muted">Cancelled: what finished is kept; Resume plays the rest under the same run.</p> : null}
          {run.failedText ? (
            <p className="ep-error" data-testid="llm-failed">
              {run.failedText}: a failed episode has no return and counts in no mean.{env.notMeasured ? ` Not measured: ${env.notMeasured}.` : ''}
              {[...new Set(run.episodes.filter((e) => e.failed && e.error).map((e) => e.error))].slice(0, 3).map((e) => (
                <span key={e} className="muted" style={{ display: 'block' }}>
                  {e}
                </span>
              ))}
            </p>
          ) : null}
          <table className="ep-regret-table" data-testid="llm-regret">
            <tbody>
              <tr>
                <td>R(hint)</td>
                <td data-testid="llm-r-hint">{fmt(env.rHint)}</td>
                <td className="muted">{env.hintReturns.length} episodes</td>
              </tr>
              <tr>
                <td>R(no hint)</td>
                <td data-testid="llm-r-no-hint">{fmt(env.rNoHint)}</td>
                <td className="muted">{env.noHintReturns.length} episodes</td>
              </tr>
              <RegretRow value={env.regret} testId="llm-regret-value">
                <td className="muted">{env.recordedRegret !== null ? `recorded in training: ${fmt(env.recordedRegret)}` : 'no recorded regret for this game'}</td>
              </RegretRow>
            </tbody>
          </table>
          {run.envs.length > 1 ? (
            <>
              <table className="ep-regret-table" data-testid="llm-envs">
                <thead>
                  <tr>
                    <th>environment</th>
                    <th>skill</th>
                    <th>R(hint)</th>
                    <th>R(no hint)</th>
                    <th>regret</th>
                    <th>recorded</th>
                  </tr>
                </thead>
                <tbody>
                  {run.envs.map((e) => (
                    <tr key={e.hash} className={e.hash === env.hash ? 'sel' : ''} onClick={() => setShownEnv(e.hash)} style={{ cursor: 'pointer' }}>
                      <td>{e.name ?? e.hash.slice(0, 12)}</td>
                      <td>{e.skill ?? '—'}</td>
                      <td>{fmt(e.rHint)}</td>
                      <td>{fmt(e.rNoHint)}</td>
                      <td>
                        <b>{fmt(e.regret)}</b>
                      </td>
                      <td>{e.recordedRegret === null ? '—' : fmt(e.recordedRegret)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <table className="ep-regret-table" data-testid="llm-skills">
                <thead>
                  <tr>
                    <th>skill</th>
                    <th>environments</th>
                    <th>mean R(hint)</th>
                    <th>mean R(no hint)</th>
                    <th>mean regret</th>
                  </tr>
                </thead>
                <tbody>
                  {run.bySkill.map((k) => (
                    <tr key={k.skill}>
                      <td>{k.skill}</td>
                      <td>{k.envs}</td>
                      <td>{fmt(k.meanRHint)}</td>
                      <td>{fmt(k.meanRNoHint)}</td>
                      <td>
                        <b>{fmt(k.meanRegret)}</b>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </>
          ) : null}
          <Histogram hint={allHint} plain={allPlain} />
          {allPlain.length ? <FrontierBar winRate={allPlain.filter((x) => x > 0).length / allPlain.length} /> : null}
          <div className="ep-runbar">
            <label>
              seed{' '}
              <select value={shownSeed ?? ''} onChange={(e) => setShownSeed(Number(e.target.value))} data-testid="llm-seed-pick">
                {[...new Set(run.episodes.filter((e) => e.hash === env.hash).map((e) => e.seed))].map((s) => (
                  <option key={s} value={s}>
                    {s}
                  </option>
                ))}
              </select>
            </label>
          </div>
          <div className="ep-cols">
            <TurnList ep={shown.find((e) => e.hint)} testId="llm-col-hint" />
            <TurnList ep={shown.find((e) => !e.hint)} testId="llm-col-plain" />
          </div>
        </>
      ) : null}
    </div>
  );
}
